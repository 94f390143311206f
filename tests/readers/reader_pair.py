"""Correct, returning the pair (output, weights) as The Annotated Transformer does, with its
masked_fill(mask == 0, -1e9): a replaced, not added, fill, so a query with no key gets uniform
weights."""

import math


def attention(query, key, value, mask=None):
    d_k = len(query[0])
    if any(len(row) != d_k for row in query + key) or len(value) != len(key):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    scores = [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in key] for q in query]
    if mask is not None:
        scores = [[s if keep else -1e9 for s, keep in zip(row, keeps)]
                  for row, keeps in zip(scores, mask)]
    p_attn = []
    for row in scores:
        top = max(row)
        e = [math.exp(s - top) for s in row]
        p_attn.append([x / sum(e) for x in e])
    output = [[sum(p * v[t] for p, v in zip(p_i, value)) for t in range(len(value[0]))]
              for p_i in p_attn]
    return output, p_attn
