"""Tests for the training miniature: experiments/learning_model.py, learning_measure.py,
learning_tables.py and the command line learning.py.

- the arithmetic: the question's gradient bit for bit against attention_steps and
  score_gradient, the products against attention.matmul, the batch gradient against the
  textbook route through attention_backward and against central finite differences;
- the optimisers against their textbook forms; the general identity between scales;
- the pairing of arms, the streams, determinism, the variance at initialisation;
- the statistics (summaries, paired counts, the sign test, the published interval);
- every kind of record, recomputed on a small plan from the code (never from results.json),
  and the same for every --jobs;
- the committed rates and records against the code; the tables, the figure and the blocks;
- the command line.

The sentences of the prose that the data must bear out are in test_learning_claims.py.
Training runs of seconds are marked slow.
"""

import ast
import doctest
import heapq
import io
import json
import math
import os
import random
import statistics
import subprocess
import sys
import threading
import warnings
from fractions import Fraction

import pytest

import attention
import softmax
import stats
from experiments import learning as L
from experiments import learning_measure as LS
from experiments import learning_model as LM
from experiments import learning_tables as LT
from tests.helpers import assert_close
from attention import attention_backward, attention_steps, matmul, score_gradient, transpose
from softmax import log_softmax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = os.path.join(ROOT, "experiments")
SOURCES = sorted(os.path.join(EXPERIMENTS, f) for f in os.listdir(EXPERIMENTS)
                 if f.endswith(".py"))


def batch_of(task, count, seed=7):
    rng = random.Random(seed)
    return [LM.draw_question(task, rng) for _ in range(count)]


def table_of(task, params):
    return LM.logit_table(task, LM.logit_matrix_transposed(params))


def one_hot_values(question):
    return [[float(b == j) for j in range(LM.ITEMS)] for b in question.payloads]


# --------------------------------------------------------- the textbook route (oracle)

def textbook_gradients(params, batch, c, readout, per_question=False):
    """Mean loss and (dW_Q, dW_K) the long way: q = x_q W_Q, K = X W_K, attention_backward
    gives dQ and dK, then dW_Q = x_q^T dQ and dW_K = X^T dK.  The pointer loss -log p_j*
    goes through V = I (so O = P) and dL/dO = -e_j* / p_j*.  per_question: each question's
    dW_Q, dW_K divided by the norm |G_i| = c |x_q| |dS X| of its dL/dM, G_i = c x_q^T dS X."""
    losses, dW_Q, dW_K = [], [], []
    for e in batch:
        q, K = matmul([e.x_q], params[0]), matmul(e.X, params[1])
        if readout == "pointer":
            V = [[float(i == j) for j in range(LM.ITEMS)] for i in range(LM.ITEMS)]
            p = attention_steps(q, K, V, scale=c).output[0][e.j_star]
            dO = [[-1.0 / p if j == e.j_star else 0.0 for j in range(LM.ITEMS)]]
            losses.append(-math.log(p))
        else:
            V = one_hot_values(e)
            z = [LM.BETA * o for o in attention_steps(q, K, V, scale=c).output[0]]
            t = e.payloads[e.j_star]
            dO = [[LM.BETA * (p - (i == t)) for i, p in enumerate(softmax.softmax(z))]]
            losses.append(-log_softmax(z)[t])
        grads = attention_backward(q, K, V, dO, scale=c)
        weight = 1.0
        if per_question:
            dS = score_gradient(attention_steps(q, K, V, scale=c).weights, V, dO)[0]
            dS_X = matmul([dS], e.X)[0]
            weight = 1.0 / (c * math.sqrt(attention.dot(e.x_q, e.x_q) * attention.dot(
                dS_X, dS_X)))
        dW_Q.append([[weight * g for g in row] for row in matmul(transpose([e.x_q]), grads.dQ)])
        dW_K.append([[weight * g for g in row] for row in matmul(transpose(e.X), grads.dK)])

    def mean(As):
        return [[math.fsum(column) / len(As) for column in zip(*rows)] for rows in zip(*As)]
    return math.fsum(losses) / len(batch), (mean(dW_Q), mean(dW_K))


CASES = [(d_k, scale) for d_k in (4, 24) for scale in LM.SCALES]
CASE_IDS = [f"d_k={d}, c={s}" for d, s in CASES]


@pytest.mark.parametrize("readout", LM.READOUTS)
@pytest.mark.parametrize("d_k, scale", CASES, ids=CASE_IDS)
def test_the_question_gradient_is_attention_steps_and_score_gradient_bit_for_bit(d_k, scale,
                                                                                readout):
    # the fast path reads O = P V and dP = dO V^T off the one-hot V; the library sums them
    task, params = LM.make_task(2), LM.initial_weights(2, d_k, 3.0)
    arm, table = LM.model(scale, d_k, readout), table_of(task, params)
    for e in task.held_out[:20]:
        loss, dS, S, P = LM.question_gradient(LM.question_scores(table, e), e, arm)
        q = matmul([e.x_q], matmul(params[0], transpose(params[1])))  # x_q M: q' K'^T = q K^T
        steps = attention_steps(q, e.X, one_hot_values(e), scale=arm.c)
        assert (S, P) == (steps.scaled_scores[0], steps.weights[0])
        if readout == "pointer":
            assert loss == -log_softmax(S)[e.j_star]
            continue
        z, t = [LM.BETA * o for o in steps.output[0]], e.payloads[e.j_star]
        dO = [LM.BETA * (p - (i == t)) for i, p in enumerate(softmax.softmax(z))]
        assert loss == -log_softmax(z)[t]
        assert dS == score_gradient(steps.weights, one_hot_values(e), [dO])[0]


@pytest.mark.parametrize("readout", LM.READOUTS)
@pytest.mark.parametrize("d_k, scale", CASES, ids=CASE_IDS)
def test_fused_gradient_equals_the_textbook_route_through_attention_backward(d_k, scale,
                                                                             readout):
    task, params = LM.make_task(3), LM.initial_weights(3, d_k)
    batch, arm = batch_of(task, 5), LM.model(scale, d_k, readout)
    loss, grads = LM.loss_and_gradients(params, table_of(task, params), batch, arm)
    want_loss, want = textbook_gradients(params, batch, arm.c, readout)
    assert_close(loss, want_loss, rel=1e-13)
    for got, ref in zip(grads, want):  # different roundings of the same sums
        assert_close(got, ref, abs=1e-13 * max(abs(v) for row in ref for v in row))


@pytest.mark.parametrize("scale", ["1/sqrt(d_k)", "1"])
def test_the_per_question_gradient_is_the_mean_of_unit_question_gradients(scale):
    d_k = 24
    task, params = LM.make_task(4), LM.initial_weights(4, d_k, 2.0)
    batch, arm = batch_of(task, 6), LM.model(scale, d_k, "fixed", LM.PER_QUESTION)
    _, grads = LM.loss_and_gradients(params, table_of(task, params), batch, arm)
    _, want = textbook_gradients(params, batch, arm.c, "fixed", per_question=True)
    for got, ref in zip(grads, want):
        assert_close(got, ref, abs=1e-12 * max(abs(v) for row in ref for v in row))
    _, plain = LM.loss_and_gradients(params, table_of(task, params), batch,
                                     LM.model(scale, d_k, "fixed", "adam"))
    assert plain != grads  # the intervention changes the gradient
    # G_i / |G_i| does not depend on the length of x_q (G_i = c x_q^T (dS X)): a query
    # token of another length, with the same logits, gives the same step (the tokens of the
    # task are layer-normed, |x_q|^2 = d_model, so the task alone would not tell)
    longer = [q._replace(x_q=[f * x for x in q.x_q]) for q, f in zip(batch, (3, 0.5, 2, 1, 7, 4))]
    _, same = LM.loss_and_gradients(params, table_of(task, params), longer, arm)
    for got, ref in zip(same, grads):
        assert_close(got, ref, abs=1e-12 * max(abs(v) for row in ref for v in row))


@pytest.mark.parametrize("readout", LM.READOUTS)
@pytest.mark.parametrize("scale", ["1/sqrt(d_k)", "1"])
def test_fused_gradient_matches_central_finite_differences(scale, readout):
    d_k, h = 6, 1e-6
    task, params = LM.make_task(5), LM.initial_weights(5, d_k)
    batch, arm = batch_of(task, 3), LM.model(scale, d_k, readout)
    _, grads = LM.loss_and_gradients(params, table_of(task, params), batch, arm)

    def loss(P):
        return LM.loss_and_gradients(P, table_of(task, P), batch, arm)[0]
    rng = random.Random(0)
    for which in (0, 1):  # W_Q, then W_K
        for _ in range(5):
            a, b = rng.randrange(LM.D_MODEL), rng.randrange(d_k)
            plus, minus = ([[row[:] for row in W] for W in params] for _ in range(2))
            plus[which][a][b] += h
            minus[which][a][b] -= h
            fd = (loss(plus) - loss(minus)) / (2 * h)
            # truncation h^2 L''' / 6 and rounding eps L / h: both below 1e-8 here
            assert_close(grads[which][a][b], fd, abs=1e-7, rel=1e-6)


def test_pointer_gradient_is_the_softmax_backward_of_minus_e_over_p():
    # -log p_j through O = P: dL/dO = -e_j / p_j, and the Jacobian turns it into p - e_j
    task, params = LM.make_task(1), LM.initial_weights(1, 16)
    e = task.held_out[0]
    arm = LM.Model(0.25, "pointer", False, LM.dots)
    loss, dS, _, p = LM.question_gradient(LM.question_scores(table_of(task, params), e), e, arm)
    j = e.j_star
    identity = [[float(r == c) for c in range(LM.ITEMS)] for r in range(LM.ITEMS)]
    via_jacobian = score_gradient([p], identity, [[-1.0 / p[j] if i == j else 0.0
                                                   for i in range(LM.ITEMS)]])[0]
    assert_close(dS, via_jacobian, abs=1e-15)
    assert_close(loss, -math.log(p[j]), rel=1e-14)


# ------------------------------------------------------- the textbook backward (--backward)

def exact_backward(p, g):
    """p_i (g_i - sum_j p_j g_j) in Fractions: the exact product of the Jacobian."""
    inner = sum(Fraction(a) * Fraction(b) for a, b in zip(p, g))
    return [Fraction(a) * (Fraction(b) - inner) for a, b in zip(p, g)]


def test_the_textbook_backward_is_p_times_g_minus_its_mean_and_loses_a_saturated_gradient():
    # an easy case: both forms agree with the exact product to rounding
    p, g = [0.25, 0.5, 0.25], [1.0, -2.0, 3.0]
    exact = [float(v) for v in exact_backward(p, g)]
    assert LM.textbook_softmax_backward(p, g) == exact == softmax.softmax_backward(p, g)
    # a saturated softmax: p rounds to [1.0, 4e-18, ...], and <p, g> rounds to g at the
    # largest p.  The small entries p_j (g_j - <p, g>) survive in both forms; the largest
    # is minus their sum (the entries of dS sum to 0), which the library's keeps and the
    # textbook form loses to rounding
    S = [40.0, 0.0, 1.0, -3.0]
    p, g = softmax.softmax(S), [5.0, -1.0, 2.0, 0.5]
    textbook, library = LM.textbook_softmax_backward(p, g), softmax.softmax_backward(p, g)
    small = [float(v) for v in exact_backward(p, g)[1:]]
    assert_close(textbook[1:], small, rel=1e-15)
    assert_close(library[1:], small, rel=1e-15)
    largest = -math.fsum(small)
    assert_close(library[0], largest, rel=1e-15)
    assert textbook[0] == 0.0 != largest  # the largest entry: rounding noise


