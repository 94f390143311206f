"""Tests for stats.py against references that do not call it: exact Fractions (moments,
Gaussian moments expanded as polynomials, the binomial tail of the median's interval),
50-digit decimal (entropy, layer norm), the stdlib statistics module, brute-force
enumeration, random.gauss itself (every sampler's draws), and a brute-force simulation that
draws q, K, V and G and goes through attention.attention_backward (the saturation and
gradient statistics, compared by distribution).  Monte Carlo checks use a fixed seed and a
tolerance of four standard errors, each with its formula: a correct implementation fails
each of them for about one seed in 16,000.  The report and the command line: test_report.py."""

import functools
import inspect
import itertools
import math
import random
import re
import statistics
import time
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

import stats
from tests.helpers import assert_close
from oracles.exact import (U, chi_square_rows, decimal_entropy, decimal_softmax, exact_interval,
                           gauss_dot_products, gauss_projected_dot_products, quantile_ranks,
                           random_trials, top_share_error)
from tests.rows import D_V, explicit_row, row_norms, row_statistics
from softmax import LIMIT, softmax, softmax_jacobian
from stats import (PERCENTILES, SCALE_CHOICES, TOP_PERCENTS, GradientNorms, GradientSpread,
                   Median, Moments, Quantile, Saturation, ScoreVariance, additive_score_variance,
                   correlated_dot_product_moments, correlated_logits, dot_product_variance,
                   exact_dot_product_moments, format_estimate, format_interval,
                   format_report, gradient_spread, gradient_stats, layer_norm, mean,
                   median_interval, product_variance, quantile_interval, report,
                   sample_dot_products, sample_projected_dot_products, saturation_stats,
                   scale_factor, scaled_variance, softmax_entropy, variance,
                   variance_standard_error)

try:
    import numpy
except ImportError:  # the NumPy checks are skipped without it
    numpy = None

TINY = 2.0 ** -1074  # the smallest subnormal


# ------------------------------------------------------------------ mean and variance

def hostile_data():
    rng = random.Random(5)
    yield "offset 1e9", [1e9 + rng.gauss(0, 1) for _ in range(200)]
    yield "offset -1e12, spread 1e-3", [-1e12 + rng.gauss(0, 1e-3) for _ in range(100)]
    yield "spread 1e55", [rng.gauss(0, 1e55) for _ in range(50)]
    yield "tiny values", [rng.gauss(0, 1e-150) for _ in range(50)]
    yield "integers", [rng.randint(-10 ** 6, 10 ** 6) for _ in range(99)]
    yield "two points", [0.1, 0.3]
    yield "constant", [7.25] * 17
    yield "up to the limit 2^200", [LIMIT * (2 * rng.random() - 1) for _ in range(20)] + [LIMIT]
    yield "subnormal", [rng.randint(1, 10 ** 6) * 5e-324 for _ in range(20)]


HOSTILE = [pytest.param(data, id=name) for name, data in hostile_data()]


def exact_variance(data, ddof=0) -> Fraction:
    n = len(data)
    mu = sum(map(Fraction, data)) / n
    return sum((Fraction(x) - mu) ** 2 for x in data) / (n - ddof)


@pytest.mark.parametrize("ddof", [0, 1], ids=["population", "sample"])
@pytest.mark.parametrize("data", HOSTILE)
def test_variance_agrees_with_the_exact_value(data, ddof):
    # The two-pass algorithm with its correction has relative error <= 4 U + n kappa^2 U^2,
    # kappa^2 = 1 + mean^2 / var the data's condition number (Chan, Golub and LeVeque); the
    # squares of subnormal deviations underflow, n of them by at most 2^-1074 each.
    want = exact_variance(data, ddof)
    got = variance(data, ddof=ddof)
    if want == 0:
        assert got == 0.0
        return
    kappa2 = 1 + (sum(map(Fraction, data)) / len(data)) ** 2 / exact_variance(data)
    assert_close(got, float(want), rel=4 * U + len(data) * float(kappa2) * U * U,
                 abs=len(data) * TINY)


def test_variance_matches_the_statistics_module():
    data = dict(hostile_data())["offset 1e9"]
    assert_close(variance(data), statistics.pvariance(data), rel=4 * U)
    assert_close(variance(data, 1), statistics.variance(data), rel=4 * U)
    ints = [2, 4, 4, 4, 5, 5, 7, 9]
    assert variance(ints) == statistics.pvariance(ints) == 4


def test_the_correction_term_fixes_the_rounding_of_the_mean():
    # x_bar = fsum / n is rounded; the second pass removes its error.  Here the variance is
    # the exact one rounded once; one pass without the correction is not.
    data = [1000000000.9, 1000000000.8, 1000000000.2, 1000000000.5]
    x_bar = math.fsum(data) / len(data)
    without = math.fsum((x - x_bar) ** 2 for x in data) / len(data)
    assert variance(data) == float(exact_variance(data)) == 0.07499998211860781 != without


def test_the_one_pass_formula_fails_where_two_passes_do_not():
    data = dict(hostile_data())["offset 1e9"]
    n = len(data)
    one_pass = math.fsum(x * x for x in data) / n - (math.fsum(data) / n) ** 2  # E[X^2] - E[X]^2
    want = statistics.pvariance(data)  # about 1
    assert abs(one_pass - want) > 0.1 * want  # catastrophic cancellation
    assert_close(variance(data), want, rel=1e-14)


def test_variance_of_data_at_the_limit_is_exact_and_beyond_it_refused():
    assert variance([LIMIT, -LIMIT]) == LIMIT * LIMIT  # 2^400: no overflow on the way
    assert variance([2.0, 4.0], ddof=1) == 2.0 and variance([2.0, 4.0]) == 1.0
    assert variance([1.5]) == 0.0  # one point, ddof=0
    with pytest.raises(ValueError, match=r"^variance: xs\[1\] is 1e\+61; it must be at most "
                                         r"2\^200 \(about 1\.6e\+60\) in size, so that sums of "
                                         "products stay within the float range$"):
        variance([1.0, 1e61])


@pytest.mark.parametrize("data", [
    pytest.param([1e16, 1.0, -1e16, 3.0], id="a left-to-right sum gives 0.75"),
    pytest.param([LIMIT, LIMIT], id="at the limit"),
    pytest.param([5e-324] * 3, id="subnormal"),
    pytest.param([0.1, 0.2, 0.3], id="decimal fractions"),
    pytest.param([random.Random(8).uniform(-1e60, 1e60) for _ in range(30)] + [1e-300],
                 id="spread over 360 orders of magnitude"),
    pytest.param([Fraction(1, 3)] * 3, id="Fractions"),
])
def test_mean_is_within_two_roundings_of_the_exact_average(data):
    # fsum rounds the exact sum once and the division once more: |error| <= (2 U + U^2) |mean|
    want = sum(map(Fraction, map(float, data))) / len(data)
    assert_close(mean(data), float(want), rel=3 * U)


def test_mean_cases_that_are_exact():
    assert mean([1e16, 1.0, -1e16, 3.0]) == 1.0  # fsum: the exact sum 4
    assert mean([LIMIT, LIMIT]) == LIMIT
    assert mean((1, 2)) == 1.5 and type(mean([1, 2])) is float
    assert mean(range(1, 101)) == 50.5


@pytest.mark.parametrize("fn", [mean, variance], ids=["mean", "variance"])
def test_mean_and_variance_reject_bad_data_naming_themselves(fn):
    name = fn.__name__
    with pytest.raises(ValueError, match=f"{name}: xs is empty"):
        fn([])
    with pytest.raises(ValueError, match=rf"{name}: xs\[1\] is nan; it must be finite"):
        fn([1.0, math.nan, 2.0])
    with pytest.raises(ValueError, match=rf"{name}: xs\[0\] is -inf; it must be finite"):
        fn([-math.inf, 1.0])
    with pytest.raises(TypeError, match=rf"{name}: xs\[1\] is 'a', not a real number"):
        fn([1.0, "a"])
    with pytest.raises(TypeError, match=rf"{name}: xs\[0\] is True, not a real number"):
        fn([True, 1.0])
    with pytest.raises(TypeError, match=f"{name}: xs must be a list, not NoneType"):
        fn(None)
    data = [3.0, 1.0]
    fn(data)
    assert data == [3.0, 1.0]  # not mutated


def test_variance_checks_ddof():
    with pytest.raises(ValueError, match="variance: needs at least 2 data points with ddof=1; "
                                         "got 1"):
        variance([1.0], ddof=1)
    with pytest.raises(ValueError, match="variance: needs at least 4 data points with ddof=3; "
                                         "got 3"):
        variance([1.0, 2.0, 4.0], ddof=3)
    assert_close(variance([1.0, 2.0, 4.0], ddof=2), float(exact_variance([1.0, 2.0, 4.0], 2)),
                 rel=4 * U)
    with pytest.raises(ValueError, match="variance: ddof must be at least 0, not -1"):
        variance([1.0, 2.0], ddof=-1)
    for bad in (1.0, True, "1"):
        with pytest.raises(TypeError, match="variance: ddof must be an int"):
            variance([1.0, 2.0], ddof=bad)


# ------------------------------------------------------------------ the theory

def exact_product_variance(mx, vx, my, vy) -> Fraction:
    """Var(XY) = E[X^2] E[Y^2] - E[X]^2 E[Y]^2 for independent X, Y, from the definitions."""
    mx, vx, my, vy = map(Fraction, (mx, vx, my, vy))
    return (vx + mx * mx) * (vy + my * my) - (mx * my) ** 2


def test_product_variance_is_exact_for_ints_and_fractions():
    assert product_variance(0, 1, 0, 1) == 1 and type(product_variance(0, 1, 0, 1)) is int
    assert product_variance(2, 3, 5, 7) == exact_product_variance(2, 3, 5, 7) == 21 + 28 + 75
    assert product_variance(Fraction(1, 2), 1, 2, 3) == Fraction(31, 4)
    assert type(product_variance(Fraction(1, 2), 1, 2, 3)) is Fraction
    assert product_variance(Fraction(1, 3), 0, 0, 1) == Fraction(1, 9)  # not float(1/3)^2
    assert product_variance(-3, 0, 0, 0) == 0  # a mean may be negative


@pytest.mark.parametrize("args", [(0.1, 0.2, 0.3, 0.4), (-1.5, 2.0, 1e-3, 7.0),
                                  (LIMIT, 1.0, 1.0, LIMIT)],
                         ids=["decimal fractions", "a negative mean", "at the limit"])
def test_product_variance_of_floats_is_within_a_few_roundings(args):
    # three products of at most three factors and two additions, every term >= 0: <= 5 U
    got = product_variance(*args)
    assert type(got) is float
    assert_close(got, float(exact_product_variance(*args)), rel=5 * U)


@pytest.mark.parametrize("bad, error, message", [
    ("1", TypeError, "is '1', not a real number"),
    (None, TypeError, "is None, not a real number"),
    (True, TypeError, "is True, not a real number"),
    (math.nan, ValueError, "is nan; it must be finite"),
    (-math.inf, ValueError, "is -inf; it must be finite"),
    (2e60, ValueError, r"is 2e\+60; it must be at most 2\^200 \(about 1.6e\+60\) in size"),
], ids=["a str", "None", "a bool", "nan", "-inf", "beyond the limit"])
def test_the_moment_functions_check_every_argument(bad, error, message):
    for position, name in enumerate(("mean_x", "var_x", "mean_y", "var_y")):
        args = [0, 1, 0, 1]
        args[position] = bad
        with pytest.raises(error, match=f"product_variance: {name} {message}"):
            product_variance(*args)
    for name in ("mean_q", "var_q", "mean_k", "var_k"):
        with pytest.raises(error, match=f"dot_product_variance: {name} {message}"):
            dot_product_variance(4, **{name: bad})
    with pytest.raises(error, match=f"scaled_variance: c {message}"):
        scaled_variance(1, bad)
    with pytest.raises(error, match=f"scaled_variance: var {message}"):
        scaled_variance(bad, 1)


def test_a_negative_mean_is_taken_and_only_variances_must_not_be_negative():
    # the rule is a parameter of each argument, not a guess from its name
    assert product_variance(-1, 1, -2, 1) == 1 + 1 + 4
    assert dot_product_variance(2, mean_q=-1, mean_k=-1) == 2 * (1 + 1 + 1)
    assert scaled_variance(1, -2) == 4  # c may be negative: c^2 Var(X)
    assert exact_dot_product_moments(1, [-1, -1]) == (1, 0)


