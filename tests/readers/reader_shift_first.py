"""Wrong: softmax shifted by the row's first entry, which overflows when a later logit is
709 above it."""

import math


def attention(Q, K, V):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    out = []
    for q in Q:
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        shift = s[0]
        w = [math.exp(x - shift) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))])
    return out
