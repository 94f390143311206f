"""Check your own attention function, or your softmax, against this library, case by case.

    python3 interview/check.py FILE.py[:NAME] [--mask-true-blocks] [--time-limit SECONDS]
    python3 interview/check.py FILE.py[:NAME] --softmax

Run it from any directory.  NAME defaults to the first of `attention` and
`scaled_dot_product_attention` that FILE.py defines (with --softmax, to `softmax`).

How your function is called:
    NAME(Q, K, V)   with lists of rows, Q n x d_k, K m x d_k, V m x d_v; it returns n x d_v:
                    a list of rows, anything with .tolist() (NumPy, PyTorch), or a pair
                    (output, weights), whose output is checked.
    mask=           if NAME takes a parameter `mask`: a list of rows of bools, True = may
                    attend (PyTorch's F.scaled_dot_product_attention, JAX, this library);
                    with --mask-true-blocks, True = blocked (torch.nn.MultiheadAttention).
    is_causal=True  if NAME takes `is_causal`: query i may attend to the keys j <= i,
                    aligned top-left as in PyTorch and JAX (attention.causal_mask(n, m)).
    NAME(x)         with --softmax: x a list of floats.

What is checked, against attention.scaled_dot_product_attention (or softmax.softmax), to
1e-9 of the size of V's entries (float64 answers agree to about 1e-15):
    attention  n < m and n > m; d_v != d_k; d_k = 1; d_k = 64 with n, m and d_v all
               different, where no scale and a scale of d_k, sqrt(d_v), sqrt(m) or sqrt(n)
               each give a different answer; logits near +1e3, near -1e3, and both in one
               matrix (an unshifted exp overflows, or underflows to 0/0); a mask; a fully
               masked row; is_causal with n = m, n < m and n > m; Q and K of different d_k,
               and V with a row too few (both must raise).
    softmax    a few logits; one logit; x + 50; logits near +1e3 and near -1e3; -inf
               entries (their weight must be exactly 0); every entry -inf.

A fully masked row (or an all -inf softmax) has no single right answer.  An exception (this
library raises ValueError), zeros (PyTorch's F.scaled_dot_product_attention) and uniform
weights, the mean of V (JAX), all pass, and the report names the one your function follows.
A silent NaN fails, as does a row that attends as if unmasked, or an exception that signals
a bug rather than a refusal (TypeError, NameError, AttributeError, IndexError, KeyError).

The report has a line per check: `ok`; `skip` (NAME takes no `mask` or `is_causal`); or
`FAIL`, the likely mistake and the answer to read in docs/interview.md.  The mistake is found
by computing the answer each known mistake gives (no scale or the wrong one, the scale after
softmax, softmax over the wrong axis, no max-shift, the weights returned, the mask after
softmax, 0 for -inf, the wrong polarity, bottom-right causal, ...) and matching yours.
A summary line ends it.

Your function runs in a child process, killed when a call runs past the time limit (default
3 s; loading the file may take 5 times as long, for imports such as NumPy's or PyTorch's);
after two such calls the rest are not run.  Its warnings (NumPy's overflow warnings, say)
are silenced: the checks report their effect.

Exit status: 0 when every check passes, 1 when one fails, 2 for a usage error (no such file,
no function found, a file that fails to load) with a one-line message.  An error raised by
your code is reported in its check's line, never as a traceback.

Public API (`__all__`): check_attention, check_softmax, attention_cases, softmax_cases,
Case, SoftmaxCase, Mistake (each known mistake is a Mistake constant: NO_SCALE, ...), Report,
Result, UsageError, main.

>>> report = check_attention(os.path.join(ROOT, "tests", "readers", "reader_lists.py"))
>>> report.ok, report.convention, len(report.results)
(True, 'raises', 13)
"""

import argparse  # the command line
import importlib.util  # load the reader's file as a module of its own
import inspect  # which parameters the reader's function takes
import math  # sqrt, isfinite, inf
import multiprocessing  # a child process that runs the reader's code and can be killed
import os  # paths
import random  # the seeded inputs
import signal  # the child leaves Ctrl-C to the checker
import sys  # sys.path, sys.modules, stdout
import traceback  # the line of the reader's file that raised
import warnings  # silence the reader's warnings in the child
from collections.abc import Sequence  # what counts as a list of rows
from numbers import Real  # what counts as a number in the reader's output
from typing import Callable, List, NamedTuple, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository
if ROOT not in sys.path:  # run as a script from anywhere: the library is one level up
    sys.path.insert(0, ROOT)

from attention import (attention_steps, causal_mask, matmul,  # noqa: E402
                       scaled_dot_product_attention, transpose)
from softmax import softmax  # noqa: E402

__all__ = ["check_attention", "check_softmax", "attention_cases", "softmax_cases", "Case",
           "SoftmaxCase", "Mistake", "Report", "Result", "UsageError", "main"]

