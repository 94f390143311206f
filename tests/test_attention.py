"""Tests for attention.py: every step against an independent computation, mask,
bias and causal semantics (both alignments, and decoding with a cache), the backward
pass against finite differences, streaming against two-pass, additive and multi-head
attention, bad input."""

import copy
import math
import random
import re
from fractions import Fraction

import pytest

from attention import (AttentionSteps, additive_attention, additive_attention_cost,
                       attention_backward, attention_steps, causal_mask, dot,
                       dot_product_attention_cost, matmul, multi_head_attention,
                       scaled_dot_product_attention, score_gradient, streaming_attention,
                       transpose)
from oracles.bounds import dot_bound, softmax_bounds, spread
from tests.helpers import assert_close
from oracles.exact import U, decimal_softmax, fraction_matmul, matrix_gradient, random_matrix
from softmax import LIMIT

INF = math.inf


def qkv(seed, n=3, m=4, d_k=5, d_v=2, spread=1.0):
    rng = random.Random(seed)
    return (random_matrix(rng, n, d_k, spread), random_matrix(rng, m, d_k, spread),
            random_matrix(rng, m, d_v, spread))


def random_mask(seed, n, m):
    """A random n x m bool mask with at least one True per row."""
    rng = random.Random(1000 + seed)
    mask = [[rng.random() < 0.6 for _ in range(m)] for _ in range(n)]
    for row in mask:
        row[rng.randrange(m)] = True
    return mask


# ------------------------------------------------------------ the linear algebra

def test_matmul_is_within_the_dot_product_bound_of_exact_fractions():
    rng = random.Random(0)
    A, B = random_matrix(rng, 3, 4), random_matrix(rng, 4, 2)
    exact = fraction_matmul(A, B)
    got = matmul(A, B)
    for r in range(3):
        for c in range(2):
            column = [B[t][c] for t in range(4)]
            assert_close(got[r][c], float(exact[r][c]), abs=dot_bound(A[r], column))


def test_dot_and_transpose_are_exact_where_the_arithmetic_is():
    assert dot([1, 2, 3], [4, 5, 6]) == 32.0
    assert dot([1e16, 1.0, -1e16], [1.0, 1.0, 1.0]) == 1.0  # fsum: no term is lost
    A = random_matrix(random.Random(1), 3, 4)
    assert transpose(A) == [[A[r][c] for r in range(3)] for c in range(4)]


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed {s}")
def test_dot_is_the_exact_sum_of_the_rounded_products_rounded_once(seed):
    # math.fsum: the same bits on every Python (sum() rounds differently from 3.12 on, and
    # math.sumprod keeps the products in extended precision)
    rng = random.Random(seed)
    u, v = [rng.gauss(0, 1e3) for _ in range(50)], [rng.gauss(0, 1e-3) for _ in range(50)]
    assert dot(u, v) == float(sum(Fraction(a * b) for a, b in zip(u, v)))
    assert matmul([u], [[b] for b in v]) == [[dot(u, v)]]


def test_dot_rounds_each_product_before_the_one_rounding_of_the_sum():
    # as its docstring says: not the correctly rounded u . v.  The exact u . v is
    # (1 + 2^-27)^2 - 1 = 2^-26 + 2^-54, a float; the product rounds to 1 + 2^-26 first.
    u, w = [1 + 2 ** -27, 1.0], [1 + 2 ** -27, -1.0]
    assert dot(u, w) == 2 ** -26


