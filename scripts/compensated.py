"""The rounding of x_i - m, and a compensated shift that removes it (docs/numerics.md).

softmax.py computes exp(x_i - m) from the rounded difference fl(x_i - m).  That rounding
moves the exponent by up to U |x_i - m| (U = 2^-53), a relative error of that size in p_i:
the size of the problem's condition number, for p_i as a function of x, of
|x_i| + sum_j p_j |x_j|.  It is not unavoidable for floats given exactly: the error of a
floating-point subtraction is itself a float (Knuth's TwoSum), so exp(x_i - m) =
exp(s) exp(e) with s = fl(x_i - m) and e its exact error, and exp(e) = 1 + e to within
U^2.  The library keeps the plain shift (a reference reads better without it); this file
shows the compensated one beside it, and how far each lands from 60-digit `decimal`.

Public names:

    two_difference(a, b)        (s, e): s = fl(a - b) and a - b = s + e exactly
    compensated_softmax(x)      softmax with the compensated shift
    compensated_log_softmax(x)  log softmax with the compensated shift
    ulp_errors(computed, x, log=False)   each entry's distance from the exact value, in ulps
    CASES, markdown_blocks()    the table of docs/numerics.md

>>> two_difference(1.0, 2.0 ** -60)
(1.0, -8.673617379884035e-19)
"""

import math  # exp, log1p, fsum, ulp
from decimal import Decimal, localcontext  # the 60-digit reference
from typing import Dict, List, Sequence, Tuple

from softmax import log_softmax, softmax

__all__ = ["two_difference", "compensated_softmax", "compensated_log_softmax", "ulp_errors",
           "CASES", "markdown_blocks"]


def two_difference(a: float, b: float) -> Tuple[float, float]:
    """Return (s, e) with s = fl(a - b) and a - b = s + e exactly (Knuth's TwoSum of a, -b).

    >>> two_difference(3.0, 1.0)
    (2.0, 0.0)
    """
    s = a - b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (-b - b_virtual)


def _shifted(x: Sequence[float]) -> List[float]:
    """exp(x_j - m) for every j, with the subtraction's own error e put back: exp(s)(1 + e)."""
    m = max(x)
    return [math.exp(s) * (1.0 + e) for s, e in (two_difference(v, m) for v in x)]


def compensated_softmax(x: Sequence[float]) -> List[float]:
    """Return softmax(x) = exp(x_i - m) / sum_j exp(x_j - m), the differences compensated.

    >>> compensated_softmax([0.0, 0.0])
    [0.5, 0.5]
    """
    e = _shifted(x)
    Z = math.fsum(e)
    return [v / Z for v in e]


def compensated_log_softmax(x: Sequence[float]) -> List[float]:
    """Return log p_i = (x_i - m) - log1p(s), s = sum_{j != k} exp(x_j - m), both the
    differences and s compensated.

    >>> compensated_log_softmax([0.0, 0.0]) == [-math.log(2.0)] * 2
    True
    """
    m = max(x)
    k = x.index(m)
    e = _shifted(x)
    log1p_s = math.log1p(math.fsum(e[:k] + e[k + 1:]))
    return [(s - log1p_s) + d for s, d in (two_difference(v, m) for v in x)]


def _exact(x: Sequence[float], log: bool) -> List[Decimal]:
    """softmax(x), or log softmax(x), at 60 digits: (x_i - m) - log(1 + s) with log(1 + s)
    from its series when s is tiny, where 1 + s would round to 1 even at 60 digits."""
    with localcontext() as context:
        context.prec = 60
        m = max(Decimal(v) for v in x)
        terms = [(Decimal(v) - m).exp() for v in x]
        k = x.index(max(x))
        s = sum(terms[:k] + terms[k + 1:])  # without the max's own term, exactly 1
        log1p_s = s - s * s / 2 + s * s * s / 3 if s < Decimal("1e-20") else (1 + s).ln()
        return [(Decimal(v) - m) - log1p_s if log else t / (1 + s) for v, t in zip(x, terms)]


def ulp_errors(computed: Sequence[float], x: Sequence[float], log: bool = False) -> List[float]:
    """Return |computed_i - exact_i| / ulp(exact_i) for softmax(x) (or log softmax)."""
    exact = _exact(x, log)
    return [float(abs(Decimal(c) - w) / Decimal(math.ulp(float(w))))
            for c, w in zip(computed, exact)]


CASES = ([0.24538999425425345, -698.3576623952476],  # p_2 280 ulp off in the library
         [110.77228390845835, -441.7085177424422, -552.7156891042779],
         [1000.0, 999.1, -3.3])


def markdown_blocks() -> Dict[str, str]:
    """Return {"compensated-table": the worst error of each method on each case, in ulps}."""
    lines = ["| x | softmax, library | softmax, compensated | log softmax, library "
             "| log softmax, compensated |", "|---|---|---|---|---|"]
    for x in CASES:
        cells = [max(ulp_errors(f(x), x, log)) for f, log in (
            (softmax, False), (compensated_softmax, False), (log_softmax, True),
            (compensated_log_softmax, True))]
        lines.append(f"| {x} | " + " | ".join(f"{c:.3g}" for c in cells) + " |")
    return {"compensated-table": "\n".join(lines)}
