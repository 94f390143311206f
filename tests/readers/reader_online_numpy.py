"""Correct one-pass attention in NumPy, FlashAttention's tiling: all queries at once, one
block of keys at a time, the running max m, denominator l and output acc per query.  It
takes no mask.

NumPy is imported inside the function, so that pytest can import this file without it."""


def flash_attention(Q, K, V, block_size):
    import numpy as np
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has {K.shape[0]} rows but V has {V.shape[0]}")
    n, d_k = Q.shape
    m_i = np.full((n, 1), -np.inf)
    l_i = np.zeros((n, 1))
    acc = np.zeros((n, V.shape[1]))
    for start in range(0, K.shape[0], block_size):
        S = Q @ K[start:start + block_size].T / np.sqrt(d_k)  # ValueError if d_k differs
        m_new = np.maximum(m_i, S.max(axis=1, keepdims=True))
        alpha = np.exp(m_i - m_new)
        P = np.exp(S - m_new)
        l_i = alpha * l_i + P.sum(axis=1, keepdims=True)
        acc = alpha * acc + P @ V[start:start + block_size]
        m_i = m_new
    return acc / l_i