Matrix = List[List[float]]  # a matrix is a list of rows

TOL = 1e-9  # an entry passes within TOL * max(1, max |V|); every mistake differs by > 1e-3
TIME_LIMIT = 3.0  # seconds per call
LOAD_FACTOR = 5  # loading the file may take this many time limits
INTERVIEW = "docs/interview.md"
ATTENTION_NAMES = ("attention", "scaled_dot_product_attention")  # looked for, in this order


class UsageError(Exception):
    """The file cannot be checked: not found, no function found, or it fails to load."""


class Mistake(NamedTuple):
    """A slip the checker can name, and the answer that explains it."""
    name: str  # what the report's line says, and what the tests match
    anchor: str  # the answer in docs/interview.md (empty: none)


class Result(NamedTuple):
    """One check: its title, "ok", "FAIL" or "skip", the likely mistake's name, the line."""
    title: str
    status: str
    mistake: str  # "" when the check passes or no known mistake matches
    line: str  # the report's line, without the status


class Report(NamedTuple):
    """Every check of one function; convention: how it treats a fully masked row."""
    header: str
    results: List[Result]
    convention: str  # "raises", "zeros", "uniform", or "" when not checked or failed

    @property
    def ok(self) -> bool:
        return all(r.status != "FAIL" for r in self.results)

    @property
    def mistakes(self) -> set:
        return {r.mistake for r in self.results if r.status == "FAIL"}


# ---------------------------------------------------------------- the mistakes and answers
# Each names a slip and the answer in docs/interview.md that explains it.

SCALE, WHICH = "why-divide-by-sqrtd_k", "which-sqrtd_k-and-where"
AXIS, MAX = "over-which-axis-does-softmax-run", "why-subtract-the-max-inside-softmax"
RETURNS, MASK = "what-does-attention-return-weights-or-outputs", "how-should-a-mask-be-applied"
FULL, CAUSAL = "what-should-a-fully-masked-row-return", "causal-masks-top-left-or-bottom-right"
POLARITY, PRECISION = "true-means-masked", "what-changes-in-float16-and-bfloat16"
SHAPES = "what-should-attention-do-with-shapes-that-do-not-match"

NO_SCALE = Mistake("no scale: Q K^T is not divided by sqrt(d_k)", SCALE)
BY_D_K = Mistake("divided by d_k (or twice by sqrt(d_k)), not once by sqrt(d_k)", WHICH)
BY_SQRT_D_V = Mistake("divided by sqrt(d_v), not sqrt(d_k)", WHICH)
BY_SQRT_M = Mistake("divided by sqrt(m), the number of keys, not sqrt(d_k)", WHICH)
BY_SQRT_N = Mistake("divided by sqrt(n), the number of queries, not sqrt(d_k)", WHICH)
TIMES_SQRT_D_K = Mistake("multiplied by sqrt(d_k), not divided", WHICH)
SCALE_AFTER = Mistake("scale applied after softmax", WHICH)
COLUMNS = Mistake("softmax over each column (the queries), not each row", AXIS)
WHOLE = Mistake("softmax over the whole matrix, not each row", AXIS)
NO_SHIFT = Mistake("no max-shift", MAX)
WHOLE_MAX = Mistake("max-shift by the whole matrix's max, not each row's", MAX)
WEIGHTS = Mistake("returned the weights P, not the output P V", RETURNS)
TRANSPOSED = Mistake("returned the output transposed", RETURNS)
MASK_IGNORED = Mistake("mask ignored", MASK)
MASK_AFTER = Mistake("mask applied after softmax", MASK)
MASK_ZERO = Mistake("masked scores set to 0, not -inf", MASK)
TRUE_BLOCKS = Mistake("mask polarity reversed: True read as blocked (your convention? add "
                      "--mask-true-blocks)", POLARITY)
TRUE_ATTENDS = Mistake("mask polarity reversed: True read as may attend (drop "
                       "--mask-true-blocks)", POLARITY)
CAUSAL_IGNORED = Mistake("is_causal ignored", CAUSAL)
BOTTOM_RIGHT = Mistake("causal mask aligned bottom-right, not top-left", CAUSAL)
FUTURE = Mistake("causal mask reversed: query i sees keys j >= i", CAUSAL)
NAN_ROW = Mistake("silent NaN", FULL)
UNMASKED_ROW = Mistake("attends as if unmasked (-1e9 added rather than -inf?)", FULL)
OTHER_ROW = Mistake("neither an error, zeros nor uniform weights", FULL)
BUG_RAISED = Mistake("an error that signals a bug, not a refusal", FULL)
NO_ERROR = Mistake("no error (zip() stops silently at the shorter list?)", SHAPES)
NOT_NORMALISED = Mistake("not normalised: the weights do not sum to 1", AXIS)
INF_WEIGHT = Mistake("a -inf entry's weight is not exactly 0", MASK)
LOW_PRECISION = Mistake("float32-like precision: compute in float64", PRECISION)
TIME_OUT = Mistake("ran past the time limit", "")


