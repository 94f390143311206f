"""The multi-head mode: NAME(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads[, mask=][, is_causal=])
in the library's convention: rows are tokens, Q = X_q W_Q, K = X_kv W_K, V = X_kv W_V, head t
takes the t-th of h consecutive slices of their columns and divides by the sqrt of its own
d_k, and the output is Concat(head_1, ..., head_h) W_O.

Each mistake is that computation with one slip, computed by heads() below.

Its random battery draws 1 to 8 heads of width up to 4, d_model = h d_k, and shrinks a
failing case to fewer heads first.

Public API (`__all__`): MODE, BY_SQRT_D_MODEL, BY_SQRT_WIDTH, INTERLEAVED, REVERSED,
NO_W_O, ONE_HEAD, axis, cases, expect, heads, draw, twin, describe, axes.

python3 interview/check.py --help runs the checker.
"""

import math  # sqrt, fsum
import random  # the seeded inputs
from typing import List, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import matmul, multi_head_attention
from interview.judge import (UNMASKED_ROW, Case, Expectation, Mistake, Mode, NoKey, Variant, close,
                             tolerance)
from interview.mode_forward import (BY_D_K, NO_SCALE, T, allowed, attend, cut, draw_mask, gauss,
                                    logits, mix, options_title, other_alignment, rounded,
                                    softmax_row, stack, unpack)

__all__ = ["MODE", "BY_SQRT_D_MODEL", "BY_SQRT_WIDTH", "INTERLEAVED", "REVERSED", "NO_W_O",
           "ONE_HEAD", "axis", "cases", "expect", "heads", "draw", "twin", "describe", "axes"]

MULTI = "interview.md#write-multi-head-attention"
BY_SQRT_D_MODEL = Mistake("scale 1/sqrt(d_model)", MULTI)
BY_SQRT_WIDTH = Mistake("scale 1/sqrt(h d_k)", MULTI)
INTERLEAVED = Mistake("heads interleaved", MULTI)
REVERSED = Mistake("heads in wrong order", MULTI)
NO_W_O = Mistake("W_O missing", MULTI)
ONE_HEAD = Mistake("one head only", MULTI)
SLIPS = {BY_SQRT_D_MODEL: "d_model", BY_SQRT_WIDTH: "width", INTERLEAVED: "interleaved",
         REVERSED: "reversed", NO_W_O: "no W_O", ONE_HEAD: "one head", NO_SCALE: "no scale",
         BY_D_K: "d_k"}


def axis(t: int) -> Mistake:
    """Softmax over the queries (the columns of the scores) in head t only."""
    return Mistake(f"softmax axis, head {t}", MULTI)


def cases() -> List[Case]:
    """Return the multi-head cases: d_k, d_v, d_model, d_k + 1, n and m all differ.

    >>> cases()[0].title
    'n=7 m=11 d_model=8 h=2 d_k=3 d_v=5'
    """
    rng = random.Random(31)
    T_, F = True, False
    mask = [[(i + 2 * j) % 3 != 0 for j in range(6)] for i in range(4)]
    no_key = [[T_, F, T_, F, T_, F], [F] * 6, [F, T_, T_, F, F, T_], [T_] * 6]
    return [
        _random(rng, 7, 11, 8, 2, 3, 5, 9),
        _random(rng, 6, 6, 5, 3, 2, 4, 7, self=True),
        _random(rng, 4, 6, 8, 2, 3, 5, 9, mask=mask),
        _random(rng, 4, 6, 8, 2, 3, 5, 9, causal=True),
        _random(rng, 4, 6, 8, 2, 3, 5, 9, mask=no_key, kind="no key"),
        _random(rng, 4, 6, 8, 2, 3, 5, 9, kind="error"),
        _random(rng, 4, 6, 8, 4, 3, 5, 9, kind="error"),
    ]


def _random(rng: random.Random, n, m, d_model, h, d_k, d_v, d_out: int, self=False,
            **options) -> Case:
    """X of N(0, 1) entries and W of N(0, 1/d_model), so that q . k / sqrt(d_k) is about
    N(0, 1); the second error case asks for 4 heads of 6 columns."""
    X_q = gauss(rng, n, d_model)
    X_kv = X_q if self else gauss(rng, m, d_model)
    s = 1 / math.sqrt(d_model)
    heads = 2 if options.get("kind") == "error" else h  # 4 heads asked of 2 heads' columns
    W_Q, W_K = ([[s * w for w in row] for row in gauss(rng, d_model, heads * d_k)] for _ in "QK")
    W_V = [[s * w for w in row] for row in gauss(rng, d_model, heads * d_v)]
    W_O = gauss(rng, heads * d_v, d_out)
    if options.get("kind") == "error" and h == 2:  # W_Q has a row too many
        W_Q = W_Q + [W_Q[0]]
        name = f"W_Q {d_model + 1}x{2 * d_k}, d_model={d_model}"
    elif options.get("kind") == "error":
        name = f"h={h}, W_Q {d_model}x{2 * d_k}"
    else:
        name = (f"n={n} m={m} d_model={d_model} h={h} d_k={d_k} d_v={d_v}"
                if not (self or options) else _prefix(options) + f"n={n} m={m} h={h}")
    return Case(name, (X_q, X_kv, W_Q, W_K, W_V, W_O, h), **options)


