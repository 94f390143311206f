"""Softmax, its logarithm and its derivatives, in pure Python; and the project's input policy.

Softmax turns a vector of logits x into a probability vector p.  Attention applies it to
every row of Q K^T / sqrt(d_k); the size of those logits decides whether p is smooth or
nearly one-hot, and the Jacobian J = diag(p) - p p^T decides how much gradient gets back
through it (docs/derivations.md, sections 3, 5 and 6).

Glossary (the symbols of the documents):
    x   logits, a list of real numbers (-inf marks a masked entry)
    m   max_j x_j, taken out before exponentiating, so that nothing overflows
    k   the index of that max (the first one, on ties)
    s   sum over j != k of exp(x_j - m): the normaliser is e^m (1 + s)
    p   softmax(x), the probabilities
    g   an upstream gradient dL/dp
    J   the Jacobian dp/dx, J[i][j] = p_i (delta_ij - p_j)
    d   the running sum of the one-pass (online) normaliser

Public API (`__all__`):

    softmax(x)                  p_i = exp(x_i - m) / sum_j exp(x_j - m)
    log_softmax(x)              log p_i = (x_i - m) - log1p(s)
    logsumexp(x)                log sum_j exp(x_j) = m + log1p(s)
    softmax_jacobian(x)         J[i][j] = p_i (delta_ij - p_j)
    softmax_backward(p, g)      J^T g = p * (g - <g, p>), without building J
    Normalizer, EMPTY           the state (m, d) of the one-pass normaliser; no logits yet
    online_update(state, x)     fold one more logit into the state
    online_merge(a, b)          combine the states of two disjoint blocks
    rescale_factors(a, b)       the factors that the merge applies to each side
    online_logsumexp(state)     m + log(d)
    LIMIT, as_list, as_vector, as_matrix, as_real, as_int, as_flag
                                the input policy that every module checks with

>>> [round(p, 4) for p in softmax([1.0, 0.0])]
[0.7311, 0.2689]

Exceptions: ValueError for a wrong value (an empty input, +inf or NaN, every logit -inf,
lengths that differ, a state that no logits can produce); TypeError for the wrong kind of
thing (a string, None, a bool where a number belongs); each names the function called.
Arguments are never mutated; a NumPy array is read through .tolist().
"""