def test_a_negative_variance_is_refused_naming_the_argument():
    for position, name in ((1, "var_x"), (3, "var_y")):
        args = [0, 1, 0, 1]
        args[position] = -0.5
        with pytest.raises(ValueError, match=f"product_variance: {name} is -0.5; a variance "
                                             "cannot be negative"):
            product_variance(*args)
    for name in ("var_q", "var_k"):
        with pytest.raises(ValueError, match=f"dot_product_variance: {name} is -1; a variance"):
            dot_product_variance(4, **{name: -1})
    with pytest.raises(ValueError, match="scaled_variance: var is -1; a variance cannot be"):
        scaled_variance(-1, 2)


def test_dot_product_variance_is_dk_times_the_product_variance():
    assert dot_product_variance(64) == 64 and type(dot_product_variance(64)) is int
    assert dot_product_variance(10, var_q=Fraction(1, 4), var_k=4) == 10
    assert dot_product_variance(4, var_q=2, var_k=3) == 24
    assert dot_product_variance(3, 1, 2, 5, 7) == 3 * exact_product_variance(1, 2, 5, 7)
    assert_close(dot_product_variance(3, 0.5, 2.0, 1.5, 0.1),
                 float(3 * exact_product_variance(0.5, 2.0, 1.5, 0.1)), rel=6 * U)
    assert dot_product_variance(1) == 1 and dot_product_variance(2 ** 53) == 2 ** 53
    assert dot_product_variance(5) == dot_product_variance(5, 0, 1, 0, 1)  # the defaults
    with pytest.raises(ValueError, match="dot_product_variance: d_k must be at least 1"):
        dot_product_variance(0)
    with pytest.raises(ValueError, match=r"^dot_product_variance: d_k must be at most 2\^53, "
                                         "not 9007199254740993$"):
        dot_product_variance(2 ** 53 + 1)
    # the one bound broken, not both (2^53 was once printed in full here)
    with pytest.raises(ValueError, match="^dot_product_variance: d_k must be at least 1, not "
                                         "-4$"):
        dot_product_variance(-4)
    for bad in (64.0, True, "64"):
        with pytest.raises(TypeError, match="dot_product_variance: d_k must be an int"):
            dot_product_variance(bad)


def test_scaled_variance_is_c_squared_times_var():
    assert scaled_variance(64, Fraction(1, 8)) == 1
    assert type(scaled_variance(64, Fraction(1, 8))) is Fraction
    assert scaled_variance(64, 0.125) == 1.0 and type(scaled_variance(64, 0.125)) is float
    assert scaled_variance(3, 2) == 12 and type(scaled_variance(3, 2)) is int
    assert scaled_variance(3, -2) == 12  # c may be negative
    assert scaled_variance(Fraction(1, 3), Fraction(1, 7)) == Fraction(1, 147)
    assert_close(scaled_variance(0.1, 3.0), float(Fraction(0.1) * 9), rel=2 * U)


def exact_scale_squared(name, d_k) -> Fraction:
    """c^2 for each scale choice, exactly where it is rational (ln is taken at 50 digits)."""
    if name == "1/ln(d_k)":
        with localcontext() as ctx:
            ctx.prec = 50
            return Fraction(1 / Decimal(d_k).ln() ** 2)
    return {"1": Fraction(1), "1/sqrt(d_k)": Fraction(1, d_k),
            "1/d_k": Fraction(1, d_k * d_k)}[name]


@pytest.mark.parametrize("d_k", [2, 4, 64, 512, 1000, 2 ** 53], ids=lambda d: f"d_k={d}")
def test_scale_factors_square_to_their_exact_values(d_k):
    # c = 1 / sqrt(d_k) and 1 / ln(d_k) take two roundings each, c^2 one more and d_k c^2
    # another: within 5 U and 6 U of exact, and the float reference itself within U / 2
    for name in SCALE_CHOICES:
        c = scale_factor(name, d_k)
        assert_close(c * c, float(exact_scale_squared(name, d_k)), rel=6 * U)
        assert_close(scaled_variance(dot_product_variance(d_k), c),
                     float(d_k * exact_scale_squared(name, d_k)), rel=7 * U)


def test_scale_factor_values_and_its_limits():
    assert [scale_factor(name, 64) for name in SCALE_CHOICES] == \
        [1.0, 0.125, 1 / 64, 1 / math.log(64)]
    assert [scale_factor(name, 1) for name in SCALE_CHOICES[:3]] == [1.0, 1.0, 1.0]
    assert SCALE_CHOICES == ("1", "1/sqrt(d_k)", "1/d_k", "1/ln(d_k)")
    with pytest.raises(ValueError, match=r"^scale_factor: d_k must be at least 2, not 1$"):
        scale_factor("1/ln(d_k)", 1)
    with pytest.raises(ValueError, match="scale_factor: d_k must be at least 1"):
        scale_factor("1", 0)
    with pytest.raises(ValueError, match=r"scale_factor: the scale must be one of \('1', "
                                         r"'1/sqrt\(d_k\)', '1/d_k', '1/ln\(d_k\)'\), not 'd_k'"):
        scale_factor("d_k", 4)
    with pytest.raises(ValueError, match="not 'none'"):
        scale_factor("none", 4)  # the old name of "1"
    for bad in (None, 1, ["1"]):
        with pytest.raises(TypeError, match="scale_factor: the scale must be one of"):
            scale_factor(bad, 4)
    with pytest.raises(TypeError, match="scale_factor: d_k must be an int"):
        scale_factor("1", "4")


# -------------------------------------------------------------- exact moments

DISTRIBUTIONS = {
    "rademacher": ([-1, 1], None),
    "uniform 0,1,2 (mean 1)": ([0, 1, 2], None),
    "skewed": ([-1, 0, 2], [Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)]),
    "bernoulli 1/3": ([0, 1], [Fraction(2, 3), Fraction(1, 3)]),
    "halves": ([0.5, -1.5], [0.75, 0.25]),
    "four floats": ([0.3, -1.7, 2.25, 1e-3], None),
}


def brute_force_dot_moments(d_k, values, probabilities):
    """Enumerate every outcome of (q, k) and average q . k and (q . k)^2 exactly."""
    if probabilities is None:
        probabilities = [Fraction(1, len(values))] * len(values)
    outcomes = list(zip(map(Fraction, values), map(Fraction, probabilities)))
    first = second = Fraction(0)
    for draw in itertools.product(outcomes, repeat=2 * d_k):
        weight = math.prod(p for _, p in draw)
        s = sum(draw[i][0] * draw[d_k + i][0] for i in range(d_k))
        first += weight * s
        second += weight * s * s
    return first, second - first * first


@pytest.mark.parametrize("d_k", [1, 2, 3], ids=lambda d: f"d_k={d}")
@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_exact_moments_match_brute_force_enumeration(name, d_k):
    values, probabilities = DISTRIBUTIONS[name]
    moments = exact_dot_product_moments(d_k, values, probabilities)
    assert isinstance(moments, Moments)
    assert tuple(moments) == brute_force_dot_moments(d_k, values, probabilities)


@pytest.mark.parametrize("d_k", [1, 5, 32, 10 ** 6, 2 ** 53], ids=lambda d: f"d_k={d}")
@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_exact_moments_equal_the_formula_including_non_zero_means(name, d_k):
    # the d_k products q_i k_i are independent and identically distributed: mean and
    # variance add; one coordinate's Var(q_1 k_1) comes from its definition
    values, probabilities = DISTRIBUTIONS[name]
    p = probabilities or [Fraction(1, len(values))] * len(values)
    mu = sum(Fraction(v) * Fraction(w) for v, w in zip(values, p))
    var = sum((Fraction(v) - mu) ** 2 * Fraction(w) for v, w in zip(values, p))
    assert exact_dot_product_moments(d_k, values, probabilities) == \
        (d_k * mu * mu, d_k * exact_product_variance(mu, var, mu, var))


@pytest.mark.parametrize("d_k", [1, 4, 16, 64, 128], ids=lambda d: f"d_k={d}")
def test_rademacher_components_give_exactly_mean_zero_and_variance_dk(d_k):
    assert exact_dot_product_moments(d_k, [-1, 1]) == (0, d_k)


def test_repeated_values_pool_their_probability():
    # [0, 0, 3] uniform is the distribution P(0) = 2/3, P(3) = 1/3
    assert exact_dot_product_moments(3, [0, 0, 3]) == \
        exact_dot_product_moments(3, [0, 3], [Fraction(2, 3), Fraction(1, 3)])
    assert exact_dot_product_moments(4, [1, 1, -1, -1]) == (0, 4)
    assert exact_dot_product_moments(1, [Fraction(1, 3), 1]) == \
        (Fraction(4, 9), Fraction(25, 81) - Fraction(16, 81))
    assert exact_dot_product_moments(3, [0, 1, 5]) == \
        exact_dot_product_moments(3, [0, 1, 5], [Fraction(1, 3)] * 3)  # uniform by default


class ArrayLike:
    """Not a Sequence, but with tolist(), as a NumPy array is."""

    def __init__(self, values):
        self.values = values

    def tolist(self):
        return list(self.values)


def test_exact_moments_read_an_array_through_tolist():
    assert exact_dot_product_moments(3, ArrayLike([-1, 1])) == (0, 3)
    assert exact_dot_product_moments(2, ArrayLike([0.5, -1.5]), ArrayLike([0.75, 0.25])) == \
        exact_dot_product_moments(2, [0.5, -1.5], [0.75, 0.25])


def test_exact_moments_reject_bad_distributions_one_rule_at_a_time():
    fn = "exact_dot_product_moments"
    # each number as the caller wrote it: the floats' sum 1.1, not the Fraction
    # 9907919180215091/9007199254740992 of their exact binary values
    with pytest.raises(ValueError, match=f"^{fn}: the probabilities sum to 1.1, not 1$"):
        exact_dot_product_moments(2, [0, 1], [0.5, 0.6])
    with pytest.raises(ValueError, match=re.escape(f"{fn}: the probabilities sum to "
                                                   "Fraction(2, 3), not 1")):
        exact_dot_product_moments(2, [0, 1], [Fraction(1, 3), Fraction(1, 3)])
    with pytest.raises(ValueError, match=f"^{fn}: the probabilities sum to 2, not 1$"):
        exact_dot_product_moments(2, [0, 1], [1, 1])
    # 0.3 + 0.7 rounds to 1.0, but their binary values sum to 1 - 2^-54 exactly
    assert Fraction(0.3) + Fraction(0.7) == 1 - Fraction(1, 2 ** 54)
    with pytest.raises(ValueError, match=re.escape(f"{fn}: the probabilities sum to 1 only once "
                                                   "rounded to a float; a float such as 0.1 is "
                                                   "a binary fraction near 1/10")):
        exact_dot_product_moments(2, [0, 1], [0.3, 0.7])
    # ten 0.1s: their exact sum rounds to 1.0, which the message says on every Python,
    # although sum() gives 0.9999999999999999 before 3.12 and 1.0 from 3.12 on
    assert float(sum(map(Fraction, [0.1] * 10))) == 1.0 != sum(map(Fraction, [0.1] * 10))
    with pytest.raises(ValueError, match=f"^{fn}: the probabilities sum to 1 only once "):
        exact_dot_product_moments(2, list(range(10)), [0.1] * 10)
    with pytest.raises(ValueError, match=re.escape(f"{fn}: probabilities[1] is -0.5; "
                                                   "a probability cannot be negative")):
        exact_dot_product_moments(2, [0, 1], [1.5, -0.5])
    with pytest.raises(ValueError, match=re.escape(f"{fn}: probabilities[1] is -1e-300; ")):
        exact_dot_product_moments(2, [0, 1], [1, -1e-300])  # sums to 1 - 1e-300, not 1
    with pytest.raises(ValueError, match=f"^{fn}: probabilities has length 3 but values has "
                                         "length 2; each value needs its probability$"):
        exact_dot_product_moments(2, [0, 1], [0.5, 0.25, 0.25])
    with pytest.raises(ValueError, match=f"^{fn}: probabilities has length 1 but values has "
                                         "length 2; "):
        exact_dot_product_moments(2, [0, 1], [1])  # not "1 entries"
    with pytest.raises(ValueError, match=re.escape(f"{fn}: probabilities[2] is Fraction(-1, 4)")):
        exact_dot_product_moments(2, [0, 1, 2], [Fraction(1, 2), Fraction(3, 4), Fraction(-1, 4)])
    assert exact_dot_product_moments(2, [0, 1], [1, 0]) == (0, 0)  # a zero probability is fine
    with pytest.raises(TypeError, match=re.escape(f"{fn}: values[0] is 'a', not a real number")):
        exact_dot_product_moments(2, ["a", 1])
    with pytest.raises(ValueError, match=re.escape(f"{fn}: values[0] is inf; it must be finite")):
        exact_dot_product_moments(2, [math.inf, 1.0])
    with pytest.raises(ValueError, match=re.escape(f"{fn}: probabilities[1] is nan")):
        exact_dot_product_moments(2, [0, 1], [1.0, math.nan])
    with pytest.raises(ValueError, match=f"{fn}: values is empty"):
        exact_dot_product_moments(2, [])
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        exact_dot_product_moments(0, [0, 1])
    with pytest.raises(TypeError, match=f"{fn}: d_k must be an int"):
        exact_dot_product_moments(2.0, [0, 1])


