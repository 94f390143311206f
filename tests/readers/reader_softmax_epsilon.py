"""Wrong softmax: an epsilon "for stability" gives each -inf entry a weight above 0."""

import math


def softmax(x, eps=1e-12):
    m = max(x) if max(x) > -math.inf else 0.0
    e = [math.exp(v - m) + eps for v in x]
    Z = sum(e)
    return [v / Z for v in e]
