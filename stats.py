"""The variance argument for the sqrt(d_k) in attention, in numbers you can reproduce.

At initialisation, with q and k of independent components of mean 0 and variance 1,
Var(q . k) = d_k: unscaled logits spread like sqrt(d_k), softmax saturates, its Jacobian
shrinks and the gradient to Q and K vanishes; multiplying by 1/sqrt(d_k) brings the
variance back to 1.  Once q and k correlate (after training) E[q . k] grows like d_k, which
is why muP scales by 1/d_k.  `python3 stats.py` prints every link of the chain; each table
comes from a function here (docs/derivations.md derives each formula).

Public API (`__all__`):

    mean(xs), variance(xs, ddof=0)          x_bar; the two-pass variance
    product_variance(mx, vx, my, vy)        Var(XY) for independent X, Y
    dot_product_variance(d_k, ...)          Var(q . k) = d_k Var(q_i k_i)
    scaled_variance(var, c)                 Var(c X) = c^2 Var(X)
    SCALE_CHOICES, scale_factor(name, d_k)  1, 1/sqrt(d_k), 1/d_k, 1/ln(d_k)
    Moments, exact_dot_product_moments(d_k, values, probabilities)   exact, in Fractions
    correlated_dot_product_moments(d_k, rho)    E = rho d_k, Var = d_k (1 + rho^2)
    correlated_logits(d_k, rho, scale_name, m)  the matched key's logit and weight
    dot_product_fourth_moment(d_k), variance_standard_error(d_k, n)
    Median, median_interval(xs)             a median with its order-statistic interval
    sample_dot_products(d_k, n, seed=, scale=, rho=)   Monte Carlo, N(0, 1)
    layer_norm(x), sample_projected_dot_products(d_k, n, d_model=, seed=)
    ScoreVariance, additive_score_variance(d_a, n, ...)   Var(w_v . tanh(W_q q + W_k k))
    Trial, random_trials(d_k, ...)          seeded (Q, K, V, G) for one query row
    softmax_entropy(x)                      H(softmax(x)) in nats
    Saturation, saturation_stats(d_k, scale_name, ...)   largest weight, entropy, ||J||_F
    GradientNorms, gradient_stats(d_k, scale_name, ...)  ||dL/dS||, ||dL/dQ||
    LogitVariance, logit_variance(d_model, heads, ...)   which sqrt, where: Var at init
    LengthRow, length_axis(lengths, gap, base)           the winner's weight against n
    Report, report(...), main(argv)         the report of `python3 stats.py`, and its data

>>> dot_product_variance(64), scaled_variance(dot_product_variance(64), Fraction(1, 8))
(64, Fraction(1, 1))

Exceptions: TypeError for the wrong kind of thing (a string, None, a bool, a float where an
int is needed, a seed that is neither an int nor a random.Random); ValueError for a wrong
value (too few data points, d_k < 1, a negative variance, probabilities that are negative
or do not sum to 1, NaN, inf or an entry beyond softmax.LIMIT).  Every message names the
function that was called.  Arguments are never mutated.  ints and Fractions give exact
results wherever Python's own arithmetic keeps them exact.
"""

import argparse  # the command line of the main job
import math  # sqrt, log, fsum, cos, sin, tanh, comb
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
           "correlated_dot_product_moments", "correlated_logits", "dot_product_fourth_moment",
           "variance_standard_error", "Median", "median_interval", "sample_dot_products",
           "layer_norm", "sample_projected_dot_products", "ScoreVariance",
           "additive_score_variance", "Trial", "random_trials", "softmax_entropy",
           "Saturation", "saturation_stats", "GradientNorms", "gradient_stats",
           "LogitVariance", "logit_variance", "LengthRow", "length_axis", "Report", "report",
           "main"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
Exact = (int, Fraction)  # numbers whose arithmetic Python keeps exact
MAX_D_K = 2 ** 53  # every int up to it is exactly a float


# ------------------------------------------------------- the cores, as derived

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
    """Var(XY) = E[X^2] E[Y^2] - E[X]^2 E[Y]^2 = v_x v_y + m_x^2 v_y + m_y^2 v_x."""
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


