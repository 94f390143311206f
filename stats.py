"""The variance argument for the sqrt(d_k) in attention, in numbers you can reproduce.

If q and k have independent components with mean 0 and variance 1, then
Var(q . k) = d_k: unscaled scores spread like sqrt(d_k), softmax saturates,
its Jacobian shrinks and the gradient to Q and K vanishes.  Multiplying the
scores by 1/sqrt(d_k) brings the variance back to 1.  `python3 stats.py`
prints every link of that chain; each table comes from a function here.

Public functions:

    mean(xs), variance(xs, ddof=0)          two-pass, with the correction term
    product_variance(mx, vx, my, vy)        Var(XY) for independent X, Y
    dot_product_variance(d_k, ...)          Var(q . k) = d_k Var(q_i k_i)
    scaled_variance(var, c)                 Var(c X) = c^2 Var(X)
    SCALE_CHOICES, scale_factor(name, d_k)  none, 1/sqrt(d_k), 1/d_k, 1/ln(d_k)
    exact_dot_product_moments(d_k, values, probabilities)   exact, as Fractions
    dot_product_fourth_moment(d_k), variance_standard_error(d_k, n)
    sample_dot_products(d_k, n, seed=, scale=)              Monte Carlo, N(0, 1)
    layer_norm(x), sample_projected_dot_products(d_k, n, d_model=, seed=)
    random_trials(d_k, ...)                 seeded (Q, K, V, G) for one query row
    saturation_stats(d_k, scale_name, ...)  largest weight, entropy, ||J||_F (saturation_of)
    gradient_stats(d_k, scale_name, ...)    ||dL/dS||, ||dL/dQ|| through attention_backward
                                            (gradients_of: the same from given trials)
    softmax_entropy(x)                      H(softmax(x)) in nats
    bar_chart(rows)                         a terminal bar chart in plain characters
    DOCUMENT_EXAMPLES, worked_examples_table(), DOCUMENT_SPREADS, spread_table()
                                            the documents' numbers against the computed
    main(argv)                              the report printed by `python3 stats.py`

>>> dot_product_variance(64), scaled_variance(dot_product_variance(64), 1 / 8)
(64, 1.0)

Exceptions: ValueError for too few data points, a non-positive d_k, negative
variances, probabilities that are negative or do not sum to 1; TypeError for
things that are not numbers.  Every message names the function.
"""

import argparse  # the command line of the main job
import math  # sqrt, log, fsum
import operator  # mul, for dot products
import random  # seeded Monte Carlo
import statistics  # median
import sys  # argv
from fractions import Fraction  # exact moments
from numbers import Real  # what counts as a number
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from attention import attention_backward, attention_steps, score_gradient
from softmax import as_reals, log_softmax, softmax, softmax_jacobian

Vector = List[float]  # a vector is a list of floats
DEFAULT_DKS = (16, 64, 128, 512, 1024)  # the d_k of the report's tables


# ------------------------------------------------------------ mean and variance

def _finite_data(fn: str, xs: Sequence[float]) -> Vector:
    data = as_reals(fn, xs, "xs")
    if not all(map(math.isfinite, data)):
        i = next(i for i, v in enumerate(data) if not math.isfinite(v))
        raise ValueError(f"{fn}: xs[{i}] is {data[i]}; data must be finite")
    return data


def mean(xs: Sequence[float]) -> float:
    """Return E[X] estimated by (x_1 + ... + x_n) / n, the sum correctly rounded.

    >>> mean([1, 2, 3, 4])
    2.5
    """
    data = _finite_data("mean", xs)
    return math.fsum(data) / len(data)


def variance(xs: Sequence[float], ddof: int = 0) -> float:
    """Return Var(X) = E[(X - E[X])^2] = sum_i (x_i - x_bar)^2 / (n - ddof).

    ddof=0 gives the population variance, ddof=1 the unbiased sample variance.
    Two passes: first x_bar, then the squared deviations.  The one-pass form
    E[X^2] - E[X]^2 subtracts two nearly equal large numbers and loses every
    digit when the data sit far from 0 (try data offset by 1e9).  The second
    term below, (sum_i (x_i - x_bar))^2 / n, is zero in exact arithmetic; in
    floats it removes the error left by rounding x_bar.

    >>> variance([1, 2, 3, 4]), variance([1, 2, 3, 4], ddof=1)
    (1.25, 1.6666666666666667)
    """
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"variance: ddof must be a non-negative int, not {ddof!r}")
    if isinstance(xs, Sequence) and len(xs) <= ddof:
        raise ValueError(f"variance: requires at least {ddof + 1} data points with "
                         f"ddof={ddof}; got {len(xs)}")
    data = _finite_data("variance", xs)
    x_bar = math.fsum(data) / len(data)
    deviations = [x - x_bar for x in data]
    correction = math.fsum(deviations) ** 2 / len(data)
    return (math.fsum(d * d for d in deviations) - correction) / (len(data) - ddof)