# ----------------------------------------------------------------------------- the cases

class Case(NamedTuple):
    """One call of the reader's attention, and what its answer must be."""
    title: str
    Q: Matrix
    K: Matrix
    V: Matrix
    mask: Optional[List[List[bool]]] = None  # True = may attend (the reader may get it inverted)
    is_causal: bool = False
    expect: str = "output"  # "output", "no overflow", "fully masked" or "error"


def attention_cases() -> List[Case]:
    """Return the attention cases, from a fixed seed: their shapes make n, m, d_k, d_v and
    their square roots differ, so that no two wrong scales give the same answer.

    >>> [(len(c.Q), len(c.K), len(c.K[0]), len(c.V[0])) for c in attention_cases()][:3]
    [(3, 5, 64, 2), (5, 2, 16, 3), (2, 3, 1, 4)]
    """
    rng = random.Random(17)

    def M(rows, cols):  # a matrix of N(0, 1) entries: q . k / sqrt(d_k) is about N(0, 1)
        return [[rng.gauss(0.0, 1.0) for _ in range(cols)] for _ in range(rows)]

    def logits(L):  # Q and K with Q K^T / sqrt(4) = L exactly (powers of two), and V
        K = [[float(t == j) for t in range(4)] for j in range(len(L[0]))]  # k_j = e_j
        return [[2.0 * x for x in row] + [0.0] for row in L], K, M(len(K), 5)

    # exp overflows above 709.78 and is 0 below -745.13: each logit breaks an unshifted softmax
    high = [[1000.0, 999.0, 998.5], [997.0, 1000.5, 999.0]]
    low = [[-1000.0, -1001.0, -999.5], [-1002.0, -1000.0, -1000.75]]
    T, F = True, False
    # every row of mask and of its inverse keeps a key; in full only row 1 has none
    mask = [[T, F, T, F, T], [F, T, T, F, F], [T, T, F, T, F]]
    full = [[T, F, T, F], [F, F, F, F], [F, T, T, T]]
    return [
        Case("n=3 m=5 d_k=64 d_v=2 (each wrong scale shows)", M(3, 64), M(5, 64), M(5, 2)),
        Case("n=5 m=2 d_k=16 d_v=3", M(5, 16), M(2, 16), M(2, 3)),
        Case("d_k=1 (n=2 m=3 d_v=4)", M(2, 1), M(3, 1), M(3, 4)),
        Case("logits near +1e3 (an unshifted exp overflows)", *logits(high),
             expect="no overflow"),
        Case("logits near -1e3 (an unshifted exp underflows to 0/0)", *logits(low),
             expect="no overflow"),
        Case("rows near +1e3 and -1e3 (each row needs its own max)",
             *logits([high[0], low[0]]), expect="no overflow"),
        Case("a mask (n=3 m=5 d_k=16 d_v=2)", M(3, 16), M(5, 16), M(5, 2), mask=mask),
        Case("a fully masked row (n=3 m=4)", M(3, 16), M(4, 16), M(4, 2), mask=full,
             expect="fully masked"),
        Case("is_causal, n=m=4", M(4, 8), M(4, 8), M(4, 2), is_causal=True),
        Case("is_causal, n=3 < m=5 (top-left)", M(3, 8), M(5, 8), M(5, 2), is_causal=True),
        Case("is_causal, n=5 > m=3", M(5, 8), M(3, 8), M(3, 2), is_causal=True),
        Case("Q with d_k=4, K with d_k=3", M(2, 4), M(3, 3), M(3, 2), expect="error"),
        Case("K with 3 rows, V with 2", M(2, 4), M(3, 4), M(2, 2), expect="error"),
    ]


class SoftmaxCase(NamedTuple):
    """One call of the reader's softmax, and what its answer must be."""
    title: str
    x: List[float]
    expect: str = "p"  # "p", "no overflow", "zero weights" or "all -inf"


def softmax_cases() -> List[SoftmaxCase]:
    """Return the softmax cases.

    >>> softmax_cases()[-1]
    SoftmaxCase(title='every entry -inf', x=[-inf, -inf, -inf], expect='all -inf')
    """
    x, inf = [0.5, -1.25, 2.0, 0.0], math.inf
    return [
        SoftmaxCase("a few logits", x),
        SoftmaxCase("one logit", [3.0]),
        SoftmaxCase("x + 50 (the weights of x)", [v + 50.0 for v in x]),
        SoftmaxCase("logits near +1e3 (an unshifted exp overflows)",
                    [1000.0, 999.0, 998.5, 1000.5], "no overflow"),
        SoftmaxCase("logits near -1e3 (an unshifted exp underflows to 0/0)",
                    [-1000.0, -1001.0, -999.5], "no overflow"),
        SoftmaxCase("-inf entries (weight exactly 0)", [1.0, -inf, 0.5, -inf], "zero weights"),
        SoftmaxCase("every entry -inf", [-inf, -inf, -inf], "all -inf"),
    ]


