"""The variance argument for the sqrt(d_k) of attention, in numbers you can reproduce.

At initialisation, with q and k of independent components of mean 0 and variance 1,
Var(q . k) = d_k: unscaled logits spread like sqrt(d_k), softmax saturates, its Jacobian
shrinks and the gradient to Q and K vanishes; 1/sqrt(d_k) brings the variance back to 1.
At a fixed correlation rho between q's and k's components (training builds one),
E[q . k] = rho d_k: muP's reason for 1/d_k.  `python3 stats.py` prints each link of the
argument; docs/derivations.md derives each formula.

Public API (`__all__`):

    mean(xs), variance(xs, ddof=0)          x_bar; the two-pass variance
    product_variance(mx, vx, my, vy)        Var(XY) for independent X, Y
    dot_product_variance(d_k, ...)          Var(q . k) = d_k Var(q_i k_i)
    scaled_variance(var, c)                 Var(c X) = c^2 Var(X)
    SCALE_CHOICES, scale_factor(name, d_k)  1, 1/sqrt(d_k), 1/d_k, 1/ln(d_k)
    Moments, exact_dot_product_moments(d_k, values, probabilities)   exact, in Fractions
    correlated_dot_product_moments(d_k, rho)    E = rho d_k, Var = d_k (1 + rho^2)
    correlated_logits(d_k, rho, scale_name, m)  the matched key's logit and weight
    variance_standard_error(d_k, n)         of the simulated Var(q . k)
    Median, median_interval(xs)             a median with its order-statistic interval
    sample_dot_products(d_k, n, seed=, scale=, rho=)   Monte Carlo, N(0, 1) components
    layer_norm(x), sample_projected_dot_products(d_k, n, d_model=, seed=)
    ScoreVariance, additive_score_variance(d_a, n, ...)   Var(w_v . tanh(W_q q + W_k k))
    softmax_entropy(x)                      H(softmax(x)) in nats
    Saturation, saturation_stats(d_k, scale_name, ...)   largest weight, entropy, ||J||_F
    GradientNorms, gradient_stats(d_k, scale_name, ...)  ||dL/dS||, ||dL/dQ||
    Report, report(...), main(argv)         `python3 stats.py` and the numbers it prints

>>> dot_product_variance(64), scaled_variance(dot_product_variance(64), Fraction(1, 8))
(64, Fraction(1, 1))

Exceptions: TypeError for the wrong kind of thing (a string, None, a bool, a float where an
int is needed, a seed that is neither an int nor a random.Random); ValueError for a wrong
value (too few data points, d_k < 1, a negative variance, bad probabilities, NaN, inf or an
entry beyond softmax.LIMIT), naming the function called.  Arguments are never mutated; ints
and Fractions give exact results wherever Python's own arithmetic keeps them exact.
"""

import argparse  # the command line of the main job
import math  # sqrt, log, log1p, exp, fsum, cos, sin, tanh
import os  # devnull, when the reader of the report closes the pipe
import random  # seeded Monte Carlo
import statistics  # median
import sys  # the exit status of the command line
from fractions import Fraction  # exact moments
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from attention import dot
from softmax import (as_int, as_list, as_real, as_vector, log_softmax, softmax,
                     softmax_backward, softmax_jacobian)

__all__ = ["mean", "variance", "product_variance", "dot_product_variance", "scaled_variance",
           "SCALE_CHOICES", "scale_factor", "Moments", "exact_dot_product_moments",
           "correlated_dot_product_moments", "correlated_logits", "variance_standard_error",
           "Median", "median_interval", "sample_dot_products", "layer_norm",
           "sample_projected_dot_products", "ScoreVariance", "additive_score_variance",
           "softmax_entropy", "Saturation", "saturation_stats", "GradientNorms",
           "gradient_stats", "Report", "report", "main"]

Vector = List[float]  # a vector is a list of floats
Exact = (int, Fraction)  # numbers whose arithmetic Python keeps exact
MAX_EXACT = 2 ** 53  # every int up to it is exactly a float: the largest d_k or n taken
D_V = 8  # the width of the values in the saturation and gradient rows
TRIALS = 2000  # attention rows per d_k: enough for a median whose interval is informative
WORK = 10 ** 8  # the command line's one bound: about a minute of draws


# ------------------------------------------------------------ the cores, as derived

def _centred(x: Vector) -> Vector:
    """x_i - x_bar, in two passes: the second removes the error of the rounded x_bar.

    The one-pass E[X^2] - E[X]^2 subtracts two nearly equal numbers when the data sit far
    from 0 and can lose every digit (derivations.md section 2).
    """
    x_bar = math.fsum(x) / len(x)
    d = [v - x_bar for v in x]
    d_bar = math.fsum(d) / len(x)  # 0 in exact arithmetic; in floats, x_bar's rounding error
    return [v - d_bar for v in d]


def _variance(x: Vector, ddof: int) -> float:
    """sum_i (x_i - x_bar)^2 / (n - ddof)."""
    return math.fsum(v * v for v in _centred(x)) / (len(x) - ddof)


