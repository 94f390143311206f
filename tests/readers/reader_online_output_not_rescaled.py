"""Wrong: the denominator is rescaled when the max grows, the output is not."""

import math


def online_attention(Q, K, V, block_size, mask=None, is_causal=False):
    m, d_k, d_v = len(K), len(K[0]), len(V[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("online_attention: need Q n x d_k, K m x d_k, V m x d_v")
    c = 1 / math.sqrt(d_k)
    out = []
    for i, q in enumerate(Q):
        mx, d, o = -math.inf, 0.0, [0.0] * d_v  # running max, denominator, output
        for start in range(0, m, block_size):
            stop = min(start + block_size, m)
            s = [c * sum(a * b for a, b in zip(q, K[j]))
                 if (mask is None or mask[i][j]) and not (is_causal and j > i) else -math.inf
                 for j in range(start, stop)]
            if max(s) == -math.inf:
                continue  # a block the mask hides entirely
            new = max(mx, max(s))
            r = math.exp(mx - new)  # rescales what came before the new max
            e = [math.exp(x - new) for x in s]
            o_b = [sum(e_j * V[start + jj][t] for jj, e_j in enumerate(e)) for t in range(d_v)]
            d = d * r + sum(e)
            o = [o_t + b for o_t, b in zip(o, o_b)]
            mx = new
        if d == 0.0:
            raise ValueError(f"online_attention: query {i} sees no key")
        out.append([o_t / d for o_t in o])
    return out
