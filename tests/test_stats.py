"""Tests for stats.py's functions: mean and variance against the exact stdlib `statistics`
and Fractions, exact moments against brute-force enumeration and the convolution, Monte
Carlo within standard-error tolerances, the sampling against random.gauss itself, and
every error the boundary raises.  The report and the command line: tests/test_report.py."""

import decimal
import functools
import itertools
import math
import random
import re
import statistics
import time
from fractions import Fraction

import pytest

import stats
from oracle import U, decimal_softmax
from stats import (SCALE_CHOICES, GradientNorms, Moments, Saturation, ScoreVariance, Trial,
                   additive_score_variance, dot_product_fourth_moment, dot_product_variance,
                   exact_dot_product_moments, gradient_stats, layer_norm, mean, product_variance,
                   random_trials, sample_dot_products, sample_projected_dot_products,
                   saturation_stats, scale_factor, scaled_variance, softmax_entropy, variance,
                   variance_standard_error)

try:
    import numpy
except ImportError:  # the NumPy checks are skipped without it
    numpy = None


def ulps(a: float, b: float) -> float:
    """|a - b| in units of the last place of b."""
    return abs(a - b) / math.ulp(b) if b else abs(a) / 5e-324


# ------------------------------------------------------------------- the API

def test_all_equals_the_docstring_list_and_every_name_exists():
    listed = re.search(r"Public API \(`__all__`\):\n(.*?)\n\n>>>", stats.__doc__, re.S).group(1)
    names = set(re.findall(r"(?:^|\s|,\s*)([A-Za-z_][A-Za-z0-9_]*)(?=\(|,|\s|$)",
                           re.sub(r"\(.*?\)", "()", listed)))
    assert set(stats.__all__) <= names  # every public name is in the docstring
    documented = {n for n in names if hasattr(stats, n) and not n.startswith("_")}
    assert documented == set(stats.__all__)
    assert len(stats.__all__) == len(set(stats.__all__)) == 24


def test_report_plumbing_and_the_documents_data_are_private():
    for name in ("bar_chart", "saturation_of", "gradients_of", "DOCUMENT_EXAMPLES",
                 "agrees_with_quote", "worked_examples_table", "spread_table", "as_reals"):
        assert not hasattr(stats, name), name


# -------------------------------------------------------------- mean, variance

def hostile_data():
    rng = random.Random(5)
    yield "offset 1e9", [1e9 + rng.gauss(0, 1) for _ in range(200)]
    yield "offset -1e12, spread 1e-3", [-1e12 + rng.gauss(0, 1e-3) for _ in range(100)]
    yield "huge spread", [rng.gauss(0, 1e150) for _ in range(50)]
    yield "tiny values", [rng.gauss(0, 1e-150) for _ in range(50)]
    yield "integers", [rng.randint(-10**6, 10**6) for _ in range(99)]
    yield "two points", [0.1, 0.3]
    yield "constant", [7.25] * 17
    yield "near the float maximum", [1.7e308 * (2 * rng.random() - 1) for _ in range(20)]
    yield "subnormal", [rng.randint(1, 10**6) * 5e-324 for _ in range(20)]


def naive_one_pass_variance(xs):
    """E[X^2] - E[X]^2: the textbook identity, evaluated in floats (the sums even exact)."""
    n = len(xs)
    return math.fsum(x * x for x in xs) / n - (math.fsum(xs) / n) ** 2


def exact_variance(data, ddof=0):
    n = len(data)
    mu = sum(map(Fraction, data)) / n
    return sum((Fraction(x) - mu) ** 2 for x in data) / (n - ddof)


@pytest.mark.parametrize("name, data", list(hostile_data()), ids=[n for n, _ in hostile_data()])
@pytest.mark.parametrize("ddof", [0, 1])
def test_variance_agrees_with_the_exact_value(name, data, ddof):
    # The two-pass algorithm with correction has relative error <= 4 U + n kappa^2 U^2,
    # where kappa^2 = 1 + mean^2 / var is the condition number of the data (Chan, Golub
    # and LeVeque); with fsum for both sums the first-order term is a few U.
    exact = exact_variance(data, ddof)
    if exact > 2 ** 1024:  # beyond the float range: refused
        with pytest.raises(ValueError, match="variance: the result, about 2"):
            variance(data, ddof=ddof)
        return
    got = variance(data, ddof=ddof)
    if exact == 0:
        assert got == 0.0
        return
    kappa2 = 1 + (sum(map(Fraction, data)) / len(data)) ** 2 / exact_variance(data)
    bound = (4 * U + len(data) * float(kappa2) * U * U) * float(exact)
    assert abs(Fraction(got) - exact) <= max(bound, 5e-324), (got, float(exact))


def test_variance_matches_the_statistics_module():
    data = dict(hostile_data())["offset 1e9"]
    assert abs(variance(data) - statistics.pvariance(data)) <= 4 * U * statistics.pvariance(data)
    assert abs(variance(data, 1) - statistics.variance(data)) <= 4 * U * statistics.variance(data)


def test_the_correction_term_fixes_the_rounding_of_the_mean():
    # x_bar = fsum / n is rounded; (sum_i (x_i - x_bar))^2 / n removes its error.  Here the
    # variance with the correction is the exact one rounded once; without it, it is not.
    data = [1000000000.9, 1000000000.8, 1000000000.2, 1000000000.5]
    n = len(data)
    x_bar = math.fsum(data) / n
    without = math.fsum((x - x_bar) ** 2 for x in data) / n
    assert variance(data) == float(exact_variance(data)) == 0.07499998211860781 != without


def test_the_one_pass_formula_fails_where_two_passes_do_not():
    data = dict(hostile_data())["offset 1e9"]
    exact = statistics.pvariance(data)  # about 1
    assert abs(naive_one_pass_variance(data) - exact) > 0.1 * exact  # catastrophic cancellation
    assert abs(variance(data) - exact) <= 1e-12 * exact


def test_variance_of_large_and_tiny_data_is_right_or_refused():
    assert variance([1e154, -1e154]) == float(exact_variance([1e154, -1e154]))  # no overflow
    assert variance([3e-160, 1e-160]) == float(exact_variance([3e-160, 1e-160]))  # subnormal
    assert variance([2.0, 4.0], ddof=1) == 2.0 and variance([2.0, 4.0]) == 1.0
    assert variance([1.5]) == 0.0  # one point, ddof=0
    for data in ([1e308, 3.0, 2.0], [1.7e308, -1.7e308]):
        with pytest.raises(ValueError, match=r"variance: the result, about 2\^(1\d\d\d|20\d\d), "
                                             r"is beyond the float range"):
            variance(data)
    assert variance([1.3e154, -1.3e154]) == float(exact_variance([1.3e154, -1.3e154]))
    with pytest.raises(ValueError, match=r"about 2\^1025,"):
        variance([1.4e154, -1.4e154])  # 1.96e308: just beyond


