"""Wrong: is_causal=True calls a helper with one argument too few, which raises TypeError."""

import math


def causal(n, m):
    return [[j <= i for j in range(m)] for i in range(n)]


def attention(Q, K, V, mask=None, is_causal=False):
    n, m, d_k = len(Q), len(K), len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    if is_causal:
        mask = causal(n)  # the slip: causal(n, m)
    S = [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) if mask is None or mask[i][j]
          else -math.inf for j, k in enumerate(K)] for i, q in enumerate(Q)]
    out = []
    for row in S:
        top = max(row)
        if top == -math.inf:
            raise ValueError("attention: a query with no key to attend to")
        w = [math.exp(x - top) for x in row]
        out.append([sum(p * v[e] for p, v in zip(w, V)) / sum(w) for e in range(len(V[0]))])
    return out
