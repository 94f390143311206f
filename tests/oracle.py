"""Independent references for the tests: nothing here calls the code under test.

- `decimal` at 50 significant digits for exp and log (softmax, log-softmax,
  log-sum-exp), starting from the exact value of each float input;
- exact `Fraction` arithmetic for dot products and matrix products;
- central finite differences for derivatives;
- seeded random inputs.
"""

import math  # isfinite, ulp
import random  # seeded inputs
from decimal import Decimal, localcontext  # 50-digit exp and ln
from fractions import Fraction  # exact products and sums
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
    return max(abs(a - b) for ra, rb in zip(A, B) for a, b in zip(ra, rb))
