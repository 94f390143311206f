"""One test per equation or claim of the source documents (shared/documents/).

Each test names, in a comment, the document (by file-name prefix: 000 = the
chapter on Section 3.2.1, 001 = the step-by-step answer, 002 = general sigma and
the [100, 1, 1, 1] example, 003 = the U_i V_i proof, 004 = the causal chain) and
the part it comes from.  Where a document quotes a number that the formulas do
not give, the test pins the computed value and says what was quoted.
"""

import itertools
import math
import random
import statistics
from decimal import Decimal
from fractions import Fraction

import pytest

from attention import (additive_attention, additive_attention_cost, attention_steps,
                       dot_product_attention_cost, dot, scaled_dot_product_attention)
from oracle import U, decimal_softmax, fraction_matmul, random_matrix
from softmax import log_softmax, softmax, softmax_backward, softmax_jacobian
from stats import (DOCUMENT_EXAMPLES, agrees_with_quote, dot_product_variance,
                   exact_dot_product_moments, first_derivative, gradients_of, product_variance,
                   random_trials, sample_dot_products, saturation_of, scale_factor,
                   scaled_variance, spread_table, variance, worked_examples_table)

ZERO_MEAN = {  # zero-mean, unit-variance discrete distributions: (values, probabilities)
    "rademacher": ([-1, 1], None),
    "three-point": ([-2, 0, 2], [Fraction(1, 8), Fraction(3, 4), Fraction(1, 8)]),
    "skewed": ([Fraction(-1, 2), 2], [Fraction(4, 5), Fraction(1, 5)]),
}


def expectation(f, values, probabilities):
    probabilities = probabilities or [Fraction(1, len(values))] * len(values)
    return sum(Fraction(p) * f(Fraction(v)) for v, p in zip(values, probabilities))


# ---------------------------------------------------------------- the formula

def test_attention_is_softmax_of_q_k_transpose_over_sqrt_dk_times_v():
    # 000 (Section 3.2.1: Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V); 001 and 003 intro
    rng = random.Random(0)
    Q, K, V = random_matrix(rng, 3, 4), random_matrix(rng, 5, 4), random_matrix(rng, 5, 2)
    scores = fraction_matmul(Q, [list(col) for col in zip(*K)])  # exact Q K^T
    expected = []
    for row in scores:
        p = decimal_softmax([float(s) / math.sqrt(4) for s in row])
        expected.append([float(sum(Decimal(V[j][c]) * p[j] for j in range(5))) for c in range(2)])
    got = scaled_dot_product_attention(Q, K, V)
    assert all(abs(a - b) <= 1e-14 for ra, rb in zip(got, expected) for a, b in zip(ra, rb))


def test_the_five_steps_scores_scale_mask_softmax_weighted_sum():
    # 000 (the complete flow: Q K^T, divide by sqrt(d_k), optional mask, softmax, weight V)
    Q, K, V = [[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0], [2.0], [3.0]]
    steps = attention_steps(Q, K, V, mask=[[True, True, False]])
    assert steps.scores == [[1.0, 2.0, 3.0]]  # n x m = 1 x 3
    assert steps.scaled_scores == [[1 / math.sqrt(2), 2 / math.sqrt(2), -math.inf]]
    assert steps.weights[0][2] == 0.0 and abs(sum(steps.weights[0]) - 1.0) <= 2 * U
    assert steps.output == [[steps.weights[0][0] * 1.0 + steps.weights[0][1] * 2.0]]


def test_dot_product_is_sum_of_products_and_norms_times_cosine():
    # 000 (prerequisite 1: q . k = sum_i q_i k_i = |q| |k| cos(theta); negative beyond 90 degrees)
    for r1, r2, a, b in [(2.0, 3.0, 0.3, 1.1), (1.0, 5.0, 0.0, 2.0), (4.0, 0.5, 1.0, 1.0)]:
        q, k = [r1 * math.cos(a), r1 * math.sin(a)], [r2 * math.cos(b), r2 * math.sin(b)]
        theta = abs(a - b)
        assert abs(dot(q, k) - r1 * r2 * math.cos(theta)) <= 1e-14 * r1 * r2
        assert (dot(q, k) < 0) == (theta > math.pi / 2)


# ------------------------------------------------------------ variance identities