# ------------------------------------------- correlated q and k: Gaussian polynomials
# k_i = rho q_i + s z_i, s = sqrt(1 - rho^2), q_i and z_i independent N(0, 1).  A polynomial
# in (q_1..q_d, z_1..z_d, s) is a dict {exponents: Fraction}; its expectation multiplies the
# Gaussian moments E[Z^n] = (n - 1)!! (0 for odd n) and replaces s^2 by 1 - rho^2.

def normal_moment(n: int) -> int:
    return 0 if n % 2 else math.prod(range(1, n, 2))


def times(a, b):
    out = {}
    for ea, ca in a.items():
        for eb, cb in b.items():
            e = tuple(x + y for x, y in zip(ea, eb))
            out[e] = out.get(e, 0) + ca * cb
    return out


def correlated_dot(d_k, rho):
    """q . k = sum_i (rho q_i^2 + s q_i z_i) as a polynomial."""
    poly = {}
    for i in range(d_k):
        for coefficient, (a, b, c) in ((rho, (2, 0, 0)), (1, (1, 1, 1))):
            e = [0] * (2 * d_k + 1)
            e[i], e[d_k + i], e[-1] = a, b, c
            poly[tuple(e)] = Fraction(coefficient)
    return poly


def expectation(poly, rho) -> Fraction:
    total = Fraction(0)
    for e, coefficient in poly.items():
        moment = math.prod(normal_moment(n) for n in e[:-1])
        if moment:  # s comes with z, so a surviving term has an even power of s
            total += coefficient * moment * (1 - rho * rho) ** (e[-1] // 2)
    return total


@functools.lru_cache(maxsize=None)
def correlated_raw_moments(d_k, rho):
    """(E[X], E[X^2], E[X^3], E[X^4]) for X = q . k, exactly."""
    x = correlated_dot(d_k, rho)
    powers = [x]
    for _ in range(3):
        powers.append(times(powers[-1], x))
    return tuple(expectation(p, rho) for p in powers)


def correlated_central_moments(d_k, rho):
    """(mean, variance, fourth central moment) of q . k: one coordinate's, exactly, then
    for the sum of d_k independent copies mu_4 = d_k mu_4(1) + 3 d_k (d_k - 1) var(1)^2."""
    m1, m2, m3, m4 = correlated_raw_moments(1, rho)
    var1 = m2 - m1 * m1
    mu4 = m4 - 4 * m1 * m3 + 6 * m1 * m1 * m2 - 3 * m1 ** 4
    return d_k * m1, d_k * var1, d_k * mu4 + 3 * d_k * (d_k - 1) * var1 * var1


RHOS = [pytest.param(r, id=f"rho={r}") for r in
        (0, 1, -1, Fraction(1, 2), Fraction(-3, 5), Fraction(1, 3))]


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("d_k", [1, 2, 3], ids=lambda d: f"d_k={d}")
def test_correlated_moments_equal_the_gaussian_expectations(d_k, rho):
    m1, m2, _, _ = correlated_raw_moments(d_k, Fraction(rho))
    got = correlated_dot_product_moments(d_k, rho)
    assert isinstance(got, Moments)
    assert got == (m1, m2 - m1 * m1)
    assert type(got.variance) is type(rho)  # exact: an int stays an int, a Fraction a Fraction


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("d_k", [64, 2 ** 53], ids=lambda d: f"d_k={d}")
def test_correlated_moments_at_large_dk_add_up_the_coordinates(d_k, rho):
    mean_, var, _ = correlated_central_moments(d_k, Fraction(rho))
    assert correlated_dot_product_moments(d_k, rho) == (mean_, var)


def test_initialisation_is_rho_zero():
    assert correlated_dot_product_moments(64, 0) == (0, 64) == \
        exact_dot_product_moments(64, [-1, 1])  # same mean and variance as any unit components
    assert correlated_dot_product_moments(64, 1) == (64, 128)  # k = q: |q|^2 ~ chi^2(64)


@pytest.mark.parametrize("rho", [0.3, -0.7, 0.999], ids=lambda r: f"rho={r}")
def test_correlated_moments_of_a_float_rho_are_rounded_a_few_times(rho):
    got = correlated_dot_product_moments(48, rho)
    want = correlated_dot_product_moments(48, Fraction(rho))  # exact, checked above
    assert_close(list(got), [float(want.mean), float(want.variance)], rel=4 * U)


def test_correlated_moments_check_their_arguments():
    fn = "correlated_dot_product_moments"
    for bad in (1.5, -1.0000000000000002, Fraction(3, 2)):
        with pytest.raises(ValueError, match=f"{fn}: rho is .*; a correlation lies in "
                                             r"\[-1, 1\]"):
            correlated_dot_product_moments(4, bad)
    with pytest.raises(ValueError, match=f"{fn}: rho is nan; it must be finite"):
        correlated_dot_product_moments(4, math.nan)
    with pytest.raises(TypeError, match=f"{fn}: rho is '0.5', not a real number"):
        correlated_dot_product_moments(4, "0.5")
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        correlated_dot_product_moments(0, 0.5)


@pytest.mark.parametrize("rho", [0.5, -0.8, 1.0], ids=lambda r: f"rho={r}")
def test_correlated_samples_have_the_exact_mean_and_variance(rho):
    # n fresh pairs: the sample mean has standard error sqrt(Var / n); the sample variance
    # sqrt((mu_4 - Var^2) / n), mu_4 the fourth central moment of q . k (exact, above)
    d_k, n = 16, 4000
    xs = sample_dot_products(d_k, n, seed=31, rho=rho)
    mean_, var, mu4 = (float(v) for v in correlated_central_moments(d_k, Fraction(rho)))
    assert (mean_, var) == tuple(correlated_dot_product_moments(d_k, rho))
    assert_close(statistics.fmean(xs), mean_, abs=4 * math.sqrt(var / n))
    assert_close(statistics.pvariance(xs), var, abs=4 * math.sqrt((mu4 - var * var) / n))
    # the same tolerance would catch the independent-components variance d_k
    assert abs(statistics.pvariance(xs) - d_k) > 4 * math.sqrt((mu4 - var * var) / n)


@pytest.mark.parametrize("rho", [0.0, 0.5, -1.0], ids=lambda r: f"rho={r}")
def test_correlated_samples_are_the_documented_construction(rho):
    # k_i = rho q_i + sqrt(1 - rho^2) z_i from random.gauss, q . k correctly rounded
    assert sample_dot_products(5, 6, seed=2, rho=rho) == gauss_dot_products(5, 6, 2, rho=rho)
    assert sample_dot_products(5, 6, seed=2, rho=rho, scale=0.25) == \
        gauss_dot_products(5, 6, 2, scale=0.25, rho=rho)


# ------------------------------------------------------------ correlated logits

@pytest.mark.parametrize("d_k, rho, scale_name, m", [
    (256, 0.5, "1/sqrt(d_k)", 16), (64, 0.25, "1/d_k", 8), (16, -0.5, "1", 4),
    (1024, 0.9, "1/ln(d_k)", 16), (100, 0.0, "1/sqrt(d_k)", 2),
], ids=["the doctest", "muP", "unscaled, negative rho", "1/ln", "rho 0, two keys"])
def test_correlated_logits_against_fifty_digits(d_k, rho, scale_name, m):
    # mean c rho d_k, std c sqrt(d_k (1 + rho^2)), weight e^mean / (e^mean + m - 1)
    got_mean, got_std, got_weight = correlated_logits(d_k, rho, scale_name, m)
    c2 = exact_scale_squared(scale_name, d_k)
    with localcontext() as ctx:
        ctx.prec = 50
        c = Decimal(c2.numerator).sqrt() / Decimal(c2.denominator).sqrt()
        mu = c * Decimal(rho) * d_k
        std = c * (d_k * (1 + Decimal(rho) ** 2)).sqrt()
        weight = mu.exp() / (mu.exp() + m - 1)
    # c carries 2 roundings and mu 2 more (4 U relative), so the weight's exponent moves by
    # 4 U |mu|, and its exp, sum and division add a few U
    assert_close(got_mean, float(mu), rel=4 * U)
    assert_close(got_std, float(std), rel=6 * U)
    assert_close(got_weight, float(weight), rel=(4 * abs(float(mu)) + 8) * U)


def test_correlated_logits_grow_like_sqrt_dk_under_the_paper_scale_and_not_under_mup():
    means = [correlated_logits(d_k, 0.5)[0] for d_k in (16, 64, 256, 1024)]
    assert means == [2.0, 4.0, 8.0, 16.0]  # rho sqrt(d_k): doubles each time d_k quadruples
    assert [correlated_logits(d_k, 0.5, "1/d_k")[0] for d_k in (16, 64, 256, 1024)] == [0.5] * 4
    weights = [correlated_logits(d_k, 0.5)[2] for d_k in (16, 64, 256, 1024)]
    assert weights == sorted(weights) and weights[-1] > 0.9999  # saturation returns
    assert correlated_logits(64, 0.0)[2] == 1 / 16  # rho = 0: every logit at 0


def test_correlated_logits_check_their_arguments_in_their_own_name():
    fn = "correlated_logits"
    with pytest.raises(ValueError, match=f"{fn}: m must be at least 2, not 1"):
        correlated_logits(16, 0.5, m=1)
    with pytest.raises(ValueError, match=f"{fn}: rho is 2.0; a correlation lies in"):
        correlated_logits(16, 2.0)
    with pytest.raises(ValueError, match=f"{fn}: the scale must be one of"):
        correlated_logits(16, 0.5, "sqrt")
    with pytest.raises(TypeError, match=f"{fn}: the scale must be one of"):
        correlated_logits(16, 0.5, None)
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 2"):
        correlated_logits(1, 0.5, "1/ln(d_k)")
    with pytest.raises(TypeError, match=f"{fn}: m must be an int"):
        correlated_logits(16, 0.5, m=4.0)


# ------------------------------------------------------- the standard error of Var

def chi_square_second_moment(d_k) -> Fraction:
    """E[|q|^4] = E[(sum_i q_i^2)^2] for N(0, 1) components, by expanding the square."""
    square = {}
    for i in range(d_k):
        e = [0] * (2 * d_k + 1)
        e[i] = 2
        square[tuple(e)] = Fraction(1)
    return expectation(times(square, square), Fraction(0))


@pytest.mark.parametrize("d_k", [1, 2, 3], ids=lambda d: f"d_k={d}")
def test_fourth_moment_matches_its_conditional_derivation(d_k):
    # variance_standard_error's docstring: E[(q . k)^4] = 3 d_k^2 + 6 d_k for N(0, 1)
    # components.  Expanded over every coordinate; and given q, q . k ~ N(0, |q|^2), so
    # E[(q . k)^4] = 3 E[|q|^4], |q|^2 chi-squared with E[|q|^4] = d_k^2 + 2 d_k
    m1, m2, _, m4 = correlated_raw_moments(d_k, Fraction(0))
    assert (m1, m2, m4) == (0, d_k, 3 * d_k * d_k + 6 * d_k)
    assert m4 == 3 * chi_square_second_moment(d_k) == 3 * (d_k * d_k + 2 * d_k)
    # and the sum rule of the Monte Carlo tolerances, d_k mu_4(1) + 3 d_k (d_k - 1) var(1)^2
    assert correlated_central_moments(d_k, Fraction(0))[2] == m4


@pytest.mark.parametrize("d_k, n", [(1, 1), (1, 2), (64, 1000), (3, 7), (1024, 60),
                                    (2 ** 53, 1)],
                         ids=["d_k=1, n=1", "d_k=1, n=2", "d_k=64, n=1000", "d_k=3, n=7",
                              "d_k=1024, n=60", "d_k=2^53, n=1"])
def test_the_standard_error_is_the_exact_formula_rounded_twice(d_k, n):
    # sqrt((E[(q . k)^4] - d_k^2) / n): the quotient rounded once, then the square root
    _, var, mu4 = correlated_central_moments(d_k, Fraction(0))
    assert variance_standard_error(d_k, n) == math.sqrt(float((mu4 - var * var) / n))


def test_the_standard_error_checks_its_arguments():
    fn = "variance_standard_error"
    with pytest.raises(ValueError, match=f"{fn}: n must be at least 1, not 0"):
        variance_standard_error(4, 0)
    with pytest.raises(TypeError, match=f"{fn}: n must be an int"):
        variance_standard_error(4, 10.0)
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        variance_standard_error(0, 10)


# ------------------------------------------------------------ the median's interval

@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 10, 11, 20, 50, 99, 100, 101, 1000, 2000,
                               10 ** 4], ids=lambda n: f"n={n}")