# ------------------------------------------------- what the library and each mistake give

def _expected(case: Case) -> list:
    """The library's output; None for a fully masked row, which the library refuses."""
    Q, K, V, mask = case.Q, case.K, case.V, case.mask
    keep = [i for i in range(len(Q)) if mask is None or any(mask[i])]
    O = scaled_dot_product_attention([Q[i] for i in keep], K, V, is_causal=case.is_causal,
                                     mask=None if mask is None else [mask[i] for i in keep])
    rows = dict(zip(keep, O))
    return [rows.get(i) for i in range(len(Q))]


def _allowed(case: Case) -> Optional[List[List[bool]]]:
    """The keys each query may attend to (True), or None when all."""
    if case.is_causal:
        return causal_mask(len(case.Q), len(case.K))
    return case.mask


def _outputs(S: Matrix, V: Matrix) -> list:
    """P V, P = softmax of each row of S; None for a row that is -inf everywhere."""
    return [matmul([softmax(S_i)], V)[0] if max(S_i) > -math.inf else None for S_i in S]


def _fill(S: Matrix, allowed, value: float = -math.inf) -> Matrix:
    """S with value where allowed is False."""
    if allowed is None:
        return S
    return [[s if a else value for s, a in zip(S_i, a_i)] for S_i, a_i in zip(S, allowed)]


def _variants(case: Case, true_blocks: bool):
    """Yield (mistake, the output it would give) for every mistake that applies to case."""
    Q, K, V = case.Q, case.K, case.V
    n, m, d_k, d_v = len(Q), len(K), len(K[0]), len(V[0])
    scores, allowed = attention_steps(Q, K, V).scores, _allowed(case)  # Q K^T, n x m
    c = 1 / math.sqrt(d_k)

    def attend(factor, allowed=allowed, value=-math.inf):  # softmax(factor Q K^T, masked) V
        return _outputs(_fill([[factor * s for s in row] for row in scores], allowed, value), V)

    for mistake, factor in ((NO_SCALE, 1.0), (BY_D_K, 1 / d_k), (BY_SQRT_D_V, 1 / math.sqrt(d_v)),
                            (BY_SQRT_M, 1 / math.sqrt(m)), (BY_SQRT_N, 1 / math.sqrt(n)),
                            (TIMES_SQRT_D_K, math.sqrt(d_k))):
        yield mistake, attend(factor)
    yield SCALE_AFTER, [None if o is None else [c * x for x in o] for o in attend(1.0)]
    S = _fill([[c * s for s in row] for row in scores], allowed)  # the right logits, n x m
    if all(max(column) > -math.inf for column in zip(*S)):  # each key open to some query
        yield COLUMNS, matmul(transpose([softmax(column) for column in zip(*S)]), V)
    p = softmax([s for row in S for s in row])  # one distribution over all n m entries
    yield WHOLE, matmul([p[i * m:(i + 1) * m] for i in range(n)], V)
    yield WEIGHTS, [softmax(row) if max(row) > -math.inf else None for row in S]
    O = attend(c)
    if None not in O:
        yield TRANSPOSED, transpose(O)
    if allowed is None:
        return
    yield (CAUSAL_IGNORED if case.is_causal else MASK_IGNORED), attend(c, None)
    P = [[p * a for p, a in zip(softmax([c * s for s in row]), a_i)]  # zeroed, not renormalised
         for row, a_i in zip(scores, allowed)]
    yield MASK_AFTER, matmul(P, V)
    yield MASK_ZERO, attend(c, allowed, 0.0)
    if case.is_causal:
        yield BOTTOM_RIGHT, attend(c, causal_mask(n, m, align="bottom-right"))
        yield FUTURE, attend(c, [[j >= i for j in range(m)] for i in range(n)])
    else:
        inverted = [[not a for a in row] for row in allowed]
        yield (TRUE_ATTENDS if true_blocks else TRUE_BLOCKS), attend(c, inverted)


# ------------------------------------------------------------------ comparing an answer

def _is_matrix(x) -> bool:
    """x is a non-empty list of non-empty lists of floats."""
    return isinstance(x, list) and bool(x) and all(
        isinstance(row, list) and row and all(isinstance(v, float) for v in row) for row in x)


def _close(got, want: list, tol: float) -> bool:
    """got matches want entry by entry within tol (NaN never does); None rows of want match
    anything."""
    return _is_matrix(got) and len(got) == len(want) and all(
        w is None or len(g) == len(w) and all(abs(a - b) <= tol for a, b in zip(g, w))
        for g, w in zip(got, want))


