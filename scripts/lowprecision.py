"""float16, bfloat16 and float32 emulated with struct: softmax, masks and overflow.

docs/low-precision.md is the reader's page; every number on it comes from here.

How a format is emulated (the one rule, stated once):
    round_to(x, fmt)  x to the nearest number of the format, ties to even, and past the
                      format's range to +-inf, as IEEE 754's round-to-nearest does.
                      float16 and float32 come from struct's '<e' and '<f' formats, which
                      raise OverflowError for a value they would round past the largest
                      finite number (past 65504 for float16) where IEEE gives inf: that case
                      is caught and becomes +-inf.  bfloat16 is float32 with its low
                      16 bits rounded to nearest even: float64 -> float32 -> bfloat16, two
                      roundings, as PyTorch and JAX did on the value docs/pytorch-jax.md
                      checks (it differs from one direct rounding only within half a
                      float32 ulp of a bfloat16 halfway point).
    stored values     every input (a score, a fill, a logit) is rounded to the format first.
    one operation     s + fill, x - m, exp, a / b: computed in float64, then rounded.  For
                      +, - and / that is the format's own correctly rounded result (float64
                      carries more than 2p + 2 bits, so the double rounding is harmless); exp
                      is math.exp rounded, within a float64 ulp of the correctly rounded exp.
    one reduction     a sum or a dot product: accumulated exactly (math.fsum of exact
                      products) and rounded once.  Frameworks accumulate float16 and bfloat16
                      reductions in float32 and round the result; float32's error (2^-24 per
                      addition) is far below float16's or bfloat16's, so they agree except on
                      rare near-ties; for float32 itself no one summation order is "the"
                      framework's, and the correctly rounded sum is the one every Python
                      reproduces bit for bit.
    float64           the reference: Python's own floats, sums with math.fsum.

Glossary: x logits; m = max_j x_j (the shift); e_j = exp(x_j - m); Z = sum_j e_j;
p = softmax(x); d_k the width of q and k; c the smallest logit whose exp overflows.

Public names:

    FORMATS                             "float16", "bfloat16", "float32", "float64"
    round_to(x, fmt)                    x stored in fmt
    largest_finite(fmt)                 65504 for float16, and so on
    softmax_in(x, fmt, shift=True)      p_i = e_i / Z, each step rounded to fmt
    mask_scores(scores, keep, fill, fmt, how="add")   a bias added, or masked_fill
    dot_in(q, k, fmt)                   q . k, correctly rounded to fmt
    ExpThreshold, exp_threshold(fmt)    where exp overflows fmt, found by bisection
    Probability, overflow_probability(d_k, m, fmt="float16", scale=1.0)
                                        P(some exp(scale q . k_j) overflows), by quadrature
    MonteCarlo, overflow_monte_carlo(d_k, m, trials, seed=0, fmt="float16")
                                        the same event counted on seeded random rows
    markdown_values(), markdown_blocks()   the numbers of docs/low-precision.md
    SCORES, KEEP, NONE, FILLS, LOGITS, KEYS, LONG, D_KS, SEED, DRAWS, MIN_ROWS, NORM_D_KS,
    PANELS                              the cases measured there (tests and
                                        scripts/check_frameworks.py use them too)

>>> round_to(-1e9, "float16"), round_to(-1e9, "bfloat16"), round_to(-1e9, "float32")
(-inf, -998244352.0, -1000000000.0)
>>> softmax_in(mask_scores([1.5, -0.5], [False, False], -1e9, "float32"), "float32")
[0.5, 0.5]

These functions return what the format computes, inf and NaN included: showing them is
what this module is for.  Bad arguments are refused at the boundary: TypeError for the
wrong kind of thing, ValueError for a wrong value (an unknown format, NaN or +inf input,
lengths that differ, a q or k beyond the format's range); each message names the function.
"""

import functools  # cache: scripts/build.py asks for the values and the blocks separately
import math  # exp, erfc, expm1, log1p, lgamma, fsum, sqrt, inf, nextafter
import random  # the seeded Monte Carlo
import struct  # the IEEE formats 'e' (half), 'f' (single), 'd' (double)
import sys  # float_info.max: any finite float is a valid input
import textwrap  # the generated prose, wrapped
from typing import Callable, Dict, List, NamedTuple, Sequence

from attention import dot
from softmax import as_flag, as_int, as_list, as_real, softmax

__all__ = ["FORMATS", "round_to", "largest_finite", "softmax_in", "mask_scores", "dot_in",
           "ExpThreshold", "exp_threshold", "Probability", "overflow_probability",
           "MonteCarlo", "overflow_monte_carlo", "markdown_values", "markdown_blocks",
           "SCORES", "KEEP", "NONE", "FILLS", "LOGITS", "KEYS", "LONG", "D_KS", "SEED",
           "DRAWS", "MIN_ROWS", "NORM_D_KS", "PANELS"]

Vector = List[float]  # a vector is a list of floats
FORMATS = ("float16", "bfloat16", "float32", "float64")
_ANY = sys.float_info.max  # the limit for inputs: any finite float


# ------------------------------------------------------------ rounding to a format

