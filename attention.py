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
    dO       an upstream gradient dL/dO, n x d_v (G in the tests)

Public functions:

    dot, transpose, matmul              the linear algebra, on lists of rows
    attention_steps(Q, K, V, ...)       AttentionSteps(scale, scores, scaled_scores, weights, output)
    scaled_dot_product_attention(...)   the output matrix only
    attention_backward(Q, K, V, dO, ...) AttentionGrads(dQ, dK, dV)
    score_gradient(P, V, dO)            dL/dS, the gradient reaching the logits
    streaming_attention(Q, K, V, ...)   the same output in one pass over key blocks
    additive_attention(Q, K, V, W_q, W_k, w_v)   Bahdanau's score w_v . tanh(W_q q + W_k k)
    multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads)
    dot_product_attention_cost, additive_attention_cost   operation counts

Masks follow PyTorch and JAX: `mask[i][j]` is True when query i may attend to
key j; `is_causal=True` allows j <= i (top-left aligned); `bias` is added to
the scaled scores.  Masked logits are -inf, so their weight is exactly 0.

>>> Q = [[1.0, 0.0]]
>>> K = [[1.0, 0.0], [0.0, 1.0]]
>>> V = [[10.0, 0.0], [0.0, 10.0]]
>>> [round(o, 4) for o in scaled_dot_product_attention(Q, K, V)[0]]
[6.6976, 3.3024]