def _normals(rng: random.Random, count: int) -> Vector:
    """count N(0, 1) draws: the numbers count calls of rng.gauss(0.0, 1.0) give, leaving rng
    in the same state, at about half the cost (random.gauss makes normals in pairs by
    Box-Muller and keeps the second of a pair in rng.gauss_next; so does this)."""
    z: Vector = []
    if count and rng.gauss_next is not None:  # gauss returns mu + z sigma = 0.0 + z
        z, rng.gauss_next = [0.0 + rng.gauss_next], None
    uniform, keep, cos, sin, log, sqrt = rng.random, z.extend, math.cos, math.sin, math.log, \
        math.sqrt
    for _ in range((count - len(z) + 1) // 2):
        angle, radius = uniform() * math.tau, sqrt(-2.0 * log(1.0 - uniform()))
        keep((0.0 + cos(angle) * radius, 0.0 + sin(angle) * radius))
    if len(z) > count:
        rng.gauss_next = z.pop()
    return z


def _entropy(x: Vector) -> float:
    """H(p) = -sum_i p_i log p_i, with log p_i from log_softmax (accurate near p_i = 1)."""
    terms = [p_i * lp_i for p_i, lp_i in zip(softmax(x), log_softmax(x)) if p_i > 0.0]
    return max(0.0, -math.fsum(terms))  # H >= 0; rounding may leave -0.0 or -tiny


def _norm(A: Matrix) -> float:
    return math.sqrt(math.fsum(v * v for row in A for v in row))  # Frobenius


# ------------------------------------------------------------ mean and variance

def mean(xs: Sequence[float]) -> float:
    """Return x_bar = (x_1 + ... + x_n) / n, the sum correctly rounded (math.fsum).

    >>> mean([1, 2, 3, 4]), mean([1e16, 1.0, -1e16, 3.0])
    (2.5, 1.0)
    """
    xs = as_vector("mean", xs, "xs")
    return math.fsum(xs) / len(xs)


def variance(xs: Sequence[float], ddof: int = 0) -> float:
    """Return Var(X) = E[(X - E[X])^2] = sum_i (x_i - x_bar)^2 / (n - ddof).

    ddof=0 gives the population variance, ddof=1 the unbiased sample variance.  Two
    passes, so data far from 0 keep their digits.

    >>> variance([1, 2, 3, 4]), variance([1, 2, 3, 4], ddof=1), variance([1e9 + 1, 1e9 + 3])
    (1.25, 1.6666666666666667, 1.0)
    """
    ddof, xs = as_int("variance", ddof, "ddof", minimum=0), as_vector("variance", xs, "xs")
    if len(xs) <= ddof:
        raise ValueError(f"variance: needs at least {ddof + 1} data points with ddof={ddof}; "
                         f"got {len(xs)}")
    return _variance(xs, ddof)


# ------------------------------------------------------------- the theory

def _number(fn: str, value, what: str):
    """value checked by the policy, kept exact if it is an int or a Fraction, else a float."""
    x = as_real(fn, value, what)
    if what.startswith("var") and x < 0:
        raise ValueError(f"{fn}: {what} is {value!r}; a variance cannot be negative")
    return value if type(value) in Exact else x


def product_variance(mean_x: float, var_x: float, mean_y: float, var_y: float) -> float:
    """Return Var(XY) = var_x var_y + mean_x^2 var_y + mean_y^2 var_x for independent X, Y.

    With zero means it is E[X^2] E[Y^2] = var_x var_y.  Exact for ints and Fractions.

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
    return as_int(fn, d_k, "d_k", maximum=MAX_D_K) * _product_variance(
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
    if name not in SCALE_CHOICES:  # a non-str is never in it
        kind = ValueError if isinstance(name, str) else TypeError
        raise kind(f"scale_factor: the scale must be one of {SCALE_CHOICES}, not {name!r}")
    minimum = 2 if name == "1/ln(d_k)" else 1  # ln 1 = 0
    return _FACTORS[name](as_int("scale_factor", d_k, "d_k", minimum, maximum=MAX_D_K))


class Moments(NamedTuple):
    mean: Fraction  # E[q . k]
    variance: Fraction  # Var(q . k)


def exact_dot_product_moments(d_k: int, values: Sequence[float],
                              probabilities: Optional[Sequence[float]] = None) -> Moments:
    """Return the exact (E[q . k], Var(q . k)) when every q_i and k_i is drawn
    independently from P(X = values[t]) = probabilities[t] (uniform if None).

    With mu = E[X] and s = E[X^2]: E[q_i k_i] = mu^2 and E[(q_i k_i)^2] = s^2, so
    E[q . k] = d_k mu^2 and Var(q . k) = d_k (s^2 - mu^4).  In Fractions: no sampling and
    no rounding.  For the +-1 (Rademacher) distribution the answer is exactly (0, d_k).

    >>> exact_dot_product_moments(8, [-1, 1])
    Moments(mean=Fraction(0, 1), variance=Fraction(8, 1))
    >>> exact_dot_product_moments(10, [0, 1, 2])
    Moments(mean=Fraction(10, 1), variance=Fraction(160, 9))
    """
    fn = "exact_dot_product_moments"
    d_k = as_int(fn, d_k, "d_k", maximum=MAX_D_K)
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
    are independent across i, and each pair is jointly normal with means 0, variances 1
    and correlation rho.

    E[q_i k_i] = rho, and by Isserlis' theorem E[q_i^2 k_i^2] = 1 + 2 rho^2, so each term has
    variance 1 + rho^2 (derivations.md section 7).  At initialisation rho = 0; as training
    aligns q with its key, the mean grows like d_k: under 1/sqrt(d_k) the scaled logit
    grows like sqrt(d_k), under 1/d_k it stays at rho.  Exact for an int or Fraction rho.

    >>> correlated_dot_product_moments(64, Fraction(1, 2))
    Moments(mean=Fraction(32, 1), variance=Fraction(80, 1))
    """
    fn = "correlated_dot_product_moments"
    d_k, rho = as_int(fn, d_k, "d_k", maximum=MAX_D_K), _number(fn, rho, "rho")
    if not -1 <= rho <= 1:
        raise ValueError(f"{fn}: rho is {rho!r}; a correlation lies in [-1, 1]")
    return Moments(d_k * rho, d_k * (1 + rho * rho))


def correlated_logits(d_k: int, rho: float, scale_name: str = "1/sqrt(d_k)",
                      m: int = 16) -> Tuple[float, float, float]:
    """Return (mean, std, weight) of the logit c q . k* of the key k* that q is correlated
    with (rho), among m - 1 keys independent of q: mean c rho d_k, std c sqrt(d_k (1 + rho^2)),
    and the weight softmax gives k* when every logit sits at its mean, e^mu / (e^mu + m - 1).

    The other logits have mean 0 and std c sqrt(d_k): under 1/sqrt(d_k) the gap grows like
    sqrt(d_k) and softmax saturates again; under 1/d_k it stays at rho.

    >>> [round(v, 3) for v in correlated_logits(256, 0.5)]
    [8.0, 1.118, 0.995]
    """
    fn = "correlated_logits"
    c, (mu, var) = scale_factor(scale_name, d_k), correlated_dot_product_moments(d_k, rho)
    m = as_int(fn, m, "m", minimum=2)
    mu, std = c * float(mu), c * math.sqrt(var)
    return mu, std, softmax([mu] + [0.0] * (m - 1))[0]


def dot_product_fourth_moment(d_k: int) -> int:
    """Return E[(q . k)^4] = 3 d_k^2 + 6 d_k for independent N(0, 1) components.

    Expanding the fourth power, only index patterns that pair up survive: i = j = l = m
    gives d_k E[q^4] E[k^4] = 9 d_k, and the three pairings of two distinct indices give
    3 d_k (d_k - 1).

    >>> dot_product_fourth_moment(1), dot_product_fourth_moment(64)
    (9, 12672)
    """
    d_k = as_int("dot_product_fourth_moment", d_k, "d_k", maximum=MAX_D_K)
    return 3 * d_k * d_k + 6 * d_k


def variance_standard_error(d_k: int, n: int) -> float:
    """Return sqrt((E[(q . k)^4] - d_k^2) / n) = sqrt((2 d_k^2 + 6 d_k) / n), the standard
    error of (1/n) sum (q . k)^2, which estimates Var(q . k) = d_k (the mean is 0).

    >>> round(variance_standard_error(64, 1000), 4)
    2.9285
    """
    fn = "variance_standard_error"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_D_K), as_int(fn, n, "n")
    return math.sqrt((2 * d_k * d_k + 6 * d_k) / n)  # int / int: exact, then rounded once


