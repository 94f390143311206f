"""Tests for attention.py: every step against an independent computation, mask,
bias and causal semantics, the backward pass against finite differences,
streaming against two-pass, additive and multi-head attention, bad input."""

import copy
import math
import random
from fractions import Fraction

import pytest

from attention import (AttentionSteps, additive_attention, additive_attention_cost,
                       attention_backward, attention_steps, dot, dot_product_attention_cost,
                       matmul, multi_head_attention, scaled_dot_product_attention,
                       score_gradient, streaming_attention, transpose)
from oracle import (U, decimal_softmax, fraction_matmul, matrix_gradient, max_abs_diff,
                    random_matrix)

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


def summation_bound(terms):
    """|fl(sum) - sum| <= len * U * sum |term| for any order of float summation."""
    return len(terms) * U * math.fsum(abs(t) for t in terms) + 1e-300


# ------------------------------------------------------------------ helpers

def test_dot_matmul_transpose_against_fractions():
    rng = random.Random(0)
    A, B = random_matrix(rng, 3, 4), random_matrix(rng, 4, 2)
    exact = fraction_matmul(A, B)
    got = matmul(A, B)
    for r in range(3):
        for c in range(2):
            terms = [A[r][t] * B[t][c] for t in range(4)]
            assert abs(got[r][c] - float(exact[r][c])) <= summation_bound(terms)
    assert transpose(A) == [[A[r][c] for r in range(3)] for c in range(4)]
    assert dot([1, 2, 3], [4, 5, 6]) == 32.0
    with pytest.raises(ValueError, match="dot: u has length 2 but v has length 3"):
        dot([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"dot: v\[1\] is inf"):
        dot([0.0, 0.0], [1.0, math.inf])  # 0 * inf would be a silent NaN
    with pytest.raises(ValueError, match="matmul: A is 3x4 and B is 2x4"):
        matmul(A, transpose(B))


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
    assert all(abs(p - e) <= 4 * U * e for p, e in zip(steps.weights[0], expected))
    assert steps.output == [steps.weights[0]]  # V = I: the output is the weight row itself


def test_default_scale_is_one_over_sqrt_dk_and_scale_one_is_unscaled():
    Q, K, V = qkv(0, d_k=16)
    assert attention_steps(Q, K, V).scale == 0.25
    unscaled = attention_steps(Q, K, V, scale=1.0)
    assert unscaled.scaled_scores == unscaled.scores


# ---------------------------------------------------- each step, independently

@pytest.mark.parametrize("seed", range(6))
def test_every_step_matches_an_independent_computation(seed):
    Q, K, V = qkv(seed, n=4, m=6, d_k=8, d_v=3, spread=2.0)
    steps = attention_steps(Q, K, V)
    assert isinstance(steps, AttentionSteps)
    exact_scores = fraction_matmul(Q, transpose(K))  # Q K^T with exact arithmetic
    for i in range(4):
        for j in range(6):
            terms = [Q[i][t] * K[j][t] for t in range(8)]
            assert abs(steps.scores[i][j] - float(exact_scores[i][j])) <= summation_bound(terms)
            assert steps.scaled_scores[i][j] == steps.scores[i][j] * (1 / math.sqrt(8))
        # weights against 50-digit softmax of the scaled scores; bound as in test_softmax
        exact_p = decimal_softmax(steps.scaled_scores[i])
        top = max(steps.scaled_scores[i])
        for s, p, p_star in zip(steps.scaled_scores[i], steps.weights[i], exact_p):
            spread = abs(s - top) + 2 * max(abs(v - top) for v in steps.scaled_scores[i]) + 6
            assert abs(p - float(p_star)) <= spread * U * float(p_star)
        # output against the direct sum_j p_ij v_j, exact from the float weights
        for c in range(3):
            direct = sum(Fraction(steps.weights[i][j]) * Fraction(V[j][c]) for j in range(6))
            terms = [steps.weights[i][j] * V[j][c] for j in range(6)]
            assert abs(steps.output[i][c] - float(direct)) <= summation_bound(terms)


def test_scaled_dot_product_attention_returns_the_output_step():
    Q, K, V = qkv(3)
    assert scaled_dot_product_attention(Q, K, V) == attention_steps(Q, K, V).output


@pytest.mark.parametrize("seed", range(4))
def test_weight_rows_sum_to_one(seed):
    Q, K, V = qkv(seed, n=5, m=9, spread=3.0)
    for row in attention_steps(Q, K, V).weights:
        assert abs(math.fsum(row) - 1.0) <= 40 * U


# ------------------------------------------------------- mask, bias, is_causal

def test_masked_keys_get_weight_exactly_zero_and_vanish_from_the_output():
    Q, K, V = qkv(1, n=2, m=5)
    mask = [[True, False, True, False, True], [False, True, True, True, True]]
    steps = attention_steps(Q, K, V, mask)
    for i, row in enumerate(mask):
        kept = [j for j in range(5) if row[j]]
        assert all(steps.weights[i][j] == 0.0 for j in range(5) if not row[j])
        assert all(steps.scaled_scores[i][j] == -INF for j in range(5) if not row[j])
        alone = scaled_dot_product_attention([Q[i]], [K[j] for j in kept], [V[j] for j in kept])
        assert max_abs_diff([steps.output[i]], alone) <= 1e-15


def test_causal_with_more_keys_than_queries_is_top_left_aligned():
    Q, K, V = qkv(2, n=6, m=9)
    steps = attention_steps(Q, K, V, is_causal=True)
    for i in range(6):
        for j in range(9):
            assert (steps.weights[i][j] > 0.0) == (j <= i)  # query i sees keys 0..i
    assert steps.output[0] == V[0]  # the first query sees only the first key


def test_causal_with_more_queries_than_keys():
    Q, K, V = qkv(4, n=5, m=3)
    steps = attention_steps(Q, K, V, is_causal=True)
    assert steps.weights[0][1:] == [0.0, 0.0]
    assert steps.weights[4] == attention_steps([Q[4]], K, V).weights[0]  # row 4 sees all 3 keys


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
    assert all(abs(p - v / 8.0) <= 4 * U for p, v in zip(steps.weights[0], w))


@pytest.mark.parametrize("kwargs", [
    {"mask": [[True, True], [False, False]]},
    {"mask": [[False, True], [True, True]], "is_causal": True},
    {"bias": [[0.0, 0.0], [-INF, -INF]]},
], ids=["mask", "mask-and-causal", "bias"])
@pytest.mark.parametrize("fn", [attention_steps, scaled_dot_product_attention,
                                streaming_attention])
def test_a_row_with_nothing_to_attend_to_raises_naming_the_row(fn, kwargs):
    Q, K, V = qkv(7, n=2, m=2)
    row = 0 if kwargs.get("is_causal") else 1
    message = fn.__name__ + f".*query row {row} has nothing to attend to"
    with pytest.raises(ValueError, match=message):
        fn(Q, K, V, **kwargs)


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
    "bias-and-causal": {"bias": [[0.1, -0.4, 0.0, 2.0]] * 3, "is_causal": True, "scale": 0.7},
}