SATURATED = LS.Plan(scales=("1",), optimizers=("adam",), d_ks=(256,), seeds=(100,),
                    logits=True, perturb=1, per_question=True, max_steps=2, late=2)


def test_the_backward_option_reaches_the_model_the_runs_and_the_diagnostics():
    assert LM.model("1", 16).backward is softmax.softmax_backward
    assert LM.model("1", 16, backward="textbook").backward is LM.textbook_softmax_backward
    # unscaled at d_k = 256 saturates at once: the two forms train differently
    out = {b: LS.measure(SATURATED._replace(backward=b)) for b in LM.BACKWARDS}
    assert out["library"]["logits"] != out["textbook"]["logits"]
    assert out["textbook"]["settings"]["backward"] == "textbook"
    assert "backward" not in out["library"]["settings"]  # results.json stays as it was
    run = LM.train(100, 256, scale="1", optimizer="adam", lr=out["textbook"]["runs"][0]["lr"],
                   max_steps=2, late=2, backward="textbook")
    c = stats.scale_factor("1", 256)
    assert out["textbook"]["logits"][-1] == {**out["textbook"]["logits"][-1],
                                             **LS.logits(LM.make_task(100), run.at_late,
                                                         c)._asdict()}
    assert out["textbook"]["diagnostics"][0]["gradient"] == LS.seed_diagnostics(
        100, 256, "1", backward="textbook").gradient != LS.seed_diagnostics(100, 256, "1").gradient
    spec = LS.Spec(LM.PER_QUESTION, "1", 256, 100, 0.125, max_steps=3, backward="textbook")
    assert LS.outcome(spec)[0] == LM.train(100, 256, scale="1", optimizer=LM.PER_QUESTION,
                                           lr=0.125, max_steps=3,
                                           backward="textbook").steps_to_target


def test_a_sweep_and_a_record_made_with_the_textbook_backward_say_so(monkeypatch):
    heard = []

    def total(arm, lr, seeds, bound, backward):
        heard.append(backward)
        return 10 + abs(round(2 * math.log2(lr)) - LS.guess(arm[0], arm[2], arm[3]))
    monkeypatch.setattr(LS, "total_steps", total)
    arm = [("sgd", "fixed", "1", 16)]
    assert LS.sweep(arm, (0,), backward="textbook")["backward"] == "textbook"
    assert set(heard) == {"textbook"}
    assert "backward" not in LS.sweep(arm, (0,))  # the committed files stay as they were


@pytest.mark.parametrize("shape", [(1, 16, 8), (16, 16, 256), (8, 16, 64)],
                         ids=["1x16 by 16x8", "16x16 by 16x256", "8x16 by 16x64"])
def test_the_products_round_exactly_like_attention_matmul(shape):
    # the training loop's one core: the same math.fsum of the same products, bit for bit
    r, d, s = shape
    rng = random.Random(r * d * s)
    A = [[rng.gauss(0, 1) * 2.0 ** rng.randrange(-30, 30) for _ in range(d)] for _ in range(r)]
    B = [[rng.gauss(0, 1) for _ in range(s)] for _ in range(d)]
    assert LM.dots(A, transpose(B)) == matmul(A, B)
    params = LM.initial_weights(3, s)
    assert LM.logit_matrix_transposed(params) == transpose(matmul(params[0],
                                                                  transpose(params[1])))


def test_the_logit_table_is_every_query_against_every_key_token():
    task, params = LM.make_task(6), LM.initial_weights(6, 32)
    M = matmul(params[0], transpose(params[1]))
    tokens = [x for row in task.keys for x in row]
    assert table_of(task, params) == matmul(matmul(task.queries, M), transpose(tokens))


def test_naive_products_sum_left_to_right():
    rng = random.Random(9)
    A = [[rng.gauss(0, 1) * 10.0 ** rng.randrange(-8, 8) for _ in range(7)] for _ in range(3)]
    B = [[rng.gauss(0, 1) for _ in range(7)] for _ in range(4)]

    def left_to_right(a, b):
        total = a[0] * b[0]
        for x, y in zip(a[1:], b[1:]):
            total += x * y
        return total
    assert LM.naive_dots(A, B) == [[left_to_right(a, b) for b in B] for a in A]
    assert LM.naive_dots(A, B) != LM.dots(A, B)  # another rounding: the option can matter


# ------------------------------------------------------------------------ optimisers

def test_sgd_step_moves_each_weight_by_minus_lr_times_its_gradient():
    new, state = LM.sgd(0.5)(([[1.0, -2.0]], [[0.5]]), ([[0.25, 4.0]], [[-1.0]]), None, 1)
    assert new == ([[0.875, -4.0]], [[1.0]]) and state is None