def _product_variance(mean_x, var_x, mean_y, var_y):
    """Var(XY) = E[X^2] E[Y^2] - E[X]^2 E[Y]^2 = v_x v_y + m_x^2 v_y + m_y^2 v_x for
    independent X and Y (derivations.md section 2)."""
    return var_x * var_y + mean_x * mean_x * var_y + mean_y * mean_y * var_x


SCALE_CHOICES = ("1", "1/sqrt(d_k)", "1/d_k", "1/ln(d_k)")  # the factors the documents compare
_FACTORS = {"1": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: 1 / math.sqrt(d_k),
            "1/d_k": lambda d_k: 1 / d_k, "1/ln(d_k)": lambda d_k: 1 / math.log(d_k)}


def _moments(d_k: int, values: List[Fraction], probabilities: List[Fraction]):
    """E[q . k] = d_k mu^2 and Var(q . k) = d_k (s^2 - mu^4), mu = E[X], s = E[X^2], for
    q_i, k_i all drawn independently from one distribution (derivations.md section 2)."""
    mu = sum(p * v for v, p in zip(values, probabilities))
    s = sum(p * v * v for v, p in zip(values, probabilities))
    return Moments(d_k * mu * mu, d_k * (s * s - mu ** 4))


def _entropy(x: Vector, p: Vector) -> float:
    """H(p) = -sum_i p_i log p_i for p = softmax(x), with log p_i from log_softmax (accurate
    near p_i = 1, where log(p_i) would round to 0)."""
    terms = [p_i * lp_i for p_i, lp_i in zip(p, log_softmax(x)) if p_i > 0.0]
    return max(0.0, -math.fsum(terms))  # H >= 0; rounding may leave -0.0 or -tiny


def _jacobian_norm(p: Vector) -> float:
    """||J||_F for J = diag(p) - p p^T in O(m): ||J||_F^2 = sum_i p_i^2 (1 - p_i)^2 +
    sum_i p_i^2 (T - p_i^2), T = sum_j p_j^2.  For the largest p_k, 1 - p_k and T - p_k^2
    are summed over the other entries, so nothing cancels when p is nearly one-hot
    (derivations.md section 3)."""
    k = p.index(max(p))
    others = p[:k] + p[k + 1:]
    rest, R = math.fsum(others), math.fsum(v * v for v in others)  # 1 - p_k, T - p_k^2
    terms = [v * v * ((1 - v) ** 2 + p[k] ** 2 + R - v * v) for v in others]
    return math.sqrt(math.fsum(terms + [p[k] ** 2 * (rest * rest + R)]))


