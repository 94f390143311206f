"""The gradients are accurate to the last digits: softmax_backward entry by entry
against exact Fractions, and attention_backward normwise against a 50-digit
decimal reference, on random and adversarial cases."""

import math
import random
from fractions import Fraction

import pytest

from attention import (attention_backward, matmul, scaled_dot_product_attention, score_gradient,
                       transpose)
from oracle import (U, decimal_attention_backward, decimal_softmax, normwise_relative_error,
                    random_matrix)
from softmax import softmax, softmax_backward

INF = math.inf


# ------------------------------------------------------------ softmax_backward

def exact_backward(p, g):
    """Return (dS, T): exact p~_i (g_i - <g, p~>) and the size of each entry's own terms.

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
    cases = [([1.0, 4.2e-18], [1.0, 0.0]),  # the case: p_1 rounds to exactly 1
             ([0.5, 0.5], [1.0, 0.0]),
             (softmax([40.0, 0.0, -3.0, 1.0]), [0.3, -2.0, 5.0, 1.0]),  # one weight near 1
             (softmax([0.0] * 6), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0 + 2 ** -40]),  # g nearly equal
             (softmax([1.0, 1.0 - 1e-12]), [1e8, -1e8])]
    for _ in range(30):
        n = rng.randint(1, 12)
        x = [rng.gauss(0.0, rng.choice([1.0, 10.0, 60.0])) for _ in range(n)]
        cases.append((softmax(x), [rng.gauss(0.0, 1.0) for _ in range(n)]))
    return cases


@pytest.mark.parametrize("p, g", backward_cases())
def test_softmax_backward_is_within_a_few_ulps_of_its_own_terms(p, g):
    exact, p_exact, terms = exact_backward(p, g)
    for got, want, p_i, p_star, t in zip(softmax_backward(p, g), exact, p, p_exact, terms):
        # 5 roundings (g_k - g_j, p_j times it, fsum, (g_i - g_k) + rest, times p_i), each at
        # most U of the terms, plus what p_k = 1.0 in place of p~_k changes
        bound = 5 * U * float(p_star * t) + abs(Fraction(p_i) - p_star) * t
        assert abs(Fraction(got) - want) <= bound + Fraction(2) ** -1074, (got, float(want))


def test_softmax_backward_keeps_the_gradient_of_a_weight_that_rounded_to_one():
    assert softmax_backward([1.0, 4.2e-18], [1, 0]) == [4.2e-18, -4.2e-18]
    # p_i (g_i - <g, p>) would give 1.0 * (1 - 1.0) = 0.0 for the first entry
    assert softmax_backward([1.0, 4.2e-18], [0, 1]) == [-4.2e-18, 4.2e-18]


def test_softmax_backward_survives_a_gradient_whose_differences_overflow():
    # g_1 - g_2 = 3e308 overflows, but dS = p_i (g_i - <g, p>) = [1.125e308, -1.125e308]
    p, g = [0.25, 0.75], [1.5e308, -1.5e308]
    exact, _, _ = exact_backward(p, g)
    assert softmax_backward(p, g) == [float(v) for v in exact]
    # |dS_i| = p_i |sum_j p_j (g_i - g_j)| <= p_i (1 - p_i) 2 max|g| <= max|g| / 2: never inf
    top = softmax_backward([0.5, 0.5], [1.7976931348623157e308, -1.7976931348623157e308])
    assert top == [8.988465674311579e307, -8.988465674311579e307]


# ------------------------------------------------------------ attention_backward

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


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
@pytest.mark.parametrize("masked", [False, True])
def test_attention_backward_is_within_1e_13_normwise_of_the_exact_gradients(kind, masked):
    for Q, K, V, dO in ADVERSARIAL[kind]:
        mask = None
        if masked:  # query i may not see key i+1 (and the causal-looking rest stays open)
            mask = [[j != i + 1 for j in range(len(K))] for i in range(len(Q))]
        scale = 1.0 / math.sqrt(len(Q[0]))
        got = attention_backward(Q, K, V, dO, mask, scale=scale)
        for computed, exact in zip(got, decimal_attention_backward(Q, K, V, dO, scale, mask)):
            assert normwise_relative_error(computed, exact) <= 1e-13


def test_score_gradient_rows_match_softmax_backward_of_do_v_transpose():
    Q, K, V, dO = dominant_key(3)
    P = [[float(p) for p in decimal_softmax([sum(a * b for a, b in zip(q, k)) / 2
                                             for k in K])] for q in Q]
    dS = score_gradient(P, V, dO)
    for p, g, row in zip(P, matmul(dO, transpose(V)), dS):
        assert row == softmax_backward(p, g)


# ------------------------------------------------ finite answers where they exist

def test_a_finite_scaled_logit_is_never_refused():
    # q . k = 4 (7e153)^2 = 1.96e308 overflows, but scaled by 1/2 it is 9.8e307
    Q, K, V = [[7e153] * 4], [[7e153] * 4, [0.0] * 4], [[1.0], [2.0]]
    assert scaled_dot_product_attention(Q, K, V) == [[1.0]]


def test_the_backward_pass_with_huge_values_is_finite_and_exact():
    Q, K, V, dO = [[1.0]], [[1.0], [0.0]], [[1.7e308], [-1.7e308]], [[1.0]]
    got = attention_backward(Q, K, V, dO)
    exact = decimal_attention_backward(Q, K, V, dO, 1.0)
    for computed, want in zip(got, exact):
        assert normwise_relative_error(computed, want) <= 1e-15
    assert got.dQ[0][0] > 1e307


@pytest.mark.parametrize("call, message", [
    (lambda: attention_backward([[1.0]], [[1.0], [0.0]], [[1e308], [-1e308]], [[1e10]]),
     "attention_backward: dQ is beyond the float range"),
    (lambda: attention_backward([[1.0]] * 3, [[1.0]], [[1.0]], [[1e308]] * 3),
     "attention_backward: dV is beyond the float range"),
    (lambda: score_gradient([[0.5, 0.5]], [[1e308], [-1e308]], [[1e10]]),
     "score_gradient: dS is beyond the float range"),
])
def test_a_gradient_beyond_the_float_range_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
