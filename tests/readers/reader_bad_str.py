"""Hostile: raises an exception whose str() raises too.  The checker names it by its type."""


class Broken(Exception):
    def __str__(self):
        raise RuntimeError("no message")


def attention(Q, K, V):
    raise Broken()