def test_mean_is_the_exact_average_rounded_once():
    rng = random.Random(8)
    for data in ([1e16, 1.0, -1e16, 3.0], [1e308, 1e308], [1e308, -1e308, 5.0],
                 [5e-324, 5e-324, 5e-324], [0.1, 0.2, 0.3],
                 [rng.uniform(-1e300, 1e300) for _ in range(30)] + [1e-300]):
        assert mean(data) == float(sum(map(Fraction, data)) / len(data)), data
    assert mean([1e308, 1e308]) == 1e308
    assert mean([1e16, 1.0, -1e16, 3.0]) == 1.0  # a plain left-to-right sum gives 0.75
    assert mean([Fraction(1, 3)] * 3) == 1 / 3
    assert mean((1, 2)) == 1.5 and isinstance(mean([1, 2]), float)


def test_mean_and_variance_reject_bad_data_naming_themselves():
    for fn in (mean, variance):
        name = fn.__name__
        with pytest.raises(ValueError, match=f"{name}: xs is empty"):
            fn([])
        with pytest.raises(ValueError, match=rf"{name}: xs\[1\] is nan; entries must be finite"):
            fn([1.0, math.nan, 2.0])
        with pytest.raises(ValueError, match=rf"{name}: xs\[0\] is -inf"):
            fn([-math.inf, 1.0])
        with pytest.raises(TypeError, match=rf"{name}: xs\[1\] is 'a'"):
            fn([1.0, "a"])
        with pytest.raises(TypeError, match=rf"{name}: xs\[0\] is True"):
            fn([True, 1.0])
        with pytest.raises(TypeError, match=f"{name}: xs must be a list or tuple"):
            fn(None)


def test_variance_checks_ddof():
    with pytest.raises(ValueError, match="variance: requires at least 2 data points with ddof=1; "
                                         "got 1"):
        variance([1.0], ddof=1)
    with pytest.raises(ValueError, match="variance: requires at least 4 data points with ddof=3; "
                                         "got 3"):
        variance([1.0, 2.0, 4.0], ddof=3)
    assert variance([1.0, 2.0, 4.0], ddof=2) == float(exact_variance([1.0, 2.0, 4.0], 2))
    with pytest.raises(ValueError, match="variance: ddof must be at least 0, not -1"):
        variance([1.0, 2.0], ddof=-1)
    with pytest.raises(TypeError, match="variance: ddof must be an int"):
        variance([1.0, 2.0], ddof=1.0)
    with pytest.raises(TypeError, match="variance: ddof must be an int"):
        variance([1.0, 2.0], ddof=True)


# ------------------------------------------------------------------ the theory

def exact_product_variance(mx, vx, my, vy):
    mx, vx, my, vy = map(Fraction, (mx, vx, my, vy))
    return vx * vy + mx * mx * vy + my * my * vx


def test_product_variance_is_var_x_var_y_plus_the_mean_terms():
    assert product_variance(0, 1, 0, 1) == 1 and type(product_variance(0, 1, 0, 1)) is int
    assert product_variance(Fraction(1), Fraction(2), Fraction(3), Fraction(5)) == 10 + 5 + 18
    assert product_variance(Fraction(1, 2), 1, 2, 3) == Fraction(31, 4)
    assert product_variance(2, 3, 5, 7) == 21 + 28 + 75  # each term distinct
    args = (0.1, 0.2, 0.3, 0.4)
    got = product_variance(*args)
    assert type(got) is float and got == float(exact_product_variance(*args))  # rounded once
    with pytest.raises(ValueError, match="product_variance: var_x is -1; a variance cannot be "
                                         "negative"):
        product_variance(0, -1, 0, 1)
    with pytest.raises(ValueError, match="product_variance: var_y is -0.5; a variance"):
        product_variance(0, 1, 0, -0.5)
    assert product_variance(-3, 0, 0, 0) == 0  # mean_x may be negative


def test_product_variance_never_overflows_in_between_and_refuses_what_is_beyond_the_range():
    assert product_variance(1e200, 1e-300, 0, 0) == 0.0  # var_y = 0: the mean term vanishes
    got = product_variance(1e200, 0.0, 0.0, 1e-300)  # mean_x^2 var_y = 1e100, mean_x^2 = 1e400
    assert got == float(exact_product_variance(1e200, 0.0, 0.0, 1e-300))
    with pytest.raises(ValueError, match=r"product_variance: the result, about 10\^90[78], is "
                                         r"beyond the float range"):
        product_variance(-1, 1e308, 1e300, 1e300)
    with pytest.raises(ValueError, match=r"dot_product_variance: the result, about 10\^"):
        dot_product_variance(2 ** 53, 0.0, 1e300, 0.0, 1e10)
    with pytest.raises(ValueError, match=r"scaled_variance: the result, about 10\^310"):
        scaled_variance(1e300, 1e5)


@pytest.mark.parametrize("bad, error, message", [
    ("1", TypeError, "must be a real number, not '1'"),
    (None, TypeError, "must be a real number, not None"),
    (True, TypeError, "must be a real number, not True"),
    (math.nan, ValueError, "is nan; it must be finite"),
    (-math.inf, ValueError, "is -inf; it must be finite"),
])
def test_the_moment_functions_check_every_argument(bad, error, message):
    for position, name in enumerate(("mean_x", "var_x", "mean_y", "var_y")):
        args = [0, 1, 0, 1]
        args[position] = bad
        with pytest.raises(error, match=f"product_variance: {name} {message}"[:60]):
            product_variance(*args)
    with pytest.raises(error, match=f"dot_product_variance: var_k {message}"[:60]):
        dot_product_variance(4, var_k=bad)
    with pytest.raises(error, match=f"scaled_variance: c {message}"[:60]):
        scaled_variance(1, bad)


def test_dot_product_variance_is_dk_times_the_product_variance():
    assert dot_product_variance(64) == 64 and type(dot_product_variance(64)) is int
    assert dot_product_variance(10, var_q=Fraction(1, 4), var_k=4) == 10
    assert dot_product_variance(4, var_q=2, var_k=3) == 24
    assert dot_product_variance(3, 1, 2, 5, 7) == 3 * (14 + 7 + 50)
    got = dot_product_variance(3, 0.5, 2.0, 1.5, 0.1)
    assert got == float(3 * exact_product_variance(0.5, 2.0, 1.5, 0.1))
    assert dot_product_variance(1) == 1 and dot_product_variance(2 ** 53) == 2 ** 53
    with pytest.raises(ValueError, match="dot_product_variance: d_k must be at least 1, not 0"):
        dot_product_variance(0)
    with pytest.raises(ValueError, match=r"dot_product_variance: d_k must be at most "
                                         r"9007199254740992, not 9007199254740993"):
        dot_product_variance(2 ** 53 + 1)
    with pytest.raises(TypeError, match="dot_product_variance: d_k must be an int"):
        dot_product_variance(64.0)
    with pytest.raises(TypeError, match="dot_product_variance: d_k must be an int"):
        dot_product_variance(True)


def test_scaled_variance_is_c_squared_times_var():
    assert scaled_variance(64, Fraction(1, 8)) == 1 and type(scaled_variance(64, Fraction(1, 8))) \
        is Fraction
    assert scaled_variance(64, 0.125) == 1.0 and type(scaled_variance(64, 0.125)) is float
    assert scaled_variance(3, 2) == 12 and type(scaled_variance(3, 2)) is int
    assert scaled_variance(3, -2) == 12  # c may be negative
    assert scaled_variance(0.1, 3.0) == float(Fraction(0.1) * 9)
    with pytest.raises(ValueError, match="scaled_variance: var is -1; a variance cannot be "
                                         "negative"):
        scaled_variance(-1, 2)


