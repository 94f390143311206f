"""Correct backward pass as FlashAttention writes it: D_i = dO_i . O_i replaces the row sum of
P * dP (they are equal, since O_i = sum_j P_ij v_j), and the answer is a list [dQ, dK, dV].
It takes no mask."""

import math


def matmul(A, B):
    return [[sum(a * b for a, b in zip(row, col)) for col in zip(*B)] for row in A]


def transpose(A):
    return [list(col) for col in zip(*A)]


def backward(Q, K, V, dO):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K) or len(dO) != len(Q):
        raise ValueError("backward: shapes do not match")
    if any(len(row) != len(V[0]) for row in dO):
        raise ValueError("backward: dO must have d_v columns")
    c = 1 / math.sqrt(d_k)
    S = [[c * s for s in row] for row in matmul(Q, transpose(K))]
    P = []
    for row in S:
        top = max(row)
        e = [math.exp(s - top) for s in row]
        P.append([x / sum(e) for x in e])
    O = matmul(P, V)
    D = [sum(a * b for a, b in zip(dO_i, O_i)) for dO_i, O_i in zip(dO, O)]
    dP = matmul(dO, transpose(V))
    dS = [[p * (g - D_i) for p, g in zip(P_i, dP_i)] for P_i, dP_i, D_i in zip(P, dP, D)]
    dQ = [[c * x for x in row] for row in matmul(dS, K)]
    dK = [[c * x for x in row] for row in matmul(transpose(dS), Q)]
    return [dQ, dK, matmul(transpose(P), dO)]
