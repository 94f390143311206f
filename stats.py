"""The variance argument for the sqrt(d_k) in attention, in numbers you can reproduce.

If q and k have independent components with mean 0 and variance 1, then
Var(q . k) = d_k: unscaled scores spread like sqrt(d_k), softmax saturates,
its Jacobian shrinks and the gradient to Q and K vanishes.  Multiplying the
scores by 1/sqrt(d_k) brings the variance back to 1.  `python3 stats.py`
prints every link of that chain; each table comes from a function here.

Public API (`__all__`):

    mean(xs), variance(xs, ddof=0)          the exact mean; two-pass variance
    product_variance(mx, vx, my, vy)        Var(XY) for independent X, Y
    dot_product_variance(d_k, ...)          Var(q . k) = d_k Var(q_i k_i)
    scaled_variance(var, c)                 Var(c X) = c^2 Var(X)
    SCALE_CHOICES, scale_factor(name, d_k)  none, 1/sqrt(d_k), 1/d_k, 1/ln(d_k)
    Moments, exact_dot_product_moments(d_k, values, probabilities)   exact, as Fractions
    dot_product_fourth_moment(d_k), variance_standard_error(d_k, n)
    sample_dot_products(d_k, n, seed=, scale=)              Monte Carlo, N(0, 1)
    layer_norm(x), sample_projected_dot_products(d_k, n, d_model=, seed=)
    ScoreVariance, additive_score_variance(d_a, n, ...)     Var of w_v . tanh(W_q q + W_k k)
    Trial, random_trials(d_k, ...)          seeded (Q, K, V, G) for one query row
    Saturation, saturation_stats(d_k, scale_name, ...)   largest weight, entropy, ||J||_F
    GradientNorms, gradient_stats(d_k, scale_name, ...)  ||dL/dS||, ||dL/dQ||
    softmax_entropy(x)                      H(softmax(x)) in nats
    main(argv)                              the report printed by `python3 stats.py`

>>> dot_product_variance(64), scaled_variance(dot_product_variance(64), 1 / 8)
(64, 1.0)

Exceptions: TypeError for the wrong kind of thing (a string, None, a bool, a
float where an int is needed, a seed that is neither an int nor a
random.Random); ValueError for a wrong value (too few data points, d_k < 1, a
negative variance, probabilities that are negative or do not sum to 1, NaN or
inf, a result beyond the float range, more than 10^7 random draws in one call).
Every message names the function that was called.  Arguments are never
mutated; numpy ints are accepted where ints are.
"""

import argparse  # the command line of the main job
import math  # sqrt, log, fsum, frexp, ldexp, cos, sin, tanh
import operator  # mul, for dot products; index, for numpy ints
import os  # devnull, when the reader of the report closes the pipe
import random  # seeded Monte Carlo
import statistics  # median
import sys  # exit status of the command line
from fractions import Fraction  # exact moments
from numbers import Integral, Rational  # ints (numpy's too) and Fractions: exact
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from attention import _dots, _score_gradient, _transpose  # cores of attention_backward
from softmax import _finite_vector, _integer, _logits, _real, _softmax  # boundary checks
from softmax import log_softmax, softmax_jacobian

