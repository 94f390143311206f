"""Softmax, its logarithm and its derivatives, computed stably in pure Python.

Softmax turns a vector of logits x into a probability vector p.  Attention
applies it to every row of Q K^T / sqrt(d_k); the size of those logits decides
whether p is smooth or nearly one-hot, and the Jacobian J = diag(p) - p p^T
decides how much gradient gets back through it.

Glossary (the symbols of the documents):
    x   logits, a sequence of real numbers (-inf marks a masked entry)
    m   max_j x_j, taken out before exponentiating so nothing overflows
    k   the index of that max (the first one, on ties)
    s   sum over j != k of exp(x_j - m), the part of the normaliser below 1
    p   softmax(x), the probabilities
    g   an upstream gradient dL/dp
    J   the Jacobian dp/dx, J[i][j] = p_i (delta_ij - p_j)
    d   the running sum of the one-pass (online) normaliser

Public API (`__all__`):

    softmax(x)                  p_i = exp(x_i - m) / sum_j exp(x_j - m)
    log_softmax(x)              log p_i, full relative accuracy
    logsumexp(x)                log sum_j exp(x_j)
    softmax_jacobian(x)         J[i][j] = p_i (delta_ij - p_j)
    softmax_backward(p, g)      J^T g = p * (g - <g, p>), without building J
    Normalizer                  (m, d): the state of the one-pass normaliser
    EMPTY                       the state before any element
    online_update(state, x)     fold one more logit into the state
    online_merge(a, b)          combine the states of two disjoint blocks
    rescale_factors(a, b)       the factors that merge applies to each side
    online_logsumexp(state)     m + log(d)

>>> [round(p, 4) for p in softmax([1.0, 0.0])]
[0.7311, 0.2689]

Exceptions: ValueError for a wrong value (an empty input, +inf or NaN, every
logit -inf so that no distribution exists, mismatched lengths, a state that
no sequence of logits can produce); TypeError for the wrong kind of thing (a
string, None, a bool where a number belongs).  Each message names the
function that was called.  Arguments are never mutated.  A NumPy array is
read through its .tolist().
"""