def test_dot_and_matmul_refuse_mismatched_lengths_and_non_finite_entries():
    with pytest.raises(ValueError, match="dot: u has length 2 but v has length 3"):
        dot([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"dot: v\[1\] is inf"):
        dot([0.0, 0.0], [1.0, math.inf])  # 0 * inf would be a silent NaN
    with pytest.raises(ValueError, match=re.escape("matmul: A has 4 columns but B has 2 rows; "
                                                   "A B needs as many columns of A as rows of "
                                                   "B (A is 3x4, B is 2x4)")):
        matmul([[1.0] * 4] * 3, [[1.0] * 4] * 2)


# --------------------------------------------------------- hand-checkable cases

def test_equal_keys_give_uniform_weights_and_the_mean_of_the_values():
    K = [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    V = [[4.0, 0.0], [0.0, 8.0], [2.0, 2.0], [6.0, -2.0]]
    steps = attention_steps([[0.3, -0.7], [5.0, 1.0]], K, V)
    assert steps.weights == [[0.25] * 4, [0.25] * 4]
    assert steps.output == [[3.0, 2.0], [3.0, 2.0]]  # exact: the column means


def test_one_hot_query_against_orthogonal_keys():
    # q = c e_1 against e_1, e_2, e_3: scores [c, 0, 0], scaled [c / sqrt 3, 0, 0],
    # weights [e^a, 1, 1] / (e^a + 2) with a = c / sqrt(3).
    c = 2.0
    K = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    steps = attention_steps([[c, 0.0, 0.0]], K, K)
    a = c / math.sqrt(3)
    assert steps.scores == [[c, 0.0, 0.0]]
    expected = [math.exp(a) / (math.exp(a) + 2), 1 / (math.exp(a) + 2), 1 / (math.exp(a) + 2)]
    assert_close(steps.weights[0], expected, rel=4 * U)  # a few roundings on each side
    assert steps.output == [steps.weights[0]]  # V = I: the output is the weight row itself


def test_default_scale_is_one_over_sqrt_dk_and_scale_one_is_unscaled():
    Q, K, V = qkv(0, d_k=16)
    assert attention_steps(Q, K, V).scale == 0.25
    unscaled = attention_steps(Q, K, V, scale=1.0)
    assert unscaled.scaled_scores == unscaled.scores


# ---------------------------------------------------- each step, independently

@pytest.mark.parametrize("seed", range(6), ids=lambda s: f"seed {s}")
def test_every_step_matches_an_independent_computation(seed):
    Q, K, V = qkv(seed, n=4, m=6, d_k=8, d_v=3, spread=2.0)
    steps = attention_steps(Q, K, V)
    assert isinstance(steps, AttentionSteps)
    exact_scores = fraction_matmul(Q, transpose(K))  # Q K^T with exact arithmetic
    for i in range(4):
        for j in range(6):
            assert_close(steps.scores[i][j], float(exact_scores[i][j]), abs=dot_bound(Q[i], K[j]))
            assert steps.scaled_scores[i][j] == steps.scores[i][j] * (1 / math.sqrt(8))
        # the weights against 50-digit softmax of the scaled scores, within softmax's bound
        for p, (want, bound) in zip(steps.weights[i], softmax_bounds(steps.scaled_scores[i])):
            assert_close(p, want, abs=bound)
        # the output against the exact sum_j p_ij v_j of the float weights
        for c in range(3):
            column = [V[j][c] for j in range(6)]
            direct = sum(Fraction(p) * Fraction(v) for p, v in zip(steps.weights[i], column))
            bound = dot_bound(steps.weights[i], column)
            assert_close(steps.output[i][c], float(direct), abs=bound)


def test_scaled_dot_product_attention_returns_the_output_step():
    Q, K, V = qkv(3)
    assert scaled_dot_product_attention(Q, K, V) == attention_steps(Q, K, V).output


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed {s}")
def test_weight_rows_sum_to_one(seed):
    # as in test_softmax: sum_i p_i is within (2 E_p|x - m| + 7) U of 1
    Q, K, V = qkv(seed, n=5, m=9, spread=3.0)
    steps = attention_steps(Q, K, V)
    for S_i, P_i in zip(steps.scaled_scores, steps.weights):
        _, mean_gap, _ = spread(S_i, decimal_softmax(S_i))
        assert_close(math.fsum(P_i), 1.0, abs=(2 * mean_gap + 7) * U)


# ------------------------------------------------------- mask, bias, is_causal

def test_masked_keys_get_weight_exactly_zero_and_vanish_from_the_output():
    Q, K, V = qkv(1, n=2, m=5)
    mask = [[True, False, True, False, True], [False, True, True, True, True]]
    steps = attention_steps(Q, K, V, mask)
    for i, row in enumerate(mask):
        kept = [j for j in range(5) if row[j]]
        assert all(steps.weights[i][j] == 0.0 for j in range(5) if not row[j])
        assert all(steps.scaled_scores[i][j] == -INF for j in range(5) if not row[j])
        # a weight of exactly 0 adds exactly nothing to the sums: the same bits as without it
        alone = scaled_dot_product_attention([Q[i]], [K[j] for j in kept], [V[j] for j in kept])
        assert [steps.output[i]] == alone


def test_is_causal_is_aligned_top_left_with_more_keys_than_queries():
    Q, K, V = qkv(2, n=6, m=9)
    steps = attention_steps(Q, K, V, is_causal=True)
    for i in range(6):
        for j in range(9):
            assert (steps.weights[i][j] > 0.0) == (j <= i)  # query i sees keys 0..i
    assert steps.output[0] == V[0]  # the first query sees only the first key


def test_is_causal_with_more_queries_than_keys_lets_the_last_queries_see_every_key():
    Q, K, V = qkv(4, n=5, m=3)
    steps = attention_steps(Q, K, V, is_causal=True)
    assert steps.weights[0][1:] == [0.0, 0.0]
    assert steps.weights[4] == attention_steps([Q[4]], K, V).weights[0]  # row 4 sees all 3 keys


@pytest.mark.parametrize("n, m", [(2, 5), (5, 2), (4, 4), (1, 3)],
                         ids=["fewer queries", "more queries", "square", "one query"])
def test_is_causal_equals_the_top_left_causal_mask(n, m):
    Q, K, V = qkv(13, n=n, m=m)
    assert attention_steps(Q, K, V, is_causal=True) == attention_steps(Q, K, V, causal_mask(n, m))


def test_causal_mask_in_both_alignments():
    assert causal_mask(2, 4) == [[True, False, False, False],
                                 [True, True, False, False]]
    assert causal_mask(2, 4, align="bottom-right") == [[True, True, True, False],
                                                       [True, True, True, True]]
    # more queries than keys, bottom-right: the first queries see no key at all
    assert causal_mask(3, 2, align="bottom-right") == [[False, False],
                                                       [True, False],
                                                       [True, True]]
    assert causal_mask(3, 2) == [[True, False], [True, True], [True, True]]


@pytest.mark.parametrize("n", [1, 3, 6], ids=lambda n: f"n={n}")
def test_the_alignments_agree_when_queries_and_keys_are_as_many(n):
    assert causal_mask(n, n) == causal_mask(n, n, align="bottom-right")
    assert causal_mask(n, n) == [[j <= i for j in range(n)] for i in range(n)]


@pytest.mark.parametrize("args, kwargs, error, message", [
    pytest.param((0, 3), {}, ValueError, "n must be at least 1, not 0", id="no queries"),
    pytest.param((2, -1), {}, ValueError, "m must be at least 1, not -1", id="negative keys"),
    pytest.param((2.0, 3), {}, TypeError, "n must be an int, not 2.0", id="a float n"),
    pytest.param((2, True), {}, TypeError, "m must be an int, not True", id="a bool m"),
    pytest.param((2, 3), {"align": "bottom"}, ValueError,
                 "align must be 'top-left' or 'bottom-right', not 'bottom'", id="unknown align"),
    pytest.param((2, 3), {"align": None}, TypeError,
                 "align must be a str, 'top-left' or 'bottom-right', not None", id="align None"),
])
def test_causal_mask_refuses_bad_sizes_and_alignments(args, kwargs, error, message):
    with pytest.raises(error, match="causal_mask: " + message):
        causal_mask(*args, **kwargs)


def test_bottom_right_with_more_queries_than_keys_leaves_a_query_nothing_to_attend_to():
    Q, K, V = qkv(14, n=3, m=2)
    with pytest.raises(ValueError, match="^scaled_dot_product_attention: query row 0 has no key "
                                         "to attend to: the mask is False everywhere in row 0$"):
        scaled_dot_product_attention(Q, K, V, causal_mask(3, 2, align="bottom-right"))


def test_decoding_one_query_against_a_cache_equals_the_last_causal_row():
    # A sequence of m tokens: full causal self-attention (n = m, either alignment), against
    # the newest token's query attending to all m cached keys and values, bottom-right
    # aligned.  Each row is computed alone, so the two agree bit for bit (issue 17).
    m = 7
    Q, K, V = qkv(15, n=m, m=m, d_k=4, d_v=3)
    full = scaled_dot_product_attention(Q, K, V, is_causal=True)
    assert causal_mask(1, m, align="bottom-right") == [[True] * m]  # the newest sees them all
    assert scaled_dot_product_attention(Q[-1:], K, V, causal_mask(1, m, align="bottom-right")) \
        == full[-1:]
    # the top-left alignment (is_causal) would let it see key 0 only
    assert scaled_dot_product_attention(Q[-1:], K, V, is_causal=True) == [V[0]]


@pytest.mark.parametrize("n", [2, 5, 7], ids=lambda n: f"{n} new queries")
def test_the_last_queries_against_a_cache_equal_the_last_causal_rows(n):
    # as above, n tokens at a time (speculative decoding, or a prompt in chunks)
    m = 7
    Q, K, V = qkv(15, n=m, m=m, d_k=4, d_v=3)
    full = scaled_dot_product_attention(Q, K, V, is_causal=True)
    assert scaled_dot_product_attention(Q[-n:], K, V, causal_mask(n, m, align="bottom-right")) \
        == full[-n:]


def test_causal_and_mask_combine_by_and():
    Q, K, V = qkv(5, n=4, m=4)
    mask = [[True, True, True, True], [False, True, True, True],
            [True, False, True, False], [True, True, False, True]]
    combined = attention_steps(Q, K, V, mask, is_causal=True)
    explicit = [[mask[i][j] and j <= i for j in range(4)] for i in range(4)]
    assert combined.weights == attention_steps(Q, K, V, explicit).weights


def test_bias_is_added_to_the_scaled_scores():
    Q, K, V = qkv(6, n=2, m=3)
    bias = [[0.5, -1.0, 0.0], [-INF, 2.0, 1.0]]
    steps = attention_steps(Q, K, V, bias=bias, scale=0.3)
    for i in range(2):
        for j in range(3):
            assert steps.scaled_scores[i][j] == 0.3 * steps.scores[i][j] + bias[i][j]
    assert steps.weights[1][0] == 0.0  # a -inf bias masks like False in the mask


def test_bias_of_log_weights_reweights_keys():
    # adding log w_j to every logit multiplies each unnormalised weight by w_j
    K = [[0.0], [0.0], [0.0]]
    w = [1.0, 2.0, 5.0]
    steps = attention_steps([[1.0]], K, [[1.0], [2.0], [3.0]], bias=[[math.log(v) for v in w]])
    assert_close(steps.weights[0], [v / 8.0 for v in w], abs=4 * U)  # log, exp, sum, divide


FULLY_MASKED = [
    pytest.param({"mask": [[True, True], [False, False]]},
                 "query row 1 has no key to attend to: the mask is False everywhere in row 1",
                 id="mask"),
    pytest.param({"mask": [[False, True], [True, True]], "is_causal": True},
                 "query row 0 has no key to attend to: the mask and is_causal together hide "
                 "every key of row 0", id="mask and is_causal"),
    pytest.param({"mask": [[True, False], [True, True]], "bias": [[-INF, 0.0], [0.0, 0.0]]},
                 "query row 0 has no key to attend to: the mask and bias together hide every "
                 "key of row 0", id="mask and bias"),
    pytest.param({"bias": [[0.0, 0.0], [-INF, -INF]]},
                 "query row 1 has no key to attend to: bias is -inf everywhere in row 1",
                 id="bias"),
]


@pytest.mark.parametrize("kwargs, message", FULLY_MASKED)
@pytest.mark.parametrize("fn", [attention_steps, scaled_dot_product_attention,
                                streaming_attention], ids=lambda f: f.__name__)
def test_a_query_with_nothing_to_attend_to_is_refused_naming_its_row(fn, kwargs, message):
    Q, K, V = qkv(7, n=2, m=2)
    with pytest.raises(ValueError, match="^" + re.escape(f"{fn.__name__}: {message}") + "$"):
        fn(Q, K, V, **kwargs)


@pytest.mark.parametrize("call", [
    pytest.param(lambda M: attention_backward([[1.0]] * 2, [[1.0]] * 2, [[1.0]] * 2,
                                              [[1.0]] * 2, M), id="attention_backward"),
    pytest.param(lambda M: multi_head_attention([[1.0]] * 2, [[1.0]] * 2, [[1.0]], [[1.0]],
                                                [[1.0]], [[1.0]], 1, M),
                 id="multi_head_attention"),
    pytest.param(lambda M: additive_attention([[1.0]] * 2, [[1.0]] * 2, [[1.0]] * 2, [[1.0]],
                                              [[1.0]], [1.0], M), id="additive_attention"),
])
def test_every_masked_function_refuses_a_fully_masked_row(call):
    with pytest.raises(ValueError, match="query row 1 has no key to attend to: the mask is "
                                         "False everywhere in row 1$"):
        call([[True, False], [False, False]])


# ------------------------------------------------------------------- backward

def loss_and_gradients(seed, kwargs, d_k=4):
    Q, K, V = qkv(seed, n=3, m=4, d_k=d_k, d_v=2, spread=1.5)
    G = random_matrix(random.Random(seed + 50), 3, 2)

    def loss(Q_, K_, V_):  # L = sum(O * G), so dL/dO = G
        O = scaled_dot_product_attention(Q_, K_, V_, **kwargs)
        return math.fsum(o * g for ro, rg in zip(O, G) for o, g in zip(ro, rg))

    return Q, K, V, G, loss


BACKWARD_CASES = {
    "scaled": {},
    "unscaled": {"scale": 1.0},
    "masked": {"mask": [[True, False, True, True], [False, True, True, False],
                        [True, True, True, True]]},
    "causal": {"is_causal": True},
    "bias and causal": {"bias": [[0.1, -0.4, 0.0, 2.0]] * 3, "is_causal": True, "scale": 0.7},
}


@pytest.mark.parametrize("case", BACKWARD_CASES)
@pytest.mark.parametrize("seed", range(3), ids=lambda s: f"seed {s}")
def test_backward_equals_central_finite_differences(case, seed):
    kwargs = BACKWARD_CASES[case]
    Q, K, V, G, loss = loss_and_gradients(seed, kwargs)
    dQ, dK, dV = attention_backward(Q, K, V, G, **kwargs)
    # central differences with h = 1e-6: truncation ~h^2, rounding ~U/h; both < 1e-8
    assert_close(dQ, matrix_gradient(lambda A: loss(A, K, V), Q), abs=1e-7)
    assert_close(dK, matrix_gradient(lambda A: loss(Q, A, V), K), abs=1e-7)
    assert_close(dV, matrix_gradient(lambda A: loss(Q, K, A), V), abs=1e-7)


def test_backward_dv_is_p_transpose_times_g_and_masked_scores_get_no_gradient():
    kwargs = BACKWARD_CASES["masked"]
    Q, K, V, G, _ = loss_and_gradients(0, kwargs)
    steps = attention_steps(Q, K, V, **kwargs)
    grads = attention_backward(Q, K, V, G, **kwargs)
    exact = fraction_matmul(transpose(steps.weights), G)  # P^T G from the float weights
    for j, P_j in enumerate(transpose(steps.weights)):
        for t, G_t in enumerate(transpose(G)):
            assert_close(grads.dV[j][t], float(exact[j][t]), abs=dot_bound(P_j, G_t))
    dS = score_gradient(steps.weights, V, G)
    assert all(dS[i][j] == 0.0 for i in range(3) for j in range(4) if not kwargs["mask"][i][j])


def test_score_gradient_is_the_gradient_that_reaches_the_logits():
    # dQ = c dS K: the backward pass goes through score_gradient
    kwargs = BACKWARD_CASES["bias and causal"]
    Q, K, V, G, _ = loss_and_gradients(1, kwargs)
    steps = attention_steps(Q, K, V, **kwargs)
    dS = score_gradient(steps.weights, V, G)
    assert attention_backward(Q, K, V, G, **kwargs).dQ == [[0.7 * v for v in row]
                                                           for row in matmul(dS, K)]


# -------------------------------------------------------------------- streaming

STREAM_CASES = {
    "plain": {},
    "masked": {"mask": random_mask(0, 4, 7)},
    "causal": {"is_causal": True},
    "bias, unscaled": {"bias": random_matrix(random.Random(9), 4, 7, 2.0), "scale": 1.0},
}


@pytest.mark.parametrize("case", STREAM_CASES)
@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 7, 8, 100], ids=lambda b: f"blocks of {b}")
def test_streaming_equals_two_pass_for_every_block_size(case, block_size):
    kwargs = STREAM_CASES[case]
    Q, K, V = qkv(11, n=4, m=7, d_k=6, d_v=3, spread=2.0)
    two_pass = scaled_dot_product_attention(Q, K, V, **kwargs)
    one_pass = streaming_attention(Q, K, V, block_size=block_size, **kwargs)
    # each of at most 7 merges rounds the factors and the running sums a few times:
    # a few dozen U of max|V| (1e-12 leaves a margin of about 100)
    assert_close(one_pass, two_pass, abs=1e-12 * max(abs(v) for row in V for v in row))