def test_the_median_interval_is_the_exact_binomial_one(n):
    xs = [float(v) for v in range(1, n + 1)]
    random.Random(n).shuffle(xs)  # the function sorts
    for coverage in (0.5, 0.9, 0.95, 0.99) if n < 10 ** 4 else (0.95,):
        l, covered = exact_interval(n, coverage)
        assert median_interval(xs, coverage) == Median(
            (n + 1) / 2, float(l), float(n + 1 - l), round(float(covered), 4) if n > 1 else 0.0
        ), coverage


def test_the_median_interval_cases_of_the_docstring():
    assert median_interval(range(1, 101)) == Median(50.5, 40.0, 61.0, 0.9648)
    assert median_interval([3.0]) == Median(3.0, 3.0, 3.0, 0.0)
    assert median_interval([2.0, 1.0]) == Median(1.5, 1.0, 2.0, 0.5)
    # five points cannot reach 95%: the widest interval, the whole range, covers 1 - 2/32
    assert median_interval([5.0, 1.0, 4.0, 2.0, 3.0]) == Median(3.0, 1.0, 5.0, 0.9375)


def test_the_median_interval_checks_its_arguments():
    fn = "median_interval"
    for bad in (0.0, 1.0, -0.5, 1.5, 0, 1):
        with pytest.raises(ValueError, match=f"{fn}: coverage is .*; it must lie strictly "
                                             "between 0 and 1"):
            median_interval([1.0, 2.0], bad)
    with pytest.raises(ValueError, match=f"{fn}: coverage is nan; it must be finite"):
        median_interval([1.0, 2.0], math.nan)
    for bad in ("0.9", True, None):
        with pytest.raises(TypeError, match=f"{fn}: coverage is .*, not a real number"):
            median_interval([1.0, 2.0], bad)
    with pytest.raises(ValueError, match=f"{fn}: xs is empty"):
        median_interval([])
    with pytest.raises(ValueError, match=rf"{fn}: xs\[1\] is nan"):
        median_interval([1.0, math.nan])
    data = [3.0, 1.0, 2.0]
    median_interval(data)
    assert data == [3.0, 1.0, 2.0]  # sorted a copy


@pytest.mark.slow
@pytest.mark.parametrize("draw, median", [
    (lambda rng: rng.gauss(0.0, 1.0), 0.0),
    (lambda rng: rng.expovariate(1.0), math.log(2)),
    (lambda rng: math.tan(math.pi * (rng.random() - 0.5)), 0.0),
    (lambda rng: rng.lognormvariate(3.0, 2.0), math.exp(3.0)),
], ids=["normal", "exponential", "Cauchy", "lognormal"])
def test_the_median_interval_covers_the_true_median_whatever_the_distribution(draw, median):
    # R samples of n: the count of intervals holding the true median is Binomial(R, P), P the
    # exact coverage; four standard errors sqrt(P (1 - P) / R)
    n, runs, rng = 25, 4000, random.Random(12)
    _, covered = exact_interval(n, 0.95)
    hits = 0
    for _ in range(runs):
        m = median_interval([draw(rng) for _ in range(n)])
        hits += m.low <= median <= m.high
    p = float(covered)
    assert_close(hits / runs, p, abs=4 * math.sqrt(p * (1 - p) / runs))


@pytest.mark.slow
def test_the_median_interval_of_large_data_does_not_hang():
    # Not a speed target: a guard against a hang, with a margin of about 100.  Sorting
    # 60000 floats takes about 10 ms; the loop over l computes 2 ** n and divides n-bit
    # integers at each of its n / 2 steps.
    xs = [float(v) for v in range(60000)]
    start = time.process_time()
    got = median_interval(xs)
    assert (got.low, got.high) == (29759.0, 30240.0)
    assert time.process_time() - start < 1.0


# ------------------------------------------------------------ a quantile's interval

def exact_quantile(xs, p):
    """The p-quantile of xs, linear between order statistics, in Fractions: the point at
    h = (n - 1) p of the sorted data, counting from 0 (statistics.quantiles' "inclusive")."""
    xs, h = sorted(map(Fraction, xs)), (len(xs) - 1) * Fraction(p)
    j = math.floor(h)
    return xs[j] if j == h else xs[j] + (h - j) * (xs[j + 1] - xs[j])


QUANTILE_LEVELS = [Fraction(1, 100), 0.1, Fraction(1, 4), Fraction(1, 3), 0.5, 0.9,
                   Fraction(99, 100)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10, 20, 59, 200], ids=lambda n: f"n={n}")
@pytest.mark.parametrize("p", QUANTILE_LEVELS, ids=str)
def test_the_quantile_interval_is_the_binomial_one_by_its_definition(n, p):
    # every rank tried on the binomial in Fractions (oracle.quantile_ranks); the data 1..n
    # shuffled, so the ranks are the ends; a float p is the decimal it prints as
    xs = [float(v) for v in range(1, n + 1)]
    random.Random(n).shuffle(xs)  # the function sorts
    level = Fraction(repr(p)) if isinstance(p, float) else p
    for coverage in (0.5, 0.9, 0.95, 0.99):
        l, u, covered = quantile_ranks(n, level, coverage)
        got = quantile_interval(xs, p, coverage)
        assert isinstance(got, Quantile)
        assert got[1:] == (float(l), float(u), round(float(covered), 4)), coverage
        # x_j + (x_(j+1) - x_j) (delta / b): three roundings, none above the value (xs > 0)
        assert_close(got.value, float(exact_quantile(xs, level)), rel=3 * U)


def test_the_quantile_interval_cases_worked_by_hand():
    # n = 3, p = 1/4, coverage 1/2: P(B < 1) = (3/4)^3 = 27/64 > 1/4, so l = 1; P(B >= 2) =
    # 10/64 <= 1/4 < P(B >= 1), so u = 2; P(1 <= B <= 1) = 3 (1/4) (3/4)^2 = 27/64
    assert quantile_interval([3.0, 1.0, 2.0], Fraction(1, 4), 0.5) == Quantile(
        1.5, 1.0, 2.0, round(27 / 64, 4))
    # one point: the interval [x_(1), x_(1)] holds the quantile only when B = 0 and B >= 1
    assert quantile_interval([7.0], 0.3) == Quantile(7.0, 7.0, 7.0, 0.0)
    # five points cannot reach 95% for the 10% quantile: l = 1 (P(B < 1) = 0.9^5), u = 3
    # (P(B >= 3) = 0.00856 <= 0.025 < P(B >= 2)), P(1 <= B <= 2) = 0.32805 + 0.0729 =
    # 0.40095, whose float lies just below the tie: 0.4009
    assert quantile_interval([5.0, 4.0, 3.0, 2.0, 1.0], 0.1) == Quantile(1.4, 1.0, 3.0, 0.4009)
    # the textbook 90% quantile of 100 points: [x_(84), x_(96)]
    assert quantile_interval(range(1, 101), 0.9) == Quantile(90.1, 84.0, 96.0, 0.9557)
    # each tail may equal e exactly: n = 10, p = 1/2, coverage 1002/1024 (a binary float)
    # gives e = 11/1024 = P(B < 2) = P(B >= 9), so l = 2 and u = 9, P(2 <= B <= 8) = 1002/1024
    assert quantile_interval(range(1, 11), 0.5, 1002 / 1024) == Quantile(
        5.5, 2.0, 9.0, round(1002 / 1024, 4))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 20, 101, 2000], ids=lambda n: f"n={n}")
def test_the_quantile_interval_at_one_half_is_the_median_interval(n):
    # the same ranks and coverage; the value (a + b) / 2 there, a + (b - a) / 2 here
    xs = [random.Random(n).gauss(0.0, 1.0) for _ in range(n)]
    for coverage in (0.5, 0.9, 0.95, 0.99):
        median = median_interval(xs, coverage)
        for p in (0.5, Fraction(1, 2)):
            got = quantile_interval(xs, p, coverage)
            assert got[1:] == median[1:]
            assert_close(got.value, median.median, abs=2 * U * max(map(abs, xs)))


@pytest.mark.parametrize("n", [1, 4, 7, 30], ids=lambda n: f"n={n}")
def test_the_coverage_is_the_chance_over_every_pattern_of_draws_below_the_quantile(n):
    # brute force, n small: each of the 2^n patterns of which draws fall below the true
    # p-quantile (each with chance p) orders them so that x_(l) <= quantile <= x_(u) when
    # at least l and at most u - 1 fall below; their chances summed in Fractions
    xs = [float(v) for v in range(n)]
    for p in (Fraction(1, 10), Fraction(1, 2), Fraction(2, 3)):
        got = quantile_interval(xs, p)
        l, u = int(got.low) + 1, int(got.high) + 1  # x_(r) = r - 1
        if n > 12:  # too many patterns: count them by how many fall below instead
            chance = sum(math.comb(n, b) * p ** b * (1 - p) ** (n - b) for b in range(l, u))
        else:
            chance = sum(p ** sum(below) * (1 - p) ** (n - sum(below))
                         for below in itertools.product((0, 1), repeat=n)
                         if l <= sum(below) <= u - 1)
        assert got.coverage == round(float(chance), 4)


@pytest.mark.parametrize("p", [Fraction(1, 10), Fraction(1, 3), Fraction(99, 100)], ids=str)
def test_the_quantile_interval_of_the_mirrored_data_is_mirrored(p):
    # -x puts the p-quantile of x at the 1 - p quantile: the interval's ends swap
    xs = [random.Random(5).expovariate(1.0) for _ in range(300)]
    got, mirrored = quantile_interval(xs, p), quantile_interval([-x for x in xs], 1 - p)
    assert (mirrored.low, mirrored.high, mirrored.coverage) == (-got.high, -got.low,
                                                                 got.coverage)
    # each value three roundings of numbers at most max |x| from the exact one
    assert_close(mirrored.value, -got.value, abs=6 * U * max(xs))


def test_a_float_p_is_the_decimal_it_prints_as():
    xs = [float(v) for v in range(11)]
    for p in (0.1, 0.3, 0.7, 0.99):
        assert quantile_interval(xs, p) == quantile_interval(xs, Fraction(repr(p)))
    assert quantile_interval(xs, 0.3).value == 3.0  # (11 - 1) 3/10 = 3: x[3] exactly
    for m in (4, 10, 100):  # statistics.quantiles' cut points, to a rounding
        cuts = statistics.quantiles(xs, n=m, method="inclusive")
        assert_close([quantile_interval(xs, i / m).value for i in range(1, m)], cuts,
                     rel=3 * U)