def _normals(rng: random.Random, count: int) -> Vector:
    """count N(0, 1) draws, the same numbers (and final state of rng) as count calls of
    rng.gauss(0.0, 1.0), at half the cost: Box-Muller pairs, the spare in rng.gauss_next."""
    z: Vector = []
    if count and rng.gauss_next is not None:  # gauss returns mu + z sigma = 0.0 + z
        z, rng.gauss_next = [0.0 + rng.gauss_next], None
    uniform, keep, cos, sin, log, sqrt = (rng.random, z.extend, math.cos, math.sin, math.log,
                                          math.sqrt)
    for _ in range((count - len(z) + 1) // 2):
        angle, radius = uniform() * math.tau, sqrt(-2.0 * log(1.0 - uniform()))
        keep((0.0 + cos(angle) * radius, 0.0 + sin(angle) * radius))
    if len(z) > count:
        rng.gauss_next = z.pop()
    return z


# ------------------------------------------------------------------ mean and variance

def mean(xs: Sequence[float]) -> float:
    """Return x_bar = (x_1 + ... + x_n) / n, the sum correctly rounded (math.fsum).

    >>> mean([1, 2, 3, 4]), mean([1e16, 1.0, -1e16, 3.0])
    (2.5, 1.0)
    """
    xs = as_vector("mean", xs, "xs")
    return math.fsum(xs) / len(xs)


def variance(xs: Sequence[float], ddof: int = 0) -> float:
    """Return Var(X) = sum_i (x_i - x_bar)^2 / (n - ddof), in two passes, so that data far
    from 0 keep their digits.  ddof=0: the population variance; ddof=1: the sample variance.

    >>> variance([1, 2, 3, 4]), variance([1, 2, 3, 4], ddof=1), variance([1e9 + 1, 1e9 + 3])
    (1.25, 1.6666666666666667, 1.0)
    """
    ddof, xs = as_int("variance", ddof, "ddof", minimum=0), as_vector("variance", xs, "xs")
    if len(xs) <= ddof:
        raise ValueError(f"variance: needs at least {ddof + 1} data points with ddof={ddof}; "
                         f"got {len(xs)}")
    return _variance(xs, ddof)


# ------------------------------------------------------------------------ the theory

def _number(fn: str, value, what: str):
    """value checked by the policy, kept exact if it is an int or a Fraction, else a float."""
    x = as_real(fn, value, what)
    if what.startswith("var") and x < 0:
        raise ValueError(f"{fn}: {what} is {value!r}; a variance cannot be negative")
    return value if type(value) in Exact else x


def product_variance(mean_x: float, var_x: float, mean_y: float, var_y: float) -> float:
    """Return Var(XY) = var_x var_y + mean_x^2 var_y + mean_y^2 var_x for independent X, Y
    (with zero means, E[X^2] E[Y^2] = var_x var_y).  Exact for ints and Fractions.

    >>> product_variance(0, 1, 0, 1), product_variance(Fraction(1, 2), 1, 2, 3)
    (1, Fraction(31, 4))
    """
    fn = "product_variance"
    return _product_variance(_number(fn, mean_x, "mean_x"), _number(fn, var_x, "var_x"),
                             _number(fn, mean_y, "mean_y"), _number(fn, var_y, "var_y"))


def dot_product_variance(d_k: int, mean_q: float = 0, var_q: float = 1, mean_k: float = 0,
                         var_k: float = 1) -> float:
    """Return Var(q . k) = d_k Var(q_i k_i) for q, k with independent, identically
    distributed components: the d_k products are independent, so their variances add.

    >>> dot_product_variance(512), dot_product_variance(4, var_q=2, var_k=3)
    (512, 24)
    """
    fn = "dot_product_variance"
    return as_int(fn, d_k, "d_k", maximum=MAX_EXACT) * _product_variance(
        _number(fn, mean_q, "mean_q"), _number(fn, var_q, "var_q"),
        _number(fn, mean_k, "mean_k"), _number(fn, var_k, "var_k"))


def scaled_variance(var: float, c: float) -> float:
    """Return Var(c X) = c^2 Var(X).

    >>> scaled_variance(64, Fraction(1, 8)), scaled_variance(64, 0.125)
    (Fraction(1, 1), 1.0)
    """
    c = _number("scaled_variance", c, "c")
    return c * c * _number("scaled_variance", var, "var")


def scale_factor(name: str, d_k: int) -> float:
    """Return the multiplier c of q . k that a scale choice names.

    "1": unscaled; "1/sqrt(d_k)": the paper's; "1/d_k": muP's; "1/ln(d_k)" (d_k >= 2).

    >>> [round(scale_factor(name, 64), 4) for name in SCALE_CHOICES]
    [1.0, 0.125, 0.0156, 0.2404]
    """
    return _factor("scale_factor", name, d_k)


def _factor(fn: str, name: str, d_k: int) -> float:
    """scale_factor(name, d_k), its arguments checked in the name of fn."""
    if not (isinstance(name, str) and name in SCALE_CHOICES):
        kind = ValueError if isinstance(name, str) else TypeError
        raise kind(f"{fn}: the scale must be one of {SCALE_CHOICES}, not {name!r}")
    minimum = 2 if name == "1/ln(d_k)" else 1  # ln 1 = 0
    return _FACTORS[name](as_int(fn, d_k, "d_k", minimum, maximum=MAX_EXACT))


def _rho(fn: str, rho: float) -> float:
    """A correlation: a real number in [-1, 1], kept exact if it is an int or a Fraction."""
    rho = _number(fn, rho, "rho")
    if not -1 <= rho <= 1:
        raise ValueError(f"{fn}: rho is {rho!r}; a correlation lies in [-1, 1]")
    return rho


class Moments(NamedTuple):
    mean: Fraction  # E[q . k]
    variance: Fraction  # Var(q . k)


def exact_dot_product_moments(d_k: int, values: Sequence[float],
                              probabilities: Optional[Sequence[float]] = None) -> Moments:
    """Return the exact (E[q . k], Var(q . k)) = (d_k mu^2, d_k (s^2 - mu^4)), mu = E[X] and
    s = E[X^2], when every q_i and k_i is drawn independently from P(X = values[t]) =
    probabilities[t] (uniform if None): in Fractions, with no sampling and no rounding.

    >>> exact_dot_product_moments(8, [-1, 1])
    Moments(mean=Fraction(0, 1), variance=Fraction(8, 1))
    >>> exact_dot_product_moments(10, [0, 1, 2])
    Moments(mean=Fraction(10, 1), variance=Fraction(160, 9))
    """
    fn = "exact_dot_product_moments"
    d_k = as_int(fn, d_k, "d_k", maximum=MAX_EXACT)
    values = [Fraction(_number(fn, v, "values")) for v in as_list(fn, values, "values")]
    probabilities = ([Fraction(1, len(values))] * len(values) if probabilities is None else
                     [Fraction(_number(fn, p, "probabilities"))
                      for p in as_list(fn, probabilities, "probabilities")])
    if len(probabilities) != len(values) or min(probabilities) < 0 or sum(probabilities) != 1:
        raise ValueError(f"{fn}: need as many probabilities as values ({len(values)}), each "
                         f">= 0, summing to exactly 1 (got {len(probabilities)}, sum "
                         f"{sum(probabilities)}); pass Fractions such as Fraction(1, 3)")
    return _moments(d_k, values, probabilities)


def correlated_dot_product_moments(d_k: int, rho: float) -> Moments:
    """Return (E[q . k], Var(q . k)) = (rho d_k, d_k (1 + rho^2)) when the pairs (q_i, k_i)
    are independent and each is jointly normal with means 0, variances 1, correlation rho:
    E[q_i k_i] = rho and, by Isserlis' theorem, E[q_i^2 k_i^2] = 1 + 2 rho^2 (derivations.md
    section 7).  rho = 0 is initialisation.  Exact for an int or Fraction rho.

    >>> correlated_dot_product_moments(64, Fraction(1, 2))
    Moments(mean=Fraction(32, 1), variance=Fraction(80, 1))
    """
    fn = "correlated_dot_product_moments"
    d_k, rho = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), _rho(fn, rho)
    return Moments(d_k * rho, d_k * (1 + rho * rho))


