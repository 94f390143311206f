"""The tables and numbers of docs/low-precision.md (and its summary in docs/interview.md),
computed with the emulation of scripts/lowprecision.py.  The sentences are in the pages.

    python3 scripts/lowprecision_tables.py      # every table and number, as the pages show them

Public names:

    values()        {name: text} of the numbers the pages quote inline, "lp.*"
    blocks()        {name: Markdown table} of the pages' tables, "lp-*"
    SCORES, KEEP, NONE, FILLS, HOW, LOGITS     the masked rows and logits measured
    KEYS, LONG, D_KS, SEED, ROWS, NORM_D_KS    the overflow cases measured
    main(argv)      the command line: every table and number

>>> values()["lp.exp.float16"], values()["lp.norm.float16"]
('11.09', '256')
"""

import argparse  # the command line
import functools  # cache: the build asks for the values and the blocks separately
import math  # ceil, exp, floor, log10, sqrt, inf
import os  # the library's folder, when run as a script
import sys  # path
from typing import Dict, List, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from lowprecision.emulation import (FORMATS, Probability, dot_overflow, exp_threshold,
                                    exp_underflow, largest_finite, mask_scores, next_up,
                                    overflow_monte_carlo, overflow_probability, round_to,
                                    significant_bits, smallest_positive, softmax_in)
from softmax import softmax
from scripts.tables import estimate, table

__all__ = ["values", "blocks", "SCORES", "KEEP", "NONE", "FILLS", "HOW", "LOGITS", "KEYS",
           "LONG", "D_KS", "SEED", "ROWS", "NORM_D_KS", "main"]

Vector = List[float]

SCORES = [1.3, -0.6, 0.2, 2.1]  # one query's scaled logits over 4 keys
KEEP = [True, True, True, False]  # a row that keeps keys; the masked key has the top score
NONE = [False] * len(SCORES)  # the fully masked row
FILLS = ("-inf", "-1e9", "-1000", "lowest")  # lowest: -largest_finite(fmt), finfo(dtype).min
HOW = {"add": "added (a bias)", "fill": "written over (masked_fill)"}
LOGITS = ([0.0, 1.0, 2.0], [10.0, 11.0, 12.0], [-20.0, -21.0, -22.0], [100.0, 101.0, 102.0],
          [-100.0, -101.0, -102.0], [1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0])
KEYS = 16  # m, keys per row, as in `python3 stats.py`
LONG = 1024  # a longer row, for the exact probability only
D_KS = (16, 32, 64, 128, 512, 1024)
SEED = 0  # the Monte Carlo at d_k uses seed SEED + d_k
ROWS = 4096  # Monte Carlo rows per d_k: (KEYS + 1) random draws each
NORM_D_KS = (16, 64, 128, 1024)


# ------------------------------------------------------------ the measurements

def _fill(fill: str, fmt: str) -> float:
    return -largest_finite(fmt) if fill == "lowest" else float(fill)


def _masked_softmax(keep: List[bool], fill: str, fmt: str, how: str) -> Vector:
    return softmax_in(mask_scores(SCORES, keep, _fill(fill, fmt), fmt, how), fmt)


def _references(keep: List[bool]) -> Dict[str, Vector]:
    """The float64 answers that a masked row is compared with."""
    out = {"as if unmasked": softmax(SCORES), "uniform": [1 / len(SCORES)] * len(SCORES)}
    if any(keep):
        kept = iter(softmax([s for s, k in zip(SCORES, keep) if k]))
        out["as if absent"] = [next(kept) if k else 0.0 for k in keep]
    return out


def _nearest(p: Vector, references: Dict[str, Vector]) -> str:
    """Which reference p is (the nearest, by the largest entry difference), and how far."""
    if any(v != v for v in p):
        return "NaN"
    gap, name = min((max(abs(a - b) for a, b in zip(p, ref)), name)
                    for name, ref in references.items())
    if gap > 0.1:
        return f"none of them (nearest: {name}, off by {gap:.1g})"
    return f"{name}, exactly" if gap == 0 else f"{name}, off by {gap:.1g}"


