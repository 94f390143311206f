"""Right but in float16, NumPy's half precision: about 3 digits.

NumPy is imported inside the function, so that pytest can import this file without it."""


def attention(Q, K, V):
    import numpy as np
    Q, K, V = (np.asarray(A, dtype=np.float16) for A in (Q, K, V))
    S = Q @ K.T / np.float16(np.sqrt(K.shape[1]))
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return (E / E.sum(axis=1, keepdims=True)) @ V