def correlated_logits(d_k: int, rho: float, scale_name: str = "1/sqrt(d_k)",
                      m: int = 16) -> Tuple[float, float, float]:
    """Return (mean, std, weight) of the logit c q . k* of the key whose components
    correlate with q's (rho), among m - 1 keys independent of q: c rho d_k,
    c sqrt(d_k (1 + rho^2)), and e^mean / (e^mean + m - 1), k*'s weight when every logit
    sits at its mean.  Under 1/sqrt(d_k) the mean grows like sqrt(d_k); under 1/d_k it is rho.

    >>> [round(v, 3) for v in correlated_logits(256, 0.5)]
    [8.0, 1.118, 0.995]
    """
    fn = "correlated_logits"
    c, rho, m = _factor(fn, scale_name, d_k), float(_rho(fn, rho)), as_int(fn, m, "m", minimum=2)
    mu, std = c * rho * d_k, c * math.sqrt(d_k * (1 + rho * rho))
    return mu, std, softmax([mu] + [0.0] * (m - 1))[0]


def variance_standard_error(d_k: int, n: int) -> float:
    """Return sqrt((E[(q . k)^4] - d_k^2) / n) = sqrt((2 d_k^2 + 6 d_k) / n), the standard
    error of (1/n) sum (q . k)^2, which estimates Var(q . k) = d_k (the mean is 0).

    For independent N(0, 1) components E[(q . k)^4] = 3 d_k^2 + 6 d_k: expanding the
    fourth power, only paired indices survive, i = j = l = m with E[q^4] E[k^4] = 9 (d_k
    terms) and the three pairings of two distinct indices (3 d_k (d_k - 1) terms).

    >>> round(variance_standard_error(64, 1000), 4)
    2.9285
    """
    fn = "variance_standard_error"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), as_int(fn, n, "n")
    return math.sqrt((2 * d_k * d_k + 6 * d_k) / n)  # int / int: exact, then rounded once


class Median(NamedTuple):
    median: float
    low: float  # [low, high] holds the true median with probability coverage, whatever
    high: float  # the distribution (an order-statistic interval)
    coverage: float


