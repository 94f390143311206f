"""Correct multi-head attention in plain loops, one head at a time, without a mask.  Its
scaled_dot_product function is its own, so that the module is what it says."""

import math


def project(X, W):
    return [[sum(x[r] * W[r][c] for r in range(len(W))) for c in range(len(W[0]))] for x in X]


def scaled_dot_product(Q, K, V):
    d_k = len(Q[0])
    out = []
    for q in Q:
        scores = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        out.append([sum(w * v[c] for w, v in zip(weights, V)) / total for c in range(len(V[0]))])
    return out


def multihead_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads):
    if len(W_Q) != len(X_q[0]) or len(W_Q[0]) % num_heads or len(W_V[0]) % num_heads:
        raise ValueError("multihead_attention: W_Q must be d_model x h d_k, h must divide it")
    Q, K, V = project(X_q, W_Q), project(X_kv, W_K), project(X_kv, W_V)
    d_k, d_v = len(Q[0]) // num_heads, len(V[0]) // num_heads
    concat = [[] for _ in X_q]
    for head in range(num_heads):
        a, b = head * d_k, head * d_v
        out = scaled_dot_product([q[a:a + d_k] for q in Q], [k[a:a + d_k] for k in K],
                                 [v[b:b + d_v] for v in V])
        for row, part in zip(concat, out):
            row.extend(part)
    return project(concat, W_O)