import math  # exp, log, log1p, fsum, isfinite, inf
import operator  # index: any integral type (NumPy's too) where an int is needed
from numbers import Real  # what counts as a real number (bool is excluded by hand)
from typing import List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["softmax", "log_softmax", "logsumexp", "softmax_jacobian", "softmax_backward",
           "Normalizer", "EMPTY", "online_update", "online_merge", "rescale_factors",
           "online_logsumexp", "LIMIT", "as_list", "as_vector", "as_matrix", "as_real",
           "as_int", "as_flag"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows


# -------------------------------------------------------- the cores, as derived

def softmax(x: Sequence[float]) -> Vector:
    """Return p with p_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j.

    Shapes: x of length n -> p of length n (derivations.md section 5).  A -inf logit gets
    probability exactly 0.

    >>> [round(p, 4) for p in softmax([2.0, 1.0, 0.0, -1.0])]
    [0.6439, 0.2369, 0.0871, 0.0321]
    >>> softmax([1000, 1001, float("-inf")])[2]
    0.0
    """
    x = as_vector("softmax", x, masked=True, limit=_LARGEST)
    m = max(x)  # softmax(x) = softmax(x - m): no exponent above 0, so nothing overflows
    e = [math.exp(v - m) for v in x]
    Z = math.fsum(e)  # correctly rounded, and at least 1: the max's term is exactly 1
    return [v / Z for v in e]  # each p_i in [0, 1]: nothing can be non-finite


def _log_normaliser(x: Vector) -> Tuple[float, float]:
    """(m, log1p(s)), s = sum_{j != k} exp(x_j - m): log sum_j exp(x_j) = m + log1p(s).
    Taking the max's term, exactly 1, out of the sum lets log1p keep a tiny s that
    log(1 + s) would round away (derivations.md section 5)."""
    m = max(x)
    k = x.index(m)
    return m, math.log1p(math.fsum(math.exp(v - m) for v in x[:k] + x[k + 1:]))


def _jacobian(p: Vector) -> Matrix:
    """J = diag(p) - p p^T, with 1 - p_i on the diagonal written as sum_{j != i} p_j, which
    does not cancel to 0 when p_i is within an ulp of 1 (derivations.md section 3)."""
    return [[p_i * math.fsum(p[:i] + p[i + 1:]) if i == j else -p_i * p_j
             for j, p_j in enumerate(p)] for i, p_i in enumerate(p)]


def _backward(p: Vector, g: Vector) -> Vector:
    """J^T g = p_i (g_i - <g, p>), written around the largest weight p_k: with sum_j p_j = 1,
    g_i - <g, p> = (g_i - g_k) + sum_j p_j (g_k - g_j), whose sum runs over the small
    weights only, so nothing cancels to 0 when p_k rounds to 1 (derivations.md section 3)."""
    k = p.index(max(p))
    rest = math.fsum(p_j * (g[k] - g_j) for p_j, g_j in zip(p, g))  # its j = k term is 0
    return [p_i * ((g_i - g[k]) + rest) for p_i, g_i in zip(p, g)]


class Normalizer(NamedTuple):
    """The state (m, d) of a one-pass normaliser: log sum_j exp(x_j) = m + log(d)."""
    m: float  # running max (-inf before any logit)
    d: float  # running sum of exp(x_j - m): 0 when empty, else at least 1 (the max's term)


EMPTY = Normalizer(-math.inf, 0.0)  # the state before any logit


def _rescale(a: Normalizer, b: Normalizer) -> Tuple[float, float, float]:
    """(m', e^(m_a - m'), e^(m_b - m')), m' = max(m_a, m_b) (derivations.md section 6)."""
    m = max(a.m, b.m)
    if m == -math.inf:  # both empty: e^(-inf - -inf) would be NaN
        return m, 0.0, 0.0
    return m, math.exp(a.m - m), math.exp(b.m - m)


def _merge(a: Normalizer, b: Normalizer) -> Normalizer:
    """(m', d_a e^(m_a - m') + d_b e^(m_b - m')): the state of both blocks."""
    m, r_a, r_b = _rescale(a, b)
    return Normalizer(m, a.d * r_a + b.d * r_b)


# ------------------------------------------------------------------ the public functions

def logsumexp(x: Sequence[float]) -> float:
    """Return log sum_j exp(x_j) = m + log1p(sum_{j != k} exp(x_j - m)), x of length n (the
    form of Blanchard, Higham and Higham, IMA J. Numer. Anal., 2021).

    >>> round(logsumexp([0.0, 0.0]), 12) == round(math.log(2), 12)
    True
    >>> logsumexp([1e308, 1e308]) == 1e308
    True
    """
    m, log_denominator = _log_normaliser(as_vector("logsumexp", x, masked=True, limit=_LARGEST))
    return m + log_denominator  # at most m + ln(n): finite for a finite m


def log_softmax(x: Sequence[float]) -> Vector:
    """Return log p_i = (x_i - m) - log1p(sum_{j != k} exp(x_j - m)), x of length n.

    Not log(softmax(x)): when p_k is within an ulp of 1, log(p_k) rounds to 0.0, while
    this keeps its tiny negative value.  -inf for a masked logit.

    >>> lp = log_softmax([100.0, 1.0, 1.0, 1.0])
    >>> f"{lp[0]:.6e}", round(lp[1], 6)
    ('-3.033664e-43', -99.0)
    """
    x = as_vector("log_softmax", x, masked=True, limit=_LARGEST)
    m, log_denominator = _log_normaliser(x)
    return [(v - m) - log_denominator for v in x]


def softmax_jacobian(x: Sequence[float]) -> Matrix:
    """Return J with J[i][j] = d p_i / d x_j = p_i (delta_ij - p_j), p = softmax(x).

    Shapes: x of length n -> n x n, symmetric, every entry at most 1/4 in size.

    >>> softmax_jacobian([0.0, 0.0])
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    return _jacobian(softmax(as_vector("softmax_jacobian", x, masked=True, limit=_LARGEST)))


def softmax_backward(p: Sequence[float], g: Sequence[float]) -> Vector:
    """Return dL/dx = J^T g, (dL/dx)_i = p_i (g_i - sum_j g_j p_j), in O(n) without J.

    p = softmax(x) and g = dL/dp, both of length n.  p is taken to sum to exactly 1 (it is
    checked to within 1e-9).  A few ulps from each entry's own terms, even when p_k is 1:

    >>> softmax_backward([0.5, 0.5], [1.0, 0.0])
    [0.25, -0.25]
    >>> softmax_backward([1.0, 4.2e-18], [1.0, 0.0])
    [4.2e-18, -4.2e-18]
    """
    fn = "softmax_backward"
    p, g = _probabilities(fn, p), as_vector(fn, g, "g", limit=2.0 ** 1021)
    if len(g) != len(p):
        raise ValueError(f"{fn}: g has length {len(g)} but p has length {len(p)}")
    return _backward(p, g)  # every term below 4 max|g| <= 2^1023: finite


def online_update(state: Normalizer, x: float) -> Normalizer:
    """Return the state after one more logit: m' = max(m, x), d' = d e^(m - m') + e^(x - m').

    A -inf logit (masked) leaves the state as it is.

    >>> s = EMPTY
    >>> for v in [1.0, 3.0, 2.0]:
    ...     s = online_update(s, v)
    >>> round(online_logsumexp(s), 12) == round(logsumexp([1.0, 3.0, 2.0]), 12)
    True
    """
    fn = "online_update"
    state, x = _state(fn, state), as_real(fn, x, "x", masked=True, limit=_LARGEST)
    return state if x == -math.inf else _merge(state, Normalizer(x, 1.0))  # d' <= d + 1: finite


def online_merge(a: Normalizer, b: Normalizer) -> Normalizer:
    """Return the state of both blocks: m' = max(m_a, m_b), d' = d_a e^(m_a-m') + d_b e^(m_b-m').

    >>> online_merge(Normalizer(0.0, 1.0), Normalizer(0.0, 1.0))
    Normalizer(m=0.0, d=2.0)
    """
    fn = "online_merge"
    return _finite(fn, "d'", _merge(_state(fn, a, "a"), _state(fn, b, "b")))


def rescale_factors(a: Normalizer, b: Normalizer) -> Tuple[float, float, float]:
    """Return (m', exp(m_a - m'), exp(m_b - m')), m' = max(m_a, m_b): the factors that move
    anything summed relative to m_a (or m_b), a partial output too, to m' (0 if empty).

    >>> rescale_factors(Normalizer(0.0, 1.0), Normalizer(math.log(2.0), 1.0))
    (0.6931471805599453, 0.5, 1.0)
    """
    return _rescale(_state("rescale_factors", a, "a"), _state("rescale_factors", b, "b"))


def online_logsumexp(state: Normalizer) -> float:
    """Return m + log(d), the log-sum-exp of every logit folded into the state.

    >>> online_logsumexp(Normalizer(0.0, 1.0))
    0.0
    """
    state = _state("online_logsumexp", state)
    if state.m == -math.inf:
        raise ValueError("online_logsumexp: the state holds no logit (m = -inf), "
                         "so no probability distribution exists")
    return state.m + math.log(state.d)


# --------------------------------------------------------------------- the input policy
# One home for the checks of every public function of softmax.py, attention.py and
# stats.py (public, so that the other modules use it by name).  A vector is a non-empty
# list of real numbers that are not bools, finite (or -inf where a mask allows it) and at
# most LIMIT = 2^200 (about 1.6e60) in size; a matrix is a non-empty rectangle of such rows;
# a size is an int; a flag is a bool.  The limit is what keeps every result finite: a sum
# of products of up to four such numbers, as long as any list that fits in memory, stays
# far below the float range (2^1024, about 1.8e308).  Input beyond it is refused, never
# rescued.  Only softmax and its logarithms take any finite logit (the max-shift keeps them
# in range).  Each check returns new lists: no core sees, or mutates, the caller's objects.
# fn, what, limit, minimum and maximum are the calling code's constants, not checked.

LIMIT = 2.0 ** 200  # the largest entry the policy admits, unless a function says otherwise
_LARGEST = 1.7976931348623157e308  # the largest float: softmax's own limit on a logit


def as_list(fn: str, x, what: str) -> Sequence:
    """Return x, or x.tolist() for a NumPy array, if it is a non-empty sequence (not a str).

    >>> as_list("f", (1, 2), "x")
    (1, 2)
    """
    x = x.tolist() if hasattr(x, "tolist") else x
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise TypeError(f"{fn}: {what} must be a list, not {type(x).__name__}")
    if not x:
        raise ValueError(f"{fn}: {what} is empty; it needs at least one entry")
    return x


def as_vector(fn: str, x, what: str = "x", masked: bool = False, limit=LIMIT) -> Vector:
    """Return x as a new list of floats: real numbers, not bools, finite and at most limit
    in size; or TypeError or ValueError naming fn, the argument and the entry.

    masked=True admits -inf (a masked logit), but not in every entry: then no probability
    distribution exists.  A one-entry x is named without its index, unless it is a row.

    >>> as_vector("f", (1, 2.5)), as_vector("f", [0.0, -math.inf], masked=True)
    ([1.0, 2.5], [0.0, -inf])
    """
    x = as_list(fn, x, what)
    if set(map(type, x)) != {float} or not sum(map(abs, x)) <= limit:  # NaN fails too
        for i, v in enumerate(x):
            at = f"{what}[{i}]" if len(x) > 1 or what.endswith("]") else what  # a row's entry
            if isinstance(v, bool) or not isinstance(v, Real):
                raise TypeError(f"{fn}: {at} is {v!r}, not a real number")
            if not (abs(v) <= limit or masked and v == -math.inf):  # NaN fails both
                raise ValueError(f"{fn}: {at} is {v!r}; it must be finite, |x| <= {limit:.3g}")
    if masked and max(x) == -math.inf:
        raise ValueError(f"{fn}: {what} is -inf everywhere: no key is left to attend to")
    return list(map(float, x))


def as_matrix(fn: str, A, what: str, masked: bool = False) -> Matrix:
    """Return A as a new list of rows, each checked as by as_vector; non-empty, rectangular.

    >>> as_matrix("f", [[1, 2], [3, 4]], "A")
    [[1.0, 2.0], [3.0, 4.0]]
    """
    rows = [as_vector(fn, r, f"{what}[{i}]", masked) for i, r in enumerate(as_list(fn, A, what))]
    if len({len(row) for row in rows}) > 1:
        raise ValueError(f"{fn}: {what} is ragged: rows of lengths {[len(r) for r in rows]}")
    return rows


def as_real(fn: str, value, what: str, masked: bool = False, limit: float = LIMIT) -> float:
    """Return value as a float: a real number, not a bool, finite (or -inf when masked) and at
    most limit in size.

    >>> as_real("f", 1, "scale"), as_real("f", float("-inf"), "x", masked=True)
    (1.0, -inf)
    """
    if masked and isinstance(value, float) and value == -math.inf:  # a masked logit
        return value
    return as_vector(fn, [value], what, limit=limit)[0]


def as_int(fn: str, value, what: str, minimum: int = 1, maximum: Optional[int] = None) -> int:
    """Return value as an int (any integral type, NumPy's too, but not a bool) within
    [minimum, maximum].

    >>> as_int("f", 3, "d_k")
    3
    """
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:  # no __index__, or one that refuses (a NumPy array of floats)
        number = None
    if number is None:
        raise TypeError(f"{fn}: {what} must be an int, not {value!r}")
    value = number
    if value < minimum or maximum is not None and value > maximum:
        raise ValueError(f"{fn}: {what} must be at least {minimum}"
                         + (f" and at most {maximum}" if maximum is not None else "")
                         + f", not {value}")
    return value


def as_flag(fn: str, value, what: str) -> bool:
    """Return value if it is True or False; TypeError otherwise (1 and "yes" are not flags).

    >>> as_flag("f", True, "is_causal")
    True
    """
    if not isinstance(value, bool):
        raise TypeError(f"{fn}: {what} must be True or False, not {value!r}")
    return value


def _finite(fn: str, what: str, state: Normalizer) -> Normalizer:
    """state, unless its d overflowed (d values near 1e308 summed): then ValueError."""
    if state.d == math.inf:
        raise ValueError(f"{fn}: {what} is beyond the float range (about 1.8e308) for these "
                         "states; their d are too large")
    return state


def _probabilities(fn: str, p) -> Vector:
    """p as as_vector, with entries in [0, 1] that sum to 1 within 1e-9."""
    p = as_vector(fn, p, "p")
    if min(p) < 0.0 or abs(math.fsum(p) - 1.0) > 1e-9:  # so no entry exceeds 1 either
        raise ValueError(f"{fn}: p is not a probability vector (entries in [0, 1] summing "
                         f"to 1; length {len(p)}); pass p = softmax(x), not the logits x")
    return p


def _state(fn: str, state, what: str = "state") -> Normalizer:
    """A Normalizer (m, d): m finite with 1 <= d < inf, or the empty state (-inf, 0)."""
    if not isinstance(state, tuple) or len(state) != 2:
        raise TypeError(f"{fn}: {what} must be a Normalizer(m, d), not {state!r}")
    m = as_real(fn, state[0], f"{what}.m", masked=True, limit=_LARGEST)
    d = as_real(fn, state[1], f"{what}.d", limit=_LARGEST)
    if not (m == -math.inf and d == 0.0 or m > -math.inf and d >= 1.0):
        raise ValueError(f"{fn}: {what} = {tuple(state)} is not a normaliser state: it needs "
                         "m finite and d >= 1 (the max contributes e^0 = 1), or (m, d) = "
                         "(-inf, 0) for no logits")
    return Normalizer(m, d)