def _worst(got: Matrix, want: list) -> tuple:
    """(largest |got - want|, i, j) over the rows of want that are not None; inf if not finite."""
    return max(((abs(a - b) if math.isfinite(a - b) else math.inf, i, j)
                for i, (g, w) in enumerate(zip(got, want)) if w is not None
                for j, (a, b) in enumerate(zip(g, w))), key=lambda e: e[0])  # the first


def _describe(x) -> str:
    """The shape of the reader's answer, in words."""
    if _is_matrix(x):
        lengths = sorted({len(row) for row in x})
        return f"{len(x)} x {lengths[0]}" if len(lengths) == 1 else f"rows of lengths {lengths}"
    if isinstance(x, list) and all(isinstance(v, float) for v in x):
        return f"a flat list of {len(x)} numbers"
    return "a single number" if isinstance(x, float) else "lists that are not rows of numbers"


def _unpair(got):
    """The output of a pair (output, weights); anything else as it is."""
    if isinstance(got, list) and len(got) == 2 and all(map(_is_matrix, got)):
        return got[0]
    return got


# ------------------------------------------------------------------- judging each answer
# A judge returns (status, mistake or None, text, convention): status "ok" or "FAIL", text
# the rest of the line, convention "raises", "zeros" or "uniform" for a fully masked row.

BUGS = {"TypeError", "NameError", "AttributeError", "IndexError", "KeyError"}


def _judge(case: Case, reply: tuple, true_blocks: bool) -> tuple:
    """Judge the reader's reply (kind, value, exception types) to an attention case."""
    kind, value, types = reply
    if kind not in ("raised", "returned"):  # "timeout", "died" or "unreadable"
        return "FAIL", TIME_OUT if kind == "timeout" else None, value, ""
    if case.expect == "error":
        if kind == "raised":
            return "ok", None, f"raises {types[0]}", ""
        return "FAIL", NO_ERROR, "", ""
    if kind == "raised":
        return _raised(case.expect, value, types)
    got, want = _unpair(value), _expected(case)
    n, d_v = len(case.Q), len(case.V[0])
    tol = TOL * max(1.0, max(abs(v) for row in case.V for v in row))
    if _close(got, want, tol):
        if case.expect == "fully masked":
            return _fully_masked_row(case, got, tol)
        return "ok", None, "", ""
    for mistake, output in _variants(case, true_blocks):
        if _close(got, output, tol):
            return "FAIL", mistake, "", ""
    if not (_is_matrix(got) and len(got) == n and {len(row) for row in got} == {d_v}):
        return "FAIL", None, f"returned {_describe(got)}, not n x d_v = {n} x {d_v}", ""
    return _off(case.expect, got, want, tol, lambda i, j: f"[{i}][{j}]")


def _raised(expect: str, value: str, types: tuple) -> tuple:
    """Judge an exception: right for a row with no key, wrong anywhere else."""
    if expect == "no overflow" and "ArithmeticError" in types:
        return "FAIL", NO_SHIFT, f"raised {value}", ""
    if expect in ("fully masked", "all -inf"):
        if BUGS & set(types):
            return "FAIL", BUG_RAISED, f"raised {value}", ""
        return "ok", None, f"raises {types[0]}", "raises"
    return "FAIL", None, f"raised {value}", ""


def _off(expect: str, got: Matrix, want: list, tol: float, at: Callable) -> tuple:
    """Judge an answer of the right shape that no known mistake explains."""
    error, i, j = _worst(got, want)
    if error == math.inf:
        if expect != "no overflow":
            return "FAIL", None, f"not finite at {at(i, j)}", ""
        right = any(w is not None and _close([g], [w], tol) for g, w in zip(got, want))
        return "FAIL", WHOLE_MAX if right else NO_SHIFT, f"not finite at {at(i, j)}", ""
    if 10 * tol <= error <= 1e4 * tol:  # float32 rounds at about 6e-8
        return "FAIL", LOW_PRECISION, f"off by {error:.1e} at {at(i, j)}", ""
    if error < 10 * tol:  # too small for float32: an epsilon in the normaliser, say
        return "FAIL", None, (f"off by {error:.1e} at {at(i, j)}: a small systematic error "
                              "(an epsilon added somewhere?)"), ""
    return "FAIL", None, (f"off by {error:.2g} at {at(i, j)}; no known mistake matches: "
                          "compare docs/whiteboard.md"), ""


def _fully_masked_row(case: Case, got: Matrix, tol: float) -> tuple:
    """The rows with a key are right: which convention does the fully masked row follow?"""
    i = next(i for i, row in enumerate(case.mask) if not any(row))
    m = len(case.K)
    mean = matmul([[1.0 / m] * m], case.V)  # uniform weights 1/m: the mean of V's rows
    unmasked = scaled_dot_product_attention([case.Q[i]], case.K, case.V)
    if not all(map(math.isfinite, got[i])):
        return "FAIL", NAN_ROW, "", ""
    if all(abs(v) <= tol for v in got[i]):
        return "ok", None, "zeros, as PyTorch's F.scaled_dot_product_attention", "zeros"
    if _close([got[i]], mean, tol):
        return "ok", None, "the mean of V (uniform weights), as JAX", "uniform"
    if _close([got[i]], unmasked, 1e4 * tol):  # -1e9 + s keeps s to float spacing 1.2e-7
        return "FAIL", UNMASKED_ROW, "", ""
    return "FAIL", OTHER_ROW, "", ""