class Median(NamedTuple):
    median: float
    low: float  # an order-statistic interval: the rank of each end is chosen so that the
    high: float  # true median lies between them with probability >= coverage, any distribution
    coverage: float


def median_interval(xs: Sequence[float], coverage: float = 0.95) -> Median:
    """Return the median of xs and the distribution-free interval [x_(l), x_(n+1-l)] of
    order statistics, with the largest l >= 1 such that P(l <= B <= n - l) >= coverage for
    B ~ Binomial(n, 1/2), the number of samples below the true median; the coverage field
    gives that probability exactly (below the one asked for when n is too small).

    >>> median_interval(range(1, 101))
    Median(median=50.5, low=40.0, high=61.0, coverage=0.9648)
    """
    fn = "median_interval"
    xs, coverage = sorted(as_vector(fn, xs, "xs")), as_real(fn, coverage, "coverage")
    n, l, tail = len(xs), 1, 1  # tail = 2^n P(B < l), in exact integers
    while l < n // 2 and 2 * (tail + math.comb(n, l)) / 2 ** n <= 1 - coverage:
        tail, l = tail + math.comb(n, l), l + 1
    return Median(statistics.median(xs), xs[l - 1], xs[n - l],
                  round(1 - 2 * tail / 2 ** n, 4) if n > 1 else 0.0)


# ----------------------------------------------------------------- simulation

def _rng(fn: str, seed) -> random.Random:
    """A generator from an explicit int seed, or the random.Random given."""
    return seed if isinstance(seed, random.Random) else random.Random(as_int(
        fn, seed, "seed (an int or a random.Random)", minimum=-2 ** 64))


