"""Softmax, its logarithm and derivatives, in pure Python; the input policy.

Softmax turns a vector of logits x into a probability vector p.  Attention
applies it to every row of Q K^T / sqrt(d_k); the size of those logits decides
whether p is smooth or nearly one-hot, and the Jacobian J = diag(p) - p p^T
decides how much gradient gets back through it (docs/derivations.md, sections
3, 5 and 6).

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
    Normalizer, EMPTY           the one-pass normaliser's state; no logits yet
    online_update(state, x)     fold one more logit into the state
    online_merge(a, b)          combine the states of two disjoint blocks
    rescale_factors(a, b)       the factors that the merge applies to each side
    online_logsumexp(state)     m + log(d)

The input policy, public too (`__all__`): the one set of checks with which
attention.py, stats.py and the programs validate what their callers pass.  Each
takes the name of the function the caller called (fn) and of the argument
(what), and its message starts with fn ("softmax: x[2] is nan; ...").  A bad fn,
what or option is refused in the policy function's own name ("as_int: fn must
be a str naming the function called, not None").  Each returns new lists: the
caller's are never mutated.

Input policy (`__all__`):

    LIMIT                       2^200: the largest entry the policy admits
    as_list, as_vector, as_matrix, as_real, as_int, as_flag
                                a sequence, vector, matrix, real, int or bool
    as_logits, as_probabilities, in_log_range
                                softmax's input and output; log-softmax's range
    shown(value)                a value as an error message shows it

>>> [round(p, 4) for p in softmax([1.0, 0.0])]
[0.7311, 0.2689]

Exceptions: ValueError for a wrong value (an empty input, +inf or NaN, an
entry beyond its limit, every logit -inf, lengths that differ, a state that no
logits can produce); TypeError for the wrong kind of thing (a string, None, a
bool where a number belongs); each names the function called, the argument and
the entry.  Arguments are never mutated; a NumPy array is read through
.tolist(), a NumPy scalar through float() or operator.index.
"""

