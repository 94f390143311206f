"""Hostile: writes a pickled object to every open file descriptor it can find (the checker's
reply channel among them), then returns zeros.  The checker reads replies as JSON data only,
so the forgery is an unreadable reply, and the zeros fail."""

import os
import pickle


class Verdict:
    def __reduce__(self):  # unpickling would run print("all ok")
        return (print, ("all ok",))


def attention(Q, K, V):
    payload = pickle.dumps(Verdict()) + b"\n"
    for fd in range(3, 64):
        try:
            os.write(fd, payload)
        except OSError:
            pass
    return [[0.0] * len(V[0]) for _ in Q]
