"""Correct on valid input, but calls sys.exit() for shapes that do not match: SystemExit is
not a refusal (only a ValueError is), so each shape case is a NOTE."""

import math
import sys


def attention(Q, K, V):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        sys.exit("shapes do not match")
    out = []
    for q in Q:
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        top = max(s)
        w = [math.exp(x - top) for x in s]
        out.append([sum(p * v[t] for p, v in zip(w, V)) / sum(w) for t in range(len(V[0]))])
    return out
