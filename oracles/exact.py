"""Independent references for the tests and benchmarks/accuracy.py: nothing here calls the
code under test.

- `decimal` at 50 significant digits for exp and log (softmax, log-softmax,
  log-sum-exp) and for attention forward and backward, starting from the exact value
  of each float input;
- exact `Fraction` arithmetic for dot products and matrix products;
- central finite differences for derivatives;
- seeded random inputs;
- the exact binomial interval of a median (exact_interval) and of any quantile
  (quantile_ranks), and a top share's standard error in Fractions (top_share_error);
- normwise_relative_error, the measure of the accuracy promises (tests pass it to
  tests.helpers.assert_close with the promised bound).

python3 benchmarks/accuracy.py prints the library's worst errors against these references.
"""

import itertools  # accumulate: the binomial's tail sums
import math  # inf
import random  # seeded inputs
from decimal import Decimal, localcontext  # 50-digit exp and ln
from fractions import Fraction  # exact products, sums and probabilities
from typing import Callable, List

U = 2.0 ** -53  # unit roundoff of IEEE double: a rounded result is within (1 + U) of the truth
DIGITS = 50


def decimal_softmax(x: List[float]) -> List[Decimal]:
    """softmax(x) at 50 digits: exp(x_i - m) / sum_j exp(x_j - m), -inf entries exactly 0."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        m = max(Decimal(v) for v in x if v != -math.inf)
        e = [Decimal(0) if v == -math.inf else (Decimal(v) - m).exp() for v in x]
        total = sum(e)
        return [v / total for v in e]


def decimal_log_softmax(x: List[float]) -> List[Decimal]:
    """log softmax(x) at 50 digits; None for a -inf entry."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        m = max(Decimal(v) for v in x if v != -math.inf)
        log_denominator = _log1p_of_rest(x, m)
        # (x_i - m) - log1p(s): never form m + log1p(s), which would round log1p(s) away
        return [None if v == -math.inf else (Decimal(v) - m) - log_denominator for v in x]


def _log1p_of_rest(x: List[float], m: Decimal) -> Decimal:
    terms = sorted((Decimal(v) - m).exp() for v in x if v != -math.inf)
    return decimal_log1p(sum(terms[:-1]))  # the largest term is exactly 1


def decimal_logsumexp(x: List[float]) -> Decimal:
    """log sum_j exp(x_j) = m + log1p(s) at 50 digits, s = the sum without the max's 1."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        m = max(Decimal(v) for v in x if v != -math.inf)
        return m + _log1p_of_rest(x, m)


def decimal_log1p(s: Decimal) -> Decimal:
    """log(1 + s) at 50 digits relative, also for tiny s (where ln(1 + s) would cancel)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        if s > Decimal("1e-6"):
            return (1 + s).ln()
        total, term, k = Decimal(0), s, 1
        while abs(term) > abs(s) * Decimal(10) ** -(DIGITS + 5):  # s - s^2/2 + s^3/3 - ...
            total += term / k
            term *= -s
            k += 1
        return total


def decimal_entropy(x):
    """H(softmax(x)) = -sum_i p_i ln p_i = ln sum_j e^(x_j - m) + sum_i p_i (m - x_i) at 50
    digits, m = max x: two sums of terms >= 0, with ln(1 + s) from decimal_log1p, which
    keeps a tiny s (a p_i of 1 - 1e-304 has ln p_i = -1e-304, not 0)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        x = [v for v in x if v != -math.inf]
        m = Decimal(max(x))
        s = sum(sorted((Decimal(v) - m).exp() for v in x)[:-1])  # the max's 1 left out
        return float(decimal_log1p(s) + sum(p * (m - Decimal(v)) for p, v in
                                            zip(decimal_softmax(x), x)))


def fraction_matmul(A, B) -> List[List[Fraction]]:
    """A B with every product and sum exact."""
    return [[sum((Fraction(a) * Fraction(b) for a, b in zip(row, col)), Fraction(0))
             for col in zip(*B)] for row in A]


def central_difference(f: Callable[[List[float]], float], x: List[float], i: int,
                       h: float = 1e-6) -> float:
    """(f(x + h e_i) - f(x - h e_i)) / 2h: the derivative with error O(h^2)."""
    up, down = list(x), list(x)
    up[i] += h
    down[i] -= h
    return (f(up) - f(down)) / (2 * h)


def matrix_gradient(f: Callable, A: List[List[float]], h: float = 1e-6) -> List[List[float]]:
    """Central differences of the scalar f(A) with respect to every entry of A."""
    grad = []
    for r in range(len(A)):
        row = []
        for c in range(len(A[0])):
            up = [list(x) for x in A]
            down = [list(x) for x in A]
            up[r][c] += h
            down[r][c] -= h
            row.append((f(up) - f(down)) / (2 * h))
        grad.append(row)
    return grad


def random_vector(rng: random.Random, n: int, spread: float = 3.0) -> List[float]:
    return [rng.gauss(0.0, spread) for _ in range(n)]


def random_matrix(rng: random.Random, rows: int, cols: int, spread: float = 1.0):
    return [[rng.gauss(0.0, spread) for _ in range(cols)] for _ in range(rows)]


def max_abs_diff(A, B) -> float:
    """max |A_ij - B_ij| (kept for other callers; the tests compare with assert_close)."""
    return max(abs(a - b) for ra, rb in zip(A, B) for a, b in zip(ra, rb))


def _decimal_weights(Q, K, scale, mask):
    """P = softmax(scale Q K^T) row by row (masked entries exactly 0), in the caller's
    50-digit decimal context."""
    c = Decimal(scale)
    P = []
    for i, q in enumerate(Q):
        allowed = [mask is None or mask[i][j] for j in range(len(K))]
        s = [c * sum(Decimal(a) * Decimal(b) for a, b in zip(q, k)) for k in K]
        top = max(v for v, ok in zip(s, allowed) if ok)
        e = [(v - top).exp() if ok else Decimal(0) for v, ok in zip(s, allowed)]
        total = sum(e)
        P.append([v / total for v in e])
    return P


def decimal_attention(Q, K, V, scale, mask=None):
    """O = softmax(scale Q K^T) V at 50 digits, from the exact float inputs and the float
    scale taken as exact; masked keys (mask[i][j] False) get weight exactly 0."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        P = _decimal_weights(Q, K, scale, mask)
        return [[sum(p * Decimal(v[t]) for p, v in zip(P_i, V)) for t in range(len(V[0]))]
                for P_i in P]


