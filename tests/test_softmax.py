"""Tests for softmax.py against independent references (decimal at 50 digits, exact
Fractions, central finite differences) and the properties of softmax."""

import math
import random
from fractions import Fraction

import pytest

from oracles.bounds import (NAMED_HOSTILE, log_softmax_bounds, random_logits, softmax_bounds,
                            spread)
from tests.helpers import assert_close
from oracles.exact import (U, central_difference, decimal_log_softmax, decimal_logsumexp,
                           decimal_softmax, random_vector)
from softmax import (EMPTY, Normalizer, log_softmax, logsumexp, online_logsumexp,
                     online_merge, online_update, rescale_factors, softmax, softmax_backward,
                     softmax_jacobian)

INF = math.inf
SEEDS = range(8)
RANDOM = [pytest.param(random_logits(s), id=f"random logits, seed {s}") for s in SEEDS]
HOSTILE = [pytest.param(x, id=name) for name, x in NAMED_HOSTILE.items()]
ALL_VECTORS = HOSTILE + RANDOM
# the Jacobian tests skip the longest hostile vector (114 x 114 entries): it adds time, not cases
JACOBIAN_VECTORS = HOSTILE[:-1] + RANDOM
SOFTMAX_FUNCTIONS = [softmax, log_softmax, logsumexp, softmax_jacobian]


# ------------------------------------------------------ accuracy against 50 digits

@pytest.mark.parametrize("x", ALL_VECTORS)
def test_softmax_matches_decimal_within_the_stated_bound(x):
    # oracles/bounds.py: |p_i - p_i*| <= (|x_i - m| + E_p|x - m| + 6) U p_i* (+ 2^-1074)
    for p, (want, bound) in zip(softmax(x), softmax_bounds(x)):
        assert_close(p, want, abs=bound)


@pytest.mark.parametrize("x", ALL_VECTORS)
def test_log_softmax_matches_decimal_within_the_stated_bound(x):
    # oracles/bounds.py: |log p_i - log p_i*| <= (|x_i - m| + |log p_i*| + 2 log1p(s)
    #                                      + (s / (1 + s)) (M + 3)) U
    for lp, (want, bound) in zip(log_softmax(x), log_softmax_bounds(x)):
        assert_close(lp, want, abs=bound)


@pytest.mark.parametrize("x", ALL_VECTORS)
def test_logsumexp_matches_decimal_within_the_stated_bound(x):
    # lse = m + log1p(s): one rounding each for the sum, log1p and the addition,
    # plus s's own relative error (M + 2) U weighted by s / (1 + s) < 1.
    exact = float(decimal_logsumexp(x))
    _, _, max_gap = spread(x, decimal_softmax(x))
    assert_close(logsumexp(x), exact, abs=(abs(exact) + max_gap + 4) * U)


def test_log_softmax_keeps_the_tiny_log_of_the_largest_probability():
    # log p_1 for [100, 1, 1, 1] is -log1p(3 e^-99), about -3.03e-43: log(softmax) rounds it to 0.
    exact = float(decimal_log_softmax([100.0, 1.0, 1.0, 1.0])[0])
    assert_close(log_softmax([100.0, 1.0, 1.0, 1.0])[0], exact, rel=2 * U)
    assert math.log(softmax([100.0, 1.0, 1.0, 1.0])[0]) == 0.0  # the naive route loses it


def test_extreme_finite_logits_give_exact_answers():
    assert softmax([1e308, -1e308]) == [1.0, 0.0]
    assert softmax([-1e308, -1e308]) == [0.5, 0.5]
    assert logsumexp([1e308, -1e308]) == 1e308
    assert logsumexp([-1e308, -1e308]) == -1e308  # + log 2 is far below an ulp of 1e308
    assert log_softmax([1e308, -7e307]) == [0.0, -1.7e308]  # x_2 - m is still a float
    # log p_2 = -2e308 is beyond the float range: refused, not rounded to -inf as if masked
    with pytest.raises(ValueError, match=r"^log_softmax: x\[1\] is -1e\+308, more than the "
                                         r"largest float below the max x\[0\] = 1e\+308; its "
                                         "log-probability is beyond the float range$"):
        log_softmax([1e308, -1e308])


# ---------------------------------------------------------------- input policy

def test_minus_inf_is_a_masked_logit_with_probability_exactly_zero():
    p = softmax([1.0, -INF, 2.0])
    assert p[1] == 0.0
    assert [p[0], p[2]] == softmax([1.0, 2.0])  # the others are as if it were absent
    assert log_softmax([1.0, -INF, 2.0])[1] == -INF
    assert logsumexp([1.0, -INF, 2.0]) == logsumexp([1.0, 2.0])