def test_streaming_survives_a_growing_max_and_large_unscaled_scores():
    # keys ordered so that the running max rises in every block: the rescaling is exercised
    Q = [[1.0, 0.5]]
    K = [[float(j), 0.0] for j in range(40)]
    V = [[float(j % 3), 1.0] for j in range(40)]
    want = scaled_dot_product_attention(Q, K, V, scale=20.0)
    for block_size in (1, 3, 16):
        got = streaming_attention(Q, K, V, scale=20.0, block_size=block_size)
        assert_close(got, want, abs=1e-12 * 2.0)  # as above, max|V| = 2


def test_streaming_refuses_a_bad_block_size():
    Q, K, V = qkv(0)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="streaming_attention: block_size must be at least 1"):
            streaming_attention(Q, K, V, block_size=bad)
    for bad in (1.5, True, "4", None):
        with pytest.raises(TypeError, match="streaming_attention: block_size must be an int"):
            streaming_attention(Q, K, V, block_size=bad)


def test_the_default_block_size_is_64():
    rng = random.Random(0)  # blocks of 64 and 65 round differently here
    Q, K, V = random_matrix(rng, 2, 3, 3.0), random_matrix(rng, 150, 3, 3.0), random_matrix(
        rng, 150, 4)
    assert streaming_attention(Q, K, V) == streaming_attention(Q, K, V, block_size=64)
    assert streaming_attention(Q, K, V) != streaming_attention(Q, K, V, block_size=65)


