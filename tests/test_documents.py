"""One test per equation, claim or worked number of the source documents.

The documents are named by the short titles of scripts/worked_examples.py (DOCUMENTS):
[Section 3.2.1 explained], [step by step], [general variance], [formal proof] and
[causal chain].  Each test names, in a comment, the document and the part it comes
from, and says where the document is wrong.  The worked examples themselves (logits and
quoted values) are written down only in scripts/worked_examples.py; the tests here check
them against 50-digit decimal.  Not traced: the paper's Table 3 (B) perplexities and BLEU
scores that [Section 3.2.1 explained] quotes (measurements, not computations), and the
documents' outlook paragraphs (T5, ALiBi, linear attention).
"""

import itertools
import math
import os
import random
import statistics
from decimal import Decimal
from fractions import Fraction

import pytest

from attention import (additive_attention, additive_attention_cost, attention_steps,
                       dot_product_attention_cost, dot, scaled_dot_product_attention)
from tests.helpers import assert_close
from oracles.exact import U, decimal_softmax, fraction_matmul, random_matrix
from softmax import log_softmax, softmax, softmax_backward, softmax_jacobian
from stats import (additive_score_variance, dot_product_variance, exact_dot_product_moments,
                   gradient_stats, product_variance, sample_dot_products,
                   sample_projected_dot_products, saturation_stats, scale_factor,
                   scaled_variance, variance, variance_standard_error)
from scripts.worked_examples import (DOCUMENT_EXAMPLES, DOCUMENT_SPREADS, DOCUMENTS,
                                     agrees_with_quote, first_derivative, spread_table,
                                     worked_examples_table)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
    # [Section 3.2.1 explained] (Section 3.2.1: Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V);
    # [step by step] and [formal proof] intro
    rng = random.Random(0)
    Q, K, V = random_matrix(rng, 3, 4), random_matrix(rng, 5, 4), random_matrix(rng, 5, 2)
    scores = fraction_matmul(Q, [list(col) for col in zip(*K)])  # exact Q K^T
    expected = []
    for row in scores:
        p = decimal_softmax([float(s) / math.sqrt(4) for s in row])
        expected.append([float(sum(Decimal(V[j][c]) * p[j] for j in range(5))) for c in range(2)])
    assert_close(scaled_dot_product_attention(Q, K, V), expected, abs=1e-14)


def test_the_five_steps_scores_scale_mask_softmax_weighted_sum():
    # [Section 3.2.1 explained] (the complete flow: Q K^T, divide by sqrt(d_k), optional mask,
    # softmax, weight V)
    Q, K, V = [[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0], [2.0], [3.0]]
    steps = attention_steps(Q, K, V, mask=[[True, True, False]])
    assert steps.scores == [[1.0, 2.0, 3.0]]  # n x m = 1 x 3
    assert steps.scaled_scores == [[1 / math.sqrt(2), 2 / math.sqrt(2), -math.inf]]
    assert steps.weights[0][2] == 0.0
    assert_close(math.fsum(steps.weights[0]), 1.0, abs=2 * U)
    assert steps.output == [[steps.weights[0][0] * 1.0 + steps.weights[0][1] * 2.0]]


def test_dot_product_is_sum_of_products_and_norms_times_cosine():
    # [Section 3.2.1 explained] (prerequisite 1: q . k = sum_i q_i k_i = |q| |k| cos(theta);
    # negative beyond 90 degrees)
    for r1, r2, a, b in [(2.0, 3.0, 0.3, 1.1), (1.0, 5.0, 0.0, 2.0), (4.0, 0.5, 1.0, 1.0)]:
        q, k = [r1 * math.cos(a), r1 * math.sin(a)], [r2 * math.cos(b), r2 * math.sin(b)]
        theta = abs(a - b)
        assert_close(dot(q, k), r1 * r2 * math.cos(theta), abs=1e-14 * r1 * r2)
        assert (dot(q, k) < 0) == (theta > math.pi / 2)


# ------------------------------------------------------------ variance identities

def test_variance_definition_equals_second_moment_minus_squared_mean():
    # [Section 3.2.1 explained] (prerequisite 2: Var(X) = E[(X - E[X])^2] = E[X^2] - (E[X])^2),
    # exact
    values = [Fraction(v) for v in (-3, 0, 1, 1, 4, 10)]
    mu = sum(values) / len(values)
    definition = sum((v - mu) ** 2 for v in values) / len(values)
    shortcut = sum(v * v for v in values) / len(values) - mu * mu
    assert definition == shortcut
    # the project's two-pass variance agrees
    assert_close(variance(values), float(definition), rel=2 * U)