# ------------------------------------------------------------- the theory

def _check_moments(fn: str, **values) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, Real):
            raise TypeError(f"{fn}: {name} must be a real number, not {v!r}")
        if not math.isfinite(v):
            raise ValueError(f"{fn}: {name} is {v}; it must be finite")
        if name.startswith("var") and v < 0:
            raise ValueError(f"{fn}: {name} is {v}; a variance cannot be negative")


def _check_dk(fn: str, d_k: int) -> None:
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"{fn}: d_k must be a positive int, not {d_k!r}")


def product_variance(mean_x: float, var_x: float, mean_y: float, var_y: float) -> float:
    """Return Var(XY) = var_x var_y + mean_x^2 var_y + mean_y^2 var_x for independent X, Y.

    From Var(XY) = E[X^2] E[Y^2] - E[X]^2 E[Y]^2 with E[X^2] = var_x + mean_x^2.
    With zero means it is E[X^2] E[Y^2] = var_x var_y.  Exact for Fractions.

    >>> product_variance(0, 1, 0, 1), product_variance(Fraction(1, 2), 1, 2, 3)
    (1, Fraction(31, 4))
    """
    _check_moments("product_variance", mean_x=mean_x, var_x=var_x, mean_y=mean_y, var_y=var_y)
    return var_x * var_y + mean_x ** 2 * var_y + mean_y ** 2 * var_x


def dot_product_variance(d_k: int, mean_q: float = 0, var_q: float = 1,
                         mean_k: float = 0, var_k: float = 1) -> float:
    """Return Var(q . k) = d_k Var(q_i k_i) for q, k with i.i.d. independent components.

    The d_k products q_i k_i are independent, so their variances add (no cross
    terms); with mean 0 and variance 1 this is exactly d_k.

    >>> dot_product_variance(512), dot_product_variance(4, var_q=2, var_k=3)
    (512, 24)
    """
    _check_dk("dot_product_variance", d_k)
    return d_k * product_variance(mean_q, var_q, mean_k, var_k)


def scaled_variance(var: float, c: float) -> float:
    """Return Var(c X) = c^2 Var(X).

    >>> scaled_variance(64, Fraction(1, 8))
    Fraction(1, 1)
    """
    _check_moments("scaled_variance", var=var, c=c)
    return c * c * var


SCALE_CHOICES = ("none", "1/sqrt(d_k)", "1/d_k", "1/ln(d_k)")  # the factors the documents compare


def scale_factor(name: str, d_k: int) -> float:
    """Return the multiplier c applied to q . k by the named choice.

    none: 1;  1/sqrt(d_k): the paper's;  1/d_k;  1/ln(d_k) (needs d_k >= 2).

    >>> [round(scale_factor(name, 64), 4) for name in SCALE_CHOICES]
    [1.0, 0.125, 0.0156, 0.2404]
    """
    _check_dk("scale_factor", d_k)
    factors = {"none": lambda: 1.0, "1/sqrt(d_k)": lambda: 1.0 / math.sqrt(d_k),
               "1/d_k": lambda: 1.0 / d_k, "1/ln(d_k)": lambda: 1.0 / math.log(d_k)}
    if name not in factors:
        raise ValueError(f"scale_factor: unknown choice {name!r}; choose one of {SCALE_CHOICES}")
    if name == "1/ln(d_k)" and d_k < 2:
        raise ValueError("scale_factor: 1/ln(d_k) needs d_k >= 2 (ln 1 = 0)")
    return factors[name]()


class Moments(NamedTuple):
    mean: Fraction  # E[q . k]
    variance: Fraction  # Var(q . k)


