"""The variance argument for attention's sqrt(d_k), in numbers to reproduce.

At initialisation, with q and k of independent components of mean 0 and
variance 1, Var(q . k) = d_k: unscaled logits spread like sqrt(d_k), softmax
saturates, its Jacobian shrinks, and the typical (median) row passes almost no
gradient to Q and K (a few unsaturated rows still do); 1/sqrt(d_k) brings the
variance back to 1.  At a fixed correlation rho between q's and k's components
(training builds one), E[q . k] = rho d_k: muP's reason for 1/d_k.
`python3 stats.py` prints each link of the argument; docs/derivations.md
derives each formula.

Public API (`__all__`):

    mean(xs), variance(xs, ddof=0)          x_bar; the two-pass variance
    product_variance(mx, vx, my, vy)        Var(XY) for independent X, Y
    dot_product_variance(d_k, ...)          Var(q . k) = d_k Var(q_i k_i)
    scaled_variance(var, c)                 Var(c X) = c^2 Var(X)
    SCALE_CHOICES, scale_factor(name, d_k)  1, 1/sqrt(d_k), 1/d_k, 1/ln(d_k)
    Moments, exact_dot_product_moments(d_k, values, probabilities)
                                            exact, in Fractions
    correlated_dot_product_moments(d_k, rho)
                                            E = rho d_k, Var = d_k (1 + rho^2)
    correlated_logits(d_k, rho, scale_name, m)
                                            the matched key's logit and weight
    variance_standard_error(d_k, n)         of the simulated Var(q . k)
    Median, median_interval(xs)             a median and its order-statistic
                                            interval
    Quantile, quantile_interval(xs, p)      a p-quantile and its
                                            order-statistic interval
    sample_dot_products(d_k, n, seed=, scale=, rho=)
                                            Monte Carlo, N(0, 1) components
    layer_norm(x), sample_projected_dot_products(d_k, n, d_model=, seed=)
    ScoreVariance, additive_score_variance(d_a, n, ...)
                                            Var(w_v . tanh(W_q q + W_k k))
    softmax_entropy(x)                      H(softmax(x)) in nats
    Saturation, saturation_stats(d_k, scale_name, ...)
                                            largest weight, entropy, ||J||_F
    GradientNorms, gradient_stats(d_k, scale_name, ...)
                                            ||dL/dS||, ||dL/dQ||: median, mean
    GradientSpread, gradient_spread(d_k, scale_name, ...)
                                            their quantiles [intervals]; the
                                            top rows' shares +- se
    PERCENTILES, TOP_PERCENTS               the quantiles and top shares given
    Report, report(...)                     every number of `python3 stats.py`
    format_report(r), main(argv)            its text; the command line
    format_estimate(value, se), format_interval(interval)
                                            "1026 +- 46"; "0.47 [0.45, 0.5]"

>>> dot_product_variance(64)
64
>>> scaled_variance(dot_product_variance(64), Fraction(1, 8))
Fraction(1, 1)

Exceptions: TypeError for the wrong kind of thing (a string, None, a bool, a
float where an int is needed, a seed that is neither an int nor a
random.Random); ValueError for a wrong value (too few data points, d_k < 1, a
negative variance, bad probabilities, NaN, inf or an entry beyond
softmax.LIMIT), naming the function called.  Arguments are never mutated; ints
and Fractions give exact results wherever Python's own arithmetic keeps them
exact.
"""

import argparse  # the command line of the main job
import functools  # lru_cache: the report's ranks, computed once
import math  # sqrt, log, log1p, exp, fsum, cos, sin, tanh
import operator  # mul: the sum of squares of the shares' influence
import os  # devnull, when the reader of the report closes the pipe
import random  # seeded Monte Carlo
import statistics  # median
import sys  # the exit status of the command line; float_info.max
from fractions import Fraction  # exact moments
from typing import (Dict, List, NamedTuple, Optional, Sequence, Tuple,
                    Union)

from attention import dot
from softmax import (as_int, as_list, as_real, as_vector, in_log_range,
                     log_softmax, shown, softmax, softmax_backward,
                     softmax_jacobian)

__all__ = ["mean", "variance", "product_variance", "dot_product_variance",
           "scaled_variance", "SCALE_CHOICES", "scale_factor", "Moments",
           "exact_dot_product_moments", "correlated_dot_product_moments",
           "correlated_logits", "variance_standard_error", "Median",
           "median_interval", "Quantile", "quantile_interval",
           "sample_dot_products", "layer_norm",
           "sample_projected_dot_products", "ScoreVariance",
           "additive_score_variance", "softmax_entropy", "Saturation",
           "saturation_stats", "GradientNorms", "gradient_stats",
           "GradientSpread", "gradient_spread", "PERCENTILES", "TOP_PERCENTS",
           "Report", "report", "format_report", "format_estimate",
           "format_interval", "main"]

Vector = List[float]  # a vector is a list of floats
Exact = (int, Fraction)  # numbers whose arithmetic Python keeps exact
MAX_EXACT = 2 ** 53  # every int up to it is a float: the largest d_k or n
D_V = 8  # the width of the values in the saturation and gradient rows
TRIALS = 2000  # attention rows per d_k: a median whose interval informs
WORK = 10 ** 8  # the command line's one bound: about a minute of draws
PERCENTILES = (10, 50, 90, 99)  # the quantiles of the gradient norms, in %
TOP_PERCENTS = (1, 10)  # the top rows whose share of the summed norms is given


# ------------------------------------------------------- the cores, as derived

def _centred(x: Vector) -> Vector:
    """x_i - x_bar, in two passes: the second removes the error of the rounded
    x_bar.

    The one-pass E[X^2] - E[X]^2 subtracts two nearly equal numbers when the
    data sit far from 0 and can lose every digit (derivations.md section 2).
    """
    x_bar = math.fsum(x) / len(x)
    d = [v - x_bar for v in x]
    d_bar = math.fsum(d) / len(x)  # 0 in exact arithmetic; in floats, x_bar's
    return [v - d_bar for v in d]


def _variance(x: Vector, ddof: int) -> float:
    """sum_i (x_i - x_bar)^2 / (n - ddof)."""
    return math.fsum(v * v for v in _centred(x)) / (len(x) - ddof)


def _product_variance(mean_x, var_x, mean_y, var_y):
    """Var(XY) = E[X^2] E[Y^2] - E[X]^2 E[Y]^2 = v_x v_y + m_x^2 v_y + m_y^2
    v_x for independent X and Y (derivations.md section 2)."""
    return var_x * var_y + mean_x * mean_x * var_y + mean_y * mean_y * var_x


SCALE_CHOICES = ("1", "1/sqrt(d_k)", "1/d_k", "1/ln(d_k)")  # the documents'
_FACTORS = {"1": lambda d_k: 1.0,
            "1/sqrt(d_k)": lambda d_k: 1 / math.sqrt(d_k),
            "1/d_k": lambda d_k: 1 / d_k,
            "1/ln(d_k)": lambda d_k: 1 / math.log(d_k)}


def _moments(d_k: int, values: List[Fraction], probabilities: List[Fraction]):
    """E[q . k] = d_k mu^2 and Var(q . k) = d_k (s^2 - mu^4), mu = E[X],
    s = E[X^2], for q_i, k_i all drawn independently from one distribution
    (derivations.md section 2)."""
    mu = sum(p * v for v, p in zip(values, probabilities))
    s = sum(p * v * v for v, p in zip(values, probabilities))
    return Moments(d_k * mu * mu, d_k * (s * s - mu ** 4))


def _entropy(x: Vector, p: Vector) -> float:
    """H(p) = -sum_i p_i log p_i for p = softmax(x), with log p_i from
    log_softmax (accurate near p_i = 1, where log(p_i) would round to 0)."""
    terms = [p_i * lp_i for p_i, lp_i in zip(p, log_softmax(x)) if p_i > 0.0]
    return max(0.0, -math.fsum(terms))  # H >= 0; rounding may leave -0.0


