"""The error bounds that softmax.py promises, and the one dot product's, as functions.

Shared by the tests, which assert them through tests.helpers.assert_close, and by
benchmarks/accuracy.py, which prints how much of each bound is used
(`python3 benchmarks/accuracy.py`).  The references are the 50-digit decimal ones of
exact.py.  No pytest here.
"""

import math  # log1p, fsum, inf
import os  # the project's root, when run by hand
import random  # seeded logits
import sys  # the path, when run by hand

if __name__ == "__main__":  # run by hand: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from oracles.exact import U, decimal_log_softmax, decimal_softmax, random_vector
from softmax import log_softmax, softmax

INF = math.inf
TINY = 2.0 ** -1074  # the smallest subnormal: the absolute rounding of a subnormal result

NAMED_HOSTILE = {
    "would overflow exp without the shift": [1000.0, 1001.0],
    "x_j - m at -1.7e308, still a float": [1e308, -7e307],  # p_2 = 0 is still right
    "equal logits far below zero": [-1e308, -1e308],  # [0.5, 0.5]
    "the documents' unscaled example": [100.0, 1.0, 1.0, 1.0],
    "its scaled partner": [10.0, 0.1, 0.1, 0.1],
    "fifty ties": [0.0] * 50,
    "a subnormal probability": [-745.0, 0.0],
    "near the exp overflow": [709.0, 710.0, -709.0],
    "differences far below an ulp of 1": [1e-300, 0.0, -1e-300],
    "masked logits": [-INF, 0.0, 1.0, -INF],
    "near-ties": [3.0, 3.0, 2.9999999999999996, -40.0],
    "long, spread over 80": [0.1 * k for k in range(-400, 400, 7)],
}
HOSTILE = list(NAMED_HOSTILE.values())  # benchmarks/accuracy.py takes the list


def random_logits(seed):
    rng = random.Random(seed)
    return random_vector(rng, rng.randint(1, 40), spread=rng.choice([0.5, 3.0, 30.0]))


# ------------------------------------------------------------------ error bounds
# Floating-point analysis of p_i = exp(x_i - m) / sum_j exp(x_j - m):
# rounding x_i - m moves the exponent by at most U |x_i - m|, which exp turns
# into a relative error of U |x_i - m|; exp itself adds at most 1 ulp (2 U);
# the denominator inherits the p-weighted average of its terms' errors,
# U (E_p|x - m| + 2), plus 1 U for fsum; the division adds 1 U.  So
#     |p_i - p_i*| / p_i* <= (|x_i - m| + E_p|x - m| + 6) U.
# For log p_i = (x_i - m) - log1p(s) the same terms become absolute errors: U |x_i - m|
# from the first subtraction; s carries a relative error of at most (M + 3) U, which
# log1p scales by s / (1 + s); log1p itself is within 1 ulp (2 U log1p(s)); the final
# subtraction rounds once (U |log p_i|).  So
#     |log p_i - log p_i*| <= (|x_i - m| + |log p_i*| + 2 log1p(s) + (s / (1 + s)) (M + 3)) U,
# with M = max_j |x_j - m| over the unmasked j and s = sum_{j != k} exp(x_j - m).


def spread(x, p_exact):
    """Return m, E_p|x - m| and M = max |x_j - m| over the j with p_j* > 0 (others add 0)."""
    m = max(x)
    alive = [(v, p) for v, p in zip(x, p_exact) if float(p) > 0.0]
    mean_gap = math.fsum(float(p) * abs(v - m) for v, p in alive)
    max_gap = max(abs(v - m) for v, _ in alive)
    return m, mean_gap, max_gap


def softmax_bounds(x):
    """Return [(p_i*, bound_i)]: the 50-digit p_i* as a float, and the most softmax(x)_i
    may differ from it, (|x_i - m| + E_p|x - m| + 6) U p_i* + TINY (0 for a masked x_i)."""
    exact = decimal_softmax(x)
    m, mean_gap, _ = spread(x, exact)
    return [(0.0, 0.0) if v == -INF else
            (float(p), (abs(v - m) + mean_gap + 6) * U * float(p) + TINY)
            for v, p in zip(x, exact)]


def log_softmax_bounds(x):
    """Return [(log p_i*, bound_i)]: the 50-digit log p_i* as a float (-inf for a masked
    x_i; log_softmax refuses a finite x_i whose log p_i* is beyond the float range), and
    the bound stated above."""
    exact = decimal_log_softmax(x)
    p_exact = decimal_softmax(x)
    m, _, max_gap = spread(x, p_exact)
    s = float((sum(p_exact) - max(p_exact)) / max(p_exact))  # sum_{j != k} e^(x_j - m)
    out = []
    for v, lp_star in zip(x, exact):
        if v == -INF:
            out.append((-INF, 0.0))
            continue
        bound = (abs(v - m) + abs(float(lp_star)) + 2 * math.log1p(s)
                 + s / (1 + s) * (max_gap + 3)) * U
        out.append((float(lp_star), max(bound, TINY)))
    return out


def _ratios(got, bounds):
    return [(0.0 if g == want else INF) if bound == 0.0 else abs(g - want) / bound
            for g, (want, bound) in zip(got, bounds)]


def softmax_error_ratios(x):
    """Return |p_i - p_i*| / bound_i for each i (<= 1 means within the stated bound)."""
    return _ratios(softmax(x), softmax_bounds(x))


def log_softmax_error_ratios(x):
    """Return |log p_i - log p_i*| / bound_i for each i (<= 1 means within the bound)."""
    return _ratios(log_softmax(x), log_softmax_bounds(x))


def dot_bound(u, v):
    """The most dot(u, v) may differ from the exact u . v rounded to a float.

    Each product rounds, by at most U |u_t v_t|; fsum rounds the exact sum of the rounded
    products once, by at most U |u . v| (plus U^2 terms); rounding the exact u . v for the
    comparison adds U |u . v| more.  With |u . v| <= sum_t |u_t v_t|, that is 3 U sum_t
    |u_t v_t| plus U^2 terms, so
        |dot(u, v) - fl(u . v)| <= 4 U sum_t |u_t v_t|   (+ TINY for subnormal results).
    """
    return 4 * U * math.fsum(abs(a * b) for a, b in zip(u, v)) + TINY


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
