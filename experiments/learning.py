"""What each logit scale does while a small attention model learns: a training miniature.

It tests the argument of the README.  At initialisation, 1/sqrt(d_k) keeps
the logits' variance at 1; this file trains one bilinear attention model on associative
recall with four scales c (1/sqrt(d_k), 1/d_k, 1/ln(d_k) and 1), each at its own tuned
rate, under SGD and Adam, and measures how fast each learns, whether its rate carries over
to another d_k, and what the logits look like once it has learned.  What it compares is
the initial logit scale, and with it the effective learning rate: any two scales are the
same model started from rescaled weights at a rescaled rate (`equivalent_run`).

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
    c        the scale, stats.scale_factor(scale, d_k) for a name in stats.SCALE_CHOICES
    M        W_Q W_K^T, d_model x d_model: S_j = c x_q M x_j^T, so the model works through M
    MT       M^T = W_K W_Q^T, the form the training loop holds M in (q' = x_q M = MT x_q)
    G        dL/dM = c x_q^T dS X, averaged over the batch
    dS       dL/dS, the gradient reaching the logits (1 x m per question)
    arm      one (optimizer, readout, scale, d_k): each gets its own tuned rate
    miss     a run that has not reached TARGET held-out accuracy within MAX_STEPS

Public API (`__all__`):
    Task, make_task(seed)                 the tokens and the held-out questions of a seed
    Run, train(seed, d_k, scale=, optimizer=, lr=, ...)   held-out accuracy after each step
    Equivalent, equivalent_run(d_k, scale, to_scale, optimizer, lr, eps)
                                          the identity: scale c' from a W retraces scale c
    tuned_rate(optimizer, scale, d_k, readout, rates)   the stored rate of one arm
    sweep(arms, seeds, progress)          the rate search: a full grid per arm
    steps_to_target(optimizer, scale, d_k, lr, seeds, ...)   one record per run
    Summary, summarise(values)            a median with its order-statistic interval
    Diagnostics, initial_diagnostics(d_k, scale, seeds, readout)   before training
    Logits, trained_logits(seed, d_k, scale=, optimizer=, lr=, late=)   after training
    docs_data(), figure(data), markdown_values(data), markdown_blocks(data)   for scripts/build.py
    main(argv)                            python3 experiments/learning.py -h

>>> lr = tuned_rate("sgd", "1/sqrt(d_k)", 16)
>>> run = train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=lr)
>>> lr, run.steps_to_target, run.accuracies[-1]
(0.7071067811865476, 6, 0.93)

Exceptions: TypeError for the wrong kind of argument (a float or bool where an int is
needed, a number where a name is), ValueError for a wrong value (an unknown optimizer or
scale, d_k < 2, lr <= 0, no stored rate for an arm); each message names the function.
"""

import argparse  # the command line
import json  # the stored rates and results
import math  # sqrt, log, exp, fsum, ldexp, inf
import operator  # mul: the products of the one dot product
import os  # the paths of the stored files
import random  # every draw from an explicitly seeded random.Random
import statistics  # median (of ints, or of two middle values: the same on every Python)
import sys  # sys.path when run as a script; stdout, stderr
import textwrap  # the generated answers, wrapped for a terminal
import time  # CPU time, for the progress line
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a script, the library sits one folder up
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from attention import attention_steps, dot, matmul, score_gradient, transpose  # noqa: E402
from softmax import as_flag, as_int, as_list, as_real, log_softmax, softmax  # noqa: E402
from stats import Median, layer_norm, median_interval, scale_factor, variance  # noqa: E402

__all__ = ["Task", "make_task", "Run", "train", "Equivalent", "equivalent_run", "tuned_rate",
           "sweep", "steps_to_target", "Summary", "summarise", "Diagnostics",
           "initial_diagnostics", "Logits", "trained_logits", "docs_data", "figure",
           "markdown_values", "markdown_blocks", "main"]

Vector = List[float]  # a vector is a list of floats
Matrix = List[List[float]]  # a matrix is a list of rows
Params = Tuple[Matrix, Matrix]  # (W_Q, W_K), each d_model x d_k

D_MODEL = 16  # token width, fixed: d_k varies the model's inner width only
ITEMS = 8  # ids = payloads = keys per question (m)
BETA = 5.0  # the fixed readout's gain, z = beta O
BATCH = 16  # questions per training step
HELD_OUT = 100  # held-out questions per seed: accuracy is a whole percent
TARGET = 0.9  # "learned": at least 90% held-out accuracy
MAX_STEPS = 300  # the cap: a run that has not learned by then is a miss
D_KS = (16, 64, 256)
SCALES = ("1/sqrt(d_k)", "1/d_k", "1/ln(d_k)", "1")  # stats.SCALE_CHOICES, paper's first
POINTER_SCALES = ("1/sqrt(d_k)", "1")  # the pointer-loss control compares the paper's two
OPTIMIZERS = ("sgd", "adam")
READOUTS = ("fixed", "pointer")
TUNING_SEEDS = (0, 1, 2, 3, 4)  # the rates are chosen on these seeds only
HELD_OUT_SEEDS = tuple(range(100, 110))  # and judged on these
ADAM_BETAS = (0.9, 0.999)  # Kingma and Ba's defaults
EPS = 1e-8  # Adam's eps, their default
BOUND = 1e20  # a weight beyond this (or not finite) ends a run: it has diverged
HERE = os.path.dirname(os.path.abspath(__file__))
RATES_FILE = os.path.join(HERE, "tuned_rates.json")  # committed: made by --sweep
RESULTS_FILE = os.path.join(HERE, "results.json")  # committed: made by --publish


# ------------------------------------------------------------------------ the task

class Example(NamedTuple):
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
    held_out: List[Example]  # HELD_OUT questions, never trained on


def _gaussian_matrix(rng: random.Random, rows: int, columns: int, std: float) -> Matrix:
    return [[rng.gauss(0.0, std) for _ in range(columns)] for _ in range(rows)]


def _draw_example(task: Task, rng: random.Random) -> Example:
    ids, payloads = list(range(ITEMS)), list(range(ITEMS))
    rng.shuffle(ids)
    rng.shuffle(payloads)
    j_star = rng.randrange(ITEMS)
    X = [task.keys[a][b] for a, b in zip(ids, payloads)]
    return Example(X, task.queries[ids[j_star]], ids, payloads, j_star)


def _make_task(seed: int) -> Task:
    # str seeds hash the same on every Python (random's version-2 seeding)
    rng = random.Random(f"learning:embeddings:{seed}")
    E_id, E_val = (_gaussian_matrix(rng, ITEMS, D_MODEL, 1.0) for _ in range(2))
    keys = [[layer_norm([i + v for i, v in zip(e_id, e_val)]) for e_val in E_val]
            for e_id in E_id]
    task = Task(seed, keys, [layer_norm(e_id) for e_id in E_id], [])
    held_out_rng = random.Random(f"learning:held-out:{seed}")
    task.held_out.extend(_draw_example(task, held_out_rng) for _ in range(HELD_OUT))
    return task


def make_task(seed: int) -> Task:
    """Return the task of one seed: keys LN(E_id[a] + E_val[b]), queries LN(E_id[a]).

    E_id, E_val: ITEMS x D_MODEL, entries N(0, 1); keys ITEMS x ITEMS x D_MODEL; queries
    ITEMS x D_MODEL; held_out: HELD_OUT questions from a stream of their own.

    >>> task = make_task(0)
    >>> len(task.held_out), round(dot(task.queries[0], task.queries[0]) / D_MODEL, 12)
    (100, 1.0)
    """
    return _make_task(as_int("make_task", seed, "seed", minimum=0))


# ----------------------------------------------------------------------- the model

def _initial_weights(seed: int, d_k: int, factor: float = 1.0) -> Params:
    """factor times W_Q, W_K with entries N(0, 1/d_model): given a token x with |x|^2 =
    d_model, each entry of q = x W_Q and k = x W_K is then N(0, 1), so Var(q . k) = d_k."""
    rng = random.Random(f"learning:init:{seed}:{d_k}")
    W_Q, W_K = (_gaussian_matrix(rng, D_MODEL, d_k, 1.0 / math.sqrt(D_MODEL)) for _ in range(2))
    return tuple([[factor * w for w in row] for row in W] for W in (W_Q, W_K))


def _dots(A: Matrix, B: Matrix) -> Matrix:
    """A B^T, entry [i][j] = math.fsum of the products A[i][t] B[j][t] (A r x d, B s x d).

    The rounding of attention.dot and attention.matmul, bit for bit (a test checks it),
    without their checks of the operands, which the training loop would repeat every step
    on weights it made itself (at d_k = 256 the checks cost a tenth of the run).
    """
    return [[math.fsum(map(operator.mul, a, b)) for b in B] for a in A]


def _logit_matrix_transposed(params: Params) -> Matrix:
    """M^T = W_K W_Q^T (d_model x d_model): row j is column j of M = W_Q W_K^T."""
    return _dots(params[1], params[0])


_ONE_HOT = [[float(i == j) for j in range(ITEMS)] for i in range(ITEMS)]


def _forward(MT: Matrix, example: Example, c: float):
    """attention_steps on q' = x_q M and K' = X: q' K'^T = x_q W_Q W_K^T X^T = q K^T."""
    V = [_ONE_HOT[b] for b in example.payloads]  # row j: the one-hot code of payload b_j
    return V, attention_steps(_dots([example.x_q], MT), example.X, V, scale=c)


def _example_gradient(MT: Matrix, example: Example, c: float, readout: str):
    """(loss, dS, steps) of one question: dS = dL/dS (length m), steps its AttentionSteps."""
    V, steps = _forward(MT, example, c)
    if readout == "pointer":  # L = -log p_{j*}: dS = p - e_{j*}, the Jacobian cancels
        j = example.j_star
        return -log_softmax(steps.scaled_scores[0])[j], [p_i - (i == j) for i, p_i in
                                                          enumerate(steps.weights[0])], steps
    z, t = [BETA * o for o in steps.output[0]], example.payloads[example.j_star]
    dO = [BETA * (p - (i == t)) for i, p in enumerate(softmax(z))]  # beta (softmax(z) - e_t)
    return -log_softmax(z)[t], score_gradient(steps.weights, V, [dO])[0], steps  # through J


def _loss_and_gradients(params: Params, MT: Matrix, batch: Sequence[Example], c: float,
                        readout: str) -> Tuple[float, Params]:
    """Mean loss and (dW_Q, dW_K) through G = dL/dM, M = W_Q W_K^T.

    S_j = c x_q M x_j^T gives dL/dM = c x_q^T (dS X); then dW_Q = G W_K and dW_K = G^T W_Q,
    O(d_model^2 d_k) per step.  tests/test_learning.py checks it against the textbook
    route through attention_backward and against finite differences.
    """
    W_Q, W_K = params
    losses, dS_X = [], []
    for example in batch:
        loss, dS, _ = _example_gradient(MT, example, c, readout)
        losses.append(loss)
        dS_X.append(_dots([dS], list(zip(*example.X)))[0])  # dS X: 1 x d_model
    X_q = list(zip(*(example.x_q for example in batch)))  # x_q^T: d_model x batch
    G = [[c / len(batch) * g for g in row] for row in _dots(X_q, list(zip(*dS_X)))]
    return math.fsum(losses) / len(batch), (_dots(G, list(zip(*W_K))),
                                            _dots(list(zip(*G)), list(zip(*W_Q))))


