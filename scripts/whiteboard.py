"""Whiteboard versions: attention and its softmax, short enough to write from memory.

    python3 scripts/whiteboard.py       # one small attention call, and a simulated Var(q . k)

Nothing here imports the project: the file needs only `import math` (and `random` for
the simulation) and its three one-line helpers `dot`, `matmul` and `transpose`.  Each
function computes the same thing as the library to about 1e-12; tests/test_docs.py
checks that, and a whiteboard's size (softmax at most 5 lines, attention 8, its backward
15).  docs/whiteboard.md shows them after the library's own cores.

A matrix is a list of rows: Q is n x d_k, K is m x d_k, V is m x d_v.
"""

import math  # exp, log1p, sqrt, inf
import random  # the seeded simulation


def dot(u, v):
    """q . k = sum_i q_i k_i."""
    return sum(a * b for a, b in zip(u, v))


def matmul(A, B):
    """(A B)[i][j] = A[i] . (column j of B)."""
    return [[dot(row, col) for col in zip(*B)] for row in A]


def transpose(A):
    """A^T: rows become columns."""
    return [list(col) for col in zip(*A)]


def softmax(x):
    """p_i = exp(x_i - m) / sum_j exp(x_j - m), m = max_j x_j."""
    m = max(x)  # softmax(x) = softmax(x - m): now no exponent exceeds 0, nothing overflows
    e = [math.exp(v - m) for v in x]
    Z = sum(e)
    return [v / Z for v in e]


def log_softmax(x):
    """log p_i = (x_i - m) - log1p(s), s = sum over j != k of exp(x_j - m)."""
    m = max(x)
    k = x.index(m)
    s = sum(math.exp(v - m) for j, v in enumerate(x) if j != k)  # Z = 1 + s
    return [(v - m) - math.log1p(s) for v in x]  # log1p keeps a tiny s; log(1 + s) rounds it away


def softmax_jacobian(x):
    """J[i][j] = dp_i / dx_j = p_i (delta_ij - p_j)."""
    p = softmax(x)
    return [[p_i * ((i == j) - p_j) for j, p_j in enumerate(p)] for i, p_i in enumerate(p)]


def attention(Q, K, V, scale=None):
    """softmax(Q K^T / sqrt(d_k)) V, row by row."""
    c = 1 / math.sqrt(len(K[0])) if scale is None else scale
    S = [[c * s for s in row] for row in matmul(Q, transpose(K))]  # n x m logits
    P = [softmax(row) for row in S]  # n x m weights, each row sums to 1
    return matmul(P, V)  # n x d_v


def attention_backward(Q, K, V, dO, scale=None):
    """(dQ, dK, dV) for a loss L with dL/dO = dO."""
    c = 1 / math.sqrt(len(K[0])) if scale is None else scale
    P = [softmax([c * s for s in row]) for row in matmul(Q, transpose(K))]  # n x m
    dV = matmul(transpose(P), dO)  # m x d_v: O = P V
    dP = matmul(dO, transpose(V))  # n x m
    dS = [[p_j * (g_j - dot(p, g)) for p_j, g_j in zip(p, g)]  # softmax backward, per row
          for p, g in zip(P, dP)]
    dQ = [[c * v for v in row] for row in matmul(dS, K)]  # S = c Q K^T
    dK = [[c * v for v in row] for row in matmul(transpose(dS), Q)]
    return dQ, dK, dV


def causal_attention_bottom_right(Q, K, V, scale=None):
    """Causal, aligned bottom-right: query i sees keys j <= i + m - n, so the last query sees
    every key (PyTorch's causal_lower_right; its is_causal=True is top-left, j <= i)."""
    c = 1 / math.sqrt(len(K[0])) if scale is None else scale
    out = []
    for i, q in enumerate(Q):
        seen = range(i + len(K) - len(Q) + 1)  # with a cache of m keys, the newest query last
        p = softmax([c * dot(q, K[j]) for j in seen])
        out.append([sum(p_j * V[j][e] for p_j, j in zip(p, seen)) for e in range(len(V[0]))])
    return out


def streaming_attention(Q, K, V, scale=None):
    """The same output in one pass over the keys, keeping a running max m and sum d."""
    c = 1 / math.sqrt(len(K[0])) if scale is None else scale
    out = []
    for q in Q:
        m, d, o = -math.inf, 0.0, [0.0] * len(V[0])  # o: the unnormalised output
        for k, v in zip(K, V):
            x = c * dot(q, k)
            m_new = max(m, x)
            r, w = math.exp(m - m_new), math.exp(x - m_new)  # rescale the old, weigh the new
            d = d * r + w
            o = [o_e * r + w * v_e for o_e, v_e in zip(o, v)]
            m = m_new
        out.append([o_e / d for o_e in o])
    return out


def simulate_dot_variance(d_k, n, seed=0):
    """Var(q . k) from n fresh pairs with N(0, 1) components: close to d_k."""
    rng = random.Random(seed)
    draws = [dot([rng.gauss(0.0, 1.0) for _ in range(d_k)],
                 [rng.gauss(0.0, 1.0) for _ in range(d_k)]) for _ in range(n)]
    return sum(x * x for x in draws) / n  # E[q . k] = 0 is known, so average the squares


if __name__ == "__main__":  # a demo; importing this file runs nothing
    Q, K, V = [[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[10.0, 0.0], [0.0, 10.0]]
    print("attention(Q, K, V) =", attention(Q, K, V))
    n = 500  # pairs per d_k; the standard error is sqrt((2 d_k^2 + 6 d_k) / n)
    for d_k in (16, 64, 256):
        v, se = simulate_dot_variance(d_k, n), math.sqrt((2 * d_k * d_k + 6 * d_k) / n)
        print(f"d_k = {d_k}: Var(q . k) = {v:.1f} +- {se:.1f} ({n} pairs)")