Exceptions: ValueError for wrong shapes or values (ragged rows, empty
matrices, d_k = 0, NaN or inf, a query left with nothing to attend to),
TypeError for the wrong kind of thing (a string, a non-bool mask entry); each
message names the function, the rule and the shapes.  Zero queries (n = 0)
are an error too: a matrix with no rows carries no d_k to check against K.
Arguments are never mutated.
"""

import math  # sqrt, exp, tanh, isfinite, fsum
import operator  # mul, for the dot-product fallback
from numbers import Real  # what counts as a number
from typing import List, NamedTuple, Optional, Sequence

from softmax import EMPTY, NEG_INF, Normalizer, as_reals, online_merge, rescale_factors
from softmax import _softmax  # softmax without re-checking rows already checked here
from softmax import softmax_backward

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


def dot(u: Sequence[float], v: Sequence[float]) -> float:
    """Return u . v = u_1 v_1 + ... + u_d v_d.

    >>> dot([1, 2, 3], [4, 5, 6])
    32.0
    """
    u, v = as_reals("dot", u, "u"), as_reals("dot", v, "v")
    for name, w in (("u", u), ("v", v)):
        if not all(map(math.isfinite, w)):  # 0 * inf would be a silent NaN
            i = next(i for i, x in enumerate(w) if not math.isfinite(x))
            raise ValueError(f"dot: {name}[{i}] is {w[i]}; entries must be finite")
    if len(u) != len(v):
        raise ValueError(f"dot: u has length {len(u)} but v has length {len(v)}")
    return float(_dots(u, [v])[0])


def transpose(A: Matrix) -> Matrix:
    """Return A^T, with (A^T)[j][i] = A[i][j]; r x c -> c x r.

    >>> transpose([[1, 2, 3], [4, 5, 6]])
    [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    """
    return _transpose(as_matrix("transpose", "A", A))


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """Return A B, with (A B)[i][j] = sum_t A[i][t] B[t][j]; r x c times c x s -> r x s.

    >>> matmul([[1, 2], [3, 4]], [[5], [6]])
    [[17.0], [39.0]]
    """
    A, B = as_matrix("matmul", "A", A), as_matrix("matmul", "B", B)
    if len(A[0]) != len(B):
        raise ValueError(f"matmul: A is {_shape(A)} and B is {_shape(B)}; "
                         f"A needs as many columns as B has rows")
    return _matmul(A, B)


# ---------------------------------------------------------------- validation

def _shape(A: Matrix) -> str:
    return f"{len(A)}x{len(A[0]) if A else 0}"


def as_matrix(fn: str, name: str, A: Matrix, *, allow_neg_inf: bool = False) -> Matrix:
    """Return A as a new list of float rows after checking it is a non-empty rectangle.

    Entries must be finite real numbers (or -inf too, with allow_neg_inf).

    >>> as_matrix("demo", "A", ((1, 2),))
    [[1.0, 2.0]]
    """
    if isinstance(A, (str, bytes)) or not isinstance(A, Sequence):
        raise TypeError(f"{fn}: {name} must be a list of rows, not {type(A).__name__}")
    if len(A) == 0:
        raise ValueError(f"{fn}: {name} is empty (0 rows); it needs at least one row")
    rows = [as_reals(fn, row, f"{name}[{i}]") for i, row in enumerate(A)]
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"{fn}: {name} is ragged: row 0 has {width} entries "
                             f"but row {i} has {len(row)}")
        if not all(map(math.isfinite, row)):
            for j, v in enumerate(row):
                if not (math.isfinite(v) or (allow_neg_inf and v == NEG_INF)):
                    allowed = "finite or -inf" if allow_neg_inf else "finite"
                    raise ValueError(f"{fn}: {name}[{i}][{j}] is {v}; entries must be {allowed}")
    return rows


def _as_mask(fn: str, mask: BoolMatrix, n: int, m: int) -> BoolMatrix:
    """Return the mask as a new list of bool rows, checking it is n x m of bools."""
    if isinstance(mask, (str, bytes)) or not isinstance(mask, Sequence):
        raise TypeError(f"{fn}: mask must be a list of rows of bools, not {type(mask).__name__}")
    if len(mask) != n or any(not isinstance(r, Sequence) or len(r) != m for r in mask):
        raise ValueError(f"{fn}: mask must be {n}x{m} (queries x keys) to match Q and K")
    for i, row in enumerate(mask):
        for j, v in enumerate(row):
            if not isinstance(v, bool):  # 0/1 or 0.0/-inf would be ambiguous: which means "keep"?
                raise TypeError(f"{fn}: mask[{i}][{j}] is {v!r} ({type(v).__name__}); "
                                "mask entries must be bool (True = may attend); "
                                "pass additive values through bias instead")
    return [list(row) for row in mask]


def _as_scale(fn: str, scale: Optional[float], d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)  # the paper's choice: Var(q.k * scale) = 1
    if isinstance(scale, bool) or not isinstance(scale, Real):
        raise TypeError(f"{fn}: scale must be a real number or None, not {scale!r}")
    if not math.isfinite(scale):
        raise ValueError(f"{fn}: scale is {scale}; it must be finite")
    return float(scale)


class _Rules(NamedTuple):
    """How raw scores become logits: scale, then bias, then mask (-inf)."""
    fn: str
    scale: float
    bias: Optional[Matrix]
    mask: Optional[BoolMatrix]
    is_causal: bool

    def logits(self, i: int, raw: Vector, j0: int = 0) -> Vector:
        """Return S[i][j0:j0+len(raw)] = scale * raw + bias, -inf where key j is not allowed."""
        row = [self.scale * s for s in raw]
        if self.bias is not None:
            row = [v + b for v, b in zip(row, self.bias[i][j0:j0 + len(row)])]
        if self.mask is not None or self.is_causal:
            row = [v if self.allowed(i, j) else NEG_INF for j, v in enumerate(row, j0)]
        if math.inf in row or any(map(math.isnan, row)):  # the scores overflowed
            j, v = next((j, v) for j, v in enumerate(row, j0) if not v < math.inf)
            raise ValueError(f"{self.fn}: logit S[{i}][{j}] is {v}; "
                             "Q K^T overflowed (entries of Q and K are too large)")
        return row

    def allowed(self, i: int, j: int) -> bool:
        causal_ok = j <= i or not self.is_causal
        return causal_ok and (self.mask is None or self.mask[i][j])

    def nothing_to_attend(self, i: int, m: int) -> ValueError:
        return ValueError(f"{self.fn}: query row {i} has nothing to attend to: every one of "
                          f"its {m} logits is -inf after mask, is_causal and bias")


class _Inputs(NamedTuple):
    Q: Matrix
    K: Matrix
    V: Matrix
    rules: _Rules


def _prepare(fn, Q, K, V, mask, bias, is_causal, scale, *, same_d_k=True) -> _Inputs:
    """Validate the arguments shared by every attention function; return copies."""
    Q, K, V = (as_matrix(fn, name, A) for name, A in (("Q", Q), ("K", K), ("V", V)))
    if same_d_k and len(K[0]) != len(Q[0]):
        raise ValueError(f"{fn}: K has {len(K[0])} columns but Q has {len(Q[0])}; "
                         f"queries and keys need the same d_k (Q is {_shape(Q)}, K is {_shape(K)})")
    if len(V) != len(K):
        raise ValueError(f"{fn}: V has {len(V)} rows but K has {len(K)}; "
                         f"each key needs one value (K is {_shape(K)}, V is {_shape(V)})")
    n, m = len(Q), len(K)
    if not isinstance(is_causal, bool):
        raise TypeError(f"{fn}: is_causal must be True or False, not {is_causal!r}")
    if mask is not None:
        mask = _as_mask(fn, mask, n, m)
    if bias is not None:
        bias = as_matrix(fn, "bias", bias, allow_neg_inf=True)
        if len(bias) != n or len(bias[0]) != m:
            raise ValueError(f"{fn}: bias is {_shape(bias)} but must be {n}x{m} (queries x keys)")
    return _Inputs(Q, K, V, _Rules(fn, _as_scale(fn, scale, len(Q[0])), bias, mask, is_causal))


# ------------------------------------------------------ scaled dot-product attention

class AttentionSteps(NamedTuple):
    """Every intermediate of softmax(scale * Q K^T + bias, masked) V."""
    scale: float  # the factor applied to Q K^T
    scores: Matrix  # Q K^T, n x m
    scaled_scores: Matrix  # S = scale * scores + bias, -inf where masked, n x m
    weights: Matrix  # P = softmax of each row of S, n x m
    output: Matrix  # O = P V, n x d_v


def _row_softmax(rules: _Rules, logits: Matrix) -> Matrix:
    """P = softmax of each row of the logits, after checking each row has a finite entry."""
    for i, row in enumerate(logits):
        if max(row) == NEG_INF:  # a uniform row or NaN would both be silent lies
            raise rules.nothing_to_attend(i, len(row))
    return [_softmax(row) for row in logits]  # rows are finite or -inf (checked by logits)


def _steps(fn: str, inputs: _Inputs) -> AttentionSteps:
    Q, K, V, rules = inputs
    scores = [_dots(q, K) for q in Q]  # Q K^T: n x m
    scaled_scores = [rules.logits(i, row) for i, row in enumerate(scores)]
    weights = _row_softmax(rules, scaled_scores)
    output = _matmul(weights, V)  # each row: sum_j p_ij v_j
    return AttentionSteps(rules.scale, scores, scaled_scores, weights, output)


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
    return _steps("attention_steps", _prepare("attention_steps", Q, K, V, mask, bias,
                                              is_causal, scale))


def scaled_dot_product_attention(Q: Matrix, K: Matrix, V: Matrix,
                                 mask: Optional[BoolMatrix] = None, *,
                                 bias: Optional[Matrix] = None, is_causal: bool = False,
                                 scale: Optional[float] = None) -> Matrix:
    """Return softmax(Q K^T / sqrt(d_k) + bias, masked) V; n x d_k, m x d_k, m x d_v -> n x d_v.

    >>> scaled_dot_product_attention([[0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0], [3.0]])
    [[2.0]]
    """
    fn = "scaled_dot_product_attention"
    return _steps(fn, _prepare(fn, Q, K, V, mask, bias, is_causal, scale)).output


# ------------------------------------------------------------- backward pass

class AttentionGrads(NamedTuple):
    """Gradients of a scalar loss L with respect to Q, K and V."""
    dQ: Matrix  # n x d_k
    dK: Matrix  # m x d_k
    dV: Matrix  # m x d_v


def score_gradient(P: Matrix, V: Matrix, dO: Matrix) -> Matrix:
    """Return dL/dS, row by row dS_i = softmax_backward(P_i, (dO V^T)_i).

    dP = dO V^T is the gradient reaching the weights; the softmax Jacobian of
    each row carries it to the logits.  Shapes: P n x m, V m x d_v, dO n x d_v -> n x m.

    >>> score_gradient([[0.5, 0.5]], [[1.0], [0.0]], [[1.0]])
    [[0.25, -0.25]]
    """
    P, V, dO = (as_matrix("score_gradient", name, A) for name, A in (("P", P), ("V", V), ("dO", dO)))
    if len(P[0]) != len(V) or len(dO) != len(P) or len(dO[0]) != len(V[0]):
        raise ValueError(f"score_gradient: P is {_shape(P)}, V is {_shape(V)} and dO is "
                         f"{_shape(dO)}; they need P n x m, V m x d_v, dO n x d_v")
    dP = _matmul(dO, _transpose(V))  # dL/dP = dO V^T: n x m
    return [softmax_backward(p, g) for p, g in zip(P, dP)]


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
    inputs = _prepare(fn, Q, K, V, mask, bias, is_causal, scale)
    dO = as_matrix(fn, "grad_output", grad_output)
    n, d_v = len(inputs.Q), len(inputs.V[0])
    if len(dO) != n or len(dO[0]) != d_v:
        raise ValueError(f"{fn}: grad_output is {_shape(dO)} but the output is {n}x{d_v}")
    steps = _steps(fn, inputs)
    dV = _matmul(_transpose(steps.weights), dO)
    dS = score_gradient(steps.weights, inputs.V, dO)
    dQ = [[steps.scale * v for v in row] for row in _matmul(dS, inputs.K)]
    dK = [[steps.scale * v for v in row] for row in _matmul(_transpose(dS), inputs.Q)]
    return AttentionGrads(dQ, dK, dV)


# ----------------------------------------------------- streaming (online softmax)

def _block_partial(logits: Vector, V_block_columns: Matrix):
    """Return (Normalizer(m_b, d_b), o_b) for one block: o_b = sum_j e^(S_j - m_b) v_j."""
    m_b = max(logits)
    if m_b == NEG_INF:  # every key of this block is masked for this query
        return EMPTY, [0.0] * len(V_block_columns)
    w = [math.exp(s - m_b) for s in logits]
    return Normalizer(m_b, math.fsum(w)), _dots(w, V_block_columns)


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
    Q, K, V, rules = _prepare(fn, Q, K, V, mask, bias, is_causal, scale)
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"{fn}: block_size must be a positive int, not {block_size!r}")
    states = [EMPTY] * len(Q)
    outputs = [[0.0] * len(V[0]) for _ in Q]
    for j0 in range(0, len(K), block_size):
        K_block, V_block_columns = K[j0:j0 + block_size], _transpose(V[j0:j0 + block_size])
        for i, q in enumerate(Q):
            logits = rules.logits(i, _dots(q, K_block), j0)
            block, o_block = _block_partial(logits, V_block_columns)
            _, a, b = rescale_factors(states[i], block)
            outputs[i] = [a * o + b * o_b for o, o_b in zip(outputs[i], o_block)]
            states[i] = online_merge(states[i], block)
    for i, state in enumerate(states):
        if state.m == NEG_INF:
            raise rules.nothing_to_attend(i, len(K))
    return [[o / state.d for o in row] for row, state in zip(outputs, states)]


# ---------------------------------------------------------- additive attention

def additive_attention(Q: Matrix, K: Matrix, V: Matrix, W_q: Matrix, W_k: Matrix,
                       w_v: Sequence[float], mask: Optional[BoolMatrix] = None) -> Matrix:
    """Return softmax(e) V with Bahdanau's score e_ij = w_v . tanh(W_q q_i + W_k k_j).

    Shapes: Q n x d_q, K m x d_k, V m x d_v, W_q d_a x d_q, W_k d_a x d_k,
    w_v length d_a -> n x d_v.  No 1/sqrt(d_k): tanh keeps each term in [-1, 1].

    Here e = [tanh(1), tanh(-1)], so p_1 = 1 / (1 + e^(-2 tanh 1)):

    >>> out = additive_attention([[0.0]], [[1.0], [-1.0]], [[2.0], [4.0]], [[1.0]], [[1.0]], [1.0])
    >>> round(out[0][0], 6) == round(2.0 + 2.0 / (1.0 + math.exp(2.0 * math.tanh(1.0))), 6)
    True
    """
    fn = "additive_attention"
    Q, K, V, rules = _prepare(fn, Q, K, V, mask, None, False, 1.0, same_d_k=False)
    W_q, W_k = as_matrix(fn, "W_q", W_q), as_matrix(fn, "W_k", W_k)
    w_v = as_reals(fn, w_v, "w_v")
    if len(W_q[0]) != len(Q[0]) or len(W_k[0]) != len(K[0]) or not len(W_q) == len(W_k) == len(w_v):
        raise ValueError(f"{fn}: need W_q d_a x d_q, W_k d_a x d_k, w_v of length d_a; got Q "
                         f"{_shape(Q)}, K {_shape(K)}, W_q {_shape(W_q)}, W_k {_shape(W_k)}, "
                         f"w_v of length {len(w_v)}")
    A = _matmul(Q, _transpose(W_q))  # row i: W_q q_i, n x d_a
    B = _matmul(K, _transpose(W_k))  # row j: W_k k_j, m x d_a
    scores = [_dots(w_v, [[math.tanh(a + b) for a, b in zip(a_i, b_j)] for b_j in B]) for a_i in A]
    logits = [rules.logits(i, row) for i, row in enumerate(scores)]
    return _matmul(_row_softmax(rules, logits), V)


# ---------------------------------------------------------- multi-head attention

def _columns(A: Matrix, start: int, stop: int) -> Matrix:
    return [row[start:stop] for row in A]


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
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"{fn}: num_heads must be a positive int, not {num_heads!r}")
    X_q, X_kv = as_matrix(fn, "X_q", X_q), as_matrix(fn, "X_kv", X_kv)
    W_Q, W_K, W_V, W_O = (as_matrix(fn, name, W) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    _check_projections(fn, X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads)
    if mask is not None:
        mask = _as_mask(fn, mask, len(X_q), len(X_kv))
    Q, K, V = _matmul(X_q, W_Q), _matmul(X_kv, W_K), _matmul(X_kv, W_V)
    d_k, d_v = len(W_Q[0]) // num_heads, len(W_V[0]) // num_heads
    heads = [scaled_dot_product_attention(_columns(Q, h * d_k, (h + 1) * d_k),
                                          _columns(K, h * d_k, (h + 1) * d_k),
                                          _columns(V, h * d_v, (h + 1) * d_v),
                                          mask, is_causal=is_causal)
             for h in range(num_heads)]
    concat = [[v for head in heads for v in head[i]] for i in range(len(X_q))]
    return _matmul(concat, W_O)


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
    """Arithmetic of one forward pass."""
    multiply_adds: int  # a*b + c operations (scaling and additions of two vectors count as one each)
    exps: int  # calls to exp (the softmax)
    tanhs: int  # calls to tanh (additive attention only)


def dot_product_attention_cost(n: int, m: int, d_k: int, d_v: int) -> Cost:
    """Return the cost of softmax(Q K^T / sqrt(d_k)) V: n m d_k + n m + n m d_v multiply-adds.

    Q K^T takes d_k multiply-adds per score; scaling one per score; P V takes
    d_v per (query, key) pair.

    >>> dot_product_attention_cost(2, 3, 4, 5)
    Cost(multiply_adds=60, exps=6, tanhs=0)
    """
    return Cost(n * m * d_k + n * m + n * m * d_v, n * m, 0)


def additive_attention_cost(n: int, m: int, d_q: int, d_k: int, d_a: int, d_v: int) -> Cost:
    """Return the cost of additive attention: n d_a d_q + m d_a d_k + 2 n m d_a + n m d_v.

    The projections W_q q_i and W_k k_j are done once per query and per key;
    each of the n m pairs then adds two d_a-vectors, takes d_a tanh and a
    d_a-long dot with w_v, and the output P V costs d_v per pair.

    >>> additive_attention_cost(2, 3, 4, 4, 4, 5)
    Cost(multiply_adds=158, exps=6, tanhs=24)
    """
    projections = n * d_a * d_q + m * d_a * d_k
    return Cost(projections + 2 * n * m * d_a + n * m * d_v, n * m, n * m * d_a)
