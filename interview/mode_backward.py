"""The backward mode: NAME(Q, K, V, dO[, mask=][, is_causal=][, scale=]) -> dQ, dK, dV.

The answer is a tuple (dQ, dK, dV) or a dict with those keys (any case), compared with
attention.attention_backward component by component.  Each mistake is the backward pass
with one slip, computed by gradients() below:

    P = softmax(S) row by row, S = c Q K^T masked       dP = dO V^T
    dV = P^T dO     dS = P * (dP - rowsum(P * dP))     dQ = c dS K     dK = c dS^T Q

Public API (`__all__`): MODE, UNSCALED, DV_SCALED, DIAGONAL, P_DO, DS_Q, S_IN_DV, S_IN_DS,
MASKED_GRADIENT, UNSHIFTED, cases, expect, gradients, draw, twin, unpack, stack, describe,
axes.

python3 interview/check.py --help runs the checker.
"""

import math  # sqrt, inf
import random  # the seeded inputs
from typing import List, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import attention_backward, matmul, transpose
from interview.judge import Case, Expectation, Mistake, Mode, NoKey, Variant, close, tolerance
from interview.mode_forward import (BY_D_K, NO_SCALE, T, allowed, cut, default_scale,
                                    draw_mask, draw_matrices, draw_options, draw_shapes, gauss,
                                    logits, mix, options_title, other_alignment, rounded,
                                    shape_of, softmax_row, title)

__all__ = ["MODE", "UNSCALED", "DV_SCALED", "DIAGONAL", "P_DO", "DS_Q", "S_IN_DV", "S_IN_DS",
           "MASKED_GRADIENT", "UNSHIFTED", "cases", "expect", "gradients", "draw", "twin",
           "unpack", "stack", "describe", "axes"]

BACKWARD = "interview.md#derive-the-attention-backward-pass"
UNSCALED = Mistake("dQ, dK unscaled", BACKWARD)
DV_SCALED = Mistake("scale in dV", BACKWARD)
DIAGONAL = Mistake("softmax backward p(1-p)", BACKWARD)
P_DO = Mistake("dV = P dO", BACKWARD)
DS_Q = Mistake("dK = dS Q", BACKWARD)
S_IN_DV = Mistake("dV = S^T dO", BACKWARD)
S_IN_DS = Mistake("S in softmax backward", BACKWARD)
MASKED_GRADIENT = Mistake("gradient at masked keys", BACKWARD)
UNSHIFTED = Mistake("unshifted exp", BACKWARD)
NAMES = ("dq", "dk", "dv")


def cases() -> List[Case]:
    """Return the backward cases: n = m once, where a missing transpose still fits.

    >>> [c.title for c in cases()][:2]
    ['n=4 m=4 d_k=6 d_v=3', 'n=3 m=5 d_k=16 d_v=2']
    """
    rng = random.Random(23)
    T, F = True, False
    mask = [[T, F, T, F, T], [F, T, T, F, F], [T, T, F, T, F]]
    no_key = [[T, F, T, F], [F, F, F, F], [F, T, T, T]]
    high = [[1000.0, 999.0, 998.5], [997.0, 1000.5, 999.0]]
    K = [[2.0 * (t == j) for t in range(4)] for j in range(3)]  # logits 1e3 exactly, as
    near = (Case("logits near +1e3", ([row + [0.0] for row in high], K, gauss(rng, 3, 6),
                                      gauss(rng, 2, 6))))  # in mode_forward.logits_case
    return [
        _random(rng, 4, 4, 6, 3),
        _random(rng, 3, 5, 16, 2),
        _random(rng, 5, 2, 7, 3),
        near,
        _random(rng, 3, 5, 16, 2, scale=0.25),
        _random(rng, 3, 5, 16, 2, mask=mask),
        _random(rng, 3, 5, 6, 2, causal=True),
        _random(rng, 3, 4, 16, 2, mask=no_key, kind="no key"),
        _random(rng, 3, 5, 16, 2, kind="error"),
    ]