def _jacobian_norm(p: Vector) -> float:
    """||J||_F for J = diag(p) - p p^T in O(m): ||J||_F^2 = sum_i p_i^2
    (1 - p_i)^2 + sum_i p_i^2 (T - p_i^2), T = sum_j p_j^2.  For the largest
    p_k, 1 - p_k and T - p_k^2 are summed over the other entries, so nothing
    cancels when p is nearly one-hot (derivations.md section 3)."""
    k = p.index(max(p))
    others = p[:k] + p[k + 1:]
    rest = math.fsum(others)  # 1 - p_k
    R = math.fsum(v * v for v in others)  # T - p_k^2
    terms = [v * v * ((1 - v) ** 2 + p[k] ** 2 + R - v * v) for v in others]
    return math.sqrt(math.fsum(terms + [p[k] ** 2 * (rest * rest + R)]))


def _normals(rng: random.Random, count: int) -> Vector:
    """count N(0, 1) draws, the same numbers (and final state of rng) as count
    calls of rng.gauss(0.0, 1.0), at half the cost: Box-Muller pairs, the spare
    in rng.gauss_next."""
    z: Vector = []
    if count and rng.gauss_next is not None:  # gauss gives 0.0 + z sigma
        z, rng.gauss_next = [0.0 + rng.gauss_next], None
    uniform, keep = rng.random, z.extend
    cos, sin, log, sqrt = math.cos, math.sin, math.log, math.sqrt
    for _ in range((count - len(z) + 1) // 2):
        angle, radius = uniform() * math.tau, sqrt(-2.0 * log(1.0 - uniform()))
        keep((0.0 + cos(angle) * radius, 0.0 + sin(angle) * radius))
    if len(z) > count:
        rng.gauss_next = z.pop()
    return z


class _Row(NamedTuple):  # one attention row at initialisation, in brief
    scores: Vector  # q . k_j, m of them
    dP: Vector  # G V^T: the upstream gradient reaching the weights, m of them
    q2: float  # |q|^2
    rest: float  # chi^2(d_k - 1): the part of K orthogonal to q, seen by dS K


def _rows(d_k: int, m: int, count: int, rng: random.Random) -> List[_Row]:
    """`count` rows drawn exactly as if q (1 x d_k), K (m x d_k), V (m x D_V)
    and the upstream gradient G (1 x D_V) had independent N(0, 1) entries, in
    O(m) each: |q|^2 ~ chi^2(d_k) and, given q, q . k_j = |q| z_j; so
    dP_j = G . v_j = |G| z'_j; and the parts of the k_j orthogonal to q are
    independent of both, so
        |sum_j dS_j k_j|^2 = (sum_j dS_j q . k_j)^2 / |q|^2
                             + (sum_j dS_j^2) chi^2(d_k - 1)
    (derivations.md section 4)."""
    rows = []
    for _ in range(count):
        q2 = rng.gammavariate(d_k / 2, 2.0)  # chi^2(d_k)
        g2 = rng.gammavariate(D_V / 2, 2.0)  # chi^2(D_V)
        z = _normals(rng, 2 * m)  # the scores' z, then dP's
        rest = rng.gammavariate((d_k - 1) / 2, 2.0) if d_k > 1 else 0.0
        scores = [math.sqrt(q2) * v for v in z[:m]]
        rows.append(_Row(scores, [math.sqrt(g2) * v for v in z[m:]], q2, rest))
    return rows


def _gradient_norms(rows: Sequence[_Row], c: float) -> Tuple[Vector, Vector]:
    """(||dL/dS||, ||dL/dQ||) of each row: dS the softmax backward of dP (as
    score_gradient), dQ = c dS K (as attention_backward) from its parts along q
    and orthogonal to it."""
    score, query = [], []
    for row in rows:
        dS = softmax_backward(softmax([c * s for s in row.scores]), row.dP)
        along_q = math.fsum(g * s for g, s in zip(dS, row.scores))**2 / row.q2
        score.append(math.sqrt(math.fsum(g * g for g in dS)))
        query.append(abs(c) * math.sqrt(along_q + score[-1] ** 2 * row.rest))
    return score, query


@functools.lru_cache(maxsize=64)  # the report asks for each (n, p) 20 times
def _order_ranks(n: int, p: Fraction, coverage: Fraction
                 ) -> Tuple[int, int, float]:
    """(l, u, P(l <= B <= u - 1)) for B ~ Binomial(n, p): the interval
    [x_(l), x_(u)] of the p-quantile, P(B < l) and P(B >= u) each at most
    (1 - coverage) / 2, in exact ints (derivations.md section 10)."""
    if 2 * p > 1:  # count from the nearer end: n - B ~ Binomial(n, 1 - p)
        l, u, covered = _order_ranks(n, 1 - p, coverage)
        return n + 1 - u, n + 1 - l, covered
    a, b, e = p.numerator, p.denominator, (1 - coverage) / 2
    total = b ** n
    low, high = e * total, (1 - e) * total  # b^n e, b^n (1 - e)
    term = (b - a) ** n  # b^n P(B = 0)
    l, below_l, below = 1, term, 0
    for k in range(1, n + 1):
        below += term  # b^n P(B < k)
        if below <= low:
            l, below_l = k, below
        if below >= high or k == n:
            return l, k, (below - below_l) / total  # int / int: rounded once
        term = term * (n - k + 1) * a // (k * (b - a))  # b^n P(B = k), exact


def _quantile(x: Vector, p: Fraction) -> float:
    """The p-quantile of the sorted x, linear between order statistics: at
    h = (n - 1) p from x[0] (statistics.quantiles' "inclusive" method; the
    median at p = 1/2)."""
    j, delta = divmod((len(x) - 1) * p.numerator, p.denominator)
    if delta == 0:  # h = j, an order statistic (n = 1 has no x[j + 1])
        return x[j]
    return x[j] + (x[j + 1] - x[j]) * (delta / p.denominator)  # h = j + d/b


def _top_share(ranked: Vector, t: int) -> Tuple[float, float]:
    """(T, se): the share T = theta / mu of the ranked x_i's sum that the top
    k = ceil(n t / 100) < n carry, and its delta-method standard error, from
    mu IF_T(x) = max(x - xi, 0) + xi s - T x (derivations.md section 10)."""
    n, k = len(ranked), -(-len(ranked) * t // 100)
    mu, theta = math.fsum(ranked) / n, math.fsum(ranked[:k]) / n
    T, xi, s = theta / mu, ranked[k], k / n
    g = ([v - xi + xi * s - T * v for v in ranked[:k]]  # mu IF_T, the top
         + [xi * s - T * v for v in ranked[k:]])  # and the rest
    return T, math.sqrt(math.fsum(map(operator.mul, g, g))) / (n * mu)


# ----------------------------------------------------------- mean and variance

def mean(xs: Sequence[float]) -> float:
    """Return x_bar = (x_1 + ... + x_n) / n, the sum correctly rounded
    (math.fsum).

    >>> mean([1, 2, 3, 4]), mean([1e16, 1.0, -1e16, 3.0])
    (2.5, 1.0)
    """
    xs = as_vector("mean", xs, "xs")
    return math.fsum(xs) / len(xs)


def variance(xs: Sequence[float], ddof: int = 0) -> float:
    """Return Var(X) = sum_i (x_i - x_bar)^2 / (n - ddof), in two passes, so
    that data far from 0 keep their digits.  ddof=0: the population variance;
    ddof=1: the sample variance.

    >>> variance([1, 2, 3, 4]), variance([1, 2, 3, 4], ddof=1)
    (1.25, 1.6666666666666667)
    >>> variance([1e9 + 1, 1e9 + 3])
    1.0
    """
    ddof = as_int("variance", ddof, "ddof", minimum=0)
    xs = as_vector("variance", xs, "xs")
    _enough_points(xs, ddof)
    return _variance(xs, ddof)


# ------------------------------------------------------------------ the theory

def product_variance(mean_x: float, var_x: float, mean_y: float,
                     var_y: float) -> float:
    """Return Var(XY) = var_x var_y + mean_x^2 var_y + mean_y^2 var_x for
    independent X, Y (with zero means, E[X^2] E[Y^2] = var_x var_y).  Exact for
    ints and Fractions.

    >>> product_variance(0, 1, 0, 1), product_variance(Fraction(1, 2), 1, 2, 3)
    (1, Fraction(31, 4))
    """
    fn = "product_variance"
    mean_x = _number(fn, mean_x, "mean_x")
    var_x = _number(fn, var_x, "var_x", variance=True)
    mean_y = _number(fn, mean_y, "mean_y")
    var_y = _number(fn, var_y, "var_y", variance=True)
    return _product_variance(mean_x, var_x, mean_y, var_y)


def dot_product_variance(d_k: int, mean_q: float = 0, var_q: float = 1,
                         mean_k: float = 0, var_k: float = 1) -> float:
    """Return Var(q . k) = d_k Var(q_i k_i) for q, k with independent,
    identically distributed components: the d_k products are independent, so
    their variances add.

    >>> dot_product_variance(512), dot_product_variance(4, var_q=2, var_k=3)
    (512, 24)
    """
    fn = "dot_product_variance"
    d_k = as_int(fn, d_k, "d_k", maximum=MAX_EXACT)
    mean_q = _number(fn, mean_q, "mean_q")
    var_q = _number(fn, var_q, "var_q", variance=True)
    mean_k = _number(fn, mean_k, "mean_k")
    var_k = _number(fn, var_k, "var_k", variance=True)
    return d_k * _product_variance(mean_q, var_q, mean_k, var_k)


def scaled_variance(var: float, c: float) -> float:
    """Return Var(c X) = c^2 Var(X).

    >>> scaled_variance(64, Fraction(1, 8)), scaled_variance(64, 0.125)
    (Fraction(1, 1), 1.0)
    """
    c = _number("scaled_variance", c, "c")
    var = _number("scaled_variance", var, "var", variance=True)
    return c * c * var


def scale_factor(name: str, d_k: int) -> float:
    """Return the multiplier c of q . k that a scale choice names.

    "1": unscaled; "1/sqrt(d_k)": the paper's; "1/d_k": muP's; "1/ln(d_k)"
    (d_k >= 2).

    >>> [round(scale_factor(name, 64), 4) for name in SCALE_CHOICES]
    [1.0, 0.125, 0.0156, 0.2404]
    """
    return _factor("scale_factor", name, d_k)


class Moments(NamedTuple):
    mean: Fraction  # E[q . k]
    variance: Fraction  # Var(q . k)


def exact_dot_product_moments(d_k: int, values: Sequence[float],
                              probabilities: Optional[Sequence[float]] = None
                              ) -> Moments:
    """Return the exact (E[q . k], Var(q . k)) = (d_k mu^2, d_k (s^2 - mu^4)),
    mu = E[X] and s = E[X^2], when every q_i and k_i is drawn independently
    from P(X = values[t]) = probabilities[t] (uniform if None): in Fractions,
    with no sampling and no rounding.

    >>> exact_dot_product_moments(8, [-1, 1])
    Moments(mean=Fraction(0, 1), variance=Fraction(8, 1))
    >>> exact_dot_product_moments(10, [0, 1, 2])
    Moments(mean=Fraction(10, 1), variance=Fraction(160, 9))
    """
    fn = "exact_dot_product_moments"
    d_k = as_int(fn, d_k, "d_k", maximum=MAX_EXACT)
    values = _numbers(fn, values, "values")
    if probabilities is None:
        probabilities = [Fraction(1, len(values))] * len(values)
    else:
        probabilities = _numbers(fn, probabilities, "probabilities")
    _distribution(fn, values, probabilities)
    return _moments(d_k, [Fraction(v) for v in values],
                    [Fraction(p) for p in probabilities])


def correlated_dot_product_moments(d_k: int, rho: float) -> Moments:
    """Return (E[q . k], Var(q . k)) = (rho d_k, d_k (1 + rho^2)) when the
    pairs (q_i, k_i) are independent and each is jointly normal with means 0,
    variances 1, correlation rho: E[q_i k_i] = rho and, by Isserlis' theorem,
    E[q_i^2 k_i^2] = 1 + 2 rho^2 (derivations.md section 7).  rho = 0 is
    initialisation.  Exact for an int or Fraction rho.

    >>> correlated_dot_product_moments(64, Fraction(1, 2))
    Moments(mean=Fraction(32, 1), variance=Fraction(80, 1))
    """
    fn = "correlated_dot_product_moments"
    d_k, rho = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), _rho(fn, rho)
    return Moments(d_k * rho, d_k * (1 + rho * rho))


def correlated_logits(d_k: int, rho: float, scale_name: str = "1/sqrt(d_k)",
                      m: int = 16) -> Tuple[float, float, float]:
    """Return (mean, std, weight) of the logit c q . k* of the key whose
    components correlate with q's (rho), among m - 1 keys independent of q:
    c rho d_k, c sqrt(d_k (1 + rho^2)), and e^mean / (e^mean + m - 1), k*'s
    weight when every logit sits at its mean.  Under 1/sqrt(d_k) the mean grows
    like sqrt(d_k); under 1/d_k it is rho.

    >>> [round(v, 3) for v in correlated_logits(256, 0.5)]
    [8.0, 1.118, 0.995]
    """
    fn = "correlated_logits"
    c, rho = _factor(fn, scale_name, d_k), float(_rho(fn, rho))
    m = as_int(fn, m, "m", minimum=2)
    mu, std = c * rho * d_k, c * math.sqrt(d_k * (1 + rho * rho))
    return mu, std, softmax([mu] + [0.0] * (m - 1))[0]


def variance_standard_error(d_k: int, n: int) -> float:
    """Return sqrt((E[(q . k)^4] - d_k^2) / n) = sqrt((2 d_k^2 + 6 d_k) / n),
    the standard error of (1/n) sum (q . k)^2, which estimates Var(q . k) = d_k
    (the mean is 0).

    For independent N(0, 1) components E[(q . k)^4] = 3 d_k^2 + 6 d_k:
    expanding the fourth power, only paired indices survive, i = j = l = m with
    E[q^4] E[k^4] = 9 (d_k terms) and the three pairings of two distinct
    indices (3 d_k (d_k - 1) terms).

    >>> round(variance_standard_error(64, 1000), 4)
    2.9285
    """
    fn = "variance_standard_error"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), as_int(fn, n, "n")
    return math.sqrt((2 * d_k * d_k + 6 * d_k) / n)  # int / int, rounded once