def _full(fill: str, fmt: str, how: str) -> str:
    """The outcome of a fully masked row."""
    return _nearest(_masked_softmax(NONE, fill, fmt, how), _references(NONE))


def _unshifted(x: Vector, fmt: str) -> str:
    """What softmax without the max-shift gives, against the shifted one, in fmt."""
    p, shifted = softmax_in(x, fmt, shift=False), softmax_in(x, fmt)
    if any(v != v for v in p):
        overflows = round_to(max(x), fmt) > exp_threshold(fmt).stored
        return "NaN: exp overflows" if overflows else "NaN: every exp is 0, 0/0"
    gap = max(abs(a - b) for a, b in zip(p, shifted))
    return "as shifted" if gap == 0 else f"off by {gap:.1g}"


def _spread_weights() -> Vector:
    """The weights of [0, 1000] with key 1 masked by adding -1000: the same in every format
    (a ValueError otherwise, since the page says so)."""
    weights = {fmt: softmax_in(mask_scores([0.0, 1000.0], [True, False], -1000.0, fmt), fmt)
               for fmt in FORMATS}
    if len({tuple(w) for w in weights.values()}) != 1:
        raise ValueError(f"the -1000 example now differs by format: {weights}")
    return weights["float64"]


def _spacing(fmt: str, x: float) -> float:
    return next_up(x, fmt) - x


@functools.lru_cache(maxsize=None)
def _overflow_rows() -> tuple:
    """(d_k, exact P over KEYS keys, Monte Carlo, exact P over LONG keys, P scaled) per d_k."""
    return tuple((d_k, overflow_probability(d_k, KEYS),
                  overflow_monte_carlo(d_k, KEYS, ROWS, SEED + d_k),
                  overflow_probability(d_k, LONG),
                  overflow_probability(d_k, KEYS, scale=1 / math.sqrt(d_k))) for d_k in D_KS)


def _agreement(P: Probability, mc) -> float:
    """(p_hat - P) / sqrt(P (1 - P) / N): the Monte Carlo's distance from P in standard
    errors of a binomial count with probability P (the quadrature error is far smaller)."""
    return (mc.estimate - P.value) / math.sqrt(P.value * (1 - P.value) / mc.trials)


# ---------------------------------------------------------------- the formatting

def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def _p(P: Probability) -> str:
    """A probability as printed: 4 decimals, or 2 significant digits when it is small; when
    the quadrature's error bound is as large as the value, only that bound ("< 1e-47")."""
    x = P.value
    if x <= P.error:  # float64's threshold at d_k = 64: the value rounds to 0, the bound stays
        return f"< {_below(x + P.error)}"
    return "> 0.9999" if x > 0.9999 else f"{x:.4f}" if x >= 1e-3 else f"{x:.2g}"


def _percent(x: float) -> str:
    return f"{100 * x:.2g}%"


def _percent_estimate(share: float, se: float) -> str:
    return estimate(100 * share, 100 * se) + "%"


def _below(x: float) -> str:
    """The power of ten just above x > 0, for "below" claims."""
    return f"1e{math.ceil(math.log10(x)):+03d}"


def _count(overflows: int, trials: int, share: float, se: float) -> str:
    """"k/N", and the share with its standard error when it is neither 0 nor 1."""
    said = f"{overflows}/{trials}"
    return said + ": " + estimate(share, se) if 0 < overflows < trials else said


# ----------------------------------------------------------------- the tables

def _formats_table() -> str:
    rows = []
    for fmt in FORMATS:
        big = round_to(1e9, fmt)
        rows.append([fmt, significant_bits(fmt), _g(largest_finite(fmt), 5),
                     _g(smallest_positive(fmt), 3), _g(round_to(-1e9, fmt), 10),
                     _g(_spacing(fmt, big), 3) if big < math.inf else "(inf)",
                     _g(_spacing(fmt, 1000.0), 3)])
    return table(["format", "significant bits", "largest finite", "smallest positive",
                  "-1e9 stored as", "spacing at 1e9", "spacing at 1000"], rows)


