"""Hostile: writes forged JSON replies ("returned" with the value it wants, a refusal, a
reply to the next call) to every open file descriptor, then returns zeros.  A reply is data
checked field by field, so a forgery is at best an answer judged like any other."""

import json
import os


def attention(Q, K, V):
    zeros = [[0.0] * len(V[0]) for _ in Q]
    for k in range(1, 40):
        for reply in ({"id": k, "kind": "returned", "value": zeros, "mutated": []},
                      {"id": k, "kind": "raised", "types": ["ValueError"], "error": "x"},
                      {"op": "loaded", "name": "attention", "params": None}):
            line = (json.dumps(reply) + "\n").encode()
            for fd in range(3, 64):
                try:
                    os.write(fd, line)
                except OSError:
                    pass
    return zeros
