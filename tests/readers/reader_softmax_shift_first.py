"""Wrong softmax: shifted by the row's first entry, which overflows when a later logit is
709 above it."""

import math


def softmax(s):
    shift = s[0]
    e = [math.exp(x - shift) for x in s]
    return [v / sum(e) for v in e]