def _judge_softmax(case: SoftmaxCase, reply: tuple) -> tuple:
    """Judge the reader's reply (kind, value, exception types) to a softmax case."""
    kind, value, types = reply
    if kind not in ("raised", "returned"):
        return "FAIL", TIME_OUT if kind == "timeout" else None, value, ""
    if kind == "raised":
        return _raised(case.expect, value, types)
    x, got = case.x, value
    if not (isinstance(got, list) and len(got) == len(x)
            and all(isinstance(v, float) for v in got)):
        return "FAIL", None, f"returned {_describe(got)}, not a list of {len(x)} numbers", ""
    if case.expect == "all -inf":
        return _all_minus_inf(got)
    want, masked = softmax(x), [g for g, v in zip(got, x) if v == -math.inf]
    if _close([got], [want], TOL) and all(g == 0.0 for g in masked):
        return "ok", None, "", ""
    if any(g != 0.0 for g in masked) and all(map(math.isfinite, got)):
        return "FAIL", INF_WEIGHT, f"{max(masked, key=abs):.2g}", ""
    unnormalised = [[math.exp(v - max(x)) for v in x]] + ([[math.exp(v) for v in x]]
                                                          if max(x) < 709.0 else [])
    if any(_close([got], [e], TOL) for e in unnormalised):
        return "FAIL", NOT_NORMALISED, "", ""
    return _off(case.expect, [got], [want], TOL, lambda i, j: f"[{j}]")


def _all_minus_inf(got: List[float]) -> tuple:
    """Which convention does the softmax of a vector of -inf follow?"""
    if not all(map(math.isfinite, got)):
        return "FAIL", NAN_ROW, "", ""
    if all(v == 0.0 for v in got):
        return "ok", None, "zeros", "zeros"
    if _close([got], [[1 / len(got)] * len(got)], TOL):
        return "ok", None, "uniform weights 1/n", "uniform"
    return "FAIL", OTHER_ROW, "", ""


# ---------------------------------------------------- the reader's code, in a child process

def _serve(conn, path: str, names: tuple, arity: int) -> None:
    """In the child: load the reader's function, then answer each (args, kwargs) sent with
    (kind, value, exception types) until the pipe closes."""
    warnings.simplefilter("ignore")  # NumPy's overflow warnings, say: the checks report them
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the checker kills this process
    for name in ("softmax", "attention", "stats"):  # the reader's own modules of these names
        sys.modules.pop(name, None)  # win over the library's (imported before the fork)
    sys.path.insert(0, os.path.dirname(path))  # as `python3 FILE.py` would: its neighbours
    try:
        f, info = _load(path, names, arity)
    except UsageError as e:
        conn.send(("usage", str(e), ()))
        return
    conn.send(("loaded", info, ()))
    while True:
        try:
            args, kwargs = conn.recv()
        except EOFError:  # the checker is done
            return
        conn.send(_call(f, path, args, kwargs))


def _load(path: str, names: tuple, arity: int) -> tuple:
    """(the function, info) from the file at path: info names it and says which of `mask`
    and `is_causal` it takes, and which of them it requires."""
    file = os.path.basename(path)
    spec = importlib.util.spec_from_file_location("reader_under_check", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickle look a class's module up
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise UsageError(f"{file}:{e.lineno}: SyntaxError: {e.msg}")
    except (Exception, SystemExit) as e:  # the reader's error: one line, no traceback
        raise UsageError(f"{file} fails to load: {_exception_text(e, path)}")
    found = [name for name in names if callable(getattr(module, name, None))]
    if not found:
        raise UsageError(f"{file} defines no function named {' or '.join(names)}; name it: "
                         f"{file}:NAME")
    f = getattr(module, found[0])
    info = {"name": found[0], "takes": [], "required": []}
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):  # a builtin without a signature: call it as it is
        return f, info
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    for p in ("mask", "is_causal") if arity == 3 else ():
        if p in signature.parameters and signature.parameters[p].kind in named:
            info["takes"].append(p)
            if signature.parameters[p].default is inspect.Parameter.empty:
                info["required"].append(p)
    try:
        signature.bind(*[None] * arity, **{p: None for p in info["required"]})
    except TypeError as e:
        args = "Q, K, V" if arity == 3 else "x"
        raise UsageError(f"{file}: {found[0]}{signature} cannot be called as "
                         f"{found[0]}({args}): {e}")
    return f, info