@pytest.mark.parametrize("d_k", [4, 64, 512])
def test_scale_choices_give_the_documented_variances(d_k):
    var = dot_product_variance(d_k)
    expected = {"none": d_k, "1/sqrt(d_k)": 1.0, "1/d_k": 1.0 / d_k,
                "1/ln(d_k)": d_k / math.log(d_k) ** 2}
    for name in SCALE_CHOICES:
        assert math.isclose(scaled_variance(var, scale_factor(name, d_k)), expected[name],
                            rel_tol=4 * U)


def test_scale_factor_values_and_its_limits():
    assert [scale_factor(name, 64) for name in SCALE_CHOICES] == \
        [1.0, 0.125, 1 / 64, 1 / math.log(64)]
    assert [scale_factor(name, 1) for name in SCALE_CHOICES[:3]] == [1.0, 1.0, 1.0]
    assert scale_factor("1/ln(d_k)", 2) == 1 / math.log(2)
    assert scale_factor("1/sqrt(d_k)", 2 ** 53) == 1 / math.sqrt(2 ** 53)
    assert scale_factor("1/sqrt(d_k)", 2) == 1 / math.sqrt(2) and scale_factor("1/d_k", 3) == 1 / 3
    with pytest.raises(ValueError, match=r"scale_factor: d_k must be at least 2, not 1"):
        scale_factor("1/ln(d_k)", 1)
    with pytest.raises(ValueError, match=r"scale_factor: d_k must be at least 1, not 0"):
        scale_factor("none", 0)
    with pytest.raises(ValueError, match=r"scale_factor: unknown choice 'd_k'; choose one of "
                                         r"\('none', '1/sqrt\(d_k\)', '1/d_k', '1/ln\(d_k\)'\)"):
        scale_factor("d_k", 4)
    with pytest.raises(TypeError, match=r"scale_factor: the scale choice must be a str"):
        scale_factor(None, 4)
    with pytest.raises(TypeError, match=r"scale_factor: d_k must be an int"):
        scale_factor("none", "4")
    with pytest.raises(ValueError, match=r"d_k must be at most 9007199254740992"):
        scale_factor("none", 2 ** 53 + 1)


@pytest.mark.skipif(numpy is None, reason="NumPy is not installed")
def test_numpy_integers_and_arrays_are_accepted():
    assert dot_product_variance(numpy.int64(64)) == 64
    assert type(dot_product_variance(numpy.int64(64))) is int
    assert scale_factor("1/sqrt(d_k)", numpy.int32(64)) == 0.125
    assert variance([1.0, 2.0, 4.0], ddof=numpy.int64(1)) == variance([1.0, 2.0, 4.0], ddof=1)
    assert mean(numpy.array([1.0, 2.0])) == 1.5
    assert sample_dot_products(4, 3, seed=numpy.int64(7)) == sample_dot_products(4, 3, seed=7)
    assert product_variance(numpy.int64(2), 3, 5, 7) == 124
    assert type(product_variance(numpy.int64(2), 3, 5, 7)) is int
    with pytest.raises(ValueError, match=r"product_variance: the result, about 10\^308, is"):
        product_variance(1.5, 1e308, numpy.float64(2.5), numpy.int64(3))  # 9.25e308
    with pytest.raises(ValueError, match=r"scaled_variance: the result, about 10\^308"):
        scaled_variance(1e308, numpy.int64(3))
    assert scaled_variance(numpy.float64(2.0), numpy.int64(3)) == 18.0
    assert exact_dot_product_moments(numpy.int64(3), numpy.array([-1, 1])) == (0, 3)
    assert exact_dot_product_moments(2, numpy.array([0.5, -1.5]), numpy.array([0.75, 0.25])) == \
        exact_dot_product_moments(2, [0.5, -1.5], [0.75, 0.25])


# -------------------------------------------------------------- exact moments

def moments_of(values, probabilities):
    """Exact (E[X], Var(X)) of a discrete distribution, straight from the definition."""
    mu = sum(Fraction(v) * Fraction(p) for v, p in zip(values, probabilities))
    return mu, sum((Fraction(v) - mu) ** 2 * Fraction(p) for v, p in zip(values, probabilities))


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


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("d_k", [1, 2, 3])
def test_exact_moments_match_brute_force_enumeration(name, d_k):
    values, probabilities = DISTRIBUTIONS[name]
    if name == "four floats" and d_k == 3:
        return  # 4^6 outcomes: covered by the convolution below
    expected = brute_force_dot_moments(d_k, values, probabilities)
    assert tuple(exact_dot_product_moments(d_k, values, probabilities)) == expected
    assert tuple(stats._convolution_moments(d_k, values, probabilities)) == expected


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("d_k", [4, 7, 8])
def test_the_moment_formula_agrees_with_the_full_convolution(name, d_k):
    values, probabilities = DISTRIBUTIONS[name]
    if name == "four floats" and d_k > 4:
        return  # too many distinct sums for the convolution (see the limit test)
    assert exact_dot_product_moments(d_k, values, probabilities) == \
        stats._convolution_moments(d_k, values, probabilities)


@pytest.mark.parametrize("d_k", [1, 4, 16, 64, 128])
def test_rademacher_components_give_exactly_mean_zero_and_variance_dk(d_k):
    assert exact_dot_product_moments(d_k, [-1, 1]) == (0, d_k)
    assert stats._convolution_moments(d_k, [-1, 1]) == (0, d_k)


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("d_k", [1, 5, 32, 10 ** 6])
def test_exact_moments_equal_the_formula_including_non_zero_means(name, d_k):
    values, probabilities = DISTRIBUTIONS[name]
    p = probabilities or [Fraction(1, len(values))] * len(values)
    mu, var = moments_of(values, p)
    moments = exact_dot_product_moments(d_k, values, probabilities)
    assert isinstance(moments, Moments)
    assert moments.variance == dot_product_variance(d_k, mu, var, mu, var)  # Fractions, ==
    assert moments.mean == d_k * mu * mu


def test_exact_moments_never_hang():
    values = [0.1234, -2.5e-3, 7.77, -1.0 / 3]  # four arbitrary floats: no sums coincide
    start = time.process_time()
    moments = exact_dot_product_moments(50, values)
    assert time.process_time() - start < 0.5
    mu, var = moments_of(values, [Fraction(1, 4)] * 4)
    assert moments == (50 * mu * mu, 50 * ((var + mu * mu) ** 2 - mu ** 4))
    with pytest.raises(ValueError, match=r"_convolution_moments: q \. k may take up to \d+ values "
                                         r"at d_k=50; the limit is 2000"):
        stats._convolution_moments(50, values)


