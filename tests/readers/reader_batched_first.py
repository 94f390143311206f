"""Wrong with --batched: a function for (B, n, d) lists that computes the first batch element
and returns it for every element."""

import math


def attention(Q, K, V):
    q_rows, k_rows, v_rows = Q[0], K[0], V[0]
    d_k = len(k_rows[0])
    out = []
    for q in q_rows:
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in k_rows]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, v_rows)) / sum(w)
                    for t in range(len(v_rows[0]))])
    return [out for _ in Q]