def _call(f: Callable, path: str, args: tuple, kwargs: dict) -> tuple:
    """(kind, value, exception types) of one call of the reader's function."""
    try:
        value = f(*args, **kwargs)
    except (Exception, SystemExit) as e:  # the reader's error: one line, no traceback
        return "raised", _exception_text(e, path), tuple(c.__name__ for c in type(e).__mro__)
    try:
        return "returned", _plain(value), ()
    except Exception as e:  # what it returned cannot be read as numbers
        return "unreadable", f"returned {type(value).__name__}, not numbers in lists ({e})", ()


def _plain(x):
    """x as nested lists of floats, read through .tolist() where it has one."""
    x = x.tolist() if hasattr(x, "tolist") else x
    if isinstance(x, Real):
        return float(x)
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        return [_plain(v) for v in x]
    raise TypeError(f"found a {type(x).__name__}")


def _exception_text(e: BaseException, path: str) -> str:
    """"TypeError at file.py:12: message" in one line: the last line of the reader's file
    in the traceback."""
    lines = [frame.lineno for frame in traceback.extract_tb(e.__traceback__)
             if frame.filename == path]
    where = f" at {os.path.basename(path)}:{lines[-1]}" if lines else ""
    message = " ".join(str(e).split())
    message = message if len(message) <= 120 else message[:117] + "..."
    return f"{type(e).__name__}{where}" + (f": {message}" if message else "")


class _Child:
    """The reader's function in a child process, killed when a call runs past the time limit
    and started afresh for the next call: a runaway loop cannot hang the checker, even in C
    code or under a bare `except:`."""

    def __init__(self, path: str, names: tuple, arity: int, time_limit: float):
        self.args, self.time_limit, self.process = (path, names, arity), time_limit, None
        self.info = self._start()

    def _start(self) -> dict:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        sys.stdout.flush()  # a forked child would print anything still buffered once more
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, *self.args), daemon=True)
        self.process.start()
        theirs.close()
        kind, value, _ = self._receive(LOAD_FACTOR * self.time_limit)
        if kind != "loaded":
            self.close()
            file = os.path.basename(self.args[0])
            raise UsageError(value if kind == "usage" else f"{file} fails to load: {value}")
        return value

    def call(self, *args, **kwargs) -> tuple:
        """(kind, value, exception types) of f(*args, **kwargs) in the child."""
        if self.process is None:
            self._start()
        self.conn.send((args, kwargs))
        return self._receive(self.time_limit)

    def _receive(self, limit: float) -> tuple:
        if not self.conn.poll(limit):
            self.close()
            return "timeout", f"still running after {limit:g} s", ()
        try:
            return self.conn.recv()
        except EOFError:  # the child exited: os._exit, a crash in C code
            self.process.join()
            code = self.process.exitcode
            self.close()
            return "died", f"the process running it ended (exit code {code})", ()

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
            self.conn.close()
            self.process = None


# ---------------------------------------------------------------- the public functions

def check_attention(path: str, name: Optional[str] = None, *, true_blocks: bool = False,
                    time_limit: float = TIME_LIMIT, echo: Optional[Callable] = None) -> Report:
    """Return the Report of the reader's attention function: every case of
    attention_cases(), called as NAME(Q, K, V[, mask=][, is_causal=]) in a child process and
    compared with attention.scaled_dot_product_attention.

    NAME is name, or the first of `attention` and `scaled_dot_product_attention` in the
    file; true_blocks passes masks with True = blocked; echo, if given, receives each line
    of the report as soon as it is known.  UsageError when the file cannot be checked.

    >>> report = check_attention(os.path.join(ROOT, "attention.py"))  # the library itself
    >>> report.ok, report.convention
    (True, 'raises')
    """
    def run(case: Case, child: _Child) -> tuple:
        kwargs = _arguments(case, child.info, true_blocks)
        if kwargs is None:
            needs = "mask" if case.mask is not None else "is_causal"
            return "skip", None, f"{child.info['name']} takes no parameter named {needs}", ""
        return _judge(case, child.call(case.Q, case.K, case.V, **kwargs), true_blocks)

    def header(info: dict) -> str:
        args = ", ".join(["Q", "K", "V"] + [f"{p}=..." for p in info["takes"]])
        polarity = ", mask True = blocked" if true_blocks and "mask" in info["takes"] else ""
        return f"{path}: {info['name']}({args}){polarity}"

    names = (name,) if name else ATTENTION_NAMES
    return _run(path, names, 3, time_limit, attention_cases(), run, header, echo)


