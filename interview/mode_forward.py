"""The attention mode: NAME(Q, K, V[, mask=][, is_causal=][, scale=]), its cases and mistakes.

Each mistake is computed, not guessed: its answer is the attention a function with that
slip returns, in IEEE arithmetic (an overflow gives inf, then NaN, where plain Python
raises).  The other modes build on the pieces here: attend, softmax_row, mix, allowed.

Glossary: Q n x d_k, K m x d_k, V m x d_v; raw = Q K^T; c the scale; S the logits c raw
with -inf where a key is blocked; P the weights; O = P V.

The random battery's cases (draw, axes, describe) are built from draw_shapes, draw_options,
draw_matrices and draw_mask, which the other modes share.

Public API (`__all__`): MODE, NO_SCALE, BY_D_K, BY_SQRT_D_V, BY_SQRT_M, BY_SQRT_N,
BY_SQRT_D_K_1, TIMES_SQRT_D_K, SCALE_AFTER, OTHER_SCALE, SCALE_IGNORED, SCALE_INVERTED,
SCALE_TWICE, COLUMNS, WHOLE, NO_SHIFT, SHIFT_MIN, SHIFT_FIRST, SHIFT_GLOBAL, WEIGHTS,
TRANSPOSED, MASK_IGNORED, MASK_AFTER, MASK_ZERO, MASK_ADDED, TRUE_BLOCKS, TRUE_ATTENDS,
CAUSAL_IGNORED, CAUSAL_AFTER, CAUSAL_ZERO, BOTTOM_RIGHT, TOP_LEFT, FUTURE, STRICT,
PLUS_ONE, MASK_LOST, cases, expect, allowed, right_answer, no_key, other_alignment,
default_scale, logits, attend, weights, softmax_row, exp_ieee, mix, T, gauss, logits_case,
title, in_format, fitted_scale, scale_shown, unpack, stack, rounded, draw_shapes,
draw_options, draw_matrices, draw_mask, draw_scale, cut, options_title, shape_of, twin,
draw, axes, describe, OFFSETS, random_case.

python3 interview/check.py --help runs the checker.
"""

import math  # sqrt, exp, fsum, inf, nan
import random  # the seeded inputs
from typing import Callable, List, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import causal_mask, matmul, scaled_dot_product_attention, transpose
from interview.judge import (UNMASKED_ROW, Case, Expectation, Mistake, Mode, NoKey, Variant, close,
                             tolerance, worst)
from lowprecision.emulation import dot_in, round_to, softmax_in

Matrix = List[List[float]]  # a matrix is a list of rows

__all__ = ["MODE", "NO_SCALE", "BY_D_K", "BY_SQRT_D_V", "BY_SQRT_M", "BY_SQRT_N",
           "BY_SQRT_D_K_1", "TIMES_SQRT_D_K", "SCALE_AFTER", "OTHER_SCALE", "SCALE_IGNORED",
           "SCALE_INVERTED", "SCALE_TWICE", "COLUMNS", "WHOLE", "NO_SHIFT", "SHIFT_MIN",
           "SHIFT_FIRST", "SHIFT_GLOBAL", "WEIGHTS", "TRANSPOSED", "MASK_IGNORED", "MASK_AFTER",
           "MASK_ZERO", "MASK_ADDED", "TRUE_BLOCKS", "TRUE_ATTENDS", "CAUSAL_IGNORED",
           "CAUSAL_AFTER", "CAUSAL_ZERO", "BOTTOM_RIGHT", "TOP_LEFT", "FUTURE", "STRICT",
           "PLUS_ONE", "MASK_LOST", "cases", "expect", "allowed", "right_answer", "no_key",
           "other_alignment", "default_scale", "logits", "attend", "weights", "softmax_row",
           "exp_ieee", "mix", "T", "gauss", "logits_case", "title", "in_format", "fitted_scale",
           "scale_shown", "unpack", "stack", "rounded", "draw_shapes", "draw_options",
           "draw_matrices", "draw_mask", "draw_scale", "cut", "options_title", "shape_of",
           "twin", "draw", "axes", "describe", "OFFSETS", "random_case"]