@pytest.mark.parametrize("fn", SOFTMAX_FUNCTIONS, ids=lambda f: f.__name__)
def test_every_logit_minus_inf_is_refused_no_distribution_exists(fn):
    with pytest.raises(ValueError, match=fn.__name__ + ": x is -inf everywhere"):
        fn([-INF, -INF])


@pytest.mark.parametrize("fn", SOFTMAX_FUNCTIONS, ids=lambda f: f.__name__)
def test_an_empty_vector_is_refused(fn):
    with pytest.raises(ValueError, match=fn.__name__ + ": x is empty"):
        fn([])


@pytest.mark.parametrize("bad", [INF, math.nan], ids=["+inf", "nan"])
@pytest.mark.parametrize("fn", SOFTMAX_FUNCTIONS, ids=lambda f: f.__name__)
def test_plus_inf_or_nan_is_refused_naming_the_entry(fn, bad):
    with pytest.raises(ValueError, match=fn.__name__ + rf": x\[2\] is {bad}; it must be finite"):
        fn([0.0, 1.0, bad])


@pytest.mark.parametrize("bad", ["1.0", None, 1j, True, [1.0]],
                         ids=["a str", "None", "a complex", "a bool", "a list"])
@pytest.mark.parametrize("fn", SOFTMAX_FUNCTIONS, ids=lambda f: f.__name__)
def test_an_entry_that_is_not_a_real_number_is_a_type_error(fn, bad):
    with pytest.raises(TypeError, match=fn.__name__ + r": x\[1\] is .*, not a real number"):
        fn([0.0, bad])


@pytest.mark.parametrize("bad", ["12", 3.0, None, {1.0, 2.0}],
                         ids=["a str", "a float", "None", "a set"])
@pytest.mark.parametrize("fn", SOFTMAX_FUNCTIONS, ids=lambda f: f.__name__)
def test_a_string_a_scalar_or_a_set_is_not_a_vector(fn, bad):
    with pytest.raises(TypeError, match=fn.__name__ + ": x must be a list, not "):
        fn(bad)


def test_integer_and_fraction_logits_are_accepted():
    assert softmax((0, 0)) == [0.5, 0.5]  # a tuple of ints
    assert softmax([Fraction(1, 2), Fraction(1, 2)]) == [0.5, 0.5]


@pytest.mark.parametrize("fn", SOFTMAX_FUNCTIONS, ids=lambda f: f.__name__)
def test_arguments_are_not_mutated(fn):
    x = [3.0, -1.0, 2.5, -INF]
    fn(x)
    assert x == [3.0, -1.0, 2.5, -INF]