def _through(code: str, x: float) -> float:
    """x packed with struct's IEEE format code and read back: nearest, ties to even."""
    try:
        return struct.unpack(code, struct.pack(code, x))[0]
    except OverflowError:  # struct raises exactly where IEEE rounds to inf
        return math.copysign(math.inf, x)


def _float16(x: float) -> float:
    return _through("<e", x)


def _float32(x: float) -> float:
    return _through("<f", x)


def _bfloat16(x: float) -> float:
    """float32's upper 16 bits, rounded to nearest even on the lower 16.  A NaN stays NaN:
    float32's NaN has its top significand bit set, and the rounding keeps it."""
    (bits,) = struct.unpack("<I", struct.pack("<f", _float32(x)))
    # Add just under half a unit of the kept bits, and 1 more when they are odd: a tie then
    # carries into them only from an odd value, so it lands on the even neighbour.
    bits = (bits + 0x7FFF + (bits >> 16 & 1)) >> 16 << 16
    return struct.unpack("<f", struct.pack("<I", bits))[0]


_ROUND: Dict[str, Callable[[float], float]] = {
    "float16": _float16, "bfloat16": _bfloat16, "float32": _float32, "float64": float}

# Each format's non-negative numbers, in increasing order, are its bit patterns 0 ... top
# read as integers: what the bisections below walk through.
_PATTERN = {"float16": ("<e", 2, 0), "bfloat16": ("<f", 4, 16), "float32": ("<f", 4, 0),
            "float64": ("<d", 8, 0)}  # struct code, bytes, bits shifted in from the right
_TOP = {"float16": 0x7BFF, "bfloat16": 0x7F7F, "float32": 0x7F7FFFFF,
        "float64": 0x7FEFFFFFFFFFFFFF}  # the pattern of the largest finite number


def _number(fmt: str, n: int) -> float:
    """The non-negative number of fmt whose bit pattern is n."""
    code, size, shift = _PATTERN[fmt]
    return struct.unpack(code, (n << shift).to_bytes(size, "little"))[0]


def _last(fmt: str, ok: Callable[[float], bool]) -> float:
    """The largest non-negative finite number x of fmt with ok(x), for ok true at 0 and
    true-then-false as x grows: a bisection on the bit patterns, exact."""
    lo, hi = 0, _TOP[fmt]
    if ok(_number(fmt, hi)):
        return _number(fmt, hi)
    while hi - lo > 1:  # ok at lo, not at hi
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(_number(fmt, mid)) else (lo, mid)
    return _number(fmt, lo)


# ------------------------------------------------ one operation, then the softmax

def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:  # math.exp refuses x above 709.78; IEEE's exp gives inf
        return math.inf


def _sum(terms: Vector) -> float:
    """sum_j terms_j, exact then rounded once (float64); the terms are >= 0 or NaN."""
    try:
        return math.fsum(terms)
    except OverflowError:  # fsum refuses a sum beyond the float range; IEEE gives inf
        return math.inf


def _softmax(x: Vector, fmt: str, shift: bool) -> Vector:
    """p_i = e_i / Z, e_i = exp(x_i - m), Z = sum_j e_j; x already stored in fmt.

    Rounded to fmt: x_i - m, then e_i, then Z (summed exactly, rounded once), then p_i.
    Without the shift m = 0.  An all -inf row gives -inf - (-inf) = NaN; a Z of 0 (every
    e_i underflowed) gives 0 / 0 = NaN; an e_i of inf gives inf / inf = NaN.
    """
    r = _ROUND[fmt]
    m = max(x) if shift else 0.0
    e = [r(_exp(r(v - m))) for v in x]
    Z = r(_sum(e))
    return [r(v / Z) if Z else math.nan for v in e]  # Z = 0 only if every e_i is 0: 0/0


def _masked(scores: Vector, keep: List[bool], fill: float, fmt: str, how: str) -> Vector:
    """Masked logits in fmt: s_j where keep_j, else s_j + fill ("add", a bias) or fill
    ("fill", masked_fill); the fill is stored in fmt first (-1e9 is -inf in float16)."""
    r = _ROUND[fmt]
    f = r(fill)
    return [s if k else (r(s + f) if how == "add" else f) for s, k in zip(scores, keep)]


def _dot(q: Vector, k: Vector, fmt: str) -> float:
    """q . k rounded once to fmt: the products of stored numbers are exact in float64 (at
    most 2 x 24 significant bits) and the project's one dot product sums them exactly."""
    return _ROUND[fmt](dot(q, k))


# --------------------------------------------------------- where exp overflows

class ExpThreshold(NamedTuple):
    """Where exp overflows a format (each found by bisection on the emulation)."""
    real: float  # the largest float64 x whose exp, rounded to the format, is finite
    stored: float  # the largest number of the format whose exp is finite in the format
    overflow_from: float  # the smallest float64 logit whose exp overflows once the logit
    #                       is stored in the format (a halfway point, for the narrow ones)


def _threshold(fmt: str) -> ExpThreshold:
    r = _ROUND[fmt]

    def finite(x: float) -> bool:
        return r(_exp(x)) < math.inf

    last_fine = _last("float64", lambda s: finite(r(s)))
    return ExpThreshold(_last("float64", finite), _last(fmt, finite),
                        math.nextafter(last_fine, math.inf))


