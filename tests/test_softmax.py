"""Tests for softmax.py against independent references (decimal at 50 digits,
exact Fractions, central finite differences) and the properties of softmax."""

import math
import random
from fractions import Fraction

import pytest

from bounds import (HOSTILE, _spread, log_softmax_error_ratios, random_logits,
                    softmax_error_ratios)
from oracle import (U, central_difference, decimal_log_softmax, decimal_logsumexp,
                    decimal_softmax, random_vector)
from softmax import (EMPTY, Normalizer, log_softmax, logsumexp, online_logsumexp,
                     online_merge, online_update, rescale_factors, softmax, softmax_backward,
                     softmax_jacobian)

INF = math.inf
SEEDS = range(8)
ALL_VECTORS = HOSTILE + [random_logits(s) for s in SEEDS]


@pytest.mark.parametrize("x", ALL_VECTORS, ids=lambda x: f"n{len(x)}")
def test_softmax_matches_decimal_within_the_stated_bound(x):
    ratios = softmax_error_ratios(x)
    assert max(ratios) <= 1.0, (x, ratios)


@pytest.mark.parametrize("x", ALL_VECTORS, ids=lambda x: f"n{len(x)}")
def test_log_softmax_matches_decimal_within_the_stated_bound(x):
    ratios = log_softmax_error_ratios(x)
    assert max(ratios) <= 1.0, (x, ratios)


@pytest.mark.parametrize("x", ALL_VECTORS, ids=lambda x: f"n{len(x)}")
def test_logsumexp_matches_decimal(x):
    # lse = m + log1p(s): one rounding each for the sum, log1p and the addition,
    # plus s's own relative error (M + 2) U weighted by s / (1 + s) < 1.
    exact = float(decimal_logsumexp(x))
    _, _, max_gap = _spread(x, decimal_softmax(x))
    bound = (abs(exact) + max_gap + 4) * U
    assert abs(logsumexp(x) - exact) <= bound, (logsumexp(x), exact)


def test_log_softmax_keeps_the_tiny_log_of_the_largest_probability():
    # log p_1 for [100, 1, 1, 1] is -log1p(3 e^-99), about -3.03e-43: log(softmax) rounds it to 0.
    exact = decimal_log_softmax([100.0, 1.0, 1.0, 1.0])[0]
    got = log_softmax([100.0, 1.0, 1.0, 1.0])[0]
    assert abs(got - float(exact)) <= 2 * U * abs(float(exact))  # relative accuracy kept
    assert math.log(softmax([100.0, 1.0, 1.0, 1.0])[0]) == 0.0  # the naive route loses it


# ---------------------------------------------------------------- input policy

def test_minus_inf_is_a_masked_logit_with_probability_exactly_zero():
    p = softmax([1.0, -INF, 2.0])
    assert p[1] == 0.0
    assert [p[0], p[2]] == softmax([1.0, 2.0])  # the others are as if it were absent
    assert log_softmax([1.0, -INF, 2.0])[1] == -INF
    assert logsumexp([1.0, -INF, 2.0]) == logsumexp([1.0, 2.0])


@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian])
def test_all_minus_inf_raises_value_error(fn):
    with pytest.raises(ValueError, match=fn.__name__ + r".*-inf"):
        fn([-INF, -INF])


@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian])
def test_empty_input_raises_value_error(fn):
    with pytest.raises(ValueError, match=fn.__name__ + ".*empty"):
        fn([])


@pytest.mark.parametrize("bad", [INF, math.nan])
@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian])
def test_plus_inf_or_nan_raises_naming_the_index(fn, bad):
    with pytest.raises(ValueError, match=fn.__name__ + r".*x\[2\]"):
        fn([0.0, 1.0, bad])


@pytest.mark.parametrize("bad", ["1.0", None, 1j, True, [1.0]])
@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian])
def test_non_numbers_raise_type_error(fn, bad):
    with pytest.raises(TypeError, match=fn.__name__ + r".*x\[1\]"):
        fn([0.0, bad])


@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp])
def test_a_string_or_a_scalar_is_not_a_vector(fn):
    for bad in ("12", 3.0, None):
        with pytest.raises(TypeError, match=fn.__name__):
            fn(bad)


def test_integer_and_fraction_logits_are_accepted():
    assert softmax((0, 0)) == [0.5, 0.5]  # a tuple of ints
    assert softmax([Fraction(1, 2), Fraction(1, 2)]) == [0.5, 0.5]


