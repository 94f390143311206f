"""Right but in float32, NumPy's single precision: about 7 digits, not float64's 16."""


def attention(Q, K, V):
    import numpy as np  # inside, so that pytest can import this file without NumPy
    Q, K, V = (np.asarray(A, dtype=np.float32) for A in (Q, K, V))
    S = Q @ K.T / np.sqrt(np.float32(K.shape[-1]))
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ V