WHICH = "interview.md#which-sqrtd_k-and-where"
AXIS = "interview.md#over-which-axis-does-softmax-run"
MAX = "interview.md#why-subtract-the-max-inside-softmax"
RETURNS = "interview.md#what-does-attention-return-weights-or-outputs"
MASK = "interview.md#how-should-a-mask-be-applied"
CAUSAL = "interview.md#causal-masks-top-left-or-bottom-right"
POLARITY = "interview.md#true-means-masked"

NO_SCALE = Mistake("no scale", "interview.md#why-divide-by-sqrtd_k")
BY_D_K = Mistake("scale 1/d_k", WHICH)
BY_SQRT_D_V = Mistake("scale 1/sqrt(d_v)", WHICH)
BY_SQRT_M = Mistake("scale 1/sqrt(m)", WHICH)
BY_SQRT_N = Mistake("scale 1/sqrt(n)", WHICH)
BY_SQRT_D_K_1 = Mistake("scale 1/sqrt(d_k+1)", WHICH)
TIMES_SQRT_D_K = Mistake("times sqrt(d_k)", WHICH)
SCALE_AFTER = Mistake("scale after softmax", WHICH)
OTHER_SCALE = Mistake("another scale", WHICH)
SCALE_IGNORED = Mistake("scale argument ignored", WHICH)
SCALE_INVERTED = Mistake("divided by scale", WHICH)
SCALE_TWICE = Mistake("scale applied twice", WHICH)
COLUMNS = Mistake("softmax over columns", AXIS)
WHOLE = Mistake("softmax over whole matrix", AXIS)
NO_SHIFT = Mistake("no max-shift", MAX)
SHIFT_MIN = Mistake("shift by row min", MAX)
SHIFT_FIRST = Mistake("shift by first entry", MAX)
SHIFT_GLOBAL = Mistake("shift by global max", MAX)
WEIGHTS = Mistake("returned weights P", RETURNS)
TRANSPOSED = Mistake("output transposed", RETURNS)
MASK_IGNORED = Mistake("mask ignored", MASK)
MASK_AFTER = Mistake("mask after softmax", MASK)
MASK_ZERO = Mistake("masked scores 0, not -inf", MASK)
MASK_ADDED = Mistake("bool mask added", MASK)
TRUE_BLOCKS = Mistake("mask True = blocked", POLARITY)
TRUE_ATTENDS = Mistake("mask True = may attend", POLARITY)
CAUSAL_IGNORED = Mistake("is_causal ignored", CAUSAL)
CAUSAL_AFTER = Mistake("causal mask after softmax", MASK)
CAUSAL_ZERO = Mistake("causal scores 0, not -inf", MASK)
BOTTOM_RIGHT = Mistake("causal bottom-right", CAUSAL)
TOP_LEFT = Mistake("causal top-left", CAUSAL)
FUTURE = Mistake("causal reversed (j >= i)", CAUSAL)
STRICT = Mistake("causal j < i", CAUSAL)
PLUS_ONE = Mistake("causal j <= i+1", CAUSAL)
MASK_LOST = Mistake("mask dropped by is_causal", MASK)


# ----------------------------------------------------------------------------- the cases