def test_variance_of_a_times_x_is_a_squared_variance():
    # [Section 3.2.1 explained] (Var(aX) = a^2 Var(X))
    data = [Fraction(v) for v in (1, 2, 2, 7)]
    a = Fraction(-3, 2)
    var_x = statistics.pvariance(data)
    scaled = statistics.pvariance([a * v for v in data])
    assert scaled == scaled_variance(var_x, a) == a * a * var_x


def test_variance_of_a_sum_of_independent_variables_adds():
    # [Section 3.2.1 explained] (X, Y independent: Var(X + Y) = Var(X) + Var(Y)); enumerate the
    # joint distribution
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
    assert_close(variance(joint), variance(X) + variance(Y), rel=8 * U)


# ------------------------------------------------------------- Var(q . k) = d_k

@pytest.mark.parametrize("name", ZERO_MEAN)
def test_expected_dot_product_is_zero(name):
    # [Section 3.2.1 explained] (derivation 1: E[q . k] = sum_i E[q_i] E[k_i] = 0)
    values, probabilities = ZERO_MEAN[name]
    assert exact_dot_product_moments(6, values, probabilities).mean == 0


@pytest.mark.parametrize("name", ZERO_MEAN)
def test_cross_terms_have_expectation_zero(name):
    # [Section 3.2.1 explained] (derivation 1: for i != j, E[q_i k_i q_j k_j] = E[q_i q_j] E[k_i
    # k_j] = 0), by
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
    # [formal proof] (Var(U_i V_i) = E(U_i^2) E(V_i^2), and E(U_i^2) = Var(U_i) + E^2(U_i) = 1)
    values, probabilities = ZERO_MEAN[name]
    e_u2 = expectation(lambda v: v * v, values, probabilities)
    assert e_u2 == 1 and expectation(lambda v: v, values, probabilities) == 0
    assert exact_dot_product_moments(1, values, probabilities).variance == e_u2 * e_u2
    assert product_variance(0, 1, 0, 1) == 1


@pytest.mark.parametrize("d_k", [1, 16, 64, 512], ids=lambda d: f"d_k={d}")
def test_var_qk_is_dk_and_dividing_by_sqrt_dk_gives_one(d_k):
    # [Section 3.2.1 explained] (derivation 1), [step by step] (steps 2 and 5), [formal proof]
    # (Var(q k) = d_k, Var(q k / sqrt(d_k)) = 1)
    assert exact_dot_product_moments(d_k, [-1, 1]).variance == d_k == dot_product_variance(d_k)
    scaled = scaled_variance(dot_product_variance(d_k), 1 / math.sqrt(d_k))
    assert_close(scaled, 1.0, abs=4 * U)
    assert scaled_variance(Fraction(d_k), Fraction(1, d_k)) * d_k == 1  # (1/sqrt(d_k))^2 = 1/d_k


def test_with_component_variance_sigma_squared_the_scale_is_sqrt_dk_sigma_squared():
    # [general variance] (sections 2.1 and 3.2).  The document writes Var(q . k) = d_k sigma^2 and
    # c = sqrt(d_k) sigma.  With q_i and k_i BOTH of variance sigma^2, Var(q_i k_i) =
    # sigma^4, so Var(q . k) = d_k sigma^4 and the scale that restores 1 is sqrt(d_k) sigma^2.
    # Only when one side has variance sigma^2 and the other 1 is the document's form right.
    d_k, sqrt_dk, sigma = 16, 4, 2  # components +-2: sigma^2 = 4; a square d_k keeps it exact
    both = exact_dot_product_moments(d_k, [-sigma, sigma]).variance
    formula = dot_product_variance(d_k, var_q=sigma ** 2, var_k=sigma ** 2)
    assert both == formula == d_k * sigma ** 4
    assert scaled_variance(both, Fraction(1, sqrt_dk * sigma ** 2)) == 1  # 1 / (sqrt(d_k) sigma^2)
    # [general variance]'s c gives sigma^2, not 1
    assert scaled_variance(both, Fraction(1, sqrt_dk * sigma)) == sigma ** 2
    one_side = dot_product_variance(d_k, var_q=sigma ** 2, var_k=1)
    assert one_side == d_k * sigma ** 2
    assert scaled_variance(one_side, Fraction(1, sqrt_dk * sigma)) == 1


