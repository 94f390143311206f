"""float16, bfloat16 and float32 emulated with struct: rounding, softmax, masks, overflow.

docs/low-precision.md is the reader's page; scripts/lowprecision_tables.py computes its
tables from the functions here, and interview/check.py matches a candidate's error against
each format's precision.  The program that prints them is scripts/lowprecision.py:

    python3 scripts/lowprecision.py                  # each format's limits
    python3 scripts/lowprecision.py 10 11 12         # softmax of these logits in each format

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
                      products) and rounded once.  PyTorch accumulates float16 and bfloat16
                      reductions in float32, and NumPy its float16 ones (NumPy has no
                      bfloat16), then rounds the result; float32's error (2^-24 per
                      addition) is far below float16's or bfloat16's, so they agree except
                      on rare near-ties.  For float32 itself no one summation order is "the"
                      framework's; the correctly rounded sum is the one every Python
                      reproduces bit for bit.
    float64           the reference: Python's own floats, sums with math.fsum.

This is the softmax a reader writes out of the format's own operations, not any one
framework's: torch.softmax (CPU) keeps its arithmetic in float32 and rounds once, and
jax.nn.softmax in float16 multiplies by the rounded reciprocal of Z instead of dividing
(1 ulp apart in many rows; docs/pytorch-jax.md has the counts).

Glossary: x logits; m = max_j x_j (the shift); e_j = exp(x_j - m); Z = sum_j e_j;
p = softmax(x); d_k the width of q and k; c the smallest logit whose exp overflows.

Public names:

    FORMATS                             "float16", "bfloat16", "float32", "float64"
    round_to(x, fmt)                    x stored in fmt
    largest_finite(fmt), smallest_positive(fmt), significant_bits(fmt), next_up(x, fmt)
                                        the numbers of a format
    softmax_in(x, fmt, shift=True)      p_i = e_i / Z, each step rounded to fmt
    mask_scores(scores, keep, fill, fmt, how="add")   a bias added, or masked_fill
    dot_in(q, k, fmt)                   q . k, correctly rounded to fmt
    ExpThreshold, exp_threshold(fmt)    where exp overflows fmt, found by bisection
    exp_underflow(fmt)                  below which exp rounds to 0 in fmt
    dot_overflow(d_k, fmt, q_scale=1.0, k_scale=1.0)
                                        the smallest c with (c q_scale 1) . (c k_scale 1) = inf
    Probability, overflow_probability(d_k, m, fmt="float16", scale=1.0)
                                        P(some exp(scale q . k_j) overflows), by quadrature
    MonteCarlo, overflow_monte_carlo(d_k, m, trials, seed=0, fmt="float16")
                                        that event, and Z overflowing, counted on seeded rows

>>> round_to(-1e9, "float16"), round_to(-1e9, "bfloat16"), round_to(-1e9, "float32")
(-inf, -998244352.0, -1000000000.0)
>>> softmax_in(mask_scores([1.5, -0.5], [False, False], -1e9, "float32"), "float32")
[0.5, 0.5]

These functions return what the format computes, inf and NaN included: showing them is
what this module is for.  Bad arguments are refused at the boundary: TypeError for the
wrong kind of thing, ValueError for a wrong value (an unknown format, NaN or +inf input,
lengths that differ, a q or k beyond the format's range); each message names the function.
"""

import math  # exp, erfc, expm1, log1p, lgamma, fsum, sqrt, inf, nextafter
import os  # the project's root, when run by hand
import random  # the seeded Monte Carlo
import struct  # the IEEE formats 'e' (half), 'f' (single), 'd' (double)
import sys  # float_info.max: any finite float is a valid input
from typing import Callable, Dict, List, NamedTuple, Sequence

if __name__ == "__main__":  # run by hand: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import dot
from softmax import as_flag, as_int, as_list, as_real

__all__ = ["FORMATS", "round_to", "largest_finite", "smallest_positive", "significant_bits",
           "next_up", "softmax_in", "mask_scores", "dot_in", "ExpThreshold", "exp_threshold",
           "exp_underflow", "dot_overflow", "Probability", "overflow_probability",
           "MonteCarlo", "overflow_monte_carlo"]

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



def _pattern(fmt: str, x: float) -> int:
    """The bit pattern of a non-negative number x of fmt (the inverse of _number)."""
    code, _, shift = _PATTERN[fmt]
    return int.from_bytes(struct.pack(code, x), "little") >> shift


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
    def estimate(self) -> float:  # the share of rows where a single exp overflowed
        return self.exp_overflows / self.trials

    @property
    def standard_error(self) -> float:  # sqrt(p (1 - p) / N), p the estimate
        return math.sqrt(self.estimate * (1 - self.estimate) / self.trials)

    @property
    def sum_estimate(self) -> float:  # the share of rows where Z overflowed
        return self.sum_overflows / self.trials

    @property
    def sum_standard_error(self) -> float:
        return math.sqrt(self.sum_estimate * (1 - self.sum_estimate) / self.trials)


def _monte_carlo(d_k: int, m: int, trials: int, rng: random.Random, fmt: str) -> MonteCarlo:
    """Draw each row's m logits exactly as q . k_j would be with q and the k_j of independent
    N(0, 1) components: |q|^2 ~ chi^2(d_k) and, given q, q . k_j = |q| z_j with z_j
    independent N(0, 1), since the normal law is rotation invariant (derivations.md
    section 4).  Each logit is stored in fmt and its exp rounded to fmt; Z is their exact
    sum rounded once."""
    r = _ROUND[fmt]
    exp_overflows = sum_overflows = 0
    for _ in range(trials):
        norm = math.sqrt(rng.gammavariate(d_k / 2, 2.0))  # |q|
        e = [r(_exp(r(norm * rng.gauss(0.0, 1.0)))) for _ in range(m)]
        exp_overflows += math.inf in e
        sum_overflows += r(_sum(e)) == math.inf
    return MonteCarlo(trials, exp_overflows, sum_overflows)