def test_the_convolution_limit_counts_the_possible_sums(monkeypatch):
    # q_i k_i takes the values -1 and 1: a sum of d_k of them takes d_k + 1 values
    assert stats._support_bound(128, {-1: 1, 1: 1}) == 129
    # products of [0, 1, 2]: {0, 1, 2, 4}; 6545 multisets at d_k = 32 but only 129 integers
    assert stats._support_bound(32, {0: 5, 1: 2, 2: 2, 4: 1}) == 129
    assert stats._support_bound(3, {0: 1, 10: 1, 25: 1}) == 10  # C(5, 2) < 3 * 25 + 1
    monkeypatch.setattr(stats, "_MAX_SUPPORT", 5)
    assert stats._convolution_moments(4, [-1, 1]) == (0, 4)  # 5 sums: at the limit
    with pytest.raises(ValueError, match="may take up to 6 values at d_k=5; the limit is 5"):
        stats._convolution_moments(5, [-1, 1])


def test_sums_of_copies_and_convolution_are_the_distribution():
    coin = {0: 1, 1: 1}
    assert stats._sum_of_copies(coin, 0) == {0: 1}
    assert stats._sum_of_copies(coin, 1) == coin
    assert stats._sum_of_copies(coin, 4) == {0: 1, 1: 4, 2: 6, 3: 4, 4: 1}  # binomial
    assert stats._sum_of_copies(coin, 5) == {k: math.comb(5, k) for k in range(6)}
    assert stats._convolve({2: 1, 3: 2}, {5: 3}, lambda x, y: x * y) == {10: 3, 15: 6}
    assert stats._lcm([4, 6, 10]) == 60 and stats._lcm([]) == 1


def test_repeated_values_pool_their_probability():
    # [0, 0, 3] uniform is the distribution P(0) = 2/3, P(3) = 1/3
    assert exact_dot_product_moments(3, [0, 0, 3]) == \
        exact_dot_product_moments(3, [0, 3], [Fraction(2, 3), Fraction(1, 3)])
    assert stats._convolution_moments(3, [0, 0, 3]) == \
        stats._convolution_moments(3, [0, 3], [Fraction(2, 3), Fraction(1, 3)])
    assert exact_dot_product_moments(4, [1, 1, -1, -1]) == (0, 4)
    halves = [0.5, 0.5, -1.5]  # a repeated value that is not an integer (L = 2)
    assert stats._convolution_moments(2, halves) == exact_dot_product_moments(2, halves) == \
        exact_dot_product_moments(2, [0.5, -1.5], [Fraction(2, 3), Fraction(1, 3)])
    assert exact_dot_product_moments(2, (Fraction(1, 2), 2)) == (Fraction(25, 8), Fraction(
        2 * ((Fraction(17, 8)) ** 2 - Fraction(5, 4) ** 4)))


def test_exact_moments_reject_bad_distributions():
    fn = "exact_dot_product_moments"
    with pytest.raises(ValueError, match=f"{fn}: probabilities must be >= 0 and sum to exactly "
                                         r"1 \(got sum 1.1, exactly "
                                         r"9907919180215091/9007199254740992\)"):
        exact_dot_product_moments(2, [0, 1], [0.5, 0.6])
    with pytest.raises(ValueError, match=f"{fn}: probabilities must be >= 0"):
        exact_dot_product_moments(2, [0, 1], [1.5, -0.5])
    with pytest.raises(ValueError, match=f"{fn}: probabilities must be >= 0"):
        exact_dot_product_moments(2, [0, 1], [1, -1e-300])  # sums to 1 - 1e-300, not 1
    with pytest.raises(ValueError, match=rf"{fn}: probabilities must be >= 0 .*\(got sum 1.0, "
                                         r"exactly 1\)"):
        exact_dot_product_moments(2, [0, 1, 2], [Fraction(1, 2), Fraction(3, 4), Fraction(-1, 4)])
    assert exact_dot_product_moments(2, [0, 1], [1, 0]) == (0, 0)  # a zero probability is fine
    with pytest.raises(ValueError, match="2 values but 3 probabilities"):
        exact_dot_product_moments(2, [0, 1], [0.5, 0.25, 0.25])
    with pytest.raises(TypeError, match=rf"{fn}: values\[0\] is 'a'"):
        exact_dot_product_moments(2, ["a", 1])
    with pytest.raises(ValueError, match=rf"{fn}: values\[0\] is inf; entries must be finite"):
        exact_dot_product_moments(2, [math.inf, 1.0])
    with pytest.raises(ValueError, match=rf"{fn}: probabilities\[1\] is nan"):
        exact_dot_product_moments(2, [0, 1], [1.0, math.nan])
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        exact_dot_product_moments(0, [0, 1])
    with pytest.raises(TypeError, match=f"{fn}: d_k must be an int"):
        exact_dot_product_moments(2.0, [0, 1])


def test_fourth_moment_matches_its_conditional_derivation():
    # Given q, q . k ~ N(0, |q|^2), so E[(q.k)^4 | q] = 3 |q|^4; |q|^2 is chi-squared with
    # d_k degrees of freedom, whose second moment is d_k^2 + 2 d_k.  Hence 3 (d_k^2 + 2 d_k).
    for d_k in (1, 2, 7, 64, 1024, 2 ** 53):
        assert dot_product_fourth_moment(d_k) == 3 * (d_k * d_k + 2 * d_k)
    with pytest.raises(ValueError, match="dot_product_fourth_moment: d_k must be at least 1"):
        dot_product_fourth_moment(0)


def test_standard_error_formula_and_its_arguments():
    for d_k, n in ((1, 1), (64, 1000), (3, 7), (2 ** 53, 1)):
        assert variance_standard_error(d_k, n) == math.sqrt((2 * d_k * d_k + 6 * d_k) / n)
    assert variance_standard_error(1, 2) == 2.0  # sqrt(8 / 2)
    with pytest.raises(ValueError, match="variance_standard_error: n must be at least 1, not 0"):
        variance_standard_error(4, 0)
    with pytest.raises(TypeError, match="variance_standard_error: n must be an int"):
        variance_standard_error(4, 10.0)
    with pytest.raises(ValueError, match="variance_standard_error: d_k must be at least 1"):
        variance_standard_error(0, 10)


# ------------------------------------------------------ the normals and seeds

@pytest.mark.parametrize("counts", [[1], [2], [3, 4, 5], [0, 7, 0, 1], [10, 11, 1, 1, 2]])
@pytest.mark.parametrize("warm", [False, True])
def test_bulk_normals_are_exactly_random_gauss_and_leave_the_same_state(counts, warm):
    fast, slow = random.Random(42), random.Random(42)
    if warm:  # a spare normal waiting in gauss_next
        assert fast.gauss(0.0, 1.0) == slow.gauss(0.0, 1.0)
    for count in counts:
        expected = [slow.gauss(0.0, 1.0) for _ in range(count)]
        got = stats._normals(fast, count)
        assert [x.hex() for x in got] == [x.hex() for x in expected]  # bit for bit
        assert fast.getstate() == slow.getstate()
    assert fast.gauss(0.0, 1.0) == slow.gauss(0.0, 1.0)


