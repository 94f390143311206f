"""Correct NumPy attention for any leading batch axes: (..., n, d).  Passes with --batched, and
with or without --arrays (it converts lists itself).

NumPy is imported inside the function, so that pytest can import this file without it."""


def attention(Q, K, V, mask=None):
    import numpy as np
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])  # ValueError when d_k differs
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    top = S.max(axis=-1, keepdims=True)
    if not np.isfinite(top).all():
        raise ValueError("attention: a query sees no key")
    E = np.exp(S - top)
    return (E / E.sum(axis=-1, keepdims=True)) @ V  # ValueError when V has not m rows
