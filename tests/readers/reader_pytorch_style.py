"""Correct, with PyTorch's signature F.scaled_dot_product_attention(query, key, value,
attn_mask=None, dropout_p=0.0, is_causal=False, scale=None), on lists: attn_mask True = may
attend, is_causal top-left, and a query with no key gets zeros, as PyTorch returns."""

import math


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    S, E = len(key), len(query[0])
    if any(len(row) != E for row in query + key) or len(value) != S:
        raise ValueError("shapes do not match")
    c = 1 / math.sqrt(E) if scale is None else scale
    out = []
    for i, q in enumerate(query):
        s = [c * sum(a * b for a, b in zip(q, k)) for k in key]
        for j in range(S):
            if attn_mask is not None and not attn_mask[i][j] or is_causal and j > i:
                s[j] = -math.inf
        top = max(s)
        if top == -math.inf:
            out.append([0.0] * len(value[0]))
            continue
        w = [math.exp(x - top) for x in s]
        Z = sum(w)
        out.append([sum(p * v[t] for p, v in zip(w, value)) / Z for t in range(len(value[0]))])
    return out