def _distribution(fn: str, values, probabilities) -> Tuple[Dict[int, int], int, int]:
    """Return (pmf, L, D): the distribution with integer values v L and integer weights p D.

    Scaling by the common denominators L (of the values) and D (of the
    probabilities) keeps every later convolution in fast integer arithmetic.
    """
    if not all(map(math.isfinite, as_reals(fn, values, "values"))):
        raise ValueError(f"{fn}: every value must be finite; got {list(values)}")
    values = [Fraction(v) for v in values]  # exact: a float converts without rounding
    if probabilities is None:
        probabilities = [Fraction(1, len(values))] * len(values)
    as_reals(fn, probabilities, "probabilities")
    probabilities = [Fraction(p) for p in probabilities]
    if len(probabilities) != len(values):
        raise ValueError(f"{fn}: {len(values)} values but {len(probabilities)} probabilities")
    if any(p < 0 for p in probabilities) or sum(probabilities) != 1:
        raise ValueError(f"{fn}: probabilities must be >= 0 and sum to exactly 1 "
                         f"(got sum {sum(probabilities)}); pass Fractions such as Fraction(1, 3)")
    L = _lcm(v.denominator for v in values)
    D = _lcm(p.denominator for p in probabilities)
    pmf: Dict[int, int] = {}
    for v, p in zip(values, probabilities):
        key = int(v * L)
        pmf[key] = pmf.get(key, 0) + int(p * D)
    return pmf, L, D


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
    while count:
        if count & 1:
            total = _convolve(total, pmf, operator.add)
        pmf = _convolve(pmf, pmf, operator.add)
        count >>= 1
    return total


def exact_dot_product_moments(d_k: int, values: Sequence[float],
                              probabilities: Optional[Sequence[float]] = None) -> Moments:
    """Return the exact (E[q . k], Var(q . k)) when every q_i and k_i is drawn
    independently from P(X = values[t]) = probabilities[t] (uniform if None).

    No sampling: the distribution of q_i k_i, then of its sum over d_k
    components, is built exactly by convolution, and the moments are Fractions.
    The work grows with the number of distinct sums, so keep d_k in the
    hundreds for two-point distributions and in the tens for richer ones.
    For the +-1 (Rademacher) distribution the answer is exactly (0, d_k).

    >>> exact_dot_product_moments(8, [-1, 1])
    Moments(mean=Fraction(0, 1), variance=Fraction(8, 1))
    """
    fn = "exact_dot_product_moments"
    _check_dk(fn, d_k)
    component, L, D = _distribution(fn, values, probabilities)
    product = _convolve(component, component, operator.mul)  # q_i k_i, values scaled by L^2
    dot = _sum_of_copies(product, d_k)  # sum_i q_i k_i
    total_weight = D ** (2 * d_k)
    first = Fraction(sum(s * w for s, w in dot.items()), total_weight * L ** 2)
    second = Fraction(sum(s * s * w for s, w in dot.items()), total_weight * L ** 4)
    return Moments(first, second - first * first)  # exact arithmetic: no cancellation to fear


def dot_product_fourth_moment(d_k: int) -> int:
    """Return E[(q . k)^4] = 3 d_k^2 + 6 d_k for independent N(0, 1) components.

    Expanding the fourth power, only index patterns that pair up survive:
    i = j = l = m gives d_k E[q^4] E[k^4] = 9 d_k, and the three pairings of
    two distinct indices give 3 d_k (d_k - 1).

    >>> dot_product_fourth_moment(1), dot_product_fourth_moment(64)
    (9, 12672)
    """
    _check_dk("dot_product_fourth_moment", d_k)
    return 3 * d_k * d_k + 6 * d_k