# --------------------------------------------------- when q . k itself overflows

def _dot_overflow(d_k: int, fmt: str, q_scale: float, k_scale: float) -> float:
    """The smallest c of fmt for which q = c q_scale (1, ..., 1) and k = c k_scale (1, ..., 1),
    each stored in fmt, give q . k = inf in fmt: a bisection on the bit patterns of c (inf
    when even the largest c stays finite)."""
    r = _ROUND[fmt]

    def finite(c: float) -> bool:
        return _dot([r(c * q_scale)] * d_k, [r(c * k_scale)] * d_k, fmt) < math.inf
    return _number(fmt, _pattern(fmt, _last(fmt, finite)) + 1)


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


def smallest_positive(fmt: str) -> float:
    """Return the smallest positive number of fmt (subnormal): 2^(e_min - p + 1).

    >>> smallest_positive("float16") == 2.0 ** -24, smallest_positive("bfloat16") == 2.0 ** -133
    (True, True)
    """
    return _number(_format("smallest_positive", fmt), 1)


def next_up(x: float, fmt: str) -> float:
    """Return the number of fmt just above x, for x >= 0 a number of fmt (inf above the
    largest finite one).

    >>> next_up(1.0, "float16"), next_up(1000.0, "bfloat16"), next_up(65504.0, "float16")
    (1.0009765625, 1004.0, inf)
    """
    fn = "next_up"
    fmt, x = _format(fn, fmt), as_real(fn, x, "x", limit=_ANY)
    if x < 0 or _ROUND[fmt](x) != x:
        raise ValueError(f"{fn}: x must be a non-negative number of {fmt}, not {x!r}")
    return _number(fmt, _pattern(fmt, x) + 1)


def significant_bits(fmt: str) -> int:
    """Return p, the significant bits of fmt (the implicit one included): the spacing at 1
    is 2^(1 - p).

    >>> [significant_bits(f) for f in FORMATS]
    [11, 8, 24, 53]
    """
    return 1 - round(math.log2(next_up(1.0, _format("significant_bits", fmt)) - 1.0))


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



def exp_underflow(fmt: str) -> float:
    """Return the smallest float64 x whose exp, rounded to fmt, is not 0: below it exp(x)
    rounds to 0 (found by bisection on the emulation).

    >>> round(exp_underflow("float16"), 2), round(exp_underflow("float64"), 2)
    (-17.33, -745.13)
    """
    r = _ROUND[_format("exp_underflow", fmt)]
    return -_last("float64", lambda y: r(_exp(-y)) > 0)


def dot_overflow(d_k: int, fmt: str = "float16", q_scale: float = 1.0,
                 k_scale: float = 1.0) -> float:
    """Return the smallest c of fmt for which q = c q_scale (1, ..., 1) and
    k = c k_scale (1, ..., 1), of length d_k and each stored in fmt, give q . k = inf in fmt
    (dot_in's arithmetic): where the product overflows when q lies along k.  inf if no c
    of fmt reaches it.

    >>> dot_overflow(64), dot_overflow(64, q_scale=1 / 8), dot_overflow(64, q_scale=8 ** -0.5,
    ...                                                                 k_scale=8 ** -0.5)
    (32.0, 90.5, 90.5)
    """
    fn = "dot_overflow"
    d_k, fmt = as_int(fn, d_k, "d_k"), _format(fn, fmt)
    q_scale, k_scale = (_scale(fn, s, what) for s, what in ((q_scale, "q_scale"),
                                                           (k_scale, "k_scale")))
    return _dot_overflow(d_k, fmt, q_scale, k_scale)


def overflow_probability(d_k: int, m: int, fmt: str = "float16",
                         scale: float = 1.0) -> Probability:
    """Return P(max_j scale q . k_j >= c) for q and m keys k_j with independent N(0, 1)
    components, c = exp_threshold(fmt).overflow_from: the probability that a single exp
    of an unshifted softmax of a row of m logits overflows (exactly: a quadrature of
    E[1 - (1 - T)^m] over |q|^2 ~ chi^2(d_k), T = P(N(0, |q|^2) >= c / scale)).

    >>> p = overflow_probability(2, 1)  # q . k is Laplace(0, 1) at d_k = 2: P = e^-c / 2
    >>> round(p.value / (math.exp(-exp_threshold("float16").overflow_from) / 2), 12)
    1.0
    """
    fn = "overflow_probability"
    d_k, m = as_int(fn, d_k, "d_k"), as_int(fn, m, "m")
    scale = _scale(fn, scale, "scale")
    return _probability(d_k, m, _threshold(_format(fn, fmt)).overflow_from / scale)


def overflow_monte_carlo(d_k: int, m: int, trials: int, seed: int = 0,
                         fmt: str = "float16") -> MonteCarlo:
    """Return how many of `trials` seeded rows overflow an unshifted softmax in fmt, in a
    single exp and in the normaliser Z: m logits q . k_j (unscaled) at initialisation, q and
    the k_j with independent N(0, 1) components, each logit stored in fmt and its exp
    rounded.

    Costs m + 1 random draws per row, whatever d_k.

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


def _scale(fn: str, x, what: str) -> float:
    """A positive finite factor."""
    x = as_real(fn, x, what)
    if x <= 0:
        raise ValueError(f"{fn}: {what} must be positive, not {x}")
    return x


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


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