class Median(NamedTuple):
    median: float
    low: float  # [low, high] holds the true median with probability coverage,
    high: float  # whatever the distribution (an order-statistic interval)
    coverage: float


def median_interval(xs: Sequence[float], coverage: float = 0.95) -> Median:
    """Return the median of xs and the interval [x_(l), x_(n+1-l)] of order
    statistics, l the largest with P(l <= B <= n - l) >= coverage for
    B ~ Binomial(n, 1/2), the count below the true median; .coverage gives that
    probability (less when n is too small).

    >>> median_interval(range(1, 101))
    Median(median=50.5, low=40.0, high=61.0, coverage=0.9648)
    """
    fn = "median_interval"
    xs = sorted(as_vector(fn, xs, "xs"))
    coverage = as_real(fn, coverage, "coverage")
    _probability(fn, coverage, "coverage")
    n, (a, b) = len(xs), coverage.as_integer_ratio()
    # From the middle outwards, in exact ints: about 2 sqrt(n) steps.  inside
    # is 2^n P(l <= B <= n - l): the terms C(n, l) at l and n - l (one if
    # they are equal).
    l = max(1, n // 2)
    term = math.comb(n, l)
    inside = term * (2 if n - l > l else n - l == l)
    while l > 1 and inside * b < a << n:
        term, l = term * l // (n - l + 1), l - 1  # C(n, l - 1)
        inside += 2 * term
    covered = round(inside / 2 ** n, 4)
    return Median(statistics.median(xs), xs[l - 1], xs[n - l], covered)


class Quantile(NamedTuple):
    value: float  # the p-quantile of the data, linear between order statistics
    low: float  # [low, high] holds the true p-quantile with probability
    high: float  # coverage, whatever the distribution (order statistics)
    coverage: float


def quantile_interval(xs: Sequence[float], p: float,
                      coverage: float = 0.95) -> Quantile:
    """Return the p-quantile of xs, linear between order statistics
    (statistics.quantiles' "inclusive" method), and its interval [x_(l), x_(u)]
    of order statistics: l the largest and u the smallest rank with
    P(B < l) <= (1 - coverage) / 2 and P(B >= u) <= (1 - coverage) / 2 for
    B ~ Binomial(n, p), the count of draws below the true p-quantile;
    .coverage is P(l <= B <= u - 1) (less than asked when n is too small).
    Shapes: xs of length n, 0 < p < 1 -> Quantile.  An int or a Fraction p is
    exact; a float p is the decimal it prints as (0.1 is 1/10).  The binomial
    is summed exactly (derivations.md section 10, with its cost).

    >>> quantile_interval(range(1, 101), 0.9)
    Quantile(value=90.1, low=84.0, high=96.0, coverage=0.9557)
    """
    fn = "quantile_interval"
    x = sorted(as_vector(fn, xs, "xs"))
    p = _quantile_level(fn, p)
    coverage = as_real(fn, coverage, "coverage")
    _probability(fn, coverage, "coverage")
    return _interval(x, p, Fraction(coverage))


# ------------------------------------------------------------------ simulation

def sample_dot_products(d_k: int, n: int, *, seed: int = 0, scale: float = 1.0,
                        rho: float = 0.0) -> Vector:
    """Return n samples of scale * (q . k), q with independent N(0, 1)
    components and k_i = rho q_i + sqrt(1 - rho^2) z_i
    (corr(q_i, k_i) = rho).  A fresh (q, k) per sample: one q shared by many
    keys k_j would leave the samples q . k_j uncorrelated but not independent,
    since their squares share |q|^2 (at rho = 0, corr((q . k_1)^2,
    (q . k_2)^2) = 1/(d_k + 3)), and the variance's standard error would no
    longer be sqrt((2 d_k^2 + 6 d_k) / n).

    >>> a = sample_dot_products(4, 2, seed=1)
    >>> [round(s, 4) for s in a], a == sample_dot_products(4, 2, seed=1)
    ([-0.3308, -1.3222], True)
    """
    fn = "sample_dot_products"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), as_int(fn, n, "n")
    scale, rho = as_real(fn, scale, "scale"), float(_rho(fn, rho))
    rng, s = _rng(fn, seed), math.sqrt(1.0 - rho * rho)
    samples = []
    for _ in range(n):
        z = _normals(rng, 2 * d_k)  # q, then the independent part of k
        q = z[:d_k]
        k = [rho * a + s * b for a, b in zip(z, z[d_k:])]  # rho 0: z[d_k:]
        samples.append(scale * dot(q, k))
    return samples


