"""Correct multi-head attention in NumPy: project, reshape to (h, n, d_k), attend per head,
reshape back and project with W_O.  A query with no key gets zeros.

NumPy is imported inside the function, so that pytest can import this file without it."""


def mha(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, attn_mask=None, is_causal=False):
    import numpy as np
    X_q, X_kv, W_Q, W_K, W_V, W_O = (np.asarray(A, dtype=np.float64)
                                     for A in (X_q, X_kv, W_Q, W_K, W_V, W_O))
    h, n, m = num_heads, X_q.shape[0], X_kv.shape[0]
    if W_Q.shape[1] % h or W_V.shape[1] % h:
        raise ValueError(f"{h} heads do not divide {W_Q.shape[1]} or {W_V.shape[1]} columns")
    Q = (X_q @ W_Q).reshape(n, h, -1).transpose(1, 0, 2)  # ValueError on a bad W_Q
    K = (X_kv @ W_K).reshape(m, h, -1).transpose(1, 0, 2)
    V = (X_kv @ W_V).reshape(m, h, -1).transpose(1, 0, 2)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    keep = np.ones((n, m), dtype=bool) if attn_mask is None else np.asarray(attn_mask, bool)
    if is_causal:
        keep = keep & np.tril(np.ones((n, m), dtype=bool))
    S = np.where(keep, S, -np.inf)
    top = S.max(axis=-1, keepdims=True)
    E = np.where(keep, np.exp(S - np.where(np.isfinite(top), top, 0.0)), 0.0)
    Z = E.sum(axis=-1, keepdims=True)
    heads = (E / np.where(Z > 0, Z, 1.0)) @ V  # (h, n, d_v)
    return heads.transpose(1, 0, 2).reshape(n, -1) @ W_O
