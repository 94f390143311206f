"""The training miniature: the recall task, the attention model, its optimisers, the identity.

Task (associative recall), one question:
    8 ids and 8 payloads with N(0, 1) embeddings E_id, E_val of width d_model = 16;
    m = 8 keys x_j = LN(E_id[a_j] + E_val[b_j]) (distinct ids a_j, distinct payloads b_j);
    the query x_q = LN(E_id[a*]) names one key j*; the answer is its payload b_{j*}.
Model (only W_Q and W_K learn; d_model is fixed, d_k varies):
    q = x_q W_Q,  k_j = x_j W_K  (W_Q, W_K: d_model x d_k, entries N(0, 1/d_model));
    S = c q K^T,  P = softmax(S),  O = P V  (V: the one-hot payloads, fixed);
    "fixed" readout:   z = beta O, beta = 5,  L = cross-entropy(z, b_{j*});
    "pointer" control: L = -log p_{j*}  (dL/dS = p - e_{j*}: no softmax Jacobian).

Glossary:
    c        the scale, stats.scale_factor(scale, d_k) for a name in SCALES
    M        W_Q W_K^T, d_model x d_model: S_j = c x_q M x_j^T, so the model works through M
    MT       M^T = W_K W_Q^T, the form the training loop holds M in (q = x_q M = MT x_q)
    table    the raw logits x_q M x^T of every query against every key token, 8 x 64
    G        dL/dM = c x_q^T dS X, averaged over the batch
    dS       dL/dS, the gradient reaching the logits (1 x m per question)

Public API (`__all__`):
    Question, Task, make_task(seed), draw_question(task, rng)   the task
    initial_weights(seed, d_k, factor), Model, model(scale, d_k, ...)
    logit_matrix_transposed(params, dots), logit_table(task, MT, dots),
    question_scores(table, question)
    question_gradient(s, question, model), loss_and_gradients(params, table, batch, model)
    accuracy(task, table), dots(A, B), naive_dots(A, B)        the arithmetic
    textbook_softmax_backward(p, g)    the textbook backward, to measure what it changes
    sgd(lr), adam(lr, eps), optimizer_step(name, lr, eps)       the optimisers
    Run, train(seed, d_k, scale=, optimizer=, lr=, ...)         one training run
    Equivalent, equivalent_run(d_k, scale, to_scale, optimizer, lr, eps)   the identity

>>> run = train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=0.7071067811865476)
>>> run.steps_to_target, run.accuracies[-1]
(6, 0.93)

Arguments are not checked here: the command line (learning.py) validates what a user
types, and the other callers are this project's own modules and tests.

python3 experiments/learning.py --help runs the experiment.
"""

import functools  # reduce: the left-to-right sum of naive_dots
import math  # sqrt, fsum
import operator  # mul and add: the products and sums of dots and naive_dots
import random  # every draw from an explicitly seeded random.Random
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from softmax import log_softmax, softmax, softmax_backward
from stats import layer_norm, scale_factor