def layer_norm(x: Sequence[float]) -> Vector:
    """Return (x - x_bar) / sigma with sigma^2 = Var(x) (ddof 0): a vector of
    mean 0 and mean square 1 over its own entries (no gain, no bias).  Shapes:
    n >= 2 -> n.

    >>> layer_norm([1.0, 3.0]), layer_norm([1e16, 1e16 + 2])
    ([-1.0, 1.0], [-1.0, 1.0])
    """
    x = as_vector("layer_norm", x)
    e = math.frexp(max(map(abs, x)))[1]  # x 2^-e is exact, its squares normal
    d = _centred([math.ldexp(v, -e) for v in x])
    sigma = math.sqrt(math.fsum(v * v for v in d) / len(d))
    _not_constant(sigma, x)
    return [v / sigma for v in d]


def sample_projected_dot_products(d_k: int, n: int, *, d_model: int = 64,
                                  seed: int = 0) -> Vector:
    """Return n samples of q . k with q = x W_Q, k = x W_K as at
    initialisation: x is layer_norm of d_model N(0, 1) draws, W_Q and W_K fresh
    d_model x d_k matrices of N(0, 1/d_model) entries.  Given x, q_c = x .
    W_Q[:, c] is N(0, |x|^2 / d_model) = N(0, 1), independent of k: the
    assumptions hold, and Var(q . k) = d_k again.

    >>> samples = sample_projected_dot_products(4, 3, d_model=8, seed=0)
    >>> [round(s, 4) for s in samples]
    [-5.9809, 0.7394, 1.8784]
    """
    fn = "sample_projected_dot_products"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), as_int(fn, n, "n")
    d_model, rng = as_int(fn, d_model, "d_model", minimum=2), _rng(fn, seed)
    samples = []
    for _ in range(n):
        z = _normals(rng, d_model * (1 + 2 * d_k))  # x, W_Q's columns, W_K's
        x, sigma = layer_norm(z[:d_model]), 1.0 / math.sqrt(d_model)
        columns = [z[t:t + d_model] for t in range(d_model, len(z), d_model)]
        q = [dot(x, w) * sigma for w in columns[:d_k]]
        k = [dot(x, w) * sigma for w in columns[d_k:]]
        samples.append(dot(q, k))
    return samples


class ScoreVariance(NamedTuple):
    variance: float  # the estimate of Var(e): (1/n) sum e^2, since E[e] = 0
    standard_error: float  # sqrt(((1/n) sum e^4 - variance^2) / n)


def additive_score_variance(d_a: int, n: int = 1000, *, d: int = 64,
                            sigma_w: float = 1.0,
                            seed: int = 0) -> ScoreVariance:
    """Return Var(e) = sigma_w^2 d_a E[tanh(u)^2], simulated, for additive
    attention's score e = w_v . tanh(W_q q + W_k k) at initialisation: q, k
    with d N(0, 1) entries, W_q, W_k (d_a x d) N(0, 1/d), w_v
    N(0, sigma_w^2).  Given q and k the d_a pre-activations u are independent
    N(0, (|q|^2 + |k|^2) / d), so they are drawn directly.  tanh bounds each
    unit, not their sum: with sigma_w = 1, Var(e) grows like d_a; with 1/d_a,
    it stays < 1.

    >>> [round(additive_score_variance(d_a, d=16).variance, 1)
    ...  for d_a in (16, 64)]
    [8.3, 32.2]
    >>> round(additive_score_variance(64, d=16, sigma_w=1 / 8).variance, 2)
    0.5
    """
    fn = "additive_score_variance"
    d_a = as_int(fn, d_a, "d_a", maximum=MAX_EXACT)
    n = as_int(fn, n, "n", maximum=MAX_EXACT)
    d = as_int(fn, d, "d", maximum=MAX_EXACT)
    sigma_w, rng = as_real(fn, sigma_w, "sigma_w"), _rng(fn, seed)
    squares = []
    # The same draws for every sigma_w: e = sigma_w w . tanh(u).
    for _ in range(n):
        z = _normals(rng, 2 * d + 2 * d_a)  # q and k, the pre-activations, w
        q_and_k = z[:2 * d]
        spread = math.sqrt(math.fsum(v * v for v in q_and_k) / d)
        units = [math.tanh(spread * v) for v in z[2 * d:2 * d + d_a]]
        squares.append(dot(z[2 * d + d_a:], units) ** 2)
    v = math.fsum(squares) / n
    se = math.sqrt(max(0.0, math.fsum(s * s for s in squares) / n - v * v) / n)
    return ScoreVariance(sigma_w * sigma_w * v, sigma_w * sigma_w * se)


# ------------------------------------------------- saturation and the gradient