@pytest.mark.parametrize("case", BACKWARD_CASES)
@pytest.mark.parametrize("seed", range(3))
def test_backward_equals_central_finite_differences(case, seed):
    kwargs = BACKWARD_CASES[case]
    Q, K, V, G, loss = loss_and_gradients(seed, kwargs)
    dQ, dK, dV = attention_backward(Q, K, V, G, **kwargs)
    # central differences with h = 1e-6: truncation ~h^2, rounding ~U/h; both < 1e-8
    assert max_abs_diff(dQ, matrix_gradient(lambda A: loss(A, K, V), Q)) <= 1e-7
    assert max_abs_diff(dK, matrix_gradient(lambda A: loss(Q, A, V), K)) <= 1e-7
    assert max_abs_diff(dV, matrix_gradient(lambda A: loss(Q, K, A), V)) <= 1e-7


def test_backward_dv_is_p_transpose_times_g_and_masked_scores_get_no_gradient():
    kwargs = BACKWARD_CASES["masked"]
    Q, K, V, G, _ = loss_and_gradients(0, kwargs)
    steps = attention_steps(Q, K, V, **kwargs)
    grads = attention_backward(Q, K, V, G, **kwargs)
    exact = fraction_matmul(transpose(steps.weights), G)
    assert max_abs_diff(grads.dV, [[float(v) for v in row] for row in exact]) <= 1e-15
    dS = score_gradient(steps.weights, V, G)
    assert all(dS[i][j] == 0.0 for i in range(3) for j in range(4) if not kwargs["mask"][i][j])