@pytest.mark.parametrize("d_k", [16, 64, 512], ids=lambda d: f"d_k={d}")
def test_the_alternative_scales_give_one_over_dk_one_and_dk_over_ln_squared(d_k):
    # [Section 3.2.1 explained] (derivation 3: divide by d_k -> 1/d_k; by sqrt(d_k) -> 1; by log
    # d_k -> d_k / (log d_k)^2)
    # [causal chain] (section 10: no scale -> d_k, 1/d_k too uniform, 1/sqrt(d_k) -> 1)
    var = dot_product_variance(d_k)
    assert scaled_variance(Fraction(var), Fraction(1, d_k)) == Fraction(1, d_k)
    assert_close(scaled_variance(var, scale_factor("1/sqrt(d_k)", d_k)), 1.0, rel=4 * U)
    assert_close(scaled_variance(var, scale_factor("1/ln(d_k)", d_k)), d_k / math.log(d_k) ** 2,
                 rel=6 * U)
    assert scaled_variance(var, scale_factor("1", d_k)) == d_k


# ------------------------------------------------------------- softmax derivative

@pytest.mark.parametrize("x", [[1.0, 0.5, -0.5], [8.0, 4.0, -4.0], [2.0, 1.0, 0.0, -1.0]],
                         ids=str)
def test_softmax_derivative_cases_i_equals_j_and_i_differs_from_j(x):
    # [Section 3.2.1 explained] (derivation 2: d s_i / d x_j = s_i (1 - s_i) if i = j, -s_i s_j
    # otherwise);
    # [general variance] (1.3: s_i (delta_ij - s_j)); [causal chain] (section 4, the Jacobian)
    p = decimal_softmax(x)
    J = softmax_jacobian(x)
    for i in range(len(x)):
        for j in range(len(x)):
            others = sum(p[:i] + p[i + 1:])  # 1 - p_i without cancellation
            exact = p[i] * others if i == j else -p[i] * p[j]
            assert_close(J[i][j], float(exact), rel=8 * U)


def test_softmax_can_only_shrink_a_gradient():
    # [causal chain] (section 8: vanishing, not exploding; the derivatives are bounded because 0 <=
    # p <= 1).
    # Every |J_ij| <= 1/4 and ||J^T g|| <= ||g|| / 2.  So the "[0.2, 0.3, 0.1, ...]" that [causal
    # chain]
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

def exact_first_derivative(x):
    p = decimal_softmax(list(x))
    return p[0] * sum(p[1:])  # p_1 (1 - p_1) without cancellation


def quote_agrees_with_decimal(value, quoted):
    # the quote read against the 50-digit value: a "..." quote gives its leading digits
    if quoted.endswith("..."):
        low = Decimal(quoted[:-3])
        return low <= value < low + Decimal(10) ** -len(quoted[:-3].split(".")[1])
    return Decimal(quoted).quantize(Decimal(1).scaleb(-len(quoted.split(".")[1]))) == \
        value.quantize(Decimal(1).scaleb(-len(quoted.split(".")[1])))


@pytest.mark.parametrize("ex", DOCUMENT_EXAMPLES, ids=lambda ex: str(list(ex.logits)))
def test_worked_softmax_example_matches_decimal(ex):
    # [Section 3.2.1 explained] (cases 1 and 2), [general variance] (1.2 numeric example),
    # [causal chain] (sections 2 and 5): softmax and p_1 (1 - p_1) against 50-digit decimal
    x = list(ex.logits)
    p, derivative, exact = softmax(x), first_derivative(x), decimal_softmax(x)
    m = max(x)
    for v, pi, pe in zip(x, p, exact):  # oracles/bounds.py's bound, with E_p|x - m| <= m - min x
        assert_close(pi, float(pe), rel=(abs(v - m) + (m - min(x)) + 6) * U)
    assert_close(derivative, float(exact_first_derivative(x)), rel=8 * U)


def test_the_worked_examples_table_marks_exactly_the_quotes_decimal_contradicts():
    # A row is flagged "**no**" exactly when some quoted value, read at its printed
    # precision, disagrees with the 50-digit value.  Four rows disagree: both cases of
    # [Section 3.2.1 explained], and [10, 0] and [2, 1, 0, -1] of [causal chain].
    rows = worked_examples_table().splitlines()[2:]
    flagged = ["**no**" in row for row in rows]
    wrong = []
    for ex in DOCUMENT_EXAMPLES:
        exact = decimal_softmax(list(ex.logits))
        ok = all(quote_agrees_with_decimal(v, q) for v, q in zip(exact, ex.quoted_p))
        if ex.quoted_derivative is not None:
            ok = ok and quote_agrees_with_decimal(exact_first_derivative(ex.logits),
                                                  ex.quoted_derivative)
        wrong.append(not ok)
    assert flagged == wrong and sum(wrong) == 4