def decimal_attention_backward(Q, K, V, dO, scale, mask=None):
    """(dQ, dK, dV) at 50 digits from the exact float inputs, for a float scale taken as exact.

    P = softmax(scale Q K^T) (masked entries exactly 0); dV = P^T dO; dP = dO V^T;
    dS_ij = P_ij (dP_ij - sum_l P_il dP_il); dQ = scale dS K; dK = scale dS^T Q.
    The exponentials are correctly rounded to 50 digits; everything else is exact
    but for one rounding to 50 digits per operation.
    """
    with localcontext() as ctx:
        ctx.prec = DIGITS
        Qd, Kd, Vd, dOd = ([[Decimal(v) for v in row] for row in A] for A in (Q, K, V, dO))
        c = Decimal(scale)
        n, m = len(Q), len(K)
        P = _decimal_weights(Q, K, scale, mask)
        dV = [[sum(P[i][j] * dOd[i][t] for i in range(n)) for t in range(len(V[0]))]
              for j in range(m)]
        dP = [[sum(a * b for a, b in zip(dOd[i], Vd[j])) for j in range(m)] for i in range(n)]
        # dP_ij - sum_l P_il dP_il = sum_l P_il (dP_ij - dP_il), as sum_l P_il = 1: the form
        # without a difference of two nearly equal numbers, which 50 digits could not
        # resolve when a weight is 1 - 1e-48
        dS = [[P[i][j] * sum(p * (g - h) for p, h in zip(P[i], dP[i]))
               for j, g in enumerate(dP[i])] for i in range(n)]
        dQ = [[c * sum(dS[i][j] * Kd[j][t] for j in range(m)) for t in range(len(Q[0]))]
              for i in range(n)]
        dK = [[c * sum(dS[i][j] * Qd[i][t] for i in range(n)) for t in range(len(K[0]))]
              for j in range(m)]
        return dQ, dK, dV


def normwise_relative_error(A, exact) -> float:
    """||A - exact||_F / ||exact||_F, the difference taken in decimal (0 if both are 0)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        diff = sum((Decimal(a) - e) ** 2 for ra, re in zip(A, exact) for a, e in zip(ra, re))
        size = sum(e ** 2 for re in exact for e in re)
        return float((diff / size).sqrt()) if size else float(diff.sqrt())


# ------------------------------------------------ attention rows at initialisation

def random_trials(d_k: int, m: int = 16, d_v: int = 8, trials: int = 100, seed: int = 0):
    """`trials` draws of (Q, K, V, G), one attention row at initialisation, every entry
    N(0, 1) from random.gauss in the order Q (1 x d_k), K (m x d_k), V (m x d_v), G (1 x d_v,
    the upstream gradient dL/dO): the brute-force reference for stats' saturation and
    gradient statistics, which draw the same rows' distribution in O(m) per row."""
    rng = random.Random(seed)

    def draw(rows, cols):
        return [[rng.gauss(0.0, 1.0) for _ in range(cols)] for _ in range(rows)]
    return [(draw(1, d_k), draw(m, d_k), draw(m, d_v), draw(1, d_v)) for _ in range(trials)]


def chi_square_rows(d_k: int, m: int, d_v: int, trials: int, seed: int):
    """The draws behind stats.saturation_stats and stats.gradient_stats, re-made with
    random.Random: per row |q|^2 ~ chi^2(d_k) and |G|^2 ~ chi^2(d_v) as gammavariate(nu / 2, 2),
    then 2m N(0, 1) from random.gauss (the scores' z_j, then dP's z'_j), then the chi^2(d_k - 1)
    of K's part orthogonal to q (0.0 when d_k = 1).  Returns (q2, g2, z, z_prime, rest) rows."""
    rng, rows = random.Random(seed), []
    for _ in range(trials):
        q2, g2 = rng.gammavariate(d_k / 2, 2.0), rng.gammavariate(d_v / 2, 2.0)
        z = [rng.gauss(0.0, 1.0) for _ in range(2 * m)]
        rest = rng.gammavariate((d_k - 1) / 2, 2.0) if d_k > 1 else 0.0
        rows.append((q2, g2, z[:m], z[m:], rest))
    return rows