def softmax_entropy(x: Sequence[float]) -> float:
    """Return H(p) = -sum_i p_i log p_i in nats for p = softmax(x) (0 log
    0 = 0): ln m for uniform weights over m keys, 0 for one-hot.

    >>> round(softmax_entropy([0.0] * 16), 12) == round(math.log(16), 12)
    True
    >>> softmax_entropy([0.0, -1e4]), round(softmax_entropy([1.0, 0.0]), 6)
    (0.0, 0.582203)
    """
    fn = "softmax_entropy"
    x = in_log_range(fn, x)  # log_softmax's rules, in this name
    return _entropy(x, softmax(x))


class Saturation(NamedTuple):  # means over rows; standard errors s / sqrt(n)
    max_weight: Tuple[float, float]  # max_j p_j
    entropy: Tuple[float, float]  # H(p), nats
    jacobian_norm: Tuple[float, float]  # ||diag(p) - p p^T||_F


class GradientNorms(NamedTuple):
    """Medians over the rows, with 95% order-statistic intervals, and the means
    with their standard errors (the mean feels the rare rows whose top two
    logits nearly tie)."""
    score_grad: Median  # ||dL/dS||, S the logits
    query_grad: Median  # ||dL/dQ||
    score_grad_mean: Tuple[float, float]
    query_grad_mean: Tuple[float, float]


class GradientSpread(NamedTuple):
    """How ||dL/dS|| and ||dL/dQ|| spread over the rows: their quantiles at
    PERCENTILES, each with its 95% order-statistic interval, and the share of
    their sum over the rows that the top TOP_PERCENTS of rows (those with the
    largest norms) carry, each with its standard error."""
    score_quantiles: Tuple[Quantile, ...]  # ||dL/dS|| at 10%, 50%, 90%, 99%
    query_quantiles: Tuple[Quantile, ...]  # ||dL/dQ|| at 10%, 50%, 90%, 99%
    score_top_shares: Tuple[Tuple[float, float], ...]  # (share, se): 1%, 10%
    query_top_shares: Tuple[Tuple[float, float], ...]  # of sum_i ||dL/dQ_i||


def _mean_se(xs: Vector) -> Tuple[float, float]:
    return math.fsum(xs) / len(xs), math.sqrt(_variance(xs, 1) / len(xs))


def _saturation(rows: Sequence[_Row], c: float) -> Saturation:
    S = [[c * s for s in row.scores] for row in rows]
    P = [softmax(S_i) for S_i in S]
    return Saturation(_mean_se([max(p) for p in P]),
                      _mean_se([_entropy(S_i, p) for S_i, p in zip(S, P)]),
                      _mean_se([_jacobian_norm(p) for p in P]))


def _gradients(score: Vector, query: Vector) -> GradientNorms:
    return GradientNorms(median_interval(score), median_interval(query),
                         _mean_se(score), _mean_se(query))


def _interval(x: Vector, p: Fraction, coverage: Fraction) -> Quantile:
    """The p-quantile of the sorted x and its order-statistic interval."""
    l, u, covered = _order_ranks(len(x), p, coverage)
    return Quantile(_quantile(x, p), x[l - 1], x[u - 1], round(covered, 4))


def _quantiles(xs: Vector) -> Tuple[Quantile, ...]:
    """xs at PERCENTILES, each with its 95% interval."""
    x = sorted(xs)
    return tuple(_interval(x, Fraction(t, 100), Fraction(0.95))
                 for t in PERCENTILES)


def _top_shares(xs: Vector) -> Tuple[Tuple[float, float], ...]:
    """The share of sum_i x_i that the top t% of the x_i carry, and its
    standard error, for t in TOP_PERCENTS."""
    ranked = sorted(xs, reverse=True)
    return tuple(_top_share(ranked, t) for t in TOP_PERCENTS)


def _spread(fn: str, score: Vector, query: Vector) -> GradientSpread:
    """The quantiles and top shares of the rows' norms; refused when every norm
    is 0, so that no row has a share of their sum."""
    _some_gradient(fn, score)
    return GradientSpread(_quantiles(score), _quantiles(query),
                          _top_shares(score), _top_shares(query))


def saturation_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                     trials: int = TRIALS, seed: int = 0) -> Saturation:
    """Return the mean (and standard error) of the largest weight, the entropy
    and the Jacobian norm of p = softmax(c q . k_j) over `trials` rows of m
    keys at initialisation (q, k_j with independent N(0, 1) components;
    c = scale_factor(scale_name, d_k)).  Uniform weights would give max
    p = 1/m, H = ln m and ||J||_F = sqrt(1/m - 1/m^2).

    >>> [round(v[0], 4) for v in saturation_stats(64, "1", trials=20)]
    [0.8965, 0.2827, 0.1186]
    >>> [round(v[0], 4) for v in saturation_stats(64, trials=20)]
    [0.292, 2.273, 0.3132]
    """
    fn = "saturation_stats"
    c = _factor(fn, scale_name, d_k)
    d_k, m, trials, rng = _row_arguments(fn, d_k, m, trials, seed)
    return _saturation(_rows(d_k, m, trials, rng), c)


def gradient_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                   trials: int = TRIALS, seed: int = 0) -> GradientNorms:
    """Return the median and mean of ||dL/dS|| and ||dL/dQ|| over `trials` rows
    at initialisation, with an upstream gradient G ~ N(0, I): dS = the softmax
    backward of dP = G V^T (score_gradient), dQ = c dS K
    (attention_backward's), c = scale_factor.

    >>> g = gradient_stats(64, "1", trials=20), gradient_stats(64, trials=20)
    >>> [round(norms.score_grad.median, 4) for norms in g]
    [0.0177, 0.672]
    """
    fn = "gradient_stats"
    c = _factor(fn, scale_name, d_k)
    d_k, m, trials, rng = _row_arguments(fn, d_k, m, trials, seed)
    score, query = _gradient_norms(_rows(d_k, m, trials, rng), c)
    return _gradients(score, query)


def gradient_spread(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                    trials: int = TRIALS, seed: int = 0) -> GradientSpread:
    """Return how ||dL/dS|| and ||dL/dQ|| spread over the rows of
    gradient_stats: their quantiles at PERCENTILES (10%, 50%, 90%, 99%), each
    with its 95% order-statistic interval (as quantile_interval), and the share
    of sum_i ||dL/dS_i|| and of sum_i ||dL/dQ_i|| that the top 1% and 10% of
    rows carry (ceil(trials t / 100) rows for t in TOP_PERCENTS), each with its
    standard error (the delta method).  Unscaled at large d_k, the typical
    (median) row passes almost nothing and a few rows carry most of the sum.

    >>> g = gradient_spread(1024, "1", trials=200)
    >>> [format_interval(q) for q in g.query_quantiles[1:3]]
    ['0.00023 [1.1e-05, 0.0053]', '14 [6.2, 24]']
    >>> [format_estimate(100 * T, 100 * se) for T, se in g.query_top_shares]
    [('21.7', '4.2'), ('84.5', '4.4')]
    """
    fn = "gradient_spread"
    c = _factor(fn, scale_name, d_k)
    d_k, m, trials, rng = _row_arguments(fn, d_k, m, trials, seed)
    score, query = _gradient_norms(_rows(d_k, m, trials, rng), c)
    return _spread(fn, score, query)


# ------------------------------------------------------------------ the report

class Report(NamedTuple):  # the numbers of `python3 stats.py` and the figures
    seed: int
    samples: int  # (q, k) pairs per d_k
    trials: int  # attention rows per d_k
    keys: int  # m, keys per row
    dks: Tuple[int, ...]
    variance: Dict[int, Tuple[float, float]]  # d_k -> mean (q . k)^2, error
    projection: Tuple[int, int, float, float]  # d_model, d_k, as variance
    saturation: Dict[Tuple[int, str], Saturation]  # (d_k, one of ARMS)
    gradients: Dict[Tuple[int, str], GradientNorms]  # (d_k, one of ARMS)
    spread: Dict[Tuple[int, str], GradientSpread]  # the same rows, in full