def test_the_quantile_interval_checks_its_arguments():
    fn = "quantile_interval"
    for bad in (0.0, 1.0, -0.5, 1.5, 0, 1, Fraction(3, 2), 10 ** 400):
        with pytest.raises(ValueError, match=f"^{fn}: p is .*; it must (lie strictly between 0 "
                                             "and 1|be finite|be at most 2\\^200)"):
            quantile_interval([1.0, 2.0], bad)
    with pytest.raises(ValueError, match=f"^{fn}: p is nan; it must be finite"):
        quantile_interval([1.0, 2.0], math.nan)
    for bad in ("0.5", True, None, [0.5]):
        with pytest.raises(TypeError, match=f"^{fn}: p is .*, not a real number"):
            quantile_interval([1.0, 2.0], bad)
    for bad in (0.0, 1.0, 1.5, math.nan, math.inf):
        with pytest.raises(ValueError, match=f"^{fn}: coverage is "):
            quantile_interval([1.0, 2.0], 0.5, bad)
    with pytest.raises(TypeError, match=f"^{fn}: coverage is '0.9', not a real number"):
        quantile_interval([1.0, 2.0], 0.5, "0.9")
    with pytest.raises(ValueError, match=f"^{fn}: xs is empty"):
        quantile_interval([], 0.5)
    with pytest.raises(ValueError, match=rf"^{fn}: xs\[1\] is nan"):
        quantile_interval([1.0, math.nan], 0.5)
    with pytest.raises(TypeError, match=f"^{fn}: xs must be a list"):
        quantile_interval(3.0, 0.5)
    data = [3.0, 1.0, 2.0]
    quantile_interval(data, 0.25)
    assert data == [3.0, 1.0, 2.0]  # sorted a copy
    # the smallest positive p and one of 400 digits: exact, and quick at small n
    assert quantile_interval(data, 5e-324) == Quantile(1.0 + 5e-324 * 2, 1.0, 1.0, 0.0)
    assert quantile_interval(data, Fraction(1, 10 ** 400)) == Quantile(1.0, 1.0, 1.0, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("draw, quantile", [
    (lambda rng: rng.gauss(0.0, 1.0), statistics.NormalDist().inv_cdf(0.9)),
    (lambda rng: rng.expovariate(1.0), math.log(10)),
    (lambda rng: math.tan(math.pi * (rng.random() - 0.5)), math.tan(math.pi * 0.4)),
], ids=["normal", "exponential", "Cauchy"])
def test_the_quantile_interval_covers_the_true_quantile_as_often_as_it_says(draw, quantile):
    # R samples of n: the count of intervals holding the true 90% quantile is Binomial(R, P),
    # P the exact coverage; four standard errors sqrt(P (1 - P) / R)
    n, runs, rng = 40, 4000, random.Random(13)
    _, _, covered = quantile_ranks(n, Fraction(9, 10), 0.95)
    hits = 0
    for _ in range(runs):
        q = quantile_interval([draw(rng) for _ in range(n)], 0.9)
        hits += q.low <= quantile <= q.high
    p = float(covered)
    assert_close(hits / runs, p, abs=4 * math.sqrt(p * (1 - p) / runs))


@pytest.mark.slow
def test_the_quantile_interval_of_large_data_does_not_hang():
    # Not a speed target: a guard against a hang.  The binomial's sum walks about n p steps
    # on integers of n log2(10) bits: about half a second for n = 60000 and p = 0.1.
    xs = [float(v) for v in range(60000)]
    start = time.process_time()
    got = quantile_interval(xs, 0.1)
    assert (got.low, got.high) == (5855.0, 6144.0)
    assert time.process_time() - start < 10.0
    # u = 6145: the sum stopped at its 6145th term, "under 6,150" (derivations.md section 10)
    assert xs.index(got.high) + 1 == 6145 < 6150


def test_the_cost_figures_of_derivations_section_10():
    # docs/derivations.md section 10, worked by hand there: n = 60,000 and p = 1/10 sum
    # about n p + z sqrt(n p (1 - p)) terms with z just under 2, under 6,150; on ints of at
    # most n log2(10) < 4 n = 240,000 bits; 0.1 is the binary 3602879701896397 / 2^55 just
    # above 1/10, and 0.3333333333333333 the decimal 3333333333333333 / 10^16
    n, p = 60000, Fraction(1, 10)
    z = statistics.NormalDist().inv_cdf(0.975)
    assert 1.95 < z < 2 and n * p + 2 * math.sqrt(n * p * (1 - p)) < 6150
    assert n * p * (1 - p) == 5400 and (10 ** n).bit_length() <= 4 * n == 240_000
    assert Fraction(0.1) == Fraction(3602879701896397, 2 ** 55) > Fraction(1, 10)
    assert Fraction(repr(0.3333333333333333)) == Fraction(3333333333333333, 10 ** 16)


# ------------------------------------------------------------ a top share's error

@pytest.mark.parametrize("n", [2, 3, 10, 99, 100, 101, 300], ids=lambda n: f"n={n}")
def test_the_top_share_and_its_error_are_the_delta_method_in_fractions(n):
    # the influence functions as derived, summed in Fractions (oracle.top_share_error)
    rng = random.Random(n)
    for xs in ([rng.lognormvariate(0.0, 1.5) for _ in range(n)],
               [rng.expovariate(1.0) for _ in range(n)],
               [float(v) for v in range(1, n + 1)]):
        for t in (1, 10, 50):  # the top k = ceil(n t / 100) < n rows
            assert_share_close(stats._top_share(sorted(xs, reverse=True), t), xs, t)


def assert_share_close(got, xs, t):
    """got = (T, se) within its rounding of oracle.top_share_error(xs, t).  T: two correctly
    rounded sums and a division of two quotients, 4 U.  se: each mu IF_T(x_i) = (x - xi) +
    xi s - T x, a few roundings of numbers up to max |x|, at most 12 U max |x| off (T's
    own error included), so sqrt(sum g^2) / (n mu) is 12 U max |x| / (sqrt(n) mu) off, and
    4 U more for its own roundings."""
    T, se = top_share_error(xs, t)
    n, mu = len(xs), statistics.fmean(xs)
    assert_close(got[0], float(T), rel=4 * U)
    assert_close(got[1], se, abs=12 * U * max(xs) / (math.sqrt(n) * mu), rel=4 * U)


def test_equal_values_give_a_share_of_k_over_n_and_no_error():
    # every row the same: the top k carry k / n, whichever rows they are
    T, se = stats._top_share([2.0] * 50, 10)
    assert (T, se) == (0.1, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("draw", [lambda rng: rng.expovariate(1.0),
                                  lambda rng: rng.lognormvariate(0.0, 1.0)],
                         ids=["exponential", "lognormal"])
def test_the_share_error_is_the_spread_of_the_share_over_independent_samples(draw):
    # R independent samples of n draws: the variance s^2 of the R shares against the mean of
    # se^2, the delta method's variance (the mean of se itself is lower, by Jensen's
    # inequality, when se varies: with k = 20 top rows it varies by about 30%).  Tolerance:
    # four standard errors of the difference, sqrt(2 / (R - 1)) s^2 for s^2 (R nearly normal
    # shares) and sd(se^2) / sqrt(R) for the mean of se^2.
    n, runs, rng = 2000, 1000, random.Random(21)
    shares, variances = {1: [], 10: []}, {1: [], 10: []}
    for _ in range(runs):
        ranked = sorted((draw(rng) for _ in range(n)), reverse=True)
        for t in shares:
            T, se = stats._top_share(ranked, t)
            shares[t].append(T)
            variances[t].append(se * se)
    for t in shares:
        s2, v = statistics.variance(shares[t]), statistics.fmean(variances[t])
        tolerance = 4 * math.hypot(math.sqrt(2 / (runs - 1)) * s2,
                                   statistics.stdev(variances[t]) / math.sqrt(runs))
        assert_close(v, s2, abs=tolerance)


def test_the_exponential_share_and_its_error_are_the_asymptotic_ones():
    # X ~ Exp(1): mu = 1, the threshold xi = ln(1/t), T = E[X 1{X > xi}] = t (1 + xi), and
    # E[IF_T^2] = 2t - t^2 (xi^2 + 2 xi + 2), from E[(X - xi)_+^2] = 2t, E[(X - xi)_+ X] =
    # t (2 + xi) and E[X^2] = 2.  One sample of n: T within four of the standard errors
    # sqrt(E[IF_T^2] / n) (that se estimates them is the slow test's above)
    n, rng = 20000, random.Random(4)
    ranked = sorted((rng.expovariate(1.0) for _ in range(n)), reverse=True)
    for t in (1, 10):
        s, xi = t / 100, math.log(100 / t)
        want_se = math.sqrt((2 * s - s * s * (xi * xi + 2 * xi + 2)) / n)
        T, _ = stats._top_share(ranked, t)
        assert_close(T, s * (1 + xi), abs=4 * want_se)


# ------------------------------------------------------------ the samplers

@pytest.mark.parametrize("d_k, n, seed", [(1, 5, 0), (4, 7, 3), (13, 4, 9)],
                         ids=["d_k=1", "d_k=4", "d_k=13"])
def test_samples_are_exact_dot_products_of_gauss_draws(d_k, n, seed):
    assert sample_dot_products(d_k, n, seed=seed) == gauss_dot_products(d_k, n, seed)
    assert sample_dot_products(d_k, n, seed=seed, scale=0.5) == \
        gauss_dot_products(d_k, n, seed, 0.5)


def test_a_generator_is_used_as_it_is_and_left_as_gauss_would_leave_it():
    mine, theirs = random.Random(5), random.Random(5)
    mine.gauss(0.0, 1.0)  # a spare normal now waits in gauss_next
    theirs.gauss(0.0, 1.0)
    assert sample_dot_products(3, 4, seed=mine) == gauss_dot_products(3, 4, theirs)
    assert mine.getstate() == theirs.getstate()
    odd, reference = random.Random(7), random.Random(7)  # 3 * (1 + 2) = 9 draws: odd
    sample_projected_dot_products(1, 1, d_model=3, seed=odd)
    for _ in range(9):
        reference.gauss(0.0, 1.0)
    assert odd.getstate() == reference.getstate()  # the spare kept, as gauss keeps it
    assert odd.gauss(0.0, 1.0) == reference.gauss(0.0, 1.0)


def test_seeds_must_be_explicit_ints_or_generators():
    assert sample_dot_products(4, 3, seed=-7) == sample_dot_products(4, 3, seed=random.Random(-7))
    assert sample_dot_products(2, 1, seed=-2 ** 64) == gauss_dot_products(2, 1, -2 ** 64)
    with pytest.raises(ValueError, match=r"^sample_dot_products: seed must be at least -2\^64, "
                                         "not -18446744073709551617$"):
        sample_dot_products(2, 1, seed=-2 ** 64 - 1)
    assert sample_dot_products(3, 4) == sample_dot_products(3, 4, seed=0, scale=1.0, rho=0.0)
    # one rule, the kind of seed, in one message that names both kinds (it once said
    # "seed (an int or a random.Random) must be an int")
    for bad, text in ((None, "None"), ("7", "'7'"), (1.5, "1.5"), (True, "True")):
        with pytest.raises(TypeError, match=r"^sample_dot_products: seed must be an int or a "
                                            rf"random\.Random, not {re.escape(text)}$"):
            sample_dot_products(4, 3, seed=bad)


@pytest.mark.parametrize("d_k", [1, 4, 16, 64], ids=lambda d: f"d_k={d}")
def test_simulated_variance_is_within_four_standard_errors_of_dk(d_k):
    # With the mean 0 known, (1/n) sum x^2 estimates Var(q . k) = d_k with standard error
    # sqrt((E[(q . k)^4] - d_k^2) / n) = sqrt((2 d_k^2 + 6 d_k) / n)
    n = 3000
    xs = sample_dot_products(d_k, n, seed=2024)
    se = math.sqrt((2 * d_k * d_k + 6 * d_k) / n)
    assert se == variance_standard_error(d_k, n)
    assert_close(math.fsum(x * x for x in xs) / n, d_k, abs=4 * se)
    assert_close(statistics.fmean(xs), 0.0, abs=4 * math.sqrt(d_k / n))  # the mean's SE
    assert abs(math.fsum(x * x for x in xs) / n - d_k / 2) > 4 * se  # a halving would fail


def test_scaled_samples_are_the_raw_ones_times_the_scale():
    raw = sample_dot_products(64, 200, seed=3)
    assert sample_dot_products(64, 200, seed=3, scale=0.125) == [0.125 * x for x in raw]


def test_fresh_pairs_are_uncorrelated():
    # the lag-1 correlation of independent samples has standard error 1 / sqrt(n)
    a = sample_dot_products(8, 2000, seed=7)
    assert a != sample_dot_products(8, 2000, seed=8)
    x, y = a[:-1], a[1:]
    mx, my = statistics.fmean(x), statistics.fmean(y)
    covariance = statistics.fmean([(u - mx) * (v - my) for u, v in zip(x, y)])
    correlation = covariance / (statistics.pstdev(x) * statistics.pstdev(y))
    assert_close(correlation, 0.0, abs=4 / math.sqrt(len(a)))


def test_sampling_arguments_are_checked():
    fn = "sample_dot_products"
    with pytest.raises(ValueError, match=f"{fn}: scale is nan; it must be finite"):
        sample_dot_products(4, 5, scale=math.nan)
    with pytest.raises(ValueError, match=f"{fn}: scale is 1e\\+300; it must be at most 2\\^200"):
        sample_dot_products(4, 5, scale=1e300)
    with pytest.raises(TypeError, match=f"{fn}: scale is '1', not a real number"):
        sample_dot_products(4, 5, scale="1")
    with pytest.raises(ValueError, match=f"{fn}: rho is 1.5; a correlation lies in"):
        sample_dot_products(4, 5, rho=1.5)
    with pytest.raises(ValueError, match=f"{fn}: n must be at least 1, not 0"):
        sample_dot_products(4, 0)
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        sample_dot_products(0, 4)
    with pytest.raises(TypeError, match=f"{fn}: n must be an int"):
        sample_dot_products(4, 2.0)
    assert len(sample_dot_products(1, 1, seed=0)) == 1
    assert all(math.isfinite(x) for x in sample_dot_products(4, 5, scale=LIMIT))


# ------------------------------------------------------------------ layer norm

@pytest.mark.parametrize("x", [
    pytest.param([1.0, 3.0], id="two points"),
    pytest.param([1e16, 1e16 + 2], id="far from 0"),
    pytest.param([LIMIT, -LIMIT], id="at the limit"),
    pytest.param([0.1, 0.2, 0.3], id="decimal fractions"),
    pytest.param([1e-150, 2e-150, 7e-151], id="tiny"),
    pytest.param([LIMIT, LIMIT, -LIMIT, 3.0], id="large and small"),
    pytest.param([2.0 ** 60, 2.0 ** 60 + 512, 1.0], id="2^60 apart"),
    pytest.param([random.Random(s).uniform(-50, 50) for s in range(37)], id="37 uniform"),
    pytest.param([1e9 + random.Random(s).gauss(0, 1) for s in range(20)], id="offset 1e9"),
])
def test_layer_norm_is_within_a_few_ulps_of_the_exact_result(x):
    # Oracle: (x_i - x_bar) / sqrt(mean (x_j - x_bar)^2) at 50 digits from the exact
    # deviations (Fractions).  Tolerance: 4 ulps of the exact value, or of 1 near 0.
    n = len(x)
    mu = sum(map(Fraction, x)) / n
    deviations = [Fraction(v) - mu for v in x]
    with localcontext() as ctx:
        ctx.prec = 50
        r = [Decimal(d.numerator) / Decimal(d.denominator) for d in deviations]
        sigma = (sum(v * v for v in r) / n).sqrt()
        want = [float(v / sigma) for v in r]
    got = layer_norm(x)
    for g, w in zip(got, want):
        assert_close(g, w, abs=4 * math.ulp(max(abs(w), 1.0)))
    assert_close([statistics.fmean(got), statistics.pvariance(got)], [0.0, 1.0], abs=1e-14)


def test_layer_norm_exact_cases():
    assert layer_norm([1e16, 1e16 + 2]) == [-1.0, 1.0]  # one pass in floats would give [0, 2]
    assert layer_norm([LIMIT, -LIMIT]) == [1.0, -1.0]
    assert layer_norm([1.0, 2.0, 3.0]) == [-math.sqrt(1.5), 0.0, math.sqrt(1.5)]


def test_layer_norm_rejects_constant_and_bad_input():
    constant = re.escape(", so the variance is 0 and (x - x_bar) / sigma is undefined")
    with pytest.raises(ValueError, match=f"^layer_norm: every entry of x is 2.0{constant}$"):
        layer_norm([2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=f"^layer_norm: every entry of x is -3.5{constant}$"):
        layer_norm([-3.5])  # one entry: no count to put in the plural ("all 1 entries")
    with pytest.raises(ValueError, match=r"layer_norm: x\[1\] is nan"):
        layer_norm([1.0, math.nan])
    with pytest.raises(ValueError, match="layer_norm: x is empty"):
        layer_norm([])
    with pytest.raises(TypeError, match="layer_norm: x must be a list, not str"):
        layer_norm("12")
    data = [3.0, 1.0]
    layer_norm(data)
    assert data == [3.0, 1.0]  # not mutated


@pytest.mark.parametrize("x", [[1e-160, 3e-160], [1e-170, 3e-170], [5e-324, 1e-323]],
                         ids=["1e-160 apart", "1e-170 apart", "subnormal"])
def test_layer_norm_of_tiny_distinct_data_is_exact(x):
    # layer_norm is scale-invariant, and it scales by its largest entry's power of two
    # (exact) before squaring, so tiny data lose nothing: the exact answer [-1, 1]
    assert layer_norm(x) == [-1.0, 1.0]


# ------------------------------------------------------------ projected queries

@pytest.mark.parametrize("d_k, n, d_model, seed", [(4, 5, 8, 0), (3, 4, 2, 9), (1, 3, 5, 2)],
                         ids=["d_model=8", "d_model=2", "odd d_model"])
def test_projected_samples_are_the_projections_of_gauss_draws(d_k, n, d_model, seed):
    # the two computations round differently: |q . k| errors of a few U sum_c |q_c k_c|
    got = sample_projected_dot_products(d_k, n, d_model=d_model, seed=seed)
    assert_close(got, gauss_projected_dot_products(d_k, n, d_model, seed), abs=1e-13 * d_k)


def test_projected_queries_and_keys_also_have_variance_dk():
    # Given the normalised x, each q_c and k_c is exactly N(0, 1) and independent, so the
    # standard error is the same sqrt((2 d_k^2 + 6 d_k) / n) as for independent components
    d_k, n = 8, 600
    xs = sample_projected_dot_products(d_k, n, d_model=16, seed=11)
    assert_close(math.fsum(x * x for x in xs) / n, d_k, abs=4 * variance_standard_error(d_k, n))


def test_projected_arguments_are_checked():
    fn = "sample_projected_dot_products"
    with pytest.raises(ValueError, match=f"{fn}: d_model must be at least 2, not 1"):
        sample_projected_dot_products(4, 3, d_model=1)
    assert len(sample_projected_dot_products(4, 3, d_model=2)) == 3
    with pytest.raises(ValueError, match=f"{fn}: n must be at least 1"):
        sample_projected_dot_products(4, 0)
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        sample_projected_dot_products(0, 3)
    with pytest.raises(TypeError, match=f"{fn}: seed"):
        sample_projected_dot_products(2, 3, seed=2.5)
    assert sample_projected_dot_products(2, 3) == \
        sample_projected_dot_products(2, 3, d_model=64, seed=0)  # the defaults


# ---------------------------------------------------------- additive attention

@functools.lru_cache(maxsize=None)
def expected_tanh_square(d):
    """E[tanh(u)^2] for u = sqrt(S) Z, S = chi^2_{2d} / d: Simpson's rule in S and in Z."""
    def given(s, steps=400, half_width=12.0):
        h = 2 * half_width / steps
        total = 0.0
        for i in range(steps + 1):
            z = -half_width + i * h
            w = 1 if i in (0, steps) else 4 if i % 2 else 2
            total += w * math.tanh(math.sqrt(s) * z) ** 2 * math.exp(-z * z / 2)
        return total * h / 3 / math.sqrt(2 * math.pi)
    spread = 2 / math.sqrt(d)  # the standard deviation of S
    lo, hi, steps = max(1e-9, 2 - 12 * spread), 2 + 14 * spread, 200
    h = (hi - lo) / steps
    total = 0.0
    for i in range(steps + 1):
        s = lo + i * h
        w = 1 if i in (0, steps) else 4 if i % 2 else 2
        log_density = (d - 1) * math.log(s) - s * d / 2 - math.lgamma(d) - d * math.log(2 / d)
        total += w * math.exp(log_density) * given(s)
    return total * h / 3


@pytest.mark.parametrize("d_a", [4, 64], ids=lambda d: f"d_a={d}")
def test_additive_score_variance_is_sigma_w_squared_d_a_times_e_tanh_squared(d_a):
    # Var(e) = sigma_w^2 d_a E[tanh^2] (units independent given q, k); the estimate's own
    # standard error is sqrt((mean e^4 - mean(e^2)^2) / n); four of them is the tolerance.
    d, n = 16, 2000
    theory = expected_tanh_square(d)
    assert_close(theory, 0.515, abs=0.015)
    got = additive_score_variance(d_a, n, d=d, seed=4)
    assert isinstance(got, ScoreVariance)
    assert_close(got.variance, d_a * theory, abs=4 * got.standard_error)
    assert got.standard_error < 0.05 * got.variance
    unit = additive_score_variance(d_a, n, d=d, sigma_w=d_a ** -0.5, seed=4)
    assert_close(unit.variance, theory, abs=4 * unit.standard_error)
    assert abs(got.variance / 2 - d_a * theory) > 4 * got.standard_error  # catches a halving


def test_additive_scores_are_the_documented_computation():
    # Rebuild the n scores from random.gauss: q and k, the pre-activations, then w.
    d_a, d, n, seed = 3, 2, 6, 1
    rng = random.Random(seed)
    scores = []
    for _ in range(n):
        z = [rng.gauss(0.0, 1.0) for _ in range(2 * d + 2 * d_a)]
        spread = math.sqrt(math.fsum(v * v for v in z[:2 * d]) / d)
        scores.append(math.fsum(w * math.tanh(spread * u) for u, w in
                                zip(z[2 * d:2 * d + d_a], z[2 * d + d_a:])))
    got = additive_score_variance(d_a, n, d=d, seed=seed)
    squares = [e * e for e in scores]
    assert_close(got.variance, statistics.fmean(squares), rel=1e-13)
    spread = statistics.fmean([s * s for s in squares]) - statistics.fmean(squares) ** 2
    assert_close(got.standard_error, math.sqrt(spread / n), rel=1e-12)
    assert additive_score_variance(d_a, n, d=d, sigma_w=2.0, seed=seed) == \
        (4 * got.variance, 4 * got.standard_error)  # the same draws
    assert additive_score_variance(d_a, n, d=d, sigma_w=-2.0, seed=seed) == \
        (4 * got.variance, 4 * got.standard_error)  # w ~ N(0, sigma_w^2): the sign is no matter
    one = additive_score_variance(d_a, 1, d=d, seed=seed)
    assert one == (squares[0], 0.0)


def test_additive_score_variance_checks_its_arguments():
    fn = "additive_score_variance"
    assert additive_score_variance(4, 10, sigma_w=0.0) == (0.0, 0.0)
    with pytest.raises(ValueError, match=f"{fn}: sigma_w is 1e\\+200; it must be at most 2\\^200"):
        additive_score_variance(4, 10, sigma_w=1e200)
    for name in ("d_a", "n", "d"):
        args = dict(d_a=4, n=10, d=3)
        args[name] = 0
        with pytest.raises(ValueError, match=f"{fn}: {name} must be at least 1"):
            additive_score_variance(args["d_a"], args["n"], d=args["d"])
    with pytest.raises(TypeError, match=f"{fn}: sigma_w is '1', not a real number"):
        additive_score_variance(4, 10, sigma_w="1")
    assert additive_score_variance(4, 10) == \
        additive_score_variance(4, 10, d=64, sigma_w=1.0, seed=0)  # the defaults


# ------------------------------------------------------------------ entropy

@pytest.mark.parametrize("x", [
    pytest.param([0.0] * 4, id="uniform"),
    pytest.param([2.0, 1.0, -3.0], id="three logits"),
    pytest.param([1.0, 0.0], id="the doctest"),
    pytest.param([0.0, -30.0], id="nearly one-hot"),
    pytest.param([0.0, -40.0, -41.0], id="p_1 rounds to 1"),
    pytest.param([700.0, 0.0, -700.0], id="spread 1400"),
    pytest.param([0.1 * k for k in range(-50, 50, 3)], id="34 logits"),
])
def test_entropy_against_fifty_digits(x):
    # H = -sum p_i log p_i with log p_i from log_softmax: each term within a few U of its
    # own size, all of one sign, so the sum is within a few U relative; 1e-13 is generous
    assert_close(softmax_entropy(x), decimal_entropy(x), rel=1e-13)


def test_entropy_keeps_the_log_of_a_weight_within_an_ulp_of_one():
    # for [0, -40] p_1 rounds to 1.0 and log(p_1) to 0, losing the term p_1 * 4.2e-18 of a
    # total of 1.7e-16: the naive -sum p log p is 2.4% off
    p = softmax([0.0, -40.0])
    naive = -sum(v * math.log(v) for v in p if v > 0)
    want = decimal_entropy([0.0, -40.0])
    assert abs(naive - want) > 0.02 * want
    assert_close(softmax_entropy([0.0, -40.0]), want, rel=1e-13)


def test_entropy_exact_cases_and_errors():
    assert softmax_entropy([0.0, -math.inf, -math.inf]) == 0.0
    assert softmax_entropy([0.0, 0.0, -math.inf]) == math.log(2)  # masked keys are absent
    assert softmax_entropy([0.0, -1e4]) == 0.0 and softmax_entropy([5.0]) == 0.0
    assert softmax_entropy([8e307, -8e307]) == 0.0  # any finite logit within the range
    # log p_2 = -2e308 is beyond the float range: refused as by log_softmax, in its own name
    with pytest.raises(ValueError, match=r"^softmax_entropy: x\[1\] is -1e\+308, more than the "
                                         "largest float below the max"):
        softmax_entropy([1e308, -1e308])
    with pytest.raises(ValueError, match=r"softmax_entropy: x\[0\] is nan"):
        softmax_entropy([math.nan, 1.0])
    with pytest.raises(ValueError, match=r"softmax_entropy: x\[1\] is inf; it must be finite or "
                                         "-inf$"):
        softmax_entropy([0.0, math.inf])
    with pytest.raises(ValueError, match="softmax_entropy: x is -inf everywhere; at least one "
                                         "logit must be finite"):
        softmax_entropy([-math.inf])
    with pytest.raises(TypeError, match="softmax_entropy: x must be a list, not NoneType"):
        softmax_entropy(None)


# ------------------------------------------------- saturation and the gradient
# Two references.  Row by row: chi_square_rows re-makes the draws of saturation_stats and
# gradient_stats, and explicit_row builds a (Q, K, V, G) with exactly those scores, dP,
# |q|^2 and chi^2(d_k - 1), through which attention_steps, softmax_jacobian, score_gradient
# and attention_backward compute each statistic from its definition.  By distribution:
# random_trials draws q, K, V, G entry by entry with random.gauss, which checks the
# chi-square construction itself (slow).

def mean_and_standard_error(xs):
    return statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))


ROW_CASES = [(16, "1"), (16, "1/sqrt(d_k)"), (64, "1/d_k"), (9, "1/ln(d_k)"), (1, "1"),
             (2, "1/sqrt(d_k)"), (4096, "1")]
ROW_IDS = ["d_k=16 unscaled", "d_k=16 scaled", "d_k=64 muP", "d_k=9 1/ln", "d_k=1",
           "d_k=2", "d_k=4096 unscaled, nearly one-hot"]


@pytest.mark.parametrize("d_k, scale_name", ROW_CASES, ids=ROW_IDS)
def test_saturation_stats_are_the_definitions_on_the_same_rows(d_k, scale_name):
    m, trials, seed = 6, 7, 3
    c = scale_factor(scale_name, d_k)
    values = [row_statistics(*explicit_row(row, c), c)[:3]
              for row in chi_square_rows(d_k, m, D_V, trials, seed)]
    got = saturation_stats(d_k, scale_name, m=m, trials=trials, seed=seed)
    assert isinstance(got, Saturation)
    for (got_mean, got_se), column in zip(got, zip(*values)):
        want_mean, want_se = mean_and_standard_error(column)
        assert_close(got_mean, want_mean, rel=1e-13)
        assert_close(got_se, want_se, rel=1e-9, abs=1e-13 * want_mean)  # se may cancel


@pytest.mark.parametrize("d_k, scale_name", ROW_CASES, ids=ROW_IDS)
def test_gradient_stats_are_the_definitions_on_the_same_rows(d_k, scale_name):
    # with 7 rows the 95% interval of the median is [min, max] (coverage 1 - 2/2^7)
    m, trials, seed = 6, 7, 3
    c = scale_factor(scale_name, d_k)
    values = [row_statistics(*explicit_row(row, c), c)[3:]
              for row in chi_square_rows(d_k, m, D_V, trials, seed)]
    got = gradient_stats(d_k, scale_name, m=m, trials=trials, seed=seed)
    assert isinstance(got, GradientNorms)
    for median, (got_mean, got_se), column in zip(got[:2], got[2:], zip(*values)):
        assert median.coverage == 0.9844
        assert_close([median.median, median.low, median.high],
                     [statistics.median(column), min(column), max(column)], rel=1e-12)
        want_mean, want_se = mean_and_standard_error(column)
        assert_close(got_mean, want_mean, rel=1e-12)
        assert_close(got_se, want_se, rel=1e-9, abs=1e-13 * want_mean)


def inclusive_quantile(xs, percent):
    """The percent-th quantile, linear between order statistics: the point at position
    (n - 1) percent / 100 of the sorted data (from 0), in exact Fractions."""
    xs = sorted(map(Fraction, xs))
    h = Fraction((len(xs) - 1) * percent, 100)
    low = math.floor(h)
    return xs[low] if low == len(xs) - 1 else xs[low] + (h - low) * (xs[low + 1] - xs[low])


def top_share(xs, percent):
    """The share of sum(xs) that the ceil(n percent / 100) largest entries carry, exactly."""
    ranked = sorted(map(Fraction, xs), reverse=True)
    return sum(ranked[:math.ceil(Fraction(len(xs) * percent, 100))]) / sum(ranked)


@pytest.mark.parametrize("trials", [7, 150], ids=["7 rows", "150 rows"])
@pytest.mark.parametrize("d_k, scale_name", ROW_CASES[:5], ids=ROW_IDS[:5])
def test_gradient_spread_is_the_quantiles_and_top_shares_of_the_rows(d_k, scale_name, trials):
    # the same rows as gradient_stats, each norm from the definitions (rows.row_norms); the
    # quantile interpolates linearly between order statistics (statistics.quantiles'
    # "inclusive" method), its interval is [x_(l), x_(u)] from the binomial in Fractions
    # (oracle.quantile_ranks); the share is of the plain sum of the norms over the rows, its
    # error the delta method's in Fractions (oracle.top_share_error)
    m, seed = 6, 3
    c = scale_factor(scale_name, d_k)
    got = gradient_spread(d_k, scale_name, m=m, trials=trials, seed=seed)
    assert isinstance(got, GradientSpread)
    assert (PERCENTILES, TOP_PERCENTS) == ((10, 50, 90, 99), (1, 10))
    for norms, quantiles, shares in zip(row_norms(d_k, c, m, trials, seed),
                                        (got.score_quantiles, got.query_quantiles),
                                        (got.score_top_shares, got.query_top_shares)):
        xs = sorted(norms)
        for p, q in zip(PERCENTILES, quantiles):
            assert isinstance(q, Quantile)
            l, u, covered = quantile_ranks(trials, Fraction(p, 100), 0.95)
            assert_close([q.value, q.low, q.high],
                         [float(inclusive_quantile(norms, p)), xs[l - 1], xs[u - 1]], rel=1e-12)
            assert q.coverage == round(float(covered), 4)
        for t, share in zip(TOP_PERCENTS, shares):
            assert_share_close(share, norms, t)
        assert_close(quantiles[1].value, statistics.median(norms), rel=1e-12)  # the median
    assert got.score_quantiles == tuple(sorted(got.score_quantiles))


def test_gradient_spread_unscaled_at_large_d_k_is_lopsided():
    # the typical (median) row passes almost nothing, while the top 10% of rows carry most of
    # the summed ||dL/dQ||; scaled, the top 10% carry about their own share (uniform: 10%)
    unscaled, scaled = (gradient_spread(1024, name, trials=400) for name in ("1", "1/sqrt(d_k)"))
    assert unscaled.query_quantiles[1].high < 0.01 < 0.3 < scaled.query_quantiles[1].low
    (top_1, se_1), (top_10, se_10) = unscaled.query_top_shares
    assert top_10 - 4 * se_10 > 0.7 and top_1 - 4 * se_1 > 0.05  # four standard errors
    (top_1, se_1), (top_10, se_10) = scaled.query_top_shares
    assert top_10 + 4 * se_10 < 0.3 and 0.01 < top_1 - 4 * se_1 < top_1 + 4 * se_1 < 0.1


def test_gradient_spread_refuses_rows_whose_gradients_are_all_zero():
    # d_k = 2^40 unscaled: every logit gap is in the millions, the weights exactly one-hot
    with pytest.raises(ValueError, match="^gradient_spread: every row's weights are exactly "
                                         "one-hot at this d_k and scale, so every gradient is 0"):
        gradient_spread(2 ** 40, "1", m=2, trials=2)
    assert gradient_stats(2 ** 40, "1", m=2, trials=2).score_grad.median == 0.0  # no share
    # d_k = 10^6 unscaled: most rows exactly one-hot (a 0 gradient), a few not: each row
    # still has a share of a positive sum, so nothing is refused
    some = gradient_spread(10 ** 6, "1", trials=40)
    assert some.score_quantiles[1].value == 0.0 < some.score_quantiles[2].value


class Index:
    """An integer through operator.index only, as a NumPy integer offers it."""
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


@pytest.mark.parametrize("function", [saturation_stats, gradient_stats, gradient_spread],
                         ids=lambda f: f.__name__)
def test_the_rows_take_d_k_through_operator_index(function):
    assert function(Index(16), trials=4) == function(16, trials=4)


# ------------------------------------------------------------ formatting

def decimal_two_digits(v, se):
    """(v, se) as texts, se rounded to two significant digits (decimal, half-even as
    format() rounds a float's exact value) and v to the same decimal place."""
    with localcontext() as ctx:
        ctx.prec = 2
        places = max(0, 1 - (+Decimal(se)).adjusted())
    return f"{v:.{places}f}", f"{se:.{places}f}"


def test_format_estimate_gives_the_error_two_digits_and_the_value_its_place():
    assert format_estimate(1026.2, 45.9) == ("1026", "46")
    assert format_estimate(15.11, 0.78) == ("15.11", "0.78")
    assert format_estimate(64.0, 2.93) == ("64.0", "2.9")
    assert format_estimate(0.0, 0.0996) == ("0.00", "0.10")  # se rounds up to 0.10
    assert format_estimate(-3, 1) == ("-3.0", "1.0")
    assert format_estimate(1e300, 3e299) == (f"{1e300:.0f}", f"{3e299:.0f}")
    rng = random.Random(6)
    for _ in range(2000):
        v, se = rng.gauss(0, 10) * 10 ** rng.randint(-6, 6), 10 ** rng.uniform(-8, 6)
        assert format_estimate(v, se) == decimal_two_digits(v, se), (v, se)


@pytest.mark.parametrize("args, error, message", [
    ((1.0, 0.0), ValueError, "format_estimate: se is 0.0; a standard error must be positive"),
    ((1.0, -0.5), ValueError, "format_estimate: se is -0.5; a standard error must be positive"),
    ((1.0, math.nan), ValueError, "format_estimate: se is nan; it must be finite"),
    ((math.inf, 1.0), ValueError, "format_estimate: value is inf; it must be finite"),
    (("1", 1.0), TypeError, "format_estimate: value is '1', not a real number"),
    ((1.0, None), TypeError, "format_estimate: se is None, not a real number"),
], ids=["se 0", "se negative", "se nan", "value inf", "value a str", "se None"])
def test_format_estimate_checks_its_arguments(args, error, message):
    with pytest.raises(error, match="^" + re.escape(message)):
        format_estimate(*args)


def test_format_interval_gives_the_median_and_its_interval_to_two_digits():
    assert format_interval(Median(0.4713, 0.4512, 0.5, 0.95)) == "0.47 [0.45, 0.5]"
    assert format_interval(Median(2.5e-05, 1.1e-05, 4.8e-05, 0.95)) == "2.5e-05 [1.1e-05, 4.8e-05]"
    assert format_interval(median_interval([3.0, 1.0, 2.0])) == "2 [1, 3]"
    assert format_interval(Quantile(1.3e-13, 2.96e-14, 6.1e-13, 0.95)) == \
        "1.3e-13 [3e-14, 6.1e-13]"
    with pytest.raises(TypeError, match="^format_interval: interval must be a Median or a "
                                        r"Quantile \(from median_interval or quantile_interval\)"):
        format_interval((0.5, 0.4, 0.6, 0.95))
    with pytest.raises(ValueError, match=r"^format_interval: interval\.low is nan"):
        format_interval(Median(0.5, math.nan, 0.6, 0.95))
    with pytest.raises(ValueError, match=r"^format_interval: interval\.value is inf"):
        format_interval(Quantile(math.inf, 0.4, 0.6, 0.95))


def test_format_report_is_the_text_of_a_report_and_checks_it(capsys):
    r = report(seed=2, samples=8, trials=3, keys=4, dks=(4, 8))
    text = format_report(r)
    assert not text.endswith("\n") and text.startswith("The sqrt(d_k) of softmax")
    stats.main(["--seed", "2", "--samples", "8", "--trials", "3", "--keys", "4", "--dk", "4,8"])
    assert capsys.readouterr().out == text + "\n"  # python3 stats.py prints it, once
    for bad in (None, tuple(r), "report"):
        with pytest.raises(TypeError, match="^format_report: r must be a Report"):
            format_report(bad)


@pytest.mark.parametrize("x", [
    pytest.param([0.0, 0.0, 0.0, 0.0], id="uniform"),
    pytest.param([0.0], id="one key"),
    pytest.param([1.0, 1.0, -3.0], id="a tie at the top"),
    pytest.param([0.0, -40.0, -41.0, -60.0], id="p_1 rounds to 1"),
    pytest.param([0.0] + [-30.0] * 15, id="15 tiny weights"),
    pytest.param([0.0, -745.0, -20.0], id="a subnormal weight"),
    pytest.param([0.0, -800.0], id="exactly one-hot"),
    pytest.param([2.0, 1.0, 0.0, -1.0], id="the documents' example"),
])
def test_the_jacobian_norm_is_the_frobenius_norm_of_softmax_jacobian(x):
    # Private: hand-picked p reach no public function (saturation_stats covers random rows,
    # nearly one-hot ones included, above).  Each entry of softmax_jacobian is within a few
    # U of its own size, so its Frobenius norm is within a few U; so must the O(m) form be.
    want = math.sqrt(math.fsum(v * v for row in softmax_jacobian(x) for v in row))
    assert_close(stats._jacobian_norm(softmax(x)), want, rel=8 * U)
    with localcontext() as ctx:
        ctx.prec = 50
        p = decimal_softmax(x)
        exact_norm = sum((p_i * ((i == j) - p_j)) ** 2 for i, p_i in enumerate(p)
                         for j, p_j in enumerate(p)).sqrt()
    assert_close(want, float(exact_norm), rel=8 * U)


@pytest.mark.slow
@pytest.mark.parametrize("d_k, scale_name", [(16, "1"), (64, "1"), (64, "1/sqrt(d_k)"),
                                             (9, "1/ln(d_k)")],
                         ids=["d_k=16 unscaled", "d_k=64 unscaled", "d_k=64 scaled",
                              "d_k=9 1/ln"])
def test_the_chi_square_rows_have_the_distribution_of_real_draws(d_k, scale_name):
    # The brute force draws every entry of q, K, V and G and goes through attention_backward.
    # Means: the two estimates are independent, so their difference has standard error
    # sqrt(se_1^2 + se_2^2).  Medians: if the distributions agree, the fraction U of brute-
    # force rows below the library's median M has E[U] = F(M), F(M) ~ 1/2 with variance
    # about 1/(4 n_1), and U given M varies by about 1/(4 n_2): |U - 1/2| <= 4 sqrt(1/(4 n_1)
    # + 1/(4 n_2)).  Four standard errors each.
    n_1, n_2, m = 4000, 1500, 16
    c = scale_factor(scale_name, d_k)
    brute = list(zip(*[row_statistics(Q, K, V, G, c)
                       for Q, K, V, G in random_trials(d_k, m, D_V, n_2, seed=91)]))
    sat = saturation_stats(d_k, scale_name, m=m, trials=n_1, seed=19)
    grad = gradient_stats(d_k, scale_name, m=m, trials=n_1, seed=19)
    for (got, se), column in zip(list(sat) + list(grad[2:]), brute[:3] + brute[3:]):
        want, want_se = mean_and_standard_error(column)
        assert_close(got, want, abs=4 * math.hypot(se, want_se))
    for median, column in zip(grad[:2], brute[3:]):
        below = sum(v < median.median for v in column) / n_2
        assert_close(below, 0.5, abs=4 * math.sqrt(1 / (4 * n_1) + 1 / (4 * n_2)))


@pytest.fixture(scope="module")
def tables():
    """Saturation and gradients for d_k = 16, 128 and 1024, unscaled and scaled, 500 rows."""
    return {(d_k, name): (saturation_stats(d_k, name, trials=500, seed=d_k),
                          gradient_stats(d_k, name, trials=500, seed=d_k))
            for d_k in (16, 128, 1024) for name in ("1", "1/sqrt(d_k)")}


def apart(a, b):
    """a - b in standard errors of the difference, for two (mean, se) estimates."""
    return (a[0] - b[0]) / math.hypot(a[1], b[1])


def test_unscaled_softmax_saturates_as_dk_grows(tables):
    s16, s128, s1024 = (tables[d, "1"][0] for d in (16, 128, 1024))
    assert apart(s128.max_weight, s16.max_weight) > 4 and apart(s1024.max_weight,
                                                                s128.max_weight) > 4
    assert apart(s16.entropy, s128.entropy) > 4 and apart(s128.entropy, s1024.entropy) > 4
    assert apart(s16.jacobian_norm, s128.jacobian_norm) > 4
    assert apart(s128.jacobian_norm, s1024.jacobian_norm) > 4
    assert s1024.max_weight[0] > 0.9  # close to one-hot


def test_scaled_softmax_stays_far_from_one_hot_at_every_dk(tables):
    # uniform weights over 16 keys: max p = 1/16, H = ln 16 = 2.77, ||J||_F = sqrt(15)/16 = 0.24
    for d_k in (16, 128, 1024):
        s = tables[d_k, "1/sqrt(d_k)"][0]
        assert 0.15 < s.max_weight[0] < 0.35 and 2.1 < s.entropy[0] < math.log(16)
        assert 0.25 < s.jacobian_norm[0] < 0.35
    a, b = (tables[d_k, "1/sqrt(d_k)"][0] for d_k in (128, 1024))
    for (mean_a, se_a), (mean_b, se_b) in zip(a, b):  # |q| / sqrt(d_k) is near 1 at both
        assert_close(mean_a, mean_b, abs=4 * math.hypot(se_a, se_b))


def test_unscaled_gradient_vanishes_and_scaling_restores_it(tables):
    # the 95% intervals of the medians are a factor 4 and 100 apart
    g16, g128, g1024 = (tables[d, "1"][1] for d in (16, 128, 1024))
    assert g16.score_grad.low > 4 * g128.score_grad.high
    assert g128.score_grad.low > 100 * g1024.score_grad.high
    assert g16.query_grad.low > 50 * g1024.query_grad.high  # dQ collapses too
    assert apart(g16.score_grad_mean, g1024.score_grad_mean) > 4  # the mean falls, though less
    for d_k in (16, 128, 1024):
        scaled = tables[d_k, "1/sqrt(d_k)"][1]
        assert 0.5 < scaled.score_grad.low < scaled.score_grad.high < 1.0  # level
        assert 0.5 < scaled.query_grad.low < scaled.query_grad.high < 1.0


def test_the_statistics_check_their_arguments_in_their_own_name():
    for fn in (saturation_stats, gradient_stats, gradient_spread):
        name = fn.__name__
        with pytest.raises(ValueError, match=f"{name}: the scale must be one of"):
            fn(16, "sqrt")
        with pytest.raises(TypeError, match=f"{name}: the scale must be one of"):
            fn(16, None)
        with pytest.raises(ValueError, match=f"{name}: m must be at least 2, not 1"):
            fn(16, m=1)
        with pytest.raises(ValueError, match=f"{name}: trials must be at least 2, not 1"):
            fn(16, trials=1)
        with pytest.raises(ValueError, match=f"{name}: d_k must be at least 2"):
            fn(1, "1/ln(d_k)")
        with pytest.raises(ValueError, match=f"{name}: d_k must be at least 1"):
            fn(0)
        with pytest.raises(TypeError, match=f"{name}: seed"):
            fn(16, seed=None)


def test_the_documented_defaults():
    # 2000 rows: the defaults of the report too; read from the signatures, not rerun
    for fn in (saturation_stats, gradient_stats, gradient_spread):
        defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()}
        assert defaults == {"d_k": inspect.Parameter.empty, "scale_name": "1/sqrt(d_k)",
                            "m": 16, "trials": 2000, "seed": 0}
    assert saturation_stats(16, trials=5, seed=random.Random(4)) == \
        saturation_stats(16, trials=5, seed=4)


