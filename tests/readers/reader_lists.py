"""Correct, in plain lists: a query with no key to attend to raises ValueError (as the library).

The files in tests/readers are what an interview candidate might write; tests/test_check.py
runs interview/check.py on each.  Each wrong one is this file with one slip, named in its
docstring.
"""

import math


def softmax(x):
    m = max(x)
    if m == -math.inf:
        raise ValueError("softmax: every entry is -inf")
    e = [math.exp(v - m) for v in x]  # shifted: no exponent above 0
    Z = sum(e)
    return [v / Z for v in e]


def attention(Q, K, V, mask=None, is_causal=False):
    n, m, d_k = len(Q), len(K), len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    S = [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K] for q in Q]
    for i in range(n):
        for j in range(m):
            if mask is not None and not mask[i][j] or is_causal and j > i:
                S[i][j] = -math.inf
    P = [softmax(row) for row in S]
    return [[sum(p * v[e] for p, v in zip(P_i, V)) for e in range(len(V[0]))] for P_i in P]