ARMS = ("1", "1/sqrt(d_k)")  # unscaled, and the paper's scale


def report(seed: int = 0, samples: int = 1000, trials: int = TRIALS,
           keys: int = 16,
           dks: Sequence[int] = (16, 64, 128, 512, 1024)) -> Report:
    """Return every number of the report: per d_k, the variance of q . k over
    `samples` pairs, and the saturation and the gradients over the same
    `trials` rows of `keys` keys unscaled and scaled (seeds seed + d_k); and
    the projection setting (d_model 32, d_k 16).  format_report(report()) is
    the report's text.

    >>> r = report(samples=10, trials=4, dks=(16,))
    >>> round(r.variance[16][0], 2), round(r.saturation[16, "1"][0][0], 4)
    (8.85, 0.6054)
    """
    fn = "report"
    seed = as_int(fn, seed, "seed", 0, 2 ** 64 - 1)
    samples = as_int(fn, samples, "samples")
    keys = as_int(fn, keys, "keys", minimum=2)
    trials = as_int(fn, trials, "trials", minimum=2)
    dks = _dks(fn, dks)
    variance, saturation, gradients, spread = {}, {}, {}, {}
    for d_k in dks:  # each d_k draws from generators of its own
        draws = sample_dot_products(d_k, samples, seed=seed + d_k)
        mean_square = math.fsum(x * x for x in draws) / samples  # E[q . k] = 0
        variance[d_k] = (mean_square, variance_standard_error(d_k, samples))
        rows = _rows(d_k, keys, trials, random.Random(seed + d_k))
        for name in ARMS:
            c = scale_factor(name, d_k)
            score, query = _gradient_norms(rows, c)
            saturation[d_k, name] = _saturation(rows, c)
            gradients[d_k, name] = _gradients(score, query)
            spread[d_k, name] = _spread(fn, score, query)
    d_model, d_k = 32, 16  # as many pairs as section 1 has per d_k
    projected = sample_projected_dot_products(d_k, samples, d_model=d_model,
                                              seed=seed)
    projection = (d_model, d_k, math.fsum(x * x for x in projected) / samples,
                  variance_standard_error(d_k, samples))
    return Report(seed, samples, trials, keys, dks, variance, projection,
                  saturation, gradients, spread)


def format_estimate(value: float, se: float) -> Tuple[str, str]:
    """Return (value, se) as texts: se to two significant digits, and value to
    the same decimal place (none once se reaches 10), as the report and the
    docs print a mean with its standard error.

    >>> format_estimate(1026.2, 45.9), format_estimate(0.94412, 0.04869)
    (('1026', '46'), ('0.944', '0.049'))
    >>> format_estimate(2.5, 0.0996)  # se rounds up to 0.10: two digits
    ('2.50', '0.10')
    """
    fn = "format_estimate"
    value = as_real(fn, value, "value", limit=sys.float_info.max)
    se = as_real(fn, se, "se", limit=sys.float_info.max)
    _positive(fn, se, "se")
    exponent = int(f"{se:.1e}".split("e")[1])  # of se rounded to two digits
    places = max(0, 1 - exponent)
    return f"{value:.{places}f}", f"{se:.{places}f}"


def format_interval(interval: Union[Median, Quantile]) -> str:
    """Return "m [low, high]" for a Median or a Quantile, each number to two
    significant digits.

    >>> format_interval(median_interval(range(1, 101)))
    '50 [40, 61]'
    """
    fn = "format_interval"
    if not isinstance(interval, (Median, Quantile)):
        raise TypeError(
            f"{fn}: interval must be a Median or a Quantile (from "
            f"median_interval or quantile_interval), not {shown(interval)}")
    m, low, high = (as_real(fn, v, f"interval.{name}",
                            limit=sys.float_info.max)
                    for v, name in zip(interval[:3], interval._fields))
    return f"{m:.2g} [{low:.2g}, {high:.2g}]"


def format_report(r: Report) -> str:
    """Return the text `python3 stats.py` prints for a Report (without the
    final newline): sections 1 to 6 and the spread of the gradient, in at most
    79 columns.

    >>> format_report(report(samples=10, trials=4, dks=(16,))).splitlines()[-1]
    '   d_k=16 |###########'
    """
    if not isinstance(r, Report):
        raise TypeError("format_report: r must be a Report (from report()), "
                        f"not {shown(r)}")
    lines = _text(_TITLE, seed=r.seed)
    for section in (_section_variance, _section_scales, _section_saturation,
                    _sections_gradient, _section_spread, _section_pictures):
        lines += section(r)
    return "\n".join(lines)


# The report's fixed text, as printed (_text drops the newline after the
# quotes).
_TITLE = """
The sqrt(d_k) of softmax(Q K^T / sqrt(d_k)) V, in numbers
At initialisation: q, k, V and the upstream gradient G with independent
N(0, 1) entries.  Simulated numbers carry a standard error or an interval.
Seed {seed}."""

_SCALES_NOTE = """
   Only 1/sqrt(d_k) keeps it at 1 for every d_k.  1/d_k (muP's choice) keeps
   the mean logit O(1) at a fixed correlation rho between q and k, where
   E[q . k] = rho d_k (docs/derivations.md section 7)."""

_GRADIENT_NOTE = """
   Unscaled, the typical gradient collapses as d_k grows.  dQ = c dS K keeps
   a factor ||k|| ~ sqrt(d_k) that c = 1/sqrt(d_k) cancels, so at small d_k
   dQ can look larger unscaled even though dS has already fallen."""

_SPREAD_NOTE = """
   Unscaled, the typical (median) row's gradient vanishes as d_k grows, and
   the sum over the rows gathers in ever fewer of them.  The mean of
   ||dL/dS|| falls too, more slowly, like d_k^(-1/2) from d_k = 1024 on; the
   mean of ||dL/dQ|| does not fall, since dQ = c dS K gains a factor
   ||k|| ~ sqrt(d_k) unscaled.  Below, over the {trials} rows of each d_k:
   quantiles with their 95% order-statistic intervals (the median's are in
   sections 4 and 5); the share of the summed norms that the top 1% and top
   10% of rows carry, in percent, and the mean, each +- one standard error."""


def _text(block: str, **values) -> List[str]:
    """The lines of a block of fixed text, its {fields} filled in."""
    return block.format(**values).split("\n")[1:]


def _header(title: str) -> List[str]:
    return ["", title, "-" * len(title)]


def _section_variance(r: Report) -> List[str]:
    lines = _header("1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)")
    lines += [f"   {r.samples} fresh (q, k) pairs per d_k; +- one standard "
              "error", "   sqrt((2 d_k^2 + 6 d_k) / n)",
              f"{'d_k':>7} {'Var(q . k)':>17} {'Var(q . k / sqrt(d_k))':>25}"]
    for d_k, (v, e) in r.variance.items():  # e the standard error
        v_text, e_text = format_estimate(v, e)
        scaled, scaled_e = format_estimate(v / d_k, e / d_k)
        lines.append(f"{d_k:>7} {v_text:>9} +- {e_text:<5} "
                     f"{scaled:>14} +- {scaled_e}")
    d_model, d_k, v, se = r.projection
    v_text, e_text = format_estimate(v, se)
    return lines + [f"   With q = LN(x) W_Q, k = LN(x) W_K (d_model "
                    f"{d_model}, W entries N(0, 1/{d_model})):",
                    f"   Var(q . k) at d_k = {d_k}: {v_text} +- {e_text}"]


def _section_scales(r: Report) -> List[str]:
    lines = _header("2. Var(c q . k) = d_k c^2 for each scale c, at "
                    "initialisation")
    lines.append(f"{'d_k':>7}" + "".join(f"{c:>13}" for c in SCALE_CHOICES))
    for d_k in r.dks:
        cells = [f"{d_k * scale_factor(c, d_k) ** 2:>13.4g}"
                 for c in SCALE_CHOICES]
        lines.append(f"{d_k:>7}" + "".join(cells))
    return lines + _text(_SCALES_NOTE)


