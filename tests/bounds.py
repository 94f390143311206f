"""The error bounds that softmax.py promises, as functions (no pytest needed).

Shared by tests/test_softmax.py, which asserts them, and benchmarks/accuracy.py,
which prints how much of each bound is used.  The references are the 50-digit
decimal ones of oracle.py.
"""

import math  # log1p, fsum
import random  # seeded logits

from oracle import U, decimal_log_softmax, decimal_softmax, random_vector
from softmax import log_softmax, softmax

INF = math.inf
HOSTILE = [
    [1000.0, 1001.0],  # would overflow exp without the shift
    [1e308, -1e308],  # x_j - m overflows to -inf: p_2 = 0 is still right
    [-1e308, -1e308],  # equal logits far below zero: [0.5, 0.5]
    [100.0, 1.0, 1.0, 1.0],  # the documents' unscaled example
    [10.0, 0.1, 0.1, 0.1],  # and its scaled partner
    [0.0] * 50,  # ties everywhere
    [-745.0, 0.0],  # p_1 is subnormal
    [709.0, 710.0, -709.0],
    [1e-300, 0.0, -1e-300],  # differences far below an ulp of 1
    [-INF, 0.0, 1.0, -INF],  # masked logits
    [3.0, 3.0, 2.9999999999999996, -40.0],  # near-ties
    [0.1 * k for k in range(-400, 400, 7)],  # long, spread over 80
]


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


def _spread(x, p_exact):
    """Return m, E_p|x - m| and M = max |x_j - m| over the j with p_j* > 0 (others add 0)."""
    m = max(x)
    alive = [(v, p) for v, p in zip(x, p_exact) if float(p) > 0.0]
    mean_gap = math.fsum(float(p) * abs(v - m) for v, p in alive)
    max_gap = max(abs(v - m) for v, _ in alive)
    return m, mean_gap, max_gap


def softmax_error_ratios(x):
    """Return |p_i - p_i*| / bound_i for each i (<= 1 means within the stated bound)."""
    exact = decimal_softmax(x)
    m, mean_gap, _ = _spread(x, exact)
    ratios = []
    for v, p, p_star in zip(x, softmax(x), exact):
        if v == -INF:
            ratios.append(0.0 if p == 0.0 else INF)
            continue
        # 2^-1074, the smallest subnormal, covers the absolute rounding of subnormal results
        relative = (abs(v - m) + mean_gap + 6) * U * float(p_star) if float(p_star) else 0.0
        bound = relative + 2.0 ** -1074
        ratios.append(abs(p - float(p_star)) / bound)
    return ratios


def log_softmax_error_ratios(x):
    exact = decimal_log_softmax(x)
    p_exact = decimal_softmax(x)
    m, _, max_gap = _spread(x, p_exact)
    s = float((sum(p_exact) - max(p_exact)) / max(p_exact))  # sum_{j != k} e^(x_j - m), in decimal
    ratios = []
    for v, lp, lp_star in zip(x, log_softmax(x), exact):
        if v == -INF:
            ratios.append(0.0 if lp == -INF else INF)
            continue
        if abs(lp_star) > 1.7e308:  # the true value is below -DBL_MAX: -inf is its rounding
            ratios.append(0.0 if lp == -INF else INF)
            continue
        bound = (abs(v - m) + abs(float(lp_star)) + 2 * math.log1p(s)
                 + s / (1 + s) * (max_gap + 3)) * U
        bound = max(bound, 2.0 ** -1074)
        ratios.append(abs(lp - float(lp_star)) / bound)
    return ratios