def test_bulk_normals_turn_negative_zero_into_zero_as_gauss_does():
    class Zeros(random.Random):
        def random(self):  # u = 0 makes the radius sqrt(-2 log 1) = -0.0
            return 0.0
    g = Zeros(1)
    assert math.copysign(1.0, g.gauss(0.0, 1.0)) == 1.0  # gauss: 0.0 + (-0.0) = 0.0
    got = stats._normals(Zeros(1), 3)
    assert [math.copysign(1.0, v) for v in got] == [1.0, 1.0, 1.0]


def test_seeds_must_be_explicit_ints_or_generators():
    rng = random.Random(5)
    assert sample_dot_products(4, 3, seed=rng) == sample_dot_products(4, 3, seed=random.Random(5))
    assert rng.getstate() != random.Random(5).getstate()  # the given generator was used
    assert sample_dot_products(4, 3, seed=-7) == sample_dot_products(4, 3, seed=random.Random(-7))
    for bad in (None, "7", 1.5, True):
        with pytest.raises(TypeError, match="sample_dot_products: seed"):
            sample_dot_products(4, 3, seed=bad)
    with pytest.raises(TypeError, match="random_trials: seed"):
        random_trials(4, seed="7")
    with pytest.raises(TypeError, match="every run must be reproducible"):
        random_trials(4, seed=None)


def test_every_sampler_refuses_more_draws_than_its_limit():
    stats._check_draws("f", 10 ** 7)  # at the limit: fine
    with pytest.raises(ValueError, match=r"f: this call would draw 10000001 normal numbers; the "
                                         r"limit is 10000000 per call"):
        stats._check_draws("f", 10 ** 7 + 1)
    big = 10 ** 20
    for call, fn in ((lambda: sample_dot_products(64, big), "sample_dot_products"),
                     (lambda: sample_projected_dot_products(16, big), "sample_projected"),
                     (lambda: random_trials(64, trials=big), "random_trials"),
                     (lambda: saturation_stats(64, trials=big), "saturation_stats"),
                     (lambda: gradient_stats(64, m=big), "gradient_stats"),
                     (lambda: additive_score_variance(16, big), "additive_score_variance")):
        start = time.process_time()
        with pytest.raises(ValueError, match=fn + ".*limit is 10000000"):
            call()
        assert time.process_time() - start < 0.1
    with pytest.raises(ValueError, match=r"would draw 10000128 normal"):
        sample_dot_products(64, 78126)  # 2 * 64 * 78126 = 10000128


# ----------------------------------------------------------------- Monte Carlo

def gauss_dot_products(d_k, n, seed, scale=1.0):
    """The same samples from random.gauss directly: q, then k, per sample."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        q = [rng.gauss(0.0, 1.0) for _ in range(d_k)]
        k = [rng.gauss(0.0, 1.0) for _ in range(d_k)]
        out.append(scale * float(sum(Fraction(a * b) for a, b in zip(q, k))))  # fsum's value
    return out


@pytest.mark.parametrize("d_k, n, seed", [(1, 5, 0), (4, 7, 3), (13, 4, 9)])
def test_samples_are_exact_dot_products_of_gauss_draws(d_k, n, seed):
    assert sample_dot_products(d_k, n, seed=seed) == gauss_dot_products(d_k, n, seed)
    assert sample_dot_products(d_k, n, seed=seed, scale=0.5) == \
        gauss_dot_products(d_k, n, seed, 0.5)


@pytest.mark.parametrize("d_k", [1, 4, 16, 64])
def test_simulated_variance_is_within_four_standard_errors_of_dk(d_k):
    # With the mean known to be 0, (1/n) sum x^2 estimates Var(q . k); its standard error
    # is sqrt((E[(q.k)^4] - d_k^2) / n) = sqrt((3 d_k^2 + 6 d_k - d_k^2) / n).  Four
    # standard errors fail a correct implementation about once in 16,000 seeds.
    n = 3000
    xs = sample_dot_products(d_k, n, seed=2024)
    estimate = math.fsum(x * x for x in xs) / n
    se = math.sqrt((3 * d_k ** 2 + 6 * d_k - d_k ** 2) / n)
    assert se == variance_standard_error(d_k, n)
    assert abs(estimate - d_k) <= 4 * se, (estimate, d_k, se)
    # the sample mean has standard error sqrt(d_k / n)
    assert abs(statistics.fmean(xs)) <= 4 * math.sqrt(d_k / n)


def test_the_standard_error_test_would_catch_a_wrong_variance():
    # the same check against d_k / 2 (what a bug halving the variance would give) fails
    n, d_k = 3000, 16
    xs = sample_dot_products(d_k, n, seed=2024)
    estimate = math.fsum(x * x for x in xs) / n
    assert abs(estimate - d_k / 2) > 4 * variance_standard_error(d_k, n)


def test_scaled_samples_are_the_raw_ones_times_the_scale():
    raw = sample_dot_products(64, 200, seed=3)
    scaled = sample_dot_products(64, 200, seed=3, scale=0.125)
    assert scaled == [0.125 * x for x in raw]
    assert math.isclose(variance(scaled), variance(raw) / 64, rel_tol=1e-12)


def test_sampling_arguments_are_checked():
    fn = "sample_dot_products"
    with pytest.raises(ValueError, match=f"{fn}: a sample is beyond the float range .*"
                                         "scale=1e\\+308 is too large"):
        sample_dot_products(4, 50, seed=1, scale=1e308)
    with pytest.raises(ValueError, match=f"{fn}: scale is nan; it must be finite"):
        sample_dot_products(4, 5, scale=math.nan)
    with pytest.raises(TypeError, match=f"{fn}: scale must be a real number"):
        sample_dot_products(4, 5, scale="1")
    with pytest.raises(ValueError, match=f"{fn}: n must be at least 1, not 0"):
        sample_dot_products(4, 0)
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1, not 0"):
        sample_dot_products(0, 4)
    with pytest.raises(TypeError, match=f"{fn}: n must be an int"):
        sample_dot_products(4, 2.0)
    assert len(sample_dot_products(1, 1, seed=0)) == 1


def test_same_seed_same_numbers_and_fresh_pairs_are_uncorrelated():
    a = sample_dot_products(8, 2000, seed=7)
    assert a == sample_dot_products(8, 2000, seed=7)
    assert a != sample_dot_products(8, 2000, seed=8)
    # lag-1 correlation of independent samples has standard error 1 / sqrt(n)
    x, y = a[:-1], a[1:]
    mx, my = statistics.fmean(x), statistics.fmean(y)
    covariance = statistics.fmean([(u - mx) * (v - my) for u, v in zip(x, y)])
    correlation = covariance / (statistics.pstdev(x) * statistics.pstdev(y))
    assert abs(correlation) <= 4 / math.sqrt(len(a))


# ------------------------------------------------------------------ layer norm

@pytest.mark.parametrize("x", [
    [1.0, 3.0], [1e16, 1e16 + 2], [1e308, -1e308], [0.1, 0.2, 0.3], [5e-324, 1e-323],
    [1e-300, 2e-300, 7e-301], [1e308, 1e308, -1e308, 3.0], [2.0 ** 60, 2.0 ** 60 + 512, 1.0],
    [random.Random(s).uniform(-50, 50) for s in range(37)],
    [1e9 + random.Random(s).gauss(0, 1) for s in range(20)],
])
def test_layer_norm_is_within_a_few_ulps_of_the_exact_result(x):
    # Oracle: (x_i - x_bar) / sqrt(mean (x_j - x_bar)^2) at 50 digits from the exact deviations
    # (Fractions).  Tolerance: 4 ulps of the exact value, or of 1 for entries near 0.
    n = len(x)
    mu = sum(map(Fraction, x)) / n
    deviations = [Fraction(v) - mu for v in x]
    top = max(map(abs, deviations))
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        exact_top = decimal.Decimal(top.numerator) / decimal.Decimal(top.denominator)
        r = [decimal.Decimal(d.numerator) / decimal.Decimal(d.denominator) / exact_top
             for d in deviations]
        sigma = (sum(v * v for v in r) / n).sqrt()
        exact = [float(v / sigma) for v in r]
    got = layer_norm(x)
    for g, e in zip(got, exact):
        assert abs(g - e) <= 4 * math.ulp(max(abs(e), 1.0)), (g, e)
        assert abs(g - e) <= 4 * math.ulp(e) or abs(e) < 1, (g, e)
    assert abs(statistics.fmean(got)) <= 1e-15 and abs(statistics.pvariance(got) - 1) <= 1e-14


def test_layer_norm_exact_cases():
    assert layer_norm([1e16, 1e16 + 2]) == [-1.0, 1.0]  # floats would give [0, 2]
    assert layer_norm([1e308, -1e308]) == [1.0, -1.0]  # floats would give [0, -0]
    assert layer_norm([1.0, 3.0]) == [-1.0, 1.0]
    assert layer_norm((2, 4, 6, 8)) == [-1.3416407864998738, -0.4472135954999579,
                                         0.4472135954999579, 1.3416407864998738]
    assert layer_norm([5e-324, 1e-323]) == [-1.0, 1.0]


def test_layer_norm_rejects_constant_and_bad_input():
    with pytest.raises(ValueError, match="layer_norm: all 3 entries are equal; the variance is 0"):
        layer_norm([2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="layer_norm: all 1 entries are equal"):
        layer_norm([2.0])
    with pytest.raises(ValueError, match=r"layer_norm: x\[1\] is nan"):
        layer_norm([1.0, math.nan])
    with pytest.raises(ValueError, match="layer_norm: x is empty"):
        layer_norm([])
    with pytest.raises(TypeError, match="layer_norm: x must be a list or tuple"):
        layer_norm("12")
    data = [3.0, 1.0]
    layer_norm(data)
    assert data == [3.0, 1.0]  # not mutated


# ------------------------------------------------------------ projected queries

def gauss_projected(d_k, n, d_model, seed):
    """sample_projected_dot_products from random.gauss and the statistics module."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x = [rng.gauss(0.0, 1.0) for _ in range(d_model)]
        mu, sd = statistics.fmean(x), statistics.pstdev(x)
        x = [(v - mu) / sd for v in x]
        W = [[rng.gauss(0.0, 1.0) / math.sqrt(d_model) for _ in range(d_model)]
             for _ in range(2 * d_k)]
        q = [sum(a * w for a, w in zip(x, col)) for col in W[:d_k]]
        k = [sum(a * w for a, w in zip(x, col)) for col in W[d_k:]]
        out.append(sum(a * b for a, b in zip(q, k)))
    return out