def _section_saturation(r: Report) -> List[str]:
    lines = _header(f"3. Saturation over m = {r.keys} keys, {r.trials} rows "
                    "per d_k")
    worst = [max(getattr(s, f)[1] for s in r.saturation.values())
             for f in Saturation._fields]
    columns = f"{'max p':>9}{'entropy':>9}{'||J||_F':>9}"
    arms = f"{'':>7} {'unscaled (c = 1)':^30}|{'scaled (c = 1/sqrt(d_k))':^30}"
    lines += ["   means; standard errors up to {:.2g}, {:.2g} and {:.2g}, "
              "column by column".format(*worst),
              f"   uniform weights give max p = {1 / r.keys:.4f} and entropy "
              f"ln {r.keys} = {math.log(r.keys):.3f}",
              arms.rstrip(), f"{'d_k':>7}" + "   |".join([columns] * 2)]
    for d_k in r.dks:
        cells = ["".join(f"{mean:>9.3f}" for mean, _ in r.saturation[d_k, arm])
                 for arm in ARMS]
        lines.append(f"{d_k:>7}" + "   |".join(cells))
    return lines


def _sections_gradient(r: Report) -> List[str]:
    lines = []
    for title, field in (
            ("4. The gradient reaching the logits, ||dL/dS||", "score_grad"),
            ("5. The gradient reaching the queries, ||dL/dQ|| = ||c dS K||",
             "query_grad")):
        lines += _header(title)
        lines.append(f"{'d_k':>7}   {'median [95% interval], c = 1':<30}"
                     "median [95% interval], c = 1/sqrt(d_k)")
        for d_k in r.dks:
            cells = [format_interval(getattr(r.gradients[d_k, name], field))
                     for name in ARMS]
            lines.append(f"{d_k:>7}   {cells[0]:<30}{cells[1]}")
    return lines + _text(_GRADIENT_NOTE)


_SPREAD_PRINTED = (10, 90, 99)  # of PERCENTILES; the median: sections 4, 5


def _section_spread(r: Report) -> List[str]:
    lines = _header("The gradient over all the rows (sections 4 and 5 in "
                    "full)")
    lines += _text(_SPREAD_NOTE, trials=r.trials)
    for label, field in (("||dL/dS||", "score"), ("||dL/dQ||", "query")):
        lines.append(f"   {label}")
        for head, cells in _spread_tables(r, field):
            lines += _arms_table(r.dks, head, cells)
    return lines


def _spread_tables(r: Report, field: str) -> List[Tuple[str, Dict]]:
    """(head, {(d_k, arm): text}) of each table of one norm: its quantiles
    [95% interval], the top rows' shares in % and its mean, each +- se."""
    quantiles = {key: getattr(s, f"{field}_quantiles")
                 for key, s in r.spread.items()}
    shares = {key: getattr(s, f"{field}_top_shares")
              for key, s in r.spread.items()}
    means = {key: getattr(g, f"{field}_grad_mean")
             for key, g in r.gradients.items()}
    tables = []
    for p in _SPREAD_PRINTED:
        at = PERCENTILES.index(p)
        tables.append((f"{p}% [95% interval]", {
            key: format_interval(q[at]) for key, q in quantiles.items()}))
    for at, t in enumerate(TOP_PERCENTS):
        tables.append((f"top {t}% share (%)", {
            key: _plus_minus(100 * v[at][0], 100 * v[at][1])
            for key, v in shares.items()}))
    return tables + [("mean", {key: _plus_minus(*v)
                               for key, v in means.items()})]


def _arms_table(dks: Sequence[int], head: str,
                cells: Dict[Tuple[int, str], str]) -> List[str]:
    """A table laid out as sections 4 and 5: d_k, unscaled, scaled."""
    lines = [f"{'d_k':>7}   {f'{head}, c = 1':<30}{head}, c = 1/sqrt(d_k)"]
    for d_k in dks:
        unscaled, scaled = (cells[d_k, name] for name in ARMS)
        lines.append(f"{d_k:>7}   {unscaled:<30}{scaled}")
    return lines


def _plus_minus(value: float, se: float) -> str:
    """The text "value +- se", by format_estimate's rule."""
    return " +- ".join(format_estimate(value, se))


def _section_pictures(r: Report) -> List[str]:
    lines = _header("6. Pictures")
    for title, x in (("softmax([2, 1, 0, -1])", [2.0, 1.0, 0.0, -1.0]),
                     ("softmax([20, 10, 0, -10]): the same logits times 10",
                      [20.0, 10.0, 0.0, -10.0])):
        p = softmax(x)
        bars = [(f"p_{i + 1}", p_i, f"{p_i:.4g}") for i, p_i in enumerate(p)]
        lines += [f"   {title}"] + _bars(bars, 1.0)
        J = softmax_jacobian(x)
        diagonal = ", ".join(f"{row[i]:.3g}" for i, row in enumerate(J))
        lines.append(f"   Jacobian diagonal p_i (1 - p_i): [{diagonal}]")
    # the values are section 1's: only the bars here
    bars = [(f"d_k={d_k}", v, "") for d_k, (v, _) in r.variance.items()]
    lines += ["   simulated Var(q . k): grows like d_k"]
    lines += _bars(bars, max(v for _, v, _ in bars))
    lines.append("   simulated Var(q . k / sqrt(d_k)): level at 1 (bars from "
                 "0 to 2)")
    scaled = [(label, v / d_k, "") for (label, v, _), d_k in zip(bars, r.dks)]
    return lines + _bars(scaled, 2.0)


