"""Right but in bfloat16 (8 significant bits), emulated by rounding every result to the
nearest bfloat16 through its float32 bits, ties to even."""

import math
import struct


def bf16(x):
    if not math.isfinite(x):
        return x
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def attention(Q, K, V):
    d_k = len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != len(K):
        raise ValueError("attention: need Q n x d_k, K m x d_k and V m x d_v")
    Q, K, V = ([[bf16(x) for x in row] for row in A] for A in (Q, K, V))
    c = bf16(1 / math.sqrt(d_k))
    out = []
    for q in Q:
        s = [bf16(c * bf16(sum(a * b for a, b in zip(q, k)))) for k in K]
        top = max(s)
        e = [bf16(math.exp(bf16(x - top))) for x in s]
        Z = bf16(sum(e))
        p = [bf16(x / Z) for x in e]
        out.append([bf16(sum(w * v[t] for w, v in zip(p, V))) for t in range(len(V[0]))])
    return out
