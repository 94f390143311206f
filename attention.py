"""Scaled dot-product attention on plain lists, with every intermediate step visible.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V    ("Attention Is All You Need",
                                                          Vaswani et al., 2017, eq. 1)

A matrix is a list of rows.  Q is n x d_k (one row per query), K is m x d_k, V is m x d_v;
scores = Q K^T; c is the scale, 1 / sqrt(d_k) unless given (c = 1: unscaled); B is the
bias, with -inf where the mask or is_causal forbids a key; S = c Q K^T + B are the logits;
P = softmax of each row of S, the weights; O = P V, the output; dO = dL/dO.

Public API (`__all__`):

    dot, transpose, matmul              the linear algebra, on lists of rows
    attention_steps(Q, K, V, ...)       AttentionSteps(scale, scores, scaled_scores,
                                        weights, output)
    scaled_dot_product_attention(...)   the output O only
    causal_mask(n, m, align=...)        the bool mask of causal attention, either alignment
    attention_backward(Q, K, V, dO, ...) AttentionGrads(dQ, dK, dV)
    score_gradient(P, V, dO)            dL/dS, the gradient that reaches the logits
    streaming_attention(Q, K, V, ...)   the same output in one pass over blocks of keys
    multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads)
    additive_attention(Q, K, V, W_q, W_k, w_v)   Bahdanau's score w_v . tanh(W_q q + W_k k)
    Cost, dot_product_attention_cost, additive_attention_cost   operation counts
    AttentionSteps, AttentionGrads      the named tuples returned above

Masks follow PyTorch's F.scaled_dot_product_attention and JAX: mask[i][j] is True when
query i may attend to key j.  is_causal=True allows j <= i (aligned top-left, as both
do); causal_mask(n, m, align="bottom-right") gives FlashAttention's (2.1+) alignment, the
one of decoding against a cache.  bias is added to the scaled scores.

>>> Q, K, V = [[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[10.0, 0.0], [0.0, 10.0]]
>>> [round(o, 4) for o in scaled_dot_product_attention(Q, K, V)[0]]
[6.6976, 3.3024]

Exceptions: ValueError for wrong shapes or values (ragged rows, empty matrices, NaN or
inf, an entry beyond softmax.LIMIT, a query left with nothing to attend to); TypeError
for the wrong kind of thing (a string, None, a mask entry that is not a bool, a float
where an int is needed).  Each message names the function, the rule and the shapes.
Arguments are never mutated; NumPy arrays are read through .tolist(), NumPy integers
through operator.index.  Every result is finite: the bound LIMIT on the inputs keeps it so.
"""

import math  # sqrt, fsum, exp, tanh, inf
import operator  # mul: the products of the one dot product
from itertools import chain  # every entry of a matrix, row after row
from typing import List, NamedTuple, Optional, Sequence

from softmax import (EMPTY, Normalizer, as_int, as_list, as_matrix, as_vector,
                     online_merge, rescale_factors, softmax, softmax_backward)