def variance_standard_error(d_k: int, n: int) -> float:
    """Return sqrt((E[(q.k)^4] - d_k^2) / n), the standard error of (1/n) sum (q.k)^2.

    That average estimates Var(q . k) = d_k when the mean is known to be 0.

    >>> variance_standard_error(64, 1000) == math.sqrt((3 * 64**2 + 6 * 64 - 64**2) / 1000)
    True
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"variance_standard_error: n must be a positive int, not {n!r}")
    return math.sqrt((dot_product_fourth_moment(d_k) - d_k * d_k) / n)


# ----------------------------------------------------------------- simulation

def _check_count(fn: str, name: str, n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{fn}: {name} must be a positive int, not {n!r}")


def _rng(fn: str, seed) -> random.Random:
    """A generator from an explicit int seed, or the given random.Random itself."""
    if isinstance(seed, random.Random):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{fn}: seed must be an int or a random.Random, not {seed!r}; "
                        "every run must be reproducible")
    return random.Random(seed)


def _normals(rng: random.Random, count: int) -> Vector:
    return [rng.gauss(0.0, 1.0) for _ in range(count)]


def _dot(u: Vector, v: Vector) -> float:
    return math.fsum(map(operator.mul, u, v))  # q . k, correctly rounded


def sample_dot_products(d_k: int, n: int, *, seed: int = 0, scale: float = 1.0) -> Vector:
    """Return n samples of scale * (q . k), q and k with independent N(0, 1) components.

    Each sample draws a fresh pair (q, k): reusing one q against many keys
    would make the samples correlated and the variance estimate misleading.

    >>> a = sample_dot_products(4, 2, seed=1)
    >>> [round(s, 4) for s in a], a == sample_dot_products(4, 2, seed=1)
    ([-0.3308, -1.3222], True)
    """
    fn = "sample_dot_products"
    _check_dk(fn, d_k)
    _check_count(fn, "n", n)
    _check_moments(fn, scale=scale)
    rng = _rng(fn, seed)
    return [scale * _dot(_normals(rng, d_k), _normals(rng, d_k)) for _ in range(n)]


def layer_norm(x: Sequence[float]) -> Vector:
    """Return (x - mean(x)) / std(x), so the result has mean 0 and variance 1 (no gain, no bias).

    >>> layer_norm([1.0, 3.0])
    [-1.0, 1.0]
    """
    data = _finite_data("layer_norm", x)
    sigma = math.sqrt(variance(data))
    if sigma == 0.0:
        raise ValueError(f"layer_norm: all {len(data)} entries are equal; the variance is 0")
    mu = mean(data)
    return [(v - mu) / sigma for v in data]


def sample_projected_dot_products(d_k: int, n: int, *, d_model: int = 64,
                                  seed: int = 0) -> Vector:
    """Return n samples of q . k with q = x W_Q, k = x W_K as at initialisation.

    x is a layer-normalised vector of d_model N(0, 1) draws; W_Q and W_K are
    independent d_model x d_k matrices with N(0, 1/d_model) entries, fresh for
    every sample.  Given x, each q_c = x . W_Q[:, c] is then N(0, |x|^2 / d_model)
    = N(0, 1), independent of k: the textbook assumptions hold, and
    Var(q . k) = d_k again.

    >>> len(sample_projected_dot_products(4, 3, d_model=8, seed=0))
    3
    """
    fn = "sample_projected_dot_products"
    _check_dk(fn, d_k)
    _check_count(fn, "n", n)
    _check_count(fn, "d_model", d_model)
    if d_model < 2:
        raise ValueError(f"{fn}: d_model must be at least 2 for layer_norm, not {d_model}")
    rng = _rng(fn, seed)
    sigma = 1.0 / math.sqrt(d_model)
    samples = []
    for _ in range(n):
        x = layer_norm(_normals(rng, d_model))
        q = [_dot(x, _normals(rng, d_model)) * sigma for _ in range(d_k)]  # x W_Q, column by column
        k = [_dot(x, _normals(rng, d_model)) * sigma for _ in range(d_k)]
        samples.append(_dot(q, k))
    return samples


# ------------------------------------------------------ saturation and gradient

class Trial(NamedTuple):
    """One random attention row: a query against m keys, as at initialisation."""
    Q: List[Vector]  # 1 x d_k, N(0, 1) entries
    K: List[Vector]  # m x d_k
    V: List[Vector]  # m x d_v
    G: List[Vector]  # 1 x d_v, an upstream gradient dL/dO


def random_trials(d_k: int, *, m: int = 16, d_v: int = 8, trials: int = 100,
                  seed: int = 0) -> List[Trial]:
    """Return `trials` seeded draws of (Q, K, V, G) with independent N(0, 1) entries.

    >>> t = random_trials(4, m=3, d_v=2, trials=1)[0]
    >>> len(t.Q), len(t.K), len(t.K[0]), len(t.V[0]), len(t.G[0])
    (1, 3, 4, 2, 2)
    """
    fn = "random_trials"
    _check_dk(fn, d_k)
    for name, count in (("m", m), ("d_v", d_v), ("trials", trials)):
        _check_count(fn, name, count)
    rng = _rng(fn, seed)
    return [Trial([_normals(rng, d_k)], [_normals(rng, d_k) for _ in range(m)],
                  [_normals(rng, d_v) for _ in range(m)], [_normals(rng, d_v)])
            for _ in range(trials)]


def _norm(rows: List[Vector]) -> float:
    return math.sqrt(math.fsum(v * v for row in rows for v in row))  # Frobenius


def softmax_entropy(x: Sequence[float]) -> float:
    """Return H(p) = -sum_i p_i log p_i in nats for p = softmax(x) (0 log 0 = 0).

    log p_i comes from log_softmax, accurate even where p_i is within an ulp of 1.
    Uniform over m keys gives ln m; one-hot gives 0.

    >>> round(softmax_entropy([0.0] * 16), 12) == round(math.log(16), 12), softmax_entropy([0.0, -1e4])
    (True, 0.0)
    """
    p = softmax(x)
    return max(0.0, -math.fsum(pi * lp for pi, lp in zip(p, log_softmax(x)) if pi > 0.0))


class Saturation(NamedTuple):
    max_weight: float  # mean over trials of max_j p_j
    entropy: float  # mean of H(p), nats
    jacobian_norm: float  # mean of ||diag(p) - p p^T||_F


def saturation_of(trials: Sequence[Trial], c: float) -> Saturation:
    """Return the mean largest weight, entropy and ||J||_F of softmax(c Q K^T) over the trials.

    Equal keys make every row uniform: max p = 1/m, H = ln m, ||J||_F = sqrt(1/m - 1/m^2).

    >>> same = Trial([[1.0, 0.0]], [[0.5, 0.5]] * 4, [[1.0]] * 4, [[1.0]])
    >>> [round(v, 6) for v in saturation_of([same], 1.0)] == [0.25, round(math.log(4), 6), round(math.sqrt(3) / 4, 6)]
    True
    """
    totals = [0.0, 0.0, 0.0]
    for trial in trials:
        logits = attention_steps(trial.Q, trial.K, trial.V, scale=c).scaled_scores[0]
        for t, value in enumerate((max(softmax(logits)), softmax_entropy(logits),
                                   _norm(softmax_jacobian(logits)))):
            totals[t] += value
    return Saturation(*(t / len(trials) for t in totals))


def saturation_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                     trials: int = 100, seed: int = 0) -> Saturation:
    """Return the mean largest weight, entropy and Jacobian norm of softmax(c q . k_j).

    One query against m keys per trial, c = scale_factor(scale_name, d_k).

    >>> s = saturation_stats(1024, "none", trials=20)
    >>> s.max_weight > 0.9, s.jacobian_norm < 0.1
    (True, True)
    """
    c = scale_factor(scale_name, d_k)
    return saturation_of(random_trials(d_k, m=m, trials=trials, seed=seed), c)


class GradientNorms(NamedTuple):
    score_grad: float  # mean over trials of ||dL/dS|| (S: the logits, after scaling)
    query_grad: float  # mean of ||dL/dQ||
    score_grad_median: float  # the median: the typical trial, not the rare near-tie
    query_grad_median: float


def gradients_of(trials: Sequence[Trial], c: float) -> GradientNorms:
    """Return the mean and median norms of dL/dS and dL/dQ through attention_backward.

    Equal values V make the output independent of the weights, so no gradient flows:

    >>> flat = Trial([[1.0, 0.0]], [[0.5, 0.5], [1.0, 0.0]], [[2.0], [2.0]], [[1.0]])
    >>> gradients_of([flat], 1.0)
    GradientNorms(score_grad=0.0, query_grad=0.0, score_grad_median=0.0, query_grad_median=0.0)
    """
    score_norms, query_norms = [], []
    for trial in trials:
        weights = attention_steps(trial.Q, trial.K, trial.V, scale=c).weights
        score_norms.append(_norm(score_gradient(weights, trial.V, trial.G)))
        query_norms.append(_norm(attention_backward(trial.Q, trial.K, trial.V, trial.G, scale=c).dQ))
    return GradientNorms(mean(score_norms), mean(query_norms),
                         statistics.median(score_norms), statistics.median(query_norms))


def gradient_stats(d_k: int, scale_name: str = "1/sqrt(d_k)", *, m: int = 16,
                   trials: int = 100, seed: int = 0) -> GradientNorms:
    """Return the norms of dL/dS and dL/dQ through attention_backward for a random
    upstream gradient G = dL/dO, with c = scale_factor(scale_name, d_k).

    >>> unscaled = gradient_stats(512, "none", trials=20)
    >>> scaled = gradient_stats(512, "1/sqrt(d_k)", trials=20)
    >>> unscaled.score_grad_median < scaled.score_grad_median / 10
    True
    """
    c = scale_factor(scale_name, d_k)
    return gradients_of(random_trials(d_k, m=m, trials=trials, seed=seed), c)


# ------------------------------------------------------------------- pictures

def bar_chart(rows: Sequence[Tuple[str, float]], width: int = 40,
              top: Optional[float] = None) -> List[str]:
    """Return one line per (label, value): a bar of '#' proportional to value / top.

    >>> for line in bar_chart([("a", 1.0), ("b", 0.5)], width=4):
    ...     print(line)
    a |#### 1
    b |##   0.5
    """
    if not rows or not all(math.isfinite(v) and v >= 0 for _, v in rows):
        raise ValueError("bar_chart: needs at least one row, every value finite and >= 0")
    top = max(v for _, v in rows) if top is None else top
    label_width = max(len(label) for label, _ in rows)
    lines = []
    for label, value in rows:
        bar = "#" * round(width * value / top) if top > 0 else ""
        lines.append(f"{label:>{label_width}} |{bar:<{width}} {value:.4g}".rstrip())
    return lines


# ------------------------------------------------------------------- the report

def _header(title: str) -> str:
    return f"\n{title}\n{'-' * len(title)}"


def _draw_dot_products(dks: Sequence[int], samples: int, seed: int) -> Dict[int, Vector]:
    """Return {d_k: sample_dot_products(d_k, samples, seed=seed + d_k)}: the draws of sections 1, 2, 5."""
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


def _report_projection(samples: int, seed: int, d_model: int = 64, d_k: int = 16) -> List[str]:
    """Section 1b: the same variance when q and k come from projections of a normalised x."""
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
    for d_k in dks:
        draws = random_trials(d_k, m=m, trials=trials, seed=seed + d_k)
        u, s = (saturation_of(draws, scale_factor(name, d_k)) for name in ("none", "1/sqrt(d_k)"))
        saturation.append(f"{d_k:>6} {u.max_weight:>9.4f} {u.entropy:>9.4f} {u.jacobian_norm:>9.4f}"
                          f"   | {s.max_weight:>9.4f} {s.entropy:>9.4f} {s.jacobian_norm:>9.4f}")
        gu, gs = (gradients_of(draws, scale_factor(name, d_k)) for name in ("none", "1/sqrt(d_k)"))
        gradient.append(f"{d_k:>6}" + "".join(
            f" {a:>8.2e} / {b:<7.1e}" for a, b in (
                (gu.score_grad, gu.score_grad_median), (gs.score_grad, gs.score_grad_median),
                (gu.score_grad / gs.score_grad, gu.score_grad_median / gs.score_grad_median),
                (gu.query_grad, gu.query_grad_median), (gs.query_grad, gs.query_grad_median),
                (gu.query_grad / gs.query_grad, gu.query_grad_median / gs.query_grad_median))))
    gradient += ["   dS is the gradient reaching the softmax logits, dQ the one reaching the queries.",
                 "   Unscaled, the typical (median) gradient collapses as d_k grows; the mean of",
                 "   ||dQ|| does not, because the rare rows whose top two scores nearly tie keep",
                 "   an O(1) softmax gradient and multiply it by ||k|| ~ sqrt(d_k)."]
    return saturation + gradient


def _report_pictures(draws: Dict[int, Vector]) -> List[str]:
    """Section 5: softmax at moderate and large scale, and variance against d_k, as bars."""
    lines = [_header("5. Pictures")]
    moderate = [2.0, 1.0, 0.0, -1.0]
    for title, x in (("softmax([2, 1, 0, -1])", moderate),
                     ("softmax([20, 10, 0, -10]): the same logits times 10", [10 * v for v in moderate])):
        p = softmax(x)
        lines.append(f"   {title}")
        lines += ["   " + line for line in bar_chart([(f"p_{i + 1}", v) for i, v in enumerate(p)],
                                                      top=1.0)]
        diagonal = [f"{row[i]:.3g}" for i, row in enumerate(softmax_jacobian(x))]
        lines.append(f"   Jacobian diagonal p_i (1 - p_i): [{', '.join(diagonal)}]")
    variances = [(f"d_k={d_k}", _second_moment(s)) for d_k, s in draws.items()]
    lines.append("   simulated Var(q . k): grows in proportion to d_k")
    lines += ["   " + line for line in bar_chart(variances)]
    lines.append("   simulated Var(q . k / sqrt(d_k)): level at 1 (bars drawn from 0 to 2)")
    lines += ["   " + line for line in bar_chart([(label, v / d_k) for (label, v), d_k
                                                   in zip(variances, draws)], top=2.0)]
    return lines


# ------------------------------------------------ the documents' worked numbers

class QuotedExample(NamedTuple):
    """A softmax example worked by hand in a source document, with what it quotes."""
    document: str  # file name prefix in shared/documents
    logits: Tuple[float, ...]
    quoted_p: Tuple[str, ...]  # the probabilities as printed ("0.999..." = digits that follow)
    quoted_derivative: Optional[str]  # d p_1 / d x_1 = p_1 (1 - p_1) as printed, if any


DOCUMENT_EXAMPLES = (
    QuotedExample("000", (1.0, 0.5, -0.5), ("0.506", "0.307", "0.187"), "0.250"),
    QuotedExample("000", (8.0, 4.0, -4.0), ("0.9997", "0.0003", "0.0000"), "0.0003"),
    QuotedExample("002", (100.0, 1.0, 1.0, 1.0), ("0.999...", "0.000...", "0.000...", "0.000..."), None),
    QuotedExample("002", (10.0, 0.1, 0.1, 0.1), ("0.999...", "0.000...", "0.000...", "0.000..."), None),
    QuotedExample("004", (1.0, 0.0), ("0.73", "0.27"), None),
    QuotedExample("004", (10.0, 0.0), ("0.9999", "0.0001"), None),
    QuotedExample("004", (2.0, 1.0, 0.0, -1.0), ("0.52", "0.28", "0.14", "0.06"), None),
    QuotedExample("004", (20.0, 10.0, 0.0, -10.0), ("1.00", "0.00", "0.00", "0.00"), None),
)


def agrees_with_quote(value: float, quoted: str, gap_below_one: Optional[float] = None) -> bool:
    """Return whether value, printed as the quote is printed, reads the same.

    "0.506" means value rounds to 0.506; "0.999..." means its digits begin
    0.999, i.e. 0.999 <= value < 1.  A probability within an ulp of 1 is 1.0
    as a float, so gap_below_one (1 - value, computed accurately) decides then.

    >>> agrees_with_quote(0.5466, "0.547"), agrees_with_quote(0.5, "0.506")
    (True, False)
    >>> agrees_with_quote(1.0, "0.999..."), agrees_with_quote(1.0, "0.999...", gap_below_one=3e-43)
    (False, True)
    """
    if quoted.endswith("..."):
        low = float(quoted[:-3])
        high = low + 10.0 ** -len(quoted[:-3].split(".")[1])
        below_high = value < high or (high == 1.0 and gap_below_one is not None and gap_below_one > 0)
        return low <= value and below_high
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    return f"{value:.{decimals}f}" == quoted


def _show_probability(p: float, gap_below_one: float) -> str:
    return f"1 - {gap_below_one:.3g}" if gap_below_one < 1e-3 else f"{p:.4g}"


def first_derivative(logits: Sequence[float]) -> float:
    """Return d p_1 / d x_1 = p_1 (1 - p_1), the Jacobian's first diagonal entry.

    >>> first_derivative([0.0, 0.0])
    0.25
    """
    return softmax_jacobian(logits)[0][0]


def worked_examples_table() -> List[str]:
    """Return a Markdown table: each documented example, what it quotes, what the code computes.

    >>> worked_examples_table()[6]
    '| 004 | [1, 0] | [0.73, 0.27] | [0.7311, 0.2689] | - | 0.1966 | yes |'
    """
    lines = ["| doc | logits x | quoted softmax(x) | computed softmax(x) | quoted dp_1/dx_1 "
             "| computed dp_1/dx_1 | agree? |", "|---|---|---|---|---|---|---|"]
    for ex in DOCUMENT_EXAMPLES:
        p = softmax(ex.logits)
        gaps = [-math.expm1(lp) for lp in log_softmax(ex.logits)]  # 1 - p_i, no cancellation
        derivative = first_derivative(ex.logits)
        same = all(agrees_with_quote(v, q, g) for v, q, g in zip(p, ex.quoted_p, gaps))
        if ex.quoted_derivative is not None:
            same = same and agrees_with_quote(derivative, ex.quoted_derivative)
        logits = ", ".join(f"{v:g}" for v in ex.logits)
        computed = ", ".join(_show_probability(v, g) for v, g in zip(p, gaps))
        lines.append(f"| {ex.document} | [{logits}] | [{', '.join(ex.quoted_p)}] | [{computed}] | "
                     f"{ex.quoted_derivative or '-'} | {derivative:.4g} | "
                     f"{'yes' if same else '**no**'} |")
    return lines


class QuotedSpread(NamedTuple):
    """A row of a documents' table of score spread: d_k, the std and range they print."""
    document: str
    d_k: int
    scaled: bool  # True when the row is about q . k / sqrt(d_k)
    quoted_std: str
    quoted_range: Optional[float]  # the half-width r of the printed range [-r, r]


