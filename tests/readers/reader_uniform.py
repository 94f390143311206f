"""Correct, in plain lists: masked logits are replaced by -1e30 rather than -inf, as JAX does,
so a query with no key gets uniform weights, the mean of V."""

import math


def softmax(x):
    m = max(x)
    e = [math.exp(v - m) for v in x]
    Z = sum(e)
    return [v / Z for v in e]


def attention(Q, K, V, mask=None, is_causal=False):
    n, m, d_k = len(Q), len(K), len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    allowed = [[(mask is None or mask[i][j]) and not (is_causal and j > i) for j in range(m)]
               for i in range(n)]
    S = [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) if allowed[i][j] else -1e30
          for j, k in enumerate(K)] for i, q in enumerate(Q)]
    P = [softmax(row) for row in S]
    return [[sum(p * v[e] for p, v in zip(P_i, V)) for e in range(len(V[0]))] for P_i in P]
