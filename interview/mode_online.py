"""The one-pass mode: NAME(Q, K, V, block_size[, mask=][, is_causal=][, scale=]) computes
attention in one pass over blocks of keys, and must equal the two-pass output for every
block size from 1 to m, with m = 7 not a multiple of any block size between.

Each mistake is the one-pass recurrence with one slip, computed by one_pass() below; per
query, a running max mx, denominator d and output o absorb each block of logits s and
values v:

    mx' = max(mx, max s)     r = exp(mx - mx')     e = exp(s - mx')
    d' = d r + sum e         o' = o r + sum e v    and at the end O = o / d

Its random battery draws mode_forward's cases with a block size from 1 to m + 1.

Public API (`__all__`): MODE, MAX_FROM_0, NO_RESCALE, OUTPUT_NOT_RESCALED,
DIVIDED_PER_BLOCK, LAST_BLOCK_DROPPED, MASKED_BLOCK_NAN, cases, expect, one_pass, draw,
twin, describe.

python3 interview/check.py --help runs the checker.
"""

import math  # inf, nan, fsum
import random  # the seeded inputs
from typing import List, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import matmul, transpose
from interview.judge import Case, Expectation, Mistake, Mode, Variant, close, tolerance
from interview import mode_forward
from interview.mode_forward import (BY_D_K, NO_SCALE, allowed, default_scale, exp_ieee,
                                    fitted_scale, gauss, in_format, logits, logits_case, no_key,
                                    other_alignment, right_answer, scale_shown, stack, title,
                                    unpack)

__all__ = ["MODE", "MAX_FROM_0", "NO_RESCALE", "OUTPUT_NOT_RESCALED", "DIVIDED_PER_BLOCK",
           "LAST_BLOCK_DROPPED", "MASKED_BLOCK_NAN", "cases", "expect", "one_pass", "draw",
           "twin", "describe"]

ONE_PASS = "interview.md#write-attention-in-one-pass"
MAX_FROM_0 = Mistake("running max from 0", ONE_PASS)
NO_RESCALE = Mistake("no rescaling", ONE_PASS)
OUTPUT_NOT_RESCALED = Mistake("output not rescaled", ONE_PASS)
DIVIDED_PER_BLOCK = Mistake("divided per block", ONE_PASS)
LAST_BLOCK_DROPPED = Mistake("last block dropped", ONE_PASS)
MASKED_BLOCK_NAN = Mistake("masked block gives NaN", ONE_PASS)
SLIPS = {MAX_FROM_0: "max from 0", NO_RESCALE: "no rescale", OUTPUT_NOT_RESCALED: "output",
         DIVIDED_PER_BLOCK: "divide", LAST_BLOCK_DROPPED: "drop last", MASKED_BLOCK_NAN: "nan"}


def cases() -> List[Case]:
    """Return the one-pass cases: one per block size on the same n=3 m=7 inputs, then the
    traps (logits of 1e3, a max that grows, masked blocks).

    >>> [c.title for c in cases()][:2]
    ['block_size=1, n=3 m=7 d_k=16 d_v=2', 'block_size=2, n=3 m=7 d_k=16 d_v=2']
    """
    rng = random.Random(29)
    Q, K, V = gauss(rng, 3, 16), gauss(rng, 7, 16), gauss(rng, 7, 2)
    T, F = True, False
    mask = [[F, F, F, T, T, F, T], [T, F, T, F, F, T, T], [F, T, F, T, T, F, F]]
    no_key = [[T, F, T, F, F, T, F], [F] * 7, [F, T, F, F, T, T, T]]
    near = [[1000.0, 999.0, 998.5], [997.0, 1000.5, 999.0]]
    listed = [_sized(Case("", (Q, K, V)), b) for b in range(1, 8)]
    listed += [_sized(logits_case("logits near -1e3", [[-1000.0, -1001.0, -999.5]]), 2),
               _sized(logits_case("logits near +1e3", near), 2),
               _sized(logits_case("row [0, 1e3, -1e3]", [[0.0, 1000.0, -1000.0]]), 1)]
    more = [dict(mask=mask), dict(causal=True), dict(mask=no_key, kind="no key")]
    listed += [_sized(Case("", (Q, K, V), **options), 3) for options in more]
    return listed + [_sized(Case("", (Q, K[:5], V), kind="error"), 3)]


