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

Public functions:

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

Exceptions: every function raises ValueError for an empty input, for +inf or
NaN (naming the index), and when every logit is -inf (no distribution exists);
TypeError for anything that is not a real number.  Arguments are never mutated.
"""

import math  # exp, log1p, fsum, isnan, isinf
from numbers import Real  # what counts as a real number here
from typing import List, NamedTuple, Sequence, Tuple

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
NEG_INF = float("-inf")  # the logit of a masked position
_PLAIN_NUMBERS = {float, int}  # exact types accepted without the slower Real check


# ---------------------------------------------------------------- validation

def as_logits(fn: str, x: Sequence[float], what: str = "x") -> Vector:
    """Return x as a new list of floats, or raise naming `fn` and the rule broken.

    Allowed: finite reals and -inf (a masked logit), at least one finite.

    >>> as_logits("demo", (1, float("-inf")))
    [1.0, -inf]
    """
    values = as_reals(fn, x, what)
    if math.inf in values or not all(v == v for v in values):  # v != v only for NaN
        i = next(i for i, v in enumerate(values) if math.isnan(v) or v == math.inf)
        raise ValueError(f"{fn}: {what}[{i}] is {values[i]}; logits must be finite or -inf")
    if all(v == NEG_INF for v in values):
        raise ValueError(f"{fn}: every entry of {what} (length {len(values)}) is -inf, "
                         "so no probability distribution exists")
    return values


def as_reals(fn: str, x: Sequence[float], what: str = "x") -> Vector:
    """Return x as a new non-empty list of floats; TypeError for non-numbers.

    >>> as_reals("demo", [1, 2.5])
    [1.0, 2.5]
    """
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise TypeError(f"{fn}: {what} must be a list or tuple of numbers, "
                        f"not {type(x).__name__}")
    if len(x) == 0:
        raise ValueError(f"{fn}: {what} is empty; it needs at least one entry")
    if not set(map(type, x)) <= _PLAIN_NUMBERS:  # the fast check passes for plain lists
        for i, v in enumerate(x):
            # bool is an int subclass, but True as a logit is almost surely a mistake
            if isinstance(v, bool) or not isinstance(v, Real):
                raise TypeError(f"{fn}: {what}[{i}] is {v!r} ({type(v).__name__}); "
                                "expected a real number")
    return list(map(float, x))


# ------------------------------------------------------------ the core pieces

def _shifted_exps(x: Vector) -> Tuple[float, Vector]:
    """Return m = max_j x_j and the list exp(x_j - m), each in [0, 1], one of them exactly 1."""
    m = max(x)
    return m, [math.exp(v - m) for v in x]


def _log_denominator(x: Vector) -> Tuple[float, float]:
    """Return (m, log1p(s)) with s = sum_{j != k} exp(x_j - m), k the index of the max.

    Taking the largest term (exactly exp(0) = 1) out of the sum is what lets
    log1p(s) keep full relative accuracy when s is tiny.
    """
    m, e = _shifted_exps(x)
    k = x.index(m)
    return m, math.log1p(math.fsum(e[:k] + e[k + 1:]))


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
    return _softmax(as_logits("softmax", x))


def _softmax(x: Vector) -> Vector:
    """softmax of logits already checked (finite or -inf, not all -inf)."""
    _, e = _shifted_exps(x)
    denominator = math.fsum(e)  # correctly rounded; its largest term is exactly 1
    return [v / denominator for v in e]


def logsumexp(x: Sequence[float]) -> float:
    """Return log sum_j exp(x_j) = m + log1p(sum_{j != k} exp(x_j - m)).

    Shapes: x has length n -> a float.  The form with log1p follows Blanchard,
    Higham and Higham (IMA J. Numer. Anal., 2021).

    >>> round(logsumexp([0.0, 0.0]), 12) == round(math.log(2), 12)
    True
    >>> logsumexp([1e308, 1e308]) == 1e308
    True
    """
    m, log_denominator = _log_denominator(as_logits("logsumexp", x))
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
    x = as_logits("log_softmax", x)
    m, log_denominator = _log_denominator(x)
    return [(v - m) - log_denominator for v in x]


def softmax_jacobian(x: Sequence[float]) -> Matrix:
    """Return J with J[i][j] = d p_i / d x_j = p_i (delta_ij - p_j).

    Shapes: x has length n -> n x n (symmetric).  The diagonal p_i (1 - p_i)
    uses 1 - p_i = sum_{j != i} p_j: when p_i is close to 1 the subtraction
    1 - p_i would cancel to 0 and hide a small but non-zero derivative.

    >>> J = softmax_jacobian([0.0, 0.0])
    >>> J
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    p = softmax(as_logits("softmax_jacobian", x))
    others = _sums_of_others(p)
    return [[p_i * others[i] if i == j else -p_i * p_j for j, p_j in enumerate(p)]
            for i, p_i in enumerate(p)]


