"""An optional second opinion from NumPy, run only where NumPy is installed.

The library never imports NumPy; this file checks it against the usual array
formulation of the same equations, written here independently.
"""

import random

import pytest

from attention import attention_backward, scaled_dot_product_attention, streaming_attention
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