def test_backward_checks_the_gradient_shape():
    Q, K, V = qkv(0)
    with pytest.raises(ValueError,
                       match="attention_backward: grad_output is 3x3 but the output is 3x2"):
        attention_backward(Q, K, V, [[1.0] * 3] * 3)


# -------------------------------------------------------------------- streaming

STREAM_CASES = {
    "plain": {},
    "masked": {"mask": random_mask(0, 4, 7)},
    "causal": {"is_causal": True},
    "bias-unscaled": {"bias": random_matrix(random.Random(9), 4, 7, 2.0), "scale": 1.0},
}


@pytest.mark.parametrize("case", STREAM_CASES)
@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 7, 8, 100])
def test_streaming_equals_two_pass_for_every_block_size(case, block_size):
    kwargs = STREAM_CASES[case]
    Q, K, V = qkv(11, n=4, m=7, d_k=6, d_v=3, spread=2.0)
    two_pass = scaled_dot_product_attention(Q, K, V, **kwargs)
    one_pass = streaming_attention(Q, K, V, block_size=block_size, **kwargs)
    size = max(abs(v) for row in V for v in row)
    assert max_abs_diff(one_pass, two_pass) <= 1e-12 * size


def test_streaming_survives_a_growing_max_and_large_unscaled_scores():
    # keys ordered so that the running max rises in every block: the rescaling is exercised
    Q = [[1.0, 0.5]]
    K = [[float(j), 0.0] for j in range(40)]
    V = [[float(j % 3), 1.0] for j in range(40)]
    for block_size in (1, 3, 16):
        got = streaming_attention(Q, K, V, scale=20.0, block_size=block_size)
        want = scaled_dot_product_attention(Q, K, V, scale=20.0)
        assert max_abs_diff(got, want) <= 1e-12 * 2.0


def test_streaming_rejects_a_bad_block_size():
    Q, K, V = qkv(0)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="streaming_attention: block_size must be at least 1"):
            streaming_attention(Q, K, V, block_size=bad)
    for bad in (1.5, True, "4", None):
        with pytest.raises(TypeError, match="streaming_attention: block_size must be an int"):
            streaming_attention(Q, K, V, block_size=bad)


# ----------------------------------------------------------- additive attention

def test_additive_attention_matches_a_direct_computation():
    rng = random.Random(3)
    n, m, d_q, d_k, d_a, d_v = 2, 3, 4, 5, 6, 2
    Q, K, V = random_matrix(rng, n, d_q), random_matrix(rng, m, d_k), random_matrix(rng, m, d_v)
    W_q, W_k = random_matrix(rng, d_a, d_q), random_matrix(rng, d_a, d_k)
    w_v = [rng.gauss(0, 1) for _ in range(d_a)]
    got = additive_attention(Q, K, V, W_q, W_k, w_v)
    assert len(got) == n and all(len(row) == d_v for row in got)
    for i in range(n):
        e = []
        for j in range(m):
            hidden = [math.fsum(W_q[a][t] * Q[i][t] for t in range(d_q)) +
                      math.fsum(W_k[a][t] * K[j][t] for t in range(d_k)) for a in range(d_a)]
            e.append(math.fsum(w_v[a] * math.tanh(hidden[a]) for a in range(d_a)))
        p = [float(v) for v in decimal_softmax(e)]
        for c in range(d_v):
            assert abs(got[i][c] - math.fsum(p[j] * V[j][c] for j in range(m))) <= 1e-13