def _accuracy(task: Task, MT: Matrix) -> float:
    """Share of held-out questions whose largest logit is at j*.

    The argmax does not depend on c > 0, and is that of z = beta P V too (each payload
    appears once).  Only 8 queries and 64 keys exist: every logit is in one 8 x 64 table.
    """
    table = _dots(_dots(task.queries, MT), [x for row in task.keys for x in row])
    correct = 0
    for e in task.held_out:
        row = table[e.ids[e.j_star]]
        logits = [row[ITEMS * a + b] for a, b in zip(e.ids, e.payloads)]
        correct += max(range(ITEMS), key=logits.__getitem__) == e.j_star
    return correct / len(task.held_out)


# ------------------------------------------------------------------ the optimisers

Step = Callable[[Params, Params, object, int], Tuple[Params, object]]


def _sgd(lr: float) -> Step:
    """W <- W - lr dW."""
    def step(params, grads, state, t):
        return tuple([[w - lr * g for w, g in zip(w_row, g_row)] for w_row, g_row in zip(W, dW)]
                     for W, dW in zip(params, grads)), state
    return step


def _adam(lr: float, eps: float = EPS, beta1: float = ADAM_BETAS[0],
          beta2: float = ADAM_BETAS[1]) -> Step:
    """m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2;  W <- W - a_t m / (sqrt(v) + e_t).

    a_t = lr sqrt(1 - b2^t) / (1 - b1^t) and e_t = eps sqrt(1 - b2^t) fold the bias
    corrections into two scalars (Kingma and Ba, end of Section 2): the same step as
    lr m_hat / (sqrt(v_hat) + eps), m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t).
    """
    def step(params, grads, state, t):
        moments = state or [([[0.0] * len(r) for r in W],) * 2 for W in params]
        root = math.sqrt(1.0 - beta2 ** t)
        a_t, e_t = lr * root / (1.0 - beta1 ** t), eps * root
        new_params, new_moments = [], []
        for W, dW, (m, v) in zip(params, grads, moments):
            m = [[beta1 * a + (1.0 - beta1) * g for a, g in zip(ar, gr)] for ar, gr in zip(m, dW)]
            v = [[beta2 * b + (1.0 - beta2) * g * g for b, g in zip(br, gr)]
                 for br, gr in zip(v, dW)]
            new_params.append([[w - a_t * a / (math.sqrt(b) + e_t) for w, a, b in zip(wr, ar, br)]
                               for wr, ar, br in zip(W, m, v)])
            new_moments.append((m, v))
        return tuple(new_params), new_moments
    return step


def _optimizer(name: str, lr: float, eps: float) -> Step:
    return _sgd(lr) if name == "sgd" else _adam(lr, eps)


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


def _train(task: Task, params: Params, c: float, step: Step, readout: str, max_steps: int,
           stop_at_target: bool, late: int = 0) -> Run:
    """Train until TARGET is reached (if stop_at_target) and step `late` is passed, or until
    max_steps; a run whose weights diverge stops there."""
    stream = random.Random(f"learning:train:{task.seed}")  # every arm of a seed: same batches
    MT = _logit_matrix_transposed(params)
    accuracies, losses, state = [_accuracy(task, MT)], [], None
    at_target = params if accuracies[0] >= TARGET else None
    at_late = params if late == 0 else None
    for t in range(1, max_steps + 1):
        if stop_at_target and at_target is not None and t > late:
            break
        batch = [_draw_example(task, stream) for _ in range(BATCH)]
        loss, grads = _loss_and_gradients(params, MT, batch, c, readout)
        new_params, state = step(params, grads, state, t)
        if _diverged(new_params):
            break
        params = new_params
        MT = _logit_matrix_transposed(params)
        losses.append(loss)
        accuracies.append(_accuracy(task, MT))
        if at_target is None and accuracies[-1] >= TARGET:
            at_target = params
        if t == late:
            at_late = params
    first = next((t for t, a in enumerate(accuracies) if a >= TARGET), None)
    return Run(accuracies, losses, first, at_target, at_late, params)


def _run(seed: int, d_k: int, scale: str, optimizer: str, lr: float, readout: str = "fixed",
         max_steps: int = MAX_STEPS, stop_at_target: bool = True, eps: float = EPS,
         init_factor: float = 1.0, late: int = 0) -> Run:
    return _train(_make_task(seed), _initial_weights(seed, d_k, init_factor),
                  scale_factor(scale, d_k), _optimizer(optimizer, lr, eps), readout, max_steps,
                  stop_at_target, late)


def train(seed: int, d_k: int, *, scale: str, optimizer: str, lr: float,
          readout: str = "fixed", eps: float = EPS, init_factor: float = 1.0,
          max_steps: int = MAX_STEPS, stop_at_target: bool = True, late: int = 0) -> Run:
    """Return a training run: held-out accuracy after each step of `optimizer` at rate lr.

    Each step: BATCH fresh questions (the same for every arm of a seed), L = their mean
    loss, W <- update(W, dL/dW) with dL/dW_Q = G W_K, dL/dW_K = G^T W_Q; then accuracy =
    the share of the HELD_OUT questions whose largest logit is at j*.  W_Q, W_K: D_MODEL x
    d_k, drawn from the seed and d_k, times init_factor.  The run stops at the first step
    with accuracy >= TARGET (unless stop_at_target is False) once step `late` is passed;
    a run whose weights diverge stops there, and a miss has steps_to_target None.

    >>> run = train(100, 16, scale="1", optimizer="sgd", lr=0.125, max_steps=3,
    ...             stop_at_target=False)
    >>> len(run.accuracies), len(run.losses), round(run.losses[0], 2), run.accuracies
    (4, 3, 3.21, [0.15, 0.26, 0.23, 0.26])
    """
    fn = "train"
    seed, d_k = as_int(fn, seed, "seed", minimum=0), as_int(fn, d_k, "d_k", minimum=2)
    scale, optimizer = _choice(fn, scale, "scale", SCALES), _choice(fn, optimizer, "optimizer",
                                                                    OPTIMIZERS)
    return _run(seed, d_k, scale, optimizer, _positive(fn, lr, "lr"),
                _choice(fn, readout, "readout", READOUTS),
                as_int(fn, max_steps, "max_steps", minimum=0),
                as_flag(fn, stop_at_target, "stop_at_target"), _positive(fn, eps, "eps"),
                _positive(fn, init_factor, "init_factor"),
                as_int(fn, late, "late", minimum=0))


# ------------------------------------------------------------ the general identity

class Equivalent(NamedTuple):
    """How scale c' retraces a run of scale c: start from a W, train at lr', eps'."""
    init_factor: float  # a = sqrt(c / c')
    lr: float  # SGD: lr c / c';  Adam: lr a
    eps: float  # SGD: unused (eps);  Adam: eps / a


def _equivalent(d_k: int, scale: str, to_scale: str, optimizer: str, lr: float,
                eps: float) -> Equivalent:
    """c' (a W_Q)(a W_K)^T = c' a^2 M = c M: the same logits.  The gradient of the rescaled
    weights is dW / a, so SGD moves a W by lr' dW / a = a (lr dW) when lr' = lr a^2, and
    Adam's step lr' m / (sqrt(v) + eps') scales the same way when lr' = lr a, eps' = eps / a
    (m and sqrt(v) both shrink by a)."""
    c, c_to = scale_factor(scale, d_k), scale_factor(to_scale, d_k)
    a = math.sqrt(c / c_to)
    return Equivalent(a, lr * (c / c_to), eps) if optimizer == "sgd" else \
        Equivalent(a, lr * a, eps / a)


def equivalent_run(d_k: int, scale: str, to_scale: str, optimizer: str, lr: float,
                   eps: float = EPS) -> Equivalent:
    """Return (a, lr', eps') under which scale c' = to_scale, started from a W, computes
    exactly what scale c computes from W at rate lr: a = sqrt(c / c'), and
    SGD: lr' = lr c / c';  Adam: lr' = lr a, eps' = eps / a.

    Every scale is therefore a choice of initial weight scale and effective rate; the old
    identity for the unscaled arm is the pair c = 1, c' = 1/sqrt(d_k).  In floats the runs
    are bit-identical when a is a power of two (tests/test_learning.py).

    >>> equivalent_run(16, "1/sqrt(d_k)", "1", "sgd", 1.0)
    Equivalent(init_factor=0.5, lr=0.25, eps=1e-08)
    >>> equivalent_run(256, "1/sqrt(d_k)", "1/d_k", "adam", 0.03)
    Equivalent(init_factor=4.0, lr=0.12, eps=2.5e-09)
    """
    fn = "equivalent_run"
    d_k = as_int(fn, d_k, "d_k", minimum=2)
    scale, to_scale = _choice(fn, scale, "scale", SCALES), _choice(fn, to_scale, "to_scale",
                                                                    SCALES)
    optimizer = _choice(fn, optimizer, "optimizer", OPTIMIZERS)
    return _equivalent(d_k, scale, to_scale, optimizer, _positive(fn, lr, "lr"),
                       _positive(fn, eps, "eps"))


# ------------------------------------------------------------- checks at the boundary

def _choice(fn: str, value, what: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{fn}: {what} must be a str, one of {', '.join(choices)}; "
                        f"not {value!r}")
    if value not in choices:
        raise ValueError(f"{fn}: {what} must be one of {', '.join(choices)}; not {value!r}")
    return value


def _positive(fn: str, value, what: str) -> float:
    value = as_real(fn, value, what)
    if not value > 0:
        raise ValueError(f"{fn}: {what} must be positive, not {value!r}")
    return value


def _seeds(fn: str, seeds) -> Tuple[int, ...]:
    return tuple(as_int(fn, seed, "seed", minimum=0) for seed in as_list(fn, seeds, "seeds"))


# ------------------------------------------------------------------ the rate search

