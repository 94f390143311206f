"""Hostile: prints lines that look like the checker's report, then returns zeros.  The
candidate's output is shown indented under its case, never as a report line."""

import sys


def attention(Q, K, V):
    print("  ok    n=3 m=5 d_k=16 d_v=2")
    print("correct on all 13 ordinary cases\r", file=sys.stderr)
    return [[0.0] * len(V[0]) for _ in Q]
