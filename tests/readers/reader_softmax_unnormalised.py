"""Wrong softmax: exp(x - max), never divided by the sum."""

import math


def softmax(x):
    m = max(x)
    if m == -math.inf:
        raise ValueError("softmax: every entry is -inf")
    return [math.exp(v - m) for v in x]