@pytest.mark.parametrize("d_k, n, d_model, seed", [(4, 5, 8, 0), (3, 4, 2, 9), (1, 3, 5, 2)])
def test_projected_samples_are_the_projections_of_gauss_draws(d_k, n, d_model, seed):
    got = sample_projected_dot_products(d_k, n, d_model=d_model, seed=seed)
    expected = gauss_projected(d_k, n, d_model, seed)
    assert all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(got, expected))


def test_projected_queries_and_keys_also_have_variance_dk():
    # Given the normalised x, each q_c and k_c is exactly N(0, 1) and independent, so the
    # standard error is the same sqrt((3 d_k^2 + 6 d_k - d_k^2) / n) as above.
    d_k, n = 8, 600
    xs = sample_projected_dot_products(d_k, n, d_model=16, seed=11)
    estimate = math.fsum(x * x for x in xs) / n
    assert abs(estimate - d_k) <= 4 * variance_standard_error(d_k, n)


def test_projected_arguments_are_checked():
    fn = "sample_projected_dot_products"
    with pytest.raises(ValueError, match=f"{fn}: d_model .* must be at least 2, not 1"):
        sample_projected_dot_products(4, 3, d_model=1)
    assert len(sample_projected_dot_products(4, 3, d_model=2)) == 3
    with pytest.raises(ValueError, match=f"{fn}: n must be at least 1"):
        sample_projected_dot_products(4, 0)
    with pytest.raises(ValueError, match=f"{fn}: d_k must be at least 1"):
        sample_projected_dot_products(0, 3)
    with pytest.raises(ValueError, match=f"{fn}: this call would draw 10000640 normal"):
        sample_projected_dot_products(2, 31252, d_model=64)  # 31252 * 64 * 5 = 10000640
    with pytest.raises(TypeError, match=f"{fn}: seed"):
        sample_projected_dot_products(2, 3, seed=2.5)


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


@pytest.mark.parametrize("d_a", [4, 64])
def test_additive_score_variance_is_sigma_w_squared_d_a_times_e_tanh_squared(d_a):
    # Var(e) = sigma_w^2 d_a E[tanh^2] (units independent given q, k); the estimate's own
    # standard error is sqrt((mean e^4 - mean(e^2)^2) / n); four of them is the tolerance.
    d, n = 16, 3000
    theory = expected_tanh_square(d)
    assert 0.5 < theory < 0.53
    got = additive_score_variance(d_a, n, d=d, seed=4)
    assert isinstance(got, ScoreVariance)
    assert abs(got.variance - d_a * theory) <= 4 * got.standard_error, (got, d_a * theory)
    assert got.standard_error < 0.05 * got.variance
    unit = additive_score_variance(d_a, n, d=d, sigma_w=d_a ** -0.5, seed=4)
    assert abs(unit.variance - theory) <= 4 * unit.standard_error and unit.variance < 1
    assert abs(got.variance / 2 - d_a * theory) > 4 * got.standard_error  # would catch a halving


def test_additive_scores_are_the_documented_computation():
    # Rebuild the n scores from random.gauss: q, k, the pre-activations, then w.
    d_a, d, n, seed = 3, 2, 6, 1
    rng = random.Random(seed)
    scores = []
    for _ in range(n):
        z = [rng.gauss(0.0, 1.0) for _ in range(2 * d + 2 * d_a)]
        spread = math.sqrt(sum(v * v for v in z[:2 * d]) / d)
        scores.append(sum(w * math.tanh(spread * u) for u, w in zip(z[2 * d:2 * d + d_a],
                                                                      z[2 * d + d_a:])))
    got = additive_score_variance(d_a, n, d=d, seed=seed)
    squares = [e * e for e in scores]
    assert math.isclose(got.variance, statistics.fmean(squares), rel_tol=1e-13)
    spread = statistics.fmean([s * s for s in squares]) - statistics.fmean(squares) ** 2
    assert math.isclose(got.standard_error, math.sqrt(spread / n), rel_tol=1e-12)
    doubled = additive_score_variance(d_a, n, d=d, sigma_w=2.0, seed=seed)
    assert doubled == (4 * got.variance, 4 * got.standard_error)  # the same draws
    one = additive_score_variance(d_a, 1, d=d, seed=seed)
    assert one.standard_error == 0.0 and one.variance == squares[0]