def _prefix(options: dict) -> str:
    if options.get("kind") == "no key":
        return f"row {options['mask'].index([False] * len(options['mask'][0]))} sees no key, "
    causal, mask = options.get("causal"), options.get("mask")
    return "is_causal " if causal else "mask " if mask else "self-attention "


def twin(case: Case) -> Case:
    """The second batch element of a named case: -X_q."""
    X_q, *rest = case.args
    return case._replace(args=([[-x for x in row] for row in X_q], *rest))


def expect(case: Case, conventions) -> Expectation:
    if case.kind == "error":
        return Expectation(None, [])
    keep = allowed(case, conventions.align)
    reference = _reference(case, keep)
    h = case.args[6]
    variants = [Variant(mistake, heads(case, keep, slip)) for mistake, slip in SLIPS.items()]
    variants += [Variant(axis(t + 1), heads(case, keep, f"axis {t}")) for t in range(h)]
    if case.causal:
        mistake, other, convention = other_alignment(case, conventions)
        variants.append(Variant(mistake, heads(case, other), convention))
    tol = tolerance(reference)
    return Expectation(reference, [v for v in variants if not close(v.answer, reference, tol)],
                       _no_key(case, keep, reference), lambda fmt: _in_format(case, keep, fmt))


def _in_format(case: Case, keep, fmt: str) -> list:
    """The library's output on the inputs rounded to fmt, rounded to fmt."""
    args = tuple(rounded(a, fmt) if isinstance(a, list) else a for a in case.args)
    return rounded(_reference(case._replace(args=args), keep), fmt)


def _reference(case: Case, keep) -> list:
    """The library's output; None for a query that sees no key (the library refuses it)."""
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
    rows = [i for i in range(len(X_q)) if keep is None or any(keep[i])]
    O = multi_head_attention([X_q[i] for i in rows], X_kv, W_Q, W_K, W_V, W_O, h,
                             mask=None if keep is None else [keep[i] for i in rows])
    found = dict(zip(rows, O))
    return [found.get(i) for i in range(len(X_q))]


def heads(case: Case, keep, slip: str = "") -> list:
    """Concat(head_1, ..., head_h) W_O with one slip, in IEEE arithmetic."""
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
    h = 1 if slip == "one head" else h
    Q, K, V = matmul(X_q, W_Q), matmul(X_kv, W_K), matmul(X_kv, W_V)
    d_k = len(Q[0]) // h
    c = {"d_model": 1 / math.sqrt(len(X_q[0])), "width": 1 / math.sqrt(len(Q[0])),
         "no scale": 1.0, "d_k": 1 / d_k}.get(slip, 1 / math.sqrt(d_k))
    outputs = []
    for t in range(h):
        Q_t, K_t, V_t = (_slice(A, t, h, slip == "interleaved") for A in (Q, K, V))
        S = logits(matmul(Q_t, T(K_t)), c, keep)
        if slip == f"axis {t}":
            outputs.append(mix(T([softmax_row(column) for column in zip(*S)]), V_t))
        else:
            outputs.append(attend(S, V_t))
    outputs = outputs[::-1] if slip == "reversed" else outputs
    joined = [None if None in rows else [x for row in rows for x in row] for rows in zip(*outputs)]
    return joined if slip == "no W_O" else mix(joined, W_O)


def _slice(A: List[List[float]], t: int, h: int, interleaved: bool) -> List[List[float]]:
    """Head t's columns of A: the t-th of h consecutive slices, or every h-th from t."""
    w = len(A[0]) // h
    return [row[t::h] if interleaved else row[t * w:(t + 1) * w] for row in A]


def _no_key(case: Case, keep, reference: list) -> List[NoKey]:
    """The whole answer under each convention for a query that sees no key."""
    if None not in reference:
        return []
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
    V = matmul(X_kv, W_V)
    mean = mix([[math.fsum(col) / len(V) for col in zip(*V)]], W_O)[0]  # each head's mean
    unmasked = _reference(case, None)
    d_out = len(W_O[0])
    return [NoKey("zeros", [[0.0] * d_out if r is None else r for r in reference]),
            NoKey("mean of V", [mean if r is None else r for r in reference]),
            NoKey("as if unmasked", [u if r is None else r for r, u in zip(reference, unmasked)],
                  UNMASKED_ROW)]


# ------------------------------------------------------------------ the random battery