@pytest.mark.skipif(numpy is None, reason="NumPy is not installed")
def test_numpy_integers_and_arrays_are_read_as_ints_and_lists():
    # arrays through tolist(), integers through operator.index: the same results as lists
    # and ints (a NumPy float is a float, so exact int arithmetic gives way to floats)
    assert dot_product_variance(numpy.int64(64)) == 64
    assert type(dot_product_variance(numpy.int64(64))) is int
    assert scale_factor("1/sqrt(d_k)", numpy.int32(64)) == 0.125
    assert variance([1.0, 2.0, 4.0], ddof=numpy.int64(1)) == variance([1.0, 2.0, 4.0], ddof=1)
    assert mean(numpy.array([1.0, 2.0])) == 1.5
    assert median_interval(numpy.arange(1.0, 101.0)) == median_interval(range(1, 101))
    assert sample_dot_products(4, 3, seed=numpy.int64(7)) == sample_dot_products(4, 3, seed=7)
    assert product_variance(numpy.int64(2), 3, 5, 7) == 124
    assert correlated_dot_product_moments(64, numpy.float64(0.5)) == (32.0, 80.0)
    assert exact_dot_product_moments(numpy.int64(3), numpy.array([-1, 1])) == (0, 3)
    assert exact_dot_product_moments(2, numpy.array([0.5, -1.5]), numpy.array([0.75, 0.25])) == \
        exact_dot_product_moments(2, [0.5, -1.5], [0.75, 0.25])
    assert saturation_stats(numpy.int64(16), m=numpy.int64(4), trials=numpy.int64(3)) == \
        saturation_stats(16, m=4, trials=3)
    assert softmax_entropy(numpy.zeros(4)) == softmax_entropy([0.0] * 4)


