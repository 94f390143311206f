"""Scaled dot-product attention on plain lists, with every intermediate step visible.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Row convention (stated once, used everywhere): a matrix is a list of rows.

Glossary:
    Q        queries, n x d_k (one row per query)
    K        keys,    m x d_k (one row per key)
    V        values,  m x d_v
    scores   Q K^T, n x m: scores[i][j] = q_i . k_j
    scale    1 / sqrt(d_k) unless given; scale = 1.0 is unscaled attention
    S        the logits fed to softmax: scale * scores + bias, -inf where masked
    P        weights = softmax of each row of S, n x m
    O        output = P V, n x d_v
    dO       an upstream gradient dL/dO, n x d_v

Public API (`__all__`):

    dot, transpose, matmul              the linear algebra, on lists of rows
    attention_steps(Q, K, V, ...)       AttentionSteps(scale, scores, scaled_scores, weights,
                                        output)
    scaled_dot_product_attention(...)   the output matrix only
    attention_backward(Q, K, V, dO, ...) AttentionGrads(dQ, dK, dV)
    score_gradient(P, V, dO)            dL/dS, the gradient reaching the logits
    streaming_attention(Q, K, V, ...)   the same output in one pass over key blocks
    additive_attention(Q, K, V, W_q, W_k, w_v)   Bahdanau's score w_v . tanh(W_q q + W_k k)
    multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads)
    Cost, dot_product_attention_cost, additive_attention_cost   operation counts
    AttentionSteps, AttentionGrads      the named tuples returned above

Masks follow PyTorch's F.scaled_dot_product_attention and JAX: `mask[i][j]` is
True when query i may attend to key j; `is_causal=True` allows j <= i (top-left
aligned); `bias` is added to the scaled scores.  Masked logits are -inf, so
their weight is exactly 0.

>>> Q = [[1.0, 0.0]]
>>> K = [[1.0, 0.0], [0.0, 1.0]]
>>> V = [[10.0, 0.0], [0.0, 10.0]]
>>> [round(o, 4) for o in scaled_dot_product_attention(Q, K, V)[0]]
[6.6976, 3.3024]

Exceptions: ValueError for wrong shapes or values (ragged rows, empty
matrices, NaN or inf, a query left with nothing to attend to, a result beyond
the float range); TypeError for the wrong kind of thing (a string, None, a
non-bool mask entry, a float where an int is needed).  Each message names the
function, the rule and the shapes.  Zero queries (n = 0) are an error too: a
matrix with no rows carries no d_k to check against K.  Arguments are never
mutated; NumPy arrays are read through .tolist() and numpy ints and bools are
accepted where ints and bools are.
"""

import math  # sqrt, exp, tanh, fsum, isfinite, ldexp, sumprod (3.12+)
import operator  # mul, for the dot-product fallback
from itertools import chain  # every entry of a matrix, row after row
from typing import List, NamedTuple, Optional, Sequence

from softmax import (EMPTY, NEG_INF, Normalizer, _exponent, _finite_vector, _integer, _is_bool,
                     _ldexp, _online_merge, _real, _rescale_factors, _sequence, _softmax,
                     _softmax_backward, _vector)