def test_additive_score_variance_checks_its_arguments():
    fn = "additive_score_variance"
    with pytest.raises(ValueError, match=f"{fn}: sigma_w is -1.0; a standard deviation cannot"):
        additive_score_variance(4, 10, sigma_w=-1.0)
    assert additive_score_variance(4, 10, sigma_w=0.0) == (0.0, 0.0)
    with pytest.raises(ValueError, match=f"{fn}: a sample is beyond the float range.*"
                                         "sigma_w=1e\\+200 is too large"):
        additive_score_variance(4, 10, sigma_w=1e200)
    for name, kwargs in (("d_a", dict(d_a=0)), ("n", dict(n=0)), ("d", dict(d=0))):
        args = dict(d_a=4, n=10, d=3)
        args.update(kwargs)
        with pytest.raises(ValueError, match=f"{fn}: {name} must be at least 1, not 0"):
            additive_score_variance(args["d_a"], args["n"], d=args["d"])
    with pytest.raises(ValueError, match=f"{fn}: this call would draw 10000080 normal"):
        additive_score_variance(10, 250002, d=10)  # 250002 * 40 = 10000080
    with pytest.raises(TypeError, match=f"{fn}: sigma_w must be a real number"):
        additive_score_variance(4, 10, sigma_w="1")


# ------------------------------------------------- saturation and gradient tables

def gauss_trials(d_k, m, d_v, trials, seed):
    rng = random.Random(seed)
    g = lambda count: [rng.gauss(0.0, 1.0) for _ in range(count)]  # noqa: E731
    return [([g(d_k)], [g(d_k) for _ in range(m)], [g(d_v) for _ in range(m)], [g(d_v)])
            for _ in range(trials)]


def test_random_trials_are_gauss_draws_in_the_order_q_k_v_g():
    got = random_trials(5, m=3, d_v=2, trials=4, seed=9)
    assert [tuple(t) for t in got] == gauss_trials(5, 3, 2, 4, 9)
    assert [tuple(t) for t in random_trials(1, m=3, d_v=1, trials=2, seed=4)] == \
        gauss_trials(1, 3, 1, 2, 4)  # rows of width 1
    assert all(isinstance(t, Trial) for t in got)
    t = random_trials(4, m=3, d_v=2, trials=1)[0]
    assert (len(t.Q), len(t.K), len(t.K[0]), len(t.V), len(t.V[0]), len(t.G), len(t.G[0])) == \
        (1, 3, 4, 3, 2, 1, 2)
    for name in ("m", "d_v", "trials"):
        with pytest.raises(ValueError, match=f"random_trials: {name} must be at least 1, not 0"):
            random_trials(4, **{name: 0})
    with pytest.raises(TypeError, match="random_trials: m must be an int"):
        random_trials(4, m=2.0)
    with pytest.raises(ValueError, match="random_trials: d_k must be at least 1"):
        random_trials(0)


def naive_statistics(trials, c):
    """Saturation and gradient norms from the definitions, with 50-digit softmax."""
    max_p, entropy, jacobian, dS_norms, dQ_norms = [], [], [], [], []
    for Q, K, V, G in trials:
        x = [c * float(sum(Fraction(a) * Fraction(b) for a, b in zip(Q[0], k))) for k in K]
        p = [float(v) for v in decimal_softmax(x)]
        max_p.append(max(p))
        entropy.append(-sum(v * math.log(v) for v in p if v > 0))
        jacobian.append(math.sqrt(sum((p[i] * ((i == j) - p[j])) ** 2
                                      for i in range(len(p)) for j in range(len(p)))))
        g = [sum(a * b for a, b in zip(G[0], v)) for v in V]  # dL/dP = G V^T
        mean_g = sum(a * b for a, b in zip(p, g))
        dS = [p_j * (g_j - mean_g) for p_j, g_j in zip(p, g)]
        dQ = [c * sum(dS[j] * K[j][t] for j in range(len(K))) for t in range(len(K[0]))]
        dS_norms.append(math.sqrt(sum(v * v for v in dS)))
        dQ_norms.append(math.sqrt(sum(v * v for v in dQ)))
    return ([statistics.fmean(v) for v in (max_p, entropy, jacobian)],
            [statistics.fmean(dS_norms), statistics.fmean(dQ_norms),
             statistics.median(dS_norms), statistics.median(dQ_norms)])


@pytest.mark.parametrize("d_k, scale_name", [(16, "none"), (16, "1/sqrt(d_k)"), (64, "1/d_k"),
                                             (9, "1/ln(d_k)")])
def test_saturation_and_gradient_stats_agree_with_the_definitions(d_k, scale_name):
    m, trials, seed = 5, 7, 3
    c = scale_factor(scale_name, d_k)
    sat, grad = naive_statistics(gauss_trials(d_k, m, 8, trials, seed), c)
    got_sat = saturation_stats(d_k, scale_name, m=m, trials=trials, seed=seed)
    got_grad = gradient_stats(d_k, scale_name, m=m, trials=trials, seed=seed)
    assert isinstance(got_sat, Saturation) and isinstance(got_grad, GradientNorms)
    for a, b in zip(list(got_sat) + list(got_grad), sat + grad):
        assert math.isclose(a, b, rel_tol=1e-9), (a, b)


def test_uniform_rows_and_equal_values_give_the_closed_forms():
    same = stats._prepared([Trial([[1.0, 0.0]], [[0.5, 0.5]] * 4, [[1.0], [2.0], [0.0], [5.0]],
                                  [[1.0]])])
    s = stats._saturation_of(same, 1.0)
    assert s.max_weight == 0.25 and math.isclose(s.entropy, math.log(4), rel_tol=4 * U)
    assert math.isclose(s.jacobian_norm, math.sqrt(3) / 4, rel_tol=4 * U)
    flat = stats._prepared([Trial([[1.0, 0.0]], [[0.5, 0.5], [1.0, 0.0]], [[2.0], [2.0]],
                                  [[1.0]])])
    assert stats._gradients_of(flat, 1.0) == (0.0, 0.0, 0.0, 0.0)


def test_stats_functions_check_scale_and_sizes_naming_themselves():
    for fn in (saturation_stats, gradient_stats):
        name = fn.__name__
        with pytest.raises(ValueError, match=f"{name}: unknown choice 'sqrt'"):
            fn(16, "sqrt")
        with pytest.raises(ValueError, match=f"{name}: m must be at least 1"):
            fn(16, m=0)
        with pytest.raises(ValueError, match=f"{name}: trials must be at least 1"):
            fn(16, trials=0)
        with pytest.raises(ValueError, match=f"{name}: d_k must be at least 2"):
            fn(1, "1/ln(d_k)")
        with pytest.raises(TypeError, match=f"{name}: seed"):
            fn(16, seed=None)
    single = saturation_stats(8, "none", m=1, trials=3)  # one key: weight 1, nothing to learn
    assert single == (1.0, 0.0, 0.0)
    assert gradient_stats(8, "none", m=1, trials=3) == (0.0, 0.0, 0.0, 0.0)