# ------------------------------------------------ found by mutation testing (tools/mutate.py)

@pytest.mark.parametrize("n, l", [(4, 2), (5, 2), (10, 3), (20, 6)],
                         ids=["n=4, l=2", "n=5, l=2", "n=10, l=3", "n=20, l=6"])
def test_a_coverage_met_exactly_keeps_the_narrower_interval(n, l):
    # P(l <= B <= n - l) = sum_{j=l}^{n-l} C(n, j) / 2^n, asked for as the coverage itself (a
    # float that equals it exactly): "P >= coverage" already holds at l, so l is the answer
    covered = Fraction(sum(math.comb(n, j) for j in range(l, n - l + 1)), 2 ** n)
    coverage = float(covered)
    assert Fraction(coverage) == covered  # exact: no rounding decides the case
    xs = [float(v) for v in range(n, 0, -1)]
    assert median_interval(xs, coverage) == \
        Median((n + 1) / 2, float(l), float(n + 1 - l), round(coverage, 4))
    assert exact_interval(n, coverage) == (l, covered)  # the oracle agrees


@pytest.mark.parametrize("x", [[0.0, 1e-170], [0.0, 5e-324], [1e-300, LIMIT]],
                         ids=["zero beside 1e-170", "zero beside the smallest subnormal",
                              "1e-300 beside the limit 2^200"])
