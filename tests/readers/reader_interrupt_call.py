"""Hostile: raises KeyboardInterrupt in every call.  It is an error on valid input, and never a
refusal of bad input (only a ValueError is)."""


def attention(Q, K, V):
    raise KeyboardInterrupt