# ----------------------------------------------------------- additive attention

def test_additive_attention_matches_a_direct_computation():
    rng = random.Random(3)
    n, m, d_q, d_k, d_a, d_v = 2, 3, 4, 5, 6, 2
    Q, K, V = random_matrix(rng, n, d_q), random_matrix(rng, m, d_k), random_matrix(rng, m, d_v)
    W_q, W_k = random_matrix(rng, d_a, d_q), random_matrix(rng, d_a, d_k)
    w_v = [rng.gauss(0, 1) for _ in range(d_a)]
    want = []
    for i in range(n):
        e = []
        for j in range(m):
            hidden = [math.fsum(W_q[a][t] * Q[i][t] for t in range(d_q)) +
                      math.fsum(W_k[a][t] * K[j][t] for t in range(d_k)) for a in range(d_a)]
            e.append(math.fsum(w_v[a] * math.tanh(hidden[a]) for a in range(d_a)))
        p = [float(v) for v in decimal_softmax(e)]
        want.append([math.fsum(p[j] * V[j][c] for j in range(m)) for c in range(d_v)])
    # e is computed in the same order on both sides, up to its last rounding; softmax of
    # logits within a few units is good to ~10 U: 1e-13 leaves a margin of about 100
    assert_close(additive_attention(Q, K, V, W_q, W_k, w_v), want, abs=1e-13)