__all__ = ["D_MODEL", "ITEMS", "BETA", "BATCH", "HELD_OUT", "TARGET", "MAX_STEPS", "SCALES",
           "OPTIMIZERS", "PER_QUESTION", "READOUTS", "BACKWARDS", "EPS", "Question", "Task",
           "make_task",
           "draw_question", "initial_weights", "Model", "model", "dots", "naive_dots",
           "textbook_softmax_backward",
           "logit_matrix_transposed", "logit_table", "question_scores", "question_gradient",
           "loss_and_gradients", "accuracy", "sgd", "adam", "optimizer_step", "Run", "train",
           "Equivalent", "equivalent_run"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
Params = Tuple[Matrix, Matrix]  # (W_Q, W_K), each d_model x d_k
Dots = Callable[[Matrix, Matrix], Matrix]  # A B^T

D_MODEL = 16  # token width, fixed: d_k varies the model's inner width only
ITEMS = 8  # ids = payloads = keys per question (m)
BETA = 5.0  # the fixed readout's gain, z = beta O
BATCH = 16  # questions per training step
HELD_OUT = 100  # held-out questions per seed: accuracy is a whole percent
TARGET = 0.9  # "learned": at least 90% held-out accuracy
MAX_STEPS = 300  # the cap: a run that has not learned by then is a miss
SCALES = ("1/sqrt(d_k)", "1/d_k", "1/ln(d_k)", "1")  # stats.SCALE_CHOICES, paper's first
OPTIMIZERS = ("sgd", "adam")  # the study's two
PER_QUESTION = "adam-per-question"  # the intervention: Adam on per-question unit gradients
READOUTS = ("fixed", "pointer")
BACKWARDS = ("library", "textbook")  # softmax.softmax_backward, or the textbook form
ADAM_BETAS = (0.9, 0.999)  # Kingma and Ba's defaults
EPS = 1e-8  # Adam's eps, their default
BOUND = 1e20  # a weight beyond this (or not finite) ends a run: it has diverged


# ------------------------------------------------------------------------ the task

class Question(NamedTuple):
    """One recall question."""
    X: Matrix  # the m keys' tokens, m x d_model
    x_q: Vector  # the query token, d_model
    ids: List[int]  # a_j, the id of key j
    payloads: List[int]  # b_j, the payload of key j
    j_star: int  # the key the query names; the answer is payloads[j_star]


class Task(NamedTuple):
    """The tokens of one seed and its held-out questions."""
    seed: int
    keys: List[Matrix]  # keys[a][b] = LN(E_id[a] + E_val[b]), d_model each
    queries: Matrix  # queries[a] = LN(E_id[a])
    held_out: List[Question]  # HELD_OUT questions, never trained on


def _gaussian_matrix(rng: random.Random, rows: int, columns: int, std: float) -> Matrix:
    return [[rng.gauss(0.0, std) for _ in range(columns)] for _ in range(rows)]


def draw_question(task: Task, rng: random.Random) -> Question:
    """Return a question: ids and payloads shuffled into m = ITEMS keys, one key named."""
    ids, payloads = list(range(ITEMS)), list(range(ITEMS))
    rng.shuffle(ids)
    rng.shuffle(payloads)
    j_star = rng.randrange(ITEMS)
    X = [task.keys[a][b] for a, b in zip(ids, payloads)]
    return Question(X, task.queries[ids[j_star]], ids, payloads, j_star)


def make_task(seed: int) -> Task:
    """Return the task of one seed: keys LN(E_id[a] + E_val[b]), queries LN(E_id[a]).

    E_id, E_val: ITEMS x D_MODEL, entries N(0, 1); keys ITEMS x ITEMS x D_MODEL; queries
    ITEMS x D_MODEL; held_out: HELD_OUT questions from a stream of their own.

    >>> task = make_task(0)
    >>> len(task.held_out), round(math.fsum(x * x for x in task.queries[0]) / D_MODEL, 12)
    (100, 1.0)
    """
    # str seeds hash the same on every Python (random's version-2 seeding)
    rng = random.Random(f"learning:embeddings:{seed}")
    E_id, E_val = (_gaussian_matrix(rng, ITEMS, D_MODEL, 1.0) for _ in range(2))
    keys = [[layer_norm([i + v for i, v in zip(e_id, e_val)]) for e_val in E_val]
            for e_id in E_id]
    task = Task(seed, keys, [layer_norm(e_id) for e_id in E_id], [])
    held_out_rng = random.Random(f"learning:held-out:{seed}")
    task.held_out.extend(draw_question(task, held_out_rng) for _ in range(HELD_OUT))
    return task


# ----------------------------------------------------------------------- the model

def initial_weights(seed: int, d_k: int, factor: float = 1.0) -> Params:
    """Return factor times (W_Q, W_K), entries N(0, 1/d_model): given a token x with
    |x|^2 = d_model, each entry of q = x W_Q and k = x W_K is then N(0, 1), so
    Var(q . k) = d_k.  The same draws for every scale and optimizer of a seed and d_k."""
    rng = random.Random(f"learning:init:{seed}:{d_k}")
    W_Q, W_K = (_gaussian_matrix(rng, D_MODEL, d_k, 1.0 / math.sqrt(D_MODEL)) for _ in range(2))
    return tuple([[factor * w for w in row] for row in W] for W in (W_Q, W_K))


def dots(A: Matrix, B: Matrix) -> Matrix:
    """Return A B^T, entry [i][j] = math.fsum of the products A[i][t] B[j][t].

    The rounding of attention.dot and attention.matmul, bit for bit (a test checks it),
    without their checks of the operands, which the training loop would repeat every step
    on weights it made itself.

    >>> dots([[1e16, 1.0, -1e16]], [[1.0, 1.0, 1.0]])  # left to right: 0.0
    [[1.0]]
    """
    return [[math.fsum(map(operator.mul, a, b)) for b in B] for a in A]


def naive_dots(A: Matrix, B: Matrix) -> Matrix:
    """Return A B^T with each sum taken left to right in plain float additions: another
    order of summation, to measure what it changes (the same on every Python, unlike sum(),
    which compensates from 3.12).

    >>> naive_dots([[1e16, 1.0, -1e16]], [[1.0, 1.0, 1.0]])  # 1e16 + 1 rounds to 1e16
    [[0.0]]
    """
    return [[functools.reduce(operator.add, map(operator.mul, a, b)) for b in B] for a in A]


def textbook_softmax_backward(p: Vector, g: Vector) -> Vector:
    """Return dS = p * (g - <p, g>), the textbook form of softmax's backward pass, in
    float64 with <p, g> summed by math.fsum.  When p is nearly one-hot, <p, g> rounds to
    g at the largest p, and every entry of dS is then rounding noise; softmax.softmax_backward
    computes those small entries accurately.  An option of the study (--backward textbook),
    to measure what the accurate form changes.

    >>> textbook_softmax_backward([0.25, 0.75], [1.0, 0.0])
    [0.1875, -0.1875]
    """
    inner = math.fsum(map(operator.mul, p, g))
    return [p_i * (g_i - inner) for p_i, g_i in zip(p, g)]


class Model(NamedTuple):
    """What one run trains: the scale, the loss and the arithmetic."""
    c: float  # the logit scale
    readout: str  # "fixed": cross-entropy of beta O;  "pointer": -log p_{j*}
    per_question: bool  # each question's dL/dM divided by its norm (the intervention)
    dots: Dots  # A B^T: dots (math.fsum) or naive_dots
    backward: Callable[[Vector, Vector], Vector] = softmax_backward  # dS from P and dP


def model(scale: str, d_k: int, readout: str = "fixed", optimizer: str = "sgd",
          summation: str = "fsum", backward: str = "library") -> Model:
    """Return the Model of one arm: c = stats.scale_factor(scale, d_k)."""
    return Model(scale_factor(scale, d_k), readout, optimizer == PER_QUESTION,
                 naive_dots if summation == "naive" else dots,
                 textbook_softmax_backward if backward == "textbook" else softmax_backward)


def logit_matrix_transposed(params: Params, dots: Dots = dots) -> Matrix:
    """Return M^T = W_K W_Q^T (d_model x d_model): row j is column j of M = W_Q W_K^T."""
    return dots(params[1], params[0])


def logit_table(task: Task, MT: Matrix, dots: Dots = dots) -> Matrix:
    """Return the raw logits x_q M x^T of every query against every key token: 8 x 64,
    column ITEMS a + b for the key LN(E_id[a] + E_val[b]).  Every question of a step reads
    its logits here: q = x_q M, then q . x_j, the same sums attention.attention_steps
    takes on q and X."""
    return dots(dots(task.queries, MT), [x for row in task.keys for x in row])


def question_scores(table: Matrix, question: Question) -> Vector:
    """Return q . k_j for the m keys of a question, from the logit table."""
    row = table[question.ids[question.j_star]]
    return [row[ITEMS * a + b] for a, b in zip(question.ids, question.payloads)]


def question_gradient(s: Vector, question: Question, model: Model):
    """Return (loss, dS, S, P) of one question from its raw logits s = q K^T.

    S = c s, P = softmax(S).  V is one-hot (row j: payload b_j), so O = P V puts p_j at
    b_j and dP = dO V^T reads dO at b_j, both exactly: the sums attention.attention_steps
    and attention.score_gradient take hold one nonzero term (a test checks it bit for bit).
    """
    S = [model.c * s_j for s_j in s]
    P = softmax(S)
    if model.readout == "pointer":  # L = -log p_{j*}: dS = p - e_{j*}, the Jacobian cancels
        j = question.j_star
        return -log_softmax(S)[j], [p_i - (i == j) for i, p_i in enumerate(P)], S, P
    O = [0.0] * ITEMS
    for p_j, b_j in zip(P, question.payloads):
        O[b_j] = p_j
    z, t = [BETA * o for o in O], question.payloads[question.j_star]
    dO = [BETA * (p - (i == t)) for i, p in enumerate(softmax(z))]  # beta (softmax(z) - e_t)
    dP = [dO[b_j] for b_j in question.payloads]
    return -log_softmax(z)[t], model.backward(P, dP), S, P  # through the Jacobian


def _unit(v: Vector, x_q: Vector) -> Vector:
    """v / (|x_q| |v|): G_i = c x_q^T v has norm c |x_q| |v|, so c x_q^T _unit(v) / c is
    G_i / |G_i|.  A question whose gradient is exactly 0 stays 0."""
    norm = math.sqrt(math.fsum(x * x for x in x_q) * math.fsum(x * x for x in v))
    return [x / norm for x in v] if norm > 0.0 else v


def _transpose(A: Matrix) -> Matrix:
    """Return A^T, a list of rows like every matrix here."""
    return [list(column) for column in zip(*A)]


def _product(A: Matrix, B: Matrix, dots: Dots) -> Matrix:
    """Return A B, as dots(A, B^T): the model's sums, whichever summation it uses."""
    return dots(A, _transpose(B))


def loss_and_gradients(params: Params, table: Matrix, batch: Sequence[Question],
                       model: Model) -> Tuple[float, Params]:
    """Return the mean loss and (dW_Q, dW_K) through G = dL/dM, M = W_Q W_K^T.

    S_j = c x_q M x_j^T gives dL/dM = c x_q^T (dS X); then dW_Q = G W_K and dW_K = G^T W_Q,
    O(d_model^2 d_k) per step.  With model.per_question, G = mean_i G_i / |G_i| instead.
    tests/test_learning.py checks it against the textbook route through
    attention_backward and against finite differences.
    """
    W_Q, W_K = params
    losses, dS_X = [], []
    for question in batch:
        loss, dS, _, _ = question_gradient(question_scores(table, question), question, model)
        losses.append(loss)
        dS_X.append(_product([dS], question.X, model.dots)[0])  # dS X: 1 x d_model
    factor = model.c / len(batch)
    if model.per_question:
        dS_X = [_unit(v, question.x_q) for v, question in zip(dS_X, batch)]
        factor = 1.0 / len(batch)
    X_q = [question.x_q for question in batch]  # row i: the query token of question i
    # G = factor sum_i x_q_i^T (dS X)_i = factor X_q^T (dS X): d_model x d_model
    G = [[factor * g for g in row] for row in _product(_transpose(X_q), dS_X, model.dots)]
    dW_Q = _product(G, W_K, model.dots)  # G W_K: d_model x d_k
    dW_K = _product(_transpose(G), W_Q, model.dots)  # G^T W_Q: d_model x d_k
    return math.fsum(losses) / len(batch), (dW_Q, dW_K)


def accuracy(task: Task, table: Matrix) -> float:
    """Return the share of held-out questions whose largest logit is at j*.

    The argmax does not depend on c > 0, and is that of z = beta P V too (each payload
    appears once).
    """
    correct = 0
    for question in task.held_out:
        s = question_scores(table, question)
        correct += max(range(ITEMS), key=s.__getitem__) == question.j_star
    return correct / len(task.held_out)


# ------------------------------------------------------------------ the optimisers

Step = Callable[[Params, Params, object, int], Tuple[Params, object]]


def sgd(lr: float) -> Step:
    """Return the step W <- W - lr dW."""
    def step(params, grads, state, t):
        return tuple([[w - lr * g for w, g in zip(w_row, g_row)] for w_row, g_row in zip(W, dW)]
                     for W, dW in zip(params, grads)), state
    return step


def _zeros(W: Matrix) -> Matrix:
    """Return a new matrix of zeros with the shape of W."""
    return [[0.0] * len(row) for row in W]


def adam(lr: float, eps: float = EPS, beta1: float = ADAM_BETAS[0],
         beta2: float = ADAM_BETAS[1]) -> Step:
    """Return the step m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2;
    W <- W - a_t m / (sqrt(v) + e_t).

    a_t = lr sqrt(1 - b2^t) / (1 - b1^t) and e_t = eps sqrt(1 - b2^t) fold the bias
    corrections into two scalars (Kingma and Ba, end of Section 2): the same step as
    lr m_hat / (sqrt(v_hat) + eps), m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t).
    """
    one_minus_b1, one_minus_b2, sqrt = 1.0 - beta1, 1.0 - beta2, math.sqrt

    def step(params, grads, state, t):
        if state is None:  # m and v start at 0: two matrices of their own for each W
            state = [(_zeros(W), _zeros(W)) for W in params]
        root = sqrt(1.0 - beta2 ** t)
        a_t, e_t = lr * root / (1.0 - beta1 ** t), eps * root
        new_params, new_state = [], []
        for W, dW, (m, v) in zip(params, grads, state):
            m = [[beta1 * m_ij + one_minus_b1 * g for m_ij, g in zip(m_row, g_row)]
                 for m_row, g_row in zip(m, dW)]
            v = [[beta2 * v_ij + one_minus_b2 * g * g for v_ij, g in zip(v_row, g_row)]
                 for v_row, g_row in zip(v, dW)]
            new_params.append([[w - a_t * m_ij / (sqrt(v_ij) + e_t)
                                for w, m_ij, v_ij in zip(w_row, m_row, v_row)]
                               for w_row, m_row, v_row in zip(W, m, v)])
            new_state.append((m, v))
        return tuple(new_params), new_state
    return step


def optimizer_step(name: str, lr: float, eps: float = EPS) -> Step:
    """Return the step of optimizer `name`: "sgd", or Adam for "adam" and PER_QUESTION."""
    return sgd(lr) if name == "sgd" else adam(lr, eps)


# ------------------------------------------------------------------------ training

class Run(NamedTuple):
    """One training run."""
    accuracies: List[float]  # held-out accuracy at the start, then after each step
    losses: List[float]  # mean loss of each step's batch, before its update
    steps_to_target: Optional[int]  # the first step with accuracy >= TARGET; None: a miss
    at_target: Optional[Params]  # (W_Q, W_K) at that step
    at_late: Optional[Params]  # (W_Q, W_K) after step `late` (None: the run ended before)
    final: Params  # (W_Q, W_K) after the last step


def _diverged(params: Params) -> bool:
    """A weight beyond BOUND, inf or NaN (NaN fails every comparison): the run has failed."""
    return not all(abs(w) < BOUND for W in params for row in W for w in row)


def _train(task: Task, params: Params, model: Model, step: Step, max_steps: int,
           stop_at_target: bool, late: int) -> Run:
    """Train until TARGET is reached (if stop_at_target) and step `late` is passed, or until
    max_steps; a run whose weights diverge stops there."""
    stream = random.Random(f"learning:train:{task.seed}")  # every arm of a seed: same batches
    table = logit_table(task, logit_matrix_transposed(params, model.dots), model.dots)
    accuracies, losses, state = [accuracy(task, table)], [], None
    at_target = params if accuracies[0] >= TARGET else None
    at_late = params if late == 0 else None
    for t in range(1, max_steps + 1):
        if stop_at_target and at_target is not None and t > late:
            break
        batch = [draw_question(task, stream) for _ in range(BATCH)]
        loss, grads = loss_and_gradients(params, table, batch, model)
        new_params, state = step(params, grads, state, t)
        if _diverged(new_params):
            break
        params = new_params
        table = logit_table(task, logit_matrix_transposed(params, model.dots), model.dots)
        losses.append(loss)
        accuracies.append(accuracy(task, table))
        if at_target is None and accuracies[-1] >= TARGET:
            at_target = params
        if t == late:
            at_late = params
    first = next((t for t, a in enumerate(accuracies) if a >= TARGET), None)
    return Run(accuracies, losses, first, at_target, at_late, params)


def train(seed: int, d_k: int, *, scale: str, optimizer: str, lr: float,
          readout: str = "fixed", eps: float = EPS, init_factor: float = 1.0,
          max_steps: int = MAX_STEPS, stop_at_target: bool = True, late: int = 0,
          summation: str = "fsum", backward: str = "library") -> Run:
    """Return a training run: held-out accuracy after each step of `optimizer` at rate lr.

    Each step: BATCH fresh questions (the same for every arm of a seed), L = their mean
    loss, W <- update(W, dL/dW) with dL/dW_Q = G W_K, dL/dW_K = G^T W_Q; then accuracy =
    the share of the HELD_OUT questions whose largest logit is at j*.  W_Q, W_K: D_MODEL x
    d_k, drawn from the seed and d_k, times init_factor.  optimizer: "sgd", "adam", or
    PER_QUESTION (Adam on G = mean_i G_i / |G_i|).  summation: "fsum" (correctly rounded)
    or "naive" (left to right) for the model's products; backward: "library"
    (softmax.softmax_backward) or "textbook" (textbook_softmax_backward).  The run stops
    at the first step with accuracy >= TARGET (unless stop_at_target is False) once step
    `late` is passed; a run whose weights diverge stops there, and a miss has
    steps_to_target None.

    >>> run = train(100, 16, scale="1", optimizer="sgd", lr=0.125, max_steps=3,
    ...             stop_at_target=False)
    >>> len(run.accuracies), len(run.losses), round(run.losses[0], 2), run.accuracies
    (4, 3, 3.21, [0.15, 0.26, 0.23, 0.26])
    """
    return _train(make_task(seed), initial_weights(seed, d_k, init_factor),
                  model(scale, d_k, readout, optimizer, summation, backward),
                  optimizer_step(optimizer, lr, eps), max_steps, stop_at_target, late)


# ------------------------------------------------------------ the general identity

class Equivalent(NamedTuple):
    """How scale c' retraces a run of scale c: start from a W, train at lr', eps'."""
    init_factor: float  # a = sqrt(c / c')
    lr: float  # SGD: lr c / c';  Adam: lr a
    eps: float  # SGD: unused (eps);  Adam: eps / a


def equivalent_run(d_k: int, scale: str, to_scale: str, optimizer: str, lr: float,
                   eps: float = EPS) -> Equivalent:
    """Return (a, lr', eps') under which scale c' = to_scale, started from a W, computes
    exactly what scale c computes from W at rate lr: a = sqrt(c / c'), and
    SGD: lr' = lr c / c';  Adam: lr' = lr a, eps' = eps / a.

    c' (a W_Q)(a W_K)^T = c' a^2 M = c M: the same logits.  The gradient of the rescaled
    weights is dW / a, so SGD moves a W by lr' dW / a = a (lr dW) when lr' = lr a^2, and
    Adam's step lr' m / (sqrt(v) + eps') scales the same way when lr' = lr a, eps' = eps / a
    (m and sqrt(v) both shrink by a).  In floats the runs are bit-identical when a is a
    power of two (tests/test_learning.py).

    >>> equivalent_run(16, "1/sqrt(d_k)", "1", "sgd", 1.0)
    Equivalent(init_factor=0.5, lr=0.25, eps=1e-08)
    >>> equivalent_run(256, "1/sqrt(d_k)", "1/d_k", "adam", 0.03)
    Equivalent(init_factor=4.0, lr=0.12, eps=2.5e-09)
    """
    c, c_to = scale_factor(scale, d_k), scale_factor(to_scale, d_k)
    a = math.sqrt(c / c_to)
    if optimizer == "sgd":
        return Equivalent(a, lr * (c / c_to), eps)
    return Equivalent(a, lr * a, eps / a)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
