"""Wrong: right, then every entry rounded to 6 decimals."""

import math


def attention(Q, K, V):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    out = []
    for q in Q:
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        out.append([round(sum(p * v[t] for p, v in zip(w, V)) / sum(w), 6)
                    for t in range(len(V[0]))])
    return out