def sample_dot_products(d_k: int, n: int, *, seed: int = 0, scale: float = 1.0,
                        rho: float = 0.0) -> Vector:
    """Return n samples of scale * (q . k), q with independent N(0, 1) components and
    k_i = rho q_i + sqrt(1 - rho^2) z_i (so corr(q_i, k_i) = rho; rho = 0: independent).

    Each sample draws a fresh pair: one q against many keys would make the samples
    correlated.  Shapes: n samples, 2 d_k draws each.

    >>> a = sample_dot_products(4, 2, seed=1)
    >>> [round(s, 4) for s in a], a == sample_dot_products(4, 2, seed=1)
    ([-0.3308, -1.3222], True)
    """
    fn = "sample_dot_products"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_D_K), as_int(fn, n, "n")
    scale, rho = as_real(fn, scale, "scale"), as_real(fn, rho, "rho")
    if not -1 <= rho <= 1:
        raise ValueError(f"{fn}: rho is {rho!r}; a correlation lies in [-1, 1]")
    rng, s = _rng(fn, seed), math.sqrt(1.0 - rho * rho)
    samples = []
    for _ in range(n):
        z = _normals(rng, 2 * d_k)  # q, then the independent part of k
        q, k = z[:d_k], z[d_k:] if rho == 0 else [rho * a + s * b for a, b in zip(z, z[d_k:])]
        samples.append(scale * dot(q, k))
    return samples


def layer_norm(x: Sequence[float]) -> Vector:
    """Return (x - x_bar) / sigma with sigma^2 = Var(x) (ddof 0): a vector of mean 0 and
    variance 1 over its own entries (no gain, no bias).  Shapes: n >= 2 -> n.

    >>> layer_norm([1.0, 3.0]), layer_norm([1e16, 1e16 + 2])
    ([-1.0, 1.0], [-1.0, 1.0])
    """
    d = _centred(as_vector("layer_norm", x))
    sigma = math.sqrt(math.fsum(v * v for v in d) / len(d))
    if sigma == 0.0:
        raise ValueError(f"layer_norm: all {len(d)} entries are equal; the variance is 0")
    return [v / sigma for v in d]