def test_every_quote_names_a_known_document():
    # scripts/worked_examples.py: each example and spread row cites a document by its title
    cited = {ex.document for ex in DOCUMENT_EXAMPLES} | {row.document for row in DOCUMENT_SPREADS}
    assert cited <= set(DOCUMENTS) and len(DOCUMENTS) == 5


def test_the_documents_page_lists_exactly_the_documents():
    # docs/documents.md describes each document in a table whose first column is its title
    with open(os.path.join(ROOT, "docs", "documents.md"), encoding="utf-8") as f:
        rows = [line.split(" | ")[0].strip("| ") for line in f if line.startswith("| ")]
    assert tuple(rows[1:]) == DOCUMENTS  # the header's "title" first


def test_the_100_1_1_1_example_saturates_and_its_scaled_version_keeps_a_gradient():
    # [general variance] (1.2: [100, 1, 1, 1] against [10, 0.1, 0.1, 0.1], "similar, but the scaled
    # gradient
    # is more stable"): both are nearly one-hot, yet dp_1/dx_1 is 3.0e-43 against 1.5e-4.
    unscaled = first_derivative([100.0, 1.0, 1.0, 1.0])
    scaled = first_derivative([10.0, 0.1, 0.1, 0.1])
    assert agrees_with_quote(softmax([10.0, 0.1, 0.1, 0.1])[0], "0.999...")
    assert -log_softmax([100.0, 1.0, 1.0, 1.0])[0] > 0  # p_1 < 1 exactly, though it rounds to 1.0
    assert scaled / unscaled > 1e38


def test_004_saturated_jacobian_diagonal_is_tiny_and_moderate_one_is_not():
    # [causal chain] (section 6: d s / d z ~ [0.2, ...] unsaturated, ~ [0.00001, 0, 0, ...]
    # saturated)
    moderate = [row[i] for i, row in enumerate(softmax_jacobian([2.0, 1.0, 0.0, -1.0]))]
    saturated = [row[i] for i, row in enumerate(softmax_jacobian([20.0, 10.0, 0.0, -10.0]))]
    assert [round(v, 4) for v in moderate] == [0.2293, 0.1808, 0.0796, 0.031]
    assert max(saturated) < 5e-5 and saturated[3] < 1e-13


# ------------------------------------------------------- standard deviation table

@pytest.mark.parametrize("row", DOCUMENT_SPREADS,
                         ids=lambda r: f"{r.document}-{r.d_k}-{'scaled' if r.scaled else 'raw'}")
def test_standard_deviation_of_qk_is_sqrt_dk(row):
    # [causal chain] (section 3 table), [general variance] (1.1), [Section 3.2.1 explained]
    # (comparison table): every quoted std of the score reads as sqrt(d_k), or 1 scaled
    std = math.sqrt(dot_product_variance(row.d_k))
    assert std == row.d_k ** 0.5
    assert agrees_with_quote(1.0 if row.scaled else std, row.quoted_std)


SIGMAS_USED = {"Section 3.2.1 explained": 3.0, "causal chain": 2.0, "general variance": 4.4}
RANGES = [row for row in DOCUMENT_SPREADS if row.quoted_range is not None]


@pytest.mark.parametrize("row", RANGES, ids=lambda r: f"{r.document}-{r.d_k}-{r.quoted_range:g}")
def test_quoted_typical_ranges_are_a_fixed_number_of_standard_deviations(row):
    # [Section 3.2.1 explained] uses +-3 std, [causal chain] +-2 std, and [general variance]'s
    # "[-100, 100] at d_k = 512" is +-4.4 std.  P(|Z| <= k) from NormalDist against
    # erf(k / sqrt 2), an independent formula.
    std = 1.0 if row.scaled else math.sqrt(row.d_k)
    k = row.quoted_range / std
    assert_close(k, SIGMAS_USED[row.document], abs=0.05)
    coverage = 2 * statistics.NormalDist().cdf(k) - 1
    assert_close(coverage, math.erf(k / math.sqrt(2)), abs=1e-12)
    assert any(f"| {row.document} | {row.d_k} |" in line and f"| {k:.2f} |" in line
               and f"| {coverage:.5f} |" in line for line in spread_table().splitlines())