def textbook_adam(w, gradients, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """Kingma and Ba, Algorithm 1, one scalar, the bias corrections written out."""
    m = v = 0.0
    for t, g in enumerate(gradients, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        w = w - lr * (m / (1 - beta1 ** t)) / (math.sqrt(v / (1 - beta2 ** t)) + eps)
    return w


def test_adam_agrees_with_the_textbook_form_with_explicit_bias_correction():
    rng = random.Random(2)
    sequence = [[[rng.gauss(0, 1) for _ in range(3)] for _ in range(2)] for _ in range(12)]
    start = [[0.3, -0.1, 2.0], [1.0, 0.0, -0.5]]
    params, step, state = (start,), LM.adam(0.01), None
    for t, g in enumerate(sequence, start=1):
        params, state = step(params, (g,), state, t)
    want = [[textbook_adam(start[r][c], [g[r][c] for g in sequence], 0.01) for c in range(3)]
            for r in range(2)]
    assert_close(params[0], want, abs=1e-15)  # the folded form rounds in another order


def test_the_intervention_trains_with_adam():
    assert LM.optimizer_step(LM.PER_QUESTION, 0.01).__qualname__.startswith("adam")
    assert LM.optimizer_step("sgd", 0.01).__qualname__.startswith("sgd")


# ------------------------------------------------------------ the general identity

PAIRS = [(a, b) for i, a in enumerate(LM.SCALES) for b in LM.SCALES[i + 1:]]


def power_of_two(x):
    return math.frexp(x)[0] == 0.5


def retrace(d_k, scale, to_scale, optimizer, lr, steps=20, seed=101):
    """A run of `scale` from W, and of `to_scale` from a W at the mapped rate and eps."""
    e = LM.equivalent_run(d_k, scale, to_scale, optimizer, lr)
    a = LM.train(seed, d_k, scale=scale, optimizer=optimizer, lr=lr, max_steps=steps,
                 stop_at_target=False)
    b = LM.train(seed, d_k, scale=to_scale, optimizer=optimizer, lr=e.lr, eps=e.eps,
                 init_factor=e.init_factor, max_steps=steps, stop_at_target=False)
    return e, a, b


def gap(a, b, factor=1.0):
    """The largest relative difference of the losses, and of the final weights (b's divided
    by factor) relative to the largest weight."""
    weights = max(abs(w_b / factor - w_a) / max(abs(v) for row in W_a for v in row)
                  for W_a, W_b in zip(a.final, b.final) for r_a, r_b in zip(W_a, W_b)
                  for w_a, w_b in zip(r_a, r_b))
    return max(weights, max(abs(x - y) / abs(x) for x, y in zip(a.losses, b.losses)))


def assert_bit_identical(e, a, b, steps=20):
    assert power_of_two(e.init_factor)  # every rounding of one run is the other's times a^k
    assert len(a.losses) == len(b.losses) == steps and a.accuracies == b.accuracies
    assert a.losses == b.losses
    assert list(a.final) == [[[w / e.init_factor for w in row] for row in W] for W in b.final]


@pytest.mark.parametrize("optimizer", LM.OPTIMIZERS)
def test_scaled_and_unscaled_retrace_each_other_at_d_k_16(optimizer):
    # the fast case: the paper's two arms, a = 1/2, bit for bit over 10 steps (the slow tests
    # below run every pair over 20)
    lr = LS.tuned_rate(optimizer, "1/sqrt(d_k)", 16)
    assert_bit_identical(*retrace(16, "1/sqrt(d_k)", "1", optimizer, lr, steps=10), steps=10)


IDENTITY_CASES = [(s, t, o, d_k) for s, t in PAIRS for o in LM.OPTIMIZERS for d_k in (16, 256)]
IDENTITY_IDS = [f"{s} to {t}, {o}, d_k={d_k}" for s, t, o, d_k in IDENTITY_CASES]


@pytest.mark.slow
@pytest.mark.parametrize("scale, to_scale, optimizer, d_k", IDENTITY_CASES, ids=IDENTITY_IDS)
def test_any_two_scales_retrace_each_other_under_the_rate_and_eps_mapping(scale, to_scale,
                                                                           optimizer, d_k):
    # 20 steps from the source arm's tuned rate.  Where a = sqrt(c / c') is a power of two
    # (every pair but those with 1/ln(d_k)) the runs are bit-identical.  Where it is not, the
    # two runs start a rounding apart, and training amplifies rounding: at a quarter of the
    # tuned rate they agree within 1e-12; at the tuned rate itself the gap stays within 10
    # times the gap between the source run and itself started from weights one ulp larger.
    lr = LS.tuned_rate(optimizer, scale, d_k)
    e, a, b = retrace(d_k, scale, to_scale, optimizer, lr)
    assert len(a.losses) == len(b.losses) == 20 and a.accuracies == b.accuracies
    if power_of_two(e.init_factor):
        assert_bit_identical(e, a, b)
        return
    assert gap(*retrace(d_k, scale, to_scale, optimizer, lr / 4)[1:], e.init_factor) <= 1e-12
    ulp = LM.train(101, d_k, scale=scale, optimizer=optimizer, lr=lr, max_steps=20,
                   stop_at_target=False, init_factor=1 + 2.0 ** -52)
    assert gap(a, b, e.init_factor) <= max(10 * gap(a, ulp), 1e-14)


def test_the_identity_needs_the_rate_mapping():
    # the control: the rescaled start at the same rate is another run after one step
    _, a, b = retrace(16, "1/sqrt(d_k)", "1", "sgd", 1.0, steps=3)
    unmapped = LM.train(101, 16, scale="1", optimizer="sgd", lr=1.0, init_factor=0.5,
                        max_steps=3, stop_at_target=False)
    assert unmapped.losses[0] == a.losses[0] == b.losses[0]  # the same function at the start
    assert unmapped.losses[1:] != a.losses[1:]


@pytest.mark.parametrize("d_k", [16, 64, 256], ids=lambda d: f"d_k={d}")
def test_the_old_unscaled_identity_is_the_case_c_prime_equal_1(d_k):
    # "unscaled from W is scaled from d_k^(1/4) W, SGD at sqrt(d_k) times the rate, Adam at
    # d_k^(1/4) times the rate with eps divided by d_k^(1/4)"
    root = d_k ** 0.25
    sgd = LM.equivalent_run(d_k, "1", "1/sqrt(d_k)", "sgd", 0.1)
    adam = LM.equivalent_run(d_k, "1", "1/sqrt(d_k)", "adam", 0.01, eps=1e-8)
    assert_close([sgd.init_factor, sgd.lr, adam.lr, adam.eps],
                 [root, 0.1 * math.sqrt(d_k), 0.01 * root, 1e-8 / root], rel=1e-15)


# ------------------------------------------------- the pairing, streams, determinism

def first_steps(monkeypatch, seed, d_k, scale):
    """The first batch and the weights that the training code hands to the gradient."""
    seen = []
    original = LM.loss_and_gradients

    def spy(params, table, batch, arm):
        seen.append(([list(map(list, W)) for W in params], list(batch)))
        return original(params, table, batch, arm)
    monkeypatch.setattr(LM, "loss_and_gradients", spy)
    LM.train(seed, d_k, scale=scale, optimizer="sgd", lr=0.5, max_steps=1, stop_at_target=False)
    monkeypatch.undo()
    return seen[0]


def test_every_arm_of_a_seed_gets_the_same_first_batch_and_initial_weights(monkeypatch):
    # through train(): the scale changes neither the questions nor the starting weights
    runs = [first_steps(monkeypatch, 100, 16, s) for s in LM.SCALES]
    assert all(run == runs[0] for run in runs[1:])
    other_seed = first_steps(monkeypatch, 101, 16, LM.SCALES[0])
    other_d_k = first_steps(monkeypatch, 100, 32, LM.SCALES[0])
    assert other_seed[0] != runs[0][0] and other_seed[1] != runs[0][1]  # the test can fail
    assert other_d_k[1] == runs[0][1] and len(other_d_k[0][0][0]) == 32  # same questions


def test_held_out_questions_differ_from_the_training_stream():
    task = LM.make_task(100)
    stream = random.Random("learning:train:100")

    def key(e):
        return tuple(e.ids), tuple(e.payloads), e.j_star
    train = {key(LM.draw_question(task, stream)) for _ in range(300)}
    held = {key(e) for e in task.held_out}
    assert len(held) == LM.HELD_OUT and not train & held


def test_the_same_seed_gives_the_same_run_and_another_seed_does_not():
    def run(seed):
        return LM.train(seed, 64, scale="1", optimizer="adam", lr=0.01, max_steps=4,
                        stop_at_target=False)
    assert run(104) == run(104) and run(104).losses != run(105).losses
    assert LM.make_task(3) == LM.make_task(3) != LM.make_task(4)


def test_unscaled_logit_variance_is_d_k_even_though_d_k_exceeds_d_model():
    # With |x|^2 = |y|^2 = d_model and W entries N(0, 1/d_model), x W_Q W_K^T y^T is a sum of
    # d_k products a_c b_c of independent N(0, 1): E S^2 = d_k, Var S^2 = 2 d_k^2 + 6 d_k,
    # whatever the rank (<= d_model) of W_Q W_K^T.  The mean of S^2 / d_k over N draws has
    # standard error sqrt((2 + 6 / d_k) / N); the test allows 4 of them.
    d_k, N = 32, 200
    task = LM.make_task(0)
    x, y = task.queries[2], task.keys[5][1]
    ratios = []
    for seed in range(N):
        W_Q, W_K = LM.initial_weights(1000 + seed, d_k)
        S = matmul(matmul([x], matmul(W_Q, transpose(W_K))), [[v] for v in y])
        ratios.append(S[0][0] ** 2 / d_k)
    assert_close(stats.mean(ratios), 1.0, abs=4 * math.sqrt((2 + 6 / d_k) / N))


def test_a_run_whose_weights_blow_up_stops_and_counts_as_a_miss():
    run = LM.train(100, 16, scale="1", optimizer="sgd", lr=1e30, max_steps=50)
    assert run.steps_to_target is None
    assert len(run.losses) < 50 and len(run.accuracies) == len(run.losses) + 1
    assert all(math.isfinite(v) for v in run.losses)  # never a silent NaN


def test_the_late_weights_are_the_initial_ones_at_step_0_and_none_for_a_run_that_stops_first():
    start = LM.initial_weights(100, 16)
    assert LM.train(100, 16, scale="1", optimizer="sgd", lr=0.1, max_steps=0).at_late == start
    cut = LM.train(100, 16, scale="1", optimizer="sgd", lr=0.1, max_steps=3, late=5,
                   stop_at_target=False)
    assert cut.at_late is None and cut.at_target is None


def test_a_run_that_starts_at_the_target_stops_before_any_step(monkeypatch):
    # with TARGET 0, the initial weights already count as learned: step 0, no training
    monkeypatch.setattr(LM, "TARGET", 0.0)
    run = LM.train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=1.0)
    start = LM.initial_weights(100, 16)
    assert run.steps_to_target == 0 and run.losses == [] and len(run.accuracies) == 1
    assert run.at_target == run.final == start


@pytest.mark.parametrize("target, step", [(0.15, 0), (0.26, 1)])
def test_an_accuracy_exactly_at_the_target_counts_as_reaching_it(monkeypatch, target, step):
    # this run's held-out accuracies are 0.15, 0.26, 0.23, 0.26: with TARGET set to one of
    # them exactly, the weights of its first step are the ones kept "at the target"
    monkeypatch.setattr(LM, "TARGET", target)
    run = LM.train(100, 16, scale="1", optimizer="sgd", lr=0.125, max_steps=3,
                   stop_at_target=False)
    assert run.accuracies == [0.15, 0.26, 0.23, 0.26] and run.steps_to_target == step
    at_step = LM.train(100, 16, scale="1", optimizer="sgd", lr=0.125, max_steps=step)
    assert run.at_target == at_step.final


def test_a_weight_of_1e20_or_more_is_a_diverged_run():
    below = math.nextafter(1e20, 0.0)
    assert not LM._diverged(([[below, -below]], [[0.0]]))
    for w in (1e20, -1e20, 1.5e20, math.inf, math.nan):
        assert LM._diverged(([[0.0, w]], [[0.0]])), w


def test_the_summation_of_a_model_is_the_one_named():
    assert LM.model("1", 16).dots is LM.dots
    assert LM.model("1", 16, summation="fsum").dots is LM.dots
    assert LM.model("1", 16, summation="naive").dots is LM.naive_dots


def test_a_run_goes_on_to_step_late_and_keeps_the_weights_of_both_steps():
    short = LM.train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=1.0)
    long = LM.train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=1.0, late=12)
    assert long.steps_to_target == short.steps_to_target < 12 == len(long.losses)
    assert long.at_target == short.at_target == short.final and long.at_late == long.final


def test_left_to_right_sums_give_another_rounding_of_the_same_run():
    def run(summation):
        return LM.train(100, 64, scale="1", optimizer="adam", lr=0.011, max_steps=5,
                        stop_at_target=False, summation=summation)
    fsum, naive = run("fsum"), run("naive")
    assert fsum.final != naive.final  # the option reaches the arithmetic
    assert_close(naive.losses, fsum.losses, rel=1e-9)  # and changes only its rounding


# ------------------------------------------------------------------------ statistics

def test_summary_ranks_a_miss_above_every_number_and_keeps_the_order_statistic_interval():
    steps = [6, 9, 5, 7, None, 8, 6, 10, 9, None]
    s = LS.summarise(steps)
    m = stats.median_interval([v if v is not None else 1e9 for v in steps])
    assert (s.median, s.low, s.coverage, s.misses, s.n) == (8.5, m.low, m.coverage, 2, 10)
    assert s.high is None  # x_(9) is a miss
    assert LS.summarise([1, None, None]).median is None


def test_ten_seeds_give_the_2nd_and_9th_values_with_coverage_1002_in_1024():
    # P(2 <= B <= 8), B ~ Binomial(10, 1/2): exactly 1002/1024 = 97.8515625%, printed
    # rounded down, since it is a lower bound (ties among step counts can only raise it)
    m = stats.median_interval([float(v) for v in range(10)])
    assert (m.low, m.high) == (1.0, 8.0)
    assert LS.coverage(10) == Fraction(sum(math.comb(10, k) for k in range(2, 9)), 2 ** 10) == (
        Fraction(1002, 1024))
    assert LS.coverage_text([10] * 24) == "97.85% over 10 seeds"


@pytest.mark.parametrize("n, low, want", [(9, 2, Fraction(492, 512)), (8, 1, Fraction(254, 256)),
                                          (5, 1, Fraction(30, 32)), (1, 1, Fraction(0)),
                                          (40, 14, None)])
def test_the_coverage_of_n_seeds_is_the_binomial_sum_between_the_interval_s_ranks(n, low, want):
    # the ranks l of stats.median_interval, and P(l <= B <= n - l) summed here by hand: 9
    # seeds keep the 2nd and 8th (1 - 2 (1 + 9) / 512); 8 seeds need the 1st and 8th, since
    # the 2nd and 7th cover 238/256 < 95%; 40 seeds: the 14th and 27th
    m = stats.median_interval([float(v) for v in range(n)])
    assert (m.low, m.high) == (low - 1, n - low)
    tail = Fraction(sum(math.comb(n, k) for k in range(low)), 2 ** n)
    assert LS.coverage(n) == (want if want is not None else 1 - 2 * tail)
    assert LS.coverage(n) >= Fraction(95, 100) or n < 6


@pytest.mark.parametrize("ns, want", [([10, 9, 8, 5], "97.85% over 10 seeds, 96.09% over 9, "
                                                      "99.21% over 8, 93.75% over 5"),
                                      ([9, 10, 9], "97.85% over 10 seeds, 96.09% over 9")])
def test_coverages_are_listed_by_seeds_and_rounded_down(ns, want):
    # 1002/1024 = 97.8515625%, 492/512 = 96.09375%, 254/256 = 99.21875%: never rounded up
    assert LS.coverage_text(ns) == want


@pytest.mark.parametrize("slower, faster, want", [(10, 0, Fraction(2, 2 ** 10)),
                                                  (22, 0, Fraction(2, 2 ** 22)),
                                                  (8, 2, Fraction(2 * 56, 2 ** 10)),
                                                  (5, 5, Fraction(1))])
def test_the_sign_test_is_the_two_sided_binomial_tail(slower, faster, want):
    # the tail summed by hand: 2 P(B <= min), with C(10, 0..2) = 1 + 10 + 45 = 56
    counts = {"slower": slower, "faster": faster, "tied": 3, "both missed": 1}
    assert LS.sign_test(counts) == float(min(want, 1))


def test_paired_counts_a_miss_as_slower_and_a_double_miss_as_nothing():
    assert LS.paired([None, 5, None, 4, 7], [None, None, 3, 4, 9]) == {
        "slower": 2, "faster": 1, "tied": 1, "both missed": 1}
    assert LS.paired([3], [2]) == {"slower": 0, "faster": 1, "tied": 0, "both missed": 0}


@pytest.mark.parametrize("args, want", [((8.49, 4.89, 18.5), "8 [4, 19]"),
                                        ((0.7, 0.65, 0.75), "0.70 [0.65, 0.75]"),
                                        ((2.0, 1.0, 2.0), "2.0 [1.0, 2.0]"),
                                        ((5.0, 4.0, None), "5.0 [4.0, inf]"),
                                        ((-0.004, -0.01, 0.03), "0.00 [-0.01, 0.03]"),
                                        ((5.0, 4.0, 7.0), "5 [4, 7]")])
