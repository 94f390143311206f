"""scripts/compensated.py against exact Fractions and 50-digit decimal.

- two_difference: a - b = s + e exactly, in Fractions;
- the compensated softmax and log-softmax: within an ulp or so of 50-digit decimal where
  the library's plain shift is hundreds of ulps off;
- the condition number: the formula in 50-digit decimal, and the sensitivity it claims
  measured by a relative finite difference in decimal, with the signs that reach it.
"""

import math
import random
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from scripts import compensated
from tests.helpers import assert_close
from oracles.exact import decimal_log_softmax, decimal_softmax
from softmax import softmax


def ulps(got, exact):
    """|got - exact| in units of the last place of exact (a float near it)."""
    return [float(abs(Decimal(g) - w)) / math.ulp(float(w)) for g, w in zip(got, exact)]


@pytest.mark.parametrize("seed", range(3), ids=lambda s: f"seed {s}")
def test_two_difference_is_exact(seed):
    rng = random.Random(seed)
    for _ in range(200):
        a, b = rng.uniform(-1e3, 1e3), rng.choice([rng.uniform(-1e3, 1e3), rng.gauss(0, 1e-9)])
        s, e = compensated.two_difference(a, b)
        assert s == a - b and Fraction(a) - Fraction(b) == Fraction(s) + Fraction(e)


@pytest.mark.parametrize("x", compensated.CASES, ids=["2 keys", "3 keys", "near ties"])
def test_the_compensated_shift_is_within_an_ulp_of_decimal(x):
    assert max(ulps(compensated.compensated_softmax(x), decimal_softmax(x))) <= 1.0
    assert max(ulps(compensated.compensated_log_softmax(x), decimal_log_softmax(x))) <= 1.0


def test_the_first_case_shows_what_the_plain_shift_loses():
    # the numerics.md table: the library's p_2 is hundreds of ulps off here
    x = compensated.CASES[0]
    assert max(ulps(softmax(x), decimal_softmax(x))) > 100
    # two measures of the same distance: 60-digit decimal there, 50 and a float ulp here
    assert_close(compensated.ulp_errors(softmax(x), x), ulps(softmax(x), decimal_softmax(x)),
                 rel=1e-6)


def decimal_kappa(x, i):
    """(1 - p_i)|x_i| + sum_{j != i} p_j |x_j| at 50 digits."""
    p = decimal_softmax(x)
    with localcontext() as context:
        context.prec = 50
        return (1 - p[i]) * abs(Decimal(x[i])) + sum(
            p_j * abs(Decimal(x_j)) for j, (p_j, x_j) in enumerate(zip(p, x)) if j != i)


def relative_sensitivity(x, i, h=Fraction(1, 10 ** 20)):
    """(log p_i(x') - log p_i(x)) / h at 50 digits, x'_j = x_j (1 + h sign_j), with the signs
    sign_j of (delta_ij - p_j) x_j that make every term count: the condition number's
    claim, measured."""
    p = decimal_softmax(x)
    signs = [math.copysign(1.0, float(((j == i) - p[j]) * Decimal(x_j))) if x_j else 0.0
             for j, x_j in enumerate(x)]
    with localcontext() as context:
        context.prec = 50
        moved = [Decimal(x_j) * (1 + Decimal(h.numerator) / h.denominator * Decimal(s))
                 for x_j, s in zip(x, signs)]
        m = max(moved)
        log_p = moved[i] - m - sum((v - m).exp() for v in moved).ln()
        return (log_p - Decimal(decimal_log_softmax(x)[i])) / (Decimal(h.numerator)
                                                               / h.denominator)


@pytest.mark.parametrize("x", [[0.0, 10.0], [1.5, -0.5, 0.25], [3.0, 2.0, -4.0, 0.5]],
                         ids=["[0, 10]", "3 logits", "4 logits"])
def test_the_condition_number_is_the_formula_and_the_sensitivity(x):
    for i in range(len(x)):
        kappa = compensated.condition_number(x, i)
        assert_close(kappa, float(decimal_kappa(x, i)), rel=1e-13, abs=1e-300)
        assert_close(kappa, float(relative_sensitivity(x, i)), rel=1e-9)
        assert compensated.condition_bound(x, i) >= kappa


def test_the_stated_bound_overstates_the_largest_weight_by_far():
    # x = [0, 10]: kappa_2 = 10 p_1 = 10 / (1 + e^10), the bound 10 + 10 p_2
    kappa = compensated.condition_number([0.0, 10.0], 1)
    assert_close(kappa, 10 / (1 + math.exp(10)), rel=1e-15)
    assert_close(compensated.condition_bound([0.0, 10.0], 1), 10 + 10 / (1 + math.exp(-10)),
                 rel=1e-15)
    assert compensated.markdown_values() == {"cond.kappa": "0.00045", "cond.bound": "20"}
    assert compensated.CONDITION_EXAMPLE == ([0.0, 10.0], 1)  # "At x = [0, 10], kappa_2"