import math  # exp, log, log1p, fsum, inf
import operator  # index: any integral type (NumPy's too) where an int is due
import sys  # float_info.max: the largest float
from decimal import Decimal  # the digits of an int too long to print
from numbers import Real  # what counts as a real number (bool is excluded)
from typing import List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["softmax", "log_softmax", "logsumexp", "softmax_jacobian",
           "softmax_backward", "Normalizer", "EMPTY", "online_update",
           "online_merge", "rescale_factors", "online_logsumexp",
           # the input policy
           "LIMIT", "as_list", "as_vector", "as_matrix", "as_real", "as_int",
           "as_flag", "as_logits", "as_probabilities", "in_log_range", "shown"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows


# ------------------------------------------------------- the cores, as derived

def softmax(x: Sequence[float]) -> Vector:
    """Return p with p_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j.

    Shapes: x of length n -> p of length n (derivations.md section 5).  A -inf
    logit gets probability exactly 0.

    >>> [round(p, 4) for p in softmax([2.0, 1.0, 0.0, -1.0])]
    [0.6439, 0.2369, 0.0871, 0.0321]
    >>> softmax([1000, 1001, float("-inf")])[2]
    0.0
    """
    x = as_logits("softmax", x)
    m = max(x)  # softmax(x) = softmax(x - m): no exponent above 0, no overflow
    e = [math.exp(v - m) for v in x]
    Z = math.fsum(e)  # correctly rounded, at least 1: the max's term is 1
    return [v / Z for v in e]  # each p_i in [0, 1]: nothing can be non-finite


def _log_normaliser(x: Vector) -> Tuple[float, float]:
    """(m, log1p(s)), s = sum_{j != k} exp(x_j - m):
    log sum_j exp(x_j) = m + log1p(s).  Taking the max's term, exactly 1, out
    of the sum lets log1p keep a tiny s that log(1 + s) would round away
    (derivations.md section 5)."""
    m = max(x)
    k = x.index(m)
    return m, math.log1p(math.fsum(math.exp(v - m) for v in x[:k] + x[k + 1:]))


def _jacobian(p: Vector) -> Matrix:
    """J = diag(p) - p p^T, with 1 - p_i on the diagonal written as
    sum_{j != i} p_j, which does not cancel to 0 when p_i is within an ulp of 1
    (derivations.md section 3)."""
    return [[p_i * math.fsum(p[:i] + p[i + 1:]) if i == j else -p_i * p_j
             for j, p_j in enumerate(p)] for i, p_i in enumerate(p)]


def _backward(p: Vector, g: Vector) -> Vector:
    """J^T g = p_i (g_i - <g, p>), written around the largest weight p_k: with
    sum_j p_j = 1, g_i - <g, p> = (g_i - g_k) + sum_j p_j (g_k - g_j), whose
    sum runs over the small weights only, so nothing cancels to 0 when p_k
    rounds to 1 (derivations.md section 3)."""
    k = p.index(max(p))
    rest = math.fsum(p_j * (g[k] - g_j) for p_j, g_j in zip(p, g))  # k adds 0
    return [p_i * ((g_i - g[k]) + rest) for p_i, g_i in zip(p, g)]


class Normalizer(NamedTuple):
    """The state (m, d) of a one-pass normaliser:
    log sum_j exp(x_j) = m + log(d)."""
    m: float  # running max (-inf before any logit)
    d: float  # running sum of exp(x_j - m): 0 when empty, else at least 1


EMPTY = Normalizer(-math.inf, 0.0)  # the state before any logit


def _rescale(a: Normalizer, b: Normalizer) -> Tuple[float, float, float]:
    """(m', e^(m_a - m'), e^(m_b - m')), m' = max(m_a, m_b) (derivations.md
    section 6)."""
    m = max(a.m, b.m)
    if m == -math.inf:  # both empty: e^(-inf - -inf) would be NaN
        return m, 0.0, 0.0
    return m, math.exp(a.m - m), math.exp(b.m - m)


def _merge(a: Normalizer, b: Normalizer) -> Normalizer:
    """(m', d_a e^(m_a - m') + d_b e^(m_b - m')): the state of both blocks."""
    m, r_a, r_b = _rescale(a, b)
    return Normalizer(m, a.d * r_a + b.d * r_b)


# -------------------------------------------------------- the public functions

def logsumexp(x: Sequence[float]) -> float:
    """Return log sum_j exp(x_j) = m + log1p(sum_{j != k} exp(x_j - m)), x of
    length n (the form of Blanchard, Higham and Higham, IMA J. Numer. Anal.,
    2021).

    >>> round(logsumexp([0.0, 0.0]), 12) == round(math.log(2), 12)
    True
    >>> logsumexp([1e308, 1e308]) == 1e308
    True
    """
    m, log_denominator = _log_normaliser(as_logits("logsumexp", x))
    return m + log_denominator  # at most m + ln(n): finite for a finite m


def log_softmax(x: Sequence[float]) -> Vector:
    """Return log p_i = (x_i - m) - log1p(sum_{j != k} exp(x_j - m)), x of
    length n.

    Not log(softmax(x)): when p_k is within an ulp of 1, log(p_k) rounds to
    0.0, while this keeps its tiny negative value.  -inf for a masked logit.  A
    finite logit more than the largest float below the max is refused: its log
    p_i is beyond the float range.

    >>> lp = log_softmax([100.0, 1.0, 1.0, 1.0])
    >>> f"{lp[0]:.6e}", round(lp[1], 6)
    ('-3.033664e-43', -99.0)
    """
    x = in_log_range("log_softmax", x)
    m, log_denominator = _log_normaliser(x)
    return [(v - m) - log_denominator for v in x]


def softmax_jacobian(x: Sequence[float]) -> Matrix:
    """Return J with J[i][j] = d p_i / d x_j = p_i (delta_ij - p_j),
    p = softmax(x).

    Shapes: x of length n -> n x n, symmetric, every entry at most 1/4 in size.

    >>> softmax_jacobian([0.0, 0.0])
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    return _jacobian(softmax(as_logits("softmax_jacobian", x)))


def softmax_backward(p: Sequence[float], g: Sequence[float]) -> Vector:
    """Return dL/dx = J^T g, (dL/dx)_i = p_i (g_i - sum_j g_j p_j), in O(n)
    without J.

    p = softmax(x) and g = dL/dp, both of length n.  p is taken to sum to
    exactly 1 (it is checked to within 1e-9).  A few ulps from each entry's own
    terms, even when p_k is 1:

    >>> softmax_backward([0.5, 0.5], [1.0, 0.0])
    [0.25, -0.25]
    >>> softmax_backward([1.0, 4.2e-18], [1.0, 0.0])
    [4.2e-18, -4.2e-18]
    """
    fn = "softmax_backward"
    p = as_probabilities(fn, p)
    g = as_vector(fn, g, "g", limit=2.0 ** 1021)
    _same_length(fn, p, g)
    return _backward(p, g)  # every term below 4 max|g| <= 2^1023: finite


def online_update(state: Normalizer, x: float) -> Normalizer:
    """Return the state after one more logit: m' = max(m, x), d' = d
    e^(m - m') + e^(x - m').  A -inf logit (masked) leaves the state as it is.

    >>> s = EMPTY
    >>> for v in [1.0, 3.0, 2.0]:
    ...     s = online_update(s, v)
    >>> round(online_logsumexp(s), 12) == round(logsumexp([1.0, 3.0, 2.0]), 12)
    True
    """
    fn = "online_update"
    state = _state(fn, state)
    x = as_real(fn, x, "x", masked=True, limit=_LARGEST)
    if x == -math.inf:
        return state
    return _merge(state, Normalizer(x, 1.0))  # d' <= d + 1: finite


def online_merge(a: Normalizer, b: Normalizer) -> Normalizer:
    """Return the state of both blocks: m' = max(m_a, m_b),
    d' = d_a e^(m_a - m') + d_b e^(m_b - m').

    >>> online_merge(Normalizer(0.0, 1.0), Normalizer(0.0, 1.0))
    Normalizer(m=0.0, d=2.0)
    """
    fn = "online_merge"
    merged = _merge(_state(fn, a, "a"), _state(fn, b, "b"))
    return _finite_state(fn, merged)


def rescale_factors(a: Normalizer,
                    b: Normalizer) -> Tuple[float, float, float]:
    """Return (m', exp(m_a - m'), exp(m_b - m')), m' = max(m_a, m_b): the
    factors that move anything summed relative to m_a (or m_b), a partial
    output too, to m' (0 if the state is empty).

    >>> rescale_factors(Normalizer(0.0, 1.0), Normalizer(math.log(2.0), 1.0))
    (0.6931471805599453, 0.5, 1.0)
    """
    fn = "rescale_factors"
    return _rescale(_state(fn, a, "a"), _state(fn, b, "b"))


def online_logsumexp(state: Normalizer) -> float:
    """Return m + log(d), the log-sum-exp of every logit folded into the state.

    >>> online_logsumexp(Normalizer(0.0, 1.0))
    0.0
    """
    state = _state("online_logsumexp", state)
    if state.m == -math.inf:
        raise ValueError(
            "online_logsumexp: the state holds no logit (m = -inf), so no "
            "probability distribution exists")
    return state.m + math.log(state.d)


# ------------------------------------------------------------ the input policy
# One home for the checks of softmax.py, attention.py, stats.py and the
# programs.  A vector is a non-empty list of real numbers that are not bools,
# finite (or -inf where a mask allows it) and at most LIMIT = 2^200 (about
# 1.6e60) in size; a matrix is a non-empty rectangle of such rows; a size is an
# int; a flag is a bool.  The limit keeps every result finite: a sum of
# products of up to four such numbers, as long as any list that fits in
# memory, stays far below the float range (2^1024, about 1.8e308).  Input
# beyond it is refused, never rescued.  Only softmax and its logarithms take
# any finite logit (the max-shift keeps them in range).  Each check returns new
# lists: no core sees, or mutates, the caller's objects.  Entries are converted
# to float before any arithmetic, so NumPy scalars raise no warnings.
#
# A message names fn, the function the caller called: "softmax: x[2] is nan;
# ...".  A policy function called with a bad fn, what or option (masked,
# limit, minimum, maximum) is itself misused: that message names it, "as_int:
# fn must be a str ...".  Each public policy function checks its own options
# once, then calls a private core that trusts them (as_matrix checks a row
# with _vector, not as_vector).

LIMIT = 2.0 ** 200  # the largest entry admitted, unless a function says so
_LARGEST = sys.float_info.max  # the largest float: softmax's limit on a logit


def as_list(fn: str, x, what: str) -> list:
    """Return x as a new list (x.tolist() for a NumPy array), if it is a
    non-empty sequence and not a str; its entries are not checked.

    >>> as_list("f", (1, 2), "x")
    [1, 2]
    """
    _names("as_list", fn, what)
    return _list(fn, x, what)


def as_vector(fn: str, x, what: str = "x", masked: bool = False,
              limit: float = LIMIT) -> Vector:
    """Return x as a new list of floats, each entry checked as by as_real: a
    real number, not a bool, finite (or -inf if masked) and at most limit in
    size.

    >>> as_vector("f", (1, 2.5)), as_vector("f", [0.0, -math.inf], masked=True)
    ([1.0, 2.5], [0.0, -inf])
    """
    _names("as_vector", fn, what)
    _flag("as_vector", masked, "masked")
    return _vector(fn, x, what, masked, _limit("as_vector", limit))


def as_matrix(fn: str, A, what: str, masked: bool = False) -> Matrix:
    """Return A as a new list of rows, each checked as by as_vector; non-empty
    and rectangular.

    >>> as_matrix("f", [[1, 2], [3, 4]], "A")
    [[1.0, 2.0], [3.0, 4.0]]
    """
    _names("as_matrix", fn, what)
    _flag("as_matrix", masked, "masked")
    rows = _list(fn, A, what)
    _each_a_row(fn, rows, what)
    A = [_vector(fn, row, f"{what}[{i}]", masked, LIMIT)
         for i, row in enumerate(rows)]
    return _rectangular(fn, A, what)


def as_real(fn: str, value, what: str, masked: bool = False,
            limit: float = LIMIT) -> float:
    """Return value as a float: a real number, not a bool, finite (or -inf when
    masked) and at most limit in size.

    >>> as_real("f", 1, "scale"), as_real("f", float("-inf"), "x", masked=True)
    (1.0, -inf)
    """
    _names("as_real", fn, what)
    _flag("as_real", masked, "masked")
    return _real(fn, value, what, masked, _limit("as_real", limit))


def as_int(fn: str, value, what: str, minimum: int = 1,
           maximum: Optional[int] = None) -> int:
    """Return value as an int (any integral type, NumPy's too, but not a bool)
    within [minimum, maximum] (no upper bound if maximum is None).

    >>> as_int("f", 3, "d_k"), as_int("f", -2, "seed", minimum=-5, maximum=5)
    (3, -2)
    """
    _names("as_int", fn, what)
    minimum, maximum = _int_range("as_int", minimum, maximum)
    number = _integral(value)
    if number is None:
        raise TypeError(f"{fn}: {what} must be an int, not {shown(value)}")
    if number < minimum:
        raise ValueError(f"{fn}: {what} must be at least {_bound(minimum)}, "
                         f"not {shown(number)}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{fn}: {what} must be at most {_bound(maximum)}, "
                         f"not {shown(number)}")
    return number


def as_flag(fn: str, value, what: str) -> bool:
    """Return value if it is True or False; TypeError otherwise (1 and "yes"
    are not flags).

    >>> as_flag("f", True, "is_causal")
    True
    """
    _names("as_flag", fn, what)
    return _flag(fn, value, what)


def as_logits(fn: str, x, what: str = "x") -> Vector:
    """Return x as as_vector does with any finite logit or -inf (masked), but
    not -inf in every entry: then no probability distribution exists.

    >>> as_logits("f", [1e300, -math.inf])
    [1e+300, -inf]
    """
    _names("as_logits", fn, what)
    x = _vector(fn, x, what, True, _LARGEST)
    if max(x) == -math.inf:
        raise ValueError(
            f"{fn}: {what} is -inf everywhere; at least one logit must be "
            "finite for a probability distribution to exist")
    return x


def as_probabilities(fn: str, p, what: str = "p") -> Vector:
    """Return p as as_vector does, if its entries are at least 0 and sum to 1
    within 1e-9 (so none exceeds 1 by more).

    >>> as_probabilities("f", [0.25, 0.75])
    [0.25, 0.75]
    """
    _names("as_probabilities", fn, what)
    p = _vector(fn, p, what, False, LIMIT)
    if min(p) < 0.0:
        i = p.index(min(p))
        raise ValueError(
            f"{fn}: {what}[{i}] is {p[i]!r}; a probability cannot be negative "
            "(pass p = softmax(x), not the logits x)")
    if abs(math.fsum(p) - 1.0) > 1e-9:
        raise ValueError(
            f"{fn}: {what} sums to {math.fsum(p)!r}, not 1 (within 1e-9); "
            "pass p = softmax(x), not the logits x")
    return p


def in_log_range(fn: str, x, what: str = "x") -> Vector:
    """Return x as as_logits does, if every finite x_i lies less than the
    largest float below the max m: then x_i - m, and log p_i, are floats.

    >>> in_log_range("f", [8e307, -8e307, -math.inf])
    [8e+307, -8e+307, -inf]
    """
    _names("in_log_range", fn, what)
    x = as_logits(fn, x, what)
    m, low = max(x), min(v for v in x if v > -math.inf)
    if m - low == math.inf:
        i, k = x.index(low), x.index(m)
        raise ValueError(
            f"{fn}: {what}[{i}] is {low!r}, more than the largest float below "
            f"the max {what}[{k}] = {m!r}; its log-probability is beyond the "
            "float range")
    return x


def shown(value) -> str:
    """Return value as an error message shows it: its repr, cut to 60
    characters; an int beyond 2^133 (40 digits) by its number of digits
    (Python refuses to print one of more than 4,300); a value whose repr fails
    by its type.

    >>> shown(10 ** 5000)
    'an int of 5001 digits'
    >>> shown([0.5] * 30)
    '[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, ...'
    """
    if isinstance(value, int) and value.bit_length() > 133:  # over 40 digits
        return f"an int of {Decimal(value).adjusted() + 1} digits"
    try:
        text = repr(value)
    except Exception:  # a Fraction too long to print, nesting too deep, ...
        return f"a {type(value).__name__} that cannot be printed"
    return text if len(text) <= 60 else text[:56] + " ..."


# The cores of the policy: they trust fn, what and the options.

def _list(fn: str, x, what: str) -> list:
    """x, or x.tolist(), as a new list, if it is a non-empty sequence."""
    x = x.tolist() if hasattr(x, "tolist") else x
    if not _is_sequence(x):
        raise TypeError(f"{fn}: {what} must be a list, not {type(x).__name__}")
    if not x:
        raise ValueError(f"{fn}: {what} is empty; it needs at least one entry")
    return list(x)


def _is_sequence(x) -> bool:
    """A list, a tuple or a NumPy array (tolist()), not a str."""
    return hasattr(x, "tolist") or (isinstance(x, Sequence)
                                    and not isinstance(x, (str, bytes)))


def _vector(fn: str, x, what: str, masked: bool, limit: float) -> Vector:
    """as_vector, its options trusted."""
    x = _list(fn, x, what)
    if set(map(type, x)) == {float} and sum(map(abs, x)) <= limit:  # NaN fails
        return x  # the fast path: every entry a float within the limit
    return [_real(fn, v, f"{what}[{i}]", masked, limit)
            for i, v in enumerate(x)]


def _real(fn: str, value, what: str, masked: bool, limit: float) -> float:
    """as_real, its options trusted: one rule, one `if`, one message."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{fn}: {what} is {shown(value)}, not a real number")
    try:
        x = float(value)  # float32 too, exactly, and with no NumPy arithmetic
    except OverflowError:  # a finite int or Fraction too large for a float
        raise ValueError(
            f"{fn}: {what} is {shown(value)}; {_within(limit)}") from None
    if not (math.isfinite(x) or masked and x == -math.inf):  # NaN, +-inf
        rule = "finite or -inf" if masked else "finite"
        raise ValueError(f"{fn}: {what} is {shown(value)}; it must be {rule}")
    if abs(x) > limit and x > -math.inf:  # -inf here is a mask
        raise ValueError(f"{fn}: {what} is {shown(value)}; {_within(limit)}")
    return x


def _flag(fn: str, value, what: str) -> bool:
    """as_flag, its names trusted."""
    if not isinstance(value, bool):
        raise TypeError(
            f"{fn}: {what} must be True or False, not {shown(value)}")
    return value


def _integral(value) -> Optional[int]:
    """value as an int if it has an integral type (not bool), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:  # no __index__, or one that refuses (an array of floats)
        return None


def _within(limit: float) -> str:
    """The rule of an entry's size, and why: the float range, or LIMIT."""
    if limit == _LARGEST:
        return "it must be at most the largest float (about 1.8e+308) in size"
    if limit == LIMIT:
        return (f"it must be at most {_bound(limit)} in size, so that sums of "
                "products stay within the float range")
    return f"it must be at most {_bound(limit)} in size"


def _bound(b) -> str:
    """A bound as a message shows it: a power of two from 2^20 (about a million)
    on, or one less, by its exponent (2^53, -2^64, 2^64 - 1), a float's with
    its size too (2^200 (about 1.6e+60)); any other by its repr."""
    n = int(abs(b))
    if n != abs(b) or n < 2 ** 20:
        return repr(b)
    sign = "-" if b < 0 else ""
    size = f" (about {b:.2g})" if isinstance(b, float) else ""
    if n & (n - 1) == 0:
        return f"{sign}2^{n.bit_length() - 1}{size}"
    if n & (n + 1) == 0 and not sign:
        return f"2^{n.bit_length()} - 1{size}"
    return repr(b)


def _rectangular(fn: str, A: Matrix, what: str) -> Matrix:
    """A, if its rows all have the length of its first."""
    for i, row in enumerate(A):
        if len(row) != len(A[0]):
            raise ValueError(
                f"{fn}: {what}[{i}] has length {len(row)} but {what}[0] has "
                f"length {len(A[0])}; the rows of {what} must all have the "
                "same length")
    return A


def _each_a_row(fn: str, rows: list, what: str) -> None:
    """Every entry of a matrix is a row: [1.0, 2.0] is a vector, [[1.0, 2.0]]
    the matrix of one row."""
    for i, row in enumerate(rows):
        if not _is_sequence(row):
            raise TypeError(
                f"{fn}: {what}[{i}] is {shown(row)}, not a row; a matrix is a "
                "list of rows, so one row r is written [r]")


# The policy's own arguments, each refused in the name of the policy function.

def _names(policy: str, fn, what) -> None:
    """fn, the function called, and what, the argument: non-empty strs."""
    for name, value, role in (("fn", fn, "the function called"),
                              ("what", what, "the argument checked")):
        if not isinstance(value, str):
            raise TypeError(f"{policy}: {name} must be a str naming {role}, "
                            f"not {shown(value)}")
        if not value:
            raise ValueError(f"{policy}: {name} is empty; it must name {role}")


def _limit(policy: str, limit) -> float:
    """The limit on an entry's size, as a float: positive, at most the largest
    float."""
    size = _real(policy, limit, "limit", False, _LARGEST)
    if not size > 0.0:
        raise ValueError(
            f"{policy}: limit is {shown(limit)}; it must be positive")
    return size


def _int_range(policy: str, minimum, maximum) -> Tuple[int, Optional[int]]:
    """as_int's [minimum, maximum]: ints (maximum None: no upper bound), not
    empty."""
    low = _integral(minimum)
    if low is None:
        raise TypeError(
            f"{policy}: minimum must be an int, not {shown(minimum)}")
    if maximum is None:
        return low, None
    high = _integral(maximum)
    if high is None:
        raise TypeError(
            f"{policy}: maximum must be an int or None, not {shown(maximum)}")
    if high < low:
        raise ValueError(
            f"{policy}: maximum is {shown(high)}, below minimum = "
            f"{shown(low)}; no int would pass")
    return low, high


# ------------------------------------------------------ softmax.py's own checks

def _same_length(fn: str, p: Vector, g: Vector) -> None:
    """softmax_backward's rule: g has one entry per entry of p."""
    if len(g) != len(p):
        raise ValueError(
            f"{fn}: g has length {len(g)} but p has length {len(p)}; dL/dp "
            "needs one entry per probability")


def _state(fn: str, state, what: str = "state") -> Normalizer:
    """A Normalizer (m, d): m finite with 1 <= d < inf, or the empty state
    (-inf, 0)."""
    if not isinstance(state, tuple) or len(state) != 2:
        raise TypeError(
            f"{fn}: {what} must be a Normalizer(m, d), not {shown(state)}")
    m = as_real(fn, state[0], f"{what}.m", masked=True, limit=_LARGEST)
    d = as_real(fn, state[1], f"{what}.d", limit=_LARGEST)
    if m == -math.inf and d != 0.0:
        raise ValueError(
            f"{fn}: {what} = {shown(tuple(state))} is not a normaliser state: "
            "with no logit yet (m = -inf), d must be 0")
    if m > -math.inf and d < 1.0:
        raise ValueError(
            f"{fn}: {what} = {shown(tuple(state))} is not a normaliser state: "
            "once it holds a logit (m finite), d must be at least 1, the "
            "max's own term e^0")
    return Normalizer(m, d)


def _finite_state(fn: str, state: Normalizer) -> Normalizer:
    """state, unless its d overflowed (d values near 1e308 summed): then
    ValueError."""
    if state.d == math.inf:
        raise ValueError(
            f"{fn}: d' is beyond the float range (about 1.8e308) for these "
            "states; their d are too large")
    return state
