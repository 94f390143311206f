"""Correct, one query per worker of a process pool (the checker's child is not a daemon, so it
may have children of its own).  A query with no key raises ValueError."""

import math
from multiprocessing import Pool


def _row(args):
    q, K, V, keep = args
    d_k = len(q)
    s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) if ok else -math.inf
         for k, ok in zip(K, keep)]
    top = max(s)
    if top == -math.inf:
        raise ValueError("attention: a query with no key")
    w = [math.exp(x - top) for x in s]
    return [sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))]


def attention(Q, K, V, mask=None):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    keeps = mask if mask is not None else [[True] * len(K) for _ in Q]
    with Pool(2) as pool:
        return pool.map(_row, [(q, K, V, keep) for q, keep in zip(Q, keeps)])