def test_extreme_finite_logits_give_exact_answers():
    assert softmax([1e308, -1e308]) == [1.0, 0.0]
    assert softmax([-1e308, -1e308]) == [0.5, 0.5]
    assert logsumexp([1e308, -1e308]) == 1e308
    assert logsumexp([-1e308, -1e308]) == -1e308  # + log 2 is far below an ulp of 1e308
    # log p_2 = -2e308 is below -DBL_MAX: -inf is its correct rounding
    assert log_softmax([1e308, -1e308]) == [0.0, -INF]


@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian])
def test_arguments_are_not_mutated(fn):
    x = [3.0, -1.0, 2.5, -INF]
    before = list(x)
    fn(x)
    assert x == before


def test_softmax_backward_checks_its_arguments():
    with pytest.raises(ValueError, match="softmax_backward: g has length 3 but p has length 2"):
        softmax_backward([0.5, 0.5], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="softmax_backward: p sums to"):
        softmax_backward([0.5, 0.6], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"softmax_backward: p\[0\] = 2.0 is not a probability"):
        softmax_backward([2.0, -1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"softmax_backward: g\[1\] is nan"):
        softmax_backward([0.5, 0.5], [1.0, math.nan])
    with pytest.raises(TypeError, match=r"softmax_backward: g\[0\]"):
        softmax_backward([0.5, 0.5], ["a", 1.0])


# ------------------------------------------------------------------ properties

@pytest.mark.parametrize("x", ALL_VECTORS, ids=lambda x: f"n{len(x)}")
def test_probabilities_sum_to_one_within_a_few_ulps(x):
    # sum_i p_i inherits sum_i p_i* (|x_i - m| + E + 6) U = (2 E + 6) U, plus the sum's rounding
    p_exact = decimal_softmax(x)
    _, mean_gap, _ = _spread(x, p_exact)
    assert abs(math.fsum(softmax(x)) - 1.0) <= (2 * mean_gap + 7) * U


def test_softmax_is_shift_invariant_exactly_when_the_shift_is_exact():
    # Dyadic logits k/64 and an integer shift: x_i + c and (x_i + c) - (m + c) are exact,
    # so the two computations see identical numbers and must agree bit for bit.
    rng = random.Random(1)
    for _ in range(20):
        x = [rng.randint(-640, 640) / 64 for _ in range(rng.randint(1, 12))]
        c = rng.randint(-1000, 1000)
        assert softmax([v + c for v in x]) == softmax(x)


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_is_shift_invariant_for_random_shifts(seed):
    # rounding x_i + c moves each logit by at most U |x_i + c|; p moves relatively by
    # at most twice the largest such move, on top of each side's own bound.
    rng = random.Random(seed)
    x = random_logits(seed)
    c = rng.uniform(-100.0, 100.0)
    shifted = [v + c for v in x]
    move = 2 * U * max(abs(v) for v in shifted)
    p_exact = decimal_softmax(x)
    m, mean_gap, _ = _spread(x, p_exact)
    for v, a, b in zip(x, softmax(shifted), softmax(x)):
        own = 2 * (abs(v - m) + mean_gap + 6) * U
        assert abs(a - b) <= (move + own) * b + 1e-300


@pytest.mark.parametrize("x", ALL_VECTORS, ids=lambda x: f"n{len(x)}")
def test_log_softmax_equals_log_of_softmax_where_both_are_finite(x):
    p_exact = decimal_softmax(x)
    m, mean_gap, max_gap = _spread(x, p_exact)
    for v, lp, p in zip(x, log_softmax(x), softmax(x)):
        if p > 2.0 ** -1022 and lp != -INF:  # normal p: log(p) keeps p's relative error
            bound = (abs(v - m) + mean_gap + max_gap + abs(lp) + 10) * U
            assert abs(lp - math.log(p)) <= bound, (v, lp, math.log(p))


# -------------------------------------------------------------------- Jacobian

@pytest.mark.parametrize("seed", SEEDS)
def test_jacobian_equals_central_finite_differences(seed):
    x = random_vector(random.Random(seed), 6, spread=2.0)
    J = softmax_jacobian(x)
    for j in range(len(x)):
        for i in range(len(x)):
            fd = central_difference(lambda y: softmax(y)[i], x, j, h=1e-5)
            # truncation h^2 |p'''| / 6 < 1e-10, cancellation ~ U / h ~ 1e-11
            assert abs(J[i][j] - fd) <= 1e-9, (i, j, J[i][j], fd)


@pytest.mark.parametrize("x", ALL_VECTORS[:11] + [random_logits(s) for s in SEEDS],
                         ids=lambda x: f"n{len(x)}")
def test_jacobian_is_symmetric_with_zero_row_and_column_sums(x):
    J = softmax_jacobian(x)
    n = len(x)
    assert all(J[i][j] == J[j][i] for i in range(n) for j in range(n))  # p_i p_j = p_j p_i exactly
    for i in range(n):
        # the diagonal p_i * fsum(p_{j != i}) and the off-diagonal products each round once
        size = math.fsum(abs(v) for v in J[i])
        assert abs(math.fsum(J[i])) <= 4 * U * size + 1e-320


@pytest.mark.parametrize("seed", SEEDS)
def test_jacobian_quadratic_form_is_the_variance_under_p(seed):
    # v^T J v = sum_i p_i v_i^2 - (sum_i p_i v_i)^2 = Var_p(v) >= 0: J is positive semidefinite.
    rng = random.Random(seed)
    x = random_logits(seed)
    v = [rng.gauss(0, 1) for _ in x]
    J = softmax_jacobian(x)
    quadratic = math.fsum(v[i] * J[i][j] * v[j] for i in range(len(x)) for j in range(len(x)))
    p = [Fraction(pi) for pi in softmax(x)]
    mean = sum(pi * Fraction(vi) for pi, vi in zip(p, v))
    variance = float(sum(pi * (Fraction(vi) - mean) ** 2 for pi, vi in zip(p, v)))
    assert quadratic >= -1e-15  # positive semidefinite, up to rounding
    assert abs(quadratic - variance) <= 1e-12 * (1 + variance)


@pytest.mark.parametrize("x", ALL_VECTORS[:11] + [random_logits(s) for s in SEEDS],
                         ids=lambda x: f"n{len(x)}")
def test_jacobian_trace_and_diagonal_bounds(x):
    J = softmax_jacobian(x)
    p = softmax(x)
    trace = math.fsum(J[i][i] for i in range(len(x)))
    assert abs(trace - (1.0 - math.fsum(pi * pi for pi in p))) <= 1e-15
    assert all(J[i][i] <= 0.25 for i in range(len(x)))  # p (1 - p) <= 1/4
    assert all(abs(J[i][j]) <= 0.25 for i in range(len(x)) for j in range(len(x)))


def largest_eigenvalue(J, iterations=500, seed=0):
    """Power iteration on the symmetric PSD matrix J: the Rayleigh quotient of J^k v."""
    rng = random.Random(seed)
    v = [rng.gauss(0, 1) for _ in J]
    for _ in range(iterations):
        w = [math.fsum(a * b for a, b in zip(row, v)) for row in J]
        norm = math.sqrt(math.fsum(c * c for c in w))
        if norm == 0.0:
            return 0.0
        v = [c / norm for c in w]
    Jv = [math.fsum(a * b for a, b in zip(row, v)) for row in J]
    return math.fsum(a * b for a, b in zip(v, Jv))


def test_power_iteration_finds_the_known_eigenvalue_one_half():
    assert abs(largest_eigenvalue(softmax_jacobian([0.0, 0.0])) - 0.5) <= 1e-12


@pytest.mark.parametrize("x", ALL_VECTORS[:11] + [random_logits(s) for s in SEEDS],
                         ids=lambda x: f"n{len(x)}")
def test_jacobian_largest_eigenvalue_is_at_most_one_half(x):
    # ||J||_2 <= max_i sum_j |J_ij| = max_i 2 p_i (1 - p_i) <= 1/2 (Gershgorin), so
    # softmax can only shrink a gradient: this is why the failure is vanishing, not exploding.
    J = softmax_jacobian(x)
    assert largest_eigenvalue(J) <= 0.5 + 1e-12
    assert max(math.fsum(abs(v) for v in row) for row in J) <= 0.5 + 1e-15


def test_jacobian_diagonal_keeps_a_tiny_derivative():
    # p_1 (1 - p_1) for [100, 1, 1, 1] is about 3e-43; 1 - p_1 in floats would be 0.
    J = softmax_jacobian([100.0, 1.0, 1.0, 1.0])
    p = decimal_softmax([100.0, 1.0, 1.0, 1.0])
    exact = float(p[0] * (p[1] + p[2] + p[3]))  # 1 - p_1 without cancellation
    assert abs(J[0][0] - exact) <= 4 * U * exact


# ------------------------------------------------------------------ backward

@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_backward_equals_jacobian_transpose_times_g(seed):
    rng = random.Random(seed)
    x = random_logits(seed)
    g = [rng.gauss(0, 1) for _ in x]
    J = softmax_jacobian(x)
    expected = [math.fsum(J[i][j] * g[i] for i in range(len(x))) for j in range(len(x))]
    got = softmax_backward(softmax(x), g)
    scale = max(abs(v) for v in g)
    assert all(abs(a - b) <= 1e-14 * scale for a, b in zip(got, expected))


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_backward_equals_finite_differences_of_a_loss(seed):
    rng = random.Random(seed)
    x = random_vector(rng, 7, spread=2.0)
    g = [rng.gauss(0, 1) for _ in x]

    def loss(y):  # L = g . softmax(y), so dL/dp = g
        return math.fsum(gi * pi for gi, pi in zip(g, softmax(y)))

    got = softmax_backward(softmax(x), g)
    for j in range(len(x)):
        assert abs(got[j] - central_difference(loss, x, j, h=1e-5)) <= 1e-9


def test_softmax_backward_does_not_mutate():
    p, g = [0.25, 0.75], [1.0, -1.0]
    softmax_backward(p, g)
    assert p == [0.25, 0.75] and g == [1.0, -1.0]


# -------------------------------------------------- the one-pass (online) normaliser

def fold(xs, state=EMPTY):
    for v in xs:
        state = online_update(state, v)
    return state


@pytest.mark.parametrize("x", ALL_VECTORS, ids=lambda x: f"n{len(x)}")
def test_one_pass_gives_the_same_logsumexp(x):
    # each update rounds d once or twice and each rescale once: about 3 U per element,
    # relative to d, which log turns into an absolute error; plus m + log d's rounding.
    exact = float(decimal_logsumexp(x))
    assert abs(online_logsumexp(fold(x)) - exact) <= (abs(exact) + 3 * len(x) + 2) * U


@pytest.mark.parametrize("seed", SEEDS)
def test_merging_blocks_in_any_split_agrees(seed):
    rng = random.Random(seed)
    x = random_logits(seed) + [-INF]
    cut = rng.randint(0, len(x))
    merged = online_merge(fold(x[:cut]), fold(x[cut:]))
    exact = float(decimal_logsumexp(x))
    assert abs(online_logsumexp(merged) - exact) <= (abs(exact) + 3 * len(x) + 2) * U
    assert online_merge(EMPTY, merged) == merged == online_merge(merged, EMPTY)


def test_online_update_ignores_masked_logits_and_rejects_bad_ones():
    state = fold([1.0, 2.0])
    assert online_update(state, -INF) == state
    with pytest.raises(ValueError, match=r"online_update: x\[0\] is inf"):
        online_update(state, INF)
    with pytest.raises(ValueError, match=r"online_update: x\[0\] is nan"):
        online_update(state, math.nan)
    with pytest.raises(TypeError, match="online_update"):
        online_update(state, "3")
    with pytest.raises(ValueError, match="online_logsumexp: the state holds no finite logit"):
        online_logsumexp(fold([-INF, -INF]))


def test_online_recurrence_matches_its_formula_step_by_step():
    # d' = d e^(m - m') + e^(x - m'), m' = max(m, x), starting from (x_1, 1)
    state = fold([2.0])
    assert state == Normalizer(2.0, 1.0)
    state = online_update(state, 5.0)  # the max grows: the old sum is rescaled
    assert state.m == 5.0 and state.d == math.exp(-3.0) + 1.0
    state = online_update(state, 1.0)
    assert state.m == 5.0 and state.d == (math.exp(-3.0) + 1.0) + math.exp(-4.0)


def test_rescale_factors_of_empty_states_are_zero():
    assert rescale_factors(EMPTY, EMPTY) == (-INF, 0.0, 0.0)
    assert rescale_factors(EMPTY, Normalizer(3.0, 1.0)) == (3.0, 0.0, 1.0)