@pytest.fixture(scope="module")
def tables():
    """Saturation and gradients for d_k = 16, 128, 1024 from one seeded set of trials each."""
    out = {}
    for d_k in (16, 128, 1024):
        trials = stats._prepared(random_trials(d_k, m=16, trials=40, seed=100 + d_k))
        for name in ("none", "1/sqrt(d_k)"):
            c = scale_factor(name, d_k)
            out[d_k, name] = (stats._saturation_of(trials, c), stats._gradients_of(trials, c))
    return out


def test_unscaled_softmax_saturates_as_dk_grows(tables):
    s16, s128, s1024 = (tables[d, "none"][0] for d in (16, 128, 1024))
    assert s16.max_weight + 0.1 < s128.max_weight < s1024.max_weight + 0.05
    assert s1024.max_weight > 0.85  # close to one-hot
    assert s16.entropy > 2 * s1024.entropy
    assert s16.jacobian_norm > 2 * s1024.jacobian_norm


def test_scaled_softmax_stays_level(tables):
    for d_k in (16, 128, 1024):
        s = tables[d_k, "1/sqrt(d_k)"][0]
        assert 0.15 < s.max_weight < 0.35  # far from one-hot at every d_k
        assert 2.1 < s.entropy < math.log(16)
        assert 0.25 < s.jacobian_norm < 0.35


def test_unscaled_gradient_vanishes_and_scaling_restores_it(tables):
    g16, g128, g1024 = (tables[d, "none"][1] for d in (16, 128, 1024))
    assert g16.score_grad_median > 5 * g128.score_grad_median > 25 * g1024.score_grad_median
    assert g16.query_grad_median > 50 * g1024.query_grad_median  # dQ collapses too
    assert g16.score_grad > 2 * g1024.score_grad  # the mean falls, though less (near-ties)
    for d_k in (16, 128, 1024):
        scaled = tables[d_k, "1/sqrt(d_k)"][1]
        assert 0.4 < scaled.score_grad_median < 1.2  # level
        assert 0.4 < scaled.query_grad_median < 1.2


def test_entropy_against_fifty_digits_and_its_errors():
    assert math.isclose(softmax_entropy([0.0] * 4), math.log(4), rel_tol=4 * U)
    assert softmax_entropy([0.0, -math.inf, -math.inf]) == 0.0
    assert softmax_entropy([0.0, -1e4]) == 0.0 and softmax_entropy([5.0]) == 0.0
    x = [2.0, 1.0, -3.0]  # against the definition with 50-digit probabilities
    p = decimal_softmax(x)
    assert abs(softmax_entropy(x) - float(-sum(v * v.ln() for v in p))) <= 1e-15
    with pytest.raises(ValueError, match=r"softmax_entropy: x\[0\] is nan"):
        softmax_entropy([math.nan, 1.0])
    with pytest.raises(ValueError, match="softmax_entropy: every entry of x"):
        softmax_entropy([-math.inf])
    with pytest.raises(TypeError, match="softmax_entropy: x must be a list or tuple"):
        softmax_entropy(None)


# ------------------------------------------------------------------ defaults

def test_the_documented_defaults():
    assert sample_dot_products(3, 4) == sample_dot_products(3, 4, seed=0, scale=1.0)
    assert sample_projected_dot_products(2, 3) == \
        sample_projected_dot_products(2, 3, d_model=64, seed=0)
    assert random_trials(3) == random_trials(3, m=16, d_v=8, trials=100, seed=0)
    assert saturation_stats(16) == saturation_stats(16, "1/sqrt(d_k)", m=16, trials=100, seed=0)
    assert gradient_stats(16, "none") == gradient_stats(16, "none", m=16, trials=100, seed=0)
    assert additive_score_variance(4) == additive_score_variance(4, 1000, d=64, sigma_w=1.0,
                                                                 seed=0)
    assert variance([1.0, 2.0, 4.0]) == variance([1.0, 2.0, 4.0], ddof=0)
    assert exact_dot_product_moments(3, [0, 1, 5]) == \
        exact_dot_product_moments(3, [0, 1, 5], [Fraction(1, 3)] * 3)
    assert dot_product_variance(5) == dot_product_variance(5, 0, 1, 0, 1)


def test_fractions_stay_exact_where_a_float_would_round():
    assert product_variance(Fraction(1, 3), 0, 0, 1) == Fraction(1, 9)  # not float(1/3)^2
    assert scaled_variance(Fraction(1, 3), Fraction(1, 7)) == Fraction(1, 147)
    assert exact_dot_product_moments(1, [Fraction(1, 3), 1]) == \
        (Fraction(4, 9), Fraction(25, 81) - Fraction(16, 81))


def test_random_trials_count_their_draws_exactly():
    with pytest.raises(ValueError, match=r"random_trials: this call would draw 10000080 normal"):
        random_trials(64, trials=8170)  # 8170 (64 + 16 * 64 + 16 * 8 + 8) = 10000080
    with pytest.raises(ValueError, match=r"saturation_stats: this call would draw 10000040 "):
        saturation_stats(2, m=3, trials=250001)  # 250001 (2 + 3 * 2 + 3 * 8 + 8) = 10000040


# ------------------------------------------- corners found by mutation testing

def test_variance_overflow_is_decided_by_the_exponent_of_the_scaled_result():
    data = [0.5, -0.5, 0.5, -0.5, 0.0]  # with ddof = 4 the variance is exactly 1.0
    assert stats.variance([2.0 ** 510 * v for v in data], ddof=4) == 2.0 ** 1020
    with pytest.raises(ValueError, match="variance: the result, about 2\\^1025, is beyond"):
        stats.variance([2.0 ** 512 * v for v in data], ddof=4)  # exactly 2^1024: too large
    assert stats.variance([2.0 ** 600, 2.0 ** 600]) == 0.0  # zero, however large the data


class _ArrayLike:
    """Not a Sequence, but with tolist(), as a NumPy array is."""

    def __init__(self, values):
        self.values = values

    def tolist(self):
        return list(self.values)


def test_exact_moments_read_an_array_through_tolist_and_pool_repeated_values():
    assert stats.exact_dot_product_moments(3, _ArrayLike([-1, 1])) == (0, 3)
    # 1 appears twice: P(1) = 2/3; the convolution must pool the two weights
    for d_k in (1, 2, 3):
        assert stats._convolution_moments(d_k, [1, 1, -1]) == \
            stats.exact_dot_product_moments(d_k, [1, 1, -1])


def test_layer_norm_with_a_zero_deviation():
    a = math.sqrt(1.5)  # deviations -1, 0, 1 over the std sqrt(2/3)
    assert stats.layer_norm([1.0, 2.0, 3.0]) == [-a, 0.0, a]


def test_entropy_ignores_masked_keys():
    assert stats.softmax_entropy([0.0, 0.0, -math.inf]) == math.log(2)