def _exp_table() -> str:
    rows = []
    for fmt in FORMATS:
        t = exp_threshold(fmt)
        top = round_to(math.exp(t.stored), fmt)
        rows.append([fmt, f"{t.real:.6f}", repr(t.stored), _g(top, 6),
                     repr(next_up(t.stored, fmt)), f"{exp_underflow(fmt):.2f}",
                     math.ceil(t.real ** 2)])
    return table(["format", "exp finite up to", "largest stored x", "its exp", "next stored x",
                  "exp is 0 below", "first d_k"], rows)


def _shift_table() -> str:
    return table(["x"] + list(FORMATS), [[[int(v) for v in x]] + [
        _unshifted(x, fmt) for fmt in FORMATS] for x in LOGITS])


def _partial_table() -> str:
    """The row that keeps keys: every fill both ways, summed up per format."""
    references, rows = _references(KEEP), []
    for fmt in FORMATS:
        P = [_masked_softmax(KEEP, fill, fmt, how) for fill in FILLS for how in HOW]
        outcomes = sorted({_nearest(p, references).split(",")[0] for p in P})
        gap = max(max(abs(a - b) for a, b in zip(p, references["as if absent"])) for p in P)
        masked = max(p[j] for p in P for j, k in enumerate(KEEP) if not k)
        rows.append([fmt, f"{' / '.join(outcomes)}, off by at most {gap:.1g}", masked])
    return table(["format", f"outcome, {len(FILLS) * len(HOW)} fills", "masked key's weight"],
                 rows)


def _full_table() -> str:
    return table(["fill", "how"] + list(FORMATS), [
        [fill, said] + [_full(fill, fmt, how) for fmt in FORMATS]
        for fill in FILLS for how, said in HOW.items()])


def _overflow_table() -> str:
    rows = []
    for d_k, P, mc, P_long, P_scaled in _overflow_rows():
        rows.append([d_k, _p(P), _count(mc.exp_overflows, mc.trials, mc.estimate,
                                        mc.standard_error), f"{_agreement(P, mc):+.1f}",
                     _count(mc.sum_overflows, mc.trials, mc.sum_estimate,
                            mc.sum_standard_error), _p(P_long), _p(P_scaled)])
    return table(["d_k", "exact P(exp = inf)", "MC: exp = inf", "(MC - P) / SE", "MC: Z = inf",
                  f"exact, m = {LONG}", "exact, c = 1/√d_k"], rows)


def _norms_table() -> str:
    rows = []
    quarter = {d_k: d_k ** -0.25 for d_k in NORM_D_KS}
    for d_k in NORM_D_KS:
        cs = (dot_overflow(d_k), dot_overflow(d_k, q_scale=1 / math.sqrt(d_k)),
              dot_overflow(d_k, q_scale=quarter[d_k], k_scale=quarter[d_k]))
        rows.append([d_k] + [cell for c in cs for cell in (repr(c), _g(c * math.sqrt(d_k)))])
    return table(["d_k", "unscaled: c", "‖q‖", "q × 1/√d_k: c", "‖q‖", "both × d_k^-1/4: c",
                  "‖q‖"], rows)


def _interview_table() -> str:
    t = {fmt: exp_threshold(fmt) for fmt in FORMATS}
    added = {fill: [_full(fill, f, "add").split(",")[0] for f in FORMATS]
             for fill in ("-1e9", "-inf")}
    return table([""] + list(FORMATS), [
        ["largest finite"] + [_g(largest_finite(f), 5) for f in FORMATS],
        ["exp overflows above"] + [f"{t[f].real:.2f}" for f in FORMATS],
        ["-1e9 is stored as"] + [_g(round_to(-1e9, f), 10) for f in FORMATS],
        ["fully masked row, -1e9 added"] + added["-1e9"],
        ["fully masked row, -inf added"] + added["-inf"],
        ["P(an exp overflows)"] + [_p(overflow_probability(64, KEYS, f)) for f in FORMATS]])


