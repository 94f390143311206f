"""Scaled dot-product attention on plain lists, every intermediate visible.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
        ("Attention Is All You Need", Vaswani et al., 2017, eq. 1)

A matrix is a list of rows.  Q is n x d_k (one row per query), K is m x d_k, V
is m x d_v; scores = Q K^T; c is the scale, 1 / sqrt(d_k) unless given (c = 1:
unscaled); B is the bias, with -inf where the mask or is_causal forbids a key;
S = c Q K^T + B are the logits; P = softmax of each row of S, the weights;
O = P V, the output; dO = dL/dO.

Public API (`__all__`):

    dot, transpose, matmul              the linear algebra, on lists of rows
    attention_steps(Q, K, V, ...)       AttentionSteps(scale, scores,
                                        scaled_scores, weights, output)
    scaled_dot_product_attention(...)   the output O only
    causal_mask(n, m, align=...)        the bool mask of causal attention
    attention_backward(Q, K, V, dO, ...)
                                        AttentionGrads(dQ, dK, dV)
    score_gradient(P, V, dO)            dL/dS, the gradient reaching the logits
    streaming_attention(Q, K, V, ...)   the same output, in one pass over keys
    multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads)
    additive_attention(Q, K, V, W_q, W_k, w_v)
                                        Bahdanau's w_v . tanh(W_q q + W_k k)
    Cost, dot_product_attention_cost, additive_attention_cost
                                        operation counts
    AttentionSteps, AttentionGrads      the named tuples returned above
    MAX_SCORES                          the most scores n m one call computes

Masks follow PyTorch's F.scaled_dot_product_attention and JAX: mask[i][j] is
True when query i may attend to key j.  is_causal=True allows j <= i (aligned
top-left, as both do); causal_mask(n, m, align="bottom-right") gives
FlashAttention's (2.1+) alignment, the one of decoding against a cache.  bias
is added to the scaled scores.

>>> Q, K = [[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]
>>> V = [[10.0, 0.0], [0.0, 10.0]]
>>> [round(o, 4) for o in scaled_dot_product_attention(Q, K, V)[0]]
[6.6976, 3.3024]

Exceptions: ValueError for wrong shapes or values (ragged rows, empty matrices,
NaN or inf, an entry beyond softmax.LIMIT, more than MAX_SCORES scores, a query
left with nothing to attend to); TypeError for the wrong kind of thing (a
string, None, a mask entry that is not a bool, a float where an int is
needed).  Each message names the function, the argument as passed, the rule and
the shapes that matter.  Arguments are never mutated; NumPy arrays are read
through .tolist(), NumPy integers through operator.index.  Every result is
finite: the bound LIMIT on the inputs keeps it so.
"""

import math  # sqrt, fsum, exp, tanh, inf
import operator  # mul: the products of the one dot product
from itertools import chain  # the heads' outputs, side by side
from typing import List, NamedTuple, Optional, Sequence

from softmax import (EMPTY, Normalizer, as_flag, as_int, as_list, as_matrix,
                     as_probabilities, as_real, as_vector, shown, softmax,
                     softmax_backward)