def test_interval_ends_round_outward_and_the_median_to_nearest(args, want):
    # the width decides the decimals: its first digit, and a second one only below 3 (a
    # width of exactly 3 keeps whole numbers)
    assert LT.fmt(*args) == want


# ------------------------------------------------------------------ the rate search

@pytest.mark.parametrize("offset, first, last", [(11, -6, 14), (-11, -14, 6)],
                         ids=["above the grid", "below the grid"])
def test_the_grid_search_scores_every_rate_and_widens_until_the_winner_is_inside(
        monkeypatch, offset, first, last):
    # a fake score with its minimum 11 half-octaves from the guess g, outside the first grid
    # g - 6 .. g + 6, and a tie with the rate above it: the smaller rate wins.  The grid
    # widens by 4 on the winner's side, twice (the winner is at the end after the first
    # time): to g + 14 above, to g - 14 below
    g = LS.guess("sgd", "1", 16)
    best, scored = g + offset, []

    def total(arm, lr, seeds, bound, backward):
        assert backward == "library"  # the default: softmax.softmax_backward
        k = round(2 * math.log2(lr))
        scored.append(k)
        score = 10 + abs(k - best) - (k == best + 1)
        return score if score <= bound else None
    monkeypatch.setattr(LS, "total_steps", total)
    arm = LS.sweep([("sgd", "fixed", "1", 16)], (0,))["arms"]["sgd fixed 1 16"]
    ks = [round(2 * math.log2(lr)) for lr in arm["grid"]]
    assert ks == list(range(g + first, g + last + 1)) and len(arm["totals"]) == len(ks)
    assert sorted(scored) == ks  # each rate of the grid scored once
    assert arm["lr"] == LS.rate(best) and arm["total_steps"] == 10  # the tie to the smaller


def test_a_sweep_runs_in_this_process_the_longest_arm_first_and_weighs_the_time_left(
        monkeypatch):
    # an arm's expected cost: the steps of its stored tuning ('>N' counts N), or of a first
    # grid of 13 misses if it has none, times d_k + 50.  The longest arm runs first; after
    # each, the time left is elapsed * (the cost left / the cost done)
    arms = [("sgd", "fixed", "1/sqrt(d_k)", 16), ("sgd", "fixed", "1/sqrt(d_k)", 256),
            ("sgd", "fixed", "1/sqrt(d_k)", 32)]  # d_k = 32: never tuned
    stored = LS.load(LS.RATES_FILE)["arms"]
    assert LS.arm_key(arms[2]) not in stored
    cost = [sum(int(str(t).lstrip(">")) for t in stored[LS.arm_key(arm)]["totals"].values())
            * (arm[3] + 50) for arm in arms[:2]] + [13 * LS.MISS * (32 + 50)]
    assert cost[2] > cost[1] > cost[0] > 0
    pids, d_ks = [], []

    def total(arm, lr, seeds, bound, backward):  # a fake score, best at the arm's guess
        pids.append(os.getpid())
        d_ks.append(arm[3])
        return 10 + abs(round(2 * math.log2(lr)) - LS.guess(arm[0], arm[2], arm[3]))
    monkeypatch.setattr(LS, "total_steps", total)
    clock = iter([1000.0, 1100.0, 1130.0, 1140.0])  # the start, then after each arm
    monkeypatch.setattr(LS.time, "monotonic", lambda: next(clock))
    heard = []
    LS.sweep(arms, (0,), progress=heard.append)
    assert set(pids) == {os.getpid()}  # jobs=1: in this process
    assert list(dict.fromkeys(d_ks)) == [32, 256, 16]  # the longest first
    left = 100 * (cost[0] + cost[1]) / cost[2]
    assert left < 120 and heard[0] == f"arms: 1 of 3 done, about {left:.0f} s left"


def test_the_scales_are_the_library_s_scale_choices():
    assert sorted(LM.SCALES) == sorted(stats.SCALE_CHOICES) and LM.SCALES[0] == "1/sqrt(d_k)"


def test_the_rate_ladder_is_exact():
    assert [LS.rate(k) for k in (-3, -2, 0, 1, 4)] == [
        math.sqrt(2.0) / 4, 0.5, 1.0, math.sqrt(2.0), 4.0]


ARM = ("sgd", "fixed", "1/sqrt(d_k)", 16)  # a cheap arm of the stored sweep


def stored_totals(arm):
    entry = LS.load(LS.RATES_FILE)["arms"][LS.arm_key(arm)]
    return entry, {float(lr): total for lr, total in entry["totals"].items()}


def test_the_stored_totals_around_the_winner_are_what_the_code_computes():
    # recomputed from the training code: the winner's total, and each neighbour's (a number,
    # or a cut-short '>N', which must exceed N when scored without a bound)
    entry, totals = stored_totals(ARM)
    k = round(2 * math.log2(entry["lr"]))
    for lr in (LS.rate(k - 1), LS.rate(k), LS.rate(k + 1)):
        total = LS.total_steps(ARM, lr, LS.TUNING_SEEDS, math.inf)
        if isinstance(totals[lr], int):
            assert total == totals[lr], lr
        else:
            assert total > int(totals[lr][1:]), lr
    assert totals[entry["lr"]] == entry["total_steps"]
    best = entry["total_steps"]  # a total equal to the bound is kept, one above it is cut
    assert LS.total_steps(ARM, entry["lr"], LS.TUNING_SEEDS, best) == best
    assert LS.total_steps(ARM, entry["lr"], LS.TUNING_SEEDS, best - 1) is None


@pytest.mark.slow
@pytest.mark.parametrize("arm", [ARM, ("adam", "pointer", "1", 64)], ids=LS.arm_key)
def test_a_sweep_of_one_arm_reproduces_its_stored_entry(arm):
    assert LS.sweep([arm])["arms"][LS.arm_key(arm)] == stored_totals(arm)[0]


# ------------------------------------------ every kind of record, from the code alone

SMALL = LS.Plan(scales=("1/sqrt(d_k)", "1"), optimizers=("sgd", "adam"), d_ks=(16,),
                seeds=(100, 101), logits=True, perturb=2, long=True, summation=True,
                per_question=True, max_steps=12, late=8)


@pytest.fixture(scope="module")
def small():
    return LS.measure(SMALL)


def direct(spec, **changes):
    """The run of a record, trained here: train() with the record's arguments."""
    fields = {**spec, **changes}
    return LM.train(fields["seed"], fields["d_k"], scale=fields["scale"],
                    optimizer=fields["optimizer"], lr=fields["lr"],
                    readout=fields.get("readout", "fixed"),
                    max_steps=fields.get("max_steps", SMALL.max_steps),
                    init_factor=fields.get("init_factor", 1.0),
                    summation=fields.get("summation", "fsum"), late=fields.get("late", 0))


def test_the_small_plan_runs_every_arm_at_its_tuned_rate_with_the_short_cap(small):
    arms = [(o, s, 16, seed) for o in SMALL.optimizers for s in SMALL.scales
            for seed in SMALL.seeds]
    assert [(r["optimizer"], r["scale"], r["d_k"], r["seed"]) for r in small["runs"]] == arms
    for r in small["runs"]:
        assert r["lr"] == LS.tuned_rate(r["optimizer"], r["scale"], 16)
        assert r["steps"] == direct(r).steps_to_target
    assert any(r["steps"] is None for r in small["runs"])  # the cap of 12 bites


def exact_logits(task, params, c):
    """The Logits the slow way: exact Fraction dot products, statistics.median."""
    W_Q, W_K = ([[Fraction(w) for w in row] for row in W] for W in params)

    def project(x, W):
        return [sum(Fraction(a) * w for a, w in zip(x, column)) for column in zip(*W)]
    matched, spread, cos = [], [], []
    for e in task.held_out:
        q, K = project(e.x_q, W_Q), [project(x, W_K) for x in e.X]
        s = [float(sum(a * b for a, b in zip(q, k))) for k in K]
        others = [v for j, v in enumerate(s) if j != e.j_star]
        matched.append(s[e.j_star])
        spread.append(c * statistics.pstdev(others))
        norms = [math.sqrt(float(sum(a * a for a in v))) for v in (q, K[e.j_star])]
        cos.append(s[e.j_star] / (norms[0] * norms[1]))
    m = statistics.median(matched)
    return [m, c * m, statistics.median(spread), statistics.median(cos)]


def test_the_logit_records_are_the_logits_of_the_trained_weights(small):
    records = [r for r in small["logits"] if r["seed"] == 100 and r["optimizer"] == "sgd"]
    assert [(r["scale"], r["at"]) for r in records] == [("1/sqrt(d_k)", "target"),
                                                       ("1/sqrt(d_k)", "late"), ("1", "late")]
    for r in records:
        run = direct({**r, "lr": LS.tuned_rate("sgd", r["scale"], 16)}, late=SMALL.late)
        params = run.at_target if r["at"] == "target" else run.at_late
        want = exact_logits(LM.make_task(100), params, stats.scale_factor(r["scale"], 16))
        assert r["step"] == (run.steps_to_target if r["at"] == "target" else SMALL.late)
        assert_close([r[f] for f in LS.Logits._fields], want, rel=1e-12)


def test_the_perturbed_naive_and_intervention_records_are_their_own_runs(small):
    for k in ("1", "2"):
        for r in small["perturbed"][k]:
            assert r["steps"] == direct(r, init_factor=1 + int(k) * 2.0 ** -52).steps_to_target
    for r in small["naive"]:
        assert r["steps"] == direct(r, summation="naive").steps_to_target
    assert [(r["optimizer"], r["scale"]) for r in small["per_question"][::2]] == [
        (LM.PER_QUESTION, "1/sqrt(d_k)"), (LM.PER_QUESTION, "1")]
    for r in small["per_question"]:
        assert r["lr"] == LS.tuned_rate(LM.PER_QUESTION, r["scale"], 16)
        assert r["steps"] == direct(r).steps_to_target


def test_the_long_records_are_the_misses_run_again_to_the_long_cap(small):
    misses = [r for r in small["runs"] if r["steps"] is None]
    assert [{**r, "steps": None} for r in small["long"]] == misses
    for r in small["long"]:
        assert r["steps"] == direct(r, max_steps=LS.LONG).steps_to_target