def test_variance_definition_equals_second_moment_minus_squared_mean():
    # 000 (prerequisite 2: Var(X) = E[(X - E[X])^2] = E[X^2] - (E[X])^2), exact
    values = [Fraction(v) for v in (-3, 0, 1, 1, 4, 10)]
    mu = sum(values) / len(values)
    definition = sum((v - mu) ** 2 for v in values) / len(values)
    shortcut = sum(v * v for v in values) / len(values) - mu * mu
    assert definition == shortcut
    assert abs(variance(values) - float(definition)) <= 2 * U * float(definition)  # two-pass agrees


def test_variance_of_a_times_x_is_a_squared_variance():
    # 000 (Var(aX) = a^2 Var(X))
    data = [Fraction(v) for v in (1, 2, 2, 7)]
    a = Fraction(-3, 2)
    var_x = statistics.pvariance(data)
    assert statistics.pvariance([a * v for v in data]) == scaled_variance(var_x, a) == a * a * var_x


def test_variance_of_a_sum_of_independent_variables_adds():
    # 000 (X, Y independent: Var(X + Y) = Var(X) + Var(Y)); enumerate the joint distribution
    # Exactly through the project's convolution: q . k over d_k = 2 is the sum of two
    # independent copies of q_1 k_1, so its variance is twice that of one copy.
    values, probabilities = [0, 1, 5], [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    one = exact_dot_product_moments(1, values, probabilities).variance
    e1, e2 = (expectation(f, values, probabilities) for f in (lambda v: v, lambda v: v * v))
    assert one == e2 * e2 - (e1 * e1) ** 2 == Fraction(595, 16)  # Var(q_1 k_1) by definition
    assert exact_dot_product_moments(2, values, probabilities).variance == 2 * one
    # and in floats through the two-pass variance, on the enumerated joint distribution
    X, Y = [0.0, 1.0, 5.0], [-2.0, 2.0, 3.0, 3.0]
    joint = [x + y for x, y in itertools.product(X, Y)]  # independent and uniform
    assert abs(variance(joint) - (variance(X) + variance(Y))) <= 8 * U * variance(joint)


# ------------------------------------------------------------- Var(q . k) = d_k

@pytest.mark.parametrize("name", ZERO_MEAN)
def test_expected_dot_product_is_zero(name):
    # 000 (derivation 1: E[q . k] = sum_i E[q_i] E[k_i] = 0)
    values, probabilities = ZERO_MEAN[name]
    assert exact_dot_product_moments(6, values, probabilities).mean == 0


@pytest.mark.parametrize("name", ZERO_MEAN)
def test_cross_terms_have_expectation_zero(name):
    # 000 (derivation 1: for i != j, E[q_i k_i q_j k_j] = E[q_i q_j] E[k_i k_j] = 0), by
    # enumerating q_1, q_2, k_1, k_2; then E[(q.k)^2] keeps only the diagonal sum_i E[q_i^2 k_i^2].
    values, probabilities = ZERO_MEAN[name]
    probabilities = probabilities or [Fraction(1, len(values))] * len(values)
    outcomes = list(zip(map(Fraction, values), probabilities))
    cross = diagonal = Fraction(0)
    for (q1, a), (q2, b), (k1, c), (k2, d) in itertools.product(outcomes, repeat=4):
        weight = a * b * c * d
        cross += weight * q1 * k1 * q2 * k2
        diagonal += weight * (q1 * q1 * k1 * k1 + q2 * q2 * k2 * k2)
    assert cross == 0
    assert exact_dot_product_moments(2, values, probabilities).variance == diagonal == 2


@pytest.mark.parametrize("name", ZERO_MEAN)
def test_var_of_u_times_v_is_e_u_squared_times_e_v_squared(name):
    # 003 (Var(U_i V_i) = E(U_i^2) E(V_i^2), and E(U_i^2) = Var(U_i) + E^2(U_i) = 1)
    values, probabilities = ZERO_MEAN[name]
    e_u2 = expectation(lambda v: v * v, values, probabilities)
    assert e_u2 == 1 and expectation(lambda v: v, values, probabilities) == 0
    assert exact_dot_product_moments(1, values, probabilities).variance == e_u2 * e_u2
    assert product_variance(0, 1, 0, 1) == 1


@pytest.mark.parametrize("d_k", [1, 16, 64, 512])
def test_var_qk_is_dk_and_dividing_by_sqrt_dk_gives_one(d_k):
    # 000 (derivation 1), 001 (steps 2 and 5), 003 (Var(q k) = d_k, Var(q k / sqrt(d_k)) = 1)
    assert exact_dot_product_moments(d_k, [-1, 1]).variance == d_k == dot_product_variance(d_k)
    assert scaled_variance(dot_product_variance(d_k), 1 / math.sqrt(d_k)) == pytest.approx(1, abs=4 * U)
    assert scaled_variance(Fraction(d_k), Fraction(1, d_k)) * d_k == 1  # (1/sqrt(d_k))^2 = 1/d_k


def test_with_component_variance_sigma_squared_the_scale_is_sqrt_dk_sigma_squared():
    # 002 (sections 2.1 and 3.2).  The document writes Var(q . k) = d_k sigma^2 and
    # c = sqrt(d_k) sigma.  With q_i and k_i BOTH of variance sigma^2, Var(q_i k_i) =
    # sigma^4, so Var(q . k) = d_k sigma^4 and the scale that restores 1 is sqrt(d_k) sigma^2.
    # Only when one side has variance sigma^2 and the other 1 is the document's form right.
    d_k, sqrt_dk, sigma = 16, 4, 2  # components +-2: sigma^2 = 4; a square d_k keeps it exact
    both = exact_dot_product_moments(d_k, [-sigma, sigma]).variance
    assert both == dot_product_variance(d_k, var_q=sigma ** 2, var_k=sigma ** 2) == d_k * sigma ** 4
    assert scaled_variance(both, Fraction(1, sqrt_dk * sigma ** 2)) == 1  # 1 / (sqrt(d_k) sigma^2)
    assert scaled_variance(both, Fraction(1, sqrt_dk * sigma)) == sigma ** 2  # 002's c: not 1
    one_side = dot_product_variance(d_k, var_q=sigma ** 2, var_k=1)
    assert one_side == d_k * sigma ** 2 and scaled_variance(one_side, Fraction(1, sqrt_dk * sigma)) == 1


@pytest.mark.parametrize("d_k", [16, 64, 512])
def test_the_alternative_scales_give_one_over_dk_one_and_dk_over_ln_squared(d_k):
    # 000 (derivation 3: divide by d_k -> 1/d_k; by sqrt(d_k) -> 1; by log d_k -> d_k / (log d_k)^2)
    # 004 (section 10: none -> d_k, 1/d_k too uniform, 1/sqrt(d_k) -> 1)
    var = dot_product_variance(d_k)
    assert scaled_variance(Fraction(var), Fraction(1, d_k)) == Fraction(1, d_k)
    assert scaled_variance(var, scale_factor("1/sqrt(d_k)", d_k)) == pytest.approx(1, rel=4 * U)
    assert scaled_variance(var, scale_factor("1/ln(d_k)", d_k)) == pytest.approx(
        d_k / math.log(d_k) ** 2, rel=4 * U)
    assert scaled_variance(var, scale_factor("none", d_k)) == d_k


# ------------------------------------------------------------- softmax derivative

@pytest.mark.parametrize("x", [[1.0, 0.5, -0.5], [8.0, 4.0, -4.0], [2.0, 1.0, 0.0, -1.0]])
def test_softmax_derivative_cases_i_equals_j_and_i_differs_from_j(x):
    # 000 (derivation 2: d s_i / d x_j = s_i (1 - s_i) if i = j, -s_i s_j otherwise);
    # 002 (1.3: s_i (delta_ij - s_j)); 004 (section 4, the Jacobian)
    p = decimal_softmax(x)
    J = softmax_jacobian(x)
    for i in range(len(x)):
        for j in range(len(x)):
            others = sum(p[:i] + p[i + 1:])  # 1 - p_i without cancellation
            exact = p[i] * others if i == j else -p[i] * p[j]
            assert abs(J[i][j] - float(exact)) <= 8 * U * abs(float(exact))


def test_softmax_can_only_shrink_a_gradient():
    # 004 (section 8: vanishing, not exploding; the derivatives are bounded because 0 <= p <= 1).
    # Every |J_ij| <= 1/4 and ||J^T g|| <= ||g|| / 2.  So the "[0.2, 0.3, 0.1, ...]" that 004
    # draws for an unsaturated softmax cannot be entries of its Jacobian: 0.3 > 1/4.
    rng = random.Random(4)
    largest = 0.0
    for _ in range(200):
        x = [rng.gauss(0, rng.choice([0.1, 1.0, 10.0])) for _ in range(rng.randint(2, 8))]
        J = softmax_jacobian(x)
        largest = max(largest, max(abs(v) for row in J for v in row))
        g = [rng.gauss(0, 1) for _ in x]
        out = softmax_backward(softmax(x), g)
        assert math.hypot(*out) <= 0.5 * math.hypot(*g) + 1e-15
    assert largest <= 0.25
    assert softmax_jacobian([0.0, 0.0])[0][0] == 0.25  # the bound is reached at p = 1/2


# ------------------------------------------------------------ worked examples

# value pins: each computed by softmax() and confirmed against 50-digit decimal below
PINNED = {
    (1.0, 0.5, -0.5): ([0.5465, 0.3315, 0.1220], 0.2478),  # 000 quotes [0.506, 0.307, 0.187], 0.250
    (8.0, 4.0, -4.0): ([0.9820, 0.01799, 6.034e-06], 0.01767),  # 000 quotes [0.9997, 0.0003, 0.0000], 0.0003
    (100.0, 1.0, 1.0, 1.0): ([1.0, 1.011e-43, 1.011e-43, 1.011e-43], 3.034e-43),  # 002: 0.999..., 0.000...
    (10.0, 0.1, 0.1, 0.1): ([0.9998, 5.017e-05, 5.017e-05, 5.017e-05], 1.505e-04),  # 002: 0.999..., 0.000...
    (1.0, 0.0): ([0.7311, 0.2689], 0.1966),  # 004 quotes [0.73, 0.27]
    (10.0, 0.0): ([0.99995, 4.540e-05], 4.540e-05),  # 004 quotes [0.9999, 0.0001]
    (2.0, 1.0, 0.0, -1.0): ([0.6439, 0.2369, 0.08714, 0.03206], 0.2293),  # 004 quotes [0.52, 0.28, 0.14, 0.06]
    (20.0, 10.0, 0.0, -10.0): ([0.99995, 4.540e-05, 2.061e-09, 9.357e-14], 4.540e-05),  # 004: [1.00, 0.00, ...]
}


def same_to_4_significant(a, b):
    return a == b == 0 or abs(a - b) <= 5e-4 * max(abs(a), abs(b))


@pytest.mark.parametrize("x", PINNED, ids=lambda x: str(list(x)))
def test_worked_softmax_example_pinned_and_checked_against_decimal(x):
    # 000 (cases 1 and 2), 002 (1.2 numeric example), 004 (sections 2 and 5)
    p, derivative = softmax(list(x)), first_derivative(list(x))
    exact = decimal_softmax(list(x))
    m = max(x)
    for v, pi, pe in zip(x, p, exact):
        assert abs(pi - float(pe)) <= (abs(v - m) + 2 * (m - min(x)) + 6) * U * float(pe)
    exact_derivative = float(exact[0] * sum(exact[1:]))  # p_1 (1 - p_1), no cancellation
    assert abs(derivative - exact_derivative) <= 8 * U * exact_derivative
    pinned_p, pinned_derivative = PINNED[x]
    assert all(same_to_4_significant(a, b) for a, b in zip(p, pinned_p)), p
    assert same_to_4_significant(derivative, pinned_derivative), derivative


def test_the_worked_examples_table_marks_exactly_the_wrong_quotes():
    # 000's two cases, 004's [10, 0] (0.9999 / 0.0001 for 0.99995 / 0.0000454) and
    # 004's [2, 1, 0, -1] (0.52, 0.28, 0.14, 0.06 for 0.64, 0.24, 0.09, 0.03) disagree.
    rows = worked_examples_table()[2:]
    flagged = [ex.logits for ex, row in zip(DOCUMENT_EXAMPLES, rows) if "**no**" in row]
    assert flagged == [(1.0, 0.5, -0.5), (8.0, 4.0, -4.0), (10.0, 0.0), (2.0, 1.0, 0.0, -1.0)]


def test_the_100_1_1_1_example_saturates_and_its_scaled_version_keeps_a_gradient():
    # 002 (1.2: [100, 1, 1, 1] against [10, 0.1, 0.1, 0.1], "similar, but the scaled gradient
    # is more stable"): both are nearly one-hot, yet dp_1/dx_1 is 3.0e-43 against 1.5e-4.
    unscaled, scaled = first_derivative([100.0, 1.0, 1.0, 1.0]), first_derivative([10.0, 0.1, 0.1, 0.1])
    assert agrees_with_quote(softmax([10.0, 0.1, 0.1, 0.1])[0], "0.999...")
    assert -log_softmax([100.0, 1.0, 1.0, 1.0])[0] > 0  # p_1 < 1 exactly, though it rounds to 1.0
    assert scaled / unscaled > 1e38


def test_004_saturated_jacobian_diagonal_is_tiny_and_moderate_one_is_not():
    # 004 (section 6: d s / d z ~ [0.2, ...] unsaturated, ~ [0.00001, 0, 0, ...] saturated)
    moderate = [row[i] for i, row in enumerate(softmax_jacobian([2.0, 1.0, 0.0, -1.0]))]
    saturated = [row[i] for i, row in enumerate(softmax_jacobian([20.0, 10.0, 0.0, -10.0]))]
    assert [round(v, 4) for v in moderate] == [0.2293, 0.1808, 0.0796, 0.031]
    assert max(saturated) < 5e-5 and saturated[3] < 1e-13


# ------------------------------------------------------- standard deviation table

@pytest.mark.parametrize("d_k, quoted", [(64, "8"), (128, "11.3"), (512, "22.6"), (1024, "32")])
def test_standard_deviation_of_qk_is_sqrt_dk(d_k, quoted):
    # 004 (section 3 table), 002 (1.1: 512 -> 22.6, 1024 -> 32), 000 (comparison table)
    std = math.sqrt(dot_product_variance(d_k))
    assert agrees_with_quote(std, quoted)
    assert std == d_k ** 0.5


@pytest.mark.parametrize("doc, d_k, half_width, sigmas", [
    ("000", 64, 24, 3.0), ("000", 512, 68, 3.0), ("004", 64, 16, 2.0), ("004", 128, 23, 2.0),
    ("004", 512, 45, 2.0), ("002", 512, 100, 4.4),
])
def test_quoted_typical_ranges_are_a_fixed_number_of_standard_deviations(doc, d_k, half_width, sigmas):
    # 000 uses +-3 std, 004 +-2 std, 002's "[-100, 100] at d_k = 512" is +-4.4 std.
    # P(|Z| <= k) from NormalDist against erf(k / sqrt 2), an independent formula.
    k = half_width / math.sqrt(d_k)
    assert abs(k - sigmas) <= 0.05
    coverage = 2 * statistics.NormalDist().cdf(k) - 1
    assert abs(coverage - math.erf(k / math.sqrt(2))) <= 1e-12
    assert any(f"| {doc} | {d_k} | q.k |" in row and f"{k:.2f}" in row for row in spread_table())


def test_simulated_scores_have_the_tabulated_spread():
    # 004 (section 3): a sample standard deviation near sqrt(d_k); standard error of the
    # second-moment estimate is sqrt(2 d_k^2 + 6 d_k) / sqrt(n), four of them allowed
    n = 2000
    for d_k in (64, 128):
        xs = sample_dot_products(d_k, n, seed=d_k)
        second = math.fsum(x * x for x in xs) / n
        assert abs(second - d_k) <= 4 * math.sqrt((2 * d_k * d_k + 6 * d_k) / n)


# --------------------------------------------------------------- scale then mask

def test_masking_after_scaling_with_minus_1e9_or_minus_inf_gives_the_same_weights():
    # 000 (the flow: scale first, then mask with -1e9)
    Q, K, V = [[0.3, -1.2], [2.0, 0.5]], [[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]], [[1.0], [2.0], [3.0]]
    mask = [[True, False, True], [False, True, True]]
    with_inf = attention_steps(Q, K, V, mask)
    with_1e9 = attention_steps(Q, K, V, bias=[[0.0 if ok else -1e9 for ok in row] for row in mask])
    assert with_1e9.weights == with_inf.weights  # exp(-1e9 - m) underflows to exactly 0


def test_a_fully_masked_row_is_where_minus_1e9_and_minus_inf_differ():
    # 000 (the -1e9 convention).  Added as a bias, -1e9 shifts the whole row and softmax
    # ignores shifts: the row attends as if unmasked.  Written over the scores (masked_fill),
    # every logit is -1e9 and the row is uniform.  Either way a masked query silently gets
    # weights; with -inf this project raises instead.
    Q, K, V = [[0.3, -1.2]], [[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]], [[1.0], [2.0], [3.0]]
    unmasked = attention_steps(Q, K, V).weights[0]
    added = attention_steps(Q, K, V, bias=[[-1e9] * 3]).weights[0]
    assert max(abs(a - b) for a, b in zip(added, unmasked)) <= 1e-6  # -1e9 rounds the scores
    filled = softmax([-1e9] * 3)
    assert filled == [1 / 3] * 3
    with pytest.raises(ValueError, match="query row 0 has nothing to attend to"):
        attention_steps(Q, K, V, mask=[[False] * 3])


# -------------------------------------------------- the causal chain, end to end

def test_the_causal_chain_from_dk_to_frozen_queries_and_scaling_undoes_each_link():
    # 004 (section 7): larger d_k -> larger score variance -> larger largest weight ->
    # smaller Jacobian -> smaller gradient to Q; dividing by sqrt(d_k) undoes every link.
    links = {}
    for d_k in (16, 1024):
        xs = sample_dot_products(d_k, 400, seed=d_k)
        trials = random_trials(d_k, m=16, trials=30, seed=7 + d_k)
        for name in ("none", "1/sqrt(d_k)"):
            c = scale_factor(name, d_k)
            sat, grad = saturation_of(trials, c), gradients_of(trials, c)
            var = c * c * math.fsum(x * x for x in xs) / len(xs)
            links[d_k, name] = (var, sat.max_weight, sat.jacobian_norm, grad.query_grad_median)
    small, large = links[16, "none"], links[1024, "none"]
    assert large[0] > 30 * small[0]  # variance grows with d_k (theory: 64x)
    assert large[1] > small[1] + 0.15  # the largest weight heads for 1
    assert large[2] < small[2] / 2  # the Jacobian shrinks
    assert large[3] < small[3] / 50  # the typical gradient to Q all but vanishes
    for d_k in (16, 1024):  # scaled: every link level
        var, top, jac, grad = links[d_k, "1/sqrt(d_k)"]
        assert 0.85 < var < 1.15 and 0.15 < top < 0.35 and 0.25 < jac < 0.35 and 0.4 < grad < 1.2


# -------------------------------------------------- additive against dot product

def test_additive_and_dot_product_attention_have_the_same_shapes_in_and_out():
    # 000 (dot-product vs additive attention: score(q, k) = v^T tanh(W_q q + W_k k))
    rng = random.Random(2)
    Q, K, V = random_matrix(rng, 3, 4), random_matrix(rng, 5, 4), random_matrix(rng, 5, 2)
    W_q, W_k, w_v = random_matrix(rng, 6, 4), random_matrix(rng, 6, 4), [rng.gauss(0, 1) for _ in range(6)]
    for out in (scaled_dot_product_attention(Q, K, V), additive_attention(Q, K, V, W_q, W_k, w_v)):
        assert len(out) == 3 and all(len(row) == 2 for row in out)


def test_additive_attention_costs_more_arithmetic_and_a_tanh_per_pair_and_feature():
    # 000 (additive: slower, two matrix products plus tanh).  For n = m = 128, d = 64
    # (d_a = d): dot product 2 n m d + n m multiply-adds; additive adds (n + m) d^2 for the
    # projections and n m d tanh evaluations.
    n = m = 128
    d = 64
    dot_cost = dot_product_attention_cost(n, m, d, d)
    additive_cost = additive_attention_cost(n, m, d, d, d, d)
    assert dot_cost.multiply_adds == 2_113_536 and dot_cost.tanhs == 0
    assert additive_cost.multiply_adds == 4_194_304 and additive_cost.tanhs == 1_048_576
    assert additive_cost.multiply_adds / dot_cost.multiply_adds == pytest.approx(1.98, abs=0.01)
