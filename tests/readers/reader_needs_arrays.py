"""Correct NumPy attention that reads Q.shape, so it fails on lists: the checker suggests
--arrays, with which it passes.

NumPy is imported inside the function, so that pytest can import this file without it."""


def attention(Q, K, V):
    import numpy as np
    n, d_k = Q.shape
    if K.shape[1] != d_k or V.shape[0] != K.shape[0]:
        raise ValueError(f"shapes do not match: Q {Q.shape}, K {K.shape}, V {V.shape}")
    S = Q @ K.T / np.sqrt(d_k)
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True) @ V
