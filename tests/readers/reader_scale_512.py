"""Wrong: a constant scale 1/sqrt(512), the model width of the paper, whatever d_k is."""

import math


def attention(Q, K, V):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    out = []
    for q in Q:
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(512) for k in K]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))])
    return out