def test_the_pointer_and_diagnostics_records_are_their_own_computations(small):
    for r in small["pointer"]:
        lr = LS.tuned_rate("sgd", r["scale"], 16, "pointer")
        assert r["lr"] == lr and r["steps"] == direct(r, readout="pointer").steps_to_target
    d = small["diagnostics"][0]
    task, params = LM.make_task(d["seed"]), LM.initial_weights(d["seed"], 16)
    c = stats.scale_factor(d["scale"], 16)
    logits, largest, gradients, G = [], [], [], []
    for e in task.held_out:  # the library's own forward and backward pass
        V = one_hot_values(e)
        steps = attention_steps(matmul([e.x_q], params[0]), matmul(e.X, params[1]), V, scale=c)
        logits += steps.scaled_scores[0]
        largest.append(max(steps.weights[0]))
        t = e.payloads[e.j_star]  # the fixed readout: dL/dO = beta (softmax(beta O) - e_t)
        dO = [LM.BETA * (p - (i == t))
              for i, p in enumerate(softmax.softmax([LM.BETA * o for o in steps.output[0]]))]
        dS = score_gradient(steps.weights, V, [dO])[0]
        gradients.append(math.sqrt(attention.dot(dS, dS)))
        dS_X = matmul([dS], e.X)[0]  # |G_i| = c |x_q| |dS X|, G_i = c x_q^T dS X
        G.append(c * math.sqrt(attention.dot(e.x_q, e.x_q) * attention.dot(dS_X, dS_X)))
    top = heapq.nlargest(len(G) // 10, G)  # the tenth of the questions with the largest |G_i|
    assert SMALL.readout == "fixed"  # the loss of dO above
    assert_close([d["logit_std"], d["largest_weight"], d["gradient"], d["tail_share"]],
                 [statistics.pstdev(logits), statistics.median(largest),
                  statistics.median(gradients), math.fsum(top) / math.fsum(G)], rel=1e-12)


def test_the_transfer_and_mup_records_run_the_smallest_d_k_s_rate():
    plan = LS.Plan(("1/d_k",), ("sgd",), (16, 64), (100, 101), transfer=True, max_steps=20)
    out = LS.measure(plan)
    lr = LS.tuned_rate("sgd", "1/d_k", 16)
    assert [r["lr"] for r in out["transfer"]] == [lr, lr]
    assert [r["lr"] for r in out["mup"]] == [lr * 4, lr * 4]  # muP's rule: d_k / 16
    for r in out["transfer"] + out["mup"]:
        assert r["d_k"] == 64 and r["steps"] == direct(r, max_steps=20).steps_to_target


def test_a_plan_measures_only_the_runs_and_diagnostics_unless_asked_for_more():
    # every other measurement is off by default (the command line passes each one): with a
    # cap of 2 steps both runs miss, so a default of `long` would run them again; with a cap
    # of 30 the run at d_k = 16 learns, so a default of `logits` would measure it
    extras = ["logits", "pointer", "transfer", "transfer_logits", "mup", "perturbed", "naive",
              "per_question", "long"]
    missed = LS.measure(LS.Plan(("1/sqrt(d_k)",), ("sgd",), (16, 64), (100,), max_steps=2))
    assert [(r["d_k"], r["steps"]) for r in missed["runs"]] == [(16, None), (64, None)]
    learned = LS.measure(LS.Plan(("1/sqrt(d_k)",), ("sgd",), (16,), (100,), max_steps=30))
    assert learned["runs"][0]["steps"] is not None
    for out in (missed, learned):
        assert len(out["diagnostics"]) == len(out["runs"])
        assert [name for name in extras if out[name]] == []


def test_mup_s_rule_scales_any_rate_by_d_k_over_the_smallest(tmp_path):
    # the stored rate at d_k = 16 is 4, whose d_k / 16 multiples are whole; sqrt(2) is not
    arms = {LS.arm_key(("sgd", "fixed", "1/d_k", d_k)): {"lr": math.sqrt(2.0)}
            for d_k in (16, 64)}
    path = tmp_path / "rates.json"
    path.write_text(json.dumps({"arms": arms}), encoding="utf-8")
    plan = LS.Plan(("1/d_k",), ("sgd",), (16, 64), (100,), rates=str(path), transfer=True,
                   max_steps=1)
    assert [r["lr"] for r in LS.measure(plan)["mup"]] == [math.sqrt(2.0) * 4]


def test_the_records_are_the_same_for_every_number_of_jobs(small):
    assert LS.measure(SMALL, jobs=2) == small


def test_the_command_prints_and_writes_the_same_bytes_for_every_number_of_jobs(
        tmp_path, capsys):
    said = []
    for jobs in ("1", "2"):
        path = tmp_path / f"runs-{jobs}.json"
        assert L.main(["--dk", "16", "--seeds", "2", "--scales", "1/sqrt(d_k),1",
                       "--optimizer", "sgd", "--jobs", jobs, "--json", str(path)]) == 0
        said.append((capsys.readouterr().out, path.read_bytes()))
    assert said[0] == said[1] and "== pointer-loss control" in said[0][0]


def test_the_pool_starts_fresh_interpreters_and_never_forks_this_process(monkeypatch):
    # A fork of a process that holds threads may deadlock, and Python 3.12 warns of it
    # (DeprecationWarning): the workers are started by "spawn", never by os.fork, with a
    # thread running here as pytest's and a pool's threads may be.
    def fork():
        raise AssertionError("the pool forked this process")
    monkeypatch.setattr(os, "fork", fork)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            assert LS.run_all(abs, [-1, 2, -3], jobs=2) == [1, 2, 3]
    finally:
        stop.set()
        thread.join()
    assert [w for w in heard if issubclass(w.category, DeprecationWarning)] == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_in_the_runs_says_how_many_were_done(jobs):
    # Ctrl-C reaches this process while it waits for the next result (the workers ignore
    # it): here, while it hears of the second
    def progress(message):
        if message.startswith("arms: 2 of 5 done"):
            raise KeyboardInterrupt
    with pytest.raises(LS.Interrupted) as stop:
        LS.run_all(abs, [1, 2, 3, 4, 5], jobs=jobs, progress=progress, label="arms")
    assert isinstance(stop.value, KeyboardInterrupt) and str(stop.value) == "2 of 5 arms"




def test_the_progress_estimate_counts_every_item():
    heard = []
    assert LS.run_all(abs, [-1, 2, -3], progress=heard.append, label="x") == [1, 2, 3]
    assert [h.split(",")[0] for h in heard] == ["x: 1 of 3 done", "x: 2 of 3 done",
                                                "x: 3 of 3 done"]
    assert heard[-1].endswith("about 0 s left")


# ------------------------------------------------- the committed rates and records

def test_stored_rates_are_a_full_grid_search_with_every_winner_inside_its_grid():
    stored = LS.load(LS.RATES_FILE)
    assert stored["seeds"] == list(LS.TUNING_SEEDS) and stored["rule"] == LS.SWEEP_RULE
    assert not set(stored["seeds"]) & set(LS.HELD_OUT_SEEDS)  # tuned and judged apart
    assert sorted(stored["arms"]) == sorted(map(LS.arm_key, LS.default_arms()))
    for key, arm in stored["arms"].items():
        grid = arm["grid"]
        assert sorted(arm["totals"], key=float) == [repr(lr) for lr in grid], key  # all scored
        assert grid[0] < arm["lr"] < grid[-1], key  # not at an edge
        exact = [t for t in arm["totals"].values() if isinstance(t, int)]
        assert arm["totals"][repr(arm["lr"])] == arm["total_steps"] == min(exact), key
        assert all(t == f">{arm['total_steps']}" for t in arm["totals"].values()
                   if not isinstance(t, int)), key


@pytest.fixture(scope="module")
def committed():
    return LS.load(LS.RESULTS_FILE)


def test_the_committed_records_follow_the_schema_and_the_committed_rates(committed):
    keys = ["d_k", "lr", "optimizer", "scale", "seed", "steps"]
    lists = ("runs", "transfer", "mup", "pointer", "naive", "per_question", "long")
    runs = [r for name in lists for r in committed[name]] + [
        r for records in committed["perturbed"].values() for r in records]
    assert all(sorted(r) == keys for r in runs)
    assert len(committed["runs"]) == len(LM.OPTIMIZERS) * len(LM.SCALES) * len(LS.D_KS) * 10
    for r in committed["runs"]:
        assert r["lr"] == LS.tuned_rate(r["optimizer"], r["scale"], r["d_k"])
    assert committed["settings"]["seeds"] == list(LS.HELD_OUT_SEEDS)
    assert sorted(committed["perturbed"]) == [str(k) for k in LS.PERTURBATIONS]


@pytest.mark.parametrize("optimizer", LM.OPTIMIZERS)
def test_the_committed_records_are_what_the_code_computes_at_d_k_16(committed, optimizer):
    want = [r for r in committed["runs"]
            if (r["optimizer"], r["scale"], r["d_k"]) == (optimizer, "1/sqrt(d_k)", 16)]
    assert want[:3] == LS.steps_to_target(optimizer, "1/sqrt(d_k)", 16, want[0]["lr"],
                                          LS.HELD_OUT_SEEDS[:3])


def test_the_published_plan_asks_for_every_kind_of_record_the_committed_file_holds(committed):
    plan = LS.PUBLISHED
    assert (plan.scales, plan.optimizers, plan.d_ks, plan.seeds) == (
        LM.SCALES, LM.OPTIMIZERS, tuple(committed["settings"]["d_ks"]),
        tuple(committed["settings"]["seeds"]))
    assert [plan.transfer, plan.logits, plan.summation, plan.per_question, plan.long] == [
        bool(committed[name]) for name in ("transfer", "logits", "naive", "per_question", "long")]
    assert plan.perturb == len(committed["perturbed"]) == len(LS.PERTURBATIONS)
    assert (plan.readout, plan.max_steps, plan.late) == tuple(
        committed["settings"][name] for name in ("readout", "max_steps", "late"))


@pytest.mark.slow
@pytest.mark.parametrize("d_k", LS.D_KS, ids=lambda d: f"d_k={d}")
def test_the_committed_records_are_what_the_code_computes_for_every_fast_arm(committed, d_k):
    for o in LM.OPTIMIZERS:
        for s in ("1/sqrt(d_k)", "1/d_k", "1/ln(d_k)"):
            want = [r for r in committed["runs"] if (r["optimizer"], r["scale"], r["d_k"]) ==
                    (o, s, d_k)]
            assert want == LS.steps_to_target(o, s, d_k, want[0]["lr"])


CELL = ("sgd", "1", 64)  # a rounding-sensitive cell: its interval comes from the perturbations


@pytest.mark.slow
def test_a_published_cell_is_regenerated_from_the_code(committed):
    plan = LS.PUBLISHED._replace(scales=(CELL[1],), optimizers=(CELL[0],), d_ks=(CELL[2],),
                                 transfer=False, per_question=False)
    out = LS.measure(plan, jobs=2)
    for name in ("runs", "logits", "naive", "long"):
        assert out[name] == [r for r in committed[name] if (
            r["optimizer"], r["scale"], r["d_k"]) == CELL], name
    for k, records in out["perturbed"].items():
        assert records == [r for r in committed["perturbed"][k] if (
            r["optimizer"], r["scale"], r["d_k"]) == CELL], k
    assert LT.tables(out)["table"][0] == LT.row_of(L.docs_data()["table"], *CELL)


# ----------------------------------------------------------------- the tables

@pytest.fixture(scope="module")
def data():
    return L.docs_data()


def test_every_published_interval_is_the_hull_of_the_seeds_and_the_perturbations(data):
    # recomputed here from the steps: the 2nd and 9th of ten sorted values (a miss above
    # every number), and statistics.median of each perturbed run's steps
    committed = LS.load(LS.RESULTS_FILE)
    for row in data["table"]:
        arm = (row["optimizer"], row["scale"], row["d_k"])
        ranked = sorted(math.inf if s is None else s for s in row["steps"])
        medians = [statistics.median(sorted(math.inf if r["steps"] is None else r["steps"]
                                            for r in records if (r["optimizer"], r["scale"],
                                                                 r["d_k"]) == arm))
                   for records in committed["perturbed"].values()]
        low, high = min([ranked[1]] + medians), max([ranked[8]] + medians)
        assert row["published"] == [None if v == math.inf else v for v in (low, high)], arm


def test_the_docs_data_is_json(data):
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_the_figure_plots_every_published_median_and_interval(data):
    import xml.etree.ElementTree as ET
    from scripts import build  # which draws the figure from the records
    svg = ET.fromstring(build.figure_learning(build.Data(None, [], {}, data)))
    groups = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("data-label")]
    assert len(groups) == len(LM.SCALES) * len(LM.OPTIMIZERS)
    plotted = {g.get("data-label"): [(float(p.get("data-x")), float(p.get("data-y")),
                                      float(p.get("data-low")), float(p.get("data-high")))
                                     for p in g if p.get("data-x")] for g in groups}
    for row in data["table"]:
        label = f"{row['scale']}, {LT.NAMES[row['optimizer']]}"
        low, high = (LS.MISS if v is None else v for v in row["published"])
        assert (row["d_k"], row["median"] or LS.MISS, low, high) in plotted[label]