def _bars(rows: Sequence[Tuple[str, float, str]], top: float,
          width: int = 40) -> List[str]:
    label_width = max(len(label) for label, _, _ in rows)
    lines = []
    for label, value, text in rows:
        bar = "#" * round(width * value / top)
        line = f"   {label:>{label_width}} |{bar:<{width}} {text}"
        lines.append(line.rstrip())
    return lines


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Return the exit status 0 after printing format_report(report(...)) for
    the options in argv (sys.argv[1:] if None).

    A bad option, or a run of more than WORK draws, is one line on stderr and
    SystemExit with status 2; Ctrl-C is one line and status 130; an argv that
    is not a list of str is a TypeError.
    """
    parser = _Parser(
        prog="python3 stats.py",
        description="The variance argument for sqrt(d_k), in numbers; the "
                    "same on Python 3.9 to 3.13.")
    for flag, kind, default, what in (
            ("--seed", int, 0, "the seed"),
            ("--samples", int, 1000, "(q, k) pairs per d_k"),
            ("--trials", int, TRIALS,
             "attention rows per d_k, sections 3 to 5"),
            ("--keys", int, 16, "keys per row"),
            ("--dk", str, "16,64,128,512,1024",
             "d_k values, comma-separated")):
        parser.add_argument(flag, type=kind, default=default,
                            help=f"{what} (default {default})")
    args = parser.parse_args(_argv(argv))
    dks = _options(parser, args)
    try:
        r = report(args.seed, args.samples, args.trials, args.keys, dks)
        print(format_report(r), flush=True)
    except KeyboardInterrupt:  # Ctrl-C: nothing is printed before the end
        print("python3 stats.py: interrupted", file=sys.stderr)
        return 130
    return 0


def _run_command_line() -> int:
    """main(), quiet when the reader of the report closes the pipe (`| head
    -1`)."""
    try:
        return main()
    except BrokenPipeError:
        # Python's signal docs: point stdout at devnull, so that the flush at
        # exit of whatever is still buffered cannot fail again and print a
        # traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


# ------------------------------------------------------------------ the checks
# Beyond the policy of softmax.py: exact numbers kept exact, variances,
# correlations, probabilities, distributions, seeds, and the options of the
# command line.

def _number(fn: str, value, what: str, variance: bool = False):
    """value checked by the policy, kept exact if it is an int or a Fraction,
    else a float; variance=True: it may not be negative."""
    x = as_real(fn, value, what)
    if variance and x < 0:
        raise ValueError(
            f"{fn}: {what} is {shown(value)}; a variance cannot be negative")
    return value if type(value) in Exact else x


def _factor(fn: str, name: str, d_k: int) -> float:
    """scale_factor(name, d_k), its arguments checked in the name of fn."""
    if not isinstance(name, str):
        raise TypeError(f"{fn}: the scale must be one of {SCALE_CHOICES}, not "
                        f"{shown(name)}")
    if name not in SCALE_CHOICES:
        raise ValueError(
            f"{fn}: the scale must be one of {SCALE_CHOICES}, not "
            f"{shown(name)}")
    minimum = 2 if name == "1/ln(d_k)" else 1  # ln 1 = 0
    return _FACTORS[name](as_int(fn, d_k, "d_k", minimum, maximum=MAX_EXACT))


def _rho(fn: str, rho: float) -> float:
    """A correlation: a real number in [-1, 1], exact if it is an int or a
    Fraction."""
    rho = _number(fn, rho, "rho")
    if not -1 <= rho <= 1:
        raise ValueError(
            f"{fn}: rho is {shown(rho)}; a correlation lies in [-1, 1]")
    return rho


def _numbers(fn: str, xs, what: str) -> list:
    """xs checked entry by entry as by _number (ints and Fractions kept, the
    rest floats), each entry named by its index when refused."""
    return [_number(fn, x, f"{what}[{i}]")
            for i, x in enumerate(as_list(fn, xs, what))]


def _distribution(fn: str, values: list, probabilities: list) -> None:
    """One probability per value, none negative, summing to exactly 1: as the
    caller wrote them, then exactly (0.3 + 0.7 is 1.0 only after rounding)."""
    if len(probabilities) != len(values):
        raise ValueError(
            f"{fn}: probabilities has length {len(probabilities)} but values "
            f"has length {len(values)}; each value needs its probability")
    if min(probabilities) < 0:
        i = probabilities.index(min(probabilities))
        raise ValueError(
            f"{fn}: probabilities[{i}] is {shown(probabilities[i])}; a "
            "probability cannot be negative")
    written = _written_sum(probabilities)
    if written != 1:
        raise ValueError(
            f"{fn}: the probabilities sum to {shown(written)}, not 1")
    if sum(map(Fraction, probabilities)) != 1:
        raise ValueError(
            f"{fn}: the probabilities sum to 1 only once rounded to a float; "
            "a float such as 0.1 is a binary fraction near 1/10, not 1/10, "
            "and their exact sum is not 1: pass Fractions such as "
            "Fraction(1, 10)")


def _written_sum(xs: list):
    """sum(xs) as the caller's numbers give it: exact for ints and Fractions,
    else the float nearest the exact sum (0.5 + 0.6 is 1.1, on every
    Python)."""
    if any(isinstance(x, float) for x in xs):
        return float(sum(map(Fraction, xs)))
    return sum(xs)


def _probability(fn: str, p: float, what: str) -> None:
    if not 0 < p < 1:
        raise ValueError(
            f"{fn}: {what} is {p!r}; it must lie strictly between 0 and 1")


def _quantile_level(fn: str, p) -> Fraction:
    """p, strictly between 0 and 1, as an exact Fraction: a float as the
    decimal it prints as (0.1 is 1/10, not the binary float just above it)."""
    p = _number(fn, p, "p")
    _probability(fn, p, "p")
    return Fraction(repr(p)) if isinstance(p, float) else Fraction(p)


def _positive(fn: str, x: float, what: str) -> None:
    if not x > 0:
        raise ValueError(
            f"{fn}: {what} is {x!r}; a standard error must be positive")


def _enough_points(xs: Vector, ddof: int) -> None:
    if len(xs) <= ddof:
        raise ValueError(
            f"variance: needs at least {ddof + 1} data points with "
            f"ddof={ddof}; got {len(xs)}")


def _not_constant(sigma: float, x: Vector) -> None:
    if sigma == 0.0:
        raise ValueError(
            f"layer_norm: every entry of x is {x[0]!r}, so the variance is 0 "
            "and (x - x_bar) / sigma is undefined")


def _rng(fn: str, seed) -> random.Random:
    """A generator from an explicit int seed, or the random.Random given."""
    if isinstance(seed, random.Random):
        return seed
    try:
        seed = as_int(fn, seed, "seed", minimum=-2 ** 64)
    except TypeError:  # neither kind: the message names both
        raise TypeError(f"{fn}: seed must be an int or a random.Random, not "
                        f"{shown(seed)}") from None
    return random.Random(seed)


def _row_arguments(fn: str, d_k: int, m: int, trials: int, seed):
    """(d_k, m, trials, generator) of the attention rows, checked."""
    d_k = as_int(fn, d_k, "d_k", maximum=MAX_EXACT)
    m = as_int(fn, m, "m", minimum=2)
    trials = as_int(fn, trials, "trials", minimum=2)
    return d_k, m, trials, _rng(fn, seed)


def _some_gradient(fn: str, score: Vector) -> None:
    """The rows' gradients sum to more than 0, so that each has a share of the
    sum: not when every row is exactly one-hot (d_k in the billions,
    unscaled)."""
    if max(score) == 0.0:
        raise ValueError(
            f"{fn}: every row's weights are exactly one-hot at this d_k and "
            "scale, so every gradient is 0 and no row has a share of their "
            "sum")


def _dks(fn: str, dks) -> Tuple[int, ...]:
    """The d_k of the report: ints from 2 to MAX_EXACT, each once."""
    dks = tuple(as_int(fn, d, "d_k", 2, MAX_EXACT)
                for d in as_list(fn, dks, "dks"))
    if len(set(dks)) < len(dks):
        raise ValueError(
            f"{fn}: dks = {list(dks)} repeats a d_k; give each once")
    return dks


def _argv(argv) -> Optional[List[str]]:
    """main's argv: None (the command line's) or a list of str."""
    if argv is None:
        return None
    if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence):
        raise TypeError(
            f"main: argv must be a list of str or None, not {shown(argv)}")
    for i, arg in enumerate(argv):
        if not isinstance(arg, str):
            raise TypeError(f"main: argv[{i}] is {shown(arg)}, not a str")
    return list(argv)


def _options(parser: argparse.ArgumentParser, args) -> List[int]:
    """The d_k of --dk, once every option is checked: a bad one is a usage
    error that names the flag the user typed."""
    for flag, value, least in (("--samples", args.samples, 1),
                               ("--trials", args.trials, 2),
                               ("--keys", args.keys, 2)):
        if value < least:
            parser.error(f"{flag} must be at least {least}, not {value}")
    if not 0 <= args.seed < 2 ** 64:
        parser.error(f"--seed must be from 0 to 2**64 - 1, not {args.seed}")
    dks = [_dk_option(parser, part) for part in args.dk.split(",")]
    if len(set(dks)) < len(dks):
        parser.error(f"--dk {args.dk} repeats a d_k; give each once")
    _within_work(parser, args.samples, args.trials, args.keys, dks)
    return dks


def _dk_option(parser: argparse.ArgumentParser, part: str) -> int:
    """One d_k of --dk: a whole number, at least 2 (the work bound keeps it
    far below 2^53)."""
    try:
        d_k = int(part)
    except ValueError:
        parser.error(f"--dk: each d_k must be a whole number, not {part!r}")
    if d_k < 2:
        parser.error(f"--dk: each d_k must be at least 2, not {d_k}")
    return d_k


def _within_work(parser: argparse.ArgumentParser, samples: int, trials: int,
                 keys: int, dks: List[int]) -> None:
    work = samples * sum(dks) + trials * keys * len(dks)
    if work > WORK:
        parser.error(
            f"--samples, --trials, --keys and --dk ask for about {work:.1e} "
            f"draws; keep them under {WORK:.0e}, about a minute")


if __name__ == "__main__":
    sys.exit(_run_command_line())