MISS = MAX_STEPS + 1  # what a miss counts in a tuning total
WINDOW = 6  # a grid starts 6 half-octaves either side of its guess: 13 rates, 64x wide
WIDEN = 4  # when the best rate sits at an end, 4 more rates are added on that side
GUESS = {"sgd": 0, "adam": -10}  # 2^(k/2) for 1/sqrt(d_k): SGD 1, Adam 2^-5
SWEEP_RULE = (
    "Each arm (optimizer, readout, scale, d_k) gets its own rate, from the ladder "
    "2^(k/2) (factor sqrt(2)). Its grid is centred on a guess: 1 (SGD) or 2^-5 (Adam) for "
    "1/sqrt(d_k), carried to the other scales by the identity (equivalent_run: SGD times "
    "c/c', Adam times sqrt(c/c')), and reaches 6 rates either side. Every rate of the grid "
    "is scored: the total over the tuning seeds of the steps to 90% held-out accuracy, a "
    f"miss counting {MISS}; a total is cut short, and recorded as '>N', once it exceeds "
    "the best total N found so far. The lowest total wins, a tie going to the smaller "
    "rate. If the winner is at an end of the grid, 4 more rates are added on that side "
    "and scored, until the winner is inside. The held-out seeds are never used here.")


def _rate(k: int) -> float:
    """2^(k/2), exact and the same on every machine: a power of two, or one times sqrt(2)."""
    return math.ldexp(math.sqrt(2.0) if k % 2 else 1.0, (k - k % 2) // 2)


def _arm_key(optimizer: str, readout: str, scale: str, d_k: int) -> str:
    return f"{optimizer} {readout} {scale} {d_k}"


def _guess(optimizer: str, scale: str, d_k: int) -> int:
    """The ladder index that the identity carries 1/sqrt(d_k)'s guess to."""
    ratio = scale_factor("1/sqrt(d_k)", d_k) / scale_factor(scale, d_k)  # c / c'
    return GUESS[optimizer] + round(math.log2(ratio) * (2 if optimizer == "sgd" else 1))


def _total_steps(arm: Tuple[str, str, str, int], lr: float, seeds: Sequence[int],
                 bound: float) -> Optional[int]:
    """Sum over seeds of the steps to TARGET (a miss counts MISS); None once above bound."""
    optimizer, readout, scale, d_k = arm
    total = 0
    for seed in seeds:
        cap = int(min(MAX_STEPS, bound - total))  # needing more cannot keep within bound
        steps = _run(seed, d_k, scale, optimizer, lr, readout, cap).steps_to_target
        if steps is None and cap < MAX_STEPS:
            return None
        total += MISS if steps is None else steps
        if total > bound:
            return None
    return total


def _tune(arm: Tuple[str, str, str, int], seeds: Sequence[int], progress) -> dict:
    """Score every rate of the arm's grid (guess first, then outwards: an early good total
    cuts the others short), widening the grid while the winner sits at an end."""
    centre = _guess(arm[0], arm[2], arm[3])
    low, high, totals, best = centre - WINDOW, centre + WINDOW, {}, (math.inf, 0)
    todo = sorted(range(low, high + 1), key=lambda k: (abs(k - centre), k))
    while todo:
        for k in todo:
            total = _total_steps(arm, _rate(k), seeds, best[0])
            totals[k] = total
            if total is not None and (total, k) < best:
                best = (total, k)
            if progress:
                progress(f"sweep {_arm_key(*arm)}: lr {_rate(k):.4g} -> {total}")
        if best[0] == math.inf:
            raise ValueError(f"sweep: every rate of {_arm_key(*arm)} misses on every seed")
        todo = (list(range(low - 1, low - WIDEN - 1, -1)) if best[1] == low else
                list(range(high + 1, high + WIDEN + 1)) if best[1] == high else [])
        low, high = min([low] + todo), max([high] + todo)
    return {"lr": _rate(best[1]), "total_steps": best[0],
            "grid": [_rate(k) for k in range(low, high + 1)],
            "totals": {repr(_rate(k)): (t if t is not None else f">{best[0]}")
                       for k, t in sorted(totals.items())}}


def _default_arms(d_ks: Sequence[int] = D_KS, scales: Sequence[str] = SCALES,
                  optimizers: Sequence[str] = OPTIMIZERS) -> List[Tuple[str, str, str, int]]:
    """Every (optimizer, readout, scale, d_k): each readout can be run with every scale."""
    return [(o, r, s, d_k) for r in READOUTS for o in optimizers for s in scales for d_k in d_ks]



def sweep(arms: Sequence[Tuple[str, str, str, int]], seeds: Sequence[int] = TUNING_SEEDS,
          progress: Optional[Callable[[str], None]] = None) -> dict:
    """Return the rate search: per arm, argmin over its grid of the total steps to TARGET.

    total(lr) = sum over the tuning seeds of the steps to TARGET held-out accuracy, a miss
    counting MAX_STEPS + 1; every rate of the grid is scored, and the grid widened until
    the winner is inside it (SWEEP_RULE).  Returns {"rule", "seeds", "batch", "max_steps",
    "target", "arms": {"optimizer readout scale d_k": {"lr", "total_steps", "grid",
    "totals"}}}.  Minutes for the full set: `--sweep` runs it and stores the result.

    >>> arm = sweep([("sgd", "pointer", "1/sqrt(d_k)", 16)], seeds=[0])["arms"]
    >>> arm["sgd pointer 1/sqrt(d_k) 16"]["lr"], arm["sgd pointer 1/sqrt(d_k) 16"]["total_steps"]
    (1.0, 5)
    """
    fn = "sweep"
    checked = []
    for arm in as_list(fn, arms, "arms"):
        if not isinstance(arm, (tuple, list)) or len(arm) != 4:
            raise TypeError(f"{fn}: an arm is (optimizer, readout, scale, d_k), not {arm!r}")
        checked.append((_choice(fn, arm[0], "optimizer", OPTIMIZERS),
                        _choice(fn, arm[1], "readout", READOUTS),
                        _choice(fn, arm[2], "scale", SCALES), as_int(fn, arm[3], "d_k", 2)))
    seeds = _seeds(fn, seeds)
    return {"rule": SWEEP_RULE, "seeds": list(seeds), "batch": BATCH, "max_steps": MAX_STEPS,
            "target": TARGET,
            "arms": {_arm_key(*arm): _tune(arm, seeds, progress) for arm in checked}}


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def tuned_rate(optimizer: str, scale: str, d_k: int, readout: str = "fixed",
               rates: str = RATES_FILE) -> float:
    """Return the learning rate the stored sweep chose for one arm (see sweep()).

    >>> tuned_rate("sgd", "1/d_k", 256)
    45.254833995939045
    """
    fn = "tuned_rate"
    key = _arm_key(_choice(fn, optimizer, "optimizer", OPTIMIZERS),
                   _choice(fn, readout, "readout", READOUTS), _choice(fn, scale, "scale", SCALES),
                   as_int(fn, d_k, "d_k", minimum=2))
    arms = _load(rates)["arms"] if os.path.exists(rates) else {}
    if key not in arms:
        raise ValueError(f"{fn}: no tuned rate for {key!r} in {rates}; tune it with "
                         f"`python3 experiments/learning.py --sweep --dk {d_k} --rates PATH`")
    return float(arms[key]["lr"])


# ------------------------------------------------------------------- measurements

LATE = 100  # the fixed late step at which the logits are measured a second time
LONG = 1000  # the longer cap at which the misses of the steps table are run again
PERTURBATIONS = tuple(range(1, 8))  # k of the initial-weight factors 1 + k 2^-52


def _record(optimizer: str, scale: str, d_k: int, seed: int, lr: float,
            steps: Optional[int]) -> dict:
    """One run, in the issue's schema (steps None: not within the cap)."""
    return {"optimizer": optimizer, "scale": scale, "d_k": d_k, "seed": seed, "lr": lr,
            "steps": steps}


def steps_to_target(optimizer: str, scale: str, d_k: int, lr: float,
                    seeds: Sequence[int] = HELD_OUT_SEEDS, *, readout: str = "fixed",
                    init_factor: float = 1.0, max_steps: int = MAX_STEPS) -> List[dict]:
    """Return one record per seed, {"optimizer", "scale", "d_k", "seed", "lr", "steps"}, with
    steps = min{t : held-out accuracy after t steps >= TARGET}, or None if t > max_steps.

    >>> [r["steps"] for r in steps_to_target("sgd", "1/sqrt(d_k)", 16, 1.0, [100, 101])]
    [6, 8]
    """
    fn = "steps_to_target"
    optimizer = _choice(fn, optimizer, "optimizer", OPTIMIZERS)
    scale, d_k = _choice(fn, scale, "scale", SCALES), as_int(fn, d_k, "d_k", minimum=2)
    lr, readout = _positive(fn, lr, "lr"), _choice(fn, readout, "readout", READOUTS)
    init_factor = _positive(fn, init_factor, "init_factor")
    max_steps = as_int(fn, max_steps, "max_steps", minimum=0)
    return [_record(optimizer, scale, d_k, seed, lr,
                    _run(seed, d_k, scale, optimizer, lr, readout, max_steps,
                         init_factor=init_factor).steps_to_target)
            for seed in _seeds(fn, seeds)]


class Summary(NamedTuple):
    """A median over seeds with its order-statistic interval; None marks a miss."""
    median: Optional[float]  # None: the median falls on a miss (beyond the cap)
    low: Optional[float]  # the interval of stats.median_interval: its ends are order
    high: Optional[float]  # statistics (None: that end is a miss)
    coverage: float  # P(the interval holds the true median), exactly, for this n
    misses: int
    n: int


def _summarise(values: Sequence[Optional[float]]) -> Summary:
    ranked = [math.inf if v is None else float(v) for v in values]
    top = max([v for v in ranked if v < math.inf], default=0.0) + 1.0  # above every number
    m = median_interval([top if v == math.inf else v for v in ranked])
    median = statistics.median(ranked)  # inf when a middle value is a miss
    return Summary(None if median == math.inf else median, None if m.low == top else m.low,
                   None if m.high == top else m.high, m.coverage, ranked.count(math.inf),
                   len(ranked))


def summarise(values: Sequence[Optional[float]]) -> Summary:
    """Return the median of values and the distribution-free interval of
    stats.median_interval, with None (a miss) ranked above every number.

    >>> summarise([5, 6, 6, 7, 8, 9, 9, 10, None, None])
    Summary(median=8.5, low=6.0, high=None, coverage=0.9785, misses=2, n=10)
    """
    values = as_list("summarise", values, "values")
    return _summarise([None if v is None else as_real("summarise", v, "values") for v in values])


class Diagnostics(NamedTuple):
    """The model at its initial weights: each field a median over seeds [interval]."""
    logit_std: Median  # standard deviation of the logits S over a seed's held-out questions
    largest_weight: Median  # median over those questions of max_j p_j
    gradient: Median  # median of |dL/dS|, the gradient reaching the logits
    tail_share: Median  # share of sum_i |G_i| carried by the 10% of questions with most


def _seed_diagnostics(seed: int, d_k: int, scale: str, readout: str) -> Tuple[float, ...]:
    task, c = _make_task(seed), scale_factor(scale, d_k)
    MT = _logit_matrix_transposed(_initial_weights(seed, d_k))
    logits, largest, gradients, G = [], [], [], []
    for e in task.held_out:
        _, dS, steps = _example_gradient(MT, e, c, readout)
        logits.extend(steps.scaled_scores[0])
        largest.append(max(steps.weights[0]))
        gradients.append(math.sqrt(dot(dS, dS)))
        dS_X = matmul([dS], e.X)[0]  # |G_i| = c |x_q| |dS X|: G_i = c x_q^T (dS X) has rank 1
        G.append(c * math.sqrt(dot(e.x_q, e.x_q) * dot(dS_X, dS_X)))
    top = sorted(G, reverse=True)[:len(G) // 10]
    return (math.sqrt(variance(logits)), statistics.median(largest),
            statistics.median(gradients), math.fsum(top) / math.fsum(G))


def initial_diagnostics(d_k: int, scale: str, seeds: Sequence[int] = HELD_OUT_SEEDS,
                        readout: str = "fixed") -> Diagnostics:
    """Return the model before training, per seed over its held-out questions, then the
    median over seeds with its order-statistic interval:

    logit_std = std of S = c x_q M X^T;  largest_weight = median max_j p_j;
    gradient = median |dL/dS| under the readout's loss;  tail_share = (sum of the largest
    10% of |G_i|) / sum_i |G_i|, G_i = dL/dM of question i (0.1 if all were equal).

    >>> d = initial_diagnostics(64, "1/sqrt(d_k)", seeds=[100])
    >>> round(d.logit_std.median, 2), round(d.gradient.median, 2)
    (1.1, 0.83)
    """
    fn = "initial_diagnostics"
    rows = [_seed_diagnostics(seed, as_int(fn, d_k, "d_k", minimum=2),
                              _choice(fn, scale, "scale", SCALES),
                              _choice(fn, readout, "readout", READOUTS))
            for seed in _seeds(fn, seeds)]
    return Diagnostics(*(median_interval(column) for column in zip(*rows)))


class Logits(NamedTuple):
    """The logits of the trained model: medians over a seed's held-out questions."""
    matched: float  # q . k_{j*}, the raw logit of the key the query names
    scaled: float  # c q . k_{j*}: what softmax sees
    spread: float  # standard deviation of the other m - 1 scaled logits
    cos: float  # cos(q, k_{j*})


def _logits(task: Task, params: Params, c: float) -> Logits:
    W_Q, W_K = params
    q = matmul(task.queries, W_Q)  # one row per id: 8 x d_k
    k = matmul([x for row in task.keys for x in row], W_K)  # one row per token: 64 x d_k
    table, norm_q, norm_k = matmul(q, transpose(k)), [math.sqrt(dot(v, v)) for v in q], \
        [math.sqrt(dot(v, v)) for v in k]
    matched, spread, cos = [], [], []
    for e in task.held_out:
        a, tokens = e.ids[e.j_star], [ITEMS * a_j + b_j for a_j, b_j in zip(e.ids, e.payloads)]
        star = tokens[e.j_star]
        matched.append(table[a][star])
        spread.append(c * math.sqrt(variance([table[a][t] for t in tokens if t != star])))
        cos.append(table[a][star] / (norm_q[a] * norm_k[star]))
    m = statistics.median(matched)
    return Logits(m, c * m, statistics.median(spread), statistics.median(cos))


def trained_logits(seed: int, d_k: int, *, scale: str, optimizer: str, lr: float,
                   late: int = LATE) -> Tuple[Optional[Logits], Optional[Logits]]:
    """Return the Logits at the run's first step with TARGET accuracy and after step late
    (None where the run has no such step): raw matched logit q . k_{j*}, scaled c q . k_{j*},
    the std of the other scaled logits, cos(q, k_{j*}), each a median over the held-out
    questions; q = x_q W_Q, k = x W_K (d_k each).

    >>> at_target, at_late = trained_logits(100, 16, scale="1/sqrt(d_k)", optimizer="sgd",
    ...                                     lr=tuned_rate("sgd", "1/sqrt(d_k)", 16), late=10)
    >>> round(at_target.scaled, 2), round(at_target.cos, 2), round(at_late.scaled, 2)
    (4.52, 0.75, 5.39)
    """
    fn = "trained_logits"
    seed, d_k = as_int(fn, seed, "seed", minimum=0), as_int(fn, d_k, "d_k", minimum=2)
    scale = _choice(fn, scale, "scale", SCALES)
    run = _run(seed, d_k, scale, _choice(fn, optimizer, "optimizer", OPTIMIZERS),
               _positive(fn, lr, "lr"), late=as_int(fn, late, "late", minimum=0))
    task, c = _make_task(seed), scale_factor(scale, d_k)
    return tuple(None if params is None else _logits(task, params, c)
                 for params in (run.at_target, run.at_late))


def _paired(reference: Sequence[Optional[int]], other: Sequence[Optional[int]]) -> Dict[str, int]:
    """Per seed, is `other` slower than `reference`?  A pair where both miss decides nothing."""
    counts = {"slower": 0, "faster": 0, "tied": 0, "both missed": 0}
    for r, o in zip(reference, other):
        key = ("both missed" if r is None and o is None else "slower" if r is not None and (
            o is None or o > r) else "faster" if o is not None and (r is None or o < r) else
            "tied")
        counts[key] += 1
    return counts


def _exponent(d_ks: Sequence[int], values: Sequence[float]) -> float:
    """The least-squares slope of log(value) against log(d_k): value ~ d_k^slope."""
    x, y = [math.log(d) for d in d_ks], [math.log(v) for v in values]
    x_bar, y_bar = math.fsum(x) / len(x), math.fsum(y) / len(y)
    return (math.fsum((a - x_bar) * (b - y_bar) for a, b in zip(x, y))
            / math.fsum((a - x_bar) ** 2 for a in x))


def _measure(scales: Sequence[str], optimizers: Sequence[str], d_ks: Sequence[int],
             seeds: Sequence[int], readout: str, rates: str, *, transfer: bool = False,
             logits: bool = False, perturb: int = 0, long: bool = False,
             progress: Callable[[str], None] = lambda message: None) -> dict:
    """Every run of one command, as records; the tables are made from them (_tables)."""
    arms = [(o, s, d_k) for o in optimizers for s in scales for d_k in d_ks]
    pointer = (readout == "fixed" and "sgd" in optimizers
               and all(s in scales for s in POINTER_SCALES))
    rate = {arm: tuned_rate(arm[0], arm[1], arm[2], readout, rates) for arm in arms}
    rate.update({("pointer", s, d_k): tuned_rate("sgd", s, d_k, "pointer", rates)
                 for s in POINTER_SCALES for d_k in d_ks if pointer})  # all checked first
    out = {"settings": {"d_model": D_MODEL, "items": ITEMS, "beta": BETA, "batch": BATCH,
                        "held_out": HELD_OUT, "target": TARGET, "max_steps": MAX_STEPS,
                        "seeds": list(seeds), "tuning_seeds": list(TUNING_SEEDS),
                        "readout": readout, "d_ks": list(d_ks), "late": LATE, "long": LONG},
           "runs": [], "logits": [], "diagnostics": [], "pointer": [], "transfer": [],
           "perturbed": {}, "long": []}
    for o, s, d_k in arms:
        progress(f"{o} {s} d_k={d_k}")
        if not logits:
            out["runs"] += steps_to_target(o, s, d_k, rate[o, s, d_k], seeds, readout=readout)
            continue
        for seed in seeds:  # the same trajectory, run on to step LATE
            run = _run(seed, d_k, s, o, rate[o, s, d_k], readout, late=LATE)
            out["runs"].append(_record(o, s, d_k, seed, rate[o, s, d_k], run.steps_to_target))
            task, c = _make_task(seed), scale_factor(s, d_k)
            for at, step, params in (("target", run.steps_to_target, run.at_target),
                                     ("late", LATE, run.at_late)):
                if params is not None:
                    out["logits"].append({"optimizer": o, "scale": s, "d_k": d_k, "seed": seed,
                                          "at": at, "step": step,
                                          **_logits(task, params, c)._asdict()})
    for s in scales:
        progress(f"diagnostics {s}")
        out["diagnostics"] += [dict(zip(("scale", "d_k", "seed") + Diagnostics._fields,
                                        (s, d_k, seed) + _seed_diagnostics(seed, d_k, s, readout)))
                               for d_k in d_ks for seed in seeds]
    for s in POINTER_SCALES if pointer else ():
        progress(f"pointer control {s}")
        for d_k in d_ks:
            out["pointer"] += steps_to_target("sgd", s, d_k, rate["pointer", s, d_k], seeds,
                                              readout="pointer")
    for o, s in ((o, s) for o in optimizers for s in scales if transfer):
        progress(f"rate transfer {o} {s}")
        lr = rate[o, s, d_ks[0]]  # the rate tuned at the smallest d_k, used at every d_k
        for d_k in d_ks[1:]:
            out["transfer"] += ([r for r in out["runs"] if r["optimizer"] == o and
                                 r["scale"] == s and r["d_k"] == d_k] if lr == rate[o, s, d_k]
                                else steps_to_target(o, s, d_k, lr, seeds, readout=readout))
    for k in PERTURBATIONS[:perturb]:
        progress(f"perturbation 1 + {k} 2^-52")
        out["perturbed"][str(k)] = [r for o, s, d_k in arms for r in steps_to_target(
            o, s, d_k, rate[o, s, d_k], seeds, readout=readout, init_factor=1 + k * 2.0 ** -52)]
    for r in [r for r in out["runs"] if r["steps"] is None and long]:
        progress(f"long run {r['optimizer']} {r['scale']} d_k={r['d_k']} seed {r['seed']}")
        out["long"] += steps_to_target(r["optimizer"], r["scale"], r["d_k"], r["lr"],
                                       [r["seed"]], readout=readout, max_steps=LONG)
    return out


# ------------------------------------------------------------------------ the tables

def _groups(records: Sequence[dict]) -> Dict[Tuple[str, str, int], List[dict]]:
    """Records by arm (optimizer, scale, d_k), in the order they were run."""
    groups: Dict[Tuple[str, str, int], List[dict]] = {}
    for r in records:
        groups.setdefault((r["optimizer"], r["scale"], r["d_k"]), []).append(r)
    return groups


def _steps(records: Sequence[dict]) -> List[Optional[int]]:
    return [r["steps"] for r in records]


def _rank(v: Optional[float]) -> float:
    return math.inf if v is None else v


def _published(s: Summary, medians: Sequence[Optional[float]]) -> Tuple[object, object, str]:
    """The interval to publish: the order-statistic interval over seeds ("seeds"), or, for
    an arm whose median moves under the perturbations of its initial weights, the range of
    those medians when it is the wider of the two ("rounding")."""
    ranked = [_rank(m) for m in [s.median] + list(medians)]
    low, high = min(ranked), max(ranked)
    if low == high or high - low <= _rank(s.high) - _rank(s.low):
        return s.low, s.high, "seeds"
    return low, (None if high == math.inf else high), "rounding"


def _tables(results: dict) -> dict:
    """Every table of the report and the docs, from the records of _measure."""
    seeds = results["settings"]["seeds"]
    perturbed = [_groups(records) for _, records in sorted(results["perturbed"].items())]
    table = []
    for arm, records in _groups(results["runs"]).items():
        s = _summarise(_steps(records))
        medians = [_summarise(_steps(p[arm])).median for p in perturbed]
        per_seed = list(zip(_steps(records), *(_steps(p[arm]) for p in perturbed)))
        low, high, kind = _published(s, medians)
        table.append({"optimizer": arm[0], "scale": arm[1], "d_k": arm[2],
                      "lr": records[0]["lr"], "steps": _steps(records), **s._asdict(),
                      "perturbed_medians": medians,
                      "seeds_changed": sum(len(set(steps)) > 1 for steps in per_seed)
                      if perturbed else None, "published": [low, high], "interval": kind})
    return {"settings": results["settings"], "table": table,
            "paired": _paired_table(table), "diagnostics": _diagnostics_table(results),
            "pointer": _pointer_table(results), "transfer": _transfer_table(results, table),
            "logits": _logits_table(results), "exponents": _exponents_table(results),
            "long": _long_table(results, seeds)}


def _row(table: Sequence[dict], optimizer: str, scale: str, d_k: int) -> Optional[dict]:
    return next((r for r in table if (r["optimizer"], r["scale"], r["d_k"]) ==
                 (optimizer, scale, d_k)), None)


def _paired_table(table: Sequence[dict]) -> List[dict]:
    """Each scale against 1/sqrt(d_k), seed by seed, at each arm's own rate."""
    out = []
    for r in table:
        reference = _row(table, r["optimizer"], SCALES[0], r["d_k"])
        if reference is not None and r["scale"] != SCALES[0]:
            out.append({"optimizer": r["optimizer"], "scale": r["scale"], "d_k": r["d_k"],
                        **_paired(reference["steps"], r["steps"])})
    return out


def _median(values: Sequence[float]) -> List[float]:
    m = median_interval(values)
    return [m.median, m.low, m.high]


def _diagnostics_table(results: dict) -> List[dict]:
    groups: Dict[Tuple[str, int], List[dict]] = {}
    for r in results["diagnostics"]:
        groups.setdefault((r["scale"], r["d_k"]), []).append(r)
    return [{"readout": results["settings"]["readout"], "scale": s, "d_k": d_k,
             **{f: _median([r[f] for r in rows]) for f in Diagnostics._fields}}
            for (s, d_k), rows in sorted(groups.items(), key=lambda item: (item[0][1],
                                                                             SCALES.index(item[0][0])))]


def _ratios(scaled: Sequence[Optional[int]], unscaled: Sequence[Optional[int]]) -> dict:
    """unscaled / scaled steps, seed by seed (a miss of the unscaled arm ranks above all)."""
    ratios = [None if u is None else u / s for s, u in zip(scaled, unscaled) if s is not None]
    return _summarise(ratios)._asdict()


def _pointer_table(results: dict) -> List[dict]:
    fixed, pointer = _groups(results["runs"]), _groups(results["pointer"])
    out = []
    for d_k in results["settings"]["d_ks"] if results["pointer"] else ():
        row = {"d_k": d_k}
        for name, groups in (("fixed", fixed), ("pointer", pointer)):
            scaled, unscaled = (_steps(groups["sgd", s, d_k]) for s in POINTER_SCALES)
            row[name] = {"ratio": _ratios(scaled, unscaled),
                         "medians": [_summarise(scaled).median, _summarise(unscaled).median]}
        out.append(row)
    return out


def _transfer_table(results: dict, table: Sequence[dict]) -> List[dict]:
    out = []
    for arm, records in _groups(results["transfer"]).items():
        tuned, first = _row(table, *arm), _row(table, arm[0], arm[1],
                                                 results["settings"]["d_ks"][0])
        out.append({"optimizer": arm[0], "scale": arm[1], "d_k": arm[2], "lr": tuned["lr"],
                    "tuned": [tuned["median"], tuned["low"], tuned["high"]],
                    "lr_carried": first["lr"],
                    "carried": list(_summarise(_steps(records))[:3]),
                    "carried_misses": _steps(records).count(None)})
    return out


def _logits_table(results: dict) -> List[dict]:
    groups: Dict[tuple, List[dict]] = {}
    for r in results["logits"]:
        groups.setdefault((r["optimizer"], r["scale"], r["d_k"], r["at"]), []).append(r)
    order = sorted(groups, key=lambda k: (OPTIMIZERS.index(k[0]), SCALES.index(k[1]), k[2],
                                          k[3] == "late"))
    return [{"optimizer": o, "scale": s, "d_k": d_k, "at": at, "n": len(groups[o, s, d_k, at]),
             **{f: _median([r[f] for r in groups[o, s, d_k, at]]) for f in Logits._fields}}
            for o, s, d_k, at in order]


def _exponents_table(results: dict) -> List[dict]:
    """Per seed, the slope of log(quantity) against log(d_k); the median over seeds."""
    d_ks, by_run = results["settings"]["d_ks"], {}
    for r in results["logits"]:
        by_run[r["optimizer"], r["scale"], r["at"], r["seed"], r["d_k"]] = r
    out = []
    arms = sorted({(r["optimizer"], r["scale"], r["at"]) for r in results["logits"]},
                  key=lambda a: (OPTIMIZERS.index(a[0]), SCALES.index(a[1]), a[2] == "late"))
    for (o, s, at), quantity in ((arm, f) for arm in arms for f in Logits._fields):
        slopes = []
        for seed in results["settings"]["seeds"]:
            values = [by_run.get((o, s, at, seed, d_k), {}).get(quantity) for d_k in d_ks]
            if len(d_ks) > 1 and all(v is not None and v > 0 for v in values):
                slopes.append(_exponent(d_ks, values))
        if slopes:
            out.append({"optimizer": o, "scale": s, "at": at, "quantity": quantity,
                        "n": len(slopes), "exponent": _median(slopes)})
    return out


def _long_table(results: dict, seeds: Sequence[int]) -> List[dict]:
    """The misses re-run with the cap LONG, with the same seed's perturbed runs (cap
    MAX_STEPS) beside them."""
    perturbed = [_groups(records) for _, records in sorted(results["perturbed"].items())]
    out = []
    for arm, records in _groups(results["long"]).items():
        out.append({"optimizer": arm[0], "scale": arm[1], "d_k": arm[2], "runs": len(records),
                     "reached": sum(r["steps"] is not None for r in records),
                     "seeds": [r["seed"] for r in records], "steps": _steps(records),
                     "perturbed": [[next(r["steps"] for r in p[arm] if r["seed"] == seed)
                                    for p in perturbed] for seed in (r["seed"] for r in records)]})
    return out


# ------------------------------------------------------------------ formatting

def _s(v: Optional[float]) -> str:
    """Steps: '7', '7.5', or '>300' for a miss."""
    return f">{MAX_STEPS}" if v is None else f"{v:g}"


def _fmt(median: float, low: float, high: float, percent: bool = False) -> str:
    """median [low, high] with the decimals the interval's width supports (its first
    digit, or first two below 3), and for positive values enough to show the smallest one
    (None: a miss, inf)."""
    k, unit = (100.0, "%") if percent else (1.0, "")
    values = [None if v is None else v * k for v in (median, low, high)]
    finite = [abs(v) for v in values if v is not None]
    width = (high - low) * k if None not in values else 0.0
    positive = all(v is None or v > 0 for v in values)  # then show the smallest too
    digit = math.floor(math.log10(width)) if width > 0 else 0
    decimals = max([0, -digit + (width < 3 * 10.0 ** digit) if width > 0 else
                    1 - math.floor(math.log10(max(finite)))]
                   + [-math.floor(math.log10(v)) for v in finite if positive and v < 1])
    text = ["inf" if v is None else f"{v:.{decimals}f}{unit}" for v in values]
    text = [t[1:] if t.startswith("-") and float(t.rstrip("%")) == 0 else t for t in text]
    return f"{text[0]} [{text[1]}, {text[2]}]"


def _cell(row: dict) -> str:
    """median [published interval], * marking a rounding-sensitive arm."""
    low, high = row["published"]
    return f"{_s(row['median'])} [{_s(low)}, {_s(high)}]" + ("*" if row["seeds_changed"] else "")


def _seed_range(seeds: Sequence[int]) -> str:
    contiguous = list(seeds) == list(range(seeds[0], seeds[0] + len(seeds)))
    return f"{seeds[0]}-{seeds[-1]}" if contiguous and len(seeds) > 1 else ", ".join(
        map(str, seeds))


def _lr(lr: float) -> str:
    return f"{lr:.4g}"


def _report(data: dict) -> List[str]:
    """The printed report: every table of data, as text."""
    settings, table = data["settings"], data["table"]
    coverage = table[0]["coverage"] if table else 0.0
    perturbed = bool(table) and table[0]["seeds_changed"] is not None
    lines = [f"Associative recall: d_model = {D_MODEL}, m = {ITEMS} keys, batch {BATCH}, "
             f"beta = {BETA:g}, {settings['readout']} readout; only W_Q and W_K learn.",
             f"Steps to {TARGET:.0%} held-out accuracy ({HELD_OUT} questions per seed), median "
             f"over seeds {_seed_range(settings['seeds'])}",
             f"[order-statistic interval, coverage {coverage:.1%}"
             + ("; or, where wider, the range of the median when the" if perturbed else "]."),
             *(["initial weights are multiplied by 1 + k 2^-52, k = 0..7; *: some seeds' steps "
                "change then]."] if perturbed else []),
             f">{MAX_STEPS}: not within {MAX_STEPS} steps. Each arm at its own rate, tuned on "
             f"seeds {_seed_range(TUNING_SEEDS)} ({os.path.basename(RATES_FILE)}).", "",
             f"{'optimizer':9} {'scale':11} {'d_k':>4} {'lr':>9}  {'median [interval]':22} "
             "per seed"]
    lines += [f"{r['optimizer']:9} {r['scale']:11} {r['d_k']:4d} {_lr(r['lr']):>9}  "
              f"{_cell(r):22} {' '.join(map(_s, r['steps']))}" for r in table]
    if data["paired"]:
        lines += ["", f"Each scale against {SCALES[0]}, seed by seed: slower / faster / tied / "
                  "both missed (a pair that both miss decides nothing)"]
        lines += [f"  {p['optimizer']:5} {p['scale']:10} d_k = {p['d_k']:<4d} {p['slower']} / "
                  f"{p['faster']} / {p['tied']} / {p['both missed']}" for p in data["paired"]]
    lines += _report_rounding(table) + _report_diagnostics(data) + _report_pointer(data)
    lines += _report_transfer(data) + _report_logits(data) + _report_long(data)
    return lines


def _report_rounding(table: Sequence[dict]) -> List[str]:
    if not table or table[0]["seeds_changed"] is None:
        return []
    lines = ["", "Rounding: with the initial weights times 1 + k 2^-52, k = 0..7: the seeds "
             "whose steps change, the medians"]
    for r in table:
        medians = [r["median"]] + r["perturbed_medians"]
        lines.append(f"  {r['optimizer']:5} {r['scale']:11} d_k = {r['d_k']:<4d} "
                     f"{r['seeds_changed']:2d} of {r['n']}  {' '.join(map(_s, medians))}")
    return lines


def _report_diagnostics(data: dict) -> List[str]:
    rows = data["diagnostics"]
    if not rows:
        return []
    lines = ["", f"At initialisation ({rows[0]['readout']} readout; per seed over its held-out "
             "questions, then median over seeds [interval]):",
             f"{'d_k':>4} {'scale':11} {'std of S':22} {'median max_j p_j':24} "
             f"{'median |dL/dS|':24} top-10% share of |dL/dM|"]
    for r in rows:
        lines.append(f"{r['d_k']:4d} {r['scale']:11} {_fmt(*r['logit_std']):22} "
                     f"{_fmt(*r['largest_weight']):24} {_fmt(*r['gradient']):24} "
                     f"{_fmt(*r['tail_share'], percent=True)}")
    return lines


def _ratio_text(ratio: dict) -> str:
    return _fmt(ratio["median"], ratio["low"], ratio["high"])


def _report_pointer(data: dict) -> List[str]:
    if not data["pointer"]:
        return []
    lines = ["", f"Control, pointer loss -log p_j* (dL/dS = p - e_j*: no Jacobian to vanish), "
             f"SGD: steps of 1 over steps of {POINTER_SCALES[0]}, seed by seed, median "
             "[interval]",
             f"{'d_k':>4}  {'fixed readout':24} {'pointer loss':24}"]
    lines += [f"{p['d_k']:4d}  {_ratio_text(p['fixed']['ratio']):24} "
              f"{_ratio_text(p['pointer']['ratio']):24}" for p in data["pointer"]]
    return lines


def _report_transfer(data: dict) -> List[str]:
    if not data["transfer"]:
        return []
    d_k0 = data["settings"]["d_ks"][0]
    lines = ["", f"Rate transfer: the rate tuned at d_k = {d_k0}, used at every d_k "
             "(median steps [interval]):",
             f"{'optimizer':9} {'scale':11} {'d_k':>4} {'tuned lr':>9} {'steps':18} "
             f"{'lr from ' + str(d_k0):>11} steps"]
    for t in data["transfer"]:
        lines.append(f"{t['optimizer']:9} {t['scale']:11} {t['d_k']:4d} {_lr(t['lr']):>9} "
                     f"{_steps_cell(t['tuned']):18} {_lr(t['lr_carried']):>11} "
                     f"{_steps_cell(t['carried'])}")
    return lines


def _steps_cell(m: Sequence[Optional[float]]) -> str:
    return f"{_s(m[0])} [{_s(m[1])}, {_s(m[2])}]"


def _report_logits(data: dict) -> List[str]:
    if not data["logits"]:
        return []
    lines = ["", f"The logits after training: at each run's first {TARGET:.0%} and after step "
             f"{LATE}; medians over held-out questions, then over seeds [interval]",
             f"{'optimizer':9} {'scale':11} {'d_k':>4} {'at':6} {'q.k*':20} {'c q.k*':20} "
             f"{'std of others':20} cos(q, k*)"]
    for r in data["logits"]:
        lines.append(f"{r['optimizer']:9} {r['scale']:11} {r['d_k']:4d} {r['at']:6} "
                     f"{_fmt(*r['matched']):20} {_fmt(*r['scaled']):20} "
                     f"{_fmt(*r['spread']):20} {_fmt(*r['cos'])}")
    lines += ["", "Exponents against d_k (per seed, the slope of log value on log d_k; median "
              "over seeds [interval])",
              f"{'optimizer':9} {'scale':11} {'at':6} {'q.k*':20} {'c q.k*':20} "
              f"{'std of others':20} cos(q, k*)"]
    rows: Dict[tuple, Dict[str, list]] = {}
    for e in data["exponents"]:
        rows.setdefault((e["optimizer"], e["scale"], e["at"]), {})[e["quantity"]] = e["exponent"]
    for (o, s, at), cells in rows.items():
        lines.append(f"{o:9} {s:11} {at:6} " + " ".join(
            f"{_fmt(*cells[f]) if f in cells else '-':20}" for f in Logits._fields).rstrip())
    return lines


def _report_long(data: dict) -> List[str]:
    if not data["long"]:
        return []
    lines = ["", f"The misses above, run again with a cap of {LONG} steps:"]
    lines += [f"  {r['optimizer']:5} {r['scale']:11} d_k = {r['d_k']:<4d} {r['reached']} of "
              f"{r['runs']} reach {TARGET:.0%}: {' '.join(_long_steps(r['steps']))} (seeds "
              f"{', '.join(map(str, r['seeds']))})" for r in data["long"]]
    return lines


def _long_steps(steps: Sequence[Optional[int]]) -> List[str]:
    return [f">{LONG}" if s is None else str(s) for s in steps]


# ------------------------------------------------------------------ the docs' data

def docs_data() -> dict:
    """Return every table the docs need, from the committed records (results.json) and
    rates (tuned_rates.json), without training: the build takes seconds.

    >>> data = docs_data()
    >>> len(data["table"]) == len(OPTIMIZERS) * len(SCALES) * len(D_KS)
    True
    """
    results, arms = _load(RESULTS_FILE), _load(RATES_FILE)["arms"]
    for r in results["runs"]:
        if arms[_arm_key(r["optimizer"], "fixed", r["scale"], r["d_k"])]["lr"] != r["lr"]:
            raise ValueError("docs_data: results.json was made with other rates than "
                             "tuned_rates.json; run `python3 experiments/learning.py --publish`")
    return _tables(results)


COLOURS = {"1/sqrt(d_k)": ("#000000", "circle"), "1/d_k": ("#0072B2", "square"),
           "1/ln(d_k)": ("#009E73", "diamond"), "1": ("#D55E00", "triangle")}  # Okabe-Ito
DASHES = {"sgd": "", "adam": "6 3"}


def figure(data: dict) -> str:
    """Return the SVG of median steps to TARGET against d_k, one line per scale and
    optimizer, with the published intervals as bars (a miss drawn at MAX_STEPS + 1)."""
    from figures import Axis, Series, plot  # scripts/figures.py: on the path of build and tests

    def y(v):
        return float(MISS) if v is None else float(v)

    series = []
    for scale in SCALES:
        for optimizer in OPTIMIZERS:
            rows = [r for r in data["table"] if (r["scale"], r["optimizer"]) == (scale,
                                                                                   optimizer)]
            colour, marker = COLOURS[scale]
            series.append(Series(f"{scale}, {_name(optimizer)}", [float(r["d_k"]) for r in rows],
                                 [y(r["median"]) for r in rows],
                                 [tuple(y(v) for v in r["published"]) for r in rows],
                                 style=(colour, DASHES[optimizer], marker)))
    d_ks = data["settings"]["d_ks"]
    return plot(f"Steps to {TARGET:.0%} held-out accuracy, each scale at its own rate",
                Axis("d_k (log scale)", log=True, ticks=[float(d) for d in d_ks]),
                Axis(f"median steps, {len(data['settings']['seeds'])} seeds (log scale; "
                     f"{MISS} = missed)", log=True), series)


def markdown_values(data: dict) -> Dict[str, str]:
    """Return the few inline values of the prose, by name.

    >>> sorted(markdown_values(docs_data()))
    ['learning.seeds']
    """
    return {"learning.seeds": _seed_range(data["settings"]["seeds"])}


def markdown_blocks(data: dict) -> Dict[str, str]:
    """Return the generated Markdown blocks, by name: learning-table (README.md),
    learning-answers, learning-diagnostics and learning-pointer (docs/interview.md), and
    the tables of docs/experiments.md.

    >>> sorted(markdown_blocks(docs_data()))
    ['learning-answers', 'learning-diagnostics', 'learning-exponents', 'learning-full',
     'learning-logits', 'learning-long', 'learning-pointer', 'learning-table',
     'learning-transfer']
    """
    return {"learning-table": "\n".join(_headline(data)),
            "learning-diagnostics": "\n".join(_diagnostics_markdown(data)),
            "learning-pointer": "\n".join(_pointer_markdown(data)),
            "learning-answers": "\n".join(_answers(data)),
            "learning-full": "\n".join(_full_markdown(data)),
            "learning-transfer": "\n".join(_transfer_markdown(data)),
            "learning-logits": "\n".join(_logits_markdown(data)),
            "learning-exponents": "\n".join(_exponents_markdown(data)),
            "learning-long": "\n".join(_long_markdown(data))}


def _name(optimizer: str) -> str:
    return "SGD" if optimizer == "sgd" else "Adam"


def _headline(data: dict) -> List[str]:
    d_ks, table = data["settings"]["d_ks"], data["table"]
    lines = ["| optimizer | scale | " + " | ".join(f"d_k = {d}" for d in d_ks) + " |",
             "|---|---|" + "---|" * len(d_ks)]
    for optimizer in OPTIMIZERS:
        for scale in SCALES:
            cells = [_row(table, optimizer, scale, d) for d in d_ks]
            if all(cells):
                lines.append(f"| {_name(optimizer)} | {scale} | "
                             + " | ".join(_cell(c) for c in cells) + " |")
    return lines + [""] + _paragraph(
        f"Median steps to {TARGET:.0%} held-out accuracy over seeds "
        f"{_seed_range(data['settings']['seeds'])}, each arm at its own tuned rate "
        f"[order-statistic interval, coverage {table[0]['coverage']:.1%}; or, where wider, the "
        "range of the median when the initial weights are multiplied by 1 + k 2^-52, "
        "k = 0..7]. *: rounding-sensitive, some seeds' step counts change under those "
        f"perturbations. >{MAX_STEPS}: not within {MAX_STEPS} steps.")[:-1]


def _diagnostics_markdown(data: dict) -> List[str]:
    lines = ["| d_k | scale | std of S | median max_j p_j | median ‖dL/dS‖ | share of ‖dL/dM‖ "
             "in the top 10% of questions |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['d_k']} | {r['scale']} | {_fmt(*r['logit_std'])} | "
              f"{_fmt(*r['largest_weight'])} | {_fmt(*r['gradient'])} | "
              f"{_fmt(*r['tail_share'], percent=True)} |" for r in data["diagnostics"]]
    return lines + [""] + _paragraph(
        f"At the initial weights, {data['diagnostics'][0]['readout']} readout: per seed over "
        f"its held-out questions, then the median over seeds "
        f"{_seed_range(data['settings']['seeds'])} [order-statistic interval].")[:-1]


def _pointer_markdown(data: dict) -> List[str]:
    lines = ["| d_k | fixed readout: steps of c = 1 / steps of 1/sqrt(d_k) | "
             "pointer loss: the same ratio |", "|---|---|---|"]
    lines += [f"| {p['d_k']} | {_ratio_text(p['fixed']['ratio'])} | "
              f"{_ratio_text(p['pointer']['ratio'])} |" for p in data["pointer"]]
    missed = any(p[r]["ratio"]["misses"] for p in data["pointer"] for r in READOUTS)
    return lines + [""] + _paragraph(
        f"SGD, each arm at its own tuned rate; the ratio seed by seed, median over seeds "
        f"{_seed_range(data['settings']['seeds'])} [order-statistic interval]"
        + ("; inf: the unscaled run missed the cap." if missed else "."))[:-1]


def _full_markdown(data: dict) -> List[str]:
    lines = ["| optimizer | scale | d_k | rate | median steps | interval over seeds | "
             "median for k = 0..7 | seeds that change | published interval |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in data["table"]:
        medians = " ".join(map(_s, [r["median"]] + r["perturbed_medians"]))
        lines.append(f"| {_name(r['optimizer'])} | {r['scale']} | {r['d_k']} | {_lr(r['lr'])} | "
                     f"{_s(r['median'])} | [{_s(r['low'])}, {_s(r['high'])}] | {medians} | "
                     f"{r['seeds_changed']} of {r['n']} | "
                     f"{'range over k' if r['interval'] == 'rounding' else 'seeds'} |")
    return lines


def _transfer_markdown(data: dict) -> List[str]:
    d_k0 = data["settings"]["d_ks"][0]
    lines = [f"| optimizer | scale | d_k | tuned rate | steps at it | rate tuned at d_k = {d_k0} "
             "| steps at that rate |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {_name(t['optimizer'])} | {t['scale']} | {t['d_k']} | {_lr(t['lr'])} | "
              f"{_steps_cell(t['tuned'])} | {_lr(t['lr_carried'])} | {_steps_cell(t['carried'])} |"
              for t in data["transfer"]]
    return lines


def _logits_markdown(data: dict) -> List[str]:
    lines = ["| optimizer | scale | d_k | at | q · k* | c q · k* | std of the other c q · k "
             "| cos(q, k*) |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {_name(r['optimizer'])} | {r['scale']} | {r['d_k']} | "
              f"{'first ' + format(TARGET, '.0%') if r['at'] == 'target' else 'step ' + str(LATE)}"
              f" | {_fmt(*r['matched'])} | {_fmt(*r['scaled'])} | {_fmt(*r['spread'])} | "
              f"{_fmt(*r['cos'])} |" for r in data["logits"]]
    return lines


def _exponents_markdown(data: dict) -> List[str]:
    lines = ["| optimizer | scale | at | q · k* | c q · k* | std of the other c q · k "
             "| cos(q, k*) |", "|---|---|---|---|---|---|---|"]
    rows: Dict[tuple, Dict[str, list]] = {}
    for e in data["exponents"]:
        rows.setdefault((e["optimizer"], e["scale"], e["at"]), {})[e["quantity"]] = e["exponent"]
    for (o, s, at), cells in rows.items():
        when = f"first {TARGET:.0%}" if at == "target" else f"step {LATE}"
        lines.append(f"| {_name(o)} | {s} | {when} | " + " | ".join(
            _fmt(*cells[f]) if f in cells else "-" for f in Logits._fields) + " |")
    return lines


def _long_markdown(data: dict) -> List[str]:
    if not data["long"]:
        return [f"Every run of the table reached {TARGET:.0%} within {MAX_STEPS} steps."]
    lines = ["| optimizer | scale | d_k | seed | steps, cap " + str(LONG) + " | steps with the "
             "initial weights times 1 + k 2^-52, k = 1..7 (cap " + str(MAX_STEPS) + ") |",
             "|---|---|---|---|---|---|"]
    for r in data["long"]:
        lines += [f"| {_name(r['optimizer'])} | {r['scale']} | {r['d_k']} | {seed} | "
                  f"{_long_steps([steps])[0]} | {' '.join(map(_s, perturbed))} |"
                  for seed, steps, perturbed in zip(r["seeds"], r["steps"], r["perturbed"])]
    return lines


def _paragraph(text: str) -> List[str]:
    """One paragraph, wrapped for a reader of the raw Markdown in a terminal."""
    return textwrap.wrap(text, 90, break_long_words=False, break_on_hyphens=False) + [""]


def _answers(data: dict) -> List[str]:
    """The four interview answers of docs/interview.md, every number from the records."""
    d_ks, seeds = data["settings"]["d_ks"], _seed_range(data["settings"]["seeds"])
    first, last = d_ks[0], d_ks[-1]

    def steps(o, s):
        return ", ".join(_cell(_row(data["table"], o, s, d)) for d in d_ks)

    def diag(s, d, field):
        return _fmt(*next(r[field] for r in data["diagnostics"] if (r["scale"], r["d_k"]) ==
                          (s, d)))

    def logit(o, s, at, field):
        return ", ".join(_fmt(*next(r[field] for r in data["logits"] if (
            r["optimizer"], r["scale"], r["d_k"], r["at"]) == (o, s, d, at))) for d in d_ks)

    def exponent(o, s, field, at="target"):
        return _fmt(*next(e["exponent"] for e in data["exponents"] if (
            e["optimizer"], e["scale"], e["at"], e["quantity"]) == (o, s, at, field)))

    def lr(o, s, d):
        return _lr(_row(data["table"], o, s, d)["lr"])

    where = (f"In the training experiment (one bilinear attention model, d_model = {D_MODEL}, "
             f"associative recall over {ITEMS} keys; each scale at its own rate, tuned on seeds "
             f"{_seed_range(TUNING_SEEDS)}), median steps to {TARGET:.0%} held-out accuracy "
             f"over seeds {seeds} [interval]")
    at_d_ks = f"at d_k = {', '.join(map(str, d_ks))}"
    lines = ["### Why not 1/d_k?", ""]
    lines += _paragraph(
        f"1/d_k trains, at its own learning rate. {where} {at_d_ks}: 1/d_k takes "
        f"{steps('sgd', '1/d_k')} with SGD and {steps('adam', '1/d_k')} with Adam; 1/sqrt(d_k) "
        f"takes {steps('sgd', '1/sqrt(d_k)')} and {steps('adam', '1/sqrt(d_k)')}.")
    lines += _paragraph(
        f"At initialisation 1/d_k makes the logits small: their standard deviation is "
        f"{diag('1/d_k', last, 'logit_std')} at d_k = {last}, so attention starts nearly "
        f"uniform (the largest of {ITEMS} weights is {diag('1/d_k', last, 'largest_weight')}; "
        f"uniform is {1 / ITEMS:g}). That does not starve the gradient: the median ‖dL/dS‖ is "
        f"{diag('1/d_k', last, 'gradient')}, against {diag('1/sqrt(d_k)', last, 'gradient')} "
        f"under 1/sqrt(d_k). What 1/d_k changes is the rate it needs: with SGD its tuned rate "
        f"grows from {lr('sgd', '1/d_k', first)} at d_k = {first} to "
        f"{lr('sgd', '1/d_k', last)} at {last}, while 1/sqrt(d_k)'s stays between "
        f"{_lr(min(_row(data['table'], 'sgd', '1/sqrt(d_k)', d)['lr'] for d in d_ks))} and "
        f"{_lr(max(_row(data['table'], 'sgd', '1/sqrt(d_k)', d)['lr'] for d in d_ks))}.")
    lines += _paragraph(
        "muP (Yang et al., \"Tensor Programs V\", 2022) prescribes 1/d_k for the model that "
        "training makes, not for the one it starts from: once a query is correlated with its "
        "key, q · k grows like d_k at a fixed correlation, not like sqrt(d_k) (next question).")
    lines += ["### What happens to q · k after training?", ""]
    lines += _paragraph(
        "It stops being a sum of independent terms: training correlates each query with its "
        "key. For pairs (q_i, k_i) with correlation rho, E[q · k] = rho d_k and "
        "Var(q · k) = d_k (1 + rho^2) (`stats.correlated_dot_product_moments`): at a fixed "
        "correlation q · k grows like d_k, and under 1/sqrt(d_k) the scaled logit would grow "
        "like sqrt(d_k) and saturate softmax again.")
    lines += _paragraph(
        f"The trained model does not hold the correlation fixed; it grows the logits until "
        f"they do the job. In the training experiment, at each run's first {TARGET:.0%} "
        f"held-out accuracy (medians over its held-out questions, then over seeds {seeds} "
        f"[interval]; SGD, {at_d_ks}), the matched key's scaled logit c q · k* is "
        f"{logit('sgd', '1/sqrt(d_k)', 'target', 'scaled')} under 1/sqrt(d_k) and "
        f"{logit('sgd', '1/d_k', 'target', 'scaled')} under 1/d_k: it does not grow with "
        f"d_k. Fitted per seed against d_k, the raw q · k* grows like d_k to the power "
        f"{exponent('sgd', '1/sqrt(d_k)', 'matched')} (SGD) and "
        f"{exponent('adam', '1/sqrt(d_k)', 'matched')} (Adam) under 1/sqrt(d_k), about "
        f"1/c, and {exponent('sgd', '1/d_k', 'matched')} and "
        f"{exponent('adam', '1/d_k', 'matched')} under 1/d_k, a little slower than 1/c. "
        f"Under 1/d_k the query aligns with its key equally at every d_k "
        f"(cos(q, k*) {logit('sgd', '1/d_k', 'target', 'cos')}), muP's picture; under "
        f"1/sqrt(d_k) it aligns less as d_k grows "
        f"({logit('sgd', '1/sqrt(d_k)', 'target', 'cos')}). Training goes on "
        f"growing the logits: after step {LATE}, c q · k* under 1/sqrt(d_k) is "
        f"{logit('sgd', '1/sqrt(d_k)', 'late', 'scaled')} with SGD and "
        f"{logit('adam', '1/sqrt(d_k)', 'late', 'scaled')} with Adam.")
    lines += ["### Does the learning rate carry over when d_k changes?", ""]
    lines += _paragraph(
        f"It depends on the scale and on the optimizer. {where}, with the rate tuned at "
        f"that d_k and with the rate tuned at d_k = {first}:")
    lines += ["| optimizer | scale | d_k | rate tuned there: steps | rate from d_k = "
              f"{first}: steps |", "|---|---|---|---|---|"]
    lines += [f"| {_name(t['optimizer'])} | {t['scale']} | {t['d_k']} | {_lr(t['lr'])}: "
              f"{_steps_cell(t['tuned'])} | {_lr(t['lr_carried'])}: {_steps_cell(t['carried'])} |"
              for t in data["transfer"] if t["scale"] in ("1/sqrt(d_k)", "1/d_k")] + [""]
    lines += _paragraph(
        "Under Adam the rate of 1/d_k carries over, as muP claims, and that of 1/sqrt(d_k) "
        f"does not: its tuned rate falls from {lr('adam', '1/sqrt(d_k)', first)} to "
        f"{lr('adam', '1/sqrt(d_k)', last)}. Under SGD it is the other way round. A first-order "
        "count gives the pattern: an SGD step on W is the gradient, which carries one factor "
        "c, and a logit sums d_k such changes times c again, so it moves like lr c^2 d_k; an "
        "Adam step has a fixed size per weight, so the logit moves like lr c d_k. 1/sqrt(d_k) "
        "keeps the first fixed, 1/d_k the second. "
        "[docs/experiments.md](../docs/experiments.md) has every scale.")
    lines += ["### Isn't unscaled just a different initialisation?", ""]
    lines += _paragraph(
        "Yes, together with a different learning rate. For two scales c and c', let a = "
        "sqrt(c/c'): scale c' from weights a W computes exactly what scale c computes from "
        "W, and the training runs coincide when the SGD rate is multiplied by c/c', or "
        "Adam's rate by a and its eps divided by a (`learning.equivalent_run`; "
        "tests/test_learning.py checks every pair of the four scales, both optimizers, over "
        "20 steps at d_k = 16 and 256: bit-identical where a is a power of two; otherwise "
        "equal up to the rounding that training amplifies, within 1e-12 at a quarter of the "
        "tuned rate). Unscaled is 1/sqrt(d_k) started from d_k^(1/4) times larger weights "
        "(logits of standard deviation sqrt(d_k) instead of 1) at sqrt(d_k) times the SGD "
        "rate, or d_k^(1/4) times Adam's with its eps divided by d_k^(1/4). So the experiment "
        "compares initial logit scales, and with them effective rates, and gives each its "
        "own tuned rate.")
    slower = min(p["slower"] for p in data["paired"] if p["scale"] == "1")
    n = len(data["settings"]["seeds"])
    sgd_last = _row(data["table"], "sgd", "1", last)
    medians = [sgd_last["median"]] + sgd_last["perturbed_medians"]
    long = data["long"]
    missed, reached = sum(r["runs"] for r in long), sum(r["reached"] for r in long)
    lines += _paragraph(
        f"At its own rate, unscaled is still slower here: {steps('sgd', '1')} steps with SGD "
        f"and {steps('adam', '1')} with Adam, slower than 1/sqrt(d_k) in "
        f"{f'all {n}' if slower == n else f'at least {slower} of {n}'} paired seeds at every "
        f"d_k, for both optimizers. "
        f"It starts saturated: at d_k = {last} the largest weight is "
        f"{diag('1', last, 'largest_weight')} and the median ‖dL/dS‖ "
        f"{diag('1', last, 'gradient')}. Its step counts are partly rounding noise (*): "
        f"multiplying the initial weights by 1 + k 2^-52, k = 1..7, changes the steps of "
        f"{sgd_last['seeds_changed']} of the {sgd_last['n']} SGD seeds at d_k = {last} and "
        f"moves their median between {_s(min(medians, key=_rank))} and "
        f"{_s(max(medians, key=_rank))}. "
        f"Whether it catches up given enough steps was checked to {LONG} steps only: of the "
        f"{missed} runs that missed {MAX_STEPS} steps, {reached} reach {TARGET:.0%} by then.")
    return lines[:-1]


# ------------------------------------------------------------------- the command line

DEFAULT_SCALES = ("1/sqrt(d_k)", "1/d_k")  # the two cheap arms: --scales all adds two


def _progress_printer():
    start, tty, last = time.process_time(), sys.stderr.isatty(), [0.0]

    def progress(message: str) -> None:
        now = time.process_time() - start
        if tty:
            sys.stderr.write(f"\r[{now:6.1f} s CPU] {message[:90]:90}")
        elif now - last[0] >= 10.0:
            sys.stderr.write(f"[{now:6.1f} s CPU] {message}\n")
            last[0] = now
        sys.stderr.flush()
    return progress, start


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 experiments/learning.py",
        description="Train W_Q, W_K of one attention model on associative recall with each "
                    "logit scale at its own tuned rate; print steps to 90% held-out accuracy "
                    "with intervals, the model at initialisation and the pointer-loss control.")
    p.add_argument("--scales", metavar="NAME[,NAME...]|all",
                   help=f"the scales, from {', '.join(SCALES)}; or all (default: "
                        f"{','.join(DEFAULT_SCALES)}; all for --sweep)")
    p.add_argument("--optimizer", choices=OPTIMIZERS + ("both",), default="both")
    p.add_argument("--seeds", type=int, default=len(HELD_OUT_SEEDS),
                   help="how many held-out seeds, from 100 (default %(default)s)")
    p.add_argument("--dk", type=int, nargs="+", default=list(D_KS), metavar="D_K",
                   help="the d_k values (default %(default)s)")
    p.add_argument("--readout", choices=READOUTS, default="fixed",
                   help="fixed: cross-entropy of beta P V; pointer: -log p_j* (the control)")
    p.add_argument("--rates", default=RATES_FILE, metavar="PATH",
                   help="the tuned rates to read, or with --sweep to write (default: the "
                        "committed experiments/tuned_rates.json)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the steps table's runs to PATH, one record per run")
    p.add_argument("--transfer", action="store_true",
                   help="also run each arm at the rate tuned at the smallest d_k")
    p.add_argument("--logits", action="store_true",
                   help=f"also measure the logits at the first {TARGET:.0%}% and after step "
                        f"{LATE} (runs go on to step {LATE})")
    p.add_argument("--perturb", type=int, default=0, metavar="K",
                   help="also run with the initial weights times 1 + k 2^-52, k = 1..K (K <= 7)")
    p.add_argument("--long", action="store_true",
                   help=f"also run every miss again with a cap of {LONG} steps")
    p.add_argument("--sweep", action="store_true",
                   help="redo the rate search on seeds 0-4 for the chosen scales, optimizers "
                        "and d_k, and write it to --rates")
    p.add_argument("--publish", action="store_true",
                   help="everything, for all scales and both optimizers at the default d_k "
                        "and seeds; write experiments/results.json, which the docs are built "
                        "from")
    return p


def _scales(parser: argparse.ArgumentParser, text: Optional[str], sweep: bool) -> Tuple[str, ...]:
    if text is None:
        return SCALES if sweep else DEFAULT_SCALES
    names = SCALES if text == "all" else tuple(dict.fromkeys(text.split(",")))
    unknown = [n for n in names if n not in SCALES]
    if unknown:
        parser.error(f"--scales: unknown {', '.join(map(repr, unknown))}; choose from "
                     f"{', '.join(SCALES)}, or all (quote the names in a shell)")
    return tuple(s for s in SCALES if s in names)  # in the paper's order


def _settings(parser: argparse.ArgumentParser, args) -> Tuple[tuple, tuple, tuple, tuple]:
    """(scales, optimizers, d_ks, seeds) of the command, or a usage error."""
    if args.seeds < 1 or args.seeds > len(HELD_OUT_SEEDS) or min(args.dk) < 2:
        parser.error(f"--seeds takes 1 to {len(HELD_OUT_SEEDS)}, and --dk values of at "
                     "least 2 (1/ln(d_k) needs ln d_k > 0)")
    if not 0 <= args.perturb <= len(PERTURBATIONS):
        parser.error(f"--perturb takes 0 to {len(PERTURBATIONS)}")
    scales = _scales(parser, args.scales, args.sweep)
    optimizers = OPTIMIZERS if args.optimizer == "both" else (args.optimizer,)
    d_ks, seeds = tuple(dict.fromkeys(args.dk)), HELD_OUT_SEEDS[:args.seeds]
    if args.publish and ((d_ks, seeds, args.readout, os.path.abspath(args.rates),
                          args.optimizer) != (D_KS, HELD_OUT_SEEDS, "fixed", RATES_FILE, "both")
                         or args.scales not in (None, "all") or args.sweep):
        parser.error("--publish runs the committed settings only: all scales, both "
                     "optimizers, and the default --dk, --seeds, --readout and --rates")
    return (SCALES if args.publish else scales), optimizers, d_ks, seeds


def _sweep(parser: argparse.ArgumentParser, rates: str, arms: list, progress) -> None:
    """The rate search of the command line, written to rates (never partly to the
    committed file: a private file gathers its sweeps instead)."""
    committed = os.path.abspath(rates) == RATES_FILE
    if committed and arms != _default_arms():
        parser.error("a partial sweep would replace the committed rates file; write it "
                     "elsewhere with --rates PATH (then run with --rates PATH)")
    result = sweep(arms, TUNING_SEEDS, progress)
    if not committed and os.path.exists(rates):
        result["arms"] = {**_load(rates).get("arms", {}), **result["arms"]}
    _write_json(rates, result, sort_keys=True)
    for key, arm in result["arms"].items():
        print(f"{key:28} lr {_lr(arm['lr']):>9}  total steps {arm['total_steps']}")


def _write_json(path: str, value, sort_keys: bool = False) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, sort_keys=sort_keys)
        f.write("\n")


def _experiment(parser: argparse.ArgumentParser, args, scales, optimizers, d_ks, seeds,
                progress) -> None:
    """Run the measurements of the command, write what it asks for, print the report."""
    try:
        results = _measure(scales, optimizers, d_ks, seeds, args.readout, args.rates,
                           transfer=args.transfer or args.publish,
                           logits=args.logits or args.publish,
                           perturb=len(PERTURBATIONS) if args.publish else args.perturb,
                           long=args.long or args.publish, progress=progress)
    except ValueError as error:  # a rate that was never tuned, a missing file
        parser.error(str(error))
    if args.publish:
        _write_json(RESULTS_FILE, results)
    if args.json:
        _write_json(args.json, results["runs"])
    if sys.stderr.isatty():
        sys.stderr.write(f"\r{' ' * 110}\r")  # clear the progress line
    print("\n".join(_report(_tables(results))))


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Run the experiment from the command line; see `python3 experiments/learning.py -h`."""
    parser = _parser()
    args = parser.parse_args(argv)
    scales, optimizers, d_ks, seeds = _settings(parser, args)
    progress, start = _progress_printer()
    if args.sweep:
        _sweep(parser, args.rates, _default_arms(d_ks, scales, optimizers), progress)
    else:
        _experiment(parser, args, scales, optimizers, d_ks, seeds, progress)
    sys.stderr.write(f"CPU time {time.process_time() - start:.1f} s "
                     f"(Python {sys.version.split()[0]})\n")


if __name__ == "__main__":
    main()