def test_softmax_backward_checks_its_arguments():
    with pytest.raises(ValueError, match="softmax_backward: g has length 3 but p has length 2"):
        softmax_backward([0.5, 0.5], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^softmax_backward: p sums to 1\.1, not 1 \(within "
                                         r"1e-9\); pass p = softmax\(x\)"):
        softmax_backward([0.5, 0.6], [1.0, 2.0])  # sums to 1.1
    with pytest.raises(ValueError, match=r"^softmax_backward: p\[1\] is -1\.0; a probability "
                                         "cannot be negative"):
        softmax_backward([2.0, -1.0], [1.0, 2.0])  # sums to 1, but not in [0, 1]
    with pytest.raises(ValueError, match=r"softmax_backward: g\[1\] is nan"):
        softmax_backward([0.5, 0.5], [1.0, math.nan])
    with pytest.raises(TypeError, match=r"softmax_backward: g\[0\] is 'a', not a real number"):
        softmax_backward([0.5, 0.5], ["a", 1.0])


# ------------------------------------------------------------------ properties

@pytest.mark.parametrize("x", ALL_VECTORS)
def test_probabilities_sum_to_one_within_a_few_ulps(x):
    # sum_i p_i inherits sum_i p_i* (|x_i - m| + E + 6) U = (2 E + 6) U, plus the sum's rounding
    _, mean_gap, _ = spread(x, decimal_softmax(x))
    assert_close(math.fsum(softmax(x)), 1.0, abs=(2 * mean_gap + 7) * U)


def test_softmax_is_shift_invariant_exactly_when_the_shift_is_exact():
    # Dyadic logits k/64 and an integer shift: x_i + c and (x_i + c) - (m + c) are exact,
    # so the two computations see identical numbers and must agree bit for bit.
    rng = random.Random(1)
    for _ in range(20):
        x = [rng.randint(-640, 640) / 64 for _ in range(rng.randint(1, 12))]
        c = rng.randint(-1000, 1000)
        assert softmax([v + c for v in x]) == softmax(x)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_softmax_is_shift_invariant_for_random_shifts(seed):
    # rounding x_i + c moves each logit by at most U |x_i + c|; p moves relatively by
    # at most twice the largest such move, on top of each side's own bound.
    rng = random.Random(seed)
    x = random_logits(seed)
    c = rng.uniform(-100.0, 100.0)
    shifted = [v + c for v in x]
    move = 2 * U * max(abs(v) for v in shifted)
    m, mean_gap, _ = spread(x, decimal_softmax(x))
    for v, a, b in zip(x, softmax(shifted), softmax(x)):
        own = 2 * (abs(v - m) + mean_gap + 6) * U
        assert_close(a, b, rel=move + own, abs=1e-300)


@pytest.mark.parametrize("x", ALL_VECTORS)
def test_log_softmax_equals_log_of_softmax_where_both_are_finite(x):
    # log(p) turns p's relative error (|x_i - m| + E + 6) U into an absolute one; log_softmax
    # has its own bound (M + |log p| + a few) U; log adds an ulp of |log p|.
    m, mean_gap, max_gap = spread(x, decimal_softmax(x))
    for v, lp, p in zip(x, log_softmax(x), softmax(x)):
        if p > 2.0 ** -1022 and lp != -INF:  # normal p: log(p) keeps p's relative error
            bound = (abs(v - m) + mean_gap + max_gap + abs(lp) + 10) * U
            assert_close(lp, math.log(p), abs=bound)


# -------------------------------------------------------------------- Jacobian

@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_jacobian_equals_central_finite_differences(seed):
    x = random_vector(random.Random(seed), 6, spread=2.0)
    # fd[i][j] = d p_i / d x_j by central differences, h = 1e-5
    fd = [[central_difference(lambda y: softmax(y)[i], x, j, h=1e-5) for j in range(len(x))]
          for i in range(len(x))]
    # truncation h^2 |p'''| / 6 < 1e-10, cancellation ~ U / h ~ 1e-11
    assert_close(softmax_jacobian(x), fd, abs=1e-9)


@pytest.mark.parametrize("x", JACOBIAN_VECTORS)
def test_jacobian_is_symmetric_with_zero_row_sums(x):
    J = softmax_jacobian(x)
    n = len(x)
    assert all(J[i][j] == J[j][i] for i in range(n) for j in range(n))  # p_i p_j = p_j p_i exactly
    for row in J:
        # the diagonal p_i * fsum(p_{j != i}) and the off-diagonal products each round once
        assert_close(math.fsum(row), 0.0, abs=4 * U * math.fsum(abs(v) for v in row) + 1e-320)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
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
    assert_close(quadratic, variance, abs=1e-12, rel=1e-12)


@pytest.mark.parametrize("x", JACOBIAN_VECTORS)
def test_jacobian_trace_and_entries_are_bounded(x):
    J = softmax_jacobian(x)
    p = softmax(x)
    trace = math.fsum(J[i][i] for i in range(len(x)))
    assert_close(trace, 1.0 - math.fsum(pi * pi for pi in p), abs=1e-15)  # sum_i p_i (1 - p_i)
    assert all(abs(J[i][j]) <= 0.25 for i in range(len(x)) for j in range(len(x)))  # p(1-p) <= 1/4


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
    assert_close(largest_eigenvalue(softmax_jacobian([0.0, 0.0])), 0.5, abs=1e-12)


@pytest.mark.parametrize("x", JACOBIAN_VECTORS)
def test_jacobian_largest_eigenvalue_is_at_most_one_half(x):
    # ||J||_2 <= max_i sum_j |J_ij| = max_i 2 p_i (1 - p_i) <= 1/2 (Gershgorin), so
    # softmax can only shrink a gradient: this is why the failure is vanishing, not exploding.
    J = softmax_jacobian(x)
    assert largest_eigenvalue(J) <= 0.5 + 1e-12
    assert max(math.fsum(abs(v) for v in row) for row in J) <= 0.5 + 1e-15


def test_jacobian_diagonal_keeps_a_tiny_derivative():
    # p_1 (1 - p_1) for [100, 1, 1, 1] is about 3e-43; 1 - p_1 in floats would be 0.
    p = decimal_softmax([100.0, 1.0, 1.0, 1.0])
    exact = float(p[0] * (p[1] + p[2] + p[3]))  # 1 - p_1 without cancellation
    assert_close(softmax_jacobian([100.0, 1.0, 1.0, 1.0])[0][0], exact, rel=4 * U)


# ------------------------------------------------------------------ backward

@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_softmax_backward_equals_jacobian_transpose_times_g(seed):
    rng = random.Random(seed)
    x = random_logits(seed)
    g = [rng.gauss(0, 1) for _ in x]
    J = softmax_jacobian(x)
    expected = [math.fsum(J[i][j] * g[i] for i in range(len(x))) for j in range(len(x))]
    # both sides are within a few ulps of max|g| (|J| <= 1/4 entrywise, n <= 40 terms)
    assert_close(softmax_backward(softmax(x), g), expected, abs=1e-14 * max(map(abs, g)))


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_softmax_backward_equals_finite_differences_of_a_loss(seed):
    rng = random.Random(seed)
    x = random_vector(rng, 7, spread=2.0)
    g = [rng.gauss(0, 1) for _ in x]

    def loss(y):  # L = g . softmax(y), so dL/dp = g
        return math.fsum(gi * pi for gi, pi in zip(g, softmax(y)))

    fd = [central_difference(loss, x, j, h=1e-5) for j in range(len(x))]
    assert_close(softmax_backward(softmax(x), g), fd, abs=1e-9)  # as the Jacobian's test


def test_softmax_backward_does_not_mutate():
    p, g = [0.25, 0.75], [1.0, -1.0]
    softmax_backward(p, g)
    assert p == [0.25, 0.75] and g == [1.0, -1.0]


# -------------------------------------------------- the one-pass (online) normaliser

def fold(xs, state=EMPTY):
    for v in xs:
        state = online_update(state, v)
    return state


@pytest.mark.parametrize("x", ALL_VECTORS)
def test_one_pass_gives_the_same_logsumexp(x):
    # each update rounds d once or twice and each rescale once: about 3 U per element,
    # relative to d, which log turns into an absolute error; plus m + log d's rounding.
    exact = float(decimal_logsumexp(x))
    assert_close(online_logsumexp(fold(x)), exact, abs=(abs(exact) + 3 * len(x) + 2) * U)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_merging_blocks_in_any_split_agrees(seed):
    rng = random.Random(seed)
    x = random_logits(seed) + [-INF]
    cut = rng.randint(0, len(x))
    merged = online_merge(fold(x[:cut]), fold(x[cut:]))
    exact = float(decimal_logsumexp(x))
    assert_close(online_logsumexp(merged), exact, abs=(abs(exact) + 3 * len(x) + 2) * U)
    assert online_merge(EMPTY, merged) == merged == online_merge(merged, EMPTY)


def test_online_update_ignores_masked_logits_and_refuses_bad_ones():
    state = fold([1.0, 2.0])
    assert online_update(state, -INF) == state
    with pytest.raises(ValueError, match="online_update: x is inf; it must be finite"):
        online_update(state, INF)
    with pytest.raises(ValueError, match="online_update: x is nan; it must be finite"):
        online_update(state, math.nan)
    with pytest.raises(TypeError, match="online_update: x is '3', not a real number"):
        online_update(state, "3")
    with pytest.raises(ValueError, match=r"online_logsumexp: the state holds no logit \(m = -inf"):
        online_logsumexp(fold([-INF, -INF]))


def test_online_recurrence_matches_its_formula_step_by_step():
    # d' = d e^(m - m') + e^(x - m'), m' = max(m, x), starting from (x_1, 1)
    state = fold([2.0])
    assert state == Normalizer(2.0, 1.0)
    state = online_update(state, 5.0)  # the max grows: the old sum is rescaled
    assert state == Normalizer(5.0, math.exp(-3.0) + 1.0)
    state = online_update(state, 1.0)
    assert state == Normalizer(5.0, (math.exp(-3.0) + 1.0) + math.exp(-4.0))


def test_rescale_factors_are_the_exponentials_of_the_gaps_and_zero_for_an_empty_side():
    assert rescale_factors(Normalizer(1.0, 3.0), Normalizer(3.0, 1.0)) == (3.0, math.exp(-2.0),
                                                                           1.0)
    assert rescale_factors(EMPTY, EMPTY) == (-INF, 0.0, 0.0)
    assert rescale_factors(EMPTY, Normalizer(3.0, 1.0)) == (3.0, 0.0, 1.0)


def test_a_masked_logit_returns_the_state_exactly_as_given():
    # "A -inf logit leaves the state as it is": not merged as (-inf, 1), so even the sign of
    # an empty state's zero sum comes back as it was given (a merge would give +0.0)
    state = online_update((-INF, -0.0), -INF)
    assert state == EMPTY and math.copysign(1.0, state.d) == -1.0