DOCUMENT_SPREADS = (
    QuotedSpread("000", 64, True, "1", 3.0),
    QuotedSpread("000", 64, False, "8", 24.0),
    QuotedSpread("000", 512, False, "22.6", 68.0),
    QuotedSpread("002", 512, False, "22.6", 100.0),
    QuotedSpread("002", 1024, False, "32", None),
    QuotedSpread("004", 64, False, "8", 16.0),
    QuotedSpread("004", 128, False, "11.3", 23.0),
    QuotedSpread("004", 512, False, "22.6", 45.0),
)


def spread_table() -> List[str]:
    """Return a Markdown table: std of the score and how many stds each quoted range spans.

    The std is sqrt(Var) = sqrt(d_k) unscaled and 1 scaled; a range [-r, r] spans r / std
    standard deviations and holds P(|Z| <= r / std) of a normal score.

    >>> spread_table()[7]
    '| 004 | 64 | q.k | 8 | 8 | [-16, 16] | 2.00 | 0.95450 | yes |'
    """
    normal = statistics.NormalDist()
    lines = ["| doc | d_k | score | quoted std | computed std | quoted range | range in stds "
             "| P(score in range) | agree? |", "|---|---|---|---|---|---|---|---|---|"]
    for row in DOCUMENT_SPREADS:
        c = scale_factor("1/sqrt(d_k)" if row.scaled else "none", row.d_k)
        std = math.sqrt(scaled_variance(dot_product_variance(row.d_k), c))
        cells = ["-", "-", "-"]
        if row.quoted_range is not None:
            k = row.quoted_range / std
            cells = [f"[-{row.quoted_range:g}, {row.quoted_range:g}]", f"{k:.2f}",
                     f"{2 * normal.cdf(k) - 1:.5f}"]
        lines.append(f"| {row.document} | {row.d_k} | {'q.k/sqrt(d_k)' if row.scaled else 'q.k'} "
                     f"| {row.quoted_std} | {std:.4g} | {' | '.join(cells)} | "
                     f"{'yes' if agrees_with_quote(std, row.quoted_std) else '**no**'} |")
    return lines


