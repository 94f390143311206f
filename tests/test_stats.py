"""Tests for stats.py: variance against the exact stdlib `statistics`, exact moments
against brute-force enumeration, Monte Carlo within standard-error tolerances,
the direction of the saturation and gradient tables, and the main job."""

import itertools
import math
import os
import random
import statistics
import subprocess
import sys
from fractions import Fraction

import pytest

from oracle import U, decimal_softmax
from stats import (SCALE_CHOICES, bar_chart, dot_product_fourth_moment, dot_product_variance,
                   softmax_entropy, exact_dot_product_moments, gradients_of, layer_norm, mean,
                   product_variance, random_trials, sample_dot_products,
                   sample_projected_dot_products, saturation_of, scale_factor, scaled_variance,
                   variance, variance_standard_error)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def naive_one_pass_variance(xs):
    """E[X^2] - E[X]^2: the textbook identity, evaluated in floats (the sums even exact)."""
    n = len(xs)
    return math.fsum(x * x for x in xs) / n - (math.fsum(xs) / n) ** 2


@pytest.mark.parametrize("name, data", list(hostile_data()), ids=[n for n, _ in hostile_data()])
@pytest.mark.parametrize("ddof, reference", [(0, statistics.pvariance), (1, statistics.variance)])
def test_variance_agrees_with_the_exact_statistics_module(name, data, ddof, reference):
    # statistics computes with exact Fractions, then rounds once.  The two-pass
    # algorithm with correction has relative error <= 4 U + n kappa^2 U^2, where
    # kappa^2 = 1 + mean^2 / var is the condition number of the data (Chan, Golub
    # and LeVeque); with fsum for both sums the first-order term is a few U.
    exact = reference(data)
    got = variance(data, ddof=ddof)
    if exact == 0:
        assert got == 0.0
        return
    kappa2 = 1 + statistics.fmean(data) ** 2 / statistics.pvariance(data)
    assert abs(got - exact) <= (4 * U + len(data) * kappa2 * U * U) * exact, (got, exact)


def test_the_one_pass_formula_fails_where_two_passes_do_not():
    data = dict(hostile_data())["offset 1e9"]
    exact = statistics.pvariance(data)  # about 1
    assert abs(naive_one_pass_variance(data) - exact) > 0.1 * exact  # catastrophic cancellation
    assert abs(variance(data) - exact) <= 1e-12 * exact


def test_mean_is_the_correctly_rounded_average():
    data = [1e16, 1.0, -1e16, 3.0]
    assert mean(data) == 1.0  # a plain left-to-right sum would give 0.75 or 0.0
    assert mean([Fraction(1, 3)] * 3) == 1 / 3


def test_variance_and_mean_reject_too_few_points_and_non_numbers():
    with pytest.raises(ValueError, match="variance: requires at least 1 data points with ddof=0; got 0"):
        variance([])
    with pytest.raises(ValueError, match="variance: requires at least 2 data points with ddof=1; got 1"):
        variance([1.0], ddof=1)
    with pytest.raises(ValueError, match="mean: xs is empty"):
        mean([])
    with pytest.raises(ValueError, match="variance: ddof must be a non-negative int"):
        variance([1.0, 2.0], ddof=-1)
    with pytest.raises(TypeError, match=r"variance: xs\[1\] is 'a'"):
        variance([1.0, "a"])


# ------------------------------------------------------------------ the theory

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
    assert tuple(exact_dot_product_moments(d_k, values, probabilities)) == \
        brute_force_dot_moments(d_k, values, probabilities)


@pytest.mark.parametrize("d_k", [1, 4, 16, 64, 128])
def test_rademacher_components_give_exactly_mean_zero_and_variance_dk(d_k):
    assert exact_dot_product_moments(d_k, [-1, 1]) == (0, d_k)


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("d_k", [1, 5, 32])
def test_exact_moments_equal_the_formula_including_non_zero_means(name, d_k):
    values, probabilities = DISTRIBUTIONS[name]
    p = probabilities or [Fraction(1, len(values))] * len(values)
    mu, var = moments_of(values, p)
    moments = exact_dot_product_moments(d_k, values, probabilities)
    assert moments.variance == dot_product_variance(d_k, mu, var, mu, var)  # Fractions, ==
    assert moments.mean == d_k * mu * mu


def test_product_variance_is_var_x_var_y_plus_the_mean_terms():
    assert product_variance(0, 1, 0, 1) == 1
    assert product_variance(Fraction(1), Fraction(2), Fraction(3), Fraction(5)) == 10 + 5 + 18
    assert dot_product_variance(64) == 64
    assert dot_product_variance(10, var_q=Fraction(1, 4), var_k=4) == 10
    with pytest.raises(ValueError, match="product_variance: var_x is -1; a variance cannot be negative"):
        product_variance(0, -1, 0, 1)
    with pytest.raises(ValueError, match="dot_product_variance: d_k must be a positive int"):
        dot_product_variance(0)


def test_exact_moments_reject_bad_distributions():
    with pytest.raises(ValueError, match="exact_dot_product_moments: probabilities must be >= 0 and sum to exactly 1"):
        exact_dot_product_moments(2, [0, 1], [0.5, 0.6])
    with pytest.raises(ValueError, match="exact_dot_product_moments: probabilities must be >= 0"):
        exact_dot_product_moments(2, [0, 1], [1.5, -0.5])
    with pytest.raises(ValueError, match="2 values but 3 probabilities"):
        exact_dot_product_moments(2, [0, 1], [0.5, 0.25, 0.25])
    with pytest.raises(TypeError, match=r"exact_dot_product_moments: values\[0\]"):
        exact_dot_product_moments(2, ["a", 1])