def sample_projected_dot_products(d_k: int, n: int, *, d_model: int = 64,
                                  seed: int = 0) -> Vector:
    """Return n samples of q . k with q = x W_Q, k = x W_K as at initialisation.

    x is a layer-normalised vector of d_model N(0, 1) draws; W_Q and W_K are independent
    d_model x d_k matrices of N(0, 1/d_model) entries, fresh for every sample.  Given x,
    each q_c = x . W_Q[:, c] is N(0, |x|^2 / d_model) = N(0, 1), independent of k: the
    assumptions hold, and Var(q . k) = d_k again.  n samples of d_model (1 + 2 d_k) draws.

    >>> [round(s, 4) for s in sample_projected_dot_products(4, 3, d_model=8, seed=0)]
    [-5.9809, 0.7394, 1.8784]
    """
    fn = "sample_projected_dot_products"
    d_k, n = as_int(fn, d_k, "d_k", maximum=MAX_D_K), as_int(fn, n, "n")
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
    """Return Var(e) for additive attention's score e = w_v . tanh(W_q q + W_k k), simulated.

    At initialisation: q, k with d independent N(0, 1) entries; W_q, W_k (d_a x d) with
    N(0, 1/d) entries; w_v with N(0, sigma_w^2) entries.  Given q and k the d_a
    pre-activations are independent N(0, (|q|^2 + |k|^2) / d), so they are drawn directly.
    As E[e] = 0 and the units are independent given q and k,
        Var(e) = sigma_w^2 d_a E[tanh(u)^2],   E[tanh(u)^2] about 0.52 here.
    tanh bounds each unit, not their sum: with sigma_w = 1 the variance grows like d_a, as
    Var(q . k) grows like d_k; with sigma_w^2 = 1/d_a (fan-in) it stays below 1.

    >>> [round(additive_score_variance(d_a, d=16).variance, 1) for d_a in (16, 64)]
    [8.3, 32.2]
    >>> round(additive_score_variance(64, d=16, sigma_w=1 / 8).variance, 2)
    0.5
    """
    fn = "additive_score_variance"
    d_a, n, d = (as_int(fn, v, name, maximum=MAX_D_K) for v, name in ((d_a, "d_a"), (n, "n"),
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


# ------------------------------------------------------ saturation and gradient

class Trial(NamedTuple):
    """One random attention row: a query against m keys, as at initialisation."""
    Q: Matrix  # 1 x d_k, N(0, 1) entries
    K: Matrix  # m x d_k
    V: Matrix  # m x d_v
    G: Matrix  # 1 x d_v, an upstream gradient dL/dO


def random_trials(d_k: int, *, m: int = 16, d_v: int = 8, trials: int = 100,
                  seed: int = 0) -> List[Trial]:
    """Return `trials` seeded draws of (Q, K, V, G) with independent N(0, 1) entries.

    Shapes: Q 1 x d_k, K m x d_k, V m x d_v, G 1 x d_v.

    >>> t = random_trials(4, m=3, d_v=2, trials=1)[0]
    >>> len(t.Q), len(t.K), len(t.K[0]), len(t.V[0]), len(t.G[0])
    (1, 3, 4, 2, 2)
    """
    fn = "random_trials"
    d_k, m, d_v, trials = (as_int(fn, v, name, maximum=MAX_D_K) for v, name in (
        (d_k, "d_k"), (m, "m"), (d_v, "d_v"), (trials, "trials")))
    rng, out = _rng(fn, seed), []
    for _ in range(trials):
        z = _normals(rng, d_k + m * d_k + m * d_v + d_v)  # Q, K, V, G in that order
        rows = [z[t:t + d_k] for t in range(0, d_k + m * d_k, d_k)] + [
            z[t:t + d_v] for t in range(d_k + m * d_k, len(z), d_v)]
        out.append(Trial(rows[:1], rows[1:m + 1], rows[m + 1:-1], rows[-1:]))
    return out


def softmax_entropy(x: Sequence[float]) -> float:
    """Return H(p) = -sum_i p_i log p_i in nats for p = softmax(x) (0 log 0 = 0).

    Uniform over m keys gives ln m; one-hot gives 0.  Shapes: x of length m -> a float.

    >>> round(softmax_entropy([0.0] * 16), 12) == round(math.log(16), 12)
    True
    >>> softmax_entropy([0.0, -1e4]), round(softmax_entropy([1.0, 0.0]), 6)
    (0.0, 0.582203)
    """
    return _entropy(as_vector("softmax_entropy", x, masked=True, limit=_ANY_LOGIT))


_ANY_LOGIT = 1.7976931348623157e308  # softmax takes any finite logit


class _Row(NamedTuple):
    """One attention row at initialisation, as much of it as the statistics need."""
    scores: Vector  # q . k_j, m of them
    dP: Vector  # G V^T: the upstream gradient that reaches the weights, m of them
    q2: float  # |q|^2
    rest: float  # chi^2(d_k - 1): the part of K orthogonal to q, seen by dS K


def _rows(fn: str, d_k: int, m: int, count: int, seed) -> List[_Row]:
    """`count` rows drawn from their exact distribution when q, K, V, G have independent
    N(0, 1) entries (d_v = 8), without drawing K: |q|^2 is chi^2(d_k); given q, the
    scores q . k_j = |q| z_j with z_j ~ N(0, 1); and the parts of the k_j orthogonal to q
    are independent of the scores, so that |sum_j dS_j k_j|^2 = (sum_j dS_j q . k_j)^2 /
    |q|^2 + (sum_j dS_j^2) chi^2(d_k - 1) (derivations.md section 4).  O(m) per row."""
    d_k, m = as_int(fn, d_k, "d_k", maximum=MAX_D_K), as_int(fn, m, "m", minimum=2)
    rng, rows = _rng(fn, seed), []
    for _ in range(as_int(fn, count, "trials", minimum=2, maximum=10 ** 6)):
        q2 = rng.gammavariate(d_k / 2, 2.0)  # chi^2(d_k) = Gamma(d_k / 2, 2)
        z = _normals(rng, 9 * m + 8)  # the scores' z, then V (m x 8) and G (1 x 8)
        rest = rng.gammavariate((d_k - 1) / 2, 2.0) if d_k > 1 else 0.0
        V = [z[t:t + 8] for t in range(m, 9 * m, 8)]
        rows.append(_Row([math.sqrt(q2) * v for v in z[:m]],
                         [dot(z[9 * m:], v) for v in V], q2, rest))  # dP_j = G . v_j
    return rows


class Saturation(NamedTuple):
    """Means over the rows, each with its standard error s / sqrt(rows)."""
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
    return Saturation(_mean_se([max(softmax(S_i)) for S_i in S]),
                      _mean_se([_entropy(S_i) for S_i in S]),
                      _mean_se([_norm(softmax_jacobian(S_i)) for S_i in S]))


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
                     trials: int = 100, seed: int = 0) -> Saturation:
    """Return the mean (and standard error) of the largest weight, the entropy and the
    Jacobian norm of p = softmax(c q . k_j) over `trials` rows of m keys at initialisation
    (q, k_j with independent N(0, 1) components; c = scale_factor(scale_name, d_k)).

    Uniform weights give max p = 1/m, H = ln m and ||J||_F = sqrt(1/m - 1/m^2).

    >>> [round(v[0], 4) for v in saturation_stats(64, "1", trials=20)]
    [0.903, 0.2935, 0.1181]
    >>> [round(v[0], 4) for v in saturation_stats(64, trials=20)]
    [0.2598, 2.3374, 0.3083]
    """
    c = scale_factor(scale_name, d_k)
    return _saturation(_rows("saturation_stats", d_k, m, trials, seed), c)


def gradient_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                   trials: int = 100, seed: int = 0) -> GradientNorms:
    """Return the median and mean of ||dL/dS|| and ||dL/dQ|| over `trials` rows at
    initialisation, with an upstream gradient G ~ N(0, I): dS = the softmax backward of
    dP = G V^T (score_gradient), dQ = c dS K (attention_backward's), c = scale_factor.

    >>> g = gradient_stats(64, "1", trials=20), gradient_stats(64, trials=20)
    >>> [round(norms.score_grad.median, 4) for norms in g]
    [0.0588, 0.6904]
    """
    c = scale_factor(scale_name, d_k)
    return _gradients(_rows("gradient_stats", d_k, m, trials, seed), c)


