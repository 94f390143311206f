"""The source documents' worked numbers, quoted against what the code computes.

    python3 scripts/worked_examples.py        # both tables, as docs/worked-examples.md shows

The five documents this project implements are not shipped (their sentences are not
ours); each is named by a short title, and docs/documents.md says what each covers.
This module is the one place where their worked examples are written down:
tests/test_documents.py checks them and scripts/build.py renders the tables in
docs/worked-examples.md.

Public names:

    DOCUMENTS                       the short titles, in the order of docs/documents.md
    QuotedExample, DOCUMENT_EXAMPLES    softmax examples worked by hand in a document
    QuotedSpread, DOCUMENT_SPREADS      rows of the documents' std-of-the-score tables
    agrees_with_quote(value, quoted, gap_below_one=None)
    first_derivative(logits)        d p_1 / d x_1 = p_1 (1 - p_1)
    worked_examples_table()         Markdown table of the softmax examples
    spread_table()                  Markdown table of the score spreads
    markdown_values(), markdown_blocks()   the numbers and tables of docs/worked-examples.md

>>> len(DOCUMENTS), round(first_derivative([1.0, 0.5, -0.5]), 4)
(5, 0.2478)
"""

import argparse  # the command line (--help)
import math  # expm1, sqrt
import os  # the library's folder, when run as a script
import statistics  # NormalDist, for the coverage of a quoted range
import sys  # path, exit
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from softmax import log_softmax, softmax, softmax_jacobian
from stats import dot_product_variance, scale_factor, scaled_variance
from scripts.tables import table

__all__ = ["DOCUMENTS", "QuotedExample", "DOCUMENT_EXAMPLES", "QuotedSpread",
           "DOCUMENT_SPREADS", "agrees_with_quote", "first_derivative",
           "worked_examples_table", "spread_table", "markdown_values", "markdown_blocks"]

DOCUMENTS = ("Section 3.2.1 explained", "step by step", "general variance", "formal proof",
             "causal chain")  # short titles (our words); docs/documents.md describes each


class QuotedExample(NamedTuple):
    """A softmax example worked by hand in a source document, with what it quotes."""
    document: str  # a key of DOCUMENTS
    logits: Tuple[float, ...]
    quoted_p: Tuple[str, ...]  # the probabilities as printed ("0.999..." = digits that follow)
    quoted_derivative: Optional[str]  # d p_1 / d x_1 = p_1 (1 - p_1) as printed, if any


_S321, _GENERAL, _CHAIN = "Section 3.2.1 explained", "general variance", "causal chain"
_TINY = ("0.999...", "0.000...", "0.000...", "0.000...")  # nearly one-hot, as printed
DOCUMENT_EXAMPLES = (
    QuotedExample(_S321, (1.0, 0.5, -0.5), ("0.506", "0.307", "0.187"), "0.250"),
    QuotedExample(_S321, (8.0, 4.0, -4.0), ("0.9997", "0.0003", "0.0000"), "0.0003"),
    QuotedExample(_GENERAL, (100.0, 1.0, 1.0, 1.0), _TINY, None),
    QuotedExample(_GENERAL, (10.0, 0.1, 0.1, 0.1), _TINY, None),
    QuotedExample(_CHAIN, (1.0, 0.0), ("0.73", "0.27"), None),
    QuotedExample(_CHAIN, (10.0, 0.0), ("0.9999", "0.0001"), None),
    QuotedExample(_CHAIN, (2.0, 1.0, 0.0, -1.0), ("0.52", "0.28", "0.14", "0.06"), None),
    QuotedExample(_CHAIN, (20.0, 10.0, 0.0, -10.0), ("1.00", "0.00", "0.00", "0.00"), None),
)


class QuotedSpread(NamedTuple):
    """A row of a document's table of score spread: d_k, the std and range it prints."""
    document: str  # a key of DOCUMENTS
    d_k: int
    scaled: bool  # True when the row is about q . k / sqrt(d_k)
    quoted_std: str
    quoted_range: Optional[float]  # the half-width r of the printed range [-r, r]


