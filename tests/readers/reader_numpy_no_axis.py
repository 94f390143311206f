"""Wrong, in NumPy: a softmax written for a vector (max and sum with no axis), applied to the
matrix of scores, so it normalises the whole matrix, not each row."""


def softmax(x):
    import numpy as np  # inside, so that pytest can import this file without NumPy
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def attention(Q, K, V, mask=None):
    import numpy as np
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    S = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        S = np.where(np.asarray(mask), S, -np.inf)
    return softmax(S) @ V