def test_additive_attention_masks_and_checks_its_shapes():
    Q, K, V = [[1.0]], [[1.0], [2.0]], [[5.0], [7.0]]
    assert additive_attention(Q, K, V, [[1.0]], [[1.0]], [1.0], mask=[[False, True]]) == [[7.0]]
    with pytest.raises(ValueError, match=re.escape("additive_attention: W_q has 2 columns but "
                                                   "Q has 1; W_q takes a row of Q (Q is 1x1, "
                                                   "W_q is 1x2)")):
        additive_attention(Q, K, V, [[1.0, 2.0]], [[1.0]], [1.0])
    with pytest.raises(ValueError, match=r"additive_attention: w_v\[0\] is nan"):
        additive_attention(Q, K, V, [[1.0]], [[1.0]], [math.nan, 0.0])


def count_multiply_adds_and_calls(n, m, d_q, d_k, d_a, d_v, additive):
    """Walk the loops of each algorithm and count, one operation at a time."""
    madds = exps = tanhs = 0  # projections (X W_Q, W_q q_i, W_k k_j) are counted for neither
    for _ in range(n):
        for _ in range(m):
            if additive:
                for _ in range(d_a):
                    madds += 2  # a + b, then w_v[a] * tanh(...) accumulated
                    tanhs += 1
            else:
                madds += d_k + 1  # q . k, then the scaling
            exps += 1
            madds += d_v  # p_ij v_j accumulated into the output
    return madds, exps, tanhs