__all__ = ["dot", "transpose", "matmul", "AttentionSteps", "attention_steps",
           "scaled_dot_product_attention", "causal_mask", "AttentionGrads",
           "attention_backward", "score_gradient", "streaming_attention",
           "multi_head_attention", "additive_attention", "Cost",
           "dot_product_attention_cost", "additive_attention_cost",
           "MAX_SCORES"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows

# The most scores n m one call computes (4096 x 4096): the n x m matrices it
# builds (scores, logits, weights; a mask) take a few GB beyond it, and pure
# Python takes minutes.  Checked before anything of that size is built.
MAX_SCORES = 2 ** 24


class AttentionSteps(NamedTuple):  # each step of softmax(c Q K^T + B) V
    scale: float  # c, the factor applied to Q K^T
    scores: Matrix  # Q K^T, n x m
    scaled_scores: Matrix  # S = c Q K^T + B, -inf where masked, n x m
    weights: Matrix  # P = softmax of each row of S, n x m
    output: Matrix  # O = P V, n x d_v


class AttentionGrads(NamedTuple):  # the gradients of a scalar loss L
    dQ: Matrix  # n x d_k
    dK: Matrix  # m x d_k
    dV: Matrix  # m x d_v


# --------------------------------------- the cores (checked input), as derived

def _dots(A: Matrix, B: Matrix) -> Matrix:
    """A B^T: entry [i][j] is A[i] . B[j] = sum_t A[i][t] B[j][t]
    (A r x d, B s x d -> r x s).

    The project's one dot product: each product is rounded, then math.fsum
    rounds their exact sum once, so every Python gives the same bits (sum()
    changed in 3.12, and math.sumprod exists only from 3.12).
    """
    return [[math.fsum(map(operator.mul, a, b)) for b in B] for a in A]


def _transpose(A: Matrix) -> Matrix:
    """A^T: row j is column j of A."""
    return [list(column) for column in zip(*A)]


def _matmul(A: Matrix, B: Matrix) -> Matrix:
    """A B: row i of A against each column of B."""
    return _dots(A, _transpose(B))


def _scaled(c: float, A: Matrix) -> Matrix:
    """c A."""
    return [[c * a for a in row] for row in A]


def _default_scale(d_k: int) -> float:
    """c = 1 / sqrt(d_k), the paper's factor: at initialisation, with
    independent components of mean 0 and variance 1, Var(q . k) = d_k, so
    Var(c q . k) = 1 (derivations.md section 1)."""
    return 1 / math.sqrt(d_k)


def _logits(Q: Matrix, K: Matrix, c: float, B: Matrix):
    """(Q K^T, S) with S = c Q K^T + B: the scores, scaled, then the bias
    added, which is -inf where a key is masked (n x m; derivations.md
    section 1)."""
    scores = _dots(Q, K)  # scores[i][j] = q_i . k_j
    S = [[c * s + b for s, b in zip(row, B_i)] for row, B_i in zip(scores, B)]
    return scores, S


def _attention(Q: Matrix, K: Matrix, V: Matrix, c: float,
               B: Matrix) -> AttentionSteps:
    """scores = Q K^T;  S = c scores + B;  P = softmax(S) row by row;  O = P V
    (the paper's eq. 1; derivations.md section 5 for softmax)."""
    scores, S = _logits(Q, K, c, B)
    P = [softmax(S_i) for S_i in S]  # row i: query i's distribution over keys
    return AttentionSteps(c, scores, S, P, _matmul(P, V))


def _score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """dS: row by row, the softmax backward of dP = dO V^T (derivations.md
    section 4)."""
    return [softmax_backward(P_i, dP_i) for P_i, dP_i in zip(P, _dots(dO, V))]


def _backward(Q: Matrix, K: Matrix, V: Matrix, dO: Matrix, c: float,
              B: Matrix) -> AttentionGrads:
    """dV = P^T dO;  dS = softmax backward of dO V^T;  dQ = c dS K;
    dK = c dS^T Q (derivations.md section 4)."""
    _, S = _logits(Q, K, c, B)
    P = [softmax(S_i) for S_i in S]  # as in _attention, without the output P V
    dS = _score_gradient(P, V, dO)
    dQ = _scaled(c, _matmul(dS, K))
    dK = _scaled(c, _matmul(_transpose(dS), Q))
    dV = _matmul(_transpose(P), dO)
    return AttentionGrads(dQ, dK, dV)


def _streamed(Q: Matrix, K: Matrix, V: Matrix, c: float, B: Matrix,
              block: int) -> Matrix:
    """O = P V in one pass over blocks of keys: per query, a running state
    (m, d) and output o relative to m absorb each block's (m_b, d_b, o_b),
    both moved to m' = max(m, m_b) by the same two factors (derivations.md
    section 6).  Only one block of scores per query exists at a time."""
    states, outputs = [EMPTY] * len(Q), [[0.0] * len(V[0]) for _ in Q]
    for j in range(0, len(K), block):
        _, S = _logits(Q, K[j:j + block], c, [B_i[j:j + block] for B_i in B])
        V_block = _transpose(V[j:j + block])  # the block's columns of V
        for i, S_i in enumerate(S):
            m_b = max(S_i)
            if m_b == -math.inf:  # the mask hides the whole block: it adds nothing
                continue
            e = [math.exp(s - m_b) for s in S_i]
            d_b = math.fsum(e)
            o_b = _dots([e], V_block)[0]  # sum_j e_j v_j
            m = max(states[i].m, m_b)  # finite: m_b is
            r, r_b = math.exp(states[i].m - m), math.exp(m_b - m)  # r = 0 while empty
            states[i] = Normalizer(m, states[i].d * r + d_b * r_b)
            outputs[i] = [r * o + r_b * o_j for o, o_j in zip(outputs[i], o_b)]
    return [[o / state.d for o in o_i] for o_i, state in zip(outputs, states)]


def _heads(X_q: Matrix, X_kv: Matrix, W_Q: Matrix, W_K: Matrix, W_V: Matrix,
           W_O: Matrix, h: int, B: Matrix) -> Matrix:
    """Concat(head_1, ..., head_h) W_O, head_t = Attention(Q_t, K_t, V_t) with
    Q_t = X_q W_Q^t, K_t = X_kv W_K^t, V_t = X_kv W_V^t, each W^t the t-th
    slice of 1/h of the columns; each head uses its own 1/sqrt(d_k)."""
    Q, K, V = _matmul(X_q, W_Q), _matmul(X_kv, W_K), _matmul(X_kv, W_V)
    d_k = len(Q[0]) // h
    heads = []
    for t in range(h):
        Q_t, K_t, V_t = _columns(Q, t, h), _columns(K, t, h), _columns(V, t, h)
        heads.append(_attention(Q_t, K_t, V_t, _default_scale(d_k), B).output)
    concat = [list(chain(*rows)) for rows in zip(*heads)]  # n x h d_v
    return _matmul(concat, W_O)


def _columns(A: Matrix, t: int, h: int) -> Matrix:
    """The t-th of h equal, consecutive slices of A's columns."""
    w = len(A[0]) // h
    return [row[t * w:(t + 1) * w] for row in A]


def _additive(Q: Matrix, K: Matrix, V: Matrix, W_q: Matrix, W_k: Matrix,
              w_v: Vector, B: Matrix) -> Matrix:
    """softmax(e + B) V row by row, e_ij = w_v . tanh(W_q q_i + W_k k_j)
    (n x m): Bahdanau's score, no scale in it."""
    A = _dots(Q, W_q)  # rows W_q q_i, n x d_a
    C = _dots(K, W_k)  # rows W_k k_j, m x d_a
    P = []
    for a_i, B_i in zip(A, B):
        H_i = [[math.tanh(a + c) for a, c in zip(a_i, c_j)]  # m x d_a
               for c_j in C]
        e_i = _dots([w_v], H_i)[0]  # finite: tanh is bounded
        P.append(softmax([e + b for e, b in zip(e_i, B_i)]))
    return _matmul(P, V)


# -------------------------------------------------------- the public functions

def dot(u: Sequence[float], v: Sequence[float]) -> float:
    """Return u . v = u_1 v_1 + ... + u_d v_d: each product rounded, their sum
    rounded once.

    >>> dot([1, 2, 3], [4, 5, 6]), dot([1e16, 1.0, -1e16], [1.0, 1.0, 1.0])
    (32.0, 1.0)
    """
    u, v = as_vector("dot", u, "u"), as_vector("dot", v, "v")
    _same_length(u, v)
    return _dots([u], [v])[0][0]  # finite: d terms of at most LIMIT^2 each


def transpose(A: Matrix) -> Matrix:
    """Return A^T, with (A^T)[j][i] = A[i][j]; r x c -> c x r.

    >>> transpose([[1, 2, 3], [4, 5, 6]])
    [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    """
    return _transpose(as_matrix("transpose", A, "A"))


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """Return A B, with (A B)[i][j] = sum_t A[i][t] B[t][j]; r x c times
    c x s -> r x s.

    >>> matmul([[1, 2], [3, 4]], [[5], [6]])
    [[17.0], [39.0]]
    """
    A, B = as_matrix("matmul", A, "A"), as_matrix("matmul", B, "B")
    _inner_sizes(A, B)
    return _matmul(A, B)


def attention_steps(Q, K, V, mask=None, *, bias=None, is_causal=False,
                    scale=None):
    """Return AttentionSteps(scale, scores, scaled_scores, weights, output):
    scores = Q K^T, S = c scores + bias (-inf where masked), P = softmax(S) row
    by row, output = P V.  Shapes: Q n x d_k, K m x d_k, V m x d_v; scores, S,
    P n x m; output n x d_v.

    >>> Q, K, V = [[1.0, 1.0]], [[1.0, 1.0], [1.0, -1.0]], [[1.0], [0.0]]
    >>> steps = attention_steps(Q, K, V)
    >>> steps.scores, round(steps.scale, 6)
    ([[2.0, 0.0]], 0.707107)
    >>> [round(p, 4) for p in steps.weights[0]]
    [0.8044, 0.1956]
    """
    fn = "attention_steps"
    return _attention(*_inputs(fn, Q, K, V, mask, bias, is_causal, scale))


def scaled_dot_product_attention(Q, K, V, mask=None, *, bias=None,
                                 is_causal=False, scale=None):
    """Return O = softmax(Q K^T / sqrt(d_k) + bias, masked) V.

    Shapes: Q n x d_k, K m x d_k, V m x d_v -> n x d_v; mask and bias n x m.

    >>> scaled_dot_product_attention([[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]],
    ...                              [[1.0], [3.0]])
    [[2.0]]
    """
    fn = "scaled_dot_product_attention"
    Q, K, V, c, B = _inputs(fn, Q, K, V, mask, bias, is_causal, scale)
    return _attention(Q, K, V, c, B).output


def causal_mask(n: int, m: int, *,
                align: str = "top-left") -> List[List[bool]]:
    """Return the n x m causal mask: query i may attend to key j when j <= i
    (align= "top-left": PyTorch's is_causal, JAX) or j <= i + m - n
    ("bottom-right": FlashAttention 2.1+, and n new queries decoding against m
    cached keys).  They agree when n = m.  n m is at most MAX_SCORES.

    >>> causal_mask(2, 3)
    [[True, False, False], [True, True, False]]
    >>> causal_mask(2, 3, align="bottom-right")
    [[True, True, False], [True, True, True]]
    """
    fn = "causal_mask"
    n, m = as_int(fn, n, "n"), as_int(fn, m, "m")
    _at_most_max_scores(fn, n, m, "n", "m")
    _alignment(align)
    shift = m - n if align == "bottom-right" else 0
    return [[j <= i + shift for j in range(m)] for i in range(n)]


def attention_backward(Q: Matrix, K: Matrix, V: Matrix, grad_output: Matrix,
                       mask=None, *, bias=None, is_causal: bool = False,
                       scale: Optional[float] = None) -> AttentionGrads:
    """Return AttentionGrads(dQ, dK, dV) for a loss L with dL/dO = grad_output:
    dV = P^T dO, dS = softmax_backward of each row of dP = dO V^T, dQ = c dS K,
    dK = c dS^T Q.  Shapes: grad_output n x d_v -> dQ n x d_k, dK m x d_k,
    dV m x d_v.

    >>> Q, K, V, dO = [[1.0]], [[1.0], [-1.0]], [[1.0], [0.0]], [[1.0]]
    >>> g = attention_backward(Q, K, V, dO, scale=1.0)
    >>> [round(v, 4) for v in g.dQ[0]], [round(row[0], 4) for row in g.dV]
    ([0.21], [0.8808, 0.1192])
    """
    fn = "attention_backward"
    Q, K, V, c, B = _inputs(fn, Q, K, V, mask, bias, is_causal, scale)
    dO = as_matrix(fn, grad_output, "grad_output")
    _shaped_as_output(fn, dO, "grad_output", Q, "Q", V)
    return _backward(Q, K, V, dO, c, B)  # finite: sums of 4-entry products


def score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """Return dL/dS, row by row dS_i = softmax_backward(P_i, (dO V^T)_i):
    dP = dO V^T reaches the weights, and each row's softmax Jacobian carries it
    to the logits.  Shapes: P n x m, V m x d_v, dO n x d_v -> n x m.

    >>> score_gradient([[0.5, 0.5]], [[1.0], [0.0]], [[1.0]])
    [[0.25, -0.25]]
    """
    fn = "score_gradient"
    P, V = as_matrix(fn, P, "P"), as_matrix(fn, V, "V")
    dO = as_matrix(fn, dO, "dO")
    _one_value_per_weight(fn, P, V)
    _shaped_as_output(fn, dO, "dO", P, "P", V)
    P = [as_probabilities(fn, P_i, f"P[{i}]") for i, P_i in enumerate(P)]
    return _score_gradient(P, V, dO)


def streaming_attention(Q: Matrix, K: Matrix, V: Matrix, mask=None, *,
                        bias=None, is_causal: bool = False,
                        scale: Optional[float] = None,
                        block_size: int = 64) -> Matrix:
    """Return the same P V as scaled_dot_product_attention, in one pass over
    key blocks: per query, a running state (m, d) and output o absorb each
    block's (m_b, d_b, o_b) as m' = max(m, m_b), d' = d e^(m - m') + d_b
    e^(m_b - m'), o' = o e^(m - m') + o_b e^(m_b - m'); finally
    O = o / d.  Only block_size scores per query exist at once.

    >>> Q, K, V = [[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0], [3.0]]
    >>> streaming_attention(Q, K, V, block_size=1)
    [[2.0]]
    """
    fn = "streaming_attention"
    Q, K, V, c, B = _inputs(fn, Q, K, V, mask, bias, is_causal, scale)
    block = as_int(fn, block_size, "block_size")
    return _streamed(Q, K, V, c, B, block)


def multi_head_attention(X_q: Matrix, X_kv: Matrix, W_Q: Matrix, W_K: Matrix,
                         W_V: Matrix, W_O: Matrix, num_heads: int, mask=None,
                         *, is_causal: bool = False) -> Matrix:
    """Return Concat(head_1, ..., head_h) W_O,
    head_t = Attention(X_q W_Q^t, X_kv W_K^t, X_kv W_V^t), W^t the t-th slice
    of 1/h of the columns; each head divides by the sqrt of its own
    d_k.  Shapes: X_q n x d_model, X_kv m x d_model, W_Q and W_K d_model x h
    d_k, W_V d_model x h d_v, W_O h d_v x d_out -> n x d_out.

    >>> I = [[1.0, 0.0], [0.0, 1.0]]
    >>> X = [[1.0, 1.0]]
    >>> multi_head_attention(X, X, I, I, I, I, num_heads=2)
    [[1.0, 1.0]]
    """
    fn = "multi_head_attention"
    h = as_int(fn, num_heads, "num_heads")
    X_q, X_kv = as_matrix(fn, X_q, "X_q"), as_matrix(fn, X_kv, "X_kv")
    W_Q, W_K = as_matrix(fn, W_Q, "W_Q"), as_matrix(fn, W_K, "W_K")
    W_V, W_O = as_matrix(fn, W_V, "W_V"), as_matrix(fn, W_O, "W_O")
    _heads_fit(X_q, X_kv, W_Q, W_K, W_V, W_O, h)
    B = _bias(fn, mask, None, is_causal, X_q, X_kv, ("X_q", "X_kv"))
    return _heads(X_q, X_kv, W_Q, W_K, W_V, W_O, h, B)


def additive_attention(Q: Matrix, K: Matrix, V: Matrix, W_q: Matrix,
                       W_k: Matrix, w_v: Sequence[float], mask=None) -> Matrix:
    """Return softmax(e) V with Bahdanau's score e_ij = w_v .
    tanh(W_q q_i + W_k k_j).  Shapes: Q n x d_q, K m x d_k, V m x d_v, W_q
    d_a x d_q, W_k d_a x d_k, w_v d_a -> n x d_v.  No 1/sqrt(d_a) here, but the
    spread of e grows like d_a unless w_v has variance 1/d_a
    (stats.additive_score_variance).  Below, e = [tanh(1), tanh(-1)]:

    >>> Q, K, V = [[0.0]], [[1.0], [-1.0]], [[2.0], [4.0]]
    >>> out = additive_attention(Q, K, V, [[1.0]], [[1.0]], [1.0])
    >>> want = 2.0 + 2.0 / (1.0 + math.exp(2.0 * math.tanh(1.0)))
    >>> round(out[0][0], 6) == round(want, 6)
    True
    """
    fn = "additive_attention"
    Q, K = as_matrix(fn, Q, "Q"), as_matrix(fn, K, "K")
    V = as_matrix(fn, V, "V")
    W_q, W_k = as_matrix(fn, W_q, "W_q"), as_matrix(fn, W_k, "W_k")
    w_v = as_vector(fn, w_v, "w_v")
    _one_value_per_key(fn, K, V)
    _additive_fits(Q, K, W_q, W_k, w_v)
    B = _bias(fn, mask, None, False, Q, K)
    return _additive(Q, K, V, W_q, W_k, w_v, B)


class Cost(NamedTuple):  # the arithmetic of one forward pass, inputs projected
    multiply_adds: int  # a*b + c operations (a scaling or an addition is one)
    exps: int  # calls to exp (the softmax)
    tanhs: int  # calls to tanh (additive attention only)


def dot_product_attention_cost(n: int, m: int, d_k: int, d_v: int) -> Cost:
    """Return the cost of softmax(Q K^T / sqrt(d_k)) V: n m d_k + n m + n m d_v
    multiply-adds (d_k per score, one to scale it, d_v per pair for P V) and n
    m exp.  The projections Q = X W_Q and K = X W_K are not counted, nor are
    additive attention's.

    >>> dot_product_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=60, exps=6, tanhs=0)
    """
    fn = "dot_product_attention_cost"
    n, m = as_int(fn, n, "n"), as_int(fn, m, "m")
    d_k, d_v = as_int(fn, d_k, "d_k"), as_int(fn, d_v, "d_v")
    return Cost(n * m * d_k + n * m + n * m * d_v, n * m, 0)


def additive_attention_cost(n: int, m: int, d_a: int, d_v: int) -> Cost:
    """Return the cost of additive attention: 2 n m d_a + n m d_v multiply-adds
    and n m d_a tanh: given the projected W_q q_i and W_k k_j (not counted),
    each pair adds two d_a-vectors, takes d_a tanh and a dot with w_v; P V
    costs d_v per pair.

    >>> additive_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=78, exps=6, tanhs=24)
    """
    fn = "additive_attention_cost"
    n, m = as_int(fn, n, "n"), as_int(fn, m, "m")
    d_a, d_v = as_int(fn, d_a, "d_a"), as_int(fn, d_v, "d_v")
    return Cost(2 * n * m * d_a + n * m * d_v, n * m, n * m * d_a)


# ------------------------------------------------------------------ the checks
# Beyond the policy of softmax.py (which also bounds every entry by LIMIT, so
# that no result here can leave the float range): the shapes, the size, the
# mask, is_causal, the bias and the scale.  One rule, one `if`, one message:
# each names the argument as the caller passed it and the shapes that the rule
# compares.

def _inputs(fn, Q, K, V, mask, bias, is_causal, scale):
    """(Q, K, V, c, B), checked, for the scaled dot-product functions: c the
    scale (the paper's 1 / sqrt(d_k) unless given), B the bias with -inf where
    the mask or is_causal hides a key."""
    Q, K = as_matrix(fn, Q, "Q"), as_matrix(fn, K, "K")
    V = as_matrix(fn, V, "V")
    _same_d_k(fn, Q, K)
    _one_value_per_key(fn, K, V)
    B = _bias(fn, mask, bias, is_causal, Q, K)
    if scale is None:
        return Q, K, V, _default_scale(len(K[0])), B
    return Q, K, V, as_real(fn, scale, "scale"), B


def _bias(fn, mask, bias, is_causal, Q, K, names=("Q", "K")) -> Matrix:
    """B, n x m: the bias (0 if None) with -inf where the mask or is_causal
    hides a key, each query left with a key.  With nothing to hide and no bias,
    one shared row of zeros (O(m) memory)."""
    n, m = len(Q), len(K)
    _at_most_max_scores(fn, n, m, f"len({names[0]})", f"len({names[1]})")
    is_causal = as_flag(fn, is_causal, "is_causal")
    M = None if mask is None else _mask(fn, mask, Q, K, names)
    if bias is not None:
        bias = as_matrix(fn, bias, "bias", masked=True)
        _one_row_per_query(fn, bias, "bias", Q, names[0])
        _one_column_per_key(fn, bias, "bias", K, names[1])
    if M is None and not is_causal:
        if bias is None:
            return [[0.0] * m] * n  # nothing to add and nothing hidden
        B = bias
    else:
        B = _hide(M, bias, is_causal, n, m)
    _every_query_attends(fn, B, M, bias, is_causal)
    return B


def _hide(M, bias, is_causal: bool, n: int, m: int) -> Matrix:
    """The bias (0 if None), with -inf where mask[i][j] is False or is_causal
    hides key j > i."""
    B = []
    for i in range(n):
        row = [0.0] * m if bias is None else list(bias[i])
        for j in range(m):
            if M is not None and not M[i][j] or is_causal and j > i:
                row[j] = -math.inf
        B.append(row)
    return B


def _mask(fn, mask, Q, K, names) -> List[List[bool]]:
    """The mask as a new n x m list of bools (True: query i may attend to key
    j)."""
    M = [as_list(fn, row, f"mask[{i}]")
         for i, row in enumerate(as_list(fn, mask, "mask"))]
    _one_row_per_query(fn, M, "mask", Q, names[0])
    _one_column_per_key(fn, M, "mask", K, names[1])
    if {type(a) for row in M for a in row} != {bool}:
        i, j = next((i, j) for i, row in enumerate(M)
                    for j, a in enumerate(row) if type(a) is not bool)
        raise TypeError(
            f"{fn}: mask[{i}][{j}] is {shown(M[i][j])}; mask entries must be "
            "True (attend) or False")
    return M


def _every_query_attends(fn, B: Matrix, M, bias, is_causal: bool) -> None:
    """Each row of B keeps a key; else the error names the query row and what
    hid its keys: the mask, is_causal, bias, or two or three of them
    together."""
    for i, B_i in enumerate(B):
        if max(B_i) == -math.inf:
            raise ValueError(f"{fn}: query row {i} has no key to attend to: "
                             + _hidden_by(i, M, bias, is_causal, len(B_i)))


def _hidden_by(i: int, M, bias, is_causal: bool, m: int) -> str:
    """Which input hid every key of query row i, for its error message."""
    if M is not None and not any(M[i]):
        return f"the mask is False everywhere in row {i}"
    if bias is not None and max(bias[i]) == -math.inf:
        return f"bias is -inf everywhere in row {i}"
    hiders = [name for name, hides in (
        ("the mask", M is not None and not all(M[i])),
        ("is_causal", is_causal and i + 1 < m),
        ("bias", bias is not None and -math.inf in bias[i])) if hides]
    together = " and ".join([", ".join(hiders[:-1]), hiders[-1]])
    return f"{together} together hide every key of row {i}"


def _same_d_k(fn: str, Q: Matrix, K: Matrix) -> None:
    if len(K[0]) != len(Q[0]):
        raise ValueError(
            f"{fn}: K has {_count(len(K[0]), 'column')} but Q has "
            f"{len(Q[0])}; queries and keys need the same d_k (Q is "
            f"{_shape(Q)}, K is {_shape(K)})")


def _one_value_per_key(fn: str, K: Matrix, V: Matrix) -> None:
    if len(V) != len(K):
        raise ValueError(
            f"{fn}: V has {_count(len(V), 'row')} but K has {len(K)}; each "
            f"key needs one row of V (K is {_shape(K)}, V is {_shape(V)})")


def _one_value_per_weight(fn: str, P: Matrix, V: Matrix) -> None:
    if len(V) != len(P[0]):
        raise ValueError(
            f"{fn}: V has {_count(len(V), 'row')} but P has "
            f"{_count(len(P[0]), 'column')}; each key needs one row of V (P "
            f"is {_shape(P)}, V is {_shape(V)})")


def _one_row_per_query(fn: str, A, what: str, Q: Matrix, queries: str) -> None:
    if len(A) != len(Q):
        raise ValueError(
            f"{fn}: {what} has {_count(len(A), 'row')} but {queries} has "
            f"{len(Q)}; {what} needs one row per query ({queries} is "
            f"{_shape(Q)})")


def _one_column_per_key(fn: str, A, what: str, K: Matrix, keys: str) -> None:
    for i, row in enumerate(A):
        if len(row) != len(K):
            raise ValueError(
                f"{fn}: {what}[{i}] has {_count(len(row), 'entry')} but "
                f"{keys} has {_count(len(K), 'row')}; {what} needs one entry "
                f"per key ({keys} is {_shape(K)})")


def _shaped_as_output(fn: str, dO: Matrix, what: str, Q: Matrix, queries: str,
                      V: Matrix) -> None:
    """dO has the shape of the output P V: a row per query, a column per column
    of V."""
    if len(dO) != len(Q):
        raise ValueError(
            f"{fn}: {what} has {_count(len(dO), 'row')} but {queries} has "
            f"{len(Q)}; dL/dO needs one row per query ({queries} is "
            f"{_shape(Q)}, {what} is {_shape(dO)})")
    if len(dO[0]) != len(V[0]):
        raise ValueError(
            f"{fn}: {what} has {_count(len(dO[0]), 'column')} but V has "
            f"{len(V[0])}; dL/dO has the output's d_v columns (V is "
            f"{_shape(V)}, {what} is {_shape(dO)})")


def _heads_fit(X_q, X_kv, W_Q, W_K, W_V, W_O, h: int) -> None:
    """The shapes of multi-head attention, one rule at a time."""
    fn = "multi_head_attention"
    if len(X_kv[0]) != len(X_q[0]):
        raise ValueError(
            f"{fn}: X_kv has {_count(len(X_kv[0]), 'column')} but X_q has "
            f"{len(X_q[0])}; queries and keys come from the same d_model (X_q "
            f"is {_shape(X_q)}, X_kv is {_shape(X_kv)})")
    for W, name in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")):
        if len(W) != len(X_q[0]):
            raise ValueError(
                f"{fn}: {name} has {_count(len(W), 'row')} but X_q has "
                f"{_count(len(X_q[0]), 'column')}; {name} needs d_model rows "
                f"(X_q is {_shape(X_q)}, {name} is {_shape(W)})")
    if len(W_K[0]) != len(W_Q[0]):
        raise ValueError(
            f"{fn}: W_K has {_count(len(W_K[0]), 'column')} but W_Q has "
            f"{len(W_Q[0])}; queries and keys need the same h d_k (W_Q is "
            f"{_shape(W_Q)}, W_K is {_shape(W_K)})")
    for W, name in ((W_Q, "W_Q"), (W_V, "W_V")):
        if len(W[0]) % h:
            raise ValueError(
                f"{fn}: {name} has {_count(len(W[0]), 'column')}, which "
                f"num_heads = {h} does not divide; each head takes an equal "
                f"slice ({name} is {_shape(W)})")
    if len(W_O) != len(W_V[0]):
        raise ValueError(
            f"{fn}: W_O has {_count(len(W_O), 'row')} but W_V has "
            f"{_count(len(W_V[0]), 'column')}; W_O needs one row per column "
            f"of the heads, h d_v (W_V is {_shape(W_V)}, W_O is "
            f"{_shape(W_O)})")


def _additive_fits(Q, K, W_q, W_k, w_v) -> None:
    """The shapes of additive attention, one rule at a time."""
    fn = "additive_attention"
    for W, name, X, x_name in ((W_q, "W_q", Q, "Q"), (W_k, "W_k", K, "K")):
        if len(W[0]) != len(X[0]):
            raise ValueError(
                f"{fn}: {name} has {_count(len(W[0]), 'column')} but {x_name} "
                f"has {len(X[0])}; {name} takes a row of {x_name} ({x_name} "
                f"is {_shape(X)}, {name} is {_shape(W)})")
        if len(W) != len(w_v):
            raise ValueError(
                f"{fn}: {name} has {_count(len(W), 'row')} but w_v has "
                f"{_count(len(w_v), 'entry')}; {name} needs d_a rows, one per "
                f"entry of w_v ({name} is {_shape(W)})")


def _same_length(u: Vector, v: Vector) -> None:
    if len(u) != len(v):
        raise ValueError(
            f"dot: u has length {len(u)} but v has length {len(v)}; a dot "
            "product pairs their entries one to one")


def _inner_sizes(A: Matrix, B: Matrix) -> None:
    if len(A[0]) != len(B):
        raise ValueError(
            f"matmul: A has {_count(len(A[0]), 'column')} but B has "
            f"{_count(len(B), 'row')}; A B needs as many columns of A as rows "
            f"of B (A is {_shape(A)}, B is {_shape(B)})")


def _alignment(align) -> None:
    if not isinstance(align, str):
        raise TypeError(f"causal_mask: align must be a str, 'top-left' or "
                        f"'bottom-right', not {shown(align)}")
    if align not in ("top-left", "bottom-right"):
        raise ValueError(
            "causal_mask: align must be 'top-left' or 'bottom-right', not "
            f"{shown(align)}")


def _at_most_max_scores(fn: str, n: int, m: int, rows: str,
                        columns: str) -> None:
    if n * m > MAX_SCORES:
        raise ValueError(
            f"{fn}: {rows} is {n} and {columns} is {m}: an n x m matrix of "
            f"{n * m} entries, more than MAX_SCORES = {MAX_SCORES} (4096 x "
            "4096), the most one call builds")


def _count(k: int, unit: str) -> str:
    """"1 row", "2 rows"; "1 entry", "3 entries"."""
    if k == 1:
        return f"1 {unit}"
    return f"{k} {unit[:-1]}ies" if unit.endswith("y") else f"{k} {unit}s"


def _shape(A: Matrix) -> str:
    return f"{len(A)}x{len(A[0])}"
