"""The softmax mode: NAME(x) on a list of floats, against softmax.softmax.

Its random battery draws x of 1 to 64 entries (8 but one case in ten): N(0, 1) or N(0, 100)
entries, an offset of up to 1e3 either way, small integers (ties), a pool of one to three
values (ties again), and -inf in any position but all of them, the first included.

Public API (`__all__`): MODE, NOT_NORMALISED, EXP_ONLY, INF_WEIGHT, cases, expect, draw,
twin, unpack, stack, describe, axes.

python3 interview/check.py --help runs the checker."""

import math  # exp, inf
import random  # the battery's draws
from typing import List, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from interview.judge import Case, Expectation, Mistake, Mode, NoKey, Variant, close, tolerance
from lowprecision.emulation import softmax_in
from interview.mode_forward import NO_SHIFT, OFFSETS, SHIFT_FIRST, SHIFT_MIN, softmax_row
from softmax import softmax

__all__ = ["MODE", "NOT_NORMALISED", "EXP_ONLY", "INF_WEIGHT", "cases", "expect", "draw", "twin",
           "unpack", "stack", "describe", "axes"]

NOT_NORMALISED = Mistake("not normalised", "interview.md#over-which-axis-does-softmax-run")
EXP_ONLY = Mistake("exp(x), not normalised", "interview.md#over-which-axis-does-softmax-run")
INF_WEIGHT = Mistake("-inf weight not 0", "interview.md#how-should-a-mask-be-applied")


def cases() -> List[Case]:
    """Return the softmax cases; the traps of the shift come after their look-alikes.

    >>> [(c.title, c.kind) for c in cases()][-2:]
    [('-inf entries', 'ordinary'), ('every entry -inf', 'no key')]
    """
    x, inf = [0.5, -1.25, 2.0, 0.0], math.inf
    return [Case(title, (x,), kind=kind) for title, x, kind in [
        ("4 logits", x, "ordinary"),
        ("one logit", [3.0], "ordinary"),
        ("x + 50", [v + 50.0 for v in x], "ordinary"),
        ("logits near +1e3", [1000.0, 999.0, 998.5, 1000.5], "ordinary"),
        ("logits near -1e3", [-1000.0, -1001.0, -999.5], "ordinary"),
        ("[1e3, 0, -1e3]", [1000.0, 0.0, -1000.0], "ordinary"),
        ("[0, 1e3, -1e3]", [0.0, 1000.0, -1000.0], "ordinary"),
        ("-inf entries", [1.0, -inf, 0.5, -inf], "ordinary"),
        ("every entry -inf", [-inf, -inf, -inf], "no key"),
    ]]


def twin(case: Case) -> Case:
    """The second batch element: x reversed."""
    return case._replace(args=(case.args[0][::-1],))


def expect(case: Case, conventions) -> Expectation:
    x = case.args[0]
    if max(x) == -math.inf:  # no right answer: the library raises
        return Expectation(None, [], [NoKey("zeros", [0.0] * len(x)),
                                      NoKey("uniform", [1 / len(x)] * len(x))])
    reference = softmax(x)
    top = max(x)
    variants = [Variant(NO_SHIFT, softmax_row(x, 0.0)), Variant(SHIFT_MIN, softmax_row(x, min(x))),
                Variant(SHIFT_FIRST, softmax_row(x, x[0])),
                Variant(NOT_NORMALISED, [math.exp(v - top) for v in x]),
                Variant(EXP_ONLY, [_exp(v) for v in x])]
    tol = tolerance(reference)
    return Expectation(reference, [v for v in variants if not close(v.answer, reference, tol)],
                       precision=lambda fmt: softmax_in(x, fmt), veto=lambda got: _zeros(x, got))


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _zeros(x: List[float], got: List[float]):
    """(INF_WEIGHT, the weight) when a -inf logit's weight is not exactly 0."""
    weights = [g for g, v in zip(got, x) if v == -math.inf and g != 0.0]
    return (INF_WEIGHT, f"{weights[0]:.2g}") if weights else None


def unpack(value, batched: bool):
    return value


def stack(a, b) -> list:
    return [a, b]


# ------------------------------------------------------------------ the random battery

def draw(rng: random.Random, takes: set, align: str, like: Optional[Case] = None) -> Case:
    """A random x (like's length, if given), with -inf in a third of the cases.

    >>> draw(random.Random(5), set(), "top-left").title
    '5 logits, -inf at 1'
    """
    size = len(like.args[0]) if like else rng.randint(1, 64 if rng.randrange(10) == 0 else 8)
    style = rng.randrange(5)
    if style == 0:
        x = [rng.gauss(0.0, 1.0) for _ in range(size)]
    elif style == 1:
        x = [rng.gauss(0.0, 10.0) for _ in range(size)]
    elif style == 2:
        offset = rng.choice(OFFSETS)
        x = [offset + rng.gauss(0.0, 1.0) for _ in range(size)]
    elif style == 3:
        x = [float(rng.randint(-2, 2)) for _ in range(size)]
    else:
        pool = [rng.gauss(0.0, 3.0) for _ in range(rng.randint(1, 3))]
        x = [rng.choice(pool) for _ in range(size)]
    if size > 1 and rng.randrange(3) == 0:  # -inf in any place but one at least
        for j in rng.sample(range(size), rng.randint(1, size - 1)):
            x[j] = -math.inf
    case = Case("", (x,))
    return case._replace(title=describe(case))


def describe(case: Case) -> str:
    x = case.args[0]
    where = [j for j, v in enumerate(x) if v == -math.inf]
    if len(where) > 4:
        return f"{len(x)} logits, {len(where)} of them -inf"
    return f"{len(x)} logits" + (f", -inf at {', '.join(map(str, where))}" if where else "")


def axes(case: Case) -> list:
    """Fewer entries."""
    return [("entries", len(case.args[0]),
             lambda c, keep: c._replace(args=([c.args[0][j] for j in keep],)))]


MODE = Mode("softmax", ("softmax",), ("x",), (0,), cases, expect, twin, unpack, stack, draw, axes,
            describe)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
