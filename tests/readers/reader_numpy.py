"""Correct, in NumPy: a query with no key gets zeros, as PyTorch's F.scaled_dot_product_attention.

NumPy is imported inside the functions only so that pytest, which imports every file of
tests/ for its doctests, can do so where NumPy is not installed."""


def softmax(x, axis=-1):
    import numpy as np
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0.0))  # a row of -inf: every e is 0
    Z = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(Z > 0, Z, 1.0)  # ... and so every weight is 0


def attention(Q, K, V, mask=None, is_causal=False):
    import numpy as np
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    S = Q @ K.T / np.sqrt(K.shape[-1])  # ValueError when Q and K differ in d_k
    if mask is not None:
        S = np.where(np.asarray(mask), S, -np.inf)
    if is_causal:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    return softmax(S) @ V  # ValueError when V has not m rows
