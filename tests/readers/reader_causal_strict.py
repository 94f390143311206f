"""Wrong: an off-by-one causal mask: query i sees the keys j < i only, not j <= i (the
diagonal masked)."""

import math


def attention(Q, K, V, is_causal=False):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    out = []
    for i, q in enumerate(Q):
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        if is_causal:
            s = [-math.inf if j >= i else x for j, x in enumerate(s)]
        top = max(s)
        if top == -math.inf:
            raise ValueError(f"attention: query {i} sees no key")
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))])
    return out