def test_the_markdown_tables_have_a_row_per_arm(data):
    blocks = L.markdown_blocks(data)
    rows = [line for line in blocks["learning-table"].splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(LM.OPTIMIZERS) * len(LM.SCALES)  # the header, then the arms
    assert blocks["learning-table"].count("*") == sum(bool(r["seeds_changed"])
                                                      for r in data["table"])
    full = blocks["learning-full"].splitlines()
    assert len(full) == 2 + len(data["table"])


def test_the_values_name_only_numbers_the_data_holds(data):
    values = L.markdown_values(data)
    assert values["learning.seeds"] == "100-109"
    assert values["learning.coverage"] == "97.85% over 10 seeds"
    assert values["learning.lr.sgd.inv"] == ", ".join(
        LT.fmt_rate(LT.row_of(data["table"], "sgd", "1/d_k", d)["lr"]) for d in LS.D_KS)
    assert values["learning.lr.sgd.inv"].endswith("45.25")
    for d_k in LS.D_KS:  # a star for each rounding-sensitive cell
        row = LT.row_of(data["table"], "adam", "1", d_k)
        assert values[f"learning.steps.adam.one.{d_k}"].endswith("*") == bool(
            row["seeds_changed"])


MARKED = ("README.md", "docs/experiments.md", "docs/interview.md")


@pytest.mark.parametrize("relative", MARKED)
def test_every_learning_marker_in_the_docs_holds_what_the_code_generates(data, relative):
    # what scripts/build.py writes, for this experiment's markers: a change to a table or a
    # value that the docs do not follow fails here, not only in build.py --check
    import re
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        text = f.read()
    values, blocks = L.markdown_values(data), L.markdown_blocks(data)
    found = re.findall(r"<!--v:(learning\.[\w.-]+)-->(.*?)<!--/v-->", text)
    for name, value in found:
        assert values[name] == value, name
    tables = re.findall(r"<!--begin:(learning-[\w-]+)-->\n(.*?)\n<!--end:\1-->", text, re.S)
    for name, block in tables:
        assert blocks[name] == block, name
    assert found or tables


def test_the_transfer_table_shows_each_rate_with_its_steps(data):
    # recomputed from the records: the carried rate is d_k = 16's, muP's SGD rule times d_k/16
    committed = LS.load(LS.RESULTS_FILE)
    rows = L.markdown_blocks(data)["learning-transfer"].splitlines()[2:]
    cells = {tuple(row.split(" | ")[:3]): row.split(" | ")[3:] for row in rows}
    sgd = cells["| SGD", "1/d_k", "256"]
    want = sorted(r["steps"] for r in committed["mup"] if r["d_k"] == 256)
    assert sgd[2].startswith("64: ") and f"{statistics.median(want):g} [" in sgd[2]
    assert sgd[1].startswith("4: 42 [") and cells["| SGD", "1", "64"][2] == "- |"
    adam = cells["| Adam", "1/d_k", "64"]
    assert adam[1] == adam[2][:-2] and adam[1].startswith("0.1768: ")  # Adam: unchanged


def test_the_seeds_that_change_are_counted_from_the_perturbed_records(data):
    committed = LS.load(LS.RESULTS_FILE)
    for row in data["table"]:
        arm = (row["optimizer"], row["scale"], row["d_k"])
        runs = [[r["steps"] for r in records if (r["optimizer"], r["scale"], r["d_k"]) == arm]
                for records in [committed["runs"]] + list(committed["perturbed"].values())]
        changed = sum(len(set(per_seed)) > 1 for per_seed in zip(*runs))
        misses = sum(steps.count(None) for steps in runs[1:])
        assert (row["seeds_changed"], row["perturbed_misses"]) == (changed, misses), arm


# ------------------------------------------------------------------- the command line

PUBLISH_ONLY = ("--publish runs the committed settings only: all scales, both optimizers, and "
                "the default --dk, --seeds, --first-seed, --readout, --backward and --rates")


SEEDS_RULE = "--seeds takes 1 to 10 (the held-out seeds), or to 1000 with another --first-seed"


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "0"], SEEDS_RULE),
    (["--seeds", "11"], SEEDS_RULE),
    (["--optimizer", "rmsprop"],
     "argument --optimizer: invalid choice: 'rmsprop' (choose from 'sgd', 'adam', 'both')"),
    (["--dk", "16", "1"], "--dk values must be at least 2 (1/ln(d_k) needs ln d_k > 0)"),
    (["--scales", "1/d"], "--scales: unknown '1/d'; choose from 1/sqrt(d_k), 1/d_k, 1/ln(d_k), "
                          "1, or all (quote the names in a shell)"),
    (["--perturb", "8"], "--perturb takes 0 to 7"),
    (["--perturb", "-1"], "--perturb takes 0 to 7"),
    (["--jobs", "0"], "--jobs takes 1 or more"),
    (["--publish", "--dk", "16"], PUBLISH_ONLY),
    (["--publish", "--scales", "1"], PUBLISH_ONLY),
    (["--publish", "--optimizer", "sgd"], PUBLISH_ONLY)],
    ids=["no seeds", "too many seeds", "optimizer", "d_k 1", "scale name", "perturbations",
         "negative perturbations", "no jobs", "publish at another d_k", "publish one scale",
         "publish one optimizer"])
def test_the_command_line_rejects_bad_options(argv, message, capsys, no_runs):
    # each with its own message: a later check (a d_k without a tuned rate, a pool of no
    # processes) would refuse some of them too, but not in the words of the flag
    assert _refused(argv, capsys) == message


class Started(Exception):
    """The command got past its checks."""


def test_the_ends_of_each_range_are_taken(monkeypatch):
    def measure(plan, jobs, progress):
        raise Started(plan, jobs)
    monkeypatch.setattr(L, "measure", measure)
    for argv in (["--seeds", "1"], ["--seeds", "10"], ["--perturb", "0"], ["--perturb", "7"],
                 ["--jobs", "1"], ["--dk", "2", "16"]):
        with pytest.raises(Started):
            L.main(argv)


def test_the_help_text_names_what_the_default_prints_and_what_needs_more(capsys):
    with pytest.raises(SystemExit) as exit_info:
        L.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal width
    assert exit_info.value.code == 0 and "first 90% and after step" in out and "%%" not in out
    assert "(for example --scales all), also the pointer-loss control" in out


def test_the_default_scales_print_no_pointer_control_and_all_scales_do(capsys):
    L.main(["--dk", "16", "--seeds", "1", "--optimizer", "sgd"])
    assert "== pointer-loss control" not in capsys.readouterr().out
    L.main(["--dk", "16", "--seeds", "1", "--scales", "all", "--optimizer", "sgd"])
    assert "== pointer-loss control" in capsys.readouterr().out


def test_json_records_have_exactly_the_schema_and_null_for_a_miss(tmp_path):
    path = tmp_path / "runs.json"
    L.main(["--dk", "16", "--seeds", "2", "--scales", "1/sqrt(d_k)", "--optimizer", "sgd",
            "--json", str(path)])
    records = json.loads(path.read_text())
    assert [sorted(r) for r in records] == [sorted(["optimizer", "scale", "d_k", "seed", "lr",
                                                    "steps"])] * 2
    assert [list(r) for r in records] == [["optimizer", "scale", "d_k", "seed", "lr",
                                           "steps"]] * 2  # written in the schema's order
    assert path.read_text().startswith('[\n {\n  "optimizer": "sgd",\n')  # indent 1
    assert [r["seed"] for r in records] == [100, 101] and all(r["steps"] for r in records)
    miss = LS.steps_to_target("sgd", "1", 256, 0.01, [100], max_steps=2)
    assert json.dumps(miss[0]["steps"]) == "null"


def _refused(argv, capsys):
    """The one line of a usage error, after SystemExit with status 2."""
    with pytest.raises(SystemExit) as exit_info:
        L.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith("python3 experiments/learning.py: ")
    assert err.endswith(" (see python3 experiments/learning.py --help)\n")
    return err[len("python3 experiments/learning.py: "):-len(" (see python3 experiments/"
                                                             "learning.py --help)\n")]


@pytest.fixture
def no_runs(monkeypatch):
    """Fail the test if the command gets as far as running anything."""
    def run(*args):
        raise AssertionError("the work started before the check")
    monkeypatch.setattr(L, "measure", run)
    monkeypatch.setattr(L, "sweep", run)


def test_every_file_to_write_is_checked_before_the_runs(tmp_path, monkeypatch, capsys,
                                                        no_runs):
    missing = tmp_path / "missing" / "runs.json"
    assert _refused(["--json", str(missing)], capsys) == (
        f"--json: cannot write {missing}: there is no folder {missing.parent}")
    assert _refused(["--json", str(tmp_path)], capsys) == (
        f"--json: cannot write {tmp_path}: it is a folder")
    assert _refused(["--json", ""], capsys) == "--json: cannot write : the path is empty"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert _refused(["--json", str(a_file / "runs.json")], capsys) == (
        f"--json: cannot write {a_file / 'runs.json'}: {a_file} is not a folder")
    assert _refused(["--sweep", "--dk", "16", "--rates", str(missing)], capsys) == (
        f"--rates: cannot write {missing}: there is no folder {missing.parent}")
    monkeypatch.setattr(L, "RESULTS_FILE", str(missing))
    assert _refused(["--publish"], capsys) == (
        f"--publish: cannot write {missing}: there is no folder {missing.parent}")


def test_a_file_without_permission_to_write_it_is_refused(tmp_path, monkeypatch, capsys,
                                                          no_runs):
    # as root every file is writable, so the answer of os.access is what is tried here
    existing = tmp_path / "runs.json"
    existing.write_text("[]")
    asked = []
    monkeypatch.setattr(L.os, "access", lambda path, mode: asked.append(path) and False)
    for path in (existing, tmp_path / "new.json"):
        assert _refused(["--json", str(path)], capsys) == (
            f"--json: cannot write {path}: permission denied")
    assert asked == [str(existing), str(tmp_path)]  # the file itself, or its folder


