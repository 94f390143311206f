"""Claims: the sentences of the pages that say something about a number the project
computes, each found in its page and checked by a test, and the inventory of them.

A sentence is a claim when it states a direction (falls, grows), a comparison (more than,
the same as), a bound (at least, at most) or a universal (never, none, every) about a
number the code computes.  A claims test quotes its sentence with `claim`:

    @claim("README.md", "Unscaled, the logits spread like sqrt(d_k), softmax saturates")
    def test_the_logits_spread_like_sqrt_d_k(default_report):
        ...  # recompute what the sentence asserts, and assert it

Before the test's body runs, the quote must occur in the page as the reader sees it,
with two liberties: every run of whitespace (line breaks included) reads as one space, and
a generated value `<!--v:NAME-->...<!--/v-->` reads as `{NAME}`, so that regenerating a
number leaves the quote alone while rewording the sentence fails its test until the quote
is updated.  A generated block (`<!--begin:NAME-->` to `<!--end:NAME-->`, a table) reads as
`{block NAME}`.  The page REPORT is the text `python3 stats.py` prints (its fixed text; the
numbers in it are those of a small report, so a quote of it holds no number).

What the test then recomputes comes from the records or the code, never through the code
that writes the pages' tables (scripts/build.py, scripts/report_tables.py,
experiments.learning.docs_data): from a stats.Report's own numbers, the library's
functions, exact arithmetic, or the committed records read directly.  Where the numbers are
random, a direction or a difference counts only beyond Z standard errors of the
difference (`apart`, `within`), or where two 95% intervals do not overlap; where they are
deterministic, the comparison is exact.

A claim that an existing test checks already is registered with `covered(page, quote,
"FILE.py::test_name")`.  A claim about the literature (a paper, a pull request, a library's
behaviour) cannot be recomputed: `source(page, quote, where)` names its source and place
instead.  A claim of a page that another piece of work owns is listed with `owned(page,
quote, owner)` until its owner gives it a test.  tests/test_claims_inventory.py finds the
quotes of all three, and checks that every test named exists.

The inventory, tests/CLAIMS.md, is every claim registered by the files
tests/test_claims_*.py, page by page, in the order of the page, with the test or the
source that checks it and the count per page.  `python3 -m tests.claims` rewrites it;
tests/test_claims_inventory.py fails when it is out of date.  To add a page's claims: a new
file tests/test_claims_<page>.py with `claim`, `source` or `owned` for each sentence, then
`python3 -m tests.claims`.

Public names: PAGES, REPORT, OWNERS, Z, Claim, CLAIMS, page_text, normalise, find, claim,
covered, source, owned, apart, within, disjoint, rising, falling, level, inventory, main.
"""

import functools  # wraps: a claims test keeps its signature, so its fixtures
import glob  # the claims test files
import importlib  # to register their claims without running them
import math  # sqrt
import os  # paths
import re  # the markers, whitespace
import sys  # argv, exit
from difflib import SequenceMatcher  # the nearest passage, when a quote is not found
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

