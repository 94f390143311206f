"""Correct backward pass in NumPy, returning a dict {"dQ", "dK", "dV"}; a query with no key
gets zeros, as PyTorch's forward does.

NumPy is imported inside the function, so that pytest can import this file without it."""


def attention_backward(Q, K, V, dO, mask=None, is_causal=False, scale=None):
    import numpy as np
    Q, K, V, dO = (np.asarray(A, dtype=np.float64) for A in (Q, K, V, dO))
    if dO.shape != (Q.shape[0], V.shape[1]):
        raise ValueError(f"dO is {dO.shape}, the output {(Q.shape[0], V.shape[1])}")
    c = 1 / np.sqrt(K.shape[-1]) if scale is None else scale
    S = c * Q @ K.T  # ValueError when Q and K differ in d_k
    keep = np.ones(S.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if is_causal:
        keep &= np.tril(np.ones(S.shape, dtype=bool))
    S = np.where(keep, S, -np.inf)
    top = S.max(axis=-1, keepdims=True)
    E = np.where(keep, np.exp(S - np.where(np.isfinite(top), top, 0.0)), 0.0)
    Z = E.sum(axis=-1, keepdims=True)
    P = E / np.where(Z > 0, Z, 1.0)
    dV = P.T @ dO
    dP = dO @ V.T
    dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
    return {"dQ": c * dS @ K, "dK": c * dS.T @ Q, "dV": dV}