def test_the_rates_are_read_before_the_runs(tmp_path, capsys, no_runs):
    missing, words, array = tmp_path / "none.json", tmp_path / "w.json", tmp_path / "a.json"
    words.write_text("not json")
    array.write_text("[1]")
    assert _refused(["--rates", str(missing)], capsys) == (
        f"--rates: cannot read tuned rates from {missing}: No such file or directory")
    assert _refused(["--rates", str(words)], capsys).startswith(
        f"--rates: cannot read tuned rates from {words}: not JSON (Expecting value")
    for stored in ("[1]", '{"arms": [1]}', '{"seeds": []}'):
        array.write_text(stored)
        assert _refused(["--rates", str(array)], capsys) == (
            f'--rates: cannot read tuned rates from {array}: no "arms" in it (--sweep writes '
            f'a rates file)')
    # a sweep into a file of its own adds to it: so it must hold rates too, if it exists
    assert _refused(["--sweep", "--dk", "16", "--rates", str(words)], capsys).startswith(
        f"--rates: cannot read tuned rates from {words}: not JSON")


def test_a_failed_write_after_the_runs_is_one_line(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    path = folder / "runs.json"
    records = LS.measure(LS.Plan(("1/sqrt(d_k)",), ("sgd",), (16,), (100,)))

    def measure_then_lose_the_folder(plan, jobs, progress):
        folder.rmdir()
        return records
    monkeypatch.setattr(L, "measure", measure_then_lose_the_folder)
    with pytest.raises(SystemExit) as exit_info:
        L.main(["--dk", "16", "--seeds", "1", "--json", str(path)])
    assert exit_info.value.code == (f"python3 experiments/learning.py: cannot write {path}: "
                                    f"No such file or directory")


def test_ctrl_c_is_one_line_with_how_far_the_runs_got_and_status_130(monkeypatch, capsys):
    def interrupted(plan, jobs, progress):
        raise LS.Interrupted("37 of 120 runs")
    monkeypatch.setattr(L, "measure", interrupted)
    assert L.main(["--dk", "16"]) == 130
    assert capsys.readouterr() == (
        "", "python3 experiments/learning.py: interrupted after 37 of 120 runs\n")

    def stopped(*args):
        raise KeyboardInterrupt  # elsewhere than in the runs: no count to give
    monkeypatch.setattr(L, "_plan", stopped)
    assert L.main(["--dk", "16"]) == 130
    assert capsys.readouterr().err == "python3 experiments/learning.py: interrupted\n"


def test_a_command_that_writes_nothing_needs_no_file_it_could_write(monkeypatch):
    # nothing writable at all, and results.json's folder gone: a plain run reads the
    # rates and prints; only --json, --publish and --sweep need a file they can write
    def measure(plan, jobs, progress):
        raise Started(plan)
    monkeypatch.setattr(L, "measure", measure)
    monkeypatch.setattr(L.os, "access", lambda path, mode: False)
    monkeypatch.setattr(L, "RESULTS_FILE", os.path.join(ROOT, "no-such-folder", "r.json"))
    with pytest.raises(Started):
        L.main(["--dk", "16"])


def test_a_sweep_may_start_a_rates_file_of_its_own(tmp_path, monkeypatch):
    def sweep(arms, seeds, jobs, progress, backward):
        raise Started(arms)
    monkeypatch.setattr(L, "sweep", sweep)
    with pytest.raises(Started):  # not yet there: nothing to read, a file to write
        L.main(["--sweep", "--dk", "16", "--rates", str(tmp_path / "new.json")])


def test_the_command_line_reports_a_d_k_without_a_tuned_rate_instead_of_a_traceback(capsys):
    with pytest.raises(SystemExit) as exit_info:
        L.main(["--dk", "32"])
    assert exit_info.value.code == 2
    assert "no tuned rate for 'sgd fixed 1/sqrt(d_k) 32'" in capsys.readouterr().err


def test_a_partial_sweep_refuses_to_replace_the_committed_rates(capsys):
    with open(LS.RATES_FILE, "rb") as f:
        before = f.read()
    with pytest.raises(SystemExit):
        L.main(["--sweep", "--dk", "32"])
    assert "--rates PATH" in capsys.readouterr().err
    with open(LS.RATES_FILE, "rb") as f:
        assert f.read() == before


def test_the_plain_sweep_says_which_file_it_overwrites_and_redoes_the_committed_arms(
        monkeypatch, capsys):
    class Stop(Exception):
        pass
    seen = []

    def fake_sweep(arms, seeds, jobs, progress, backward):
        seen.append((list(arms), tuple(seeds), jobs))
        raise Stop  # before anything is written
    monkeypatch.setattr(L, "sweep", fake_sweep)
    with pytest.raises(Stop):
        L.main(["--sweep", "--jobs", "2"])
    assert seen == [(LS.default_arms(), LS.TUNING_SEEDS, 2)]
    assert sorted(LS.load(LS.RATES_FILE)["arms"]) == sorted(map(LS.arm_key, seen[0][0]))
    assert "will overwrite experiments/tuned_rates.json (committed" in capsys.readouterr().err


class Terminal(io.StringIO):
    """stderr as a terminal: progress redraws one line."""
    def isatty(self):
        return True


@pytest.mark.parametrize("tty", [False, True], ids=["a log", "a terminal"])
def test_publish_announces_its_file_shows_progress_and_writes_the_records(monkeypatch, tmp_path,
                                                                          tty):
    now = [0.0]  # the clock, moved by the fake measurement below
    monkeypatch.setattr(L.time, "monotonic", lambda: now[0])
    stderr = Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    path = tmp_path / "results.json"
    monkeypatch.setattr(L, "RESULTS_FILE", str(path))
    records = LS.measure(LS.Plan(("1/sqrt(d_k)",), ("sgd",), (16,), (100,)))

    def fake_measure(plan, jobs, progress):
        assert plan == LS.PUBLISHED and jobs == 2
        for k, t in enumerate([3.0, 11.0, 15.0, 25.0]):
            now[0] = t
            progress(f"runs: {k + 1} of 4 done")
        now[0] = 30.0
        return records
    monkeypatch.setattr(L, "measure", fake_measure)
    assert L.main(["--publish", "--jobs", "2"]) == 0
    lines = stderr.getvalue()
    shown = os.path.relpath(str(path))  # the committed file is named from the working folder
    assert lines.startswith(f"--publish: will overwrite {shown} (committed in the repository)")
    if tty:  # every call redraws the line, then the line is cleared
        assert lines.count("\r[") == 4 and "\r[    25 s] runs: 4 of 4 done" in lines
    else:  # a line every 10 s: at 11 and at 25 (3 and 15 are too soon)
        assert lines.splitlines()[1:3] == ["[    11 s] runs: 2 of 4 done",
                                           "[    25 s] runs: 4 of 4 done"]
    assert lines.endswith("wall 30.0 s, jobs 2 (Python %s)\n" % sys.version.split()[0])
    assert json.loads(path.read_text()) == records


def test_the_progress_of_run_all_estimates_the_time_left_in_seconds_then_minutes(monkeypatch):
    clock = iter([0.0, 210.0, 300.0])  # the start, then after each of the two items
    monkeypatch.setattr(LS.time, "monotonic", lambda: next(clock))
    heard = []
    assert LS.run_all(abs, [-1, 2], progress=heard.append) == [1, 2]
    # 210 s elapsed, the same weight left as done: 210 s = 3.5 min, shown as 4 min
    assert heard == ["runs: 1 of 2 done, about 4 min left", "runs: 2 of 2 done, about 0 s left"]


def test_the_time_left_weighs_each_item_by_its_expected_cost(monkeypatch):
    # 100 s for the first item, of weight 3; weight 2 is left: 100 * 2 / 3 = 66.7 s (the
    # clock starts at 1000: only differences of its readings count)
    clock = iter([1000.0, 1100.0, 1100.0])
    monkeypatch.setattr(LS.time, "monotonic", lambda: next(clock))
    heard = []
    LS.run_all(abs, [-1, 2], progress=heard.append, weights=[3.0, 2.0])
    assert heard[0] == "runs: 1 of 2 done, about 67 s left"


@pytest.mark.parametrize("elapsed, shown", [(119.5, "120 s"), (120.0, "2 min")])
def test_the_time_left_turns_to_minutes_at_exactly_120_s(monkeypatch, elapsed, shown):
    # one item of two done after `elapsed` s: as much left as done.  Just under 120 s is
    # still in seconds (rounded half to even: 120), and 120 s itself is in minutes
    clock = iter([0.0, elapsed, elapsed])
    monkeypatch.setattr(LS.time, "monotonic", lambda: next(clock))
    heard = []
    LS.run_all(abs, [-1, 2], progress=heard.append)
    assert heard[0] == f"runs: 1 of 2 done, about {shown} left"


@pytest.mark.slow
def test_a_sweep_at_another_d_k_goes_to_its_own_file_and_the_run_reads_it(tmp_path, capsys):
    path = str(tmp_path / "rates.json")
    common = ["--dk", "32", "--scales", "1/sqrt(d_k)", "--optimizer", "sgd", "--rates", path]
    L.main(["--sweep"] + common)
    arms = LS.load(path)["arms"]
    assert sorted(arms) == ["sgd fixed 1/sqrt(d_k) 32", "sgd pointer 1/sqrt(d_k) 32"]
    printed = capsys.readouterr().out.splitlines()  # a header, then each arm's rate and total
    assert printed[0].split() == ["arm", "lr", "total", "steps"]
    assert [line.split()[-2:] for line in printed[1:]] == [
        [LT.fmt_rate(arm["lr"]), str(arm["total_steps"])] for arm in arms.values()]
    L.main(common + ["--seeds", "2"])
    assert "1/sqrt(d_k)  32" in capsys.readouterr().out


def test_the_diagnostics_follow_the_readout(capsys):
    L.main(["--dk", "16", "--seeds", "1", "--scales", "1/sqrt(d_k)", "--optimizer", "sgd",
            "--readout", "pointer"])
    out = capsys.readouterr().out
    pointer = LS.seed_diagnostics(100, 16, "1/sqrt(d_k)", "pointer")
    fixed = LS.seed_diagnostics(100, 16, "1/sqrt(d_k)", "fixed")
    assert pointer.gradient != fixed.gradient  # so the printed value tells them apart
    assert "pointer readout" in out
    assert LT.fmt(*[pointer.gradient] * 3) in out and LT.fmt(*[fixed.gradient] * 3) not in out


@pytest.mark.parametrize("argv, message", [
    (["--first-seed", "3", "--seeds", "2"], "include the tuning seeds 0-4"),
    (["--first-seed", "200", "--seeds", "1001"], "--seeds takes 1 to 10"),
    (["--publish", "--first-seed", "200"], "--publish runs the committed settings only"),
    (["--publish", "--backward", "textbook"], "--publish runs the committed settings only"),
    (["--records", "/no/such/folder/r.json"],
     "--records: cannot write /no/such/folder/r.json: there is no folder /no/such/folder")],
    ids=["tuning seeds", "too many fresh seeds", "publish fresh", "publish textbook",
         "records folder"])
def test_the_findings_options_refuse_what_they_cannot_do(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        L.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--first-seed", "4", "--seeds", "1"], "the seeds 4 include the tuning seeds 0-4"),
    (["--first-seed", "-2", "--seeds", "3"], "include the tuning seeds 0-4"),
    (["--dk", "1"], "--dk values must be at least 2"),
    (["--jobs", "0"], "--jobs takes 1 or more")],
    ids=["the last tuning seed", "the first tuning seed", "d_k 1", "no jobs"])