def check_softmax(path: str, name: Optional[str] = None, *, time_limit: float = TIME_LIMIT,
                  echo: Optional[Callable] = None) -> Report:
    """Return the Report of the reader's softmax: every case of softmax_cases(), called as
    NAME(x) in a child process and compared with softmax.softmax.

    NAME is name, or `softmax`; echo as for check_attention.

    >>> check_softmax(os.path.join(ROOT, "softmax.py")).mistakes  # the library itself
    set()
    """
    def run(case: SoftmaxCase, child: _Child) -> tuple:
        return _judge_softmax(case, child.call(case.x))

    def header(info: dict) -> str:
        return f"{path}: {info['name']}(x)"

    return _run(path, (name or "softmax",), 1, time_limit, softmax_cases(), run, header, echo)


def _arguments(case: Case, info: dict, true_blocks: bool) -> Optional[dict]:
    """The keyword arguments of the call for case; None when the function cannot take them.
    A mask the function requires is all True (may attend) where the case has none."""
    n, m = len(case.Q), len(case.K)
    needs = "mask" if case.mask is not None else "is_causal" if case.is_causal else None
    if needs and needs not in info["takes"]:
        return None
    kwargs = {}
    if case.mask is not None or "mask" in info["required"]:
        mask = case.mask if case.mask is not None else [[True] * m for _ in range(n)]
        kwargs["mask"] = [[a != true_blocks for a in row] for row in mask]
    if "is_causal" in info["takes"]:
        kwargs["is_causal"] = case.is_causal
    return kwargs


def _run(path: str, names: tuple, arity: int, time_limit: float, cases: list, run: Callable,
         header: Callable, echo: Optional[Callable]) -> Report:
    """Start the child, run every case through run(case, child), and collect the Report."""
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    if not path.endswith(".py"):
        raise UsageError(f"{path} is not a .py file")
    echo = echo or (lambda line: None)
    child = _Child(os.path.abspath(path), names, arity, time_limit)
    try:
        results, convention, time_outs = [], "", 0
        echo(header(child.info))
        for case in cases:
            if time_outs < 2:
                status, mistake, text, found = run(case, child)
            else:  # a function that hangs everywhere would cost a time limit per case
                status, mistake, text, found = "skip", None, "not run after two time-outs", ""
            time_outs += mistake is TIME_OUT
            convention = convention or found
            results.append(_result(case.title, status, mistake, text))
            echo(_line(results[-1]))
        echo(_summary(results))
        return Report(header(child.info), results, convention)
    finally:
        child.close()


def _result(title: str, status: str, mistake: Optional[Mistake], text: str) -> Result:
    """The Result, with its line: the mistake, the detail, the answer to read."""
    if mistake is None:
        return Result(title, status, "", text)
    line = mistake.name + (f" ({text})" if text else "")
    link = f" -> {INTERVIEW}#{mistake.anchor}" if mistake.anchor else ""
    return Result(title, status, mistake.name, line + link)


def _line(result: Result) -> str:
    return f"  {result.status:<4}  {result.title}" + (f": {result.line}" if result.line else "")


def _summary(results: List[Result]) -> str:
    failed = sum(r.status == "FAIL" for r in results)
    skipped = sum(r.status == "skip" for r in results)
    run = len(results) - skipped
    also = f", {skipped} skipped" if skipped else ""
    return f"{failed} of {run} checks failed{also}" if failed else f"all {run} checks ok{also}"


# ------------------------------------------------------------------------ the command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        self.exit(2, f"check.py: {message} (see python3 interview/check.py --help)\n")


def _split(spec: str) -> tuple:
    """(path, NAME or None) from FILE.py[:NAME]; a path that exists as given wins."""
    path, colon, name = spec.rpartition(":")
    if colon and name.isidentifier() and not os.path.isfile(spec):
        return path, name
    return spec, None


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; return the exit status (0 all ok, 1 a failure, 2 usage)."""
    parser = _Parser(prog="check.py", description=__doc__.split("\nPublic API")[0],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="FILE.py[:NAME]",
                        help="your file, and the function's name if it is not attention, "
                        "scaled_dot_product_attention or (with --softmax) softmax")
    parser.add_argument("--softmax", action="store_true", help="check a softmax NAME(x)")
    parser.add_argument("--mask-true-blocks", action="store_true",
                        help="pass masks with True = blocked (torch.nn.MultiheadAttention's "
                        "convention); by default True = may attend")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT, metavar="SECONDS",
                        help=f"a call running longer fails (default {TIME_LIMIT:g})")
    args = parser.parse_args(argv)
    if not 0 < args.time_limit <= 3600:
        parser.error(f"--time-limit must be above 0 and at most 3600 seconds, not "
                     f"{args.time_limit:g}")
    path, name = _split(args.file)
    echo = lambda line: print(line, flush=True)  # noqa: E731 - each line as soon as known
    try:
        if args.softmax:
            report = check_softmax(path, name, time_limit=args.time_limit, echo=echo)
        else:
            report = check_attention(path, name, true_blocks=args.mask_true_blocks,
                                     time_limit=args.time_limit, echo=echo)
    except UsageError as e:
        print(f"check.py: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the child is killed on the way out (_run's finally)
        print("check.py: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the output's reader stopped early (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
