"""Correct, with a parameter key_padding_mask the checker has no case for: a NOTE says it was
not exercised, rather than skipping it silently."""

import math


def attention(Q, K, V, key_padding_mask=None):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    keep = [True] * len(K) if key_padding_mask is None else [not p for p in key_padding_mask]
    out = []
    for q in Q:
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) if ok else -math.inf
             for k, ok in zip(K, keep)]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))])
    return out