def median_interval(xs: Sequence[float], coverage: float = 0.95) -> Median:
    """Return the median of xs and the interval [x_(l), x_(n+1-l)] of order statistics, l
    the largest with P(l <= B <= n - l) >= coverage for B ~ Binomial(n, 1/2), the count
    below the true median; .coverage gives that probability (less when n is too small).

    >>> median_interval(range(1, 101))
    Median(median=50.5, low=40.0, high=61.0, coverage=0.9648)
    """
    fn = "median_interval"
    xs, coverage = sorted(as_vector(fn, xs, "xs")), as_real(fn, coverage, "coverage")
    if not 0 < coverage < 1:
        raise ValueError(f"{fn}: coverage is {coverage!r}; it must lie strictly between 0 and 1")
    n, (a, b) = len(xs), coverage.as_integer_ratio()
    l = max(1, n // 2)  # from the middle outwards: about 2 sqrt(n) steps, in exact ints
    term = math.comb(n, l)  # C(n, l); inside = 2^n P(l <= B <= n - l): the terms at l and n - l
    inside = term * (2 if n - l > l else n - l == l)  # (one term if l = n - l, none if n = 1)
    while l > 1 and inside * b < a << n:
        term, l = term * l // (n - l + 1), l - 1  # C(n, l - 1)
        inside += 2 * term
    return Median(statistics.median(xs), xs[l - 1], xs[n - l], round(inside / 2 ** n, 4))


# ------------------------------------------------------------------------ simulation

def _rng(fn: str, seed) -> random.Random:
    """A generator from an explicit int seed, or the random.Random given."""
    return seed if isinstance(seed, random.Random) else random.Random(as_int(
        fn, seed, "seed (an int or a random.Random)", minimum=-2 ** 64))


def sample_dot_products(d_k: int, n: int, *, seed: int = 0, scale: float = 1.0,
                        rho: float = 0.0) -> Vector:
    """Return n samples of scale * (q . k), q with independent N(0, 1) components and
    k_i = rho q_i + sqrt(1 - rho^2) z_i (corr(q_i, k_i) = rho).  A fresh (q, k) per sample:
    one q against many keys would correlate the samples.

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
        q, k = z[:d_k], [rho * a + s * b for a, b in zip(z, z[d_k:])]  # rho = 0: k = z[d_k:]
        samples.append(scale * dot(q, k))
    return samples


def layer_norm(x: Sequence[float]) -> Vector:
    """Return (x - x_bar) / sigma with sigma^2 = Var(x) (ddof 0): a vector of mean 0 and
    mean square 1 over its own entries (no gain, no bias).  Shapes: n >= 2 -> n.

    >>> layer_norm([1.0, 3.0]), layer_norm([1e16, 1e16 + 2])
    ([-1.0, 1.0], [-1.0, 1.0])
    """
    x = as_vector("layer_norm", x)
    e = math.frexp(max(map(abs, x)))[1]  # x 2^-e is exact, and the squares stay normal floats
    d = _centred([math.ldexp(v, -e) for v in x])
    sigma = math.sqrt(math.fsum(v * v for v in d) / len(d))
    if sigma == 0.0:
        raise ValueError(f"layer_norm: all {len(d)} entries are equal; the variance is 0")
    return [v / sigma for v in d]


def sample_projected_dot_products(d_k: int, n: int, *, d_model: int = 64,
                                  seed: int = 0) -> Vector:
    """Return n samples of q . k with q = x W_Q, k = x W_K as at initialisation: x is
    layer_norm of d_model N(0, 1) draws, W_Q and W_K fresh d_model x d_k matrices of
    N(0, 1/d_model) entries.  Given x, q_c = x . W_Q[:, c] is N(0, |x|^2 / d_model) = N(0, 1),
    independent of k: the assumptions hold, and Var(q . k) = d_k again.

    >>> [round(s, 4) for s in sample_projected_dot_products(4, 3, d_model=8, seed=0)]
    [-5.9809, 0.7394, 1.8784]
    """
    fn = "sample_projected_dot_products"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), as_int(fn, n, "n")
    d_model, rng = as_int(fn, d_model, "d_model", minimum=2), _rng(fn, seed)
    samples = []
    for _ in range(n):
        z = _normals(rng, d_model * (1 + 2 * d_k))  # x, then W_Q's columns, then W_K's
        x, sigma = layer_norm(z[:d_model]), 1.0 / math.sqrt(d_model)
        columns = [z[t:t + d_model] for t in range(d_model, len(z), d_model)]
        q, k = ([dot(x, w) * sigma for w in W] for W in (columns[:d_k], columns[d_k:]))
        samples.append(dot(q, k))
    return samples


class ScoreVariance(NamedTuple):
    variance: float  # the estimate of Var(e): (1/n) sum e^2, since E[e] = 0
    standard_error: float  # sqrt(((1/n) sum e^4 - variance^2) / n)


def additive_score_variance(d_a: int, n: int = 1000, *, d: int = 64, sigma_w: float = 1.0,
                            seed: int = 0) -> ScoreVariance:
    """Return Var(e) = sigma_w^2 d_a E[tanh(u)^2], simulated, for additive attention's score
    e = w_v . tanh(W_q q + W_k k) at initialisation: q, k with d N(0, 1) entries, W_q, W_k
    (d_a x d) N(0, 1/d), w_v N(0, sigma_w^2).  Given q and k the d_a pre-activations u are
    independent N(0, (|q|^2 + |k|^2) / d), so they are drawn directly.  tanh bounds each
    unit, not their sum: with sigma_w = 1, Var(e) grows like d_a; with 1/d_a, it stays < 1.

    >>> [round(additive_score_variance(d_a, d=16).variance, 1) for d_a in (16, 64)]
    [8.3, 32.2]
    >>> round(additive_score_variance(64, d=16, sigma_w=1 / 8).variance, 2)
    0.5
    """
    fn = "additive_score_variance"
    d_a, n, d = (as_int(fn, v, name, maximum=MAX_EXACT) for v, name in ((d_a, "d_a"), (n, "n"),
                                                                       (d, "d")))
    sigma_w, rng = as_real(fn, sigma_w, "sigma_w"), _rng(fn, seed)
    squares = []
    for _ in range(n):  # the same draws for every sigma_w: e = sigma_w w . tanh(u)
        z = _normals(rng, 2 * d + 2 * d_a)  # q and k, then the pre-activations, then w
        spread = math.sqrt(math.fsum(v * v for v in z[:2 * d]) / d)  # sqrt((|q|^2 + |k|^2)/d)
        squares.append(dot(z[2 * d + d_a:], [math.tanh(spread * v) for v in
                                              z[2 * d:2 * d + d_a]]) ** 2)
    v = math.fsum(squares) / n
    se = math.sqrt(max(0.0, math.fsum(s * s for s in squares) / n - v * v) / n)
    return ScoreVariance(sigma_w * sigma_w * v, sigma_w * sigma_w * se)


# --------------------------------------------------------- saturation and the gradient

def softmax_entropy(x: Sequence[float]) -> float:
    """Return H(p) = -sum_i p_i log p_i in nats for p = softmax(x) (0 log 0 = 0): ln m for
    uniform weights over m keys, 0 for one-hot.

    >>> round(softmax_entropy([0.0] * 16), 12) == round(math.log(16), 12)
    True
    >>> softmax_entropy([0.0, -1e4]), round(softmax_entropy([1.0, 0.0]), 6)
    (0.0, 0.582203)
    """
    x = as_vector("softmax_entropy", x, masked=True, limit=1.7976931348623157e308)
    return _entropy(x, softmax(x))


class _Row(NamedTuple):  # one attention row at initialisation, as much as the statistics need
    scores: Vector  # q . k_j, m of them
    dP: Vector  # G V^T: the upstream gradient that reaches the weights, m of them
    q2: float  # |q|^2
    rest: float  # chi^2(d_k - 1): the part of K orthogonal to q, as dS K sees it


def _rows(fn: str, d_k: int, m: int, count: int, seed) -> List[_Row]:
    """`count` rows drawn exactly as if q (1 x d_k), K (m x d_k), V (m x D_V) and the upstream
    gradient G (1 x D_V) had independent N(0, 1) entries, in O(m) each: |q|^2 ~ chi^2(d_k)
    and, given q, q . k_j = |q| z_j; so dP_j = G . v_j = |G| z'_j; and the parts of the k_j
    orthogonal to q are independent of both, so |sum_j dS_j k_j|^2 = (sum_j dS_j q . k_j)^2
    / |q|^2 + (sum_j dS_j^2) chi^2(d_k - 1) (derivations.md section 4)."""
    d_k, m = as_int(fn, d_k, "d_k", maximum=MAX_EXACT), as_int(fn, m, "m", minimum=2)
    rng, rows = _rng(fn, seed), []
    for _ in range(as_int(fn, count, "trials", minimum=2)):
        q2, g2 = rng.gammavariate(d_k / 2, 2.0), rng.gammavariate(D_V / 2, 2.0)  # chi^2
        z = _normals(rng, 2 * m)  # the scores' z, then dP's
        rest = rng.gammavariate((d_k - 1) / 2, 2.0) if d_k > 1 else 0.0
        rows.append(_Row([math.sqrt(q2) * v for v in z[:m]], [math.sqrt(g2) * v for v in z[m:]],
                         q2, rest))
    return rows


class Saturation(NamedTuple):  # means over the rows, each with its standard error s / sqrt(rows)
    max_weight: Tuple[float, float]  # max_j p_j
    entropy: Tuple[float, float]  # H(p), nats
    jacobian_norm: Tuple[float, float]  # ||diag(p) - p p^T||_F


class GradientNorms(NamedTuple):
    """Medians over the rows, with 95% order-statistic intervals, and the means with their
    standard errors (the mean feels the rare rows whose top two logits nearly tie)."""
    score_grad: Median  # ||dL/dS||, S the logits
    query_grad: Median  # ||dL/dQ||
    score_grad_mean: Tuple[float, float]
    query_grad_mean: Tuple[float, float]


def _mean_se(xs: Vector) -> Tuple[float, float]:
    return math.fsum(xs) / len(xs), math.sqrt(_variance(xs, 1) / len(xs))


def _saturation(rows: Sequence[_Row], c: float) -> Saturation:
    S = [[c * s for s in row.scores] for row in rows]
    P = [softmax(S_i) for S_i in S]
    return Saturation(_mean_se([max(p) for p in P]),
                      _mean_se([_entropy(S_i, p) for S_i, p in zip(S, P)]),
                      _mean_se([_jacobian_norm(p) for p in P]))


def _gradients(rows: Sequence[_Row], c: float) -> GradientNorms:
    score, query = [], []
    for row in rows:
        dS = softmax_backward(softmax([c * s for s in row.scores]), row.dP)  # as score_gradient
        along_q = math.fsum(g * s for g, s in zip(dS, row.scores)) ** 2 / row.q2
        score.append(math.sqrt(math.fsum(g * g for g in dS)))
        query.append(abs(c) * math.sqrt(along_q + score[-1] ** 2 * row.rest))  # |c dS K|
    return GradientNorms(median_interval(score), median_interval(query), _mean_se(score),
                         _mean_se(query))


def saturation_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                     trials: int = TRIALS, seed: int = 0) -> Saturation:
    """Return the mean (and standard error) of the largest weight, the entropy and the
    Jacobian norm of p = softmax(c q . k_j) over `trials` rows of m keys at initialisation
    (q, k_j with independent N(0, 1) components; c = scale_factor(scale_name, d_k)).
    Uniform weights would give max p = 1/m, H = ln m and ||J||_F = sqrt(1/m - 1/m^2).

    >>> [round(v[0], 4) for v in saturation_stats(64, "1", trials=20)]
    [0.8965, 0.2827, 0.1186]
    >>> [round(v[0], 4) for v in saturation_stats(64, trials=20)]
    [0.292, 2.273, 0.3132]
    """
    c = _factor("saturation_stats", scale_name, d_k)
    return _saturation(_rows("saturation_stats", d_k, m, trials, seed), c)


def gradient_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                   trials: int = TRIALS, seed: int = 0) -> GradientNorms:
    """Return the median and mean of ||dL/dS|| and ||dL/dQ|| over `trials` rows at
    initialisation, with an upstream gradient G ~ N(0, I): dS = the softmax backward of
    dP = G V^T (score_gradient), dQ = c dS K (attention_backward's), c = scale_factor.

    >>> g = gradient_stats(64, "1", trials=20), gradient_stats(64, trials=20)
    >>> [round(norms.score_grad.median, 4) for norms in g]
    [0.0177, 0.672]
    """
    c = _factor("gradient_stats", scale_name, d_k)
    return _gradients(_rows("gradient_stats", d_k, m, trials, seed), c)


# ------------------------------------------------------------------------ the report

class Report(NamedTuple):  # every number of `python3 stats.py` and of the docs' figures
    seed: int
    samples: int  # (q, k) pairs per d_k
    trials: int  # attention rows per d_k
    keys: int  # m, keys per row
    dks: Tuple[int, ...]
    variance: Dict[int, Tuple[float, float]]  # d_k -> (mean of (q . k)^2, standard error)
    projection: Tuple[int, int, float, float]  # d_model, d_k, the same, for q = LN(x) W_Q
    saturation: Dict[Tuple[int, str], Saturation]  # (d_k, "1" or "1/sqrt(d_k)")
    gradients: Dict[Tuple[int, str], GradientNorms]


ARMS = ("1", "1/sqrt(d_k)")  # unscaled, and the paper's scale


def report(seed: int = 0, samples: int = 1000, trials: int = TRIALS, keys: int = 16,
           dks: Sequence[int] = (16, 64, 128, 512, 1024)) -> Report:
    """Return every number of the report: per d_k, the variance of q . k over `samples`
    pairs, and the saturation and gradients over the same `trials` rows of `keys` keys
    unscaled and scaled (seeds seed + d_k); and the projection setting (d_model 32, d_k 16).

    >>> r = report(samples=10, trials=4, dks=(16,))
    >>> round(r.variance[16][0], 2), round(r.saturation[16, "1"].max_weight[0], 4)
    (8.85, 0.6054)
    """
    fn = "report"
    seed, samples = as_int(fn, seed, "seed", 0, 2 ** 64 - 1), as_int(fn, samples, "samples")
    keys, trials = as_int(fn, keys, "keys", minimum=2), as_int(fn, trials, "trials", minimum=2)
    dks = tuple(as_int(fn, d, "d_k", 2, MAX_EXACT) for d in as_list(fn, dks, "dks"))
    if len(set(dks)) < len(dks):
        raise ValueError(f"{fn}: dks = {list(dks)} repeats a d_k; give each once")
    variance, saturation, gradients = {}, {}, {}
    for d_k in dks:  # the draws and the rows of each d_k come from generators of their own
        draws = sample_dot_products(d_k, samples, seed=seed + d_k)
        variance[d_k] = (math.fsum(x * x for x in draws) / samples,  # the mean 0 is known
                         variance_standard_error(d_k, samples))
        rows = _rows(fn, d_k, keys, trials, seed + d_k)
        for name in ARMS:
            saturation[d_k, name] = _saturation(rows, scale_factor(name, d_k))
            gradients[d_k, name] = _gradients(rows, scale_factor(name, d_k))
    d_model, d_k, count = 32, 16, max(1, samples // 4)
    projected = sample_projected_dot_products(d_k, count, d_model=d_model, seed=seed)
    projection = (d_model, d_k, math.fsum(x * x for x in projected) / count,
                  variance_standard_error(d_k, count))
    return Report(seed, samples, trials, keys, dks, variance, projection, saturation, gradients)


def _bars(rows: Sequence[Tuple[str, float, str]], top: float, width: int = 40) -> List[str]:
    label_width = max(len(label) for label, _, _ in rows)
    return [f"   {label:>{label_width}} |{'#' * round(width * value / top):<{width}} {text}"
            .rstrip() for label, value, text in rows]


def _header(title: str) -> List[str]:
    return ["", title, "-" * len(title)]


def _interval(m: Median) -> str:
    return f"{m.median:.2g} [{m.low:.2g}, {m.high:.2g}]"


def _format_report(r: Report) -> List[str]:
    """The lines `python3 stats.py` prints for a Report, at most 79 characters wide."""
    lines = ["The sqrt(d_k) of softmax(Q K^T / sqrt(d_k)) V, in numbers",
             "At initialisation: q, k, V and the upstream gradient G with independent",
             "N(0, 1) entries.  Simulated numbers carry a standard error or an interval.",
             f"Seed {r.seed}."]
    lines += _header("1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)")
    lines += [f"   {r.samples} fresh (q, k) pairs per d_k; +- one standard error",
              "   sqrt((2 d_k^2 + 6 d_k) / n)", f"{'d_k':>7} {'Var(q . k)':>17}"
              f" {'Var(q . k / sqrt(d_k))':>25}"]
    for d_k, (v, e) in r.variance.items():  # e the standard error; a, b: places for 2 digits
        a, b = (max(0, 1 - math.floor(math.log10(x))) for x in (e, e / d_k))
        lines.append(f"{d_k:>7} {v:>9.{a}f} +- {e:<5.{a}f} {v / d_k:>14.{b}f} +- {e / d_k:.{b}f}")
    d_model, d_k, v, se = r.projection
    a = max(0, 1 - math.floor(math.log10(se)))
    lines += [f"   With q = LN(x) W_Q, k = LN(x) W_K (d_model {d_model}, W entries "
              f"N(0, 1/{d_model})):", f"   Var(q . k) at d_k = {d_k}: {v:.{a}f} +- {se:.{a}f}"]
    lines += _header("2. Var(c q . k) = d_k c^2 for each scale c, at initialisation")
    lines.append(f"{'d_k':>7}" + "".join(f"{name:>13}" for name in SCALE_CHOICES))
    for d_k in r.dks:
        lines.append(f"{d_k:>7}" + "".join(f"{d_k * scale_factor(name, d_k) ** 2:>13.4g}"
                                           for name in SCALE_CHOICES))
    lines += ["   Only 1/sqrt(d_k) keeps it at 1 for every d_k.  1/d_k (muP's choice) keeps",
              "   the mean logit O(1) at a fixed correlation rho between q and k, where",
              "   E[q . k] = rho d_k (docs/derivations.md section 7)."]
    lines += _header(f"3. Saturation over m = {r.keys} keys, {r.trials} rows per d_k")
    worst = [max(getattr(s, f)[1] for s in r.saturation.values()) for f in Saturation._fields]
    lines += ["   means; standard errors up to {:.2g}, {:.2g} and {:.2g}, column by column"
              .format(*worst), f"   uniform weights give max p = {1 / r.keys:.4f} "
              f"and entropy ln {r.keys} = {math.log(r.keys):.3f}",
              f"{'':>7} {'unscaled (c = 1)':^30}|{'scaled (c = 1/sqrt(d_k))':^30}".rstrip(),
              f"{'d_k':>7}" + "   |".join([f"{'max p':>9}{'entropy':>9}{'||J||_F':>9}"] * 2)]
    for d_k in r.dks:
        cells = [r.saturation[d_k, name] for name in ARMS]
        lines.append(f"{d_k:>7}" + "   |".join(
            "".join(f"{getattr(s, f)[0]:>9.3f}" for f in Saturation._fields) for s in cells))
    for title, field in (("4. The gradient reaching the logits, ||dL/dS||", "score_grad"),
                         ("5. The gradient reaching the queries, ||dL/dQ|| = ||c dS K||",
                          "query_grad")):
        lines += _header(title)
        lines += [f"{'d_k':>7}   {'median [95% interval], c = 1':<30}"
                  f"{'median [95% interval], c = 1/sqrt(d_k)'}"]
        for d_k in r.dks:
            cells = [getattr(r.gradients[d_k, name], field) for name in ARMS]
            lines.append(f"{d_k:>7}   " + "".join(f"{_interval(m):<30}" for m in cells).rstrip())
    lines += ["   Unscaled, the typical gradient collapses as d_k grows.  dQ = c dS K keeps",
              "   a factor ||k|| ~ sqrt(d_k) that c = 1/sqrt(d_k) cancels, so at small d_k",
              "   dQ can look larger unscaled even though dS has already fallen."]
    lines += _header("6. Pictures")
    for title, x in (("softmax([2, 1, 0, -1])", [2.0, 1.0, 0.0, -1.0]),
                     ("softmax([20, 10, 0, -10]): the same logits times 10",
                      [20.0, 10.0, 0.0, -10.0])):
        lines += [f"   {title}"] + _bars([(f"p_{i + 1}", p, f"{p:.4g}")
                                          for i, p in enumerate(softmax(x))], 1.0)
        diagonal = ", ".join(f"{row[i]:.3g}" for i, row in enumerate(softmax_jacobian(x)))
        lines.append(f"   Jacobian diagonal p_i (1 - p_i): [{diagonal}]")
    bars = [(f"d_k={d_k}", v, "") for d_k, (v, _) in r.variance.items()]  # values: section 1
    lines += ["   simulated Var(q . k): grows like d_k"] + _bars(bars, max(v for _, v, _ in bars))
    lines.append("   simulated Var(q . k / sqrt(d_k)): level at 1 (bars from 0 to 2)")
    return lines + _bars([(label, v / d_k, "") for (label, v, _), d_k in zip(bars, r.dks)], 2.0)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Return the exit status 0 after printing the report of sections 1 to 6.

    A bad option, or a run of more than WORK draws, exits through argparse with status 2.
    """
    parser = argparse.ArgumentParser(prog="python3 stats.py", description="The variance argument "
                                     "for sqrt(d_k), in numbers; the same on Python 3.9 to 3.13.")
    for flag, kind, default, what in (
            ("--seed", int, 0, "the seed"), ("--samples", int, 1000, "(q, k) pairs per d_k"),
            ("--trials", int, TRIALS, "attention rows per d_k, sections 3 to 5"),
            ("--keys", int, 16, "keys per row"),
            ("--dk", str, "16,64,128,512,1024", "d_k values, comma-separated")):
        parser.add_argument(flag, type=kind, default=default, help=f"{what} (default {default})")
    args = parser.parse_args(argv)
    try:
        dks = [int(part) if part.strip().removeprefix("-").isdecimal()
               else as_int("--dk", part, "each d_k") for part in args.dk.split(",")]
        work = args.samples * sum(dks) + args.trials * args.keys * len(dks)
        if work > WORK:
            raise ValueError(f"these options ask for about {work:.1e} draws; keep them under "
                             f"{WORK:.0e}, about a minute")
        lines = _format_report(report(args.seed, args.samples, args.trials, args.keys, dks))
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    print("\n".join(lines), flush=True)
    return 0


def _run_command_line() -> int:
    """main(), quiet when the reader of the report closes the pipe (`| head -1`)."""
    try:
        return main()
    except BrokenPipeError:
        # Python's signal docs: point stdout at devnull, so that the flush at exit of
        # whatever is still buffered cannot fail again and print a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(_run_command_line())