def _misconception_table() -> str:
    return table(["fully masked row"] + list(FORMATS), [
        [f"{fill} {'added' if how == 'add' else 'written over'}"]
        + [_full(fill, fmt, how) for fmt in FORMATS]
        for fill in ("-inf", "-1e9", "-1000") for how in HOW])


# ----------------------------------------------------------------- the numbers

def _overflow_values() -> Dict[str, str]:
    rows = _overflow_rows()
    at = {d_k: (P, mc, P_scaled) for d_k, P, mc, _, P_scaled in rows}
    out = {}
    for d_k in (16, 64):
        P, mc, _ = at[d_k]
        out[f"lp.p.{d_k}"] = _percent(P.value)
        out[f"lp.z.{d_k}"] = _percent_estimate(mc.sum_estimate, mc.sum_standard_error)
    error = max(p.error for _, P, _, P_long, _ in rows for p in (P, P_long))
    z = max(abs(_agreement(P, mc)) for _, P, mc, _, _ in rows)
    out.update({
        "lp.p.scaled": _below(max(P_s.value for _, _, P_s in at.values())),
        "lp.quadrature.error": _below(error),
        "lp.agreement": f"{math.ceil(10 * z) / 10}",
        "lp.most.keys": str(min(d for d, P, *_ in rows if P.value > 0.5)),
        "lp.most.long": str(min(d for d, _, _, P, _ in rows if P.value > 0.5))})
    return out


def _wide_norm() -> str:
    """‖q‖ = ‖k‖ where q . k overflows at d_k = 64 in bfloat16 and float32: the same to two
    digits (a ValueError otherwise, since the page says "in both")."""
    wide = {fmt: _g(dot_overflow(64, fmt) * 8, 2) for fmt in ("bfloat16", "float32")}
    if len(set(wide.values())) != 1:
        raise ValueError(f"the bfloat16 and float32 limits now differ: {wide}")
    return wide["float32"]


@functools.lru_cache(maxsize=None)
def _values() -> Tuple[Tuple[str, str], ...]:
    out = {f"lp.exp.{fmt}": f"{exp_threshold(fmt).real:.2f}" for fmt in FORMATS}
    f32_gap = _spacing("float32", round_to(1e9, "float32"))
    out.update({
        "lp.keys": str(KEYS), "lp.scores": str(SCORES), "lp.rows": str(ROWS),
        "lp.norm.float16": _g(dot_overflow(64) * 8), "lp.norm.wide": _wide_norm(),
        "lp.spread": str(_spread_weights()), "lp.f32.spacing": f"{f32_gap:.0f}",
        "lp.f32.absorbed": f"{f32_gap / 2:.0f}",
        "lp.f64.spacing": f"{_spacing('float64', 1e9):.3g}"})
    out.update(_overflow_values())
    return tuple(out.items())


def values() -> Dict[str, str]:
    """Return the inline numbers of the pages, by name: {"lp.exp.float16": "11.09", ...}."""
    return dict(_values())


@functools.lru_cache(maxsize=None)
def _blocks() -> Tuple[Tuple[str, str], ...]:
    return (("lp-formats", _formats_table()), ("lp-exp", _exp_table()),
            ("lp-shift", _shift_table()), ("lp-partial", _partial_table()),
            ("lp-full", _full_table()), ("lp-overflow", _overflow_table()),
            ("lp-norms", _norms_table()), ("lp-interview", _interview_table()),
            ("lp-misconception", _misconception_table()))


def blocks() -> Dict[str, str]:
    """Return the tables of the pages, by name.

    >>> sorted(blocks())[:3]
    ['lp-exp', 'lp-formats', 'lp-full']
    """
    return dict(_blocks())


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print every table and number (a second or two: the Monte Carlo rows)."""
    _Parser(prog="python3 scripts/lowprecision_tables.py",
            description=__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        for name, text in blocks().items():
            print(f"{name}:\n{text}\n")
        for name, text in values().items():
            print(f"{name}: {text}")
    except KeyboardInterrupt:
        print("python3 scripts/lowprecision_tables.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
