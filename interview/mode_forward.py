"""The attention mode: NAME(Q, K, V[, mask=][, is_causal=][, scale=]), its cases and mistakes.

Each mistake is computed, not guessed: its answer is the attention a function with that
slip returns, in IEEE arithmetic (an overflow gives inf, then NaN, where plain Python
raises).  The other modes build on the pieces here: attend, softmax_row, mix, allowed.

Glossary: Q n x d_k, K m x d_k, V m x d_v; raw = Q K^T; c the scale; S the logits c raw
with -inf where a key is blocked; P the weights; O = P V.

python3 interview/check.py --help runs the checker.
"""

import math  # sqrt, exp, fsum, inf, nan
import random  # the seeded inputs
from typing import List, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import causal_mask, matmul, scaled_dot_product_attention, transpose
from interview.judge import (UNMASKED_ROW, Case, Expectation, Mistake, Mode, NoKey, Variant, close,
                             tolerance, worst)
from lowprecision.emulation import dot_in, round_to, softmax_in

Matrix = List[List[float]]  # a matrix is a list of rows

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
    """The second batch element: the same case with -Q, so that its answer differs."""
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
    return Expectation(reference, variants, no_key(case, keep, reference),
                       lambda fmt: in_format(case, keep, fmt),
                       None if case.scale else lambda got: fitted_scale(case, keep, got))


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
        return variants + [convention] + [
            Variant(mistake, attend(logits(raw, c, [[rule(i, j) for j in range(m)]
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
    constant c: a search over c on a log grid, then golden sections."""
    Q, K, V = case.args
    raw = matmul(Q, transpose(K))

    def error(log_c: float) -> float:
        answer = attend(logits(raw, math.exp(log_c), keep), V)
        return worst(got, answer)[0] if close(got, answer, math.inf) else math.inf

    grid = [k / 4 * math.log(2) for k in range(-48, 13)]  # c from 2^-12 to 8
    best = min(range(len(grid)), key=lambda k: error(grid[k]))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(80):
        x, y = b - (b - a) / 1.618033988749895, a + (b - a) / 1.618033988749895
        a, b = (a, y) if error(x) < error(y) else (x, b)
    c = math.exp((a + b) / 2)
    if error(math.log(c)) > 10 * tolerance(got) or abs(c * math.sqrt(len(K[0])) - 1) < 1e-6:
        return None  # no constant fits, or the right one does: the error lies elsewhere
    x = 1 / (c * c)
    return OTHER_SCALE, (f"1/sqrt({round(x)})" if abs(x - round(x)) < 1e-6 * x else f"{c:.4g}")


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


MODE = Mode("attention", ("attention", "scaled_dot_product_attention"), ("Q", "K", "V"),
            (0, 1, 2), cases, expect, twin, unpack, stack)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