def cases() -> List[Case]:
    """Return the attention cases, from a fixed seed.  The first's shapes make every wrong
    square root differ (n, m, d_k, d_v, d_k + 1 all differ); each trap of the max-shift comes
    after the cases that rule out its look-alikes.

    >>> [c.title for c in cases()][:4]
    ['n=3 m=5 d_k=16 d_v=2', 'n=5 m=2 d_k=7 d_v=3', 'n=3 m=4 d_k=1 d_v=5', 'logits near +1e3']
    """
    rng = random.Random(17)
    T, F = True, False
    mask = [[T, F, T, F, T], [F, T, T, F, F], [T, T, F, T, F]]  # mask and inverse keep a key
    no_key = [[T, F, T, F], [F, F, F, F], [F, T, T, T]]  # row 1 sees no key
    high, low = [[1000.0, 999.0, 998.5], [997.0, 1000.5, 999.0]], [[-1000.0, -1001.0, -999.5]]
    return [
        random_case(rng, 3, 5, 16, 2),
        random_case(rng, 5, 2, 7, 3),
        random_case(rng, 3, 4, 1, 5),
        logits_case("logits near +1e3", high),
        logits_case("logits near -1e3", [low[0], [-1002.0, -1000.0, -1000.75]]),
        logits_case("row [1e3, 0, -1e3]", [[1000.0, 0.0, -1000.0]]),
        logits_case("row [0, 1e3, -1e3]", [[0.0, 1000.0, -1000.0]]),
        logits_case("rows 2e3 apart", [high[0], low[0]]),
        random_case(rng, 3, 5, 16, 2, scale=0.25),
        random_case(rng, 3, 5, 16, 2, mask=mask),
        random_case(rng, 4, 4, 6, 2, causal=True),
        random_case(rng, 3, 5, 6, 2, causal=True),
        random_case(rng, 5, 3, 6, 2, causal=True),
        random_case(rng, 3, 4, 16, 2, mask=no_key, kind="no key"),
        random_case(rng, 2, 3, (4, 3), 2, kind="error"),
        random_case(rng, 2, (3, 2), 4, 2, kind="error"),
    ]


def random_case(rng: random.Random, n, m, d_k, d_v: int, **options) -> Case:
    """A case of N(0, 1) entries, so that at initialisation q . k / sqrt(d_k) is about N(0, 1).
    A pair (a, b) for d_k gives Q a columns and K b; for m, K a rows and V b."""
    d_q, d_k = d_k if isinstance(d_k, tuple) else (d_k, d_k)
    m_k, m_v = m if isinstance(m, tuple) else (m, m)
    Q, K, V = (gauss(rng, r, c) for r, c in ((n, d_q), (m_k, d_k), (m_v, d_v)))
    return Case(title(Q, K, V, **options), (Q, K, V), **options)


def gauss(rng: random.Random, rows: int, cols: int) -> Matrix:
    return [[rng.gauss(0.0, 1.0) for _ in range(cols)] for _ in range(rows)]


def logits_case(name: str, L: Matrix) -> Case:
    """Q and K whose scaled logits are L exactly: d_k = 4, k_j = 2 e_j, q_i = L_i (padded),
    so q . k_j / sqrt(4) = L_ij; V's rows are 1, 2, 3, ... times (1, -1, 0.5, 2, -3, 0.25)."""
    m = len(L[0])
    K = [[2.0 * (t == j) for t in range(4)] for j in range(m)]
    Q = [row + [0.0] * (4 - m) for row in L]
    V = [[(j + 1) * v for v in (1.0, -1.0, 0.5, 2.0, -3.0, 0.25)] for j in range(m)]
    return Case(name, (Q, K, V))


def title(Q: Matrix, K: Matrix, V: Matrix, mask=None, causal=False, scale=None,
          kind="ordinary") -> str:
    """The case's title from its shapes, so that it cannot say another."""
    n, m, d_q, d_k, m_v, d_v = len(Q), len(K), len(Q[0]), len(K[0]), len(V), len(V[0])
    if d_q != d_k:
        return f"Q d_k={d_q}, K d_k={d_k}"
    if m_v != m:
        return f"K {m} rows, V {m_v}"
    shapes = f"n={n} m={m} d_k={d_k} d_v={d_v}"
    if kind == "no key":
        return f"row {next(i for i, row in enumerate(mask) if not any(row))} sees no key, {shapes}"
    prefix = "is_causal " if causal else "mask " if mask else f"scale={scale} " if scale else ""
    return prefix + shapes


def twin(case: Case) -> Case:
    """The second batch element of a named case: the same case with -Q, so that its answer
    differs.  (The random battery's twins differ in every argument: battery.draws.)"""
    Q, K, V = case.args
    return case._replace(args=([[-q for q in row] for row in Q], K, V))


# ------------------------------------------------------------- the right answer and slips

