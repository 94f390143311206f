"""Wrong, in NumPy: softmax without the max-shift; exp gives inf at logits near 1e3 and 0 at
logits near -1e3, and the weights become NaN, silently (NumPy only warns)."""


def attention(Q, K, V):
    import numpy as np  # inside, so that pytest can import this file without NumPy
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    S = Q @ K.T / np.sqrt(K.shape[-1])
    e = np.exp(S)
    return e / e.sum(axis=-1, keepdims=True) @ V
