"""Hostile: raises KeyboardInterrupt while the file loads.  The checker reports the error on
loading (exit status 1) without a traceback of its own."""

raise KeyboardInterrupt


def attention(Q, K, V):
    return V