def expect(case: Case, conventions) -> Expectation:
    """What the case's answer must be, and what each mistake would give."""
    if case.kind == "error":
        return Expectation(None, [])
    keep = allowed(case, conventions.align)
    reference = right_answer(case, keep)
    tol = tolerance(reference)
    variants = [v for v in _variants(case, keep, conventions)
                if not close(v.answer, reference, tol)]  # a mistake that shows in this case
    fitted = None if case.scale else lambda got: fitted_scale(case, keep, got)
    shown = None if case.scale else lambda got: scale_shown(case, keep, got)
    return Expectation(reference, variants, no_key(case, keep, reference),
                       lambda fmt: in_format(case, keep, fmt), fitted, rules_out=shown)


def allowed(case: Case, align: str) -> Optional[List[List[bool]]]:
    """Which keys each query may attend to (True), from the mask and the causal flag in the
    given alignment; None when all."""
    n, m = len(case.args[0]), len(case.args[1])
    causal = causal_mask(n, m, align=align) if case.causal else None
    if case.mask is None:
        return causal
    if causal is None:
        return case.mask
    return [[a and b for a, b in zip(r, s)] for r, s in zip(case.mask, causal)]


def right_answer(case: Case, keep) -> list:
    """The library's output, with None for a query that sees no key (the library refuses it)."""
    Q, K, V = case.args
    rows = [i for i in range(len(Q)) if keep is None or any(keep[i])]
    if not rows:
        return [None] * len(Q)
    O = scaled_dot_product_attention([Q[i] for i in rows], K, V, scale=case.scale,
                                     mask=None if keep is None else [keep[i] for i in rows])
    found = dict(zip(rows, O))
    return [found.get(i) for i in range(len(Q))]


def _variants(case: Case, keep, conventions) -> List[Variant]:
    Q, K, V = case.args
    n, m, d_k, d_v = len(Q), len(K), len(K[0]), len(V[0])
    raw, c = matmul(Q, transpose(K)), default_scale(case)
    S = logits(raw, c, keep)

    def out(factor=c, where=keep, fill=-math.inf, shift="max"):
        return attend(logits(raw, factor, where, fill), V, shift)

    if case.scale is None:
        factors = [(NO_SCALE, 1.0), (BY_D_K, 1 / d_k), (BY_SQRT_D_V, 1 / math.sqrt(d_v)),
                   (BY_SQRT_M, 1 / math.sqrt(m)), (BY_SQRT_N, 1 / math.sqrt(n)),
                   (BY_SQRT_D_K_1, 1 / math.sqrt(d_k + 1)), (TIMES_SQRT_D_K, math.sqrt(d_k))]
    else:
        factors = [(SCALE_IGNORED, 1 / math.sqrt(d_k)), (SCALE_INVERTED, 1 / case.scale),
                   (SCALE_TWICE, case.scale / math.sqrt(d_k))]
    variants = [Variant(mistake, out(factor)) for mistake, factor in factors]
    variants.append(Variant(SCALE_AFTER, [None if row is None else [c * o for o in row]
                                          for row in out(1.0)]))
    variants += [Variant(COLUMNS, mix(T([softmax_row(col) for col in zip(*S)]), V)),
                 Variant(WHOLE, mix(_whole(S), V)), Variant(WEIGHTS, weights(S))]
    variants += [Variant(mistake, out(shift=shift)) for mistake, shift in
                 ((NO_SHIFT, "none"), (SHIFT_MIN, "min"), (SHIFT_FIRST, "first"),
                  (SHIFT_GLOBAL, "global"))]
    O = out()
    if None not in O:
        variants.append(Variant(TRANSPOSED, T(O)))
    if keep is not None:
        variants += _mask_variants(case, raw, c, keep, conventions)
    return variants