def draw(rng: random.Random, takes: set, align: str, like: Optional[Case] = None) -> Case:
    """A random multi-head case: 1 to 8 heads, d_k and d_v from 1 to 4 (apart but one case
    in ten), d_model = h d_k, n and m up to 16 (8 but one case in ten), X_kv = X_q in one
    case in six where n = m; a mask and the causal flag each in a third of the cases that
    can take them.

    >>> draw(random.Random(4), {"mask", "causal"}, "top-left").title
    'n=5 m=2 d_model=28 h=7 d_k=4 d_v=1 d_out=1'
    """
    if like is None:
        large = rng.randrange(10) == 0
        n, m = rng.randint(1, 16 if large else 8), rng.randint(1, 16 if large else 8)
        h, d_k = rng.randint(1, 8), rng.randint(1, 4)
        d_v = d_k if rng.randrange(10) == 0 else rng.choice([d for d in range(1, 5) if d != d_k])
        d_model, d_out, itself = h * d_k, rng.randint(1, 6), rng.randrange(6) == 0
        if align == "bottom-right" and "causal" in takes:
            n = min(n, m)  # else the first queries would see no key
        causal = "causal" in takes and rng.randrange(3) == 0
        masked = "mask" in takes and rng.randrange(3) == 0
    else:
        X_q, X_kv, W_Q, W_K, W_V, W_O, h = like.args
        n, m, d_model, d_out = len(X_q), len(X_kv), len(X_q[0]), len(W_O[0])
        d_k, d_v, itself = len(W_Q[0]) // h, len(W_V[0]) // h, X_kv is X_q
        causal, masked = like.causal, like.mask is not None
    X_q = _inputs(rng, n, d_model)
    X_kv = X_q if itself and n == m else _inputs(rng, m, d_model)
    s = 1 / math.sqrt(d_model)
    W_Q, W_K = ([[s * w for w in row] for row in gauss(rng, d_model, h * d_k)] for _ in "QK")
    W_V = [[s * w for w in row] for row in gauss(rng, d_model, h * d_v)]
    mask = draw_mask(rng, n, m, causal, align) if masked else None
    case = Case("", (X_q, X_kv, W_Q, W_K, W_V, gauss(rng, h * d_v, d_out), h), mask=mask,
                causal=causal)
    return case._replace(title=describe(case))


def _inputs(rng: random.Random, rows: int, d_model: int) -> list:
    """X of N(0, 1) entries, or ten times that (sharp weights), or small integers (ties)."""
    style = rng.randrange(3)
    if style == 2:
        return [[float(rng.randint(-2, 2)) for _ in range(d_model)] for _ in range(rows)]
    return [[(1 + 9 * style) * x for x in row] for row in gauss(rng, rows, d_model)]


def describe(case: Case) -> str:
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
    return (f"n={len(X_q)} m={len(X_kv)} d_model={len(X_q[0])} h={h} d_k={len(W_Q[0]) // h} "
            f"d_v={len(W_V[0]) // h} d_out={len(W_O[0])}" + options_title(case))


def axes(case: Case) -> list:
    """Fewer heads first (their slices of W_Q, W_K, W_V's columns and W_O's rows), then
    queries, keys, d_model, each head's d_k and d_v, d_out."""
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
    d_k, d_v = len(W_Q[0]) // h, len(W_V[0]) // h
    return [("heads", h, _fewer_heads),
            ("queries", len(X_q), lambda c, keep: cut(c, {0: 0}, keep, mask_rows=True)),
            ("keys", len(X_kv), lambda c, keep: cut(c, {1: 0}, keep, mask_columns=True)),
            ("d_model", len(X_q[0]), lambda c, keep: cut(cut(c, {0: 1, 1: 1}, keep),
                                                         {2: 0, 3: 0, 4: 0}, keep)),
            ("d_k", d_k, lambda c, keep: _in_each_head(c, keep, (2, 3), ())),
            ("d_v", d_v, lambda c, keep: _in_each_head(c, keep, (4,), (5,))),
            ("d_out", len(W_O[0]), lambda c, keep: cut(c, {5: 1}, keep))]


def _fewer_heads(case: Case, keep: list) -> Case:
    """Only the kept heads: their slices of W_Q, W_K and W_V's columns, and of W_O's rows."""
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
    d_k, d_v = len(W_Q[0]) // h, len(W_V[0]) // h
    qk = [t * d_k + r for t in keep for r in range(d_k)]
    v = [t * d_v + r for t in keep for r in range(d_v)]
    args = list(cut(cut(case, {2: 1, 3: 1}, qk), {4: 1}, v).args)
    args[5], args[6] = [W_O[i] for i in v], len(keep)
    return case._replace(args=tuple(args))


def _in_each_head(case: Case, keep: list, columns: tuple, rows: tuple) -> Case:
    """Only the kept columns within each head's slice of the arguments at columns (and the
    same rows of those at rows: W_O follows W_V)."""
    h = case.args[6]
    width = len(case.args[columns[0]][0]) // h
    kept = [t * width + r for t in range(h) for r in keep]
    case = cut(case, {k: 1 for k in columns}, kept)
    return cut(case, {k: 0 for k in rows}, kept)


HEADER = "rows are tokens; Q = X_q W_Q; head t: the t-th slice of columns"
MODE = Mode("mha", ("multi_head_attention", "mha", "multihead_attention"),
            ("X_q", "X_kv", "W_Q", "W_K", "W_V", "W_O", "num_heads"), (0, 1), cases, expect,
            twin, unpack, stack, draw, axes, describe, header=HEADER)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