# ------------------------------------------------------------- which sqrt, where

class LogitVariance(NamedTuple):
    variance: Fraction  # Var(logit) at initialisation, exactly
    verdict: str  # "1: right", or what went wrong


PLACES = ("logits", "q", "q and k", "W_Q init", "twice")
INPUTS = ("layer_norm", "E sqrt(d_model) + PE", "E + PE")


def logit_variance(d_model: int, heads: int, *, divide_by: str = "d_k",
                   where: str = "logits", inputs: str = "layer_norm") -> LogitVariance:
    """Return Var(S) at initialisation for a head of width d_k = d_model / heads when the
    code divides by sqrt(divide_by) (d_k, d_model or none) at the place `where`, and the
    verdict: Var(S) = d_k c^2 v^2, c the total factor, v the variance of x's components.

    where: "logits" (S = q . k / sqrt(d)), "q" (q / sqrt(d)), "q and k" (d^-1/4 on each),
    "W_Q init" (W_Q drawn with variance 1/(d_model d)), "twice" (the scale applied on the
    logits and again inside a framework that applies its own): the first four agree at
    initialisation.  inputs: "layer_norm" (v = 1), "E sqrt(d_model) + PE" (embeddings of
    variance 1/d_model scaled up, plus sinusoidal positions of mean square 1/2: v = 3/2),
    "E + PE" (v = 1/d_model + 1/2).  W_Q, W_K have N(0, 1/d_model) entries.

    >>> logit_variance(512, 8), logit_variance(512, 8, divide_by="d_model").verdict
    (LogitVariance(variance=Fraction(1, 1), verdict='1: right'), '1/heads: divided by d_model')
    """
    fn = "logit_variance"
    d_model, heads = as_int(fn, d_model, "d_model"), as_int(fn, heads, "heads")
    choices = (("divide_by", divide_by, ("d_k", "d_model", "none")), ("where", where, PLACES),
               ("inputs", inputs, INPUTS))
    for what, value, allowed in choices:
        if value not in allowed:
            raise ValueError(f"{fn}: {what} must be one of {allowed}, not {value!r}")
    if d_model % heads:
        raise ValueError(f"{fn}: heads = {heads} must divide d_model = {d_model}")
    d_k = d_model // heads
    c2 = {"d_k": Fraction(1, d_k), "d_model": Fraction(1, d_model), "none": 1}[divide_by]
    c2 = c2 * c2 if where == "twice" else c2  # the factor applied twice is squared again
    v = {"layer_norm": 1, "E sqrt(d_model) + PE": Fraction(3, 2),
         "E + PE": Fraction(1, d_model) + Fraction(1, 2)}[inputs]
    variance = d_k * c2 * v * v
    verdict = ("1: right" if variance == 1 else "d_k: no scale" if c2 == 1 else
               "1/heads: divided by d_model" if c2 == Fraction(1, d_model) and heads > 1 else
               "1/d_k: scaled twice" if where == "twice" else f"{float(variance):.3g}: the "
               "inputs' variance is not 1")
    return LogitVariance(variance, verdict)


# ------------------------------------------------------------------ the length axis

class LengthRow(NamedTuple):
    n: int  # keys
    weight: float  # the winner's softmax weight, logits [gap, 0, ..., 0]
    entropy: float  # H(p), nats
    weight_scaled: float  # the same with the logits times ln(n) / ln(base)
    entropy_scaled: float


def length_axis(lengths: Sequence[int] = (16, 256, 4096, 65536), gap: float = 5.0,
                base: int = 16) -> List[LengthRow]:
    """Return, for each number of keys n, the winner's weight e^g / (e^g + n - 1) and the
    entropy when one logit is g above n - 1 equal ones; then the same with every logit
    multiplied by s ln n, s = 1 / ln(base) (scalable softmax, Su's entropy-invariant
    scale): equal to the plain row at n = base, and the winner keeps its weight as n grows.

    d_k sets the spread of each logit; n, how many logits the winner must beat.

    >>> [round(r.weight, 4) for r in length_axis((16, 65536))]
    [0.9082, 0.0023]
    """
    fn = "length_axis"
    lengths = [as_int(fn, n, "n", minimum=2, maximum=2 ** 20) for n in as_list(fn, lengths,
                                                                              "lengths")]
    gap, base = as_real(fn, gap, "gap", limit=700.0), as_int(fn, base, "base", minimum=2)
    rows = []
    for n in lengths:
        plain, scaled = ([g] + [0.0] * (n - 1) for g in (gap, gap * math.log(n) / math.log(base)))
        rows.append(LengthRow(n, softmax(plain)[0], _entropy(plain), softmax(scaled)[0],
                              _entropy(scaled)))
    return rows