def _mask_variants(case: Case, raw: Matrix, c: float, keep, conventions) -> List[Variant]:
    """The slips of a mask and of the causal flag."""
    V, n, m = case.args[2], len(raw), len(raw[0])
    P = [softmax_row([c * s for s in row]) for row in raw]  # unmasked, then zeroed
    after, zero = (CAUSAL_AFTER, CAUSAL_ZERO) if case.causal else (MASK_AFTER, MASK_ZERO)
    variants = [Variant(after, mix([[p * a for p, a in zip(P_i, k_i)]
                                    for P_i, k_i in zip(P, keep)], V)),
                Variant(zero, attend(logits(raw, c, keep, 0.0), V))]
    if case.causal:
        shift = m - n if conventions.align == "bottom-right" else 0
        mistake, other, implied = other_alignment(case, conventions)
        convention = Variant(mistake, attend(logits(raw, c, other), V), implied)
        rules = [(CAUSAL_IGNORED, lambda i, j: True), (FUTURE, lambda i, j: j >= i + shift),
                 (STRICT, lambda i, j: j < i + shift), (PLUS_ONE, lambda i, j: j <= i + shift + 1)]
        mask = case.mask or [[True] * m for _ in range(n)]  # each rule with the caller's mask
        if case.mask is not None:  # the causal mask put in the place of the caller's
            lost = allowed(case._replace(mask=None), conventions.align)
            variants.append(Variant(MASK_LOST, attend(logits(raw, c, lost), V)))
        return variants + [convention] + [
            Variant(mistake, attend(logits(raw, c, [[rule(i, j) and mask[i][j] for j in range(m)]
                                                    for i in range(n)]), V))
            for mistake, rule in rules]
    sent = [[a != conventions.true_blocks for a in row] for row in case.mask]
    inverted = [[not a for a in row] for row in case.mask]
    polarity = TRUE_ATTENDS if conventions.true_blocks else TRUE_BLOCKS
    added = [[c * s + a for s, a in zip(row, s_i)] for row, s_i in zip(raw, sent)]
    return variants + [Variant(MASK_IGNORED, attend(logits(raw, c, None), V)),
                       Variant(polarity, attend(logits(raw, c, inverted), V),
                               {"true_blocks": not conventions.true_blocks}),
                       Variant(MASK_ADDED, attend(added, V))]


def no_key(case: Case, keep, reference: list) -> List[NoKey]:
    """The whole answer under each convention for a query that sees no key."""
    if None not in reference:
        return []
    Q, K, V = case.args
    mean = [math.fsum(column) / len(V) for column in zip(*V)]
    unmasked = scaled_dot_product_attention(Q, K, V, scale=case.scale)
    return [NoKey("zeros", [[0.0] * len(V[0]) if r is None else r for r in reference]),
            NoKey("mean of V", [mean if r is None else r for r in reference]),
            NoKey("as if unmasked", [u if r is None else r for r, u in zip(reference, unmasked)],
                  UNMASKED_ROW)]


def other_alignment(case: Case, conventions) -> tuple:
    """(the convention Mistake, the other alignment's keys) for a causal case: bottom-right
    when top-left is expected, and the other way round."""
    other = "top-left" if conventions.align == "bottom-right" else "bottom-right"
    keep = allowed(case._replace(causal=True), other)
    return (TOP_LEFT if other == "top-left" else BOTTOM_RIGHT), keep, {"align": other}


def default_scale(case: Case) -> float:
    return case.scale if case.scale is not None else 1 / math.sqrt(len(case.args[1][0]))


# --------------------------------------------------- attention in IEEE arithmetic

def logits(raw: Matrix, c: float, keep=None, fill: float = -math.inf) -> Matrix:
    """S = c raw, with fill where keep is False."""
    if keep is None:
        return [[c * s for s in row] for row in raw]
    return [[c * s if a else fill for s, a in zip(row, k_i)] for row, k_i in zip(raw, keep)]


def attend(S: Matrix, V: Matrix, shift: str = "max") -> list:
    """softmax(S) V row by row, each row shifted by its max ("max"), by nothing ("none"),
    its min, its first entry, or the max over all of S ("global"); None for a row of -inf."""
    top = max(max(row) for row in S)
    by = {"max": max, "none": lambda row: 0.0, "min": min, "first": lambda row: row[0],
          "global": lambda row: top}[shift]
    return mix([None if max(row) == -math.inf else softmax_row(row, by(row)) for row in S], V)


def weights(S: Matrix) -> list:
    return [None if max(row) == -math.inf else softmax_row(row) for row in S]