def test_a_bad_option_is_refused_with_its_own_rule(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        L.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, seeds", [(["--first-seed", "5", "--seeds", "1"], (5,)),
                                         (["--first-seed", "-2", "--seeds", "2"], (-2, -1)),
                                         (["--dk", "2"], tuple(range(100, 110)))],
                         ids=["just above the tuning seeds", "just below", "d_k 2"])
def test_the_seeds_next_to_the_tuning_seeds_and_d_k_2_are_accepted(monkeypatch, argv, seeds):
    assert planned(monkeypatch, argv)[0].seeds == seeds


def test_the_docs_data_refuses_records_made_with_other_rates(monkeypatch):
    results = LS.load(LS.RESULTS_FILE)
    results["runs"][-1] = {**results["runs"][-1], "lr": results["runs"][-1]["lr"] * 2}
    monkeypatch.setattr(L, "load", lambda path: results if path == LS.RESULTS_FILE
                        else LS.load(path))
    with pytest.raises(ValueError, match="made with other rates than tuned_rates.json"):
        L.docs_data()


def test_fresh_seeds_and_every_record_of_a_command_go_to_the_records_file(tmp_path, capsys):
    path = tmp_path / "fresh.json"
    L.main(["--dk", "16", "--seeds", "2", "--first-seed", "200", "--scales", "1/sqrt(d_k),1",
            "--optimizer", "sgd", "--backward", "textbook", "--records", str(path)])
    capsys.readouterr()
    records = json.loads(path.read_text())
    assert records["settings"]["seeds"] == [200, 201]
    assert records["settings"]["backward"] == "textbook"
    assert [r["seed"] for r in records["pointer"]] == [200, 201] * 2  # the pointer control too
    assert records["runs"][2] == LS.steps_to_target("sgd", "1", 16, records["runs"][2]["lr"],
                                                    [200])[0]  # no miss here, no backward


class Stop(Exception):
    """Raised by a fake measure: the plan is seen, nothing runs."""


def planned(monkeypatch, argv):
    """The Plan the command line hands to measure()."""
    seen = []

    def fake_measure(plan, jobs, progress):
        seen.append((plan, jobs))
        raise Stop
    monkeypatch.setattr(L, "measure", fake_measure)
    with pytest.raises(Stop):
        L.main(argv)
    return seen[0]


def test_a_first_seed_gives_that_many_fresh_seeds(monkeypatch):
    plan, _ = planned(monkeypatch, ["--first-seed", "1000", "--seeds", "40"])
    assert plan.seeds == tuple(range(1000, 1040)) and plan.backward == "library"
    assert planned(monkeypatch, ["--backward", "textbook"])[0].backward == "textbook"


def test_the_command_the_pages_name_for_the_steps_table_measures_what_it_holds(monkeypatch):
    # python3 experiments/learning.py --scales all --perturb 7 --jobs 2: every arm of the
    # table at its tuned rate on the held-out seeds, with the seven perturbations
    plan, jobs = planned(monkeypatch, ["--scales", "all", "--perturb", "7", "--jobs", "2"])
    assert plan == LS.Plan(LM.SCALES, LM.OPTIMIZERS, LS.D_KS, LS.HELD_OUT_SEEDS, perturb=7)
    assert jobs == 2 and (plan.perturb, plan.readout, plan.rates, plan.max_steps) == (
        LS.PUBLISHED.perturb, LS.PUBLISHED.readout, LS.PUBLISHED.rates, LS.PUBLISHED.max_steps)


FINDINGS_STUB = {"pointer": {"pointer": []}, "library": {"per_question": []},
                 "textbook": {"per_question": []}}


def test_a_median_over_one_miss_prints_the_least_it_can_be_and_over_two_beyond_the_cap():
    def results(steps):
        runs = [{"optimizer": "sgd", "scale": "1", "d_k": 16, "seed": 100 + i, "lr": 0.5,
                 "steps": v} for i, v in enumerate(steps)]
        return {"settings": {"d_ks": [16], "readout": "fixed"}, "runs": runs, "perturbed": {},
                "logits": [], "diagnostics": [], "pointer": [], "transfer": [], "long": []}
    one = [5, 6, 7, 8, 202, None, None, None, None, None]  # the 5th value 202, the 6th a miss
    row = LT.tables(results(one))["table"][0]
    assert (row["median"], row["at_least"]) == (None, (202 + LS.MISS) / 2)
    assert LT.blocks({**LT.tables(results(one)), "findings": FINDINGS_STUB})[
        "learning-table"].endswith("| ≥251.5 [6, >300] |")
    two = [5, 6, 7, 8, None, None, None, None, None, None]
    assert LT.tables(results(two))["table"][0]["at_least"] == LS.MISS
    assert "| >300 [6, >300] |" in LT.blocks({**LT.tables(results(two)),
                                             "findings": FINDINGS_STUB})["learning-table"]


def test_the_text_table_pads_each_column_to_its_widest_entry_and_seeds_print_as_a_range():
    assert LT.text_table(["a", "bb"], [["ccc", "d"], ["e", "ffff"]]) == [
        "a    bb", "ccc  d", "e    ffff"]
    assert [LT.seed_range(s) for s in ([100, 101], [100], [3, 5])] == ["100-101", "100", "3, 5"]


def test_a_left_to_right_median_on_the_end_of_the_published_interval_is_inside_it():
    runs = [{"optimizer": "sgd", "scale": "1", "d_k": 16, "seed": 100 + i, "lr": 0.5,
             "steps": v} for i, v in enumerate(range(1, 11))]  # the interval [2, 9]
    naive = [{**r, "steps": 9} for r in runs]  # its median: 9, the interval's upper end
    results = {"settings": {"d_ks": [16], "readout": "fixed", "seeds": list(range(100, 110)),
                            "tuning_seeds": [0]}, "runs": runs, "naive": naive,
               "perturbed": {}, "logits": [], "diagnostics": [], "pointer": [],
               "transfer": [], "long": []}
    data = {**LT.tables(results), "findings": {**FINDINGS_STUB, "pointer": {
        "settings": {"seeds": [200]}, "pointer": []}},
            "sweep": {"grids": 1, "widened": [], "identity_tops": {}}}
    assert data["table"][0]["published"] == [2.0, 9.0]
    values = LT.values(data)
    assert (values["learning.naive.outside"], values["learning.naive.arms-changed"]) == (
        "0", "1 of 1")


def test_the_blocks_of_records_without_runs_are_headers_alone():
    empty = {"settings": {"d_ks": [16], "readout": "fixed"}, "runs": [], "perturbed": {},
             "logits": [], "diagnostics": [], "pointer": [], "transfer": [], "long": []}
    full = LT.blocks({**LT.tables(empty), "findings": FINDINGS_STUB})["learning-full"]
    assert full.splitlines()[0].startswith("| optimizer | scale | d_k | rate | median |")
    assert len(full.splitlines()) == 2 and "k = 0..0" in full


def test_the_sweep_summary_counts_the_widened_grids_and_the_identity_s_grid_tops():
    # the identity's guess for an arm of the intervention: 1/sqrt(d_k)'s 2^(-10/2), times
    # sqrt(c / c') (one half-octave per octave), plus 6 rates: for c' = 1, c / c' = d_k^-1/2
    rates = {"rule": LS.SWEEP_RULE, "arms": {
        "sgd fixed 1 16": {"grid": [0.0] * 13}, "adam fixed 1 64": {"grid": [0.0] * 17},
        "adam-per-question fixed 1 16": {"grid": [0.0] * 21},
        "adam-per-question fixed 1 256": {"grid": [0.0] * 13},
        "adam-per-question fixed 1/sqrt(d_k) 64": {"grid": [0.0] * 13}}}
    assert LT.sweep_summary(rates) == {
        "grids": 5, "widened": ["adam fixed 1 64", "adam-per-question fixed 1 16"],
        "identity_tops": {"adam-per-question fixed 1 16": 2.0 ** ((-10 - 2 + 6) / 2),
                          "adam-per-question fixed 1 256": 2.0 ** ((-10 - 4 + 6) / 2),
                          "adam-per-question fixed 1/sqrt(d_k) 64": 2.0 ** ((-10 + 6) / 2)}}
    # the carry is read from the stored rule: two half-octaves per octave move the top twice
    # as far (d_k = 16: c / c' = 1/4, so -2 x 2 half-octaves)
    rule = {**LS.SWEEP_RULE, "half-octaves per octave of c/c'": {"adam": 2}}
    tops = LT.sweep_summary({**rates, "rule": rule})["identity_tops"]
    assert tops["adam-per-question fixed 1 16"] == 2.0 ** ((-10 - 4 + 6) / 2)


@pytest.mark.parametrize("where", [ROOT, EXPERIMENTS], ids=["from the root", "from experiments/"])
def test_the_program_runs_as_documented_from_the_root_and_from_its_folder(where):
    script = os.path.relpath(os.path.join(EXPERIMENTS, "learning.py"), where)
    help_text = subprocess.run([sys.executable, script, "--help"], cwd=where,
                               capture_output=True, text=True)
    run = subprocess.run([sys.executable, script, "--dk", "16", "--seeds", "1", "--optimizer",
                          "sgd"], cwd=where, capture_output=True, text=True)
    assert help_text.returncode == run.returncode == 0, help_text.stderr + run.stderr
    assert "usage: python3 experiments/learning.py" in help_text.stdout
    assert "== steps to 90%" in run.stdout and "CPU time" in run.stderr


# ------------------------------------------------------------------------ the sources

def imports(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    return tree, [(node.module, alias.name) for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) for alias in node.names]


def test_the_experiment_imports_only_public_names():
    modules = {"attention": attention, "softmax": softmax, "stats": stats,
               "experiments.learning_model": LM, "experiments.learning_measure": LS,
               "experiments.learning_tables": LT}
    seen = set()
    for path in SOURCES:
        for module, name in imports(path)[1]:
            if module != "typing" and module in modules:
                assert name in modules[module].__all__, (path, module, name)
                seen.add(module)
    assert seen == set(modules) - {"experiments.learning_tables"}  # learning.py: as a module
    for module in (LM, LS, LT, L):  # every public name exists
        assert all(hasattr(module, name) for name in module.__all__), module


def test_no_test_oracle_and_no_path_edit_outside_the_main_guard():
    for path in SOURCES:
        tree, names = imports(path)
        assert ("attention", "attention_backward") not in names, path  # the oracle is here
        for node in tree.body:  # module level: sys.path only under `if __name__ == ...`
            guarded = isinstance(node, ast.If) and "__main__" in ast.dump(node.test)
            assert guarded or "sys.path" not in ast.unparse(node), path


def test_files_and_functions_stay_small():
    for path in SOURCES:
        text = open(path, encoding="utf-8").read()
        assert len(text.splitlines()) <= 700, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 50, (path, node.name)


def test_the_experiment_doctests_are_collected_and_exist():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        assert '"experiments"' in f.read().split("testpaths = [")[1].split("]")[0]
    examples = sum(len(t.examples) for module in (LM, LS, LT, L)
                   for t in doctest.DocTestFinder().find(module))
    assert examples >= 20
