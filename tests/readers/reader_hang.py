"""Wrong: the dot product runs over blocks of d_k // 2 entries, so at d_k = 1 the block is
empty and the loop never ends."""

import math


def attention(Q, K, V):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    block = d_k // 2 if d_k > 1 else 0  # the slip: a block of 0 entries at d_k = 1

    def dot(q, k):
        total, t = 0.0, 0
        while t < d_k:
            total += sum(a * b for a, b in zip(q[t:t + block], k[t:t + block]))
            t += block
        return total

    out = []
    for q in Q:
        s = [dot(q, k) / math.sqrt(d_k) for k in K]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[e] for p, v in zip(w, V)) / sum(w) for e in range(len(V[0]))])
    return out