# ------------------------------------------- how often unscaled logits overflow

class Probability(NamedTuple):
    """A probability computed by quadrature, and a bound on its error."""
    value: float
    error: float  # |T_n - T_(n/2)| (pessimistic), + the mass cut off, + the rounding


def _log_norm(d_k: int) -> float:
    """log of the chi density's constant: f(u) = u^(d_k - 1) e^(-u^2 / 2) / e^log_norm."""
    return (d_k / 2 - 1) * math.log(2) + math.lgamma(d_k / 2)


def _overflow_integrand(d_k: int, m: int, c: float) -> Callable[[float], float]:
    """u -> P(max_j q . k_j >= c given |q| = u) f(u), f the density of |q| (chi, d_k).

    Given q, the m logits q . k_j are independent N(0, u^2): each stays below c with
    probability 1 - T, T = erfc(c / (u sqrt 2)) / 2, so some one overflows with
    probability 1 - (1 - T)^m.
    """
    log_norm = _log_norm(d_k)

    def f(u: float) -> float:
        if u == 0.0:  # q = 0: every logit is 0, nothing overflows
            return 0.0
        T = math.erfc(c / (u * math.sqrt(2))) / 2
        density = math.exp((d_k - 1) * math.log(u) - u * u / 2 - log_norm)
        return -math.expm1(m * math.log1p(-T)) * density
    return f


def _trapezoid(f: Callable[[float], float], b: float, n: int) -> float:
    """The trapezoid rule on [0, b] with n panels, for an f that is 0 at both ends: h times
    the sum of the interior values (math.fsum).

    The integrand here vanishes with all its derivatives at 0, and at b to within the
    cut-off bound; for such an f the rule's error falls faster than any power of the step
    h, so |T_n - T_(n/2)| overstates T_n's error.
    """
    h = b / n
    return h * math.fsum(f(i * h) for i in range(1, n))


PANELS = 512  # trapezoid panels over |q| in [0, sqrt(d_k) + 12]


