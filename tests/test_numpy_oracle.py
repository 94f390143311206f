"""An optional second opinion from NumPy, run only where NumPy is installed.

The library never imports NumPy; this file checks it against the usual array
formulation of the same equations, written here independently, and checks that
NumPy users are served: numpy integers where an int is needed, a bool ndarray as a
mask, any ndarray read through .tolist().  Without NumPy the whole file is skipped.
"""

import random

import pytest

from attention import (attention_backward, causal_mask, multi_head_attention,
                       scaled_dot_product_attention, streaming_attention)
from tests.helpers import assert_close
from oracles.exact import random_matrix
from softmax import log_softmax, softmax

np = pytest.importorskip("numpy")


def numpy_attention(Q, K, V, allowed, scale):
    S = np.where(allowed, scale * (Q @ K.T), -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return S, P, P @ V


@pytest.mark.parametrize("seed", range(5), ids=lambda s: f"seed {s}")
@pytest.mark.parametrize("causal", [False, True], ids=["mask", "mask and is_causal"])
def test_forward_and_backward_agree_with_numpy(seed, causal):
    rng = random.Random(seed)
    n, m, d_k, d_v = 4, 6, 5, 3
    Q, K, V = random_matrix(rng, n, d_k), random_matrix(rng, m, d_k), random_matrix(rng, m, d_v)
    G = random_matrix(rng, n, d_v)
    mask = [[rng.random() < 0.7 or j == 0 for j in range(m)] for _ in range(n)]
    allowed = np.array(mask) & (np.tril(np.ones((n, m), dtype=bool)) if causal else True)
    scale = d_k ** -0.5
    _, P, O = numpy_attention(np.array(Q), np.array(K), np.array(V), allowed, scale)
    # NumPy rounds its sums in its own order: agreement to ~1e-15 of entries of size ~1;
    # the tolerances leave a margin of about 100 (streaming and the gradients add steps)
    assert_close(scaled_dot_product_attention(Q, K, V, mask, is_causal=causal), O.tolist(),
                 rel=1e-13, abs=1e-14)
    assert_close(streaming_attention(Q, K, V, mask, is_causal=causal, block_size=4),
                 O.tolist(), rel=1e-12, abs=1e-13)
    Ga, Va = np.array(G), np.array(V)
    dP = Ga @ Va.T
    dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
    dQ, dK, dV = attention_backward(Q, K, V, G, mask, is_causal=causal)
    assert_close(dQ, (scale * dS @ np.array(K)).tolist(), rel=1e-12, abs=1e-13)
    assert_close(dK, (scale * dS.T @ np.array(Q)).tolist(), rel=1e-12, abs=1e-13)
    assert_close(dV, (P.T @ Ga).tolist(), rel=1e-12, abs=1e-13)


def test_softmax_agrees_with_numpy_and_log_softmax_is_more_accurate_at_the_top():
    x = np.array([100.0, 1.0, 1.0, 1.0])
    shifted = x - x.max()
    numpy_log = shifted - np.log(np.exp(shifted).sum())
    assert_close(softmax(x.tolist()), np.exp(numpy_log).tolist(), rel=1e-15)
    assert numpy_log[0] == 0.0  # the array formula loses log p_1 = -3.03e-43 entirely
    assert log_softmax(x.tolist())[0] < 0.0


# ------------------------------------------------------------- NumPy-friendly input
# The library never imports NumPy, but a NumPy user should not be refused for passing
# numpy.int64 where an int is needed, a bool ndarray as a mask, or an ndarray of numbers.
# stats is imported inside each test so that a broken import there fails those tests only.

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
    assert (stats.variance_standard_error(np.int64(8), np.int64(100))
            == stats.variance_standard_error(8, 100))
    assert (stats.exact_dot_product_moments(np.int64(3), [-1, 1])
            == stats.exact_dot_product_moments(3, [-1, 1]))


def test_numpy_int64_is_accepted_as_a_seed_and_gives_the_same_draws():
    stats = _stats()
    assert (stats.sample_dot_products(np.int64(4), np.int64(3), seed=np.int64(7))
            == stats.sample_dot_products(4, 3, seed=7))
    assert (stats.gradient_stats(np.int64(4), m=np.int64(3), trials=np.int64(5), seed=np.int64(5))
            == stats.gradient_stats(4, m=3, trials=5, seed=5))


def test_numpy_int64_is_accepted_as_num_heads_block_size_and_mask_sizes():
    Q, K, V = SMALL
    eye = [[1.0, 0.0], [0.0, 1.0]]  # every projection the identity
    assert (multi_head_attention(Q, K, eye, eye, eye, eye, np.int64(2))
            == multi_head_attention(Q, K, eye, eye, eye, eye, 2))
    assert (streaming_attention(Q, K, V, block_size=np.int64(2))
            == streaming_attention(Q, K, V, block_size=2))
    assert causal_mask(np.int64(2), np.int32(3), align="bottom-right") == causal_mask(
        2, 3, align="bottom-right")


def test_a_bool_ndarray_is_a_mask_and_numpy_bool_scalars_are_refused():
    Q, K, V = SMALL
    mask = np.array(MASK)
    assert scaled_dot_product_attention(Q, K, V, mask) == scaled_dot_product_attention(
        Q, K, V, MASK)
    assert streaming_attention(Q, K, V, mask, block_size=2) == streaming_attention(
        Q, K, V, MASK, block_size=2)
    assert attention_backward(Q, K, V, [[1.0, 0.0], [0.0, 1.0]], mask) == attention_backward(
        Q, K, V, [[1.0, 0.0], [0.0, 1.0]], MASK)
    # a list of numpy.bool_ is not a list of bools: call .tolist() on the array instead
    with pytest.raises(TypeError, match=r"^scaled_dot_product_attention: mask\[0\]\[0\] is "
                                        r"(np\.)?True_?; mask entries must be True \(attend\) "
                                        "or False$"):
        scaled_dot_product_attention(Q, K, V, [[np.bool_(v) for v in row] for row in MASK])
    with pytest.raises(TypeError, match="^scaled_dot_product_attention: is_causal must be True "
                                        "or False, not "):
        scaled_dot_product_attention(Q, K, V, is_causal=np.True_)


def test_an_ndarray_of_numbers_is_read_through_tolist():
    Q, K, V = SMALL
    assert scaled_dot_product_attention(np.array(Q), np.array(K), np.array(V)) == \
        scaled_dot_product_attention(Q, K, V)
    assert softmax(np.array([1.0, 2.0])) == softmax([1.0, 2.0])
    assert log_softmax(np.array([1.0, 2.0])) == log_softmax([1.0, 2.0])
    assert softmax(np.array([1.0, 2.0], dtype=np.float32)) == softmax([1.0, 2.0])


def test_a_float_ndarray_where_an_int_is_needed_is_refused_naming_the_function():
    Q, K, V = SMALL
    with pytest.raises(TypeError, match="streaming_attention: block_size must be an int"):
        streaming_attention(Q, K, V, block_size=np.array([2.0]))


def test_an_ndarray_as_the_alignment_is_refused_naming_the_function():
    with pytest.raises((TypeError, ValueError), match="causal_mask: align"):
        causal_mask(2, 3, align=np.array(["top-left", "bottom-right"]))


@pytest.mark.filterwarnings("error")  # as `python3 -m pytest -W error`: any warning fails
def test_float32_scalars_and_arrays_raise_no_warning():
    # The policy converts each entry with float() before any arithmetic; comparing a
    # numpy.float32 with the limit 2^200 would make NumPy cast the limit to float32 and warn
    # "overflow encountered in cast" (and summing float32 near their maximum would overflow).
    import stats
    big = [np.float32(3e38), np.float32(-3e38), np.float32(1.5)]  # near float32's maximum
    assert softmax(big) == softmax([float(v) for v in big])
    assert log_softmax(np.array(big, dtype=np.float32)) == log_softmax([float(v) for v in big])
    Q = [[np.float32(1.0), np.float32(2.0)], [np.float32(-1.0), np.float32(0.5)]]
    K = [[np.float32(3e38), np.float32(0.0)], [np.float32(0.0), np.float32(1.0)]]
    plain = [[float(v) for v in row] for row in Q], [[float(v) for v in row] for row in K]
    assert scaled_dot_product_attention(Q, K, K) == scaled_dot_product_attention(*plain,
                                                                                 plain[1])
    assert stats.mean(big) == stats.mean([float(v) for v in big])
    assert stats.format_estimate(np.float32(1.5), np.float32(0.25)) == ("1.50", "0.25")
    assert stats.scaled_variance(np.float32(4.0), np.float32(0.5)) == 1.0
