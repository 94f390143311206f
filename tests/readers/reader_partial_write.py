"""Hostile: writes the start of a reply to every open file descriptor, then sleeps.  The time
limit covers the whole reply, so the checker kills it at the limit instead of waiting."""

import os
import time


def attention(Q, K, V):
    for fd in range(3, 64):
        try:
            os.write(fd, b'{"id": 1, "kind": "retu')
        except OSError:
            pass
    time.sleep(3600)
