"""Correct textbook attention: plain loops, the max-shift, no shape checks, and NaN for a query
whose every key is masked.  Exit 0 with two kinds of notes (the shapes, the masked row);
--strict makes them failures."""

import math


def attention(Q, K, V, mask=None):
    d_k = len(Q[0])
    out = []
    for i, q in enumerate(Q):
        scores = []
        for j, k in enumerate(K):
            s = 0.0
            for t in range(d_k):
                s += q[t] * k[t]
            s /= math.sqrt(d_k)
            if mask is not None and not mask[i][j]:
                s = float("-inf")
            scores.append(s)
        top = max(scores)
        e = [math.exp(s - top) if top != float("-inf") else float("nan") for s in scores]
        total = sum(e)
        w = [x / total for x in e]
        row = []
        for t in range(len(V[0])):
            row.append(sum(w[j] * V[j][t] for j in range(len(K))))
        out.append(row)
    return out
