"""The row-by-row reference of stats' saturation and gradient statistics.

oracles.exact.chi_square_rows re-makes the draws of stats' rows; explicit_row builds a
(Q, K, V, G) with exactly those scores, dP, |q|^2 and chi^2(d_k - 1), through
which the library's public attention functions (attention_steps,
softmax_jacobian, score_gradient, attention_backward) compute each statistic from
its definition.  Shared by test_stats.py and test_report.py.
"""

import math  # sqrt, fsum

from attention import attention_backward, attention_steps, score_gradient
from oracles.exact import chi_square_rows, decimal_entropy
from softmax import softmax_jacobian

D_V = 8  # the width of V and G in the rows of saturation_stats and gradient_stats


def row_statistics(Q, K, V, G, c):
    """(max p, H(p), ||J||_F, ||dL/dS||, ||dL/dQ||) of one attention row, from the
    definitions: p = softmax(c q K^T), J = diag(p) - p p^T, dS = score_gradient, dQ from
    attention_backward.  H at 50 digits."""
    steps = attention_steps(Q, K, V, scale=c)
    S, P = steps.scaled_scores[0], steps.weights
    J = softmax_jacobian(S)
    dS = score_gradient(P, V, G)[0]
    dQ = attention_backward(Q, K, V, G, scale=c).dQ[0]
    return (max(P[0]), decimal_entropy(S), math.sqrt(math.fsum(v * v for r in J for v in r)),
            math.sqrt(math.fsum(v * v for v in dS)), math.sqrt(math.fsum(v * v for v in dQ)))


def explicit_row(row, c):
    """(Q, K, V, G) for one chi-square row: q = (|q|, 0), k_j = (z_j, u_j), so q . k_j =
    |q| z_j; V = [[z'_j]] and G = [[|G|]], so dP_j = |G| z'_j; the orthogonal parts u_j =
    sqrt(rest) dS_j / ||dS|| make ||sum_j dS_j u_j||^2 = ||dS||^2 rest, the chi^2(d_k - 1)
    that the row draws for them."""
    q2, g2, z, z_prime, rest = row
    Q, V, G = [[math.sqrt(q2), 0.0]], [[v] for v in z_prime], [[math.sqrt(g2)]]
    K = [[v, 0.0] for v in z]
    dS = score_gradient(attention_steps(Q, K, V, scale=c).weights, V, G)[0]
    norm = math.sqrt(math.fsum(g * g for g in dS))
    return Q, [[v, math.sqrt(rest) * g / norm if norm else 0.0] for v, g in zip(z, dS)], V, G


def row_norms(d_k, c, m, trials, seed):
    """(||dL/dS|| of each row, ||dL/dQ|| of each row) for the rows that
    stats.gradient_stats(d_k, ..., m=m, trials=trials, seed=seed) draws, with the
    scale c, each from the definitions (row_statistics)."""
    values = [row_statistics(*explicit_row(row, c), c)[3:]
              for row in chi_square_rows(d_k, m, D_V, trials, seed)]
    return [v[0] for v in values], [v[1] for v in values]
