"""Wrong softmax: every entry -inf gives NaN, silently (-inf - -inf is NaN)."""

import math


def softmax(x):
    m = max(x)
    e = [math.exp(v - m) for v in x]
    Z = sum(e)
    return [v / Z for v in e]