__all__ = ["dot", "transpose", "matmul", "AttentionSteps", "attention_steps",
           "scaled_dot_product_attention", "causal_mask", "AttentionGrads",
           "attention_backward", "score_gradient", "streaming_attention",
           "multi_head_attention", "additive_attention", "Cost", "dot_product_attention_cost",
           "additive_attention_cost"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows


class AttentionSteps(NamedTuple):  # every intermediate of softmax(c Q K^T + B) V
    scale: float  # c, the factor applied to Q K^T
    scores: Matrix  # Q K^T, n x m
    scaled_scores: Matrix  # S = c Q K^T + B, -inf where masked, n x m
    weights: Matrix  # P = softmax of each row of S, n x m
    output: Matrix  # O = P V, n x d_v


class AttentionGrads(NamedTuple):  # the gradients of a scalar loss L
    dQ: Matrix  # n x d_k
    dK: Matrix  # m x d_k
    dV: Matrix  # m x d_v


# ------------------------------------------------ the cores (checked input), as derived

def _dots(A: Matrix, B: Matrix) -> Matrix:
    """A B^T: entry [i][j] is A[i] . B[j] = sum_t A[i][t] B[j][t] (A r x d, B s x d -> r x s).

    The project's one dot product: each product is rounded, then math.fsum rounds their
    exact sum once, so every Python gives the same bits (sum() changed in 3.12, and
    math.sumprod exists only from 3.12).
    """
    return [[math.fsum(map(operator.mul, a, b)) for b in B] for a in A]


def _default_scale(d_k: int) -> float:
    """c = 1 / sqrt(d_k), the paper's factor: at initialisation, with independent components
    of mean 0 and variance 1, Var(q . k) = d_k, so Var(c q . k) = 1 (derivations.md section 1)."""
    return 1 / math.sqrt(d_k)


def _logits(Q: Matrix, K: Matrix, c: float, B: Matrix):
    """(Q K^T, S) with S = c Q K^T + B: the scores, scaled, then the bias added, which is -inf
    where a key is masked (n x m; derivations.md section 1)."""
    scores = _dots(Q, K)  # scores[i][j] = q_i . k_j
    return scores, [[c * s + b for s, b in zip(row, B_i)] for row, B_i in zip(scores, B)]


def _attention(Q: Matrix, K: Matrix, V: Matrix, c: float, B: Matrix) -> AttentionSteps:
    """scores = Q K^T;  S = c scores + B;  P = softmax(S) row by row;  O = P V (the paper's
    eq. 1; derivations.md section 5 for softmax)."""
    scores, S = _logits(Q, K, c, B)
    P = [softmax(S_i) for S_i in S]  # the weights: row i, query i's distribution over keys
    return AttentionSteps(c, scores, S, P, _dots(P, list(zip(*V))))  # zip(*V): V's columns


def _score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """dS: row by row, the softmax backward of dP = dO V^T (derivations.md section 4)."""
    return [softmax_backward(P_i, dP_i) for P_i, dP_i in zip(P, _dots(dO, V))]


def _backward(Q: Matrix, K: Matrix, V: Matrix, dO: Matrix, c: float,
              B: Matrix) -> AttentionGrads:
    """dV = P^T dO;  dS = softmax backward of dO V^T;  dQ = c dS K;  dK = c dS^T Q
    (derivations.md section 4)."""
    _, S = _logits(Q, K, c, B)
    P = [softmax(S_i) for S_i in S]  # as in _attention, without the output P V
    dS = _score_gradient(P, V, dO)
    dQ = [[c * x for x in row] for row in _dots(dS, list(zip(*K)))]
    dK = [[c * x for x in row] for row in _dots(list(zip(*dS)), list(zip(*Q)))]
    return AttentionGrads(dQ, dK, _dots(list(zip(*P)), list(zip(*dO))))


def _streamed(Q: Matrix, K: Matrix, V: Matrix, c: float, B: Matrix, block: int) -> Matrix:
    """O = P V in one pass over blocks of keys: per query, a running state (m, d) and output
    o relative to m absorb each block's (m_b, d_b, o_b) with the factors of the online merge
    (derivations.md section 6).  Only one block of scores per query exists at a time."""
    states, outputs = [EMPTY] * len(Q), [[0.0] * len(V[0]) for _ in Q]
    for j in range(0, len(K), block):
        _, S = _logits(Q, K[j:j + block], c, [B_i[j:j + block] for B_i in B])
        V_block = list(zip(*V[j:j + block]))  # the block's columns of V
        for i, S_i in enumerate(S):
            m_b = max(S_i)  # -inf when the mask hides the whole block from query i
            e = [math.exp(s - m_b) if m_b > -math.inf else 0.0 for s in S_i]
            block_state = Normalizer(m_b, math.fsum(e))  # d_b >= 1, or the empty (-inf, 0)
            _, r, r_b = rescale_factors(states[i], block_state)
            o_b = _dots([e], V_block)[0]  # sum_j e^(S_ij - m_b) v_j
            outputs[i] = [r * o + r_b * o_block for o, o_block in zip(outputs[i], o_b)]
            states[i] = online_merge(states[i], block_state)
    return [[o / state.d for o in o_i] for o_i, state in zip(outputs, states)]


def _heads(X_q: Matrix, X_kv: Matrix, W_Q: Matrix, W_K: Matrix, W_V: Matrix, W_O: Matrix,
           h: int, B: Matrix) -> Matrix:
    """Concat(head_1, ..., head_h) W_O, head_t = Attention(X_q W_Q^t, X_kv W_K^t, X_kv W_V^t),
    each W^t a consecutive slice of 1/h of the columns; each head uses its own 1/sqrt(d_k)."""
    Q, K, V = (_dots(X, list(zip(*W))) for X, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    d_k = len(Q[0]) // h
    heads = [_attention(*(_columns(A, t, h) for A in (Q, K, V)), _default_scale(d_k), B).output
             for t in range(h)]
    return _dots([list(chain(*rows)) for rows in zip(*heads)], list(zip(*W_O)))


def _columns(A: Matrix, t: int, h: int) -> Matrix:
    """The t-th of h equal, consecutive slices of A's columns."""
    w = len(A[0]) // h
    return [row[t * w:(t + 1) * w] for row in A]


def _additive_scores(Q: Matrix, K: Matrix, W_q: Matrix, W_k: Matrix, w_v: Vector) -> Matrix:
    """e_ij = w_v . tanh(W_q q_i + W_k k_j) (n x m): Bahdanau's score, no scale in it."""
    A, C = _dots(Q, W_q), _dots(K, W_k)  # rows W_q q_i (n x d_a) and W_k k_j (m x d_a)
    return [_dots([w_v], [[math.tanh(a + c) for a, c in zip(a_i, c_j)] for c_j in C])[0]
            for a_i in A]


# ---------------------------------------------------------------- the public functions

def dot(u: Sequence[float], v: Sequence[float]) -> float:
    """Return u . v = u_1 v_1 + ... + u_d v_d: each product rounded, their sum rounded once.

    >>> dot([1, 2, 3], [4, 5, 6]), dot([1e16, 1.0, -1e16], [1.0, 1.0, 1.0])
    (32.0, 1.0)
    """
    u, v = as_vector("dot", u, "u"), as_vector("dot", v, "v")
    if len(u) != len(v):
        raise ValueError(f"dot: u has length {len(u)} but v has length {len(v)}")
    return _dots([u], [v])[0][0]  # finite: d terms of at most LIMIT^2 each


def transpose(A: Matrix) -> Matrix:
    """Return A^T, with (A^T)[j][i] = A[i][j]; r x c -> c x r.

    >>> transpose([[1, 2, 3], [4, 5, 6]])
    [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    """
    return [list(column) for column in zip(*as_matrix("transpose", A, "A"))]


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """Return A B, with (A B)[i][j] = sum_t A[i][t] B[t][j]; r x c times c x s -> r x s.

    >>> matmul([[1, 2], [3, 4]], [[5], [6]])
    [[17.0], [39.0]]
    """
    A, B = as_matrix("matmul", A, "A"), as_matrix("matmul", B, "B")
    if len(A[0]) != len(B):
        raise ValueError(f"matmul: A is {_shape(A)} and B is {_shape(B)}; A needs as many "
                         "columns as B has rows")
    return _dots(A, list(zip(*B)))  # row i of A against each column of B


def attention_steps(Q, K, V, mask=None, *, bias=None, is_causal=False, scale=None):
    """Return AttentionSteps(scale, scores, scaled_scores, weights, output): scores = Q K^T,
    S = c scores + bias (-inf where masked), P = softmax(S) row by row, output = P V.
    Shapes: Q n x d_k, K m x d_k, V m x d_v; scores, S, P n x m; output n x d_v.

    >>> steps = attention_steps([[1.0, 1.0]], [[1.0, 1.0], [1.0, -1.0]], [[1.0], [0.0]])
    >>> steps.scores, round(steps.scale, 6), [round(p, 4) for p in steps.weights[0]]
    ([[2.0, 0.0]], 0.707107, [0.8044, 0.1956])
    """
    return _attention(*_inputs("attention_steps", Q, K, V, mask, bias, is_causal, scale))


def scaled_dot_product_attention(Q, K, V, mask=None, *, bias=None, is_causal=False, scale=None):
    """Return O = softmax(Q K^T / sqrt(d_k) + bias, masked) V.

    Shapes: Q n x d_k, K m x d_k, V m x d_v -> n x d_v; mask and bias n x m.

    >>> scaled_dot_product_attention([[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0], [3.0]])
    [[2.0]]
    """
    Q, K, V, c, B = _inputs("scaled_dot_product_attention", Q, K, V, mask, bias, is_causal, scale)
    return _attention(Q, K, V, c, B).output


def causal_mask(n: int, m: int, *, align: str = "top-left") -> List[List[bool]]:
    """Return the n x m causal mask: query i may attend to key j when j <= i (align=
    "top-left": PyTorch's is_causal, JAX) or j <= i + m - n ("bottom-right": FlashAttention
    2.1+, and n new queries decoding against m cached keys).  They agree when n = m.

    >>> causal_mask(2, 3), causal_mask(2, 3, align="bottom-right")
    ([[True, False, False], [True, True, False]], [[True, True, False], [True, True, True]])
    """
    fn = "causal_mask"
    n, m = as_int(fn, n, "n"), as_int(fn, m, "m")
    if not isinstance(align, str) or align not in ("top-left", "bottom-right"):
        raise ValueError(f"{fn}: align must be 'top-left' or 'bottom-right', not {align!r}")
    shift = m - n if align == "bottom-right" else 0
    return [[j <= i + shift for j in range(m)] for i in range(n)]


def attention_backward(Q: Matrix, K: Matrix, V: Matrix, grad_output: Matrix, mask=None, *,
                       bias=None, is_causal: bool = False,
                       scale: Optional[float] = None) -> AttentionGrads:
    """Return AttentionGrads(dQ, dK, dV) for a loss L with dL/dO = grad_output: dV = P^T dO,
    dS = softmax_backward of each row of dP = dO V^T, dQ = c dS K, dK = c dS^T Q.
    Shapes: grad_output n x d_v -> dQ n x d_k, dK m x d_k, dV m x d_v.

    >>> g = attention_backward([[1.0]], [[1.0], [-1.0]], [[1.0], [0.0]], [[1.0]], scale=1.0)
    >>> [[round(v, 4) for v in row] for row in g.dQ], [[round(v, 4) for v in row] for row in g.dV]
    ([[0.21]], [[0.8808], [0.1192]])
    """
    fn = "attention_backward"
    Q, K, V, c, B = _inputs(fn, Q, K, V, mask, bias, is_causal, scale)
    dO = as_matrix(fn, grad_output, "grad_output")
    if len(dO) != len(Q) or len(dO[0]) != len(V[0]):
        raise ValueError(f"{fn}: grad_output is {_shape(dO)} but the output is "
                         f"{len(Q)}x{len(V[0])} (Q is {_shape(Q)}, V is {_shape(V)})")
    return _backward(Q, K, V, dO, c, B)  # finite: sums of products of four entries


def score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """Return dL/dS, row by row dS_i = softmax_backward(P_i, (dO V^T)_i): dP = dO V^T reaches
    the weights, and each row's softmax Jacobian carries it to the logits.  Shapes: P n x m,
    V m x d_v, dO n x d_v -> n x m.

    >>> score_gradient([[0.5, 0.5]], [[1.0], [0.0]], [[1.0]])
    [[0.25, -0.25]]
    """
    fn = "score_gradient"
    P, V, dO = as_matrix(fn, P, "P"), as_matrix(fn, V, "V"), as_matrix(fn, dO, "dO")
    if len(P[0]) != len(V) or len(dO) != len(P) or len(dO[0]) != len(V[0]):
        raise ValueError(f"{fn}: P is {_shape(P)}, V is {_shape(V)} and dO is {_shape(dO)}; "
                         "they must be P n x m, V m x d_v, dO n x d_v")
    for i, P_i in enumerate(P):  # softmax_backward checks this too, but names itself
        if min(P_i) < 0.0 or abs(math.fsum(P_i) - 1.0) > 1e-9:
            raise ValueError(f"{fn}: row {i} of P is not a probability vector (entries in "
                             f"[0, 1] summing to 1; P is {_shape(P)}); pass P = softmax(S)")
    return _score_gradient(P, V, dO)


def streaming_attention(Q: Matrix, K: Matrix, V: Matrix, mask=None, *, bias=None,
                        is_causal: bool = False, scale: Optional[float] = None,
                        block_size: int = 64) -> Matrix:
    """Return the same P V as scaled_dot_product_attention, in one pass over key blocks: per
    query, a running state (m, d) and output o absorb each block's (m_b, d_b, o_b) as
    m' = max(m, m_b), d' = d e^(m - m') + d_b e^(m_b - m'), o' = o e^(m - m') + o_b e^(m_b - m');
    finally O = o / d.  Only block_size scores per query exist at once.

    >>> streaming_attention([[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0], [3.0]], block_size=1)
    [[2.0]]
    """
    fn = "streaming_attention"
    inputs = _inputs(fn, Q, K, V, mask, bias, is_causal, scale)
    return _streamed(*inputs, as_int(fn, block_size, "block_size"))


def multi_head_attention(X_q: Matrix, X_kv: Matrix, W_Q: Matrix, W_K: Matrix, W_V: Matrix,
                         W_O: Matrix, num_heads: int, mask=None, *,
                         is_causal: bool = False) -> Matrix:
    """Return Concat(head_1, ..., head_h) W_O, head_t = Attention(X_q W_Q^t, X_kv W_K^t,
    X_kv W_V^t), W^t the t-th slice of 1/h of the columns; each head divides by the sqrt of
    its own d_k.  Shapes: X_q n x d_model, X_kv m x d_model, W_Q and W_K d_model x h d_k,
    W_V d_model x h d_v, W_O h d_v x d_out -> n x d_out.

    >>> I = [[1.0, 0.0], [0.0, 1.0]]
    >>> multi_head_attention([[1.0, 1.0]], [[1.0, 1.0]], I, I, I, I, num_heads=2)
    [[1.0, 1.0]]
    """
    fn = "multi_head_attention"
    h, X_q, X_kv = as_int(fn, num_heads, "num_heads"), as_matrix(fn, X_q, "X_q"), as_matrix(
        fn, X_kv, "X_kv")  # named here, before _inputs calls them Q and K
    W_Q, W_K, W_V, W_O = (as_matrix(fn, W, name) for W, name in
                          ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V"), (W_O, "W_O")))
    X_q, X_kv, _, _, B = _inputs(fn, X_q, X_kv, X_kv, mask, None, is_causal, None)
    rows, columns = [len(W) for W in (W_Q, W_K, W_V, W_O)], [len(W[0]) for W in (W_Q, W_K, W_V)]
    if rows[:3] != [len(X_q[0])] * 3 or columns[1] != columns[0] or rows[3] != columns[2] \
            or columns[0] % h or columns[2] % h:
        raise ValueError(f"{fn}: need W_Q, W_K d_model x h d_k, W_V d_model x h d_v and W_O "
                         f"h d_v x d_out, with d_model = {len(X_q[0])} and h = {h}; got W_Q "
                         f"{_shape(W_Q)}, W_K {_shape(W_K)}, W_V {_shape(W_V)}, W_O {_shape(W_O)}")
    return _heads(X_q, X_kv, W_Q, W_K, W_V, W_O, h, B)


def additive_attention(Q: Matrix, K: Matrix, V: Matrix, W_q: Matrix, W_k: Matrix,
                       w_v: Sequence[float], mask=None) -> Matrix:
    """Return softmax(e) V with Bahdanau's score e_ij = w_v . tanh(W_q q_i + W_k k_j).  Shapes:
    Q n x d_q, K m x d_k, V m x d_v, W_q d_a x d_q, W_k d_a x d_k, w_v d_a -> n x d_v.  No
    1/sqrt(d_a) here, but the spread of e grows like d_a unless w_v has variance 1/d_a
    (stats.additive_score_variance).  Below, e = [tanh(1), tanh(-1)]:

    >>> out = additive_attention([[0.0]], [[1.0], [-1.0]], [[2.0], [4.0]], [[1.0]], [[1.0]], [1.0])
    >>> round(out[0][0], 6) == round(2.0 + 2.0 / (1.0 + math.exp(2.0 * math.tanh(1.0))), 6)
    True
    """
    fn = "additive_attention"
    W_q, W_k = as_matrix(fn, W_q, "W_q"), as_matrix(fn, W_k, "W_k")
    w_v = as_vector(fn, w_v, "w_v")
    Q, K, V, _, B = _inputs(fn, Q, K, V, mask, None, False, None, same_d_k=False)
    if [len(W_q[0]), len(W_k[0]), len(W_q), len(W_k)] != [len(Q[0]), len(K[0])] + [len(w_v)] * 2:
        raise ValueError(f"{fn}: need W_q d_a x d_q, W_k d_a x d_k and w_v of length d_a; got "
                         f"Q {_shape(Q)}, K {_shape(K)}, W_q {_shape(W_q)}, W_k {_shape(W_k)}, "
                         f"w_v of length {len(w_v)}")
    E = _additive_scores(Q, K, W_q, W_k, w_v)  # finite: tanh is bounded
    return _dots([softmax([e + b for e, b in zip(E_i, B_i)]) for E_i, B_i in zip(E, B)],
                 list(zip(*V)))


class Cost(NamedTuple):  # the arithmetic of one forward pass, inputs already projected
    multiply_adds: int  # a*b + c operations (a scaling, or an addition of two numbers, is one)
    exps: int  # calls to exp (the softmax)
    tanhs: int  # calls to tanh (additive attention only)


def dot_product_attention_cost(n: int, m: int, d_k: int, d_v: int) -> Cost:
    """Return the cost of softmax(Q K^T / sqrt(d_k)) V: n m d_k + n m + n m d_v multiply-adds
    (d_k per score, one to scale it, d_v per pair for P V) and n m exp.  The projections
    Q = X W_Q and K = X W_K are not counted, nor are additive attention's.

    >>> dot_product_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=60, exps=6, tanhs=0)
    """
    fn = "dot_product_attention_cost"
    n, m, d_k, d_v = (as_int(fn, v, name) for v, name in ((n, "n"), (m, "m"), (d_k, "d_k"),
                                                          (d_v, "d_v")))
    return Cost(n * m * d_k + n * m + n * m * d_v, n * m, 0)


def additive_attention_cost(n: int, m: int, d_a: int, d_v: int) -> Cost:
    """Return the cost of additive attention: 2 n m d_a + n m d_v multiply-adds, n m d_a tanh:
    given the projected W_q q_i and W_k k_j (not counted), each pair adds two d_a-vectors,
    takes d_a tanh and a dot with w_v; P V costs d_v per pair.

    >>> additive_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=78, exps=6, tanhs=24)
    """
    fn = "additive_attention_cost"
    n, m, d_a, d_v = (as_int(fn, v, name) for v, name in ((n, "n"), (m, "m"), (d_a, "d_a"),
                                                          (d_v, "d_v")))
    return Cost(2 * n * m * d_a + n * m * d_v, n * m, n * m * d_a)


# ------------------------------------------------------------------------ the checks
# Beyond the policy of softmax.py (which also bounds every entry by LIMIT, so that no
# result here can leave the float range): the shapes, the mask, is_causal and the scale.

def _inputs(fn, Q, K, V, mask, bias, is_causal, scale, same_d_k=True):
    """(Q, K, V, c, B), checked, for every attention function: c the scale (the paper's
    1 / sqrt(d_k) unless given), B the bias with -inf where the mask or is_causal forbids a
    key; a query left with no key is refused."""
    Q, K, V = as_matrix(fn, Q, "Q"), as_matrix(fn, K, "K"), as_matrix(fn, V, "V")
    B = [[0.0] * len(K)] * len(Q) if bias is None else as_matrix(fn, bias, "bias", True)
    M = [[True] * len(K)] * len(Q) if mask is None else [
        as_list(fn, row, f"mask[{i}]") for i, row in enumerate(as_list(fn, mask, "mask"))]
    if {type(a) for row in M for a in row} | {type(is_causal)} != {bool}:
        raise TypeError(f"{fn}: the mask's entries and is_causal must be bools (True: attend)")
    if len(K[0]) != len(Q[0]) and same_d_k or len(V) != len(K) or {len(B), len(M)} != {
            len(Q)} or {len(row) for row in B + M} != {len(K)}:
        raise ValueError(f"{fn}: need Q n x d_k, K m x d_k, V m x d_v, mask and bias n x m; "
                         f"got {' '.join(f'{len(A)}x{len(A[0])}' for A in (Q, K, V, M, B))}")
    # no mask and not causal: B is already right (with no bias, one shared row: O(m) memory)
    B = B if mask is None and not is_causal else as_matrix(fn, [[
        b if a and (j <= i or not is_causal) else -math.inf for j, (a, b) in enumerate(zip(
            M_i, B_i))] for i, (M_i, B_i) in enumerate(zip(M, B))], "B", True)
    c = _default_scale(len(K[0])) if scale is None else as_vector(fn, [scale], "scale")[0]
    return Q, K, V, c, B


def _shape(A: Matrix) -> str:
    return f"{len(A)}x{len(A[0])}"