@pytest.mark.parametrize("sizes", [(1, 1, 1, 1, 1, 1), (3, 5, 4, 4, 4, 2),
                                   (8, 16, 64, 64, 32, 64)],
                         ids=["all ones", "small", "a transformer's head"])
def test_operation_counts_match_a_loop_by_loop_count(sizes):
    n, m, d_q, d_k, d_a, d_v = sizes
    assert tuple(additive_attention_cost(n, m, d_a, d_v)) == \
        count_multiply_adds_and_calls(n, m, d_q, d_k, d_a, d_v, additive=True)
    assert tuple(dot_product_attention_cost(n, m, d_k, d_v)) == \
        count_multiply_adds_and_calls(n, m, d_q, d_k, d_a, d_v, additive=False)


def test_operation_counts_are_exact_for_large_sizes():
    big = 10 ** 30  # ints never overflow: the counts stay exact
    assert dot_product_attention_cost(big, 1, 1, 1).multiply_adds == 3 * big
    assert additive_attention_cost(1, 1, big, 1) == (2 * big + 1, 1, big)


# ------------------------------------------------------------ multi-head attention
# One dot product everywhere: a head computed by hand with matmul and
# scaled_dot_product_attention sees the same numbers, so the comparisons are exact.

def test_one_head_equals_single_head_attention_with_the_same_projections():
    rng = random.Random(8)
    X_q, X_kv = random_matrix(rng, 3, 4), random_matrix(rng, 5, 4)
    W_Q, W_K, W_V, W_O = (random_matrix(rng, 4, 4) for _ in range(4))
    got = multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads=1)
    assert got == matmul(scaled_dot_product_attention(matmul(X_q, W_Q), matmul(X_kv, W_K),
                                                      matmul(X_kv, W_V)), W_O)


