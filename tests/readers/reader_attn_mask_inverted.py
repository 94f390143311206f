"""Correct in torch.nn.MultiheadAttention's convention: attn_mask True = blocked.  The checker
detects the polarity and names it in a NOTE; --mask-true-blocks states it."""

import math


def attention(Q, K, V, attn_mask=None):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    out = []
    for i, q in enumerate(Q):
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        if attn_mask is not None:
            s = [-math.inf if blocked else x for x, blocked in zip(s, attn_mask[i])]
        top = max(s)
        if top == -math.inf:
            raise ValueError(f"attention: query {i} sees no key")
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))])
    return out
