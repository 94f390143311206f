"""Wrong: the heads are concatenated last first."""

import math


def matmul(A, B):
    return [[sum(a * b for a, b in zip(row, col)) for col in zip(*B)] for row in A]


def attention(Q, K, V, c, allowed):
    """softmax(c Q K^T) V, row by row, over the keys each query is allowed."""
    out = []
    for i, q in enumerate(Q):
        s = [c * sum(a * b for a, b in zip(q, k)) if allowed(i, j) else -math.inf
             for j, k in enumerate(K)]
        top = max(s)
        if top == -math.inf:
            raise ValueError(f"multi_head_attention: query {i} sees no key")
        e = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(e, V)) / sum(e) for t in range(len(V[0]))])
    return out


def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None, is_causal=False):
    d_model, h = len(X_q[0]), num_heads
    if any(len(W) != d_model for W in (W_Q, W_K, W_V)) or len(W_K[0]) != len(W_Q[0]):
        raise ValueError("multi_head_attention: W_Q, W_K, W_V must be d_model x h d_k")
    if len(W_Q[0]) % h or len(W_V[0]) % h or len(W_O) != len(W_V[0]):
        raise ValueError("multi_head_attention: h must divide the columns, W_O have h d_v rows")
    Q, K, V = matmul(X_q, W_Q), matmul(X_kv, W_K), matmul(X_kv, W_V)
    d_k, d_v = len(Q[0]) // h, len(V[0]) // h

    def allowed(i, j):
        return (mask is None or mask[i][j]) and not (is_causal and j > i)

    heads = []
    for t in range(h):
        Q_t = [row[t * d_k:(t + 1) * d_k] for row in Q]
        K_t = [row[t * d_k:(t + 1) * d_k] for row in K]
        V_t = [row[t * d_v:(t + 1) * d_v] for row in V]
        heads.append(attention(Q_t, K_t, V_t, 1 / math.sqrt(d_k), allowed))
    concat = [[x for head in heads[::-1] for x in head[i]] for i in range(len(X_q))]
    return matmul(concat, W_O)