@pytest.mark.parametrize("heads", [2, 3], ids=lambda h: f"{h} heads")
def test_heads_concatenate_attention_over_column_slices(heads):
    rng = random.Random(9)
    X = random_matrix(rng, 4, 6)
    W_Q, W_K, W_V, W_O = (random_matrix(rng, 6, 6) for _ in range(4))
    got = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, num_heads=heads, is_causal=True)
    Q, K, V = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)
    w = 6 // heads  # d_k of each head, and each head scales by its own 1/sqrt(d_k)
    concat = [[] for _ in range(4)]
    for t in range(heads):
        cols = slice(w * t, w * (t + 1))
        head = scaled_dot_product_attention([r[cols] for r in Q], [r[cols] for r in K],
                                            [r[cols] for r in V], is_causal=True)
        concat = [row + h_i for row, h_i in zip(concat, head)]
    assert got == matmul(concat, W_O)


def test_multi_head_refuses_sizes_that_do_not_split_into_heads():
    I = [[1.0 if r == c else 0.0 for c in range(4)] for r in range(4)]
    with pytest.raises(ValueError, match=re.escape("multi_head_attention: W_Q has 4 columns, "
                                                   "which num_heads = 3 does not divide")):
        multi_head_attention(I, I, I, I, I, I, num_heads=3)
    with pytest.raises(ValueError, match="multi_head_attention: num_heads must be at least 1, "
                                         "not 0"):
        multi_head_attention(I, I, I, I, I, I, num_heads=0)
    with pytest.raises(TypeError, match="multi_head_attention: num_heads must be an int, not 2.0"):
        multi_head_attention(I, I, I, I, I, I, num_heads=2.0)
    with pytest.raises(ValueError, match=re.escape("multi_head_attention: mask[0] has 3 "
                                                   "entries but X_kv has 4 rows")):
        multi_head_attention(I, I, I, I, I, I, num_heads=2, mask=[[True] * 3] * 4)


# ------------------------------------------------------------------- bad input

ATTENTION_FUNCTIONS = [attention_steps, scaled_dot_product_attention, streaming_attention]
GOOD = qkv(0, n=2, m=3, d_k=4, d_v=2)
ABOVE_LIMIT = LIMIT * (1 + 2 ** -52)  # the next float above LIMIT


@pytest.mark.parametrize("fn", ATTENTION_FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("change, error, message", [
    pytest.param({"Q": [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]]}, ValueError,
                 r"Q\[1\] has length 2 but Q\[0\] has length 4; the rows of Q must all "
                 "have the same length", id="ragged Q"),
    pytest.param({"Q": []}, ValueError, "Q is empty", id="no queries"),
    pytest.param({"K": []}, ValueError, "K is empty", id="no keys"),
    pytest.param({"V": []}, ValueError, "V is empty", id="no values"),
    pytest.param({"Q": [[], []], "K": [[], [], []]}, ValueError, r"Q\[0\] is empty", id="d_k 0"),
    pytest.param({"K": [[1.0, 2.0, 3.0]] * 3}, ValueError,
                 re.escape("K has 3 columns but Q has 4; queries and keys need the same "
                           "d_k (Q is 2x4, K is 3x3)"), id="K's d_k differs from Q's"),
    pytest.param({"V": [[1.0, 2.0]] * 2}, ValueError,
                 re.escape("V has 2 rows but K has 3; each key needs one row of V (K is "
                           "3x4, V is 2x2)"), id="V has fewer rows than K"),
    pytest.param({"Q": [[1.0, math.nan, 0.0, 0.0], [0.0] * 4]}, ValueError,
                 r"Q\[0\]\[1\] is nan; it must be finite", id="nan in Q"),
    pytest.param({"K": [[INF, 0.0, 0.0, 0.0]] * 3}, ValueError, r"K\[0\]\[0\] is inf",
                 id="inf in K"),
    pytest.param({"V": [[0.0, -INF]] * 3}, ValueError, r"V\[0\]\[1\] is -inf",
                 id="-inf in V"),
    pytest.param({"Q": [[ABOVE_LIMIT, 0.0, 0.0, 0.0], [0.0] * 4]}, ValueError,
                 re.escape(f"Q[0][0] is {ABOVE_LIMIT!r}; it must be at most 2^200 (about "
                           "1.6e+60) in size, so that sums of products stay within the float "
                           "range"),
                 id="Q beyond LIMIT"),
    pytest.param({"Q": [["1", 0.0, 0.0, 0.0], [0.0] * 4]}, TypeError,
                 r"Q\[0\]\[0\] is '1', not a real number", id="a str in Q"),
    pytest.param({"Q": "abc"}, TypeError, "Q must be a list, not str", id="Q a str"),
    pytest.param({"mask": [[True, True, True]]}, ValueError,
                 re.escape("mask has 1 row but Q has 2; mask needs one row per query (Q is "
                           "2x4)"), id="mask with too few rows"),
    pytest.param({"mask": [[True, True, True], [True, 0, True]]}, TypeError,
                 re.escape("mask[1][1] is 0; mask entries must be True (attend) or False"),
                 id="an int in the mask"),
    pytest.param({"mask": [[1.0, True, True], [True, True, True]]}, TypeError,
                 re.escape("mask[0][0] is 1.0; mask entries must be True (attend) or False"),
                 id="a float in the mask"),
    pytest.param({"bias": [[0.0, 0.0]] * 2}, ValueError,
                 re.escape("bias[0] has 2 entries but K has 3 rows; bias needs one entry per "
                           "key (K is 3x4)"), id="bias too narrow"),
    pytest.param({"bias": [[math.nan, 0.0, 0.0]] * 2}, ValueError, r"bias\[0\]\[0\] is nan",
                 id="nan in the bias"),
    pytest.param({"bias": [[INF, 0.0, 0.0]] * 2}, ValueError, r"bias\[0\]\[0\] is inf",
                 id="+inf in the bias"),
    pytest.param({"scale": INF}, ValueError, "scale is inf; it must be finite", id="scale inf"),
    pytest.param({"scale": math.nan}, ValueError, "scale is nan", id="scale nan"),
    pytest.param({"scale": "0.5"}, TypeError, "scale is '0.5', not a real number",
                 id="scale a str"),
    pytest.param({"is_causal": 1}, TypeError, "is_causal must be True or False, not 1",
                 id="is_causal 1"),
])
def test_bad_input_raises_a_clear_error(fn, change, error, message):
    args = dict(zip("QKV", GOOD))
    args.update(change)
    with pytest.raises(error, match="^" + fn.__name__ + ": " + message):
        fn(args.pop("Q"), args.pop("K"), args.pop("V"), **args)