def test_additive_attention_mask_and_shape_errors():
    Q, K, V = [[1.0]], [[1.0], [2.0]], [[5.0], [7.0]]
    assert additive_attention(Q, K, V, [[1.0]], [[1.0]], [1.0], mask=[[False, True]]) == [[7.0]]
    with pytest.raises(ValueError, match="additive_attention: need W_q d_a x d_q"):
        additive_attention(Q, K, V, [[1.0, 2.0]], [[1.0]], [1.0])
    with pytest.raises(ValueError, match="additive_attention: query row 0 has nothing"):
        additive_attention(Q, K, V, [[1.0]], [[1.0]], [1.0], mask=[[False, False]])


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
                                   (8, 16, 64, 64, 32, 64)])
def test_operation_counts_match_a_loop_by_loop_count(sizes):
    n, m, d_q, d_k, d_a, d_v = sizes
    assert tuple(additive_attention_cost(n, m, d_a, d_v)) == \
        count_multiply_adds_and_calls(n, m, d_q, d_k, d_a, d_v, additive=True)
    assert tuple(dot_product_attention_cost(n, m, d_k, d_v)) == \
        count_multiply_adds_and_calls(n, m, d_q, d_k, d_a, d_v, additive=False)


# ------------------------------------------------------------ multi-head attention

def test_one_head_equals_single_head_attention_with_the_same_projections():
    rng = random.Random(8)
    X_q, X_kv = random_matrix(rng, 3, 4), random_matrix(rng, 5, 4)
    W_Q, W_K, W_V, W_O = (random_matrix(rng, 4, 4) for _ in range(4))
    got = multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads=1)
    want = matmul(scaled_dot_product_attention(matmul(X_q, W_Q), matmul(X_kv, W_K),
                                               matmul(X_kv, W_V)), W_O)
    assert max_abs_diff(got, want) <= 1e-14


def test_two_heads_concatenate_attention_over_column_slices():
    rng = random.Random(9)
    X = random_matrix(rng, 4, 6)
    W_Q, W_K, W_V, W_O = (random_matrix(rng, 6, 6) for _ in range(4))
    got = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, num_heads=2, is_causal=True)
    Q, K, V = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)
    heads = []
    for h in range(2):
        cols = slice(3 * h, 3 * h + 3)  # d_k = 6 / 2, and each head scales by 1/sqrt(3)
        heads.append(scaled_dot_product_attention([r[cols] for r in Q], [r[cols] for r in K],
                                                  [r[cols] for r in V], is_causal=True))
    concat = [heads[0][i] + heads[1][i] for i in range(4)]
    assert max_abs_diff(got, matmul(concat, W_O)) <= 1e-14


def test_multi_head_rejects_a_d_model_not_divisible_by_heads():
    I = [[1.0 if r == c else 0.0 for c in range(4)] for r in range(4)]
    with pytest.raises(ValueError, match="W_Q has 4 columns, not divisible by num_heads=3"):
        multi_head_attention(I, I, I, I, I, I, num_heads=3)
    with pytest.raises(ValueError, match="num_heads must be at least 1, not 0"):
        multi_head_attention(I, I, I, I, I, I, num_heads=0)
    with pytest.raises(TypeError, match="num_heads must be an int, not 2.0"):
        multi_head_attention(I, I, I, I, I, I, num_heads=2.0)
    with pytest.raises(ValueError, match="multi_head_attention: mask must be 4x4"):
        multi_head_attention(I, I, I, I, I, I, num_heads=2, mask=[[True] * 3] * 4)


# ------------------------------------------------------------------- bad input

ATTENTION_FUNCTIONS = [attention_steps, scaled_dot_product_attention, streaming_attention]
GOOD = qkv(0, n=2, m=3, d_k=4, d_v=2)