DOCUMENT_SPREADS = (
    QuotedSpread(_S321, 64, True, "1", 3.0),
    QuotedSpread(_S321, 64, False, "8", 24.0),
    QuotedSpread(_S321, 512, False, "22.6", 68.0),
    QuotedSpread(_GENERAL, 512, False, "22.6", 100.0),
    QuotedSpread(_GENERAL, 1024, False, "32", None),
    QuotedSpread(_CHAIN, 64, False, "8", 16.0),
    QuotedSpread(_CHAIN, 128, False, "11.3", 23.0),
    QuotedSpread(_CHAIN, 512, False, "22.6", 45.0),
)


def agrees_with_quote(value: float, quoted: str, gap_below_one: Optional[float] = None) -> bool:
    """Return whether value, printed as the quote is printed, reads the same.

    "0.506" means value rounds to 0.506; "0.999..." means its digits begin
    0.999, i.e. 0.999 <= value < 1.  A probability within an ulp of 1 is 1.0
    as a float, so gap_below_one (1 - value, computed accurately) decides then.

    >>> agrees_with_quote(0.5466, "0.547"), agrees_with_quote(0.5, "0.506")
    (True, False)
    >>> agrees_with_quote(1.0, "0.999..."), agrees_with_quote(1.0, "0.999...", gap_below_one=3e-43)
    (False, True)
    """
    if quoted.endswith("..."):
        low = float(quoted[:-3])
        high = low + 10.0 ** -len(quoted[:-3].split(".")[1])
        just_below_one = high == 1.0 and gap_below_one is not None and gap_below_one > 0
        return low <= value and (value < high or just_below_one)
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    return f"{value:.{decimals}f}" == quoted


def first_derivative(logits: Sequence[float]) -> float:
    """Return d p_1 / d x_1 = p_1 (1 - p_1), the Jacobian's first diagonal entry.

    >>> first_derivative([0.0, 0.0])
    0.25
    """
    return softmax_jacobian(logits)[0][0]


def _show_probability(p: float, gap_below_one: float) -> str:
    # a p within 1e-3 of 1 reads better as 1 - gap, which keeps the digits that matter
    return f"1 - {gap_below_one:.3g}" if gap_below_one < 1e-3 else f"{p:.4g}"


def _example_row(ex: QuotedExample) -> list:
    p = softmax(ex.logits)
    gaps = [-math.expm1(lp) for lp in log_softmax(ex.logits)]  # 1 - p_i, no cancellation
    derivative = first_derivative(ex.logits)
    same = all(agrees_with_quote(v, q, g) for v, q, g in zip(p, ex.quoted_p, gaps))
    if ex.quoted_derivative is not None:
        same = same and agrees_with_quote(derivative, ex.quoted_derivative)
    logits = ", ".join(f"{v:g}" for v in ex.logits)
    computed = ", ".join(_show_probability(v, g) for v, g in zip(p, gaps))
    return [ex.document, f"[{logits}]", f"[{', '.join(ex.quoted_p)}]", f"[{computed}]",
            ex.quoted_derivative or "-", f"{derivative:.4g}", "yes" if same else "**no**"]


def worked_examples_table() -> str:
    """Return a Markdown table: each worked example, what it quotes, what the code computes.

    >>> worked_examples_table().splitlines()[6]
    '| causal chain | [1, 0] | [0.73, 0.27] | [0.7311, 0.2689] | - | 0.1966 | yes |'
    """
    return table(["document", "logits x", "quoted softmax(x)", "computed softmax(x)",
                  "quoted dp_1/dx_1", "computed dp_1/dx_1", "agree?"],
                 [_example_row(ex) for ex in DOCUMENT_EXAMPLES])


