"""Hostile: raises KeyboardInterrupt while the file loads.  The checker reports the error on
loading (exit status 1) without a traceback of its own.

pytest imports every file under tests/ for its doctests, so the interrupt waits for a process
without pytest: the checker's child."""

import sys

if "pytest" not in sys.modules:
    raise KeyboardInterrupt


def attention(Q, K, V):
    return V
