"""Hostile: imports the project's own attention to answer with.  The checker refuses the import,
so loading fails with a message that says why."""

from attention import scaled_dot_product_attention


def attention(Q, K, V):
    return scaled_dot_product_attention(Q, K, V)