def test_simulated_scores_have_the_tabulated_spread():
    # [causal chain] (section 3): a sample standard deviation near sqrt(d_k); standard error of the
    # second-moment estimate is sqrt(2 d_k^2 + 6 d_k) / sqrt(n), four of them allowed
    n = 1000
    for d_k in (64, 128):
        xs = sample_dot_products(d_k, n, seed=d_k)
        second = math.fsum(x * x for x in xs) / n
        assert_close(second, d_k, abs=4 * math.sqrt((2 * d_k * d_k + 6 * d_k) / n))


# --------------------------------------------------------------- scale then mask

def test_masking_after_scaling_with_minus_1e9_or_minus_inf_gives_the_same_weights():
    # [Section 3.2.1 explained] (the flow: scale first, then mask with -1e9)
    Q, K = [[0.3, -1.2], [2.0, 0.5]], [[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]]
    V = [[1.0], [2.0], [3.0]]
    mask = [[True, False, True], [False, True, True]]
    with_inf = attention_steps(Q, K, V, mask)
    with_1e9 = attention_steps(Q, K, V, bias=[[0.0 if ok else -1e9 for ok in row] for row in mask])
    assert with_1e9.weights == with_inf.weights  # exp(-1e9 - m) underflows to exactly 0


def test_a_fully_masked_row_is_where_minus_1e9_and_minus_inf_differ():
    # [Section 3.2.1 explained] (the -1e9 convention).  Added as a bias, -1e9 shifts the whole row
    # and softmax
    # ignores shifts: the row attends as if unmasked.  Written over the scores (masked_fill),
    # every logit is -1e9 and the row is uniform.  Either way a masked query silently gets
    # weights; with -inf this project raises instead.
    Q, K, V = [[0.3, -1.2]], [[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]], [[1.0], [2.0], [3.0]]
    unmasked = attention_steps(Q, K, V).weights[0]
    added = attention_steps(Q, K, V, bias=[[-1e9] * 3]).weights[0]
    assert_close(added, unmasked, abs=1e-6)  # -1e9 rounds the scores to ulp(1e9) = 1.2e-7
    assert added != unmasked
    filled = softmax([-1e9] * 3)
    assert filled == [1 / 3] * 3
    with pytest.raises(ValueError, match="attention_steps: query row 0 has no key to attend "
                                         "to: the mask is False everywhere in row 0"):
        attention_steps(Q, K, V, mask=[[False] * 3])


# -------------------------------------------------- the causal chain, end to end

def test_the_causal_chain_from_dk_to_frozen_queries_and_scaling_undoes_each_link():
    # [causal chain] (section 7): larger d_k -> larger score variance -> larger largest weight ->
    # smaller Jacobian -> smaller gradient to Q; dividing by sqrt(d_k) undoes every link.
    # At initialisation, with independent N(0, 1) components.  Each link is a mean with its
    # standard error (the variance: sqrt((2 d_k^2 + 6 d_k) / n)) or a median with its 95%
    # interval; "apart" means more than four standard errors, or intervals that do not meet.
    n, rows = 400, 300
    links = {}
    for d_k in (16, 1024):
        xs = sample_dot_products(d_k, n, seed=d_k)
        for name in ("1", "1/sqrt(d_k)"):
            c = scale_factor(name, d_k)
            options = dict(m=16, trials=rows, seed=7 + d_k)  # the same rows for both scales
            sat = saturation_stats(d_k, name, **options)
            var = (c * c * math.fsum(x * x for x in xs) / n,
                   c * c * variance_standard_error(d_k, n))
            links[d_k, name] = (var, sat.max_weight, sat.jacobian_norm,
                                gradient_stats(d_k, name, **options).query_grad)

    def apart(a, b):
        return (a[0] - b[0]) / math.hypot(a[1], b[1])

    small, large = links[16, "1"], links[1024, "1"]
    assert apart(large[0], small[0]) > 4  # the variance grows with d_k (theory: 64 times)
    assert apart(large[1], small[1]) > 4  # the largest weight heads for 1
    assert apart(small[2], large[2]) > 4  # the Jacobian shrinks
    assert small[3].low > 50 * large[3].high  # the typical gradient to Q all but vanishes
    for d_k in (16, 1024):  # scaled: every link level
        var, top, jac, grad = links[d_k, "1/sqrt(d_k)"]
        assert_close(var[0], 1.0, abs=4 * var[1])
        assert 0.15 < top[0] < 0.35 and 0.25 < jac[0] < 0.35 and 0.4 < grad.median < 1.2
    (a, se_a), (b, se_b) = (links[d_k, "1/sqrt(d_k)"][1] for d_k in (16, 1024))
    assert_close(a, b, abs=4 * math.hypot(se_a, se_b))