# ------------------------------------------------------------------- the report

class Report(NamedTuple):
    """Every number of `python3 stats.py`, and of the docs' figures: one computation."""
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


def report(seed: int = 0, samples: int = 1000, trials: int = 300, keys: int = 16,
           dks: Sequence[int] = (16, 64, 128, 512, 1024)) -> Report:
    """Return every number of the report: the variance of q . k per d_k (seed + d_k), in
    the projection setting (d_model 32, d_k 16, samples // 4 of them), and the saturation
    and gradients of `trials` rows of `keys` keys per d_k, unscaled and scaled.

    >>> r = report(samples=10, trials=4, dks=(16,))
    >>> round(r.variance[16][0], 2), round(r.saturation[16, "1"].max_weight[0], 4)
    (8.85, 0.7743)
    """
    fn = "report"
    seed, samples = as_int(fn, seed, "seed", minimum=-2 ** 64), as_int(fn, samples, "samples")
    dks = tuple(as_int(fn, d, "d_k", minimum=2, maximum=MAX_D_K) for d in as_list(fn, dks, "dks"))
    variance = {}
    for d_k in dks:
        draws = sample_dot_products(d_k, samples, seed=seed + d_k)
        variance[d_k] = (math.fsum(x * x for x in draws) / samples,  # the mean 0 is known
                         variance_standard_error(d_k, samples))
    d_model, d_k, count = 32, 16, max(1, samples // 4)
    projected = sample_projected_dot_products(d_k, count, d_model=d_model, seed=seed)
    projection = (d_model, d_k, math.fsum(x * x for x in projected) / count,
                  variance_standard_error(d_k, count))
    saturation, gradients = {}, {}
    for d_k in dks:
        rows = _rows(fn, d_k, keys, trials, seed + d_k)
        for name in ARMS:
            saturation[d_k, name] = _saturation(rows, scale_factor(name, d_k))
            gradients[d_k, name] = _gradients(rows, scale_factor(name, d_k))
    return Report(seed, samples, trials, keys, dks, variance, projection, saturation, gradients)


def _bar_chart(rows: Sequence[Tuple[str, float]], top: float, width: int = 40) -> List[str]:
    """One line per (label, value >= 0): a bar of '#' of length width * value / top."""
    label_width = max(len(label) for label, _ in rows)
    return [f"   {label:>{label_width}} |{'#' * round(width * value / top):<{width}} {value:.4g}"
            .rstrip() for label, value in rows]


def _header(title: str) -> List[str]:
    return ["", title, "-" * len(title)]


def _g(x: float) -> str:
    return f"{x:.2g}"


def format_report(r: Report) -> List[str]:
    """The lines `python3 stats.py` prints for a Report, at most 79 characters wide."""
    lines = [f"The sqrt(d_k) of softmax(Q K^T / sqrt(d_k)) V, in numbers: seed {r.seed}",
             "At initialisation: q and k with independent N(0, 1) components."]
    lines += _header("1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)")
    lines += [f"   {r.samples} fresh (q, k) pairs per d_k; +- one standard error,",
              "   sqrt((2 d_k^2 + 6 d_k) / n)",
              f"{'d_k':>7} {'Var(q.k)':>17} {'std':>7} {'Var(q.k / sqrt(d_k))':>22}"]
    for d_k, (v, se) in r.variance.items():
        lines.append(f"{d_k:>7} {v:>9.1f} +- {se:<5.1f} {math.sqrt(v):>7.2f} "
                     f"{v / d_k:>13.3f} +- {se / d_k:.3f}")
    d_model, d_k, v, se = r.projection
    lines += [f"   With q = LN(x) W_Q, k = LN(x) W_K (d_model {d_model}, W entries "
              f"N(0, 1/{d_model})):", f"   Var(q . k) at d_k = {d_k}: {v:.1f} +- {se:.1f}"]
    lines += _header("2. Var(c q . k) for each scale c: d_k c^2")
    lines.append(f"{'d_k':>7}" + "".join(f"{name:>13}" for name in SCALE_CHOICES))
    for d_k in r.dks:
        lines.append(f"{d_k:>7}" + "".join(f"{d_k * scale_factor(name, d_k) ** 2:>13.4g}"
                                           for name in SCALE_CHOICES))
    lines += ["   Only 1/sqrt(d_k) keeps it at 1 for every d_k at initialisation; 1/d_k gives",
              "   1/d_k (muP's choice: it keeps the logit O(1) once q and k align, see",
              "   docs/derivations.md section 7); 1/ln(d_k) and 1 let it grow."]
    lines += _header(f"3. Saturation over m = {r.keys} keys, {r.trials} rows per d_k")
    lines += [f"   mean +- standard error; uniform weights give max p = {1 / r.keys:.4f}",
              f"   and entropy ln {r.keys} = {math.log(r.keys):.3f}",
              f"{'':>7} {'unscaled (c = 1)':^30}|{'scaled (c = 1/sqrt(d_k))':^30}",
              f"{'d_k':>7}" + f"{'max p':>9}{'entropy':>9}{'||J||_F':>9}   |" * 2]
    for d_k in r.dks:
        cells = [r.saturation[d_k, name] for name in ARMS]
        lines.append(f"{d_k:>7}" + "   |".join(
            "".join(f"{getattr(s, f)[0]:>9.3f}" for f in Saturation._fields) for s in cells))
    lines += _header("4. The gradient: median [95% interval] over the rows")
    lines += ["   dS = dL/dS reaches the logits, dQ = c dS K the queries (G ~ N(0, I))",
              f"{'d_k':>7} {'dS, c = 1':>20} {'dS, 1/sqrt(d_k)':>20} {'dQ, c = 1':>24}"]
    for d_k in r.dks:
        u, s = (r.gradients[d_k, name] for name in ARMS)
        lines.append(f"{d_k:>7}" + "".join(f" {_g(m.median):>7} [{_g(m.low)}, {_g(m.high)}]"
                                           for m in (u.score_grad, s.score_grad, u.query_grad)))
    means = ", ".join(f"{_g(r.gradients[d_k, '1'].query_grad_mean[0])}" for d_k in r.dks)
    lines += ["   Unscaled, the typical dS collapses as d_k grows.  dQ = c dS K keeps a factor",
              "   ||k|| ~ sqrt(d_k) that c = 1/sqrt(d_k) would cancel, so at small d_k it can",
              "   look larger unscaled; the mean ||dQ|| unscaled (" + means + ")",
              "   stays up: rare rows whose top two logits nearly tie keep an O(1) gradient."]
    lines += _header("5. Pictures")
    for title, x in (("softmax([2, 1, 0, -1])", [2.0, 1.0, 0.0, -1.0]),
                     ("softmax([20, 10, 0, -10]): the same logits times 10",
                      [20.0, 10.0, 0.0, -10.0])):
        lines += [f"   {title}"] + _bar_chart([(f"p_{i + 1}", p) for i, p in
                                               enumerate(softmax(x))], 1.0)
        diagonal = ", ".join(f"{row[i]:.3g}" for i, row in enumerate(softmax_jacobian(x)))
        lines.append(f"   Jacobian diagonal p_i (1 - p_i): [{diagonal}]")
    lines.append("   simulated Var(q . k): grows like d_k")
    bars = [(f"d_k={d_k}", v) for d_k, (v, _) in r.variance.items()]
    lines += _bar_chart(bars, max(v for _, v in bars))
    lines.append("   simulated Var(q . k / sqrt(d_k)): level at 1 (bars from 0 to 2)")
    lines += _bar_chart([(label, v / d_k) for (label, v), d_k in zip(bars, r.dks)], 2.0)
    return lines


def _parser() -> argparse.ArgumentParser:
    def count(minimum: int, maximum: int):
        def parse(text: str) -> int:
            value = int(text) if text.strip().lstrip("-").isdigit() else None
            if value is None or not minimum <= value <= maximum:
                raise argparse.ArgumentTypeError(f"need a whole number from {minimum} to "
                                                 f"{maximum}, not {text!r}")
            return value
        return parse

    parser = argparse.ArgumentParser(
        prog="python3 stats.py", description="Why attention divides q . k by sqrt(d_k), in "
        "numbers: the variance of q . k, each scale choice, softmax saturation, the gradient "
        "that reaches Q, and terminal pictures.  The same --seed prints the same report.")
    parser.add_argument("--seed", type=count(0, 2 ** 32), default=0, help="default 0")
    parser.add_argument("--samples", type=count(1, 10 ** 5), default=1000,
                        help="(q, k) pairs per d_k (default 1000)")
    parser.add_argument("--trials", type=count(2, 10 ** 5), default=300,
                        help="attention rows per d_k for sections 3 and 4 (default 300)")
    parser.add_argument("--keys", type=count(2, 1024), default=16,
                        help="keys per row (default 16)")
    parser.add_argument("--dk", type=lambda text: [count(2, 4096)(part) for part in
                                                   text.split(",")],
                        default=[16, 64, 128, 512, 1024],
                        help="d_k values, comma-separated, each 2 to 4096 (default "
                             "16,64,128,512,1024)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Return the exit status 0 after printing the report of sections 1 to 5.

    Bad options exit through argparse with status 2; the limits keep a run under a minute.
    """
    args = _parser().parse_args(argv)
    r = report(args.seed, args.samples, args.trials, args.keys, args.dk)
    print("\n".join(format_report(r)), flush=True)
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
