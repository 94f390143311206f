"""The softmax mode: NAME(x) on a list of floats, against softmax.softmax.

python3 interview/check.py --help runs the checker."""

import math  # exp, inf
from typing import List
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from interview.judge import Case, Expectation, Mistake, Mode, NoKey, Variant, close, tolerance
from lowprecision.emulation import softmax_in
from interview.mode_forward import NO_SHIFT, SHIFT_FIRST, SHIFT_MIN, softmax_row
from softmax import softmax

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


MODE = Mode("softmax", ("softmax",), ("x",), (0,), cases, expect, twin, unpack, stack)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
