"""Correct, in plain lists: a query with no key gets zeros, as PyTorch's
F.scaled_dot_product_attention does."""

import math


def scaled_dot_product_attention(Q, K, V, mask=None, is_causal=False):
    m, d_k, d_v = len(K), len(K[0]), len(V[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    out = []
    for i, q in enumerate(Q):
        keys = [j for j in range(m) if (mask is None or mask[i][j]) and not (is_causal and j > i)]
        if not keys:
            out.append([0.0] * d_v)
            continue
        s = {j: sum(a * b for a, b in zip(q, K[j])) / math.sqrt(d_k) for j in keys}
        top = max(s.values())
        w = {j: math.exp(s[j] - top) for j in keys}
        Z = sum(w.values())
        out.append([sum(w[j] * V[j][e] for j in keys) / Z for e in range(d_v)])
    return out
