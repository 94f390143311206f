"""Wrong softmax: no max-shift, so exp overflows at logits near 1e3 and underflows to 0/0
near -1e3."""

import math


def softmax(x):
    e = [math.exp(v) for v in x]
    Z = sum(e)
    return [v / Z for v in e]
