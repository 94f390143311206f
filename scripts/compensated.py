"""The rounding of x_i - m, and a compensated shift that removes it (docs/numerics.md).

    python3 scripts/compensated.py 0.24538999425425345 -698.3576623952476

softmax.py computes exp(x_i - m) from the rounded difference fl(x_i - m).  That rounding
moves the exponent by up to U |x_i - m| (U = 2^-53), a relative error of that size in p_i.
It is not unavoidable for floats given exactly: the error of a floating-point
subtraction is itself a float (Knuth's TwoSum), so exp(x_i - m) = exp(s) exp(e) with
s = fl(x_i - m) and e its exact error.  Since |e| <= U |s|, 1 + e is exp(e) to within a
relative e^2/2 <= (U s)^2 / 2, far below U for every s whose exp is not 0 (|s| < 746).
The library keeps the plain shift (a reference reads better without it); this file shows
the compensated one beside it, and how far each lands from 60-digit `decimal`.

For comparison, p_i's own sensitivity to its logits is its componentwise relative
condition number (1 - p_i)|x_i| + sum_{j != i} p_j |x_j| (condition_number): storing the
logits as floats can already cost that many U.

Public names:

    two_difference(a, b)        (s, e): s = fl(a - b) and a - b = s + e exactly
    compensated_softmax(x)      softmax with the compensated shift
    compensated_log_softmax(x)  log softmax with the compensated shift
    ulp_errors(computed, x, log=False)   each entry's distance from the exact value, in ulps
    condition_number(x, i)      (1 - p_i)|x_i| + sum_{j != i} p_j |x_j|
    condition_bound(x, i)       |x_i| + sum_j p_j |x_j|, an upper bound on it
    CASES, CONDITION_EXAMPLE    the rows of docs/numerics.md's table; the example of
                                docs/derivations.md section 5
    markdown_values(), markdown_blocks()   their numbers and table

>>> two_difference(1.0, 2.0 ** -60)
(1.0, -8.673617379884035e-19)
"""

import argparse  # the command line
import math  # exp, log1p, fsum, ulp
import os  # the library's folder, when run as a script
import sys  # path, exit
from decimal import Decimal, localcontext  # the 60-digit reference
from typing import Dict, List, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from softmax import log_softmax, softmax
from scripts.tables import table

__all__ = ["two_difference", "compensated_softmax", "compensated_log_softmax", "ulp_errors",
           "condition_number", "condition_bound", "CASES", "CONDITION_EXAMPLE",
           "markdown_values", "markdown_blocks"]


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
        s = sum(terms[:k] + terms[k + 1:], Decimal(0))  # without the max's own term, 1
        log1p_s = s - s * s / 2 + s * s * s / 3 if s < Decimal("1e-20") else (1 + s).ln()
        return [(Decimal(v) - m) - log1p_s if log else t / (1 + s) for v, t in zip(x, terms)]


def ulp_errors(computed: Sequence[float], x: Sequence[float], log: bool = False) -> List[float]:
    """Return |computed_i - exact_i| / ulp(exact_i) for softmax(x) (or log softmax)."""
    exact = _exact(x, log)
    return [float(abs(Decimal(c) - w) / Decimal(math.ulp(float(w))))
            for c, w in zip(computed, exact)]


def condition_number(x: Sequence[float], i: int) -> float:
    """Return kappa_i = (1 - p_i)|x_i| + sum_{j != i} p_j |x_j|, p = softmax(x): the
    componentwise relative condition number of p_i.  Since d log p_i / d x_j = delta_ij - p_j,
    moving each x_j by a relative delta at most moves p_i by about kappa_i delta at most,
    relatively, and some choice of signs reaches it.

    >>> f"{condition_number([0.0, 10.0], 1):.2g}", f"{condition_number([0.0, 10.0], 0):.5g}"
    ('0.00045', '9.9995')
    """
    p = softmax(x)
    others = [j for j in range(len(x)) if j != i]
    rest = math.fsum(p[j] for j in others)  # 1 - p_i without cancelling when p_i is near 1
    return math.fsum([rest * abs(x[i])] + [p[j] * abs(x[j]) for j in others])


def condition_bound(x: Sequence[float], i: int) -> float:
    """Return |x_i| + sum_j p_j |x_j|: an upper bound on condition_number(x, i), since
    |delta_ij - p_j| <= delta_ij + p_j; loose for the largest weight.

    >>> f"{condition_bound([0.0, 10.0], 1):.3g}"
    '20'
    """
    p = softmax(x)
    return math.fsum([abs(x[i])] + [p_j * abs(x_j) for p_j, x_j in zip(p, x)])


CASES = ([0.24538999425425345, -698.3576623952476],  # p_2 280 ulp off in the library
         [110.77228390845835, -441.7085177424422, -552.7156891042779],
         [1000.0, 999.1, -3.3])
CONDITION_EXAMPLE = ([0.0, 10.0], 1)  # x, and i: the largest weight


def markdown_values() -> Dict[str, str]:
    """Return the numbers of the condition-number example, by name."""
    x, i = CONDITION_EXAMPLE
    return {"cond.kappa": f"{condition_number(x, i):.2g}",
            "cond.bound": f"{condition_bound(x, i):.3g}"}


def markdown_blocks() -> Dict[str, str]:
    """Return {"compensated-table": the worst error of each method on each case, in ulps}."""
    rows = []
    for x in CASES:
        cells = [max(ulp_errors(f(x), x, log)) for f, log in (
            (softmax, False), (compensated_softmax, False), (log_softmax, True),
            (compensated_log_softmax, True))]
        rows.append([x] + [f"{c:.3g}" for c in cells])
    return {"compensated-table": table(["x", "softmax, library", "softmax, compensated",
                                        "log softmax, library", "log softmax, compensated"],
                                       rows)}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print, for the logits given (default: CASES), each method's worst error in ulps."""
    parser = _Parser(prog="python3 scripts/compensated.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("x", nargs="*", type=float, metavar="LOGIT",
                        help="finite logits (default: the rows of docs/numerics.md); put -- "
                             "before them if one is negative in e notation: -- -1e5 0")
    args = parser.parse_args(argv)
    bad = [v for v in args.x if not math.isfinite(v)]
    if bad:
        parser.error(f"every LOGIT must be finite, not {bad[0]!r}")
    if args.x and max(args.x) - min(args.x) == math.inf:
        parser.error(f"the LOGITs {min(args.x)!r} and {max(args.x)!r} are too far apart: "
                     f"their difference is beyond the float range")
    try:
        _print_errors([args.x] if args.x else list(CASES))
    except KeyboardInterrupt:
        print("python3 scripts/compensated.py: interrupted", file=sys.stderr)
        return 130
    return 0


def _print_errors(rows: List[List[float]]) -> None:
    print(f"{'worst error, ulps':<24}{'library':>12}{'compensated':>14}")
    for x in rows:
        print(x)
        for name, plain, better, log in (("softmax", softmax, compensated_softmax, False),
                                         ("log softmax", log_softmax, compensated_log_softmax,
                                          True)):
            print(f"  {name:<22}{max(ulp_errors(plain(x), x, log)):>12.3g}"
                  f"{max(ulp_errors(better(x), x, log)):>14.3g}")


if __name__ == "__main__":
    sys.exit(main())
