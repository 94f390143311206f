"""The forward pass and the gradients are accurate to the last digits: softmax_backward
entry by entry against exact Fractions, and attention and attention_backward normwise
against a 50-digit decimal reference, on random and adversarial cases.

The promises (issue 15): the output within 1e-15, and dQ, dK, dV within 1e-13, relative
to the 50-digit reference in the Frobenius norm, ||computed - exact||_F / ||exact||_F.
"""

import math
import random
from fractions import Fraction

import pytest

from attention import (attention_backward, matmul, scaled_dot_product_attention, score_gradient,
                       transpose)
from oracles.bounds import TINY
from tests.helpers import assert_close
from oracles.exact import (U, decimal_attention, decimal_attention_backward, decimal_softmax,
                           normwise_relative_error, random_matrix)
from softmax import softmax, softmax_backward


# ------------------------------------------------------------ softmax_backward

def exact_backward(p, g):
    """Return (dS, p~, T): exact p~_i (g_i - <g, p~>) and the size of each entry's own terms.

    p~ is p with its largest entry replaced by 1 - (the others), so that it sums to 1
    exactly: a float p_k = 1.0 stands for a probability a few ulps below 1.
    T_i = |g_i - g_k| + sum_{j != k} p~_j |g_k - g_j|, the terms the result is built from.
    """
    k = p.index(max(p))
    pf = [Fraction(v) for v in p]
    pf[k] = 1 - sum(pf[:k] + pf[k + 1:])
    gf = [Fraction(v) for v in g]
    mean = sum(a * b for a, b in zip(pf, gf))
    exact = [a * (b - mean) for a, b in zip(pf, gf)]
    rest = sum(pf[j] * abs(gf[k] - gf[j]) for j in range(len(p)) if j != k)
    terms = [abs(b - gf[k]) + rest for b in gf]
    return exact, pf, terms


def backward_cases():
    rng = random.Random(5)
    cases = [pytest.param([1.0, 4.2e-18], [1.0, 0.0], id="p_1 rounds to exactly 1"),
             pytest.param([0.5, 0.5], [1.0, 0.0], id="two halves"),
             pytest.param(softmax([40.0, 0.0, -3.0, 1.0]), [0.3, -2.0, 5.0, 1.0],
                          id="one weight near 1"),
             pytest.param(softmax([0.0] * 6), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0 + 2 ** -40],
                          id="g nearly equal"),
             pytest.param(softmax([1.0, 1.0 - 1e-12]), [1e8, -1e8], id="a large g")]
    for seed in range(30):
        n = rng.randint(1, 12)
        x = [rng.gauss(0.0, rng.choice([1.0, 10.0, 60.0])) for _ in range(n)]
        cases.append(pytest.param(softmax(x), [rng.gauss(0.0, 1.0) for _ in range(n)],
                                  id=f"random, {n} weights, draw {seed}"))
    return cases


@pytest.mark.parametrize("p, g", backward_cases())
def test_softmax_backward_is_within_a_few_ulps_of_its_own_terms(p, g):
    exact, p_exact, terms = exact_backward(p, g)
    for got, want, p_i, p_star, t in zip(softmax_backward(p, g), exact, p, p_exact, terms):
        # 5 roundings (g_k - g_j, p_j times it, fsum, (g_i - g_k) + rest, times p_i), each at
        # most U p~_i T_i, plus what p_k = 1.0 in place of p~_k changes, |p_i - p~_i| T_i,
        # plus U p~_i T_i for rounding the exact value to the float compared against:
        #     |got_i - dS_i| <= 6 U p~_i T_i + |p_i - p~_i| T_i  (+ 2^-1074)
        bound = 6 * U * float(p_star * t) + float(abs(Fraction(p_i) - p_star) * t)
        assert_close(got, float(want), abs=bound + TINY)


def test_softmax_backward_keeps_the_gradient_of_a_weight_that_rounded_to_one():
    assert softmax_backward([1.0, 4.2e-18], [1, 0]) == [4.2e-18, -4.2e-18]
    # p_i (g_i - <g, p>) would give 1.0 * (1 - 1.0) = 0.0 for the first entry
    assert softmax_backward([1.0, 4.2e-18], [0, 1]) == [-4.2e-18, 4.2e-18]


# ------------------------------------------------------ attention, forward and backward

def case(seed, n=3, m=5, d_k=4, d_v=3, spread=1.0):
    rng = random.Random(seed)
    return (random_matrix(rng, n, d_k, spread), random_matrix(rng, m, d_k, spread),
            random_matrix(rng, m, d_v), random_matrix(rng, n, d_v))


def dominant_key(seed):
    """Each query points almost exactly at one key, 40 units long: its weight is 1 - 1e-17."""
    Q, K, V, dO = case(seed, n=3, m=6, d_k=4)
    for i, q in enumerate(Q):
        K[i] = [40.0 * v for v in q]
    return Q, K, V, dO


ADVERSARIAL = {
    "random": [case(s) for s in range(4)],
    "weights near 0 and 1": [case(s, spread=4.0) for s in range(10, 14)],
    "one dominant key": [dominant_key(s) for s in range(20, 24)],
    "wide": [case(30, n=2, m=40, d_k=16, d_v=2, spread=2.0)],
}


def no_next_key(Q, K):
    """Query i may not see key i + 1; every other key stays open."""
    return [[j != i + 1 for j in range(len(K))] for i in range(len(Q))]


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked"])
def test_attention_is_within_1e_15_normwise_of_the_exact_output(kind, masked):
    for Q, K, V, _ in ADVERSARIAL[kind]:
        mask = no_next_key(Q, K) if masked else None
        scale = 1.0 / math.sqrt(len(Q[0]))
        got = scaled_dot_product_attention(Q, K, V, mask, scale=scale)
        exact = decimal_attention(Q, K, V, scale, mask)
        assert_close(normwise_relative_error(got, exact), 0.0, abs=1e-15)


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked"])
def test_attention_backward_is_within_1e_13_normwise_of_the_exact_gradients(kind, masked):
    for Q, K, V, dO in ADVERSARIAL[kind]:
        mask = no_next_key(Q, K) if masked else None
        scale = 1.0 / math.sqrt(len(Q[0]))
        got = attention_backward(Q, K, V, dO, mask, scale=scale)
        for computed, exact in zip(got, decimal_attention_backward(Q, K, V, dO, scale, mask)):
            assert_close(normwise_relative_error(computed, exact), 0.0, abs=1e-13)


def test_score_gradient_rows_are_softmax_backward_of_do_v_transpose():
    Q, K, V, dO = dominant_key(3)
    P = [[float(p) for p in decimal_softmax([sum(a * b for a, b in zip(q, k)) / 2
                                             for k in K])] for q in Q]
    dS = score_gradient(P, V, dO)
    for p, g, row in zip(P, matmul(dO, transpose(V)), dS):
        assert row == softmax_backward(p, g)