def _probability(d_k: int, m: int, c: float) -> Probability:
    """P(max_j q . k_j >= c) = integral over u of the integrand above, u in [0, b].

    |q| beyond b = sqrt(d_k) + 12 is cut off; its mass, P(chi^2_(d_k) >= b^2), is at most
    (x/d)^(d/2) e^((d - x)/2) with x = b^2, d = d_k (the Chernoff bound), and the integrand
    is at most the density, so the cut costs at most that.  The density's logarithm adds
    terms as large as L below, each rounded to 2^-53 of itself, so each integrand value
    carries a relative error of a few L 2^-53: the error allows L 2^-50 of the result.
    """
    b = math.sqrt(d_k) + 12.0
    f = _overflow_integrand(d_k, m, c)
    fine, coarse = _trapezoid(f, b, PANELS), _trapezoid(f, b, PANELS // 2)
    x = b * b
    tail = math.exp(d_k / 2 * math.log(x / d_k) + (d_k - x) / 2)
    L = (d_k - 1) * abs(math.log(b)) + x / 2 + abs(_log_norm(d_k)) + 8  # 8: erfc, expm1...
    error = abs(fine - coarse) + tail + L * 2.0 ** -50 * fine
    return Probability(min(fine, 1.0), error)  # a probability; the quadrature may pass 1


class MonteCarlo(NamedTuple):
    """Seeded rows of an unshifted softmax of unscaled logits, and how many overflowed."""
    trials: int  # rows
    exp_overflows: int  # rows where some exp(q . k_j) rounded to inf in the format
    sum_overflows: int  # rows where the normaliser Z did (these include the rows above)

    @property
    def estimate(self) -> float:
        return self.exp_overflows / self.trials

    @property
    def standard_error(self) -> float:  # sqrt(p (1 - p) / N), p the estimate
        return math.sqrt(self.estimate * (1 - self.estimate) / self.trials)


def _monte_carlo(d_k: int, m: int, trials: int, rng: random.Random, fmt: str) -> MonteCarlo:
    """Draw q and up to m keys with N(0, 1) components (float64, as the exact probability
    has them); compute each logit q . k_j exactly, store it in fmt, round exp of it to fmt.
    The first exp that is inf settles the row (Z is inf too), so no more keys are drawn."""
    r = _ROUND[fmt]
    exp_overflows = sum_overflows = 0
    for _ in range(trials):
        q = [rng.gauss(0.0, 1.0) for _ in range(d_k)]
        e: Vector = []
        while len(e) < m and math.inf not in e[-1:]:
            k = [rng.gauss(0.0, 1.0) for _ in range(d_k)]
            e.append(r(_exp(r(dot(q, k)))))
        exp_overflows += math.inf in e
        sum_overflows += r(_sum(e)) == math.inf
    return MonteCarlo(trials, exp_overflows, sum_overflows)


# ---------------------------------------------------------- the public functions

def round_to(x: float, fmt: str) -> float:
    """Return x rounded to the nearest number of fmt (ties to even); +-inf past its range.

    float16: 11 significant bits, largest 65504, so 65519.99 -> 65504 and 65520 -> inf.

    >>> round_to(0.1, "float16"), round_to(65519.99, "float16"), round_to(65520, "float16")
    (0.0999755859375, 65504.0, inf)
    >>> round_to(1 + 2 ** -8, "bfloat16"), round_to(1 + 3 * 2 ** -8, "bfloat16")
    (1.0, 1.015625)
    """
    return _ROUND[_format("round_to", fmt)](_input("round_to", x))


def largest_finite(fmt: str) -> float:
    """Return the largest finite number of fmt: (2 - 2^(1-p)) 2^e_max, p significant bits.

    >>> [largest_finite(f) for f in FORMATS]
    [65504.0, 3.3895313892515355e+38, 3.4028234663852886e+38, 1.7976931348623157e+308]
    """
    return _number(_format("largest_finite", fmt), _TOP[fmt])


def softmax_in(x: Sequence[float], fmt: str, shift: bool = True) -> Vector:
    """Return softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), m = max_j x_j (m = 0 with
    shift=False), computed in fmt: x stored in fmt, then x_i - m, exp, the sum (exact,
    rounded once) and each division rounded to fmt.  NaN where the format gives NaN.

    Shapes: x of length n -> p of length n.

    >>> softmax_in([10.0, 11.0, 12.0], "float16", shift=False)  # exp(12) > 65504
    [0.0, 0.0, nan]
    >>> softmax_in([10.0, 11.0, 12.0], "float16")
    [0.090087890625, 0.2447509765625, 0.66552734375]
    """
    fn = "softmax_in"
    fmt = _format(fn, fmt)
    return _softmax([_ROUND[fmt](v) for v in _row(fn, x, "x")], fmt, as_flag(fn, shift, "shift"))


def mask_scores(scores: Sequence[float], keep: Sequence[bool], fill: float, fmt: str,
                how: str = "add") -> Vector:
    """Return the masked logits in fmt: s_j where keep_j, otherwise s_j + fill (how="add":
    an additive bias, PyTorch's float attn_mask) or fill (how="fill": masked_fill).

    Scores and fill are stored in fmt first.  Shapes: scores and keep of length n -> n.

    >>> mask_scores([1.5, 2.0], [True, False], -1e9, "float16")
    [1.5, -inf]
    >>> mask_scores([1.5, 2.0], [False, False], -1e9, "float32")  # 1e9's spacing is 64
    [-1000000000.0, -1000000000.0]
    """
    fn = "mask_scores"
    fmt = _format(fn, fmt)
    scores = _row(fn, scores, "scores")
    keep = [as_flag(fn, k, f"keep[{j}]") for j, k in enumerate(as_list(fn, keep, "keep"))]
    if len(keep) != len(scores):
        raise ValueError(f"{fn}: keep has length {len(keep)} but scores has {len(scores)}")
    if how not in ("add", "fill"):
        raise ValueError(f"{fn}: how must be 'add' or 'fill', not {how!r}")
    return _masked([_ROUND[fmt](s) for s in scores], keep, _input(fn, fill, "fill"), fmt, how)


def dot_in(q: Sequence[float], k: Sequence[float], fmt: str) -> float:
    """Return q . k = q_1 k_1 + ... + q_d k_d with q and k stored in fmt and the exact sum
    rounded once to fmt (float32 accumulation, as frameworks use, agrees up to near-ties).

    Shapes: q and k of length d_k -> a float.  q . k past the format's range is +-inf.

    >>> dot_in([32.0] * 64, [32.0] * 64, "float16"), dot_in([32.0] * 64, [31.984375] * 64,
    ...                                                     "float16")
    (inf, 65504.0)
    """
    fn = "dot_in"
    fmt = _format(fn, fmt)
    q, k = (_stored(fn, v, what, fmt) for v, what in ((q, "q"), (k, "k")))
    if len(q) != len(k):
        raise ValueError(f"{fn}: q has length {len(q)} but k has length {len(k)}")
    return _dot(q, k, fmt)


def exp_threshold(fmt: str) -> ExpThreshold:
    """Return where exp overflows fmt: exp(x) rounds to inf in fmt for x > real, found by
    bisection on the emulation over the bit patterns (exact, not by hand).

    >>> exp_threshold("float16")
    ExpThreshold(real=11.090110718526951, stored=11.0859375, overflow_from=11.08984375)
    """
    return _threshold(_format("exp_threshold", fmt))


def overflow_probability(d_k: int, m: int, fmt: str = "float16",
                         scale: float = 1.0) -> Probability:
    """Return P(max_j scale q . k_j >= c) for q and m keys k_j with independent N(0, 1)
    components, c = exp_threshold(fmt).overflow_from: the probability that an unshifted
    softmax of a row of m logits overflows in its exp (exactly: a quadrature of
    E[1 - (1 - T)^m] over |q|^2 ~ chi^2(d_k), T = P(N(0, |q|^2) >= c / scale)).

    >>> p = overflow_probability(2, 1)  # q . k is Laplace(0, 1) at d_k = 2: P = e^-c / 2
    >>> round(p.value / (math.exp(-exp_threshold("float16").overflow_from) / 2), 12)
    1.0
    """
    fn = "overflow_probability"
    d_k, m = as_int(fn, d_k, "d_k"), as_int(fn, m, "m")
    scale = as_real(fn, scale, "scale")
    if scale <= 0:
        raise ValueError(f"{fn}: scale must be positive, not {scale}")
    return _probability(d_k, m, _threshold(_format(fn, fmt)).overflow_from / scale)


def overflow_monte_carlo(d_k: int, m: int, trials: int, seed: int = 0,
                         fmt: str = "float16") -> MonteCarlo:
    """Return how many of `trials` seeded rows overflow an unshifted softmax in fmt: q and m
    keys with N(0, 1) components, logits q . k_j (unscaled) stored in fmt, exp rounded.

    Costs (m + 1) d_k normal draws per row.

    >>> mc = overflow_monte_carlo(16, 16, 200, seed=1)
    >>> mc.trials, mc.exp_overflows <= mc.sum_overflows
    (200, True)
    """
    fn = "overflow_monte_carlo"
    d_k, m, trials = as_int(fn, d_k, "d_k"), as_int(fn, m, "m"), as_int(fn, trials, "trials")
    rng = random.Random(as_int(fn, seed, "seed", minimum=0))
    return _monte_carlo(d_k, m, trials, rng, _format(fn, fmt))


# --------------------------------------------------------------- the input checks

def _format(fn: str, fmt) -> str:
    if not isinstance(fmt, str):
        raise TypeError(f"{fn}: fmt must be a str, one of {FORMATS}, not {fmt!r}")
    if fmt not in FORMATS:
        raise ValueError(f"{fn}: fmt must be one of {FORMATS}, not {fmt!r}")
    return fmt


def _input(fn: str, x, what: str = "x") -> float:
    """A real number, finite or -inf (a masked logit); never NaN or +inf."""
    return as_real(fn, x, what, masked=True, limit=_ANY)


def _row(fn: str, x, what: str) -> Vector:
    """A non-empty list of such numbers; every entry may be -inf (a fully masked row)."""
    return [_input(fn, v, f"{what}[{j}]") for j, v in enumerate(as_list(fn, x, what))]


def _stored(fn: str, x, what: str, fmt: str) -> Vector:
    """A non-empty list of finite numbers that stay finite once stored in fmt."""
    v = [as_real(fn, a, f"{what}[{j}]", limit=_ANY) for j, a in enumerate(as_list(fn, x, what))]
    for j, a in enumerate(v):
        if abs(_ROUND[fmt](a)) == math.inf:
            raise ValueError(f"{fn}: {what}[{j}] = {a!r} is beyond {fmt}'s range "
                             f"(largest {largest_finite(fmt):.5g})")
    return [_ROUND[fmt](a) for a in v]


# ------------------------------------------ the numbers of docs/low-precision.md

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
DRAWS = 8192  # Monte Carlo rows per d_k: DRAWS // d_k, and at least MIN_ROWS: so at most
MIN_ROWS = 64  # (m + 1) DRAWS normal draws per d_k up to d_k = DRAWS / MIN_ROWS
NORM_D_KS = (16, 64, 128, 1024)
WIDTH = 88  # generated prose is wrapped: readers read the raw Markdown in a terminal


# the numbers of a format, beyond rounding

def _pattern(fmt: str, x: float) -> int:
    """The bit pattern of a non-negative number x of fmt (the inverse of _number)."""
    code, _, shift = _PATTERN[fmt]
    return int.from_bytes(struct.pack(code, x), "little") >> shift


def _next(fmt: str, x: float) -> float:
    """The number of fmt just above x (a non-negative number of fmt)."""
    return _number(fmt, _pattern(fmt, x) + 1)


def _spacing(fmt: str, x: float) -> float:
    return _next(fmt, x) - x


def _bits(fmt: str) -> int:
    """Significant bits p: the spacing at 1 is 2^(1 - p)."""
    return 1 - round(math.log2(_spacing(fmt, 1.0)))


def _exp_zero_below(fmt: str) -> float:
    """The x below which exp(x) rounds to 0 in fmt (the smallest x with exp(x) > 0)."""
    return -_last("float64", lambda y: _ROUND[fmt](_exp(-y)) > 0)


# the measurements

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
        top = _ROUND[fmt](_exp(round_to(max(x), fmt)))
        return "NaN: exp overflows" if top == math.inf else "NaN: every exp is 0, 0/0"
    gap = max(abs(a - b) for a, b in zip(p, shifted))
    return "as shifted" if gap == 0 else f"off by {gap:.1g}"


def _spread_weights() -> str:
    """The weights of [0, 1000] with key 1 masked by adding -1000, in every format."""
    weights = {fmt: softmax_in(mask_scores([0.0, 1000.0], [True, False], -1000.0, fmt), fmt)
               for fmt in FORMATS}
    if len({tuple(w) for w in weights.values()}) == 1:
        return f"weights {weights['float64']} in every format"
    return "weights " + "; ".join(f"{w} in {fmt}" for fmt, w in weights.items())


@functools.lru_cache(maxsize=None)
def _overflow_rows() -> tuple:
    """(d_k, exact P over KEYS keys, Monte Carlo, exact P over LONG keys, P scaled) per d_k."""
    return tuple((d_k, overflow_probability(d_k, KEYS),
                  overflow_monte_carlo(d_k, KEYS, max(MIN_ROWS, DRAWS // d_k), SEED + d_k),
                  overflow_probability(d_k, LONG),
                  overflow_probability(d_k, KEYS, scale=1 / math.sqrt(d_k))) for d_k in D_KS)


def _agreement(P: Probability, mc: MonteCarlo) -> float:
    """(p_hat - P) / sqrt(P (1 - P) / N): the Monte Carlo's distance from P in standard
    errors of a binomial count with probability P (the quadrature error is far smaller)."""
    return (mc.estimate - P.value) / math.sqrt(P.value * (1 - P.value) / mc.trials)


def _first_overflow(d_k: int, prescaled: bool, fmt: str = "float16") -> float:
    """The smallest c of fmt for which q = k = c (1, ..., 1) gives q . k = inf in fmt; with
    prescaled, q is multiplied by 1/sqrt(d_k) before the product, and the product of the
    two stored in fmt (as PyTorch multiplies a float16 tensor by a Python float)."""
    r = _ROUND[fmt]
    s = 1 / math.sqrt(d_k) if prescaled else 1.0

    def finite(c: float) -> bool:
        return _dot([r(c * s)] * d_k, [c] * d_k, fmt) < math.inf
    return _next(fmt, _last(fmt, finite))


# formatting

def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def _pm(estimate: float, se: float) -> str:
    """estimate ± se, se to two significant digits and the estimate to the same place (the
    rule of the report and of scripts/build.py)."""
    places = max(0, 1 - math.floor(math.log10(se)))
    return f"{estimate:.{places}f} ± {se:.{places}f}"


def _p(P: Probability) -> str:
    """A probability as printed: 4 decimals, or 2 significant digits when it is small; when
    the quadrature's error bound is as large as the value, only that bound ("< 1e-47")."""
    x = P.value
    if x <= P.error:  # float64's threshold at d_k = 64: the value rounds to 0, the bound stays
        return f"< {_below(x + P.error)}"
    return "> 0.9999" if x > 0.9999 else f"{x:.4f}" if x >= 1e-3 else f"{x:.2g}"


def _percent(x: float) -> str:
    return f"{100 * x:.2g}%"


def _below(x: float) -> str:
    """The power of ten just above x > 0, for "below" claims."""
    return f"1e{math.ceil(math.log10(x)):+03d}"


def _prose(*parts: str) -> str:
    return textwrap.fill("".join(parts), WIDTH, break_on_hyphens=False)


def _bullet(*parts: str) -> str:
    return textwrap.fill("".join(parts), WIDTH, initial_indent="- ", subsequent_indent="  ",
                         break_on_hyphens=False)


def _table(header: Sequence[str], rows: List[Sequence[str]]) -> List[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(map(str, row)) + " |" for row in rows]


# the blocks

def _formats_table() -> List[str]:
    rows = []
    for fmt in FORMATS:
        big = round_to(1e9, fmt)
        rows.append([fmt, _bits(fmt), _g(largest_finite(fmt), 5), _g(_number(fmt, 1), 3),
                     _g(round_to(-1e9, fmt), 10),
                     _g(_spacing(fmt, big), 3) if big < math.inf else "(inf)",
                     _g(_spacing(fmt, 1000.0), 3)])
    return _table(["format", "significant bits", "largest finite", "smallest positive",
                   "-1e9 stored as", "spacing at 1e9", "spacing at 1000"], rows)


def _exp_table() -> List[str]:
    rows = []
    for fmt in FORMATS:
        t = exp_threshold(fmt)
        rows.append([fmt, f"{t.real:.6f}", repr(t.stored), _g(_ROUND[fmt](_exp(t.stored)), 6),
                     f"{_next(fmt, t.stored)!r} (exp: inf)", f"{_exp_zero_below(fmt):.2f}",
                     f"{t.real ** 2:.0f}"])
    return _table(["format", "exp(x) finite for real x up to",
                   "largest stored x with exp(x) finite", "exp of it", "next stored x",
                   "exp(x) is 0 below", "sqrt(d_k) reaches the limit at d_k ="], rows)


def _shift_table() -> List[str]:
    return _table(["x"] + list(FORMATS), [[[int(v) for v in x]] + [
        _unshifted(x, fmt) for fmt in FORMATS] for x in LOGITS])


def _partial_table() -> List[str]:
    """The row that keeps keys: every fill both ways, summed up per format."""
    references, rows = _references(KEEP), []
    for fmt in FORMATS:
        P = [_masked_softmax(KEEP, fill, fmt, how) for fill in FILLS for how in HOW]
        outcomes = sorted({_nearest(p, references).split(",")[0] for p in P})
        gap = max(max(abs(a - b) for a, b in zip(p, references["as if absent"])) for p in P)
        masked = max(p[j] for p in P for j, k in enumerate(KEEP) if not k)
        rows.append([fmt, f"{' / '.join(outcomes)}, off by at most {gap:.1g}", masked])
    return _table(["format", f"outcome, all {len(FILLS) * len(HOW)} fills and ways",
                   "the masked key's largest weight"], rows)


def _full_table() -> List[str]:
    return _table(["fill", "how"] + list(FORMATS), [
        [fill, said] + [_full(fill, fmt, how) for fmt in FORMATS]
        for fill in FILLS for how, said in HOW.items()])


def _overflow_block() -> List[str]:
    rows, lines = _overflow_rows(), []
    for d_k, P, mc, P_long, P_scaled in rows:
        counted = f"{mc.exp_overflows}/{mc.trials}"
        if 0 < mc.exp_overflows < mc.trials:
            counted += ": " + _pm(mc.estimate, mc.standard_error)
        lines.append([d_k, _p(P), counted, f"{_agreement(P, mc):+.1f}",
                      f"{mc.sum_overflows}/{mc.trials}", _p(P_long), _p(P_scaled)])
    z = max(abs(_agreement(P, mc)) for _, P, mc, _, _ in rows)
    error = max(p.error for _, P, _, P_long, _ in rows for p in (P, P_long))
    return _table(["d_k", f"exact P, m = {KEYS}",
                   f"Monte Carlo, m = {KEYS}: overflows/rows: estimate ± SE",
                   "(estimate - P) / SE", "Z overflows too (Monte Carlo)",
                   f"exact P, m = {LONG}", f"exact P, m = {KEYS}, logits scaled by 1/sqrt(d_k)"],
                  lines) + ["", _prose(
        f"The quadrature error is below {_below(error)} in every row (the trapezoid rule, "
        f"{PANELS} panels against {PANELS // 2}, plus the mass cut off and the rounding); "
        f"every Monte Carlo estimate is within {math.ceil(10 * z) / 10} standard errors of the "
        f"exact P (the test allows 4). Unscaled, an unshifted float16 softmax over {KEYS} keys "
        f"fails on most rows from d_k = {min(d for d, P, *_ in rows if P.value > 0.5)} on, and "
        f"over {LONG} keys from d_k = {min(d for d, _, _, P, _ in rows if P.value > 0.5)} on.")]


def _norms_block() -> List[str]:
    rows, unscaled = [], set()
    for d_k in NORM_D_KS:
        c, c_scaled = _first_overflow(d_k, False), _first_overflow(d_k, True)
        unscaled.add(_g(c * math.sqrt(d_k)))
        rows.append([d_k, repr(c), _g(c * math.sqrt(d_k)), repr(c_scaled),
                     _g(c_scaled * math.sqrt(d_k))])
    wide = {fmt: _g(_first_overflow(64, False, fmt) * 8, 2) for fmt in ("bfloat16", "float32")}
    wide_said = (f"‖q‖ = ‖k‖ = {wide['float32']} in both" if len(set(wide.values())) == 1 else
                 f"‖q‖ = ‖k‖ = {wide['bfloat16']} and {wide['float32']}")
    return _table(["d_k", "q = k = c (1, ..., 1): q . k is inf in float16 from c =",
                   "‖q‖ = ‖k‖ there", "q scaled by 1/sqrt(d_k) before the product: from c =",
                   "‖q‖ = ‖k‖ there"], rows) + ["", _prose(
        f"Unscaled, or scaled after the product, the limit is ‖q‖ = ‖k‖ = "
        f"{' or '.join(sorted(unscaled))} at every d_k here: ‖q‖ ‖k‖ reaches the largest "
        f"finite float16 ({largest_finite('float16'):.0f}) plus half a spacing. Scaling after "
        f"the product cannot help, since the product is already inf; multiplying q by "
        f"1/sqrt(d_k) first moves the limit up by d_k^(1/4). bfloat16 and float32 have "
        f"range to spare: at d_k = 64 the limit is "
        f"{wide_said}.")]


def _interview() -> List[str]:
    t = {fmt: exp_threshold(fmt) for fmt in FORMATS}
    rows = {d_k: (P, P_scaled) for d_k, P, _, _, P_scaled in _overflow_rows()}
    at_64 = [_p(overflow_probability(64, KEYS, fmt)) for fmt in FORMATS]
    table = _table([""] + list(FORMATS), [
        ["largest finite"] + [_g(largest_finite(f), 5) for f in FORMATS],
        ["exp(x) overflows above x ="] + [f"{t[f].real:.2f}" for f in FORMATS],
        ["-1e9 is stored as"] + [_g(round_to(-1e9, f), 10) for f in FORMATS],
        ["fully masked row, -1e9 added"] + [_full("-1e9", f, "add").split(",")[0]
                                            for f in FORMATS],
        ["fully masked row, -inf"] + [_full("-inf", f, "add") for f in FORMATS],
        [f"unshifted softmax overflows (d_k = 64, {KEYS} keys, unscaled)"] + at_64])
    return [_prose(
        f"float16 has {_bits('float16')} significant bits and its largest finite number is "
        f"{largest_finite('float16'):.0f}, so exp(x) overflows it for x above "
        f"{t['float16'].real:.2f}: a softmax without the max-shift breaks on logits of about "
        f"{t['float16'].real:.0f}. bfloat16 keeps float32's range with only "
        f"{_bits('bfloat16')} significant bits. Each row below is computed by emulating the "
        f"format (`scripts/lowprecision.py`: every operation rounded to it); the masked row has "
        f"scores {SCORES} and the softmax subtracts the max."), ""] + table + ["", _prose(
        f"The last row is a probability at initialisation (q and k with independent N(0, 1) "
        f"components): in float16 an unshifted softmax of unscaled logits over {KEYS} keys "
        f"overflows in {_percent(rows[16][0].value)} of rows at d_k = 16 and in "
        f"{_percent(rows[64][0].value)} at d_k = 64; with the 1/sqrt(d_k) scale, in fewer than "
        f"{_below(max(P_s.value for _, P_s in rows.values()))} of rows. What to do: keep the "
        f"max-shift; scale q before the product (q · k itself passes "
        f"{largest_finite('float16'):.0f} once ‖q‖ ‖k‖ does, for q along k); mask with a bool "
        f"mask, or write -inf or the format's lowest number over the scores; decide what a "
        f"fully masked row returns; keep the softmax's arithmetic in float32, as "
        f"`torch.softmax` (CPU) and `jax.nn.dot_product_attention` do. The measurements: "
        f"[low-precision.md](low-precision.md).")]


def _misconception() -> List[str]:
    f32_gap = _spacing("float32", round_to(1e9, "float32"))
    return [_prose(
        f"Not in every format, and no fill is right for a fully masked row. Computed by "
        f"emulating each format (`scripts/lowprecision.py`), scores {SCORES}, softmax with the "
        f"max-shift:"), "", _bullet(
        f"**float16:** 1e9 is past {largest_finite('float16'):.0f}, so -1e9 is stored as "
        f"{round_to(-1e9, 'float16')} (PyTorch's `masked_fill(-1e9)` on a float16 tensor "
        f"raises instead), and a row masked entirely by it gives NaN."), _bullet(
        f"**float32:** the neighbours of 1e9 are {f32_gap:.0f} apart, so adding -1e9 to a "
        f"score below {f32_gap / 2:.0f} in size gives exactly -1e9: a fully masked row comes "
        f"out uniform. Only float64 (spacing {_spacing('float64', 1e9):.3g}) keeps the "
        f"scores, and there the row attends as if unmasked."), _bullet(
        f"**-1000** is a number, not a mask: with scores [0, 1000] and key 1 masked by adding "
        f"-1000, the logits tie, {_spread_weights()}."), _bullet(
        "A row that keeps at least one key is fine with any of these fills in every format, "
        "as long as no masked score leads the kept ones by nearly the fill's size: the "
        "masked weight rounds to exactly 0."), ""] + _table(
        ["fully masked row"] + list(FORMATS),
        [[f"{fill} {'added' if how == 'add' else 'written over'}"]
         + [_full(fill, fmt, how) for fmt in FORMATS]
         for fill in ("-inf", "-1e9", "-1000") for how in HOW]) + ["", _prose(
        "-inf gives NaN (0/0), a finite fill a uniform or an \"as if unmasked\" row, "
        "depending on the format and on whether the fill is added or written over. Pass a "
        "bool mask and decide what such a row returns: PyTorch's "
        "`F.scaled_dot_product_attention` returns zeros on the CPU, JAX's "
        "`jax.nn.dot_product_attention` the mean of V, this project raises "
        "([pytorch-jax.md](pytorch-jax.md), [low-precision.md](low-precision.md)).")]


@functools.lru_cache(maxsize=None)
def _values() -> tuple:
    out = {f"lp.exp.{fmt}": f"{exp_threshold(fmt).real:.2f}" for fmt in FORMATS}
    out.update({"lp.largest.float16": f"{largest_finite('float16'):.0f}", "lp.keys": str(KEYS),
                "lp.p.16": _percent(overflow_probability(16, KEYS).value),
                "lp.p.64": _percent(overflow_probability(64, KEYS).value),
                "lp.norm.float16": _g(_first_overflow(64, False) * 8)})
    return tuple(out.items())


def markdown_values() -> Dict[str, str]:
    """Return the inline values of the docs: {"lp.exp.float16": "11.09", ...}.

    >>> markdown_values()["lp.exp.float16"], markdown_values()["lp.largest.float16"]
    ('11.09', '65504')
    """
    return dict(_values())


@functools.lru_cache(maxsize=None)
def _blocks() -> tuple:
    blocks = {"lp-formats": _formats_table(), "lp-exp": _exp_table(),
              "lp-shift": _shift_table(), "lp-partial": _partial_table(),
              "lp-full": _full_table(), "lp-spread": [_spread_weights() + "."],
              "lp-overflow": _overflow_block(), "lp-norms": _norms_block(),
              "lp-interview": _interview(), "lp-misconception": _misconception()}
    return tuple((name, "\n".join(lines)) for name, lines in blocks.items())


def markdown_blocks() -> Dict[str, str]:
    """Return the generated blocks of docs/low-precision.md and docs/interview.md, by name.

    >>> sorted(markdown_blocks())[:3]
    ['lp-exp', 'lp-formats', 'lp-full']
    """
    return dict(_blocks())