def _dk_list(text: str) -> List[int]:
    try:
        dks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--dk takes whole numbers separated by commas, not {text!r}")
    if not dks or any(d < 2 for d in dks):
        raise argparse.ArgumentTypeError("--dk needs at least one d_k, each >= 2")
    return dks


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print the report: sections 1 to 5, every number computed by the functions above."""
    parser = argparse.ArgumentParser(
        prog="python3 stats.py",
        description="Why attention divides q . k by sqrt(d_k), shown in numbers: the variance "
                    "of q . k, the effect of each scale choice, softmax saturation, the gradient "
                    "that reaches Q, and terminal pictures.  Same --seed, same output.")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--samples", type=_positive, default=1000,
                        help="Monte Carlo samples of q . k per d_k (default 1000)")
    parser.add_argument("--dk", type=_dk_list, default=list(DEFAULT_DKS),
                        help="comma-separated d_k values (default 16,64,128,512,1024)")
    parser.add_argument("--trials", type=_positive, default=60,
                        help="random attention rows per d_k for sections 3 and 4 (default 60)")
    parser.add_argument("--keys", type=_positive, default=16,
                        help="keys per attention row, m (default 16)")
    parser.add_argument("--worked-examples", action="store_true",
                        help="print only the Markdown tables of the documents' worked numbers "
                             "against the computed ones (as in README.md), then stop")
    args = parser.parse_args(argv)
    if args.worked_examples:
        print("\n".join(worked_examples_table() + [""] + spread_table()))
        return 0
    print(f"The sqrt(d_k) in softmax(Q K^T / sqrt(d_k)) V: seed {args.seed}, "
          f"{args.samples} samples, d_k in {args.dk}")
    draws = _draw_dot_products(args.dk, args.samples, args.seed)
    for section in (_report_variance(draws),
                    _report_projection(max(1, args.samples // 4), args.seed),
                    _report_scales(draws),
                    _report_saturation_and_gradients(args.dk, args.keys, args.trials, args.seed),
                    _report_pictures(draws)):
        print("\n".join(section))
    return 0


if __name__ == "__main__":
    sys.exit(main())
