"""Wrong softmax: shifted by the row's minimum, so a row whose logits span more than about
709 overflows."""

import math


def softmax(s):
    shift = min(s)
    e = [math.exp(x - shift) for x in s]
    return [v / sum(e) for v in e]