@pytest.mark.parametrize("d_k", [4, 64, 512])
def test_scale_choices_give_the_documented_variances(d_k):
    var = dot_product_variance(d_k)
    expected = {"none": d_k, "1/sqrt(d_k)": 1.0, "1/d_k": 1.0 / d_k,
                "1/ln(d_k)": d_k / math.log(d_k) ** 2}
    for name in SCALE_CHOICES:
        assert math.isclose(scaled_variance(var, scale_factor(name, d_k)), expected[name],
                            rel_tol=4 * U)
    with pytest.raises(ValueError, match="scale_factor: unknown choice 'd_k'"):
        scale_factor("d_k", 4)


def test_fourth_moment_matches_its_conditional_derivation():
    # Given q, q . k ~ N(0, |q|^2), so E[(q.k)^4 | q] = 3 |q|^4; |q|^2 is chi-squared with
    # d_k degrees of freedom, whose second moment is d_k^2 + 2 d_k.  Hence 3 (d_k^2 + 2 d_k).
    for d_k in (1, 2, 7, 64, 1024):
        assert dot_product_fourth_moment(d_k) == 3 * (d_k * d_k + 2 * d_k)


# ----------------------------------------------------------------- Monte Carlo

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


def test_projected_queries_and_keys_also_have_variance_dk():
    # Given the normalised x, each q_c and k_c is exactly N(0, 1) and independent, so the
    # standard error is the same sqrt((3 d_k^2 + 6 d_k - d_k^2) / n) as above.
    d_k, n = 8, 600
    xs = sample_projected_dot_products(d_k, n, d_model=16, seed=11)
    estimate = math.fsum(x * x for x in xs) / n
    assert abs(estimate - d_k) <= 4 * variance_standard_error(d_k, n)


def test_layer_norm_gives_mean_zero_and_variance_one():
    rng = random.Random(1)
    x = layer_norm([rng.uniform(-5, 50) for _ in range(37)])
    assert abs(statistics.fmean(x)) <= 1e-15
    assert abs(statistics.pvariance(x) - 1.0) <= 1e-14
    with pytest.raises(ValueError, match="layer_norm: all 3 entries are equal"):
        layer_norm([2.0, 2.0, 2.0])


# ------------------------------------------------- saturation and gradient tables

@pytest.fixture(scope="module")
def tables():
    """Saturation and gradients for d_k = 16, 128, 1024 from one seeded set of trials each."""
    out = {}
    for d_k in (16, 128, 1024):
        trials = random_trials(d_k, m=16, trials=40, seed=100 + d_k)
        for name in ("none", "1/sqrt(d_k)"):
            c = scale_factor(name, d_k)
            out[d_k, name] = (saturation_of(trials, c), gradients_of(trials, c))
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


def test_entropy_and_bar_chart():
    assert math.isclose(softmax_entropy([0.0] * 4), math.log(4), rel_tol=4 * U)
    assert softmax_entropy([0.0, -math.inf, -math.inf]) == 0.0
    x = [2.0, 1.0, -3.0]  # against the definition with 50-digit probabilities
    p = decimal_softmax(x)
    assert abs(softmax_entropy(x) - float(-sum(v * v.ln() for v in p))) <= 1e-15
    lines = bar_chart([("a", 2.0), ("bb", 1.0), ("c", 0.0)], width=10)
    assert lines == [" a |########## 2", "bb |#####      1", " c |           0"]


# ----------------------------------------------------------------- the main job

def run_main(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "stats.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_main_job_runs_prints_every_section_and_is_reproducible():
    args = ("--samples", "60", "--trials", "4", "--dk", "16,64", "--seed", "3")
    first, second = run_main(*args), run_main(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    for header in ("1. Var(q . k) = d_k", "1b. The projection setting", "2. Variance of the scaled",
                   "3. Saturation of softmax", "4. Gradient through attention_backward",
                   "5. Pictures"):
        assert header in first.stdout
    assert first.stdout != run_main("--samples", "60", "--trials", "4", "--dk", "16,64",
                                    "--seed", "4").stdout


def test_main_job_help_and_bad_options():
    assert "--seed" in run_main("--help").stdout
    bad = run_main("--dk", "16,x")
    assert bad.returncode == 2 and "--dk takes whole numbers" in bad.stderr


def test_repeated_values_pool_their_probability():
    # [0, 0, 3] uniform is the distribution P(0) = 2/3, P(3) = 1/3
    assert exact_dot_product_moments(3, [0, 0, 3]) == \
        exact_dot_product_moments(3, [0, 3], [Fraction(2, 3), Fraction(1, 3)])
    assert exact_dot_product_moments(4, [1, 1, -1, -1]) == (0, 4)


def test_non_finite_data_and_implicit_seeds_are_rejected():
    for fn in (mean, variance, layer_norm):
        with pytest.raises(ValueError, match=fn.__name__ + r": xs\[1\] is (nan|inf)"):
            fn([1.0, math.nan, 2.0] if fn is not variance else [1.0, math.inf])
    with pytest.raises(TypeError, match="sample_dot_products: seed must be an int or a random.Random"):
        sample_dot_products(4, 3, seed=None)
    with pytest.raises(TypeError, match="random_trials: seed must be"):
        random_trials(4, seed="7")
    rng = random.Random(5)
    assert sample_dot_products(4, 3, seed=rng) == sample_dot_products(4, 3, seed=random.Random(5))


def test_exact_moments_and_bar_chart_reject_non_finite_input():
    with pytest.raises(ValueError, match="exact_dot_product_moments: every value must be finite"):
        exact_dot_product_moments(2, [math.inf, 1.0])
    with pytest.raises(ValueError, match="bar_chart: needs at least one row"):
        bar_chart([])
    with pytest.raises(ValueError, match="bar_chart"):
        bar_chart([("a", math.nan)])
