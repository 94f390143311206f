"""An optional second opinion from NumPy, run only where NumPy is installed.

The library never imports NumPy; this file checks it against the usual array
formulation of the same equations, written here independently, and checks that
NumPy users are served: numpy integers where an int is needed, numpy bools in a
mask, and an ndarray either read as rows or refused with a hint to call .tolist().
Without NumPy the whole file is skipped.
"""

import random

import pytest

from attention import (attention_backward, multi_head_attention, scaled_dot_product_attention,
                       streaming_attention)
from oracle import random_matrix
from softmax import log_softmax, softmax

np = pytest.importorskip("numpy")


def numpy_attention(Q, K, V, allowed, scale):
    S = np.where(allowed, scale * (Q @ K.T), -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return S, P, P @ V


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("causal", [False, True])
def test_forward_and_backward_agree_with_numpy(seed, causal):
    rng = random.Random(seed)
    n, m, d_k, d_v = 4, 6, 5, 3
    Q, K, V = random_matrix(rng, n, d_k), random_matrix(rng, m, d_k), random_matrix(rng, m, d_v)
    G = random_matrix(rng, n, d_v)
    mask = [[rng.random() < 0.7 or j == 0 for j in range(m)] for _ in range(n)]
    allowed = np.array(mask) & (np.tril(np.ones((n, m), dtype=bool)) if causal else True)
    scale = d_k ** -0.5
    _, P, O = numpy_attention(np.array(Q), np.array(K), np.array(V), allowed, scale)
    assert np.allclose(scaled_dot_product_attention(Q, K, V, mask, is_causal=causal), O,
                       rtol=1e-13, atol=1e-14)
    assert np.allclose(streaming_attention(Q, K, V, mask, is_causal=causal, block_size=4), O,
                       rtol=1e-12, atol=1e-13)
    Ga, Va = np.array(G), np.array(V)
    dP = Ga @ Va.T
    dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
    dQ, dK, dV = attention_backward(Q, K, V, G, mask, is_causal=causal)
    assert np.allclose(dQ, scale * dS @ np.array(K), rtol=1e-12, atol=1e-13)
    assert np.allclose(dK, scale * dS.T @ np.array(Q), rtol=1e-12, atol=1e-13)
    assert np.allclose(dV, P.T @ Ga, rtol=1e-12, atol=1e-13)


def test_softmax_agrees_with_numpy_and_log_softmax_is_more_accurate_at_the_top():
    x = np.array([100.0, 1.0, 1.0, 1.0])
    shifted = x - x.max()
    numpy_log = shifted - np.log(np.exp(shifted).sum())
    assert np.allclose(softmax(list(x)), np.exp(numpy_log), rtol=1e-15, atol=0)
    assert numpy_log[0] == 0.0  # the array formula loses log p_1 = -3.03e-43 entirely
    assert log_softmax(list(x))[0] < 0.0


# ------------------------------------------------------------- NumPy-friendly input
# The library never imports NumPy, but a NumPy user should not be refused for passing
# numpy.int64 where an int is needed, numpy bools in a mask, or (with a hint to call
# .tolist()) an ndarray.  stats is imported inside each test so that a broken import
# there fails those tests only.

MASK = [[True, False, True], [False, True, True]]
SMALL = ([[1.0, 0.5], [-0.5, 2.0]], [[0.5, -1.0], [1.0, 1.0], [0.0, 0.25]],
         [[1.0, 0.0], [2.0, 1.0], [-3.0, 0.5]])  # Q 2x2, K 3x2, V 3x2


def _stats():
    import importlib
    return importlib.import_module("stats")


def test_numpy_int64_is_accepted_as_d_k_and_counts_in_stats():
    stats = _stats()
    assert stats.dot_product_variance(np.int64(64)) == stats.dot_product_variance(64)
    assert stats.scale_factor("1/sqrt(d_k)", np.int64(64)) == stats.scale_factor("1/sqrt(d_k)", 64)
    assert stats.dot_product_fourth_moment(np.int64(8)) == stats.dot_product_fourth_moment(8)
    assert (stats.variance_standard_error(np.int64(8), np.int64(100))
            == stats.variance_standard_error(8, 100))
    assert (stats.exact_dot_product_moments(np.int64(3), [-1, 1])
            == stats.exact_dot_product_moments(3, [-1, 1]))


def test_numpy_int64_is_accepted_as_a_seed_and_gives_the_same_draws():
    stats = _stats()
    assert (stats.sample_dot_products(np.int64(4), np.int64(3), seed=np.int64(7))
            == stats.sample_dot_products(4, 3, seed=7))
    assert (stats.random_trials(np.int64(2), m=np.int64(3), d_v=np.int64(2),
                                trials=np.int64(2), seed=np.int64(5))
            == stats.random_trials(2, m=3, d_v=2, trials=2, seed=5))


def test_numpy_int64_is_accepted_as_num_heads_and_block_size():
    Q, K, V = SMALL
    eye = [[1.0, 0.0], [0.0, 1.0]]  # every projection the identity
    assert (multi_head_attention(Q, K, eye, eye, eye, eye, np.int64(2))
            == multi_head_attention(Q, K, eye, eye, eye, eye, 2))
    assert (streaming_attention(Q, K, V, block_size=np.int64(2))
            == streaming_attention(Q, K, V, block_size=2))


@pytest.mark.parametrize("kind", ["ndarray of bools", "list of lists of numpy.bool_"])
def test_a_mask_of_numpy_bools_is_accepted(kind):
    Q, K, V = SMALL
    mask = np.array(MASK) if kind == "ndarray of bools" else [[np.bool_(v) for v in row]
                                                               for row in MASK]
    assert scaled_dot_product_attention(Q, K, V, mask) == scaled_dot_product_attention(
        Q, K, V, MASK)
    assert streaming_attention(Q, K, V, mask, block_size=2) == streaming_attention(
        Q, K, V, MASK, block_size=2)
    assert attention_backward(Q, K, V, [[1.0, 0.0], [0.0, 1.0]], mask) == attention_backward(
        Q, K, V, [[1.0, 0.0], [0.0, 1.0]], MASK)


def _accepted_or_told_to_call_tolist(call, expected):
    """An ndarray argument is either read as rows (same answer) or refused with a hint."""
    try:
        result = call()
    except TypeError as error:
        assert ".tolist()" in str(error), f"TypeError without a hint to call .tolist(): {error}"
        return
    assert result == expected


def test_an_ndarray_is_read_as_rows_or_refused_with_a_hint_to_call_tolist():
    Q, K, V = SMALL
    expected = scaled_dot_product_attention(Q, K, V)
    _accepted_or_told_to_call_tolist(
        lambda: scaled_dot_product_attention(np.array(Q), np.array(K), np.array(V)), expected)
    _accepted_or_told_to_call_tolist(lambda: softmax(np.array([1.0, 2.0])), softmax([1.0, 2.0]))
    _accepted_or_told_to_call_tolist(lambda: log_softmax(np.array([1.0, 2.0])),
                                     log_softmax([1.0, 2.0]))