def _random(rng: random.Random, n: int, m: int, d_k: int, d_v: int, **options) -> Case:
    """Q, K, V and dO of N(0, 1) entries; for kind="error", dO has a column too many."""
    Q, K, V = gauss(rng, n, d_k), gauss(rng, m, d_k), gauss(rng, m, d_v)
    wide = options.get("kind") == "error"
    dO = gauss(rng, n, d_v + wide)
    name = f"dO {n}x{d_v + 1}, output {n}x{d_v}" if wide else title(Q, K, V, **options)
    return Case(name, (Q, K, V, dO), **options)


def twin(case: Case) -> Case:
    """The second batch element of a named case: -Q."""
    Q, K, V, dO = case.args
    return case._replace(args=([[-q for q in row] for row in Q], K, V, dO))


def expect(case: Case, conventions) -> Expectation:
    if case.kind == "error":
        return Expectation(None, [])
    Q, K, V, dO = case.args
    keep, c = allowed(case, conventions.align), default_scale(case)
    if keep is not None and not all(map(any, keep)):  # no right answer: the library refuses
        return Expectation(None, [], [NoKey("zeros", gradients(case, keep, c)),
                                      NoKey("mean of V", gradients(case, keep, c,
                                                                   empty="uniform"))])
    reference = [list(map(list, g)) for g in attention_backward(Q, K, V, dO, mask=keep, scale=c)]
    d_k = len(K[0])
    variants = [Variant(UNSCALED, gradients(case, keep, c, "unscaled")),
                Variant(DV_SCALED, gradients(case, keep, c, "dV scaled")),
                Variant(DIAGONAL, gradients(case, keep, c, "diagonal")),
                Variant(S_IN_DV, gradients(case, keep, c, "S in dV")),
                Variant(S_IN_DS, gradients(case, keep, c, "S in dS")),
                Variant(UNSHIFTED, gradients(case, keep, c, "unshifted"))]
    if case.scale is None:
        variants += [Variant(NO_SCALE, gradients(case, keep, 1.0)),
                     Variant(BY_D_K, gradients(case, keep, 1 / d_k))]
    if len(Q) == len(K):
        variants += [Variant(P_DO, gradients(case, keep, c, "P dO")),
                     Variant(DS_Q, gradients(case, keep, c, "dS Q"))]
    if keep is not None:
        variants.append(Variant(MASKED_GRADIENT, gradients(case, keep, c, "mask ignored")))
    if case.causal:
        mistake, other, convention = other_alignment(case, conventions)
        variants.append(Variant(mistake, gradients(case, other, c), convention))
    tol = tolerance(reference)
    return Expectation(reference, [v for v in variants if not close(v.answer, reference, tol)],
                       precision=lambda fmt: _in_format(case, keep, c, fmt))


def gradients(case: Case, keep, c: float, slip: str = "", empty: str = "zeros") -> list:
    """[dQ, dK, dV] of the backward pass with one slip, in IEEE arithmetic; a query with no
    key has weights of zeros or uniform (empty), and no gradient reaches its logits."""
    Q, K, V, dO = case.args
    S = logits(matmul(Q, transpose(K)), c, None if slip == "mask ignored" else keep)
    P = [_weights(row, empty, slip) for row in S]
    dP = mix(dO, T(V))  # dO V^T
    if slip == "diagonal":
        dS = [[p * (1 - p) * g for p, g in zip(P_i, dP_i)] for P_i, dP_i in zip(P, dP)]
    else:
        W = [[s if s > -math.inf else 0.0 for s in row] for row in S] if slip == "S in dS" else P
        dS = [[w * (g - _dot(W_i, dP_i)) for w, g in zip(W_i, dP_i)] if max(S_i) > -math.inf
              else [0.0] * len(S_i) for W_i, dP_i, S_i in zip(W, dP, S)]
    c_qk = 1.0 if slip == "unscaled" else c
    dQ = [[c_qk * x for x in row] for row in mix(dS, K)]
    dK = [[c_qk * x for x in row] for row in mix(dS if slip == "dS Q" else T(dS), Q)]
    weights = logits(matmul(Q, transpose(K)), c) if slip == "S in dV" else P  # unmasked
    dV = mix(weights if slip == "P dO" else T(weights), dO)
    if slip == "dV scaled":
        dV = [[c * x for x in row] for row in dV]
    return [dQ, dK, dV]