def softmax_row(x, shift: Optional[float] = None) -> List[float]:
    """exp(x - shift) / sum, as IEEE floats give it: inf for an exp that overflows, NaN for
    inf / inf and 0 / 0.  shift defaults to max(x)."""
    shift = max(x) if shift is None else shift
    e = [exp_ieee(v - shift) for v in x]
    try:
        Z = math.fsum(e)
    except (OverflowError, ValueError):  # finite terms whose sum passes 1.8e308
        Z = math.inf
    return [v / Z if Z != 0.0 else math.nan for v in e]


def exp_ieee(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def mix(P: list, V: Matrix) -> list:
    """P V, a None row of P giving a None row; NaN anywhere in a row of P gives a NaN row."""
    columns = list(zip(*V))
    return [None if p is None else [_sum([a * b for a, b in zip(p, v)]) for v in columns]
            for p in P]


def _sum(terms: List[float]) -> float:
    try:
        return math.fsum(terms)
    except (OverflowError, ValueError):  # inf - inf, or past the range
        return math.nan


def T(A: list) -> list:
    """A's transpose, whatever its entries (attention.transpose checks them)."""
    return [list(column) for column in zip(*A)]


def _whole(S: Matrix) -> Matrix:
    """One softmax over every entry of S, cut back into rows."""
    m = len(S[0])
    p = softmax_row([s for row in S for s in row])
    return [p[i * m:(i + 1) * m] for i in range(len(S))]


# ----------------------------------------------- explaining an error no mistake gives

def in_format(case: Case, keep, fmt: str) -> Optional[list]:
    """The answer with every operation rounded to fmt (lowprecision/emulation.py)."""
    Q, K, V = case.args
    c, columns = round_to(default_scale(case), fmt), list(zip(*V))
    answer = []
    for i, q in enumerate(Q):
        if keep is not None and not any(keep[i]):
            answer.append(None)
            continue
        S = [round_to(c * dot_in(q, k, fmt), fmt) if keep is None or keep[i][j] else -math.inf
             for j, k in enumerate(K)]
        p = softmax_in(S, fmt)
        answer.append([dot_in(p, v, fmt) for v in columns])
    return answer


def fitted_scale(case: Case, keep, got) -> Optional[tuple]:
    """(OTHER_SCALE, "c = 1/sqrt(x)") when softmax(c Q K^T) V is the answer for one
    constant c and the right scale's is not: a search over c on a log grid, then golden
    sections."""
    error = _scale_error(case, keep, got)
    right = math.log(default_scale(case))
    if error(right) <= 10 * tolerance(got):
        return None  # the right scale fits as well: the error lies elsewhere
    grid = [k / 4 * math.log(2) for k in range(-48, 13)]  # c from 2^-12 to 8
    best = min(range(len(grid)), key=lambda k: error(grid[k]))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(80):
        x, y = b - (b - a) / 1.618033988749895, a + (b - a) / 1.618033988749895
        a, b = (a, y) if error(x) < error(y) else (x, b)
    c = math.exp((a + b) / 2)
    if error(math.log(c)) > 10 * tolerance(got) or abs(c / default_scale(case) - 1) < 1e-3:
        return None  # no constant fits, or one within 0.1% of the right one: noise
    x = 1 / (c * c)
    return OTHER_SCALE, (f"1/sqrt({round(x)})" if abs(x - round(x)) < 1e-6 * x else f"{c:.4g}")


def scale_shown(case: Case, keep, got) -> set:
    """{OTHER_SCALE} when the answer shows the candidate's scale is the right one: the right
    scale fits it, and a scale 2^(1/4) times larger or smaller would not (so that here the
    scale shows); else the empty set."""
    error, limit = _scale_error(case, keep, got), 10 * tolerance(got)
    right = math.log(default_scale(case))
    step = math.log(2) / 4
    if error(right) <= limit < min(error(right - step), error(right + step)):
        return {OTHER_SCALE}
    return set()


def _scale_error(case: Case, keep, got) -> Callable:
    """log c -> the largest error of got against softmax(c Q K^T) V (inf when its shape is
    another)."""
    Q, K, V = case.args
    raw = matmul(Q, transpose(K))

    def error(log_c: float) -> float:
        answer = attend(logits(raw, math.exp(log_c), keep), V)
        return worst(got, answer)[0] if close(got, answer, math.inf) else math.inf
    return error


def unpack(value, batched: bool):
    """The output of a pair (output, weights) or (output, None); anything else as it is."""
    depth = 3 if batched else 2
    if isinstance(value, list) and len(value) == 2 and _depth(value[0]) == depth:
        return value[0]
    return value


def _depth(x) -> int:
    return 1 + _depth(x[0]) if isinstance(x, list) and x else 0 if isinstance(x, float) else -1


def stack(a, b) -> list:
    return [a, b]


def rounded(x, fmt: str):
    """x with every number rounded to fmt: a matrix, a list of them, a number."""
    if isinstance(x, list):
        return [rounded(v, fmt) for v in x]
    return x if x is None else round_to(x, fmt)


# ------------------------------------------------------------------ the random battery
# Most cases are small (n, m up to 8, d up to 6); one in LARGE goes up to n = 16, m = 64,
# d = 16.  Each draws its logits in one of four styles: N(0, 1) entries; small integers
# (ties); an offset per query of up to 1e3 either way (so that a finite fill of the masked
# keys shows, and so does a running state not reset between queries); and keys drawn from a
# pool of one to three (ties between keys, and between blocks' maxima).

LARGE = 10  # one case in LARGE is large
STYLES = ("gauss", "integers", "offsets", "pool")
OFFSETS = (-1000.0, -300.0, -30.0, 0.0, 30.0, 300.0, 1000.0)


def draw(rng: random.Random, takes: set, align: str, like: Optional[Case] = None) -> Case:
    """A random attention case: its shapes and options (like's, if given) and new values.

    >>> draw(random.Random(1), {"mask", "causal", "scale"}, "top-left").title
    'n=8 m=7 d_k=3 d_v=5'
    """
    if like is None:
        n, m, d_k, d_v = draw_shapes(rng, align, takes)
        options = draw_options(rng, takes, d_k)
    else:
        (n, d_k), m, d_v = shape_of(like.args[0]), len(like.args[1]), len(like.args[2][0])
        options = {"causal": like.causal, "scale": like.scale, "mask": like.mask is not None}
    Q, K, V = draw_matrices(rng, n, m, d_k, d_v, options["scale"])
    mask = draw_mask(rng, n, m, options["causal"], align) if options["mask"] else None
    case = Case("", (Q, K, V), mask=mask, causal=options["causal"], scale=options["scale"])
    return case._replace(title=describe(case))


def shape_of(A: Matrix) -> tuple:
    return len(A), len(A[0])


def draw_shapes(rng: random.Random, align: str, takes: set) -> tuple:
    """(n, m, d_k, d_v): n < m, n = m or n > m alike, d_k != d_v but one case in ten.  With
    a bottom-right causal mask, n > m would leave the first queries without a key: n <= m."""
    large = rng.randrange(LARGE) == 0
    top_n, top_m, top_d = (16, 64, 16) if large else (8, 10, 6)
    order = rng.choice("<=>" if align == "top-left" or "causal" not in takes else "<=")
    if order == "<":
        n = rng.randint(1, top_n)
        m = rng.randint(n + 1, top_m)
    elif order == "=":
        n = m = rng.randint(1, top_n)
    else:
        m = rng.randint(1, top_n - 1)
        n = rng.randint(m + 1, top_n)
    d_k = rng.randint(1, top_d)
    d_v = d_k if rng.randrange(10) == 0 else rng.choice(
        [d for d in range(1, top_d + 1) if d != d_k])
    return n, m, d_k, d_v


def draw_options(rng: random.Random, takes: set, d_k: int) -> dict:
    """Each option the function takes, in a third of the cases: a mask, the causal flag
    (so that both come together in a ninth), a scale that is not 1/sqrt(d_k)."""
    options = {o: o in takes and rng.randrange(3) == 0 for o in ("mask", "causal", "scale")}
    options["scale"] = draw_scale(rng, d_k) if options["scale"] else None
    return options


def draw_scale(rng: random.Random, d_k: int) -> float:
    """A scale at least a third away from 1/sqrt(d_k), in three significant digits."""
    factor = rng.choice((rng.uniform(0.2, 0.67), rng.uniform(1.5, 4.0)))
    return float(f"{factor / math.sqrt(d_k):.3g}")


def draw_matrices(rng: random.Random, n: int, m: int, d_k: int, d_v: int,
                  scale: Optional[float]) -> tuple:
    """Q, K and V in one of the STYLES; c is the scale the logits are drawn for."""
    style = rng.choice(STYLES)
    if style == "integers":
        return tuple([[float(rng.randint(-2, 2)) for _ in range(c)] for _ in range(r)]
                     for r, c in ((n, d_k), (m, d_k), (m, d_v)))
    Q, K, V = gauss(rng, n, d_k), gauss(rng, m, d_k), gauss(rng, m, d_v)
    if style == "pool":
        pool = K[:rng.randint(1, 3)]
        K = [list(rng.choice(pool)) for _ in range(m)]
    elif style == "offsets":  # logits c q . k = offset + noise: K's first column is k_0
        c, k_0 = (scale if scale is not None else 1 / math.sqrt(d_k)), rng.uniform(0.5, 2.0)
        for row in K:
            row[0] = k_0
        for row in Q:
            row[0] = rng.choice(OFFSETS) / (c * k_0)
    return Q, K, V


def draw_mask(rng: random.Random, n: int, m: int, causal: bool, align: str) -> list:
    """A random n x m mask, True = may attend, in which every query keeps a key (under the
    causal mask too, when there is one)."""
    mask = [[rng.random() < 0.6 for _ in range(m)] for _ in range(n)]
    shift = m - n if align == "bottom-right" else 0
    for i, row in enumerate(mask):
        open_ = [j for j in range(m) if not causal or j <= i + shift]
        if not any(row[j] for j in open_):
            row[rng.choice(open_)] = True
    return mask


def describe(case: Case) -> str:
    """The case's shapes and options, as the battery's lines show them."""
    Q, K, V = case.args[:3]
    return f"n={len(Q)} m={len(K)} d_k={len(K[0])} d_v={len(V[0])}" + options_title(case)


def options_title(case: Case) -> str:
    return ((", mask" if case.mask is not None else "") + (", is_causal" if case.causal else "")
            + (f", scale={case.scale:g}" if case.scale is not None else ""))


def axes(case: Case) -> list:
    """The axes a failing case shrinks along, in order: (name, length, keep)."""
    Q, K, V = case.args[:3]
    return [("queries", len(Q), lambda c, keep: cut(c, {0: 0}, keep, mask_rows=True)),
            ("keys", len(K), lambda c, keep: cut(c, {1: 0, 2: 0}, keep, mask_columns=True)),
            ("d_k", len(K[0]), lambda c, keep: cut(c, {0: 1, 1: 1}, keep)),
            ("d_v", len(V[0]), lambda c, keep: cut(c, {2: 1}, keep))]


def cut(case: Case, where: dict, keep: list, mask_rows=False, mask_columns=False) -> Case:
    """The case with only the kept indices along an axis: where maps an argument's position
    to 0 (its rows) or 1 (its columns); the mask's rows or columns follow."""
    args = list(case.args)
    for k, axis in where.items():
        args[k] = _keep(args[k], keep, axis)
    mask = case.mask
    if mask is not None and (mask_rows or mask_columns):
        mask = _keep(mask, keep, 0 if mask_rows else 1)
    return case._replace(args=tuple(args), mask=mask)


def _keep(A: list, keep: list, axis: int) -> list:
    if axis == 0:
        return [A[i] for i in keep]
    return [[row[j] for j in keep] for row in A]


MODE = Mode("attention", ("attention", "scaled_dot_product_attention"), ("Q", "K", "V"),
            (0, 1, 2), cases, expect, twin, unpack, stack, draw, axes, describe)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