def gauss_dot_products(d_k: int, n: int, seed, scale: float = 1.0, rho: float = 0.0):
    """n samples of scale (q . k) from random.gauss: per sample q (d_k draws), then z (d_k
    draws), k_i = rho q_i + sqrt(1 - rho^2) z_i; q . k is the exact sum of the rounded
    products, rounded once (what math.fsum gives).  seed: an int or a random.Random."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    s, out = math.sqrt(1.0 - rho * rho), []
    for _ in range(n):
        q = [rng.gauss(0.0, 1.0) for _ in range(d_k)]
        k = [rho * a + s * rng.gauss(0.0, 1.0) for a in q]
        out.append(scale * float(sum(Fraction(a * b) for a, b in zip(q, k))))
    return out


def gauss_projected_dot_products(d_k: int, n: int, d_model: int, seed: int):
    """n samples of q . k, q = x W_Q, k = x W_K, from random.gauss: x (d_model draws) made
    mean 0 and mean square 1 with the statistics module, then W_Q's d_k columns and W_K's
    (d_model draws each, times 1/sqrt(d_model)); sums in Fractions."""
    rng, out = random.Random(seed), []
    for _ in range(n):
        x = [Fraction(v) for v in (rng.gauss(0.0, 1.0) for _ in range(d_model))]
        mu = sum(x) / d_model
        sigma = math.sqrt(sum((v - mu) ** 2 for v in x) / d_model)
        x = [float(v - mu) / sigma for v in x]
        W = [[rng.gauss(0.0, 1.0) / math.sqrt(d_model) for _ in range(d_model)]
             for _ in range(2 * d_k)]
        q, k = ([float(sum(Fraction(a) * Fraction(w) for a, w in zip(x, col))) for col in half]
                for half in (W[:d_k], W[d_k:]))
        out.append(float(sum(Fraction(a) * Fraction(b) for a, b in zip(q, k))))
    return out


# ------------------------------------------------ the median's interval

def exact_interval(n, coverage):
    """(l, P) for the order-statistic interval [x_(l), x_(n+1-l)] of the median: l the largest
    in 1..n//2 with P = P(l <= B <= n - l) >= coverage, B ~ Binomial(n, 1/2) (l = 1 if none
    is), in exact integers: 2^n P = sum_{j=l}^{n-l} C(n, j), each term from math.comb, summed
    outwards from the centre until it reaches coverage 2^n."""
    total, l = 2 ** n, max(1, n // 2)
    central = sum(math.comb(n, j) for j in range(l, n - l + 1))
    while l > 1 and central < Fraction(coverage) * total:
        l -= 1
        central += 2 * math.comb(n, l)  # j = l and j = n - l join the interval
    return l, Fraction(central, total)


# ------------------------------------------------ a quantile's interval, a top share's error

def quantile_ranks(n, p, coverage):
    """(l, u, P) for the order-statistic interval [x_(l), x_(u)] of the p-quantile, from the
    definition, every rank tried: B ~ Binomial(n, p), P(B = k) = C(n, k) p^k (1 - p)^(n - k)
    in Fractions; l the largest in 1..n with P(B < l) <= e and u the smallest with
    P(B >= u) <= e, e = (1 - coverage) / 2 (1 and n when none is); P = P(l <= B <= u - 1)."""
    p, e = Fraction(p), (1 - Fraction(coverage)) / 2
    pmf = [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n)]
    below = [Fraction(0)] + list(itertools.accumulate(pmf))  # below[k] = P(B < k)
    l = max([r for r in range(1, n + 1) if below[r] <= e], default=1)
    u = min([r for r in range(1, n + 1) if 1 - below[r] <= e], default=n)
    return l, u, below[u] - below[l]


def top_share_error(xs, percent):
    """(T, se): the share T of sum(xs) that the k = ceil(n percent / 100) largest carry, and
    the delta method's standard error sqrt(mean(IF_T^2) / n), the influence functions in
    exact Fractions as derived: IF_mu = x - mu; IF_theta = (x - xi) 1{x > xi} + xi t - theta,
    xi the largest x outside the top k (k < n) and t = k / n; IF_T = (IF_theta - T IF_mu) / mu."""
    x = sorted(map(Fraction, xs), reverse=True)
    n = len(x)
    k = math.ceil(Fraction(n * percent, 100))
    mu, theta = sum(x) / n, sum(x[:k]) / n
    T, xi, t = theta / mu, x[k], Fraction(k, n)
    IF = [((v - xi) * (v > xi) + xi * t - theta - T * (v - mu)) / mu for v in x]
    return T, math.sqrt(sum(f * f for f in IF) / n / n)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