@pytest.mark.parametrize("call", [
    pytest.param(lambda Q, K, V, G, M: attention_steps(Q, K, V, M, bias=[[0.0] * 3] * 2,
                                                       is_causal=True), id="attention_steps"),
    pytest.param(lambda Q, K, V, G, M: streaming_attention(Q, K, V, M, block_size=2),
                 id="streaming_attention"),
    pytest.param(lambda Q, K, V, G, M: attention_backward(Q, K, V, G, M), id="attention_backward"),
    pytest.param(lambda Q, K, V, G, M: score_gradient(attention_steps(Q, K, V).weights, V, G),
                 id="score_gradient"),
    pytest.param(lambda Q, K, V, G, M: additive_attention(Q, K, V, [[1.0] * 4], [[1.0] * 4],
                                                          [1.0], M), id="additive_attention"),
    pytest.param(lambda Q, K, V, G, M: multi_head_attention(
        Q, K, [[1.0, 0.0]] * 4, [[1.0, 0.0]] * 4, [[1.0, 0.0]] * 4, [[1.0], [1.0]], 1, M),
        id="multi_head_attention"),
    pytest.param(lambda Q, K, V, G, M: (dot(Q[0], K[0]), matmul(Q, transpose(K))),
                 id="dot, matmul and transpose"),
])
def test_arguments_are_never_mutated(call):
    Q, K, V = qkv(12, n=2, m=3, d_k=4, d_v=2)
    G = [[1.0, -1.0], [0.5, 2.0]]
    M = [[True, False, True], [True, True, False]]
    originals = copy.deepcopy((Q, K, V, G, M))
    call(Q, K, V, G, M)
    assert (Q, K, V, G, M) == originals


def test_backward_with_one_key_sends_nothing_to_q_and_k_and_do_to_the_value():
    # one key: its weight is exactly 1 whatever the scores, so dS = 0, dQ = dK = 0, and
    # dV = P^T dO is the sum of dO's rows (exact in these dyadic numbers)
    Q, K, V = [[1.0, 2.0], [-3.0, 0.5]], [[0.25, -1.0]], [[2.0, 5.0, -1.0]]
    dO = [[1.0, 2.0, 3.0], [0.5, -4.0, 0.25]]
    dQ, dK, dV = attention_backward(Q, K, V, dO)
    assert dQ == [[0.0, 0.0], [0.0, 0.0]] and dK == [[0.0, 0.0]]
    assert dV == [[1.5, -2.0, 3.25]]
