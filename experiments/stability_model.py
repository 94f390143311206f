"""The logit scale during training: each arm's logits and gradients, and one training run.

The recall task, the initial weights, the batches and Adam are learning_model.py's; only
W_Q and W_K learn (and QK-norm's gains), the readout z = beta P V is fixed.  What differs
between the arms is the logit s of a query q = x_q W_Q and a key k = x W_K:

    1/sqrt(d_k)        s = q . k / sqrt(d_k)
    1/d_k              s = q . k / d_k
    1 (unscaled)       s = q . k
    soft-cap C         s = C tanh((q . k / sqrt(d_k)) / C)
    QK-norm            s = RMSNorm(q) . RMSNorm(k) / sqrt(d_k),
                       RMSNorm(x) = g * x / sqrt(mean(x^2) + eps), eps = 1e-6,
                       a gain vector g per side, learned ("qk-norm") or fixed at 1

Two routes.  The scaled and capped arms keep learning_model's arithmetic: the raw logits
x_q M x^T through M = W_Q W_K^T (learning_model.logit_table), then s = c x_q M x^T or its
cap; the scaled arms' gradients are learning_model.loss_and_gradients itself.  QK-norm
cannot be written through M alone (it needs |q| and |k|), so it has its own route, still in
d_model x d_model matrices: with D = diag(g_Q g_K),

    u = x_q M_g x^T,  M_g = W_Q D W_K^T;   mean(q^2) = x_q A_Q x_q^T / d_k,  A_Q = W_Q W_Q^T;
    mean(k^2) = x A_K x^T / d_k,  A_K = W_K W_K^T;   s = u / (rho_q rho_k sqrt(d_k)),
    rho = sqrt(mean(x^2) + eps)

which is RMSNorm(q) . RMSNorm(k) / sqrt(d_k) written out (docs/stability.md says why and
how the tests check it against q and k themselves).

Public API (`__all__`):
    Arm, ARMS, DEFAULT_ARMS, EXTRA_ARMS, EPS_NORM      the arms
    STEPS, EVERY, BOUND                   a run's length, its checkpoints, its divergence
    initial_params(arm, seed, d_k)        learning_model's weights (and the gains, at 1)
    outer_products(task)                  x^T x of every token, for QK-norm's norms
    Tables, tables(arm, task, params, batch, outer)   the logits of the queries and keys
    loss_and_gradients(arm, params, tables, batch)   the mean loss and each parameter's gradient
    Evaluation, evaluate(arm, task, tables)          held-out loss, accuracy and entropy
    Run, train(arm, d_k, seed, optimizer, lr, steps, every)   one training run

>>> run = train("1/sqrt(d_k)", 16, 100, "adam", 2.0 ** -4, steps=5)
>>> len(run.largest), round(run.initial.loss, 3), run.collapsed
(5, 2.608, False)

Arguments are not checked here: the command line (stability.py) validates what a user
types, and the other callers are this project's own modules and tests.

python3 experiments/stability.py --help runs the experiment.
"""

import math  # sqrt, tanh, exp, fsum, log
import operator  # mul: the products of the sums
import os  # the root, when run as a script
import random  # the batches: the same stream as learning_model's runs
import sys  # sys.path, when run as a script
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments.learning_model import (BATCH, ITEMS, Question, Task, dots, draw_question,
                                        initial_weights, logit_matrix_transposed, logit_table,
                                        make_task, model, optimizer_step, question_gradient,
                                        question_scores)
from experiments.learning_model import loss_and_gradients as scaled_loss_and_gradients
from softmax import log_softmax
from stats import scale_factor