@pytest.mark.parametrize("fn", ATTENTION_FUNCTIONS)
@pytest.mark.parametrize("change, error, message", [
    ({"Q": [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]]}, ValueError,
     "Q is ragged: row 0 has 4 entries but row 1 has 2"),
    ({"Q": []}, ValueError, r"Q is empty \(0 rows\)"),
    ({"K": []}, ValueError, r"K is empty \(0 rows\)"),
    ({"V": []}, ValueError, r"V is empty \(0 rows\)"),
    ({"Q": [[], []], "K": [[], [], []]}, ValueError, r"Q\[0\] is empty"),
    ({"K": [[1.0, 2.0, 3.0]] * 3}, ValueError, "K has 3 columns but Q has 4"),
    ({"V": [[1.0, 2.0]] * 2}, ValueError, "V has 2 rows but K has 3"),
    ({"Q": [[1.0, math.nan, 0.0, 0.0], [0.0] * 4]}, ValueError, r"Q\[0\]\[1\] is nan"),
    ({"K": [[INF, 0.0, 0.0, 0.0]] * 3}, ValueError, r"K\[0\]\[0\] is inf"),
    ({"V": [[0.0, -INF]] * 3}, ValueError, r"V\[0\]\[1\] is -inf"),
    ({"Q": [["1", 0.0, 0.0, 0.0], [0.0] * 4]}, TypeError, r"Q\[0\]\[0\] is '1'"),
    ({"Q": "abc"}, TypeError, "Q must be a list of rows, not str"),
    ({"mask": [[True, True, True]]}, ValueError, "mask must be 2x3"),
    ({"mask": [[1, 0, 1], [1, 1, 1]]}, TypeError, r"mask\[0\]\[0\] is 1 \(int\)"),
    ({"mask": [[1.0, True, True], [True, True, True]]}, TypeError, r"mask\[0\]\[0\] is 1.0"),
    ({"bias": [[0.0, 0.0]] * 2}, ValueError, "bias is 2x2 but must be 2x3"),
    ({"bias": [[math.nan, 0.0, 0.0]] * 2}, ValueError, r"bias\[0\]\[0\] is nan"),
    ({"scale": INF}, ValueError, "scale is inf; it must be finite"),
    ({"scale": math.nan}, ValueError, "scale is nan"),
    ({"scale": "0.5"}, TypeError, "scale must be a real number"),
    ({"is_causal": 1}, TypeError, "is_causal must be True or False"),
])
def test_bad_input_raises_a_clear_error(fn, change, error, message):
    args = dict(zip("QKV", GOOD))
    args.update(change)
    with pytest.raises(error, match=fn.__name__ + ": " + message):
        fn(args.pop("Q"), args.pop("K"), args.pop("V"), **args)


def test_overflowing_scores_raise_instead_of_returning_nan():
    big = [[1e200, 1e200]]
    with pytest.raises(ValueError, match=r"attention_steps: the raw scores Q K\^T is beyond "
                                         r"the float range"):
        attention_steps(big, big, [[1.0]], scale=1.0)
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: logit S\[0\]\[0\] "
                                         r"= scale \* q_0 \. k_0 \+ bias is beyond"):
        scaled_dot_product_attention(big, big, [[1.0]], scale=1.0)


@pytest.mark.parametrize("call", [
    lambda Q, K, V, G, M: attention_steps(Q, K, V, M, bias=[[0.0] * 3] * 2, is_causal=True),
    lambda Q, K, V, G, M: streaming_attention(Q, K, V, M, block_size=2),
    lambda Q, K, V, G, M: attention_backward(Q, K, V, G, M),
    lambda Q, K, V, G, M: score_gradient(attention_steps(Q, K, V).weights, V, G),
    lambda Q, K, V, G, M: additive_attention(Q, K, V, [[1.0] * 4], [[1.0] * 4], [1.0], M),
    lambda Q, K, V, G, M: multi_head_attention(Q, K, [[1.0, 0.0]] * 4, [[1.0, 0.0]] * 4,
                                               [[1.0, 0.0]] * 4, [[1.0], [1.0]], 1, M),
    lambda Q, K, V, G, M: (dot(Q[0], K[0]), matmul(Q, transpose(K))),
])
def test_arguments_are_never_mutated(call):
    Q, K, V = qkv(12, n=2, m=3, d_k=4, d_v=2)
    G = [[1.0, -1.0], [0.5, 2.0]]
    M = [[True, False, True], [True, True, False]]
    originals = copy.deepcopy((Q, K, V, G, M))
    call(Q, K, V, G, M)
    assert (Q, K, V, G, M) == originals
