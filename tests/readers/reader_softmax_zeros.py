"""Correct softmax, in plain lists: every entry -inf gives zeros, PyTorch's choice for a row
with no key in F.scaled_dot_product_attention."""

import math


def softmax(x):
    m = max(x)
    if m == -math.inf:
        return [0.0] * len(x)
    e = [math.exp(v - m) for v in x]
    Z = sum(e)
    return [v / Z for v in e]