__all__ = ["Arm", "ARMS", "DEFAULT_ARMS", "EXTRA_ARMS", "EPS_NORM", "STEPS", "EVERY", "BOUND",
           "initial_params", "outer_products", "Tables", "tables", "loss_and_gradients",
           "Evaluation",
           "evaluate", "Run", "train"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
Params = Tuple[Matrix, ...]  # (W_Q, W_K), and for learned gains ([g_Q], [g_K]) as 1 x d_k

STEPS = 200  # every run: this many steps at a constant rate
EVERY = 25  # the held-out loss is measured every this many steps
EPS_NORM = 1e-6  # RMSNorm's eps
BOUND = 1e20  # a weight beyond this (or not finite) ends a run, as in learning_model


class Arm(NamedTuple):
    """One logit function."""
    name: str  # the key in the records
    scale: str  # c = stats.scale_factor(scale, d_k), applied to q . k
    cap: Optional[float] = None  # C of s = C tanh(c q . k / C); None: no cap
    norm: Optional[str] = None  # QK-norm: "learned" or "fixed" gains; None: no norm


ARMS = {arm.name: arm for arm in (
    Arm("1/sqrt(d_k)", "1/sqrt(d_k)"),
    Arm("1/d_k", "1/d_k"),
    Arm("qk-norm", "1/sqrt(d_k)", norm="learned"),
    Arm("cap-50", "1/sqrt(d_k)", cap=50.0),
    Arm("1", "1"),
    Arm("qk-norm-g1", "1/sqrt(d_k)", norm="fixed"),
    Arm("cap-10", "1/sqrt(d_k)", cap=10.0))}
DEFAULT_ARMS = ("1/sqrt(d_k)", "1/d_k", "qk-norm", "cap-50")
EXTRA_ARMS = ("1", "qk-norm-g1", "cap-10")  # what --arms all adds


def initial_params(arm: Arm, seed: int, d_k: int) -> Params:
    """Return learning_model.initial_weights(seed, d_k), with the gains g_Q = g_K = 1 as
    two more 1 x d_k matrices when the arm learns them."""
    W_Q, W_K = initial_weights(seed, d_k)
    if arm.norm == "learned":
        return W_Q, W_K, [[1.0] * d_k], [[1.0] * d_k]
    return W_Q, W_K


# ------------------------------------------------------------------ the logits

class Tables(NamedTuple):
    """The logits of the queries against the key tokens, and what the gradient needs of
    them.  A row is a list over the 64 key tokens (every query and key: the held-out
    evaluation), or a dict {column: value} of the columns one batch reads (a training
    step); question_scores reads either."""
    raw: list  # q . k = x_q M x^T, per query id; for QK-norm u = x_q M_g x^T
    S: list  # the arm's logit s, what softmax sees
    c: float  # the scale of the arm at this d_k
    rho_q: Optional[list] = None  # QK-norm: rho = sqrt(mean(q^2) + eps) per query id
    rho_k: Optional[dict] = None  # and per key token (column)


def _capped(C: float, x: float) -> float:
    return C * math.tanh(x / C)


def _sech2(x: float) -> float:
    """1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-2 |x|): no overflow, no cancellation."""
    e = math.exp(-2.0 * abs(x))
    return 4.0 * e / ((1.0 + e) * (1.0 + e))


def _key_tokens(question: Question) -> List[int]:
    """The columns of the question's m keys in a table: ITEMS a_j + b_j."""
    return [ITEMS * a + b for a, b in zip(question.ids, question.payloads)]


def _columns(task: Task, batch: Optional[Sequence[Question]]) -> Dict[int, List[int]]:
    """{query id: the key-token columns read}: every pair, or those of the batch."""
    if batch is None:
        return {a: list(range(ITEMS * ITEMS)) for a in range(ITEMS)}
    needed: Dict[int, set] = {}
    for question in batch:
        needed.setdefault(question.ids[question.j_star], set()).update(_key_tokens(question))
    return {a: sorted(columns) for a, columns in sorted(needed.items())}


def _raw(task: Task, MT: Matrix, columns: Dict[int, List[int]], full: bool) -> list:
    """The raw logits x_q M x^T: learning_model.logit_table, or the entries of it that
    `columns` names, bit for bit (q = x_q M, then q . x, the same sums)."""
    if full:
        return logit_table(task, MT)
    rows: list = [None] * ITEMS
    tokens = [x for row in task.keys for x in row]
    for a, q in zip(columns, dots([task.queries[a] for a in columns], MT)):
        rows[a] = dict(zip(columns[a], dots([q], [tokens[j] for j in columns[a]])[0]))
    return rows


def _map(f, rows: list) -> list:
    """f applied to every entry of a table's rows (lists or dicts)."""
    return [None if row is None else [f(v) for v in row] if isinstance(row, list)
            else {j: f(v) for j, v in row.items()} for row in rows]


def _gram(W: Matrix) -> Vector:
    """W W^T, flattened row by row: its upper triangle summed, the lower one mirrored."""
    n = len(W)
    A = [[0.0] * n for _ in range(n)]
    for a in range(n):
        for b in range(a, n):
            A[a][b] = A[b][a] = math.fsum(map(operator.mul, W[a], W[b]))
    return [v for row in A for v in row]


def outer_products(task: Task) -> Tuple[Matrix, Matrix]:
    """Return x^T x flattened row by row, for each query token (8) and each key token (64):
    x A x^T is then the sum of its products with A flattened.  Once per run, not per step."""
    tokens = [x for row in task.keys for x in row]
    return tuple([[a * b for a in x for b in x] for x in X] for X in (task.queries, tokens))


def _normed_tables(task: Task, params: Params, columns: Dict[int, List[int]],
                   full: bool, outer: Tuple[Matrix, Matrix]) -> Tables:
    """QK-norm's route: u through M_g = W_Q D W_K^T, the norms through A_Q and A_K."""
    W_Q, W_K = params[:2]
    d_k = len(W_Q[0])
    D = _gains(params)
    W_QD = W_Q if D is None else [[w * g for w, g in zip(row, D)] for row in W_Q]
    u = _raw(task, dots(W_K, W_QD), columns, full)  # M_g^T = W_K D W_Q^T
    A_Q, A_K = _gram(W_Q), _gram(W_K)
    tokens = sorted({j for js in columns.values() for j in js})
    rho_q: list = [None] * ITEMS
    for a in columns:
        rho_q[a] = _rho(outer[0][a], A_Q, d_k)
    rho_k = {j: _rho(outer[1][j], A_K, d_k) for j in tokens}
    root = math.sqrt(d_k)
    S: list = [None] * ITEMS
    for a in columns:
        row = u[a] if full else [u[a][j] for j in columns[a]]
        values = [u_j / (rho_q[a] * rho_k[j] * root) for u_j, j in zip(row, columns[a])]
        S[a] = values if full else dict(zip(columns[a], values))
    return Tables(u, S, 1.0 / root, rho_q, rho_k)


def _rho(xx: Vector, A: Vector, d_k: int) -> float:
    """sqrt(mean((x W)^2) + eps), mean((x W)^2) = x A x^T / d_k with A = W W^T."""
    return math.sqrt(math.fsum(map(operator.mul, xx, A)) / d_k + EPS_NORM)


def _gains(params: Params) -> Optional[Vector]:
    """D = g_Q * g_K, or None for gains fixed at 1."""
    if len(params) == 2:
        return None
    return [a * b for a, b in zip(params[2][0], params[3][0])]


def tables(arm: Arm, task: Task, params: Params, batch: Optional[Sequence[Question]] = None,
           outer: Optional[Tuple[Matrix, Matrix]] = None) -> Tables:
    """Return the Tables of the arm at params: every query against every key token (8 x 64,
    column ITEMS a + b for the key LN(E_id[a] + E_val[b]), as learning_model.logit_table),
    or, given a batch, the entries it reads.  outer: outer_products(task), for QK-norm."""
    d_k, full = len(params[0][0]), batch is None
    columns = _columns(task, batch)
    if arm.norm:
        return _normed_tables(task, params, columns, full, outer or outer_products(task))
    c = scale_factor(arm.scale, d_k)
    raw = _raw(task, logit_matrix_transposed(params[:2]), columns, full)
    if arm.cap is None:
        return Tables(raw, _map(lambda s: c * s, raw), c)
    return Tables(raw, _map(lambda s: _capped(arm.cap, c * s), raw), c)


# ------------------------------------------------------------------ the gradients

UNIT = model("1", 2)  # question_gradient with c = 1: the logits passed in are the arm's


def _capped_loss_and_gradients(arm: Arm, params: Params, t: Tables,
                               batch: Sequence[Question]) -> Tuple[float, Params]:
    """learning_model.loss_and_gradients with dL/ds = c sech^2(c s / C) dL/dS: G = dL/dM =
    (c / B) sum_i x_q^T (dL/dS sech^2 X), dW_Q = G W_K, dW_K = G^T W_Q."""
    W_Q, W_K = params
    losses, dS_X = [], []
    for question in batch:
        s = question_scores(t.raw, question)
        loss, dS, _, _ = question_gradient(question_scores(t.S, question), question, UNIT)
        losses.append(loss)
        ds = [g * _sech2(t.c * s_j / arm.cap) for g, s_j in zip(dS, s)]  # dL/d(c s)
        dS_X.append(dots([ds], list(zip(*question.X)))[0])
    X_q = list(zip(*(question.x_q for question in batch)))
    G = [[t.c / len(batch) * g for g in row] for row in dots(X_q, list(zip(*dS_X)))]
    return math.fsum(losses) / len(batch), (dots(G, list(zip(*W_K))),
                                            dots(list(zip(*G)), list(zip(*W_Q))))


def _outer_sum(X: Sequence[Vector], weights: Vector, scale: float) -> Matrix:
    """scale sum_i w_i x_i^T x_i (d_model x d_model) over the rows x_i of X."""
    columns = list(zip(*X))
    weighted = [[w * x for w, x in zip(weights, column)] for column in columns]
    return [[scale * a for a in row] for row in dots(columns, weighted)]


def _normed_loss_and_gradients(params: Params, t: Tables,
                               batch: Sequence[Question]) -> Tuple[float, Params]:
    """QK-norm's chain rule: s = u / r, r = rho_q rho_k sqrt(d_k), rho^2 = n + eps:
    du = dS / r;  dn_q = -sum_j dS_j s_j / (2 rho_q^2), dn_k = -dS s / (2 rho_k^2);
    G = dL/dM_g = mean_i x_q^T (du X);  dA_Q = mean_i dn_q x_q^T x_q / d_k (A_K alike);
    dW_Q = G W_K D + 2 dA_Q W_Q,  dW_K = G^T W_Q D + 2 dA_K W_K,
    dD_i = sum_ab G_ab W_Q[a][i] W_K[b][i],  dg_Q = g_K dD,  dg_K = g_Q dD."""
    W_Q, W_K = params[:2]
    d_k, B = len(W_Q[0]), len(batch)
    root = math.sqrt(d_k)
    losses, du_X, dn_q, dn_k, key_x = [], [], [], {}, {}
    for question in batch:
        S = question_scores(t.S, question)
        loss, dS, _, _ = question_gradient(S, question, UNIT)
        losses.append(loss)
        r_q = t.rho_q[question.ids[question.j_star]]
        r_k = [t.rho_k[j] for j in _key_tokens(question)]
        du = [g / (r_q * r * root) for g, r in zip(dS, r_k)]
        du_X.append(dots([du], list(zip(*question.X)))[0])
        dn_q.append(-math.fsum(map(operator.mul, dS, S)) / (2.0 * r_q * r_q))
        for j, x, g, s, r in zip(_key_tokens(question), question.X, dS, S, r_k):
            dn_k.setdefault(j, []).append(-g * s / (2.0 * r * r))
            key_x[j] = x
    X_q = [question.x_q for question in batch]
    G = [[g / B for g in row] for row in dots(list(zip(*X_q)), list(zip(*du_X)))]
    dA_Q = _outer_sum(X_q, dn_q, 2.0 / (B * d_k))  # 2 dA_Q: dA is symmetric
    dA_K = _outer_sum([key_x[j] for j in dn_k], [math.fsum(dn) for dn in dn_k.values()],
                      2.0 / (B * d_k))
    D = _gains(params)
    H_Q = dots(G, list(zip(*W_K)))  # G W_K, d_model x d_k
    H_K = dots(list(zip(*G)), list(zip(*W_Q)))  # G^T W_Q
    P_Q, P_K = dots(dA_Q, list(zip(*W_Q))), dots(dA_K, list(zip(*W_K)))
    if D is None:
        return math.fsum(losses) / B, tuple([[h + p for h, p in zip(h_row, p_row)]
                                             for h_row, p_row in zip(H, P)]
                                            for H, P in ((H_Q, P_Q), (H_K, P_K)))
    dW = tuple([[h * g + p for h, g, p in zip(h_row, D, p_row)] for h_row, p_row in zip(H, P)]
               for H, P in ((H_Q, P_Q), (H_K, P_K)))
    dD = [math.fsum(map(operator.mul, w, h)) for w, h in zip(zip(*W_Q), zip(*H_Q))]
    g_Q, g_K = params[2][0], params[3][0]
    return math.fsum(losses) / B, dW + ([[d * g for d, g in zip(dD, g_K)]],
                                        [[d * g for d, g in zip(dD, g_Q)]])


def loss_and_gradients(arm: Arm, params: Params, t: Tables,
                       batch: Sequence[Question]) -> Tuple[float, Params]:
    """Return the mean loss of the batch and the gradient of each parameter (dW_Q, dW_K,
    and for learned gains [dg_Q], [dg_K]), at the params whose Tables t are."""
    if arm.norm:
        return _normed_loss_and_gradients(params, t, batch)
    if arm.cap is not None:
        return _capped_loss_and_gradients(arm, params, t, batch)
    return scaled_loss_and_gradients(params, t.raw, batch, model(arm.scale, len(params[0][0])))


# ------------------------------------------------------------------ one run

class Evaluation(NamedTuple):
    """The model on the held-out questions."""
    loss: float  # mean cross-entropy of z = beta P V
    accuracy: float  # share whose largest logit is at j* alone
    entropy: float  # mean entropy of P, in nats


def evaluate(arm: Arm, task: Task, t: Tables) -> Evaluation:
    """Return the held-out Evaluation of the model whose Tables t are."""
    losses, entropies, correct = [], [], 0
    for question in task.held_out:
        S = question_scores(t.S, question)
        loss, _, _, P = question_gradient(S, question, UNIT)
        losses.append(loss)
        entropies.append(-math.fsum(map(operator.mul, P, log_softmax(S))))
        top = max(S)
        correct += S[question.j_star] == top and S.count(top) == 1
    n = len(task.held_out)
    return Evaluation(math.fsum(losses) / n, correct / n, math.fsum(entropies) / n)


class Run(NamedTuple):
    """One training run."""
    initial: Evaluation  # at the initial weights: initial.loss is l_0
    final: Optional[Evaluation]  # after the last step; None if the run went non-finite
    losses: Vector  # held-out loss at steps 0, every, 2 every, ... (while finite)
    largest: Vector  # max |s| over each step's training batch, before its update
    largest_raw: float  # cap: max |c q . k| (before the cap) over every batch; else max |s|
    largest_gain: Optional[float]  # QK-norm with learned gains: max |g| over the run
    non_finite: bool  # a weight left BOUND (or became inf or NaN): the run stopped there
    collapsed: bool  # final held-out accuracy below 50% (a non-finite run counts)


def _batch_largest(batch: Sequence[Question], table: list) -> float:
    """max |entry| of a table over the logits the batch reads."""
    return max(abs(s) for question in batch for s in question_scores(table, question))


def _diverged(params: Params) -> bool:
    """Some |w| not below BOUND (NaN is not below anything)."""
    return not all(all(map(BOUND.__gt__, map(abs, row))) for W in params for row in W)


def train(arm: str, d_k: int, seed: int, optimizer: str, lr: float, steps: int = STEPS,
          every: int = EVERY) -> Run:
    """Return a Run: `steps` steps of `optimizer` at the constant rate lr, each on BATCH
    fresh questions (the same for every arm of a seed), from learning_model's weights; the
    held-out loss is measured every `every` steps."""
    spec = ARMS[arm]
    task, params = make_task(seed), initial_params(spec, seed, d_k)
    stream = random.Random(f"learning:train:{seed}")  # learning_model's batches
    step, state = optimizer_step(optimizer, lr), None
    outer = outer_products(task) if spec.norm else None
    initial = evaluate(spec, task, tables(spec, task, params))
    losses = [initial.loss]
    largest, largest_raw, gain, non_finite = [], 0.0, 1.0, False
    for n in range(1, steps + 1):
        batch = [draw_question(task, stream) for _ in range(BATCH)]
        t = tables(spec, task, params, batch, outer)
        largest.append(_batch_largest(batch, t.S))
        if spec.cap is not None:  # c > 0: c max|q . k| is the largest |c q . k| exactly
            largest_raw = max(largest_raw, t.c * _batch_largest(batch, t.raw))
        _, grads = loss_and_gradients(spec, params, t, batch)
        params, state = step(params, grads, state, n)
        if _diverged(params):
            non_finite = True
            break
        if spec.norm == "learned":
            gain = max(gain, max(abs(g) for G in params[2:] for g in G[0]))
        if n % every == 0 and n < steps:
            losses.append(evaluate(spec, task, tables(spec, task, params, None, outer)).loss)
    final = None if non_finite else evaluate(spec, task, tables(spec, task, params, None, outer))
    if final is not None:
        losses.append(final.loss)
    return Run(initial, final, losses, largest,
               largest_raw if spec.cap is not None else max(largest),
               gain if spec.norm == "learned" else None, non_finite,
               non_finite or final.accuracy < 0.5)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