def _spread_row(row: QuotedSpread, normal: statistics.NormalDist) -> list:
    c = scale_factor("1/sqrt(d_k)" if row.scaled else "1", row.d_k)
    std = math.sqrt(scaled_variance(dot_product_variance(row.d_k), c))
    cells = ["-", "-", "-"]
    if row.quoted_range is not None:
        k = row.quoted_range / std  # the range in standard deviations
        cells = [f"[-{row.quoted_range:g}, {row.quoted_range:g}]", f"{k:.2f}",
                 f"{2 * normal.cdf(k) - 1:.5f}"]
    score = "q.k/sqrt(d_k)" if row.scaled else "q.k"
    agree = "yes" if agrees_with_quote(std, row.quoted_std) else "**no**"
    return [row.document, row.d_k, score, row.quoted_std, f"{std:.4g}"] + cells + [agree]


def spread_table() -> str:
    """Return a Markdown table: std of the score and how many stds each quoted range spans.

    The std is sqrt(Var) = sqrt(d_k) unscaled and 1 scaled; a range [-r, r] spans r / std
    standard deviations and holds P(|Z| <= r / std) of a normal score.

    >>> spread_table().splitlines()[7]
    '| causal chain | 64 | q.k | 8 | 8 | [-16, 16] | 2.00 | 0.95450 | yes |'
    """
    normal = statistics.NormalDist()
    return table(["document", "d_k", "score", "quoted std", "computed std", "quoted range",
                  "range in stds", "P(score in range)", "agree?"],
                 [_spread_row(row, normal) for row in DOCUMENT_SPREADS])


def _examples(document: str) -> List[QuotedExample]:
    return [ex for ex in DOCUMENT_EXAMPLES if ex.document == document]


def _probabilities(logits: Sequence[float]) -> str:
    # as the table prints them: 1 - gap near 1, else 4 significant digits
    gaps = [-math.expm1(lp) for lp in log_softmax(logits)]
    return "[" + ", ".join(_show_probability(p, g) for p, g in zip(softmax(logits), gaps)) + "]"


def markdown_values() -> Dict[str, str]:
    """Return {name: text} for the numbers the prose of docs/worked-examples.md quotes.

    >>> markdown_values()["ex.s321.1.derivative"]
    '0.2478'
    """
    first, second = _examples("Section 3.2.1 explained")[:2]
    chain = {ex.logits: ex for ex in _examples("causal chain")}
    ten_zero, moderate = chain[(10.0, 0.0)], chain[(2.0, 1.0, 0.0, -1.0)]
    quoted = [float(q) for q in first.quoted_p]
    derivative = first_derivative(second.logits)
    general = next(r for r in DOCUMENT_SPREADS
                   if r.document == "general variance" and r.quoted_range is not None)
    k = general.quoted_range / math.sqrt(general.d_k)  # the range in standard deviations
    outside = 2 * statistics.NormalDist().cdf(-k)  # P(|Z| > k)
    return {
        "ex.s321.1.p": _probabilities(first.logits), "e": f"{math.e:.4g}",
        "ex.s321.1.quoted.ratio23": f"{quoted[1] / quoted[2]:.4g}",
        "ex.s321.1.derivative": f"{first_derivative(first.logits):.4g}",
        "ex.s321.2.p1": f"{softmax(second.logits)[0]:.4g}",
        "ex.s321.2.derivative": f"{derivative:.4g}",
        "ex.s321.2.derivative.ratio": f"{derivative / float(second.quoted_derivative):.0f}",
        "ex.chain.10.p": _probabilities(ten_zero.logits),
        "ex.chain.moderate.p": _probabilities(moderate.logits),
        "range.general.512": f"{k:.2f}",
        "range.general.512.once-in": f"{float(f'{1 / outside:.2g}'):,.0f}"}


def markdown_blocks() -> Dict[str, str]:
    """Return the tables of docs/worked-examples.md, by name."""
    return {"worked-examples": worked_examples_table(), "spreads": spread_table()}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print both tables."""
    _Parser(prog="python3 scripts/worked_examples.py",
            description=__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        print(worked_examples_table(), spread_table(), sep="\n\n")
    except KeyboardInterrupt:
        print("python3 scripts/worked_examples.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