def _sized(case: Case, block_size: int) -> Case:
    name = case.title or title(*case.args, mask=case.mask, causal=case.causal, kind=case.kind)
    return case._replace(title=f"block_size={block_size}, {name}", block_size=block_size)


def twin(case: Case) -> Case:
    """The second batch element of a named case: -Q."""
    return mode_forward.twin(case)


def expect(case: Case, conventions) -> Expectation:
    Q, K, V = case.args
    if case.kind == "error":
        return Expectation(None, [])
    keep, c = allowed(case, conventions.align), default_scale(case)
    reference = right_answer(case, keep)
    raw = matmul(Q, transpose(K))
    S = logits(raw, c, keep)
    variants = [Variant(mistake, one_pass(S, V, case.block_size, slip))
                for mistake, slip in SLIPS.items()]
    if case.causal:
        mistake, other, convention = other_alignment(case, conventions)
        variants.append(Variant(mistake, one_pass(logits(raw, c, other), V, case.block_size),
                                convention))
    if case.scale is None:
        variants += [Variant(NO_SCALE, one_pass(logits(raw, 1.0, keep), V, case.block_size)),
                     Variant(BY_D_K, one_pass(logits(raw, 1 / len(K[0]), keep), V,
                                              case.block_size))]
    tol = tolerance(reference)
    fitted = None if case.scale else lambda got: fitted_scale(case, keep, got)
    shown = None if case.scale else lambda got: scale_shown(case, keep, got)
    return Expectation(reference, [v for v in variants if not close(v.answer, reference, tol)],
                       no_key(case, keep, reference), lambda fmt: in_format(case, keep, fmt),
                       fitted, rules_out=shown)


def one_pass(S: List[List[float]], V: List[List[float]], block: int, slip: str = "") -> list:
    """O row by row in one pass over blocks of keys, with one slip (SLIPS), in IEEE
    arithmetic; None for a query that sees no key."""
    return [None if max(S_i) == -math.inf else _row(S_i, V, block, slip) for S_i in S]


def _row(S_i: List[float], V: List[List[float]], block: int, slip: str) -> List[float]:
    mx, d, o = (0.0 if slip == "max from 0" else -math.inf), 0.0, [0.0] * len(V[0])
    end = len(S_i) - len(S_i) % block if slip == "drop last" else len(S_i)
    for j in range(0, end, block):
        s, v = S_i[j:j + block], V[j:j + block]
        if max(s) == -math.inf and slip != "nan":
            continue  # a block the mask hides: nothing to add
        new = max(mx, max(s))
        r, e = exp_ieee(mx - new), [exp_ieee(x - new) for x in s]
        o_b = [_sum([e_j * v_j[t] for e_j, v_j in zip(e, v)]) for t in range(len(o))]
        if slip == "divide":  # o kept normalised, but not multiplied back by d
            d_new = d * r + _sum(e)
            o = [(o_t * r + b) / d_new for o_t, b in zip(o, o_b)]
        else:
            keep_o = slip in ("no rescale", "output")
            o = [(o_t if keep_o else o_t * r) + b for o_t, b in zip(o, o_b)]
            d_new = (d if slip == "no rescale" else d * r) + _sum(e)
        mx, d = new, d_new
    return o if slip == "divide" else [o_t / d if d else math.nan for o_t in o]


def _sum(terms: List[float]) -> float:
    try:
        return math.fsum(terms)
    except (OverflowError, ValueError):
        return math.nan


# ------------------------------------------------------------------ the random battery

def draw(rng: random.Random, takes: set, align: str, like: Optional[Case] = None) -> Case:
    """A random attention case (mode_forward.draw) and a block size from 1 to m + 1.

    >>> draw(random.Random(3), {"mask", "causal", "scale"}, "top-left").title
    'block_size=2, n=6 m=5 d_k=3 d_v=5, scale=2.18'
    """
    case = mode_forward.draw(rng, takes, align, like)
    block = like.block_size if like else rng.randint(1, len(case.args[1]) + 1)
    case = case._replace(block_size=block)
    return case._replace(title=describe(case))


def describe(case: Case) -> str:
    return f"block_size={case.block_size}, " + mode_forward.describe(case)


MODE = Mode("online", ("online_attention", "streaming_attention", "flash_attention"),
            ("Q", "K", "V"), (0, 1, 2), cases, expect, twin, unpack, stack, draw,
            mode_forward.axes, describe, block=True)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