def _sums_of_others(p: Vector) -> Vector:
    """Return sum_{j != i} p_j for each i, i.e. 1 - p_i without cancellation."""
    return [math.fsum(p[:i] + p[i + 1:]) for i in range(len(p))]


def softmax_backward(p: Sequence[float], g: Sequence[float]) -> Vector:
    """Return dL/dx = J^T g, i.e. (dL/dx)_i = p_i (g_i - sum_j g_j p_j).

    Shapes: p (a probability vector, the output of softmax) and g = dL/dp both
    of length n -> length n.  O(n): J is never built.

    >>> softmax_backward([0.5, 0.5], [1.0, 0.0])
    [0.25, -0.25]
    """
    p = as_reals("softmax_backward", p, "p")
    g = as_reals("softmax_backward", g, "g")
    _check_probabilities("softmax_backward", p)
    if len(g) != len(p):
        raise ValueError(f"softmax_backward: g has length {len(g)} but p has length {len(p)}")
    for i, v in enumerate(g):
        if not math.isfinite(v):
            raise ValueError(f"softmax_backward: g[{i}] is {v}; gradients must be finite")
    mean_g = math.fsum(g_j * p_j for g_j, p_j in zip(g, p))  # E_p[g]
    return [p_i * (g_i - mean_g) for p_i, g_i in zip(p, g)]


def _check_probabilities(fn: str, p: Vector) -> None:
    """Raise unless p has entries in [0, 1] that sum to 1 (to rounding)."""
    for i, v in enumerate(p):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{fn}: p[{i}] = {v} is not a probability; "
                             "pass p = softmax(x), not the logits x")
    total = math.fsum(p)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{fn}: p sums to {total!r}, not 1 (length {len(p)}); "
                         "pass p = softmax(x)")


# ------------------------------------------------ the one-pass (online) normaliser

class Normalizer(NamedTuple):
    """The state (m, d) of a one-pass softmax normaliser over the logits seen so far.

    m is their max and d = sum_j exp(x_j - m), so log sum_j exp(x_j) = m + log(d).
    """
    m: float  # running max (-inf before any finite logit)
    d: float  # running sum of exp(x_j - m)


EMPTY = Normalizer(NEG_INF, 0.0)  # the state before any element


def rescale_factors(a: Normalizer, b: Normalizer) -> Tuple[float, float, float]:
    """Return (m', exp(a.m - m'), exp(b.m - m')) with m' = max(a.m, b.m).

    Anything summed relative to a.m (a's d, or a partial attention output) is
    moved to the common reference m' by multiplying by the first factor; the
    same for b.  An empty side gets factor 0.

    >>> rescale_factors(Normalizer(0.0, 1.0), Normalizer(math.log(2.0), 1.0))
    (0.6931471805599453, 0.5, 1.0)
    """
    m_new = max(a.m, b.m)
    if m_new == NEG_INF:  # both empty: exp(-inf - -inf) would be NaN
        return NEG_INF, 0.0, 0.0
    return m_new, math.exp(a.m - m_new), math.exp(b.m - m_new)


def online_merge(a: Normalizer, b: Normalizer) -> Normalizer:
    """Return the state of the union: m' = max(m_a, m_b), d' = d_a e^(m_a - m') + d_b e^(m_b - m').

    >>> online_merge(Normalizer(0.0, 1.0), Normalizer(0.0, 1.0))
    Normalizer(m=0.0, d=2.0)
    """
    m_new, factor_a, factor_b = rescale_factors(a, b)
    return Normalizer(m_new, a.d * factor_a + b.d * factor_b)


def online_update(state: Normalizer, x: float) -> Normalizer:
    """Return the state after one more logit: d' = d e^(m - m') + e^(x - m'), m' = max(m, x).

    A -inf logit (masked) leaves the state as it is.

    >>> s = EMPTY
    >>> for v in [1.0, 3.0, 2.0]:
    ...     s = online_update(s, v)
    >>> round(online_logsumexp(s), 12) == round(logsumexp([1.0, 3.0, 2.0]), 12)
    True
    """
    (x,) = as_reals("online_update", [x])
    if math.isnan(x) or x == math.inf:
        raise ValueError(f"online_update: x is {x}; logits must be finite or -inf")
    if x == NEG_INF:
        return state
    return online_merge(state, Normalizer(x, 1.0))


def online_logsumexp(state: Normalizer) -> float:
    """Return m + log(d), the log-sum-exp of every logit folded into the state.

    >>> online_logsumexp(Normalizer(0.0, 1.0))
    0.0
    """
    if state.m == NEG_INF:
        raise ValueError("online_logsumexp: the state holds no finite logit (m = -inf), "
                         "so no probability distribution exists")
    return state.m + math.log(state.d)
