"""Wrong, in NumPy: the max-shift takes the max of the whole matrix, not of each row, so a row
far below the largest logit underflows to 0/0."""


def attention(Q, K, V):
    import numpy as np  # inside, so that pytest can import this file without NumPy
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    S = Q @ K.T / np.sqrt(K.shape[-1])
    e = np.exp(S - S.max())
    return e / e.sum(axis=-1, keepdims=True) @ V