def _weights(row: List[float], empty: str, slip: str) -> List[float]:
    if max(row) == -math.inf:
        return [1 / len(row) if empty == "uniform" else 0.0] * len(row)
    return softmax_row(row, 0.0 if slip == "unshifted" else None)


def _dot(u: List[float], v: List[float]) -> float:
    return math.fsum(a * b for a, b in zip(u, v))


def _in_format(case: Case, keep, c: float, fmt: str) -> Optional[list]:
    """The library's gradients of the inputs rounded to fmt, each rounded to fmt."""
    Q, K, V, dO = rounded(list(case.args), fmt)
    return rounded([list(map(list, g)) for g in attention_backward(Q, K, V, dO, mask=keep,
                                                                   scale=c)], fmt)


def unpack(value, batched: bool):
    """[dQ, dK, dV] from a dict keyed dQ, dK, dV (any case); anything else as it is."""
    if isinstance(value, dict):
        keys = {k.lower(): v for k, v in value.items()}
        if all(k in keys for k in NAMES):
            return [keys[k] for k in NAMES]
    return value


def stack(a, b) -> list:
    """Two [dQ, dK, dV] along a batch axis, component by component."""
    return [[x, y] for x, y in zip(a, b)]


# ------------------------------------------------------------------ the random battery

def draw(rng: random.Random, takes: set, align: str, like: Optional[Case] = None) -> Case:
    """A random backward case: an attention case of mode_forward's kind, and dO of N(0, 1)
    entries.

    >>> draw(random.Random(2), {"mask", "causal", "scale"}, "top-left").title
    'n=3 m=27 d_k=6 d_v=5, is_causal'
    """
    if like is None:
        n, m, d_k, d_v = draw_shapes(rng, align, takes)
        options = draw_options(rng, takes, d_k)
    else:
        (n, d_k), m, d_v = shape_of(like.args[0]), len(like.args[1]), len(like.args[2][0])
        options = {"causal": like.causal, "scale": like.scale, "mask": like.mask is not None}
    Q, K, V = draw_matrices(rng, n, m, d_k, d_v, options["scale"])
    mask = draw_mask(rng, n, m, options["causal"], align) if options["mask"] else None
    case = Case("", (Q, K, V, gauss(rng, n, d_v)), mask=mask, causal=options["causal"],
                scale=options["scale"])
    return case._replace(title=describe(case))


def describe(case: Case) -> str:
    Q, K, V = case.args[:3]
    return f"n={len(Q)} m={len(K)} d_k={len(K[0])} d_v={len(V[0])}" + options_title(case)


def axes(case: Case) -> list:
    """The axes a failing case shrinks along: dO follows the queries and d_v."""
    Q, K, V = case.args[:3]
    return [("queries", len(Q), lambda c, keep: cut(c, {0: 0, 3: 0}, keep, mask_rows=True)),
            ("keys", len(K), lambda c, keep: cut(c, {1: 0, 2: 0}, keep, mask_columns=True)),
            ("d_k", len(K[0]), lambda c, keep: cut(c, {0: 1, 1: 1}, keep)),
            ("d_v", len(V[0]), lambda c, keep: cut(c, {2: 1, 3: 1}, keep))]


MODE = Mode("backward", ("attention_backward", "backward", "attention_bwd"),
            ("Q", "K", "V", "dO"), (0, 1, 2, 3), cases, expect, twin, unpack, stack, draw, axes,
            describe)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