def test_dividing_by_d_k_makes_the_initial_weights_nearly_uniform():
    # [Section 3.2.1 explained] (derivation 3: dividing by d_k, the variance 1/d_k vanishes and
    # the scores are "too concentrated") and [causal chain] (section 10: "too uniform").  True
    # at initialisation: at d_k = 1024 the logits have variance 1/1024 and the weights sit
    # within about 0.01 of 1/16.  After training q and k correlate and c q . k = rho under
    # 1/d_k, O(1) (stats.correlated_logits; docs/derivations.md section 7).
    sat = saturation_stats(1024, "1/d_k", m=16, trials=300, seed=5)
    assert_close(sat.max_weight[0], 1 / 16, abs=0.01)
    assert_close(sat.entropy[0], math.log(16), abs=1e-3)


def test_layer_norm_and_independent_projections_give_the_assumed_unit_components():
    # [Section 3.2.1 explained] (the assumptions: q = x W^Q, k = x W^K with W^Q and W^K drawn
    # independently, components of mean 0 and variance 1, "approximately met through
    # LayerNorm"): given a LayerNorm-ed x and W of N(0, 1/d_model) entries, q_c and k_c are
    # exactly N(0, 1) and independent, so Var(q . k) = d_k, within four standard errors
    d_k, n = 16, 400
    xs = sample_projected_dot_products(d_k, n, d_model=16, seed=3)
    assert_close(math.fsum(x * x for x in xs) / n, d_k, abs=4 * variance_standard_error(d_k, n))


# -------------------------------------------------- additive against dot product

def test_additive_attention_also_needs_a_scale_when_w_v_has_unit_variance():
    # [Section 3.2.1 explained] (additive attention "needs no scaling, tanh normalises by
    # itself"): wrong.  tanh bounds each of the d_a units, not their sum: with w_v ~ N(0, 1)
    # Var(e) = d_a E[tanh(u)^2] grows like d_a, as Var(q . k) grows like d_k; w_v of variance
    # 1/d_a (a fan-in scale) brings it below 1.  Four standard errors (the estimate's own).
    small, large = (additive_score_variance(d_a, 400, d=16, seed=2) for d_a in (8, 64))
    assert_close(large.variance / small.variance, 8.0, abs=4 * 8.0 * math.hypot(
        small.standard_error / small.variance, large.standard_error / large.variance))
    assert large.variance > 20  # far from "normalised"
    fan_in = additive_score_variance(64, 400, d=16, sigma_w=64 ** -0.5, seed=2)
    assert fan_in.variance < 1


def test_additive_and_dot_product_attention_have_the_same_shapes_in_and_out():
    # [Section 3.2.1 explained] (dot-product vs additive attention: score(q, k) = v^T tanh(W_q q +
    # W_k k))
    rng = random.Random(2)
    Q, K, V = random_matrix(rng, 3, 4), random_matrix(rng, 5, 4), random_matrix(rng, 5, 2)
    W_q, W_k = random_matrix(rng, 6, 4), random_matrix(rng, 6, 4)
    w_v = [rng.gauss(0, 1) for _ in range(6)]
    for out in (scaled_dot_product_attention(Q, K, V), additive_attention(Q, K, V, W_q, W_k, w_v)):
        assert len(out) == 3 and all(len(row) == 2 for row in out)


def test_additive_attention_costs_more_arithmetic_and_a_tanh_per_pair_and_feature():
    # [Section 3.2.1 explained] (additive: slower, a small network per pair).  The
    # projections are counted for neither kind.  For n = m = 128 and d_k = d_a = d_v = 64:
    # dot product n m d_k (Q K^T) + n m (scale) + n m d_v (P V) multiply-adds; additive
    # 2 n m d_a (add a_i + b_j, dot with w_v) + n m d_v, and n m d_a tanh evaluations.
    n = m = 128
    d = 64
    dot_cost = dot_product_attention_cost(n, m, d, d)
    additive_cost = additive_attention_cost(n, m, d, d)
    assert dot_cost.multiply_adds == 128 * 128 * (64 + 1 + 64) == 2_113_536
    assert dot_cost.tanhs == 0
    assert additive_cost.multiply_adds == 128 * 128 * (2 * 64 + 64) == 3_145_728
    assert additive_cost.tanhs == 128 * 128 * 64 == 1_048_576
