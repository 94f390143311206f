"""Correct one-pass attention that keeps the output normalised after every block, as
FlashAttention's first version does: o' = (o d r + sum e v) / d'.  It takes is_causal only,
and its block size is the fourth positional argument."""

import math


def streaming_attention(Q, K, V, B, is_causal=False):
    m, d_k = len(K), len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("streaming_attention: shapes do not match")
    out = []
    for i, q in enumerate(Q):
        mx, d, o = -math.inf, 0.0, [0.0] * len(V[0])
        for start in range(0, i + 1 if is_causal else m, B):
            stop = min(start + B, m, i + 1 if is_causal else m)
            s = [sum(a * b for a, b in zip(q, K[j])) / math.sqrt(d_k) for j in range(start, stop)]
            new = max(mx, max(s))
            r = math.exp(mx - new)
            e = [math.exp(x - new) for x in s]
            d_new = d * r + sum(e)
            o = [(o_t * d * r + sum(e_j * V[start + jj][t] for jj, e_j in enumerate(e))) / d_new
                 for t, o_t in enumerate(o)]
            mx, d = new, d_new
        out.append(o)
    return out