def test_layer_norm_scales_by_its_largest_entry(x):
    # Two distinct points normalise to exactly [-1, 1] (scale-invariance; after scaling by a
    # power of 2 every step is exact, and sqrt(fl(d^2)) = |d|).  The power of 2 comes from
    # the largest |x_i|: from the smallest, the squares of 1e-170 would underflow to 0, and
    # 2^200 scaled up by 2^996 would overflow.
    assert layer_norm(x) == [-1.0, 1.0]


@pytest.mark.skipif(numpy is None, reason="NumPy is not installed")
def test_a_numpy_float_gives_a_python_float():
    # only ints and Fractions stay exact; any other real number becomes a float first
    assert product_variance(numpy.float64(0.5), 2, 3, 4) == 0.5 * 0.5 * 4 + 2 * 4 + 9 * 2
    assert type(product_variance(numpy.float64(0.5), 2, 3, 4)) is float
    assert type(dot_product_variance(4, var_q=numpy.float64(2.0))) is float
    assert type(scaled_variance(numpy.float64(64.0), numpy.float64(0.125))) is float


def test_additive_score_variance_defaults_are_the_documented_ones():
    # read from the signature (a default run draws 1000 scores of d = 64)
    defaults = {name: p.default for name, p in
                inspect.signature(additive_score_variance).parameters.items()}
    assert defaults == {"d_a": inspect.Parameter.empty, "n": 1000, "d": 64, "sigma_w": 1.0,
                        "seed": 0}