__all__ = ["PAGES", "REPORT", "OWNERS", "Z", "Claim", "CLAIMS", "page_text", "normalise",
           "find", "claim", "covered", "source", "owned", "apart", "within", "disjoint",
           "rising", "falling", "level", "inventory", "main"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INVENTORY = os.path.join(ROOT, "tests", "CLAIMS.md")
REPORT = "python3 stats.py"  # the main job's text, a page of its own
PAGES = [  # every page in scope, in the inventory's order
    "README.md", "docs/README.md", "docs/derivations.md", "docs/equations.md",
    "docs/documents.md", "docs/worked-examples.md", "docs/interview.md", "docs/numerics.md",
    "docs/pytorch-jax.md", "docs/glossary.md", "docs/low-precision.md", "docs/whiteboard.md",
    "docs/experiments.md", "docs/checker.md", "docs/stability.md", "benchmarks/README.md",
    REPORT]
# the pages, or parts, whose claims another piece of work writes and checks: none now
OWNERS: Dict[str, str] = {}
Z = 3  # standard errors of a difference before it counts: 0.27% two-sided under a normal
VALUE = re.compile(r"<!--v:([\w.-]+)-->.*?<!--/v-->")  # as scripts/build.py reads them: a
BLOCK = re.compile(r"<!--begin:([\w.-]+)-->\n.*?<!--end:\1-->", re.S)  # value on one line


class Claim(NamedTuple):
    page: str  # one of PAGES
    quote: str  # the sentence, or the part of it that makes the claim, as normalised
    kind: str  # "test", "source" or "owned"
    by: str  # tests/FILE.py::test_name, or the source and place, or the owner


CLAIMS: List[Claim] = []  # every claim registered by the modules imported so far


# ------------------------------------------------------------------ the pages

def normalise(text: str) -> str:
    """The text as a quote is matched against: whitespace runs as one space, a generated
    value as {NAME}, a generated block as {block NAME}.

    >>> normalise("a <!--v:var.64-->64.0 ± 2.9<!--/v--> and\\n  b")
    'a {var.64} and b'
    """
    text = BLOCK.sub(lambda m: f"{{block {m.group(1)}}}", text)
    text = VALUE.sub(lambda m: f"{{{m.group(1)}}}", text)
    return re.sub(r"\s+", " ", text).strip()


@functools.lru_cache(maxsize=None)
def page_text(page: str) -> str:
    """The normalised text of a page: a Markdown file relative to the root, or REPORT."""
    if page == REPORT:
        import stats  # the fixed text is the same at every setting: a small report
        return normalise(stats.format_report(stats.report(samples=8, trials=4, dks=(16, 64))))
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return normalise(f.read())


def find(page: str, quote: str) -> None:
    """Assert that quote (normalised) occurs in page; if not, name the nearest passage."""
    text, wanted = page_text(page), normalise(quote)
    if wanted in text:
        return
    starts = [0] + [m.end() for m in re.finditer(r"[.;:!?] ", text)]
    nearest = max((text[i:i + len(wanted)] for i in starts),
                  key=lambda s: SequenceMatcher(None, s, wanted).ratio())
    raise AssertionError(f"{page} no longer says {wanted!r}; nearest: {nearest!r}")


# ------------------------------------------------------------------ registering

def _register(page: str, quote: str, kind: str, by: str) -> None:
    if page not in PAGES:
        raise ValueError(f"claims: {page!r} is not one of PAGES")
    CLAIMS.append(Claim(page, normalise(quote), kind, by))


def claim(page: str, quote: str) -> Callable:
    """Decorate a test: it checks the claim `quote` of `page`, and finds the quote first."""
    def decorate(test: Callable) -> Callable:
        path = os.path.relpath(sys.modules[test.__module__].__file__, ROOT)
        _register(page, quote, "test", f"{path}::{test.__name__}")

        @functools.wraps(test)
        def checked(*args, **kwargs):
            find(page, quote)
            return test(*args, **kwargs)
        return checked
    return decorate


def covered(page: str, quote: str, test: str) -> None:
    """Register a claim that an existing test checks already, named as FILE.py::test_name
    under tests/ (tests/test_claims_inventory.py checks that it exists)."""
    _register(page, quote, "test", f"tests/{test}")


def source(page: str, quote: str, where: str) -> None:
    """Register a claim about the literature with its source and place."""
    _register(page, quote, "source", where)


def owned(page: str, quote: str, owner: str) -> None:
    """Register a claim whose test another piece of work writes."""
    _register(page, quote, "owned", owner)


# ------------------------------------------------------------------ margins

def apart(a: float, se_a: float, b: float, se_b: float) -> float:
    """(a - b) in standard errors of the difference, sqrt(se_a^2 + se_b^2), for independent
    estimates: a claim that a exceeds b needs apart(...) > Z.

    >>> apart(1.0, 0.3, 0.5, 0.4)
    1.0
    """
    return (a - b) / math.sqrt(se_a * se_a + se_b * se_b)


def within(a: float, se_a: float, b: float, se_b: float) -> bool:
    """a and b do not differ beyond Z standard errors of their difference."""
    return abs(apart(a, se_a, b, se_b)) <= Z


def disjoint(lower, upper) -> bool:
    """The interval of `lower` (a stats.Median or Quantile) ends below that of `upper`."""
    return lower.high < upper.low


def rising(estimates: Sequence) -> bool:
    """Each (value, se) exceeds the one before by more than Z standard errors of the
    difference; Medians or Quantiles: each interval lies above the one before."""
    pairs = list(zip(estimates, estimates[1:]))
    if hasattr(estimates[0], "high"):
        return all(disjoint(a, b) for a, b in pairs)
    return all(apart(*b, *a) > Z for a, b in pairs)


def falling(estimates: Sequence) -> bool:
    """rising, read from the end."""
    return rising(list(reversed(estimates)))


def level(estimates: Sequence) -> bool:
    """No two (value, se) differ by more than Z standard errors of their difference."""
    return all(within(*a, *b) for i, a in enumerate(estimates) for b in estimates[i + 1:])


# ------------------------------------------------------------------ the inventory

def _modules() -> List[str]:
    pattern = os.path.join(ROOT, "tests", "test_claims_*.py")
    return sorted(f"tests.{os.path.basename(p)[:-3]}" for p in glob.glob(pattern))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def inventory(claims: Optional[Sequence[Claim]] = None) -> str:
    """tests/CLAIMS.md for the claims given, or for those of every claims test file."""
    if claims is None:
        for name in _modules():
            importlib.import_module(name)
        claims = CLAIMS
    by_page: Dict[str, List[Claim]] = {page: [] for page in PAGES}
    for c in claims:
        by_page[c.page].append(c)
    for page, listed in by_page.items():
        listed.sort(key=lambda c: (page_text(page).find(c.quote), c.quote))
    kinds = ("test", "source", "owned")
    lines = ["# The claims of the pages, and what checks each", "",
             "Written by `python3 -m tests.claims` from the files tests/test_claims_*.py "
             "(tests/claims.py says how); tests/test_claims_inventory.py fails when it is "
             "out of date. A claim is quoted as its page is matched: whitespace as one "
             "space, a generated value as {NAME}.", "",
             "| page | claims | checked by a test | named source | left to their owner "
             "| owned elsewhere |", "|---|---|---|---|---|---|"]
    for page, listed in by_page.items():
        counts = [sum(c.kind == k for c in listed) for k in kinds]
        lines.append(f"| {page} | {len(listed)} | " + " | ".join(map(str, counts))
                     + f" | {_cell(OWNERS.get(page, '-'))} |")
    total = [sum(c.kind == k for c in claims) for k in kinds]
    lines.append(f"| all | {len(claims)} | " + " | ".join(map(str, total)) + " | |")
    for page, listed in by_page.items():
        if not listed:
            continue
        lines += ["", f"## {page}", "", "| claim | checked by |", "|---|---|"]
        for c in listed:
            by = {"test": f"`{c.by}`", "source": f"source: {c.by}",
                  "owned": f"owned: {c.by}"}[c.kind]
            lines.append(f"| {_cell(c.quote)} | {_cell(by)} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Rewrite tests/CLAIMS.md (--check: write nothing, exit 1 if it is out of date)."""
    import argparse
    parser = argparse.ArgumentParser(prog="python3 -m tests.claims",
                                     description="Rewrite tests/CLAIMS.md, the inventory.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    text, current = inventory(), ""
    if os.path.exists(INVENTORY):
        with open(INVENTORY, encoding="utf-8") as f:
            current = f.read()
    if args.check:
        print("tests/CLAIMS.md is " + ("up to date" if current == text else "out of date"))
        return 0 if current == text else 1
    with open(INVENTORY, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote tests/CLAIMS.md: {len(CLAIMS)} claims")
    return 0


if __name__ == "__main__":  # python3 -m tests.claims: register into the module tests.claims,
    from tests import claims  # which the claims test files import, not into __main__
    sys.exit(claims.main())