__all__ = ["mean", "variance", "product_variance", "dot_product_variance", "scaled_variance",
           "SCALE_CHOICES", "scale_factor", "Moments", "exact_dot_product_moments",
           "dot_product_fourth_moment", "variance_standard_error", "sample_dot_products",
           "layer_norm", "sample_projected_dot_products", "ScoreVariance",
           "additive_score_variance", "Trial", "random_trials", "Saturation", "saturation_stats",
           "GradientNorms", "gradient_stats", "softmax_entropy", "main"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
_MAX_DK = 2 ** 53  # the largest d_k accepted: every int up to it is exactly a float
_MAX_DRAWS = 10 ** 7  # normal draws one call may make (about 2 s; the report makes 5.8e6)
_DEFAULT_DKS = (16, 64, 128, 512, 1024)  # the d_k of the report's tables
_PROJECTION = (64, 16)  # d_model and d_k of the report's section 1b
_D_V = 8  # the width of V and G in random_trials and the report's sections 3 and 4


# ------------------------------------------------------------ mean and variance

def _integers(data: Vector) -> Tuple[List[int], int]:
    """Return (N, D) with data[i] = N[i] / D exactly, D a power of two.

    Every float is an integer over a power of two; over the largest of those
    powers, the others are integers too.  Sums of N are exact.
    """
    ratios = [x.as_integer_ratio() for x in data]
    D = max(b for _, b in ratios)
    return [a * (D // b) for a, b in ratios], D


def mean(xs: Sequence[float]) -> float:
    """Return E[X] estimated by x_bar = (x_1 + ... + x_n) / n, exactly, then rounded once.

    The sum is exact (in integers), so no data, however large, can overflow it.

    >>> mean([1, 2, 3, 4]), mean([1e308, 1e308]), mean([1e16, 1.0, -1e16, 3.0])
    (2.5, 1e+308, 1.0)
    """
    N, D = _integers(_finite_vector("mean", xs, "xs"))
    return sum(N) / (len(N) * D)  # int / int is correctly rounded


def variance(xs: Sequence[float], ddof: int = 0) -> float:
    """Return Var(X) = E[(X - E[X])^2] = sum_i (x_i - x_bar)^2 / (n - ddof).

    ddof=0 gives the population variance, ddof=1 the unbiased sample variance.
    Two passes: first x_bar, then the squared deviations.  The one-pass form
    E[X^2] - E[X]^2 subtracts two nearly equal large numbers and loses every
    digit when the data sit far from 0 (try data offset by 1e9).  The second
    term below, (sum_i (x_i - x_bar))^2 / n, is zero in exact arithmetic; in
    floats it removes the error left by rounding x_bar.  The data are first
    divided by a power of two 2^e (exact) so that no square can overflow.

    >>> variance([1, 2, 3, 4]), variance([1, 2, 3, 4], ddof=1), variance([1e154, -1e154])
    (1.25, 1.6666666666666667, 1e+308)
    """
    ddof = _integer("variance", ddof, "ddof", minimum=0)
    data = _finite_vector("variance", xs, "xs")
    if len(data) <= ddof:
        raise ValueError(f"variance: requires at least {ddof + 1} data points with "
                         f"ddof={ddof}; got {len(data)}")
    e = _exponent(data)
    return _times_power_of_two("variance", _two_pass(_scaled(data, -e), ddof), 2 * e)


def _two_pass(data: Vector, ddof: int) -> float:
    n = len(data)
    x_bar = math.fsum(data) / n
    deviations = [x - x_bar for x in data]
    correction = math.fsum(deviations) ** 2 / n
    return (math.fsum(d * d for d in deviations) - correction) / (n - ddof)


def _exponent(data: Vector) -> int:
    """e with max_i |x_i| = f 2^e, 1/2 <= f < 1 (0 for all-zero data)."""
    return math.frexp(max(map(abs, data)))[1]


def _scaled(data: Vector, e: int) -> Vector:
    return [math.ldexp(x, e) for x in data]  # x 2^e: exact while no entry underflows


def _times_power_of_two(fn: str, x: float, e: int) -> float:
    """x 2^e, or ValueError when that is beyond the float range."""
    if x != 0.0 and math.frexp(x)[1] + e > 1024:
        raise ValueError(f"{fn}: the result, about 2^{math.frexp(x)[1] + e}, is beyond "
                         "the float range (about 1.8e308 = 2^1024)")
    return math.ldexp(x, e)


# ------------------------------------------------------------- the theory

def _exact(fn: str, **named) -> Tuple[List, bool]:
    """Return the values as exact rationals, and whether they were all given exactly.

    ints and Fractions are kept (so the answer can stay exact); a float is the
    rational it stores, so arithmetic on it is exact too, and rounded once at the end.
    """
    values = []
    for name, v in named.items():
        x = _real(fn, v, name)
        values.append(_rational(v, x))
        if name.startswith("var") and x < 0:
            raise ValueError(f"{fn}: {name} is {v}; a variance cannot be negative")
    given_exactly = all(isinstance(v, Rational) for v in named.values())
    return values, given_exactly


def _rational(v, x: float):
    """v exactly: an integer as an int, a rational as a Fraction, a float x as its value."""
    if isinstance(v, Integral):
        return operator.index(v)  # numpy ints become ints, whose arithmetic cannot overflow
    if isinstance(v, Rational):
        return Fraction(int(v.numerator), int(v.denominator))
    return Fraction(x)


def _result(fn: str, value, exact: bool):
    """value itself (an int or Fraction) for exact input, else the nearest float."""
    if exact:
        return value
    try:
        return float(value)  # correctly rounded
    except OverflowError:
        raise ValueError(f"{fn}: the result, about 10^{_decimal_exponent(value)}, is beyond "
                         "the float range (about 1.8e308)") from None


def _decimal_exponent(value: Fraction) -> int:
    return math.floor(math.log10(abs(value.numerator)) - math.log10(value.denominator))


def _product_variance(mean_x, var_x, mean_y, var_y):
    return var_x * var_y + mean_x * mean_x * var_y + mean_y * mean_y * var_x


def product_variance(mean_x: float, var_x: float, mean_y: float, var_y: float) -> float:
    """Return Var(XY) = var_x var_y + mean_x^2 var_y + mean_y^2 var_x for independent X, Y.

    From Var(XY) = E[X^2] E[Y^2] - E[X]^2 E[Y]^2 with E[X^2] = var_x + mean_x^2.
    With zero means it is E[X^2] E[Y^2] = var_x var_y.  Exact for ints and
    Fractions; for floats, computed exactly and rounded once.

    >>> product_variance(0, 1, 0, 1), product_variance(Fraction(1, 2), 1, 2, 3)
    (1, Fraction(31, 4))
    """
    fn = "product_variance"
    values, exact = _exact(fn, mean_x=mean_x, var_x=var_x, mean_y=mean_y, var_y=var_y)
    return _result(fn, _product_variance(*values), exact)


def dot_product_variance(d_k: int, mean_q: float = 0, var_q: float = 1,
                         mean_k: float = 0, var_k: float = 1) -> float:
    """Return Var(q . k) = d_k Var(q_i k_i) for q, k with i.i.d. independent components.

    The d_k products q_i k_i are independent, so their variances add (no cross
    terms); with mean 0 and variance 1 this is exactly d_k.

    >>> dot_product_variance(512), dot_product_variance(4, var_q=2, var_k=3)
    (512, 24)
    """
    fn = "dot_product_variance"
    d_k = _integer(fn, d_k, "d_k", minimum=1, maximum=_MAX_DK)
    values, exact = _exact(fn, mean_q=mean_q, var_q=var_q, mean_k=mean_k, var_k=var_k)
    return _result(fn, d_k * _product_variance(*values), exact)


def scaled_variance(var: float, c: float) -> float:
    """Return Var(c X) = c^2 Var(X).

    >>> scaled_variance(64, Fraction(1, 8)), scaled_variance(64, 0.125)
    (Fraction(1, 1), 1.0)
    """
    values, exact = _exact("scaled_variance", var=var, c=c)
    var, c = values
    return _result("scaled_variance", c * c * var, exact)


SCALE_CHOICES = ("none", "1/sqrt(d_k)", "1/d_k", "1/ln(d_k)")  # the factors the documents compare


def scale_factor(name: str, d_k: int) -> float:
    """Return the multiplier c applied to q . k by the named choice.

    none: 1;  1/sqrt(d_k): the paper's;  1/d_k;  1/ln(d_k) (needs d_k >= 2).

    >>> [round(scale_factor(name, 64), 4) for name in SCALE_CHOICES]
    [1.0, 0.125, 0.0156, 0.2404]
    """
    return _scale_factor("scale_factor", name, d_k)


def _scale_factor(fn: str, name: str, d_k: int) -> float:
    if not isinstance(name, str):
        raise TypeError(f"{fn}: the scale choice must be a str, one of {SCALE_CHOICES}; "
                        f"not {name!r}")
    if name not in SCALE_CHOICES:
        raise ValueError(f"{fn}: unknown choice {name!r}; choose one of {SCALE_CHOICES}")
    d_k = _integer(fn, d_k, "d_k", minimum=2 if name == "1/ln(d_k)" else 1, maximum=_MAX_DK)
    factors = {"none": lambda: 1.0, "1/sqrt(d_k)": lambda: 1.0 / math.sqrt(d_k),
               "1/d_k": lambda: 1.0 / d_k, "1/ln(d_k)": lambda: 1.0 / math.log(d_k)}
    return factors[name]()  # 1/ln(d_k) needs d_k >= 2: ln 1 = 0


class Moments(NamedTuple):
    mean: Fraction  # E[q . k]
    variance: Fraction  # Var(q . k)


def _distribution(fn: str, values, probabilities) -> Tuple[List[Fraction], List[Fraction]]:
    """Return the values and probabilities as exact Fractions, after checking them."""
    values = _exact_vector(fn, values, "values")
    if probabilities is None:
        probabilities = [Fraction(1, len(values))] * len(values)
    probabilities = _exact_vector(fn, probabilities, "probabilities")
    if len(probabilities) != len(values):
        raise ValueError(f"{fn}: {len(values)} values but {len(probabilities)} probabilities")
    total = sum(probabilities)
    if min(probabilities) < 0 or total != 1:
        raise ValueError(f"{fn}: probabilities must be >= 0 and sum to exactly 1 (got sum "
                         f"{float(total)!r}, exactly {total}); pass Fractions such as "
                         "Fraction(1, 3)")
    return values, probabilities


def _exact_vector(fn: str, x, what: str) -> List[Fraction]:
    """x as exact Fractions: ints and Fractions as given, floats by the value they store."""
    checked = _finite_vector(fn, x, what)
    given = x.tolist() if hasattr(x, "tolist") else x
    return [Fraction(_rational(v, f)) for v, f in zip(given, checked)]


def exact_dot_product_moments(d_k: int, values: Sequence[float],
                              probabilities: Optional[Sequence[float]] = None) -> Moments:
    """Return the exact (E[q . k], Var(q . k)) when every q_i and k_i is drawn
    independently from P(X = values[t]) = probabilities[t] (uniform if None).

    The d_k terms q_i k_i are independent and identically distributed, so only
    the moments of one term are needed.  With mu = E[X] and s = E[X^2]:
    E[q_i k_i] = E[q_i] E[k_i] = mu^2 and E[(q_i k_i)^2] = E[q_i^2] E[k_i^2] = s^2, so
        E[q . k] = d_k mu^2,    Var(q . k) = d_k (s^2 - mu^4).
    All in Fractions: no sampling and no rounding.  For the +-1 (Rademacher)
    distribution the answer is exactly (0, d_k).

    >>> exact_dot_product_moments(8, [-1, 1])
    Moments(mean=Fraction(0, 1), variance=Fraction(8, 1))
    >>> exact_dot_product_moments(10, [0, 1, 2])
    Moments(mean=Fraction(10, 1), variance=Fraction(160, 9))
    """
    fn = "exact_dot_product_moments"
    d_k = _integer(fn, d_k, "d_k", minimum=1, maximum=_MAX_DK)
    values, probabilities = _distribution(fn, values, probabilities)
    mu = sum(p * v for v, p in zip(values, probabilities))  # E[X]
    s = sum(p * v * v for v, p in zip(values, probabilities))  # E[X^2]
    return Moments(d_k * mu * mu, d_k * (s * s - mu ** 4))


# The independent check of the formula above: build the whole distribution of q . k
# by convolution, then take its moments.  Its work grows with the number of distinct
# sums, so it refuses more than _MAX_SUPPORT of them.
_MAX_SUPPORT = 2000  # distinct values of q . k that _convolution_moments will build


def _convolution_moments(d_k: int, values: Sequence[float],
                         probabilities: Optional[Sequence[float]] = None) -> Moments:
    """(E[q . k], Var(q . k)) from the full distribution of q . k, for small cases."""
    fn = "exact_dot_product_moments"
    values, probabilities = _distribution(fn, values, probabilities)
    L = _lcm(v.denominator for v in values)  # values times L are integers
    D = _lcm(p.denominator for p in probabilities)  # and probabilities times D
    component: Dict[int, int] = {}
    for v, p in zip(values, probabilities):
        x = int(v * L)
        component[x] = component.get(x, 0) + int(p * D)  # repeated values pool their weight
    product = _convolve(component, component, operator.mul)  # q_i k_i, values times L^2
    support = _support_bound(d_k, product)
    if support > _MAX_SUPPORT:
        raise ValueError(f"_convolution_moments: q . k may take up to {support} values at "
                         f"d_k={d_k}; the limit is {_MAX_SUPPORT} (use the moments formula)")
    dot = _sum_of_copies(product, d_k)  # sum_i q_i k_i
    total_weight = D ** (2 * d_k)
    first = Fraction(sum(s * w for s, w in dot.items()), total_weight * L ** 2)
    second = Fraction(sum(s * s * w for s, w in dot.items()), total_weight * L ** 4)
    return Moments(first, second - first * first)  # exact arithmetic: no cancellation to fear


def _support_bound(d_k: int, product: Dict[int, int]) -> int:
    """At most how many values a sum of d_k draws from `product` can take.

    A sum is a multiset of d_k values (C(d_k + p - 1, p - 1) of them for p values),
    and an integer between d_k min and d_k max.
    """
    p = len(product)
    return min(math.comb(d_k + p - 1, p - 1), d_k * (max(product) - min(product)) + 1)


def _lcm(numbers) -> int:
    result = 1
    for k in numbers:
        result = result * k // math.gcd(result, k)
    return result


def _convolve(a: Dict[int, int], b: Dict[int, int], op) -> Dict[int, int]:
    """The (unnormalised) distribution of op(X, Y) for independent X ~ a, Y ~ b."""
    out: Dict[int, int] = {}
    for x, wx in a.items():
        for y, wy in b.items():
            z = op(x, y)
            out[z] = out.get(z, 0) + wx * wy
    return out


def _sum_of_copies(pmf: Dict[int, int], count: int) -> Dict[int, int]:
    """The distribution of X_1 + ... + X_count for i.i.d. X_i ~ pmf, by repeated doubling."""
    total = {0: 1}
    for bit in bin(count)[2:]:  # the binary digits of count, most significant first
        total = _convolve(total, total, operator.add)  # the sum of twice as many copies
        if bit == "1":
            total = _convolve(total, pmf, operator.add)  # and one more
    return total


def dot_product_fourth_moment(d_k: int) -> int:
    """Return E[(q . k)^4] = 3 d_k^2 + 6 d_k for independent N(0, 1) components.

    Expanding the fourth power, only index patterns that pair up survive:
    i = j = l = m gives d_k E[q^4] E[k^4] = 9 d_k, and the three pairings of
    two distinct indices give 3 d_k (d_k - 1).

    >>> dot_product_fourth_moment(1), dot_product_fourth_moment(64)
    (9, 12672)
    """
    d_k = _integer("dot_product_fourth_moment", d_k, "d_k", minimum=1, maximum=_MAX_DK)
    return 3 * d_k * d_k + 6 * d_k


def variance_standard_error(d_k: int, n: int) -> float:
    """Return sqrt((E[(q.k)^4] - d_k^2) / n), the standard error of (1/n) sum (q.k)^2.

    That average estimates Var(q . k) = d_k when the mean is known to be 0.

    >>> variance_standard_error(64, 1000) == math.sqrt((3 * 64**2 + 6 * 64 - 64**2) / 1000)
    True
    """
    fn = "variance_standard_error"
    d_k = _integer(fn, d_k, "d_k", minimum=1, maximum=_MAX_DK)
    n = _integer(fn, n, "n", minimum=1)
    return math.sqrt((3 * d_k * d_k + 6 * d_k - d_k * d_k) / n)  # int / int: no overflow


# ----------------------------------------------------------------- simulation

def _rng(fn: str, seed) -> random.Random:
    """A generator from an explicit int seed, or the given random.Random itself."""
    if isinstance(seed, random.Random):
        return seed
    if seed is None:
        raise TypeError(f"{fn}: seed must be an int or a random.Random, not None; "
                        "every run must be reproducible")
    return random.Random(_integer(fn, seed, "seed (an int or a random.Random)"))


def _check_draws(fn: str, draws: int) -> None:
    if draws > _MAX_DRAWS:
        raise ValueError(f"{fn}: this call would draw {draws} normal numbers; the limit is "
                         f"{_MAX_DRAWS} per call (about 2 s)")


def _normals(rng: random.Random, count: int) -> Vector:
    """Return count N(0, 1) draws: the numbers that count calls of rng.gauss(0.0, 1.0) give,
    leaving rng in the same state, at about half the cost.

    random.gauss makes normals in pairs (Box-Muller) and keeps the second of a
    pair in rng.gauss_next for the next call; so do we.
    """
    z: Vector = []
    if count and rng.gauss_next is not None:
        z.append(0.0 + rng.gauss_next)  # gauss returns mu + z sigma = 0.0 + z
        rng.gauss_next = None
    z += _box_muller(rng.random, (count - len(z) + 1) // 2)
    if len(z) > count:
        rng.gauss_next = z.pop()
    return z


def _box_muller(uniform, pairs: int) -> Vector:
    """Return 2 * pairs normals, computed exactly as random.gauss computes them."""
    z: Vector = []
    keep = z.append
    for _ in range(pairs):
        angle = uniform() * math.tau  # x2pi in random.gauss
        radius = math.sqrt(-2.0 * math.log(1.0 - uniform()))  # g2rad
        keep(0.0 + math.cos(angle) * radius)
        keep(0.0 + math.sin(angle) * radius)
    return z


def _dot(u: Vector, v: Vector) -> float:
    return math.fsum(map(operator.mul, u, v))  # q . k, correctly rounded


def _finite_samples(fn: str, samples: Vector, why: str) -> Vector:
    if not all(map(math.isfinite, samples)):
        raise ValueError(f"{fn}: a sample is beyond the float range (about 1.8e308); {why}")
    return samples


def sample_dot_products(d_k: int, n: int, *, seed: int = 0, scale: float = 1.0) -> Vector:
    """Return n samples of scale * (q . k), q and k with independent N(0, 1) components.

    Each sample draws a fresh pair (q, k): reusing one q against many keys
    would make the samples correlated and the variance estimate misleading.
    Shapes: n samples, each from 2 d_k draws (at most 10^7 draws in all).

    >>> a = sample_dot_products(4, 2, seed=1)
    >>> [round(s, 4) for s in a], a == sample_dot_products(4, 2, seed=1)
    ([-0.3308, -1.3222], True)
    """
    fn = "sample_dot_products"
    d_k = _integer(fn, d_k, "d_k", minimum=1, maximum=_MAX_DK)
    n = _integer(fn, n, "n", minimum=1)
    scale = _real(fn, scale, "scale")
    _check_draws(fn, 2 * d_k * n)
    rng = _rng(fn, seed)
    samples = []
    for _ in range(n):
        qk = _normals(rng, 2 * d_k)  # q, then k
        samples.append(scale * _dot(qk[:d_k], qk[d_k:]))
    return _finite_samples(fn, samples, f"scale={scale} is too large")


def layer_norm(x: Sequence[float]) -> Vector:
    """Return (x - mean(x)) / std(x), so the result has mean 0 and variance 1 (no gain, no bias).

    Each x_i - x_bar is computed exactly (in integers, see _integers) and
    rounded once, so the result is within a few ulps of the exact one even
    where the float subtraction would cancel.  Dividing every deviation by the
    largest first keeps the squares in range for any finite x.
    Shapes: x has length n >= 2 -> length n.

    >>> layer_norm([1.0, 3.0]), layer_norm([1e16, 1e16 + 2]), layer_norm([1e308, -1e308])
    ([-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0])
    """
    data = _finite_vector("layer_norm", x, "x")
    N, _ = _integers(data)
    n, total = len(N), sum(N)
    deviations = [n * N_i - total for N_i in N]  # n D (x_i - x_bar): exact integers
    largest = max(map(abs, deviations))
    if largest == 0:
        raise ValueError(f"layer_norm: all {n} entries are equal; the variance is 0")
    r = [d / largest for d in deviations]  # (x_i - x_bar) / max_j |x_j - x_bar|, rounded once
    sigma = math.sqrt(math.fsum(v * v for v in r) / n)
    return [v / sigma for v in r]


def sample_projected_dot_products(d_k: int, n: int, *, d_model: int = 64,
                                  seed: int = 0) -> Vector:
    """Return n samples of q . k with q = x W_Q, k = x W_K as at initialisation.

    x is a layer-normalised vector of d_model N(0, 1) draws; W_Q and W_K are
    independent d_model x d_k matrices with N(0, 1/d_model) entries, fresh for
    every sample.  Given x, each q_c = x . W_Q[:, c] is then N(0, |x|^2 / d_model)
    = N(0, 1), independent of k: the textbook assumptions hold, and
    Var(q . k) = d_k again.  Shapes: n samples of d_model (1 + 2 d_k) draws each.

    >>> [round(s, 4) for s in sample_projected_dot_products(4, 3, d_model=8, seed=0)]
    [-5.9809, 0.7394, 1.8784]
    """
    fn = "sample_projected_dot_products"
    d_k = _integer(fn, d_k, "d_k", minimum=1, maximum=_MAX_DK)
    n = _integer(fn, n, "n", minimum=1)
    d_model = _integer(fn, d_model, "d_model (layer_norm needs two entries)", minimum=2)
    _check_draws(fn, n * d_model * (1 + 2 * d_k))
    rng = _rng(fn, seed)
    return [_projected_dot_product(rng, d_k, d_model) for _ in range(n)]


def _projected_dot_product(rng: random.Random, d_k: int, d_model: int) -> float:
    z = _normals(rng, d_model * (1 + 2 * d_k))  # x, then the columns of W_Q, then of W_K
    x = layer_norm(z[:d_model])
    sigma = 1.0 / math.sqrt(d_model)
    columns = [z[t:t + d_model] for t in range(d_model, len(z), d_model)]
    q = [_dot(x, w) * sigma for w in columns[:d_k]]  # x W_Q, column by column
    k = [_dot(x, w) * sigma for w in columns[d_k:]]
    return _dot(q, k)


class ScoreVariance(NamedTuple):
    variance: float  # the Monte Carlo estimate of Var(e): (1/n) sum e^2, as E[e] = 0
    standard_error: float  # its standard error, sqrt(((1/n) sum e^4 - variance^2) / n)


def additive_score_variance(d_a: int, n: int = 1000, *, d: int = 64, sigma_w: float = 1.0,
                            seed: int = 0) -> ScoreVariance:
    """Return Var(e) for additive attention's score e = w_v . tanh(W_q q + W_k k), simulated.

    At initialisation: q, k with d independent N(0, 1) entries; W_q, W_k
    (d_a x d) with N(0, 1/d) entries; w_v with N(0, sigma_w^2) entries.  Given
    q and k, the d_a pre-activations u = W_q q + W_k k are independent
    N(0, (|q|^2 + |k|^2) / d), so they are drawn directly (d_a draws, not
    2 d_a d).  As E[e] = 0 and the units are independent given q and k,
        Var(e) = sigma_w^2 d_a E[tanh(u_1)^2],   E[tanh(u_1)^2] about 0.52 < 1.
    tanh bounds each unit, not their sum: with sigma_w = 1 the variance grows
    like d_a, as Var(q . k) grows like d_k.  With sigma_w^2 = 1/d_a (the
    fan-in initialisation of w_v) it is E[tanh^2] <= 1 whatever d_a: then no
    scale is needed.  Shapes: n scores of 2 d + 2 d_a draws each.

    >>> [round(additive_score_variance(d_a, d=16).variance, 1) for d_a in (16, 64)]
    [8.3, 32.2]
    >>> [round(additive_score_variance(d_a, d=16, sigma_w=d_a ** -0.5).variance, 2)
    ...  for d_a in (16, 64)]
    [0.52, 0.5]
    """
    fn = "additive_score_variance"
    d_a = _integer(fn, d_a, "d_a", minimum=1)
    n = _integer(fn, n, "n", minimum=1)
    d = _integer(fn, d, "d", minimum=1)
    sigma_w = _real(fn, sigma_w, "sigma_w")
    if sigma_w < 0:
        raise ValueError(f"{fn}: sigma_w is {sigma_w}; a standard deviation cannot be negative")
    _check_draws(fn, n * 2 * (d + d_a))
    rng = _rng(fn, seed)
    squares = [_unit_additive_score(rng, d_a, d) ** 2 for _ in range(n)]  # e^2 / sigma_w^2
    variance = math.fsum(squares) / n
    spread = math.sqrt(max(0.0, math.fsum(s * s for s in squares) / n - variance * variance))
    result = [sigma_w * sigma_w * variance, sigma_w * sigma_w * spread / math.sqrt(n)]
    return ScoreVariance(*_finite_samples(fn, result, f"sigma_w={sigma_w} is too large"))


def _unit_additive_score(rng: random.Random, d_a: int, d: int) -> float:
    """One score e / sigma_w = w . tanh(u) with w ~ N(0, I): the same draws for every sigma_w."""
    z = _normals(rng, 2 * d + 2 * d_a)  # q and k, then the pre-activations, then w
    spread = math.sqrt(math.fsum(v * v for v in z[:2 * d]) / d)  # sqrt((|q|^2 + |k|^2) / d)
    features = [math.tanh(spread * v) for v in z[2 * d:2 * d + d_a]]  # tanh(W_q q + W_k k)
    return _dot(z[2 * d + d_a:], features)


# ------------------------------------------------------ saturation and gradient

class Trial(NamedTuple):
    """One random attention row: a query against m keys, as at initialisation."""
    Q: Matrix  # 1 x d_k, N(0, 1) entries
    K: Matrix  # m x d_k
    V: Matrix  # m x d_v
    G: Matrix  # 1 x d_v, an upstream gradient dL/dO


def random_trials(d_k: int, *, m: int = 16, d_v: int = _D_V, trials: int = 100,
                  seed: int = 0) -> List[Trial]:
    """Return `trials` seeded draws of (Q, K, V, G) with independent N(0, 1) entries.

    Shapes: Q 1 x d_k, K m x d_k, V m x d_v, G 1 x d_v.

    >>> t = random_trials(4, m=3, d_v=2, trials=1)[0]
    >>> len(t.Q), len(t.K), len(t.K[0]), len(t.V[0]), len(t.G[0])
    (1, 3, 4, 2, 2)
    """
    return _random_trials("random_trials", d_k, m, d_v, trials, seed)


def _random_trials(fn: str, d_k: int, m: int, d_v: int, trials: int, seed) -> List[Trial]:
    d_k = _integer(fn, d_k, "d_k", minimum=1, maximum=_MAX_DK)
    m, d_v, trials = (_integer(fn, v, name, minimum=1) for name, v in
                      (("m", m), ("d_v", d_v), ("trials", trials)))
    _check_draws(fn, trials * (d_k + m * d_k + m * d_v + d_v))
    rng = _rng(fn, seed)
    return [_trial(rng, d_k, m, d_v) for _ in range(trials)]


def _trial(rng: random.Random, d_k: int, m: int, d_v: int) -> Trial:
    z = _normals(rng, d_k + m * d_k + m * d_v + d_v)  # Q, K, V, G in that order
    K_end = d_k + m * d_k
    V_end = K_end + m * d_v
    return Trial([z[:d_k]], _rows(z, d_k, d_k, K_end), _rows(z, d_v, K_end, V_end), [z[V_end:]])


def _rows(z: Vector, width: int, start: int, stop: int) -> Matrix:
    return [z[t:t + width] for t in range(start, stop, width)]


def _norm(rows: Matrix) -> float:
    return math.sqrt(math.fsum(v * v for row in rows for v in row))  # Frobenius


def softmax_entropy(x: Sequence[float]) -> float:
    """Return H(p) = -sum_i p_i log p_i in nats for p = softmax(x) (0 log 0 = 0).

    log p_i comes from log_softmax, accurate even where p_i is within an ulp of 1.
    Uniform over m keys gives ln m; one-hot gives 0.  Shapes: x of length m -> a float.

    >>> round(softmax_entropy([0.0] * 16), 12) == round(math.log(16), 12)
    True
    >>> softmax_entropy([0.0, -1e4]), round(softmax_entropy([1.0, 0.0]), 6)
    (0.0, 0.582203)
    """
    x = _logits("softmax_entropy", x, "x")
    terms = [p_i * lp_i for p_i, lp_i in zip(_softmax(x), log_softmax(x)) if p_i > 0.0]
    return max(0.0, -math.fsum(terms))  # H >= 0; rounding may leave -0.0 or -tiny


class Saturation(NamedTuple):
    max_weight: float  # mean over trials of max_j p_j
    entropy: float  # mean of H(p), nats
    jacobian_norm: float  # mean of ||diag(p) - p p^T||_F


class _Prepared(NamedTuple):
    """One trial, with what every scale c shares: the raw scores and the columns of K."""
    scores: Vector  # q . k_j, before scaling
    K_columns: Matrix  # K^T, d_k x m, for dQ = c dS K
    V: Matrix
    G: Matrix


def _prepared(trials: Sequence[Trial]) -> List[_Prepared]:
    return [_Prepared(_dots(t.Q[0], t.K), _transpose(t.K), t.V, t.G) for t in trials]


def _saturation_of(trials: Sequence[_Prepared], c: float) -> Saturation:
    """The mean largest weight, entropy and ||J||_F of softmax(c Q K^T) over the trials."""
    totals = [0.0, 0.0, 0.0]  # summed in order, trial by trial
    for trial in trials:
        logits = [c * s for s in trial.scores]
        for t, value in enumerate((max(_softmax(logits)), softmax_entropy(logits),
                                   _norm(softmax_jacobian(logits)))):
            totals[t] += value
    return Saturation(*(t / len(trials) for t in totals))


def saturation_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                     trials: int = 100, seed: int = 0) -> Saturation:
    """Return the mean largest weight, entropy and Jacobian norm of p = softmax(c q . k_j).

    One query against m keys per trial, c = scale_factor(scale_name, d_k);
    J = diag(p) - p p^T.  Uniform weights give max p = 1/m, H = ln m and
    ||J||_F = sqrt(1/m - 1/m^2).

    >>> [round(v, 4) for v in saturation_stats(64, "none", trials=20)]
    [0.8114, 0.4697, 0.2106]
    >>> [round(v, 4) for v in saturation_stats(64, trials=20)]
    [0.245, 2.3513, 0.3071]
    """
    fn = "saturation_stats"
    c = _scale_factor(fn, scale_name, d_k)
    return _saturation_of(_prepared(_random_trials(fn, d_k, m, _D_V, trials, seed)), c)


class GradientNorms(NamedTuple):
    score_grad: float  # mean over trials of ||dL/dS|| (S: the logits, after scaling)
    query_grad: float  # mean of ||dL/dQ||
    score_grad_median: float  # the median: the typical trial, not the rare near-tie
    query_grad_median: float


def _gradients_of(trials: Sequence[_Prepared], c: float) -> GradientNorms:
    """The mean and median norms of dL/dS and dL/dQ = c dS K over the trials."""
    score_norms, query_norms = [], []
    for trial in trials:
        P = [_softmax([c * s for s in trial.scores])]  # 1 x m
        dS = _score_gradient(P, trial.V, trial.G)  # the gradient reaching the logits
        dQ = [[c * v for v in _dots(dS[0], trial.K_columns)]]  # dQ = c dS K, 1 x d_k
        score_norms.append(_norm(dS))
        query_norms.append(_norm(dQ))
    return GradientNorms(mean(score_norms), mean(query_norms),
                         statistics.median(score_norms), statistics.median(query_norms))


def gradient_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                   trials: int = 100, seed: int = 0) -> GradientNorms:
    """Return the mean and median norms of dL/dS and dL/dQ for a random upstream gradient.

    dS = the softmax backward of dP = G V^T (as score_gradient), dQ = c dS K
    (as attention_backward), c = scale_factor(scale_name, d_k).

    >>> [round(v, 4) for v in gradient_stats(64, "none", trials=20)]
    [0.576, 4.4534, 0.3601, 2.9635]
    >>> [round(v, 4) for v in gradient_stats(64, trials=20)]
    [0.8653, 0.8579, 0.8647, 0.8683]
    """
    fn = "gradient_stats"
    c = _scale_factor(fn, scale_name, d_k)
    return _gradients_of(_prepared(_random_trials(fn, d_k, m, _D_V, trials, seed)), c)


# ------------------------------------------------------------------- the report

def _bar_chart(rows: Sequence[Tuple[str, float]], width: int = 40,
               top: Optional[float] = None) -> List[str]:
    """One line per (label, value): a bar of '#' proportional to value / top (values >= 0)."""
    top = max(v for _, v in rows) if top is None else top
    label_width = max(len(label) for label, _ in rows)
    lines = []
    for label, value in rows:
        bar = "#" * round(width * value / top) if top > 0 else ""
        lines.append(f"{label:>{label_width}} |{bar:<{width}} {value:.4g}".rstrip())
    return lines


def _header(title: str) -> str:
    return f"\n{title}\n{'-' * len(title)}"


def _draw_dot_products(dks: Sequence[int], samples: int, seed: int) -> Dict[int, Vector]:
    """{d_k: sample_dot_products(d_k, samples, seed=seed + d_k)}: the draws of sections 1, 2, 5."""
    return {d_k: sample_dot_products(d_k, samples, seed=seed + d_k) for d_k in dks}


def _second_moment(draws: Vector) -> float:
    # the mean of q . k is known to be 0, so (1/n) sum x^2 estimates the variance
    return math.fsum(x * x for x in draws) / len(draws)


def _report_variance(draws: Dict[int, Vector]) -> List[str]:
    """Section 1: Var(q . k) and Var(q . k / sqrt(d_k)) in theory and simulated."""
    n = len(next(iter(draws.values())))
    lines = [_header("1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)"),
             f"   {n} fresh (q, k) pairs per d_k; +- is one standard error, "
             "sqrt((3 d_k^2 + 6 d_k - d_k^2) / n)",
             f"{'d_k':>6} {'theory':>7} {'simulated':>17} {'std':>7} {'sqrt(d_k)':>9}"
             f" {'scaled theory':>13} {'scaled simulated':>17}"]
    for d_k, s in draws.items():
        v, se = _second_moment(s), variance_standard_error(d_k, n)
        theory_scaled = scaled_variance(dot_product_variance(d_k), 1 / math.sqrt(d_k))
        lines.append(f"{d_k:>6} {dot_product_variance(d_k):>7} {v:>9.1f} +- {se:<5.1f}"
                     f" {math.sqrt(v):>7.2f} {math.sqrt(d_k):>9.2f} {theory_scaled:>13.4g}"
                     f" {v / d_k:>9.3f} +- {se / d_k:.3f}")
    return lines


def _report_projection(samples: int, seed: int) -> List[str]:
    """Section 1b: the same variance when q and k come from projections of a normalised x."""
    d_model, d_k = _PROJECTION
    s = sample_projected_dot_products(d_k, samples, d_model=d_model, seed=seed)
    v, se = _second_moment(s), variance_standard_error(d_k, samples)
    return [_header("1b. The projection setting: q = LN(x) W_Q, k = LN(x) W_K"),
            f"   d_model = {d_model}, d_k = {d_k}, W entries N(0, 1/d_model), {samples} samples",
            f"   Var(q . k): theory {dot_product_variance(d_k)}, simulated {v:.2f} +- {se:.2f}"]


def _report_scales(draws: Dict[int, Vector]) -> List[str]:
    """Section 2: the variance of c (q . k) for each scale choice c."""
    lines = [_header("2. Variance of the scaled score c (q . k): theory / simulated"),
             f"{'d_k':>6}" + "".join(f" {name:>21}" for name in SCALE_CHOICES)]
    for d_k, s in draws.items():
        v = _second_moment(s)
        cells = [f"{scaled_variance(d_k, c):.4g} / {c * c * v:.4g}"
                 for c in (scale_factor(name, d_k) for name in SCALE_CHOICES)]
        lines.append(f"{d_k:>6}" + "".join(f" {cell:>21}" for cell in cells))
    lines += ["   only 1/sqrt(d_k) keeps the variance at 1 for every d_k; 1/d_k drives it to 0,",
              "   1/ln(d_k) and no scaling let it grow with d_k"]
    return lines


def _report_saturation_and_gradients(dks: Sequence[int], m: int, trials: int,
                                     seed: int) -> List[str]:
    """Sections 3 and 4, from one set of random_trials per d_k, unscaled against scaled."""
    saturation = [_header(f"3. Saturation of softmax over m = {m} keys ({trials} trials per d_k)"),
                  f"   uniform weights would give max p = {1 / m:.4f} and entropy "
                  f"ln {m} = {math.log(m):.4f}",
                  f"{'':>6} {'unscaled':>29}   | {'scaled by 1/sqrt(d_k)':>29}",
                  f"{'d_k':>6} {'max p':>9} {'entropy':>9} {'||J||_F':>9}   |"
                  f" {'max p':>9} {'entropy':>9} {'||J||_F':>9}"]
    gradient = [_header("4. Gradient through attention_backward (random upstream gradient)"),
                "   each cell: mean / median over the trials; ratio = unscaled / scaled",
                f"{'d_k':>6} {'||dS|| unscaled':>18} {'||dS|| scaled':>18} {'ratio':>18}"
                f" {'||dQ|| unscaled':>18} {'||dQ|| scaled':>18} {'ratio':>18}"]
    norms = {}
    for d_k in dks:
        draws = _prepared(random_trials(d_k, m=m, trials=trials, seed=seed + d_k))
        u, s = (_saturation_of(draws, scale_factor(name, d_k)) for name in ("none", "1/sqrt(d_k)"))
        saturation.append(f"{d_k:>6} {u.max_weight:>9.4f} {u.entropy:>9.4f} "
                          f"{u.jacobian_norm:>9.4f}   | {s.max_weight:>9.4f} {s.entropy:>9.4f} "
                          f"{s.jacobian_norm:>9.4f}")
        gu, gs = norms[d_k] = tuple(_gradients_of(draws, scale_factor(name, d_k))
                                    for name in ("none", "1/sqrt(d_k)"))
        gradient.append(f"{d_k:>6}" + "".join(
            f" {a:>8.2e} / {b:<7.1e}" for a, b in (
                (gu.score_grad, gu.score_grad_median), (gs.score_grad, gs.score_grad_median),
                (gu.score_grad / gs.score_grad, gu.score_grad_median / gs.score_grad_median),
                (gu.query_grad, gu.query_grad_median), (gs.query_grad, gs.query_grad_median),
                (gu.query_grad / gs.query_grad, gu.query_grad_median / gs.query_grad_median))))
    gradient += [("   dS is the gradient reaching the softmax logits, "
                  "dQ the one reaching the queries."),
                 "   Unscaled, the typical (median) gradient collapses as d_k grows; the mean of",
                 "   ||dQ|| does not, because the rare rows whose top two scores nearly tie keep",
                 "   an O(1) softmax gradient and multiply it by ||k|| ~ sqrt(d_k)."]
    return saturation + gradient + _report_query_factor(norms)


def _report_query_factor(norms: Dict[int, Tuple[GradientNorms, GradientNorms]]) -> List[str]:
    """Section 4, continued: why median ||dQ|| can be larger unscaled although dS falls."""
    lines = ["   Why median ||dQ|| can be larger unscaled though ||dS|| is smaller: dQ = c dS K",
             "   with c = 1 unscaled and 1/sqrt(d_k) scaled, and each key has ||k|| ~ sqrt(d_k),",
             "   so ||dQ|| ~ c sqrt(d_k) ||dS||: the unscaled gradient keeps a factor sqrt(d_k).",
             f"{'d_k':>6} {'c sqrt(d_k) median ||dS||: unscaled':>36} {'scaled':>8}"
             f" {'median ||dQ||: unscaled':>25} {'scaled':>8}"]
    for d_k, (gu, gs) in norms.items():
        lines.append(f"{d_k:>6} {math.sqrt(d_k) * gu.score_grad_median:>36.2e}"
                     f" {gs.score_grad_median:>8.2e} {gu.query_grad_median:>25.2e}"
                     f" {gs.query_grad_median:>8.2e}")
    if 64 in norms:  # the paper's d_k
        gu, gs = norms[64]
        lines += [f"   At d_k = 64, median ||dS|| is {gu.score_grad_median:.2f} unscaled against "
                  f"{gs.score_grad_median:.2f} scaled, but times sqrt(64) = 8",
                  f"   it is {8 * gu.score_grad_median:.2f}: hence median ||dQ|| "
                  f"{gu.query_grad_median:.2f} unscaled against {gs.query_grad_median:.2f} "
                  "scaled."]
    return lines


def _report_pictures(draws: Dict[int, Vector]) -> List[str]:
    """Section 5: softmax at moderate and large scale, and variance against d_k, as bars."""
    lines = [_header("5. Pictures")]
    moderate = [2.0, 1.0, 0.0, -1.0]
    for title, x in (("softmax([2, 1, 0, -1])", moderate),
                     ("softmax([20, 10, 0, -10]): the same logits times 10",
                      [10 * v for v in moderate])):
        p = _softmax(x)
        lines.append(f"   {title}")
        lines += ["   " + line for line in _bar_chart([(f"p_{i + 1}", v) for i, v in enumerate(p)],
                                                       top=1.0)]
        diagonal = [f"{row[i]:.3g}" for i, row in enumerate(softmax_jacobian(x))]
        lines.append(f"   Jacobian diagonal p_i (1 - p_i): [{', '.join(diagonal)}]")
    variances = [(f"d_k={d_k}", _second_moment(s)) for d_k, s in draws.items()]
    lines.append("   simulated Var(q . k): grows in proportion to d_k")
    lines += ["   " + line for line in _bar_chart(variances)]
    lines.append("   simulated Var(q . k / sqrt(d_k)): level at 1 (bars drawn from 0 to 2)")
    lines += ["   " + line for line in _bar_chart([(label, v / d_k) for (label, v), d_k
                                                    in zip(variances, draws)], top=2.0)]
    return lines


# ------------------------------------------------------------------- the command line

_MAX_REPORT_DRAWS = 5 * _MAX_DRAWS  # normal draws the whole report may make (about 10 s)


def _dk_list(text: str) -> List[int]:
    try:
        dks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--dk takes whole numbers separated by commas, not {text!r}") from None
    if not dks or min(dks) < 2:
        raise argparse.ArgumentTypeError("--dk needs at least one d_k, each >= 2 "
                                         "(the 1/ln(d_k) scale of section 2 is undefined at 1)")
    return dks


def _at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value
    return parse


def _report_draws(args: argparse.Namespace) -> List[int]:
    """The normal draws of each sampling call the report makes (sections 1, 1b, 3)."""
    d_model, d_k = _PROJECTION
    return ([2 * d_k * args.samples for d_k in args.dk]
            + [max(1, args.samples // 4) * d_model * (1 + 2 * d_k)]
            + [args.trials * (d_k + _D_V) * (1 + args.keys) for d_k in args.dk])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 stats.py",
        description="Why attention divides q . k by sqrt(d_k), shown in numbers: the variance "
                    "of q . k, the effect of each scale choice, softmax saturation, the gradient "
                    "that reaches Q, and terminal pictures.  Same --seed, same output.")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--samples", type=_at_least(1), default=1000,
                        help="Monte Carlo samples of q . k per d_k (default 1000)")
    parser.add_argument("--dk", type=_dk_list, default=list(_DEFAULT_DKS),
                        help="comma-separated d_k values (default 16,64,128,512,1024)")
    parser.add_argument("--trials", type=_at_least(1), default=60,
                        help="random attention rows per d_k for sections 3 and 4 (default 60)")
    parser.add_argument("--keys", type=_at_least(2), default=16,
                        help="keys per attention row, m >= 2 (default 16; with one key the "
                             "weight is always 1 and no gradient flows)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Return the exit status 0 after printing the report, sections 1 to 5.

    Every number in it is computed by the functions above; the report is pinned
    line by line in tests/test_report.py.  Bad options exit through argparse
    with status 2.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    draws = _report_draws(args)
    if max(draws) > _MAX_DRAWS or sum(draws) > _MAX_REPORT_DRAWS:
        parser.error(f"these options need {sum(draws)} normal draws, {max(draws)} in one "
                     f"table row; the limits are {_MAX_REPORT_DRAWS} in all and {_MAX_DRAWS} per "
                     "row (about 2 s each): lower --samples, --trials, --keys or --dk")
    print(f"The sqrt(d_k) in softmax(Q K^T / sqrt(d_k)) V: seed {args.seed}, "
          f"{args.samples} samples, d_k in {args.dk}")
    dot_products = _draw_dot_products(args.dk, args.samples, args.seed)
    for section in (lambda: _report_variance(dot_products),
                    lambda: _report_projection(max(1, args.samples // 4), args.seed),
                    lambda: _report_scales(dot_products),
                    lambda: _report_saturation_and_gradients(args.dk, args.keys, args.trials,
                                                             args.seed),
                    lambda: _report_pictures(dot_products)):
        print("\n".join(section()), flush=True)
    return 0


def _run_command_line() -> int:
    """main(), quietly when the reader of the report closes the pipe (`| head -1`)."""
    try:
        return main()
    except BrokenPipeError:
        # The recipe of Python's signal docs: point stdout at devnull, so that a flush at
        # exit of anything still buffered cannot fail again and print a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(_run_command_line())
