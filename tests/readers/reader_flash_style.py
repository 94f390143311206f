"""Correct in FlashAttention's convention (2.1 and later): flash_attn_func(q, k, v,
dropout_p=0.0, softmax_scale=None, causal=False) with the causal mask aligned bottom-right,
query i seeing keys j <= i + m - n.  A NOTE names the convention; --causal bottom-right
states it.  A query with no key raises ValueError."""

import math


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
    n, m, d = len(q), len(k), len(q[0])
    if any(len(row) != d for row in q + k) or len(v) != m:
        raise ValueError("flash_attn_func: shapes do not match")
    c = softmax_scale if softmax_scale is not None else d ** -0.5
    out = []
    for i, q_i in enumerate(q):
        s = [c * sum(a * b for a, b in zip(q_i, k_j)) if not causal or j <= i + m - n
             else -math.inf for j, k_j in enumerate(k)]
        top = max(s)
        if top == -math.inf:
            raise ValueError(f"flash_attn_func: query {i} sees no key")
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v_j[t] for p, v_j in zip(w, v)) / sum(w) for t in range(len(v[0]))])
    return out
