"""Wrong: P recomputed without the max-shift; exp overflows at logits near 1e3."""

import math


def attention_backward(Q, K, V, dO, mask=None, is_causal=False, scale=None):
    n, m, d_k, d_v = len(Q), len(K), len(K[0]), len(V[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("attention_backward: need Q n x d_k, K m x d_k, V m x d_v")
    if len(dO) != n or any(len(row) != d_v for row in dO):
        raise ValueError("attention_backward: dO must be n x d_v, as the output")
    c = 1 / math.sqrt(d_k) if scale is None else scale
    P = []
    for i in range(n):
        s = [c * sum(a * b for a, b in zip(Q[i], K[j])) for j in range(m)]
        for j in range(m):
            if mask is not None and not mask[i][j] or is_causal and j > i:
                s[j] = -math.inf
        top = max(s)
        if top == -math.inf:
            raise ValueError(f"attention_backward: query {i} sees no key")
        e = [math.exp(x - 0.0) for x in s]
        Z = sum(e)
        P.append([x / Z for x in e])
    dV = [[sum(P[i][j] * dO[i][t] for i in range(n)) for t in range(d_v)] for j in range(m)]
    dP = [[sum(dO[i][t] * V[j][t] for t in range(d_v)) for j in range(m)] for i in range(n)]
    dS = []
    for i in range(n):
        inner = sum(P[i][j] * dP[i][j] for j in range(m))
        dS.append([P[i][j] * (dP[i][j] - inner) for j in range(m)])
    dQ = [[c * sum(dS[i][j] * K[j][t] for j in range(m)) for t in range(d_k)]
          for i in range(n)]
    dK = [[c * sum(dS[i][j] * Q[i][t] for i in range(n)) for t in range(d_k)] for j in range(m)]
    return dQ, dK, dV