import math  # exp, log, log1p, fsum, isfinite, frexp, ldexp, copysign
import operator  # index: any integral type (numpy's included) where an int is needed
from numbers import Real  # what counts as a real number here
from typing import List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["softmax", "log_softmax", "logsumexp", "softmax_jacobian", "softmax_backward",
           "Normalizer", "EMPTY", "online_update", "online_merge", "rescale_factors",
           "online_logsumexp"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
NEG_INF = float("-inf")  # the logit of a masked position
_PLAIN_NUMBERS = {float, int}  # exact types that need no per-entry check
_FLOAT = {float}
_HUGE = 2.0 ** 1000  # a sum of |g| beyond this could overflow in g_k - g_j


# ---------------------------------------------------------------- the maths

def _shifted_exps(x: Vector) -> Tuple[float, Vector]:
    """Return m = max_j x_j and the list exp(x_j - m), each in [0, 1], one of them exactly 1."""
    m = max(x)
    return m, [math.exp(v - m) for v in x]


def _softmax(x: Vector) -> Vector:
    """softmax of checked logits (finite or -inf, at least one finite)."""
    _, e = _shifted_exps(x)
    denominator = math.fsum(e)  # correctly rounded; its largest term is exactly 1
    return [v / denominator for v in e]


def _log_denominator(x: Vector) -> Tuple[float, float]:
    """Return (m, log1p(s)) with s = sum_{j != k} exp(x_j - m), k the index of the max.

    Taking the largest term (exactly exp(0) = 1) out of the sum is what lets
    log1p(s) keep full relative accuracy when s is tiny.
    """
    m, e = _shifted_exps(x)
    k = x.index(m)
    return m, math.log1p(math.fsum(e[:k] + e[k + 1:]))


def _sums_of_others(p: Vector) -> Vector:
    """Return sum_{j != i} p_j for each i, i.e. 1 - p_i without cancellation."""
    return [math.fsum(p[:i] + p[i + 1:]) for i, _ in enumerate(p)]


def _backward_terms(p: Vector, g: Vector) -> Vector:
    """p_i ((g_i - g_k) + sum_{j != k} p_j (g_k - g_j)), k the index of the largest p.

    Since sum_j p_j = 1, g_i - <g, p> = (g_i - g_k) + sum_j p_j (g_k - g_j) for
    any k.  With k the largest weight, the sum runs over the small weights only:
    when p_k rounds to 1, p_i (g_i - <g, p>) would cancel to 0, this does not.
    """
    k = p.index(max(p))
    g_k = g[k]
    rest = math.fsum([p_j * (g_k - g_j) for p_j, g_j in zip(p, g)])  # the j = k term is 0
    return [p_i * ((g_i - g_k) + rest) for p_i, g_i in zip(p, g)]


def _softmax_backward(p: Vector, g: Vector) -> Vector:
    """J^T g for a checked p and a finite g, also when g_k - g_j would overflow.

    The map is linear in g and dividing by a power of two is exact, so a huge g
    is brought near 1 first and the result scaled back: the same digits.
    """
    if sum(map(abs, g)) < _HUGE:
        return _backward_terms(p, g)
    e = _exponent(g)
    return [_ldexp(v, e) for v in _backward_terms(p, [math.ldexp(v, -e) for v in g])]


def _exponent(u: Vector) -> int:
    """e with max_t |u_t| < 2^e: dividing u by 2^e is exact and brings it into [-1, 1]."""
    return math.frexp(max(map(abs, u)))[1]


def _ldexp(x: float, e: int) -> float:
    """x 2^e, or +-inf where that is beyond the float range (math.ldexp would raise)."""
    try:
        return math.ldexp(x, e)
    except OverflowError:
        return math.copysign(math.inf, x)


def softmax(x: Sequence[float]) -> Vector:
    """Return p with p_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j.

    Shapes: x has length n -> p has length n.  Subtracting m changes nothing
    mathematically (it cancels) but keeps every exp() in (0, 1], so no logit
    can overflow; a -inf logit gets probability exactly 0.

    >>> [round(p, 4) for p in softmax([2.0, 1.0, 0.0, -1.0])]
    [0.6439, 0.2369, 0.0871, 0.0321]
    >>> softmax([1000, 1001, float("-inf")])[2]
    0.0
    """
    return _softmax(_logits("softmax", x))


def logsumexp(x: Sequence[float]) -> float:
    """Return log sum_j exp(x_j) = m + log1p(sum_{j != k} exp(x_j - m)).

    Shapes: x has length n -> a float.  The form with log1p follows Blanchard,
    Higham and Higham (IMA J. Numer. Anal., 2021).

    >>> round(logsumexp([0.0, 0.0]), 12) == round(math.log(2), 12)
    True
    >>> logsumexp([1e308, 1e308]) == 1e308
    True
    """
    m, log_denominator = _log_denominator(_logits("logsumexp", x))
    return m + log_denominator


def log_softmax(x: Sequence[float]) -> Vector:
    """Return log p_i = (x_i - m) - log1p(sum_{j != k} exp(x_j - m)).

    Shapes: x has length n -> length n.  Computed directly, never as
    log(softmax(x)): when p_k is within an ulp of 1, log(p_k) would round to
    0.0, while this form keeps its tiny negative value to full accuracy.

    >>> lp = log_softmax([100.0, 1.0, 1.0, 1.0])
    >>> f"{lp[0]:.6e}", round(lp[1], 6)
    ('-3.033664e-43', -99.0)
    """
    x = _logits("log_softmax", x)
    m, log_denominator = _log_denominator(x)
    return [(v - m) - log_denominator for v in x]


def softmax_jacobian(x: Sequence[float]) -> Matrix:
    """Return J with J[i][j] = d p_i / d x_j = p_i (delta_ij - p_j).

    Shapes: x has length n -> n x n (symmetric).  The diagonal p_i (1 - p_i)
    uses 1 - p_i = sum_{j != i} p_j: when p_i is close to 1 the subtraction
    1 - p_i would cancel to 0 and hide a small but non-zero derivative.

    >>> softmax_jacobian([0.0, 0.0])
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    p = _softmax(_logits("softmax_jacobian", x))
    others = _sums_of_others(p)
    return [[p_i * others[i] if i == j else -p_i * p_j for j, p_j in enumerate(p)]
            for i, p_i in enumerate(p)]


def softmax_backward(p: Sequence[float], g: Sequence[float]) -> Vector:
    """Return dL/dx = J^T g, i.e. (dL/dx)_i = p_i (g_i - sum_j g_j p_j).

    Shapes: p (a probability vector, the output of softmax) and g = dL/dp both
    of length n -> length n.  O(n): J is never built.  Accurate to a few ulps
    of each entry's own terms, even when one p_k rounds to 1:

    >>> softmax_backward([0.5, 0.5], [1.0, 0.0])
    [0.25, -0.25]
    >>> softmax_backward([1.0, 4.2e-18], [1.0, 0.0])
    [4.2e-18, -4.2e-18]
    """
    p, g = _probabilities("softmax_backward", p), _finite_vector("softmax_backward", g, "g")
    _same_length("softmax_backward", p=p, g=g)
    return _softmax_backward(p, g)  # |dL/dx_i| <= max|g| / 2: finite g gives a finite result


# ------------------------------------------------ the one-pass (online) normaliser

class Normalizer(NamedTuple):
    """The state (m, d) of a one-pass softmax normaliser over the logits seen so far.

    m is their max and d = sum_j exp(x_j - m), so log sum_j exp(x_j) = m + log(d).
    """
    m: float  # running max (-inf before any finite logit)
    d: float  # running sum of exp(x_j - m): 0 when empty, else at least 1 (the max's term)


EMPTY = Normalizer(NEG_INF, 0.0)  # the state before any element


def _rescale_factors(a: Normalizer, b: Normalizer) -> Tuple[float, float, float]:
    m_new = max(a.m, b.m)
    if m_new == NEG_INF:  # both empty: exp(-inf - -inf) would be NaN
        return NEG_INF, 0.0, 0.0
    return m_new, math.exp(a.m - m_new), math.exp(b.m - m_new)


def _online_merge(a: Normalizer, b: Normalizer) -> Normalizer:
    m_new, factor_a, factor_b = _rescale_factors(a, b)
    return Normalizer(m_new, a.d * factor_a + b.d * factor_b)


def rescale_factors(a: Normalizer, b: Normalizer) -> Tuple[float, float, float]:
    """Return (m', exp(a.m - m'), exp(b.m - m')) with m' = max(a.m, b.m).

    Anything summed relative to a.m (a's d, or a partial attention output) is
    moved to the common reference m' by multiplying by the first factor; the
    same for b.  An empty side gets factor 0.

    >>> rescale_factors(Normalizer(0.0, 1.0), Normalizer(math.log(2.0), 1.0))
    (0.6931471805599453, 0.5, 1.0)
    """
    fn = "rescale_factors"
    return _rescale_factors(_state(fn, a, "a"), _state(fn, b, "b"))


def online_merge(a: Normalizer, b: Normalizer) -> Normalizer:
    """Return the state of the union: m' = max(m_a, m_b), d' = d_a e^(m_a - m') + d_b e^(m_b - m').

    >>> online_merge(Normalizer(0.0, 1.0), Normalizer(0.0, 1.0))
    Normalizer(m=0.0, d=2.0)
    """
    return _online_merge(_state("online_merge", a, "a"), _state("online_merge", b, "b"))


def online_update(state: Normalizer, x: float) -> Normalizer:
    """Return the state after one more logit: d' = d e^(m - m') + e^(x - m'), m' = max(m, x).

    A -inf logit (masked) leaves the state as it is.

    >>> s = EMPTY
    >>> for v in [1.0, 3.0, 2.0]:
    ...     s = online_update(s, v)
    >>> round(online_logsumexp(s), 12) == round(logsumexp([1.0, 3.0, 2.0]), 12)
    True
    """
    state = _state("online_update", state)
    (x,) = _logits("online_update", [x], "x", allow_all_masked=True)
    return state if x == NEG_INF else _online_merge(state, Normalizer(x, 1.0))


def online_logsumexp(state: Normalizer) -> float:
    """Return m + log(d), the log-sum-exp of every logit folded into the state.

    >>> online_logsumexp(Normalizer(0.0, 1.0))
    0.0
    """
    state = _state("online_logsumexp", state)
    if state.m == NEG_INF:
        raise ValueError("online_logsumexp: the state holds no finite logit (m = -inf), "
                         "so no probability distribution exists")
    return state.m + math.log(state.d)


# ---------------------------------------------------------------- validation
# The checks of the public boundary, shared with attention.py and stats.py (the
# project's internal interface, not part of __all__).  Each returns a fresh,
# checked copy, so the cores above never see, or mutate, the caller's objects.

def _is_bool(v) -> bool:
    """True for bool and numpy.bool_: a flag is not a number here."""
    return isinstance(v, bool) or type(v).__name__ in ("bool_", "bool")


def _real_or_none(v) -> Optional[float]:
    """v as a float, or None when v is not a real number (bools are not)."""
    if _is_bool(v) or not isinstance(v, Real):
        return None
    try:
        return float(v)
    except OverflowError:  # an int or Fraction beyond the float range
        return math.inf if v > 0 else -math.inf


def _sequence(fn: str, x, what: str, kind: str = "a list or tuple of numbers"):
    """x as a sequence (a NumPy array through .tolist()), or TypeError."""
    if hasattr(x, "tolist") and not isinstance(x, Sequence):  # an ndarray: its rows as lists
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise TypeError(f"{fn}: {what} must be {kind}, not {type(x).__name__}")
    return x


def _vector(fn: str, x, what: str = "x") -> Vector:
    """Return x as a new non-empty list of floats; TypeError for anything but real numbers."""
    x = _sequence(fn, x, what)
    if len(x) == 0:
        raise ValueError(f"{fn}: {what} is empty; it needs at least one entry")
    types = set(map(type, x))
    if types == _FLOAT:  # the fast path: a copy is all it takes
        return list(x)
    if types <= _PLAIN_NUMBERS:
        try:
            return list(map(float, x))
        except OverflowError:  # an int beyond the float range: the slow path says inf
            pass
    values = [_real_or_none(v) for v in x]
    if None in values:
        i = values.index(None)
        raise TypeError(f"{fn}: {what}[{i}] is {x[i]!r} ({type(x[i]).__name__}); "
                        "expected a real number")
    return values


def _finite_vector(fn: str, x, what: str = "x") -> Vector:
    """Return x as a new list of finite floats."""
    values = _vector(fn, x, what)
    if not math.isfinite(sum(values)):  # finite sums only come from finite entries
        _raise_non_finite(fn, values, what, "finite")
    return values


def _raise_non_finite(fn: str, values: Vector, what: str, allowed: str,
                      ok=math.isfinite) -> None:
    """Raise naming the first entry that is not `ok` (if any entry is not)."""
    for i, v in enumerate(values):
        if not ok(v):
            raise ValueError(f"{fn}: {what}[{i}] is {v}; entries must be {allowed} "
                             f"(length {len(values)})")


def _finite_or_masked(v: float) -> bool:
    return v < math.inf and v == v  # NaN is the one value unequal to itself


def _logits(fn: str, x, what: str = "x", allow_all_masked: bool = False) -> Vector:
    """Return x as a new list of logits: finite or -inf, at least one finite."""
    values = _vector(fn, x, what)
    _raise_non_finite(fn, values, what, "finite or -inf (masked)", _finite_or_masked)
    if max(values) == NEG_INF and not allow_all_masked:
        raise ValueError(f"{fn}: every entry of {what} (length {len(values)}) is -inf, "
                         "so no probability distribution exists")
    return values


def _probabilities(fn: str, p) -> Vector:
    """Return p after checking its entries are in [0, 1] and sum to 1 (to rounding)."""
    p = _vector(fn, p, "p")
    for i, v in enumerate(p):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{fn}: p[{i}] = {v} is not a probability; "
                             "pass p = softmax(x), not the logits x")
    total = math.fsum(p)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{fn}: p sums to {total!r}, not 1 (length {len(p)}); "
                         "pass p = softmax(x)")
    return p


def _same_length(fn: str, **vectors: Vector) -> None:
    (name_a, a), (name_b, b) = vectors.items()
    if len(a) != len(b):
        raise ValueError(f"{fn}: {name_b} has length {len(b)} but {name_a} has length {len(a)}")


def _integer(fn: str, value, what: str, minimum: Optional[int] = None,
             maximum: Optional[int] = None) -> int:
    """Return value as an int: any integral type (numpy's too), not bool, within the limits."""
    if _is_bool(value):
        raise TypeError(f"{fn}: {what} must be an int, not {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: {what} must be an int, not {value!r} "
                        f"({type(value).__name__})") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{fn}: {what} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{fn}: {what} must be at most {maximum}, not {value}")
    return value


def _real(fn: str, value, what: str) -> float:
    """Return value as a finite float; TypeError for non-numbers, ValueError for NaN or inf."""
    v = _real_or_none(value)
    if v is None:
        raise TypeError(f"{fn}: {what} must be a real number, not {value!r}")
    if not math.isfinite(v):
        raise ValueError(f"{fn}: {what} is {value}; it must be finite")
    return v


def _state(fn: str, state, what: str = "state") -> Normalizer:
    """Return a checked Normalizer: m finite with d >= 1, or the empty state (-inf, 0)."""
    if not isinstance(state, tuple) or len(state) != 2:
        raise TypeError(f"{fn}: {what} must be a Normalizer(m, d), not {state!r}")
    m, d = (_real_or_none(v) for v in state)
    if m is None or d is None:
        raise TypeError(f"{fn}: {what} = {state!r} must hold two real numbers (m, d)")
    empty = m == NEG_INF and d == 0.0
    if not empty and not (math.isfinite(m) and 1.0 <= d < math.inf):
        raise ValueError(f"{fn}: {what} = {tuple(state)} is not a normaliser state: it needs "
                         "m finite and 1 <= d < inf (the max contributes e^0 = 1), "
                         "or (m, d) = (-inf, 0) for no logits")
    return Normalizer(m, d)