__all__ = ["dot", "transpose", "matmul", "AttentionSteps", "attention_steps",
           "scaled_dot_product_attention", "AttentionGrads", "attention_backward",
           "score_gradient", "streaming_attention", "additive_attention",
           "multi_head_attention", "Cost", "dot_product_attention_cost",
           "additive_attention_cost"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
BoolMatrix = List[List[bool]]  # a mask: True where attention is allowed


# ------------------------------------------------------------ linear algebra

# _dots(u, rows) = [u . r for r in rows] is the one inner loop of every product
# below; it is written twice only so that each version runs its loop in C.
if hasattr(math, "sumprod"):  # Python 3.12+: sumprod, with extended precision
    def _dots(u: Vector, rows: Matrix) -> Vector:
        return [math.sumprod(u, r) for r in rows]
else:  # older Pythons: the same sum of products, with ordinary float rounding
    def _dots(u: Vector, rows: Matrix) -> Vector:
        return [sum(map(operator.mul, u, r)) for r in rows]


def _transpose(A: Matrix) -> Matrix:
    return [list(column) for column in zip(*A)]


def _matmul(A: Matrix, B: Matrix) -> Matrix:
    B_columns = _transpose(B)
    return [_dots(row, B_columns) for row in A]


def _rescaled_dot(u: Vector, v: Vector, c: float = 1.0) -> float:
    """c (u . v) when the direct sum overflowed: c ((u / 2^a) . (v / 2^b)) times 2^(a + b).

    Dividing by a power of two is exact, so this is as accurate as the direct
    sum; it is +-inf only when the true value is beyond the float range.
    """
    a, b = _exponent(u), _exponent(v)
    s = _dots([math.ldexp(x, -a) for x in u], [[math.ldexp(y, -b) for y in v]])[0]
    return _ldexp(c * s, a + b)


def _safe_matmul(A: Matrix, B: Matrix) -> Matrix:
    """A B, with any entry whose direct sum overflowed recomputed by _rescaled_dot."""
    C = _matmul(A, B)
    if math.isfinite(sum(map(sum, C))):  # plain sums: inf or NaN propagate, never raise
        return C
    B_columns = _transpose(B)
    return [[c if math.isfinite(c) else _rescaled_dot(a, b) for c, b in zip(row, B_columns)]
            for a, row in zip(A, C)]


def dot(u: Sequence[float], v: Sequence[float]) -> float:
    """Return u . v = u_1 v_1 + ... + u_d v_d.

    >>> dot([1, 2, 3], [4, 5, 6])
    32.0
    >>> dot([1e200, 1e200], [1e200, -1e200])  # the products overflow, the sum does not
    0.0
    """
    u, v = _finite_vector("dot", u, "u"), _finite_vector("dot", v, "v")
    if len(u) != len(v):
        raise ValueError(f"dot: u has length {len(u)} but v has length {len(v)}")
    return _finite_matrix("dot", "u . v", _safe_matmul([u], [[x] for x in v]))[0][0]


def transpose(A: Matrix) -> Matrix:
    """Return A^T, with (A^T)[j][i] = A[i][j]; r x c -> c x r.

    >>> transpose([[1, 2, 3], [4, 5, 6]])
    [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    """
    return _transpose(_matrix("transpose", "A", A))


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """Return A B, with (A B)[i][j] = sum_t A[i][t] B[t][j]; r x c times c x s -> r x s.

    >>> matmul([[1, 2], [3, 4]], [[5], [6]])
    [[17.0], [39.0]]
    """
    A, B = _matrix("matmul", "A", A), _matrix("matmul", "B", B)
    if len(A[0]) != len(B):
        raise ValueError(f"matmul: A is {_shape(A)} and B is {_shape(B)}; "
                         f"A needs as many columns as B has rows")
    return _finite_matrix("matmul", "A B", _safe_matmul(A, B))


# ------------------------------------------------------ scaled dot-product attention

class AttentionSteps(NamedTuple):
    """Every intermediate of softmax(scale * Q K^T + bias, masked) V."""
    scale: float  # the factor applied to Q K^T
    scores: Matrix  # Q K^T, n x m
    scaled_scores: Matrix  # S = scale * scores + bias, -inf where masked, n x m
    weights: Matrix  # P = softmax of each row of S, n x m
    output: Matrix  # O = P V, n x d_v


class _Rules(NamedTuple):
    """How raw scores become logits: scale, then bias, then mask (-inf); checked input."""
    fn: str
    scale: float
    bias: Optional[Matrix]  # n x m, finite or -inf
    mask: Optional[BoolMatrix]  # n x m
    is_causal: bool

    def logits(self, i: int, q: Vector, K: Matrix, j0: int = 0) -> Vector:
        """Return S[i][j0:j0+len(K)] = scale * (q . k_j) + bias, -inf where j is not allowed."""
        return self.finish(i, _dots(q, K), q, K, j0)

    def finish(self, i: int, raw: Vector, q: Vector, K: Matrix, j0: int = 0) -> Vector:
        """The logits from the raw scores raw[j] = q . k_j (q and K to redo an overflow)."""
        row = [self.scale * s for s in raw]
        if self.bias is not None:
            row = [v + b for v, b in zip(row, self.bias[i][j0:])]  # zip stops with the row
        if self.mask is not None or self.is_causal:
            row = [v if self.allowed(i, j) else NEG_INF for j, v in enumerate(row, j0)]
        if math.isfinite(sum(row)):  # the common case: no overflow, no mask
            return row
        return self._checked(i, q, K, j0, row)

    def _checked(self, i: int, q: Vector, K: Matrix, j0: int, row: Vector) -> Vector:
        """Recompute overflowed entries scale-first; ValueError if a logit is beyond range."""
        for j, (k, v) in enumerate(zip(K, row), j0):
            if not v < math.inf and self.allowed(i, j):  # +inf or NaN where it counts
                b = 0.0 if self.bias is None else self.bias[i][j]
                v = NEG_INF if b == NEG_INF else b + _rescaled_dot(q, k, self.scale)
                if not v < math.inf:
                    raise ValueError(f"{self.fn}: logit S[{i}][{j}] = scale * q_{i} . k_{j} "
                                     "+ bias is beyond the float range (entries of Q and K "
                                     "are too large)")
                row[j - j0] = v
        return row

    def allowed(self, i: int, j: int) -> bool:
        causal_ok = j <= i or not self.is_causal
        return causal_ok and (self.mask is None or self.mask[i][j])

    def nothing_to_attend(self, i: int, m: int) -> ValueError:
        return ValueError(f"{self.fn}: query row {i} has nothing to attend to: every one of "
                          f"its {m} logits is -inf after mask, is_causal and bias")


def _row_softmax(rules: _Rules, logits: Matrix) -> Matrix:
    """P = softmax of each row of the logits, after checking each row has a finite entry."""
    for i, row in enumerate(logits):
        if max(row) == NEG_INF:  # a uniform row or NaN would both be silent lies
            raise rules.nothing_to_attend(i, len(row))
    return [_softmax(row) for row in logits]


def _attend(Q: Matrix, K: Matrix, V: Matrix, rules: _Rules):
    """(S, P, O): the logits, the weights P = softmax(S) and the output O = P V."""
    S = [rules.logits(i, q, K) for i, q in enumerate(Q)]  # n x m
    P = _row_softmax(rules, S)
    return S, P, _matmul(P, V)  # each output row: sum_j p_ij v_j, a convex combination


def attention_steps(Q: Matrix, K: Matrix, V: Matrix, mask: Optional[BoolMatrix] = None, *,
                    bias: Optional[Matrix] = None, is_causal: bool = False,
                    scale: Optional[float] = None) -> AttentionSteps:
    """Return every step of Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V.

    scores = Q K^T;  S = scale * scores + bias, -inf where masked;
    P = softmax(S) row by row;  output = P V.
    Shapes: Q n x d_k, K m x d_k, V m x d_v; scores, S, P n x m; output n x d_v.

    >>> steps = attention_steps([[1.0, 1.0]], [[1.0, 1.0], [1.0, -1.0]], [[1.0], [0.0]])
    >>> steps.scores, round(steps.scale, 6), [round(p, 4) for p in steps.weights[0]]
    ([[2.0, 0.0]], 0.707107, [0.8044, 0.1956])
    """
    fn = "attention_steps"
    Q, K, V, rules = _prepare(fn, Q, K, V, mask, bias, is_causal, scale)
    scores = _finite_matrix(fn, "the raw scores Q K^T", _safe_matmul(Q, _transpose(K)))
    S = [rules.finish(i, raw, q, K) for i, (raw, q) in enumerate(zip(scores, Q))]
    P = _row_softmax(rules, S)
    return AttentionSteps(rules.scale, scores, S, P, _matmul(P, V))


def scaled_dot_product_attention(Q: Matrix, K: Matrix, V: Matrix,
                                 mask: Optional[BoolMatrix] = None, *,
                                 bias: Optional[Matrix] = None, is_causal: bool = False,
                                 scale: Optional[float] = None) -> Matrix:
    """Return softmax(Q K^T / sqrt(d_k) + bias, masked) V; n x d_k, m x d_k, m x d_v -> n x d_v.

    >>> scaled_dot_product_attention([[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0], [3.0]])
    [[2.0]]
    """
    fn = "scaled_dot_product_attention"
    return _attend(*_prepare(fn, Q, K, V, mask, bias, is_causal, scale))[2]


# ------------------------------------------------------------- backward pass

class AttentionGrads(NamedTuple):
    """Gradients of a scalar loss L with respect to Q, K and V."""
    dQ: Matrix  # n x d_k
    dK: Matrix  # m x d_k
    dV: Matrix  # m x d_v


def _score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """dS for checked input: row by row the softmax backward of dP = dO V^T."""
    dP = _matmul(dO, _transpose(V))  # dL/dP = dO V^T: n x m
    return [_softmax_backward(p, g) if math.isfinite(sum(map(abs, g)))
            else _rescaled_score_row(p, V, o) for p, g, o in zip(P, dP, dO)]


def _rescaled_score_row(p: Vector, V: Matrix, o: Vector) -> Vector:
    """One row of dS where dP or the backward overflowed: from o / 2^a and V / 2^b, exactly
    rescaled (the backward is linear in dP = o V^T)."""
    a, b = _exponent(o), max(map(_exponent, V))
    g = _dots([math.ldexp(x, -a) for x in o], [[math.ldexp(y, -b) for y in v] for v in V])
    return [_ldexp(x, a + b) for x in _softmax_backward(p, g)]


def score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """Return dL/dS, row by row dS_i = softmax_backward(P_i, (dO V^T)_i).

    dP = dO V^T is the gradient reaching the weights; the softmax Jacobian of
    each row carries it to the logits.  Shapes: P n x m, V m x d_v, dO n x d_v -> n x m.

    >>> score_gradient([[0.5, 0.5]], [[1.0], [0.0]], [[1.0]])
    [[0.25, -0.25]]
    """
    fn = "score_gradient"
    P, V, dO = _matrix(fn, "P", P), _matrix(fn, "V", V), _matrix(fn, "dO", dO)
    if len(P[0]) != len(V) or len(dO) != len(P) or len(dO[0]) != len(V[0]):
        raise ValueError(f"{fn}: P is {_shape(P)}, V is {_shape(V)} and dO is "
                         f"{_shape(dO)}; they need P n x m, V m x d_v, dO n x d_v")
    _probability_rows(fn, P)
    return _finite_matrix(fn, "dS", _score_gradient(P, V, dO))


def _backward(Q: Matrix, K: Matrix, V: Matrix, dO: Matrix, rules: _Rules) -> AttentionGrads:
    """dV = P^T dO;  dS = softmax backward of dO V^T;  dQ = scale dS K;  dK = scale dS^T Q."""
    P = _row_softmax(rules, [rules.logits(i, q, K) for i, q in enumerate(Q)])
    dV = _safe_matmul(_transpose(P), dO)
    dS = _score_gradient(P, V, dO)
    dQ = [[rules.scale * x for x in row] for row in _safe_matmul(dS, K)]
    dK = [[rules.scale * x for x in row] for row in _safe_matmul(_transpose(dS), Q)]
    return AttentionGrads(dQ, dK, dV)


def attention_backward(Q: Matrix, K: Matrix, V: Matrix, grad_output: Matrix,
                       mask: Optional[BoolMatrix] = None, *, bias: Optional[Matrix] = None,
                       is_causal: bool = False, scale: Optional[float] = None) -> AttentionGrads:
    """Return (dQ, dK, dV) for a loss L with dL/dO = grad_output.

    dV = P^T dO;  dS = softmax_backward of each row of dO V^T;
    dQ = scale * dS K;  dK = scale * dS^T Q.
    Shapes: grad_output n x d_v -> dQ n x d_k, dK m x d_k, dV m x d_v.

    >>> g = attention_backward([[1.0]], [[1.0], [-1.0]], [[1.0], [0.0]], [[1.0]], scale=1.0)
    >>> [[round(v, 4) for v in row] for row in g.dQ], [[round(v, 4) for v in row] for row in g.dV]
    ([[0.21]], [[0.8808], [0.1192]])
    """
    fn = "attention_backward"
    Q, K, V, rules = _prepare(fn, Q, K, V, mask, bias, is_causal, scale)
    dO = _matrix(fn, "grad_output", grad_output)
    if len(dO) != len(Q) or len(dO[0]) != len(V[0]):
        raise ValueError(f"{fn}: grad_output is {_shape(dO)} but the output is "
                         f"{len(Q)}x{len(V[0])} (Q is {_shape(Q)}, V is {_shape(V)})")
    grads = _backward(Q, K, V, dO, rules)
    return AttentionGrads(*(_finite_matrix(fn, name, G) for name, G in zip(grads._fields, grads)))


# ----------------------------------------------------- streaming (online softmax)

def _block_partial(logits: Vector, V_block_columns: Matrix):
    """Return (Normalizer(m_b, d_b), o_b) for one block: o_b = sum_j e^(S_j - m_b) v_j."""
    m_b = max(logits)
    if m_b == NEG_INF:  # every key of this block is masked for this query
        return EMPTY, [0.0] * len(V_block_columns)
    w = [math.exp(s - m_b) for s in logits]
    return Normalizer(m_b, math.fsum(w)), _dots(w, V_block_columns)


def _stream(Q: Matrix, K: Matrix, V: Matrix, rules: _Rules, block_size: int) -> Matrix:
    states = [EMPTY] * len(Q)
    outputs = [[0.0] * len(V[0]) for _ in Q]
    for j0 in range(0, len(K), block_size):
        K_block, V_block_columns = K[j0:j0 + block_size], _transpose(V[j0:j0 + block_size])
        for i, q in enumerate(Q):
            block, o_block = _block_partial(rules.logits(i, q, K_block, j0), V_block_columns)
            _, a, b = _rescale_factors(states[i], block)
            outputs[i] = [a * o + b * o_b for o, o_b in zip(outputs[i], o_block)]
            states[i] = _online_merge(states[i], block)
    for i, state in enumerate(states):
        if state.m == NEG_INF:
            raise rules.nothing_to_attend(i, len(K))
    return [[o / state.d for o in row] for row, state in zip(outputs, states)]


def streaming_attention(Q: Matrix, K: Matrix, V: Matrix, mask: Optional[BoolMatrix] = None, *,
                        bias: Optional[Matrix] = None, is_causal: bool = False,
                        scale: Optional[float] = None, block_size: int = 64) -> Matrix:
    """Return the same P V as scaled_dot_product_attention, in one pass over key blocks.

    For each query the running state (m, d) and the running output o (both
    relative to the running max m) absorb one block at a time:
        m' = max(m, m_b),  d' = d e^(m - m') + d_b e^(m_b - m'),
        o' = o e^(m - m') + o_b e^(m_b - m'),   and finally output = o / d.
    Only block_size scores per query exist at once, never a row of m.
    Shapes: as scaled_dot_product_attention.

    >>> streaming_attention([[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0], [3.0]], block_size=1)
    [[2.0]]
    """
    fn = "streaming_attention"
    inputs = _prepare(fn, Q, K, V, mask, bias, is_causal, scale)
    return _stream(*inputs, _integer(fn, block_size, "block_size", minimum=1))


# ---------------------------------------------------------- additive attention

def _additive_scores(Q: Matrix, K: Matrix, W_q: Matrix, W_k: Matrix, w_v: Vector) -> Matrix:
    """e_ij = w_v . tanh(W_q q_i + W_k k_j), n x m."""
    A = _matmul(Q, _transpose(W_q))  # row i: W_q q_i, n x d_a
    B = _matmul(K, _transpose(W_k))  # row j: W_k k_j, m x d_a
    return [_dots(w_v, [[math.tanh(a + b) for a, b in zip(a_i, b_j)] for b_j in B])
            for a_i in A]


def additive_attention(Q: Matrix, K: Matrix, V: Matrix, W_q: Matrix, W_k: Matrix,
                       w_v: Sequence[float], mask: Optional[BoolMatrix] = None) -> Matrix:
    """Return softmax(e) V with Bahdanau's score e_ij = w_v . tanh(W_q q_i + W_k k_j).

    Shapes: Q n x d_q, K m x d_k, V m x d_v, W_q d_a x d_q, W_k d_a x d_k,
    w_v length d_a -> n x d_v.  No 1/sqrt(d_a) here, but the spread of e does
    grow with d_a unless w_v is initialised with variance 1/d_a (see
    stats.py and docs/ for the measured variances).

    Here e = [tanh(1), tanh(-1)], so p_1 = 1 / (1 + e^(-2 tanh 1)):

    >>> out = additive_attention([[0.0]], [[1.0], [-1.0]], [[2.0], [4.0]], [[1.0]], [[1.0]], [1.0])
    >>> round(out[0][0], 6) == round(2.0 + 2.0 / (1.0 + math.exp(2.0 * math.tanh(1.0))), 6)
    True
    """
    fn = "additive_attention"
    Q, K, V, rules = _prepare(fn, Q, K, V, mask, None, False, None, same_d_k=False)
    W_q, W_k = _matrix(fn, "W_q", W_q), _matrix(fn, "W_k", W_k)
    w_v = _finite_vector(fn, w_v, "w_v")
    d_a = len(w_v)
    if len(W_q[0]) != len(Q[0]) or len(W_k[0]) != len(K[0]) or not len(W_q) == len(W_k) == d_a:
        raise ValueError(f"{fn}: need W_q d_a x d_q, W_k d_a x d_k, w_v of length d_a; got Q "
                         f"{_shape(Q)}, K {_shape(K)}, W_q {_shape(W_q)}, W_k {_shape(W_k)}, "
                         f"w_v of length {len(w_v)}")
    scores = _finite_matrix(fn, "the scores e", _additive_scores(Q, K, W_q, W_k, w_v))
    logits = [[s if rules.allowed(i, j) else NEG_INF for j, s in enumerate(row)]
              for i, row in enumerate(scores)]
    return _matmul(_row_softmax(rules, logits), V)


# ---------------------------------------------------------- multi-head attention

def _split_columns(A: Matrix, h: int) -> List[Matrix]:
    """The h matrices of A's columns taken in h equal, consecutive slices (one per head)."""
    w = len(A[0]) // h
    return [[row[t * w:(t + 1) * w] for row in A] for t in range(h)]


def multi_head_attention(X_q: Matrix, X_kv: Matrix, W_Q: Matrix, W_K: Matrix, W_V: Matrix,
                         W_O: Matrix, num_heads: int, mask: Optional[BoolMatrix] = None, *,
                         is_causal: bool = False) -> Matrix:
    """Return MultiHead = Concat(head_1, ..., head_h) W_O,
    head_i = Attention(X_q W_Q[:, slice_i], X_kv W_K[:, slice_i], X_kv W_V[:, slice_i]).

    Each head sees d_k = (columns of W_Q) / h columns and is scaled by its own
    1/sqrt(d_k).  Shapes: X_q n x d_model, X_kv m x d_model, W_Q and W_K
    d_model x h*d_k, W_V d_model x h*d_v, W_O h*d_v x d_out -> n x d_out.

    >>> I = [[1.0, 0.0], [0.0, 1.0]]
    >>> multi_head_attention([[1.0, 1.0]], [[1.0, 1.0]], I, I, I, I, num_heads=2)
    [[1.0, 1.0]]
    """
    fn = "multi_head_attention"
    h = _integer(fn, num_heads, "num_heads", minimum=1)
    X_q, X_kv = _matrix(fn, "X_q", X_q), _matrix(fn, "X_kv", X_kv)
    W_Q, W_K, W_V, W_O = (_matrix(fn, name, W) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    _check_projections(fn, X_q, X_kv, W_Q, W_K, W_V, W_O, h)
    mask = None if mask is None else _mask(fn, mask, len(X_q), len(X_kv))
    Q, K, V = (_finite_matrix(fn, name, _safe_matmul(X, W)) for name, X, W in
               (("X_q W_Q", X_q, W_Q), ("X_kv W_K", X_kv, W_K), ("X_kv W_V", X_kv, W_V)))
    d_k = len(W_Q[0]) // h  # each head's own d_k, and its own 1/sqrt(d_k)
    rules = _Rules(fn, 1.0 / math.sqrt(d_k), None, mask, _flag(fn, is_causal, "is_causal"))
    heads = [_attend(Q_t, K_t, V_t, rules)[2] for Q_t, K_t, V_t in
             zip(*(_split_columns(A, h) for A in (Q, K, V)))]
    concat = [[v for head in heads for v in head[i]] for i in range(len(X_q))]
    return _finite_matrix(fn, "the output", _safe_matmul(concat, W_O))


def _check_projections(fn, X_q, X_kv, W_Q, W_K, W_V, W_O, h) -> None:
    d_model = len(X_q[0])
    shapes = (f"X_q {_shape(X_q)}, X_kv {_shape(X_kv)}, W_Q {_shape(W_Q)}, W_K {_shape(W_K)}, "
              f"W_V {_shape(W_V)}, W_O {_shape(W_O)}")
    if len(X_kv[0]) != d_model or not len(W_Q) == len(W_K) == len(W_V) == d_model:
        raise ValueError(f"{fn}: X_q, X_kv and the rows of W_Q, W_K, W_V must share d_model; "
                         f"got {shapes}")
    if len(W_K[0]) != len(W_Q[0]):
        raise ValueError(f"{fn}: W_Q and W_K need the same number of columns; got {shapes}")
    for name, W in (("W_Q", W_Q), ("W_V", W_V)):
        if len(W[0]) % h:
            raise ValueError(f"{fn}: {name} has {len(W[0])} columns, not divisible by "
                             f"num_heads={h}; each head needs an equal share")
    if len(W_O) != len(W_V[0]):
        raise ValueError(f"{fn}: W_O needs one row per column of W_V; got {shapes}")


# ------------------------------------------------------------- operation counts

class Cost(NamedTuple):
    """Arithmetic of one forward pass, given inputs that are already projected."""
    multiply_adds: int  # a*b + c operations (a scaling, or an addition of two numbers, is one)
    exps: int  # calls to exp (the softmax)
    tanhs: int  # calls to tanh (additive attention only)


def dot_product_attention_cost(n: int, m: int, d_k: int, d_v: int) -> Cost:
    """Return the cost of softmax(Q K^T / sqrt(d_k)) V: n m d_k + n m + n m d_v multiply-adds.

    Q K^T takes d_k multiply-adds per score; scaling one per score; P V takes
    d_v per (query, key) pair.  The projections Q = X W_Q, K = X W_K are not
    counted (nor are additive attention's, so the two counts compare).

    >>> dot_product_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=60, exps=6, tanhs=0)
    """
    n, m, d_k, d_v = _sizes("dot_product_attention_cost", n=n, m=m, d_k=d_k, d_v=d_v)
    return Cost(n * m * d_k + n * m + n * m * d_v, n * m, 0)


def additive_attention_cost(n: int, m: int, d_a: int, d_v: int) -> Cost:
    """Return the cost of additive attention: 2 n m d_a + n m d_v multiply-adds, n m d_a tanh.

    Given the projected a_i = W_q q_i and b_j = W_k k_j (not counted, like
    Q = X W_Q above), each of the n m pairs adds two d_a-vectors, takes d_a
    tanh and a d_a-long dot with w_v; the output P V costs d_v per pair.

    >>> additive_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=78, exps=6, tanhs=24)
    """
    n, m, d_a, d_v = _sizes("additive_attention_cost", n=n, m=m, d_a=d_a, d_v=d_v)
    return Cost(2 * n * m * d_a + n * m * d_v, n * m, n * m * d_a)


# ---------------------------------------------------------------- validation

def _shape(A: Matrix) -> str:
    return f"{len(A)}x{len(A[0])}"  # A is never empty: every matrix is checked first


def _matrix(fn: str, name: str, A, *, allow_neg_inf: bool = False) -> Matrix:
    """Return A as a new list of float rows: a non-empty rectangle of finite reals (or -inf)."""
    A = _sequence(fn, A, name, "a list of rows")
    if len(A) == 0:
        raise ValueError(f"{fn}: {name} is empty (0 rows); it needs at least one row")
    rows = [_vector(fn, row, f"{name}[{i}]") for i, row in enumerate(A)]
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"{fn}: {name} is ragged: row 0 has {width} entries "
                             f"but row {i} has {len(row)}")
        if not math.isfinite(sum(row)):  # finite sums come only from finite entries
            _check_entries(fn, name, i, row, allow_neg_inf)
    return rows


def _check_entries(fn: str, name: str, i: int, row: Vector, allow_neg_inf: bool) -> None:
    for j, v in enumerate(row):
        if not (math.isfinite(v) or (allow_neg_inf and v == NEG_INF)):
            allowed = "finite or -inf" if allow_neg_inf else "finite"
            raise ValueError(f"{fn}: {name}[{i}][{j}] is {v}; entries must be {allowed}")


def _finite_matrix(fn: str, name: str, A: Matrix) -> Matrix:
    """A, or ValueError when an entry of the true result is beyond the float range."""
    if not math.isfinite(sum(map(sum, A))) and not all(map(math.isfinite, chain.from_iterable(A))):
        raise ValueError(f"{fn}: {name} is beyond the float range (about 1.8e308) for "
                         f"these inputs ({_shape(A)}); the entries are too large")
    return A


def _probability_rows(fn: str, P: Matrix) -> None:
    for i, row in enumerate(P):
        if min(row) < 0.0 or abs(math.fsum(row) - 1.0) > 1e-9:  # so no entry exceeds 1
            raise ValueError(f"{fn}: row {i} of P is not a probability vector (entries in "
                             f"[0, 1] summing to 1; P is {_shape(P)}); pass P = softmax of "
                             "the logits")


def _flag(fn: str, value, what: str) -> bool:
    if not _is_bool(value):
        raise TypeError(f"{fn}: {what} must be True or False, not {value!r}")
    return bool(value)


def _mask(fn: str, mask, n: int, m: int) -> BoolMatrix:
    """Return the mask as a new list of bool rows, checking it is n x m of bools."""
    rows = [_sequence(fn, row, f"mask[{i}]", "a list of bools")
            for i, row in enumerate(_sequence(fn, mask, "mask", "a list of rows of bools"))]
    if len(rows) != n or any(len(row) != m for row in rows):
        raise ValueError(f"{fn}: mask must be {n}x{m} (queries x keys) to match Q and K; "
                         f"got {len(rows)} rows of lengths {sorted({len(r) for r in rows})}")
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if not _is_bool(v):  # 0/1 or 0.0/-inf would be ambiguous: which means "keep"?
                raise TypeError(f"{fn}: mask[{i}][{j}] is {v!r} ({type(v).__name__}); "
                                "mask entries must be bool (True = may attend); "
                                "pass additive values through bias instead")
    return [[bool(v) for v in row] for row in rows]


def _scale(fn: str, scale, d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)  # the paper's choice: Var(q.k * scale) = 1
    return _real(fn, scale, "scale")


def _sizes(fn: str, **sizes) -> List[int]:
    return [_integer(fn, v, name, minimum=1) for name, v in sizes.items()]


def _prepare(fn, Q, K, V, mask, bias, is_causal, scale, *, same_d_k=True):
    """Validate the arguments shared by every attention function: (Q, K, V, rules), copies."""
    Q, K, V = (_matrix(fn, name, A) for name, A in (("Q", Q), ("K", K), ("V", V)))
    if same_d_k and len(K[0]) != len(Q[0]):
        raise ValueError(f"{fn}: K has {len(K[0])} columns but Q has {len(Q[0])}; queries "
                         f"and keys need the same d_k (Q is {_shape(Q)}, K is {_shape(K)})")
    if len(V) != len(K):
        raise ValueError(f"{fn}: V has {len(V)} rows but K has {len(K)}; "
                         f"each key needs one value (K is {_shape(K)}, V is {_shape(V)})")
    n, m = len(Q), len(K)
    is_causal = _flag(fn, is_causal, "is_causal")
    mask = None if mask is None else _mask(fn, mask, n, m)
    if bias is not None:
        bias = _matrix(fn, "bias", bias, allow_neg_inf=True)
        if len(bias) != n or len(bias[0]) != m:
            raise ValueError(f"{fn}: bias is {_shape(bias)} but must be {n}x{m} "
                             "(queries x keys)")
    return Q, K, V, _Rules(fn, _scale(fn, scale, len(Q[0])), bias, mask, is_causal)
