"""The logit-scale study's code: each arm's logits and gradients against independent
references, QK-norm's invariance and the bounds, the runs against learning_model's, the
records against the runs that made them, and the command line.

References: 50-digit decimal arithmetic along the textbook route (q = x_q W_Q, k = x W_K
themselves, then the arm's formula), central differences in floats and in decimal, exact
Fractions, and learning_model's own training loop.
"""

import io
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from attention import matmul
from experiments import stability as ST
from experiments import stability_measure as SS
from experiments import stability_model as SM
from experiments import stability_tables as SX
from experiments.learning_measure import Summary
from experiments.learning_model import (BETA, ITEMS, draw_question, initial_weights, logit_table,
                                        logit_matrix_transposed, make_task, optimizer_step,
                                        train)
from tests.helpers import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRECISION = 50


def batch_of(seed, n, stream=3):
    task = make_task(seed)
    rng = random.Random(stream)
    return task, [draw_question(task, rng) for _ in range(n)]


def params_for(arm, seed, d_k, weight_factor=1.0, gain_spread=0.3):
    """Initial weights times a factor; learned gains drawn around 1 (not all equal)."""
    W_Q, W_K = ([[weight_factor * w for w in row] for row in W]
                for W in initial_weights(seed, d_k))
    if SM.ARMS[arm].norm != "learned":
        return W_Q, W_K
    rng = random.Random(seed)
    return (W_Q, W_K, [[1.0 + gain_spread * rng.gauss(0.0, 1.0) for _ in range(d_k)]],
            [[1.0 + gain_spread * rng.gauss(0.0, 1.0) for _ in range(d_k)]])


# ------------------------------------------------------------------ the references

def decimal_logits(arm, params, question):
    """The arm's logits of one question, in Decimal, through q and k themselves."""
    spec = SM.ARMS[arm]
    W_Q, W_K = params[:2]
    d_k = len(W_Q[0])
    root = Decimal(d_k).sqrt()

    def project(x, W):
        return [sum(Decimal(x[a]) * W[a][i] for a in range(len(x))) for i in range(d_k)]

    q, ks = project(question.x_q, W_Q), [project(x, W_K) for x in question.X]
    if spec.norm:
        ones = [[Decimal(1)] * d_k]
        g_Q, g_K = (ones, ones) if spec.norm == "fixed" else (params[2], params[3])
        eps = Decimal(SM.EPS_NORM)

        def rms_norm(v, g):
            rho = (sum(x * x for x in v) / d_k + eps).sqrt()
            return [gi * x / rho for gi, x in zip(g[0], v)]
        qn = rms_norm(q, g_Q)
        return [sum(a * b for a, b in zip(qn, rms_norm(k, g_K))) / root for k in ks]
    c = {"1/sqrt(d_k)": 1 / root, "1/d_k": Decimal(1) / d_k, "1": Decimal(1)}[spec.scale]
    raw = [c * sum(a * b for a, b in zip(q, k)) for k in ks]
    if spec.cap is None:
        return raw
    C = Decimal(spec.cap)
    return [C * decimal_tanh(s / C) for s in raw]


def decimal_tanh(x):
    e = (2 * x).exp()
    return (e - 1) / (e + 1)


def decimal_loss(arm, params, batch):
    """The mean cross-entropy of z = beta P V over the batch, in Decimal."""
    total = Decimal(0)
    for question in batch:
        S = decimal_logits(arm, params, question)
        m = max(S)
        e = [(s - m).exp() for s in S]
        P = [x / sum(e) for x in e]
        z = [Decimal(0)] * ITEMS
        for p, b in zip(P, question.payloads):
            z[b] = Decimal(BETA) * p
        t = question.payloads[question.j_star]
        total += max(z) + sum((v - max(z)).exp() for v in z).ln() - z[t]
    return total / len(batch)


def to_decimal(params):
    return tuple([[Decimal(w) for w in row] for row in W] for W in params)


def entries(params):
    return [(m, i, j) for m, W in enumerate(params) for i in range(len(W))
            for j in range(len(W[0]))]


def shifted(params, where, h):
    m, i, j = where
    out = [[list(row) for row in W] for W in params]
    out[m][i][j] += h
    return tuple(out)


GRADIENT_ARMS = ["qk-norm", "qk-norm-g1", "cap-50", "cap-10"]


@pytest.mark.parametrize("arm", GRADIENT_ARMS)
def test_the_gradient_is_the_central_difference_of_the_loss(arm):
    # Central differences with h = 1e-5: truncation h^2 |L'''| / 6 and rounding
    # u |L| / h, both below 1e-9 here; a bound of 1e-7 leaves a margin of 100.
    d_k = 4
    task, batch = batch_of(100, 3)
    params = params_for(arm, 100, d_k, weight_factor=6.0 if "cap" in arm else 1.0)
    spec = SM.ARMS[arm]

    def loss(p):
        return SM.loss_and_gradients(spec, p, SM.tables(spec, task, p, batch), batch)[0]
    _, grads = SM.loss_and_gradients(spec, params, SM.tables(spec, task, params, batch), batch)
    h = 1e-5
    rng = random.Random(arm)
    chosen = [w for w in entries(params) if w[0] >= 2] + rng.sample(
        [w for w in entries(params) if w[0] < 2], 24)  # every gain, and 24 weights
    for where in chosen:
        numeric = (loss(shifted(params, where, h)) - loss(shifted(params, where, -h))) / (2 * h)
        m, i, j = where
        assert_close(grads[m][i][j], numeric, abs=1e-7)


@pytest.mark.parametrize("arm", GRADIENT_ARMS)
def test_the_gradient_matches_fifty_digit_differences_of_the_textbook_loss(arm):
    # The reference: the loss along q and k themselves in 50-digit decimal, differenced
    # with h = 1e-20 (truncation ~1e-40, rounding ~1e-30), so it is exact to the float
    # gradient's eyes.  The float gradient sums a few hundred rounded terms of relative
    # error u = 2^-53 each; 1e-12 of the largest entry is that, with a margin of about 10.
    d_k = 4
    task, batch = batch_of(101, 2)
    params = params_for(arm, 101, d_k, weight_factor=6.0 if "cap" in arm else 1.0)
    spec = SM.ARMS[arm]
    loss, grads = SM.loss_and_gradients(spec, params, SM.tables(spec, task, params, batch), batch)
    rng = random.Random(arm)
    chosen = [w for w in entries(params) if w[0] >= 2] + rng.sample(
        [w for w in entries(params) if w[0] < 2], 12)  # every gain, and 12 weights
    with localcontext() as ctx:
        ctx.prec = PRECISION
        exact = to_decimal(params)
        assert_close(loss, float(decimal_loss(arm, exact, batch)), rel=1e-14)
        h = Decimal("1e-20")
        top = max(abs(g) for G in grads for row in G for g in row)
        for where in chosen:
            numeric = (decimal_loss(arm, shifted(exact, where, h), batch)
                       - decimal_loss(arm, shifted(exact, where, -h), batch)) / (2 * h)
            m, i, j = where
            assert_close(grads[m][i][j], float(numeric), abs=1e-12 * top)


@pytest.mark.parametrize("arm", list(SM.ARMS))
def test_every_arm_s_logits_are_its_formula_through_q_and_k_to_fifty_digits(arm):
    d_k = 8
    task, batch = batch_of(102, 3)
    params = params_for(arm, 102, d_k)
    t = SM.tables(SM.ARMS[arm], task, params)
    with localcontext() as ctx:
        ctx.prec = PRECISION
        exact = to_decimal(params)
        for question in batch:
            want = [float(s) for s in decimal_logits(arm, exact, question)]
            row = t.S[question.ids[question.j_star]]
            got = [row[ITEMS * a + b] for a, b in zip(question.ids, question.payloads)]
            assert_close(got, want, rel=1e-13, abs=1e-15)


def test_the_capped_derivative_is_sech_squared_without_overflow_or_cancellation():
    # sech(x)^2 = 4 / (e^x + e^-x)^2 in 50 digits; the float form 4 e / (1 + e)^2,
    # e = exp(-2|x|), is a few roundings of relative size 2^-53 away from it at every x
    # (1 - t*t would lose all its digits for large |x|, and 1 / cosh(x)^2 would overflow)
    with localcontext() as ctx:
        ctx.prec = PRECISION
        for x in (0.0, 1e-9, 0.3, -2.5, 10.0, 40.0, -300.0):
            e = Decimal(x).exp()
            assert_close(SM._sech2(x), float(4 / (e + 1 / e) ** 2), rel=1e-15)
    assert SM._sech2(1e4) == 0.0 and SM._sech2(-1e4) == 0.0


# ------------------------------------------------------------------ QK-norm: invariance

def normed_logits(params, arm="qk-norm"):
    task = make_task(100)
    return SM.tables(SM.ARMS[arm], task, params).S


@pytest.mark.parametrize("arm", ["qk-norm", "qk-norm-g1"])
@pytest.mark.parametrize("a", [2.0 ** 7, 0.25, 2.0 ** -20])
def test_qk_norm_s_logits_do_not_change_when_a_projection_is_rescaled_exactly_with_eps_0(
        monkeypatch, arm, a):
    # With eps = 0, s = u / (rho_q rho_k sqrt(d_k)) and rescaling W_Q by a power of two
    # scales u by a, rho_q by a, every product and sum exactly: the floats agree bit for bit.
    monkeypatch.setattr(SM, "EPS_NORM", 0.0)
    params = params_for(arm, 100, 16)
    before = normed_logits(params, arm)
    for side in (0, 1):
        scaled = list(params)
        scaled[side] = [[a * w for w in row] for row in params[side]]
        assert normed_logits(tuple(scaled), arm) == before


@pytest.mark.parametrize("a", [Fraction(3), Fraction(1, 10), Fraction(7, 3)])
def test_with_eps_0_the_squared_logit_is_exactly_invariant_for_any_rational_factor(a):
    # s^2 = u^2 / (n_q n_k d_k) is rational in the weights: Fractions make the algebra of
    # the invariance exact for any factor a, not only powers of two.
    rng = random.Random(5)
    d_k = 6
    x_q, x = ([Fraction(rng.randint(-9, 9), 7) for _ in range(4)] for _ in range(2))
    W_Q, W_K = ([[Fraction(rng.randint(-9, 9), 5) for _ in range(d_k)] for _ in range(4)]
                for _ in range(2))
    g = [Fraction(rng.randint(1, 9), 4) for _ in range(d_k)]

    def s_squared(W_Q, W_K):
        q = [sum(x_q[r] * W_Q[r][i] for r in range(4)) for i in range(d_k)]
        k = [sum(x[r] * W_K[r][i] for r in range(4)) for i in range(d_k)]
        u = sum(gi * gi * a_i * b_i for gi, a_i, b_i in zip(g, q, k))
        return u * u / (sum(v * v for v in q) / d_k * sum(v * v for v in k) / d_k * d_k)
    before = s_squared(W_Q, W_K)
    assert s_squared([[a * w for w in row] for row in W_Q], W_K) == before
    assert s_squared(W_Q, [[a * w for w in row] for row in W_K]) == before


def rescaling_bound(s, n_q, a, eps):
    """|s(a W_Q) - s(W_Q)| <= |s| eps |1 - 1/a^2| / n_q (docs/stability.md derives it),
    plus the rounding of two float evaluations of s: 64 ulps of |s|."""
    return abs(s) * eps * abs(1 - 1 / (a * a)) / n_q + 64 * math.ulp(abs(s)) + 1e-300


@pytest.mark.parametrize("arm", ["qk-norm", "qk-norm-g1"])
@pytest.mark.parametrize("a", [1e3, 3.0, 0.5, 1e-2, 1e-3])
def test_with_eps_1e_6_the_logits_move_by_at_most_the_derived_bound(arm, a):
    params = params_for(arm, 100, 16)
    task = make_task(100)
    before = normed_logits(params, arm)
    scaled = (params[0] and [[a * w for w in row] for row in params[0]],) + tuple(params[1:])
    after = normed_logits(scaled, arm)
    q = matmul(task.queries, params[0])
    moved = 0
    for row_before, row_after, q_a in zip(before, after, q):
        n_q = math.fsum(v * v for v in q_a) / len(q_a)
        for s, s_a in zip(row_before, row_after):
            assert abs(s_a - s) <= rescaling_bound(s, n_q, a, SM.EPS_NORM), (s, s_a, n_q)
            moved += s_a != s
    assert moved  # eps = 1e-6 does move them: the bound is not vacuous


# ------------------------------------------------------------------ the bounds

@pytest.mark.parametrize("factor", [1.0, 30.0, 1e6])
def test_the_capped_logits_stay_within_the_cap(factor):
    for arm in ("cap-50", "cap-10"):
        C = SM.ARMS[arm].cap
        S = SM.tables(SM.ARMS[arm], make_task(100), params_for(arm, 100, 64, factor)).S
        assert max(abs(s) for row in S for s in row) <= C
    assert SM._capped(50.0, 1e300) == 50.0 and SM._capped(10.0, -1e300) == -10.0


@pytest.mark.parametrize("factor", [1e-3, 1.0, 30.0, 1e6])
def test_with_gains_fixed_at_1_the_normed_logits_stay_within_sqrt_d_k(factor):
    # |RMSNorm(q)| = sqrt(d_k) sqrt(n_q / (n_q + eps)), n_q = mean(q^2), so by
    # Cauchy-Schwarz |s| <= sqrt(d_k) sqrt(n_q / (n_q + eps)) sqrt(n_k / (n_k + eps)) <
    # sqrt(d_k).  In floats the margin eps / (2 n) below sqrt(d_k) covers the rounding
    # (a few units of 2^-53) unless n > 1e8; beyond, 16 units of rounding are allowed
    # above the sharper bound.  The key equal to the query comes closest to it.
    for d_k in (4, 16, 64):
        task = make_task(100)
        task.keys[0][0] = task.queries[0]
        W_Q, W_K = params_for("qk-norm-g1", 100, d_k, factor)
        for W_K in (W_K, W_Q):  # then W_K = W_Q: query 0 and key token 0 align
            S = SM.tables(SM.ARMS["qk-norm-g1"], task, (W_Q, W_K)).S
            n_q = [math.fsum(v * v for v in q) / d_k for q in matmul(task.queries, W_Q)]
            tokens = [x for row in task.keys for x in row]
            n_k = [math.fsum(v * v for v in k) / d_k for k in matmul(tokens, W_K)]
            eps = SM.EPS_NORM
            for row, a in zip(S, n_q):
                for s, b in zip(row, n_k):
                    sharp = math.sqrt(d_k) * math.sqrt(a / (a + eps) * b / (b + eps))
                    assert abs(s) <= sharp * (1 + 16 * 2.0 ** -53), (s, sharp)
                    if max(a, b) < 1e8:
                        assert abs(s) <= math.sqrt(d_k)
        if factor >= 1.0:
            assert S[0][0] > math.sqrt(d_k) * (1 - 1e-4)  # the bound is all but reached


# ------------------------------------------------------------------ the routes

@pytest.mark.parametrize("arm", list(SM.ARMS))
def test_a_batch_s_logits_are_the_full_table_s_entries_bit_for_bit(arm):
    task, batch = batch_of(103, 16)
    params = params_for(arm, 103, 16)
    spec = SM.ARMS[arm]
    full, part = SM.tables(spec, task, params), SM.tables(spec, task, params, batch)
    for question in batch:
        a = question.ids[question.j_star]
        for j in (ITEMS * i + b for i, b in zip(question.ids, question.payloads)):
            assert (part.raw[a][j], part.S[a][j]) == (full.raw[a][j], full.S[a][j])


@pytest.mark.parametrize("d_k", [16, 64])
def test_each_arm_s_tables_carry_its_scale(d_k):
    # c of Tables: 1/sqrt(d_k) for QK-norm and the caps, the arm's own scale otherwise
    task, batch = batch_of(100, 2)
    want = {"1/sqrt(d_k)": 1 / math.sqrt(d_k), "1/d_k": 1 / d_k, "1": 1.0}
    for arm, spec in SM.ARMS.items():
        params = params_for(arm, 100, d_k)
        for t in (SM.tables(spec, task, params), SM.tables(spec, task, params, batch)):
            assert_close(t.c, want.get(arm, 1 / math.sqrt(d_k)), rel=1e-15)


def test_the_scaled_arms_keep_learning_model_s_raw_logits():
    task = make_task(100)
    params = initial_weights(100, 16)
    want = logit_table(task, logit_matrix_transposed(params))
    for arm in ("1/sqrt(d_k)", "1/d_k", "1", "cap-50"):
        assert SM.tables(SM.ARMS[arm], task, params).raw == want


@pytest.mark.parametrize("scale, optimizer, lr", [("1/sqrt(d_k)", "adam", 2.0 ** -3),
                                                  ("1/d_k", "sgd", 4.0)])
def test_a_scaled_arm_trains_exactly_as_learning_model_does(scale, optimizer, lr):
    # learning_model.train runs the same batches and steps; its final weights, evaluated
    # here, give this run's final held-out loss, accuracy and entropy bit for bit
    steps = 30
    run = SM.train(scale, 16, 100, optimizer, lr, steps=steps)
    theirs = train(100, 16, scale=scale, optimizer=optimizer, lr=lr, max_steps=steps,
                   stop_at_target=False)
    spec = SM.ARMS[scale]
    assert run.final == SM.evaluate(spec, make_task(100), SM.tables(spec, make_task(100),
                                                                    theirs.final))


@pytest.mark.parametrize("arm", ["1/sqrt(d_k)", "qk-norm", "cap-10"])
def test_a_run_s_largest_logits_are_those_of_its_batches(arm):
    # largest: max |s| of each step's batch; largest_raw: for a cap the largest |c q . k|
    # before the cap over every batch, for the other arms the largest |s|
    run = SM.train(arm, 16, 102, "adam", 2.0 ** -2, steps=6, every=10)
    spec, task = SM.ARMS[arm], make_task(102)
    stream = random.Random("learning:train:102")
    params, step, state = SM.initial_params(spec, 102, 16), optimizer_step("adam", 0.25), None
    raw, gains = [], [1.0]
    for n in range(1, 7):  # the same steps again, from the same draws
        batch = [draw_question(task, stream) for _ in range(16)]
        t = SM.tables(spec, task, params, batch)
        scores = [abs(s) for q in batch for s in (t.S[q.ids[q.j_star]][ITEMS * a + b]
                                                  for a, b in zip(q.ids, q.payloads))]
        raw += [abs(t.c * s) for q in batch for s in (t.raw[q.ids[q.j_star]][ITEMS * a + b]
                                                      for a, b in zip(q.ids, q.payloads))]
        assert run.largest[n - 1] == max(scores)
        _, grads = SM.loss_and_gradients(spec, params, t, batch)
        params, state = step(params, grads, state, n)
        gains += [abs(g) for G in params[2:] for g in G[0]]  # g_Q and g_K after the step
        assert not spec.norm or params[2] == params[3]  # equal gradients keep g_Q = g_K
    assert run.largest_raw == (max(raw) if spec.cap else max(run.largest))
    assert run.largest_gain == (max(gains) if spec.norm else None)
    assert min(run.largest) < max(run.largest)  # the logits move: max and min differ


def test_the_learned_gains_start_at_1_and_change_under_training():
    params = SM.initial_params(SM.ARMS["qk-norm"], 100, 16)
    assert params[2:] == ([[1.0] * 16], [[1.0] * 16])
    run = SM.train("qk-norm", 16, 100, "adam", 2.0 ** -2, steps=20)
    assert run.largest_gain > 1.0 and SM.train("qk-norm-g1", 16, 100, "adam", 2.0 ** -2,
                                               steps=2).largest_gain is None


def test_a_run_that_leaves_the_bound_stops_and_is_flagged_non_finite():
    run = SM.train("1", 16, 100, "sgd", 2.0 ** 80, steps=5)
    assert run.non_finite and run.final is None and run.collapsed
    assert len(run.largest) < 5 and run.losses == [run.initial.loss]


@pytest.mark.parametrize("arm", ["qk-norm", "cap-50"])
def test_a_weight_past_1e20_after_the_first_step_ends_the_run_there(arm):
    # Adam's first step moves each weight with a gradient by lr (m / sqrt(v) = +-1 up to
    # eps): at lr = 1.5e20 the weights land between 1e20 and 2e20, past the bound
    run = SM.train(arm, 16, 100, "adam", 1.5e20, steps=3)
    assert run.non_finite and run.final is None and len(run.largest) == 1
    if arm == "qk-norm":  # no step was kept: the largest gain is the gains' start, 1
        assert run.largest_gain == 1.0
    run = SM.train(arm, 16, 100, "adam", 0.5e20, steps=1)
    assert not run.non_finite and run.final is not None  # below the bound: the run goes on


@pytest.mark.parametrize("accuracy, collapsed", [(0.5, False), (0.49, True)])
def test_a_run_is_collapsed_below_half_its_held_out_questions_right(accuracy, collapsed,
                                                                    monkeypatch):
    monkeypatch.setattr(SM, "evaluate", lambda *args: SM.Evaluation(1.0, accuracy, 0.5))
    assert SM.train("1/sqrt(d_k)", 16, 100, "adam", 0.01, steps=1).collapsed == collapsed


def test_accuracy_needs_the_named_key_alone_at_the_top():
    spec = SM.ARMS["cap-10"]  # huge logits: many keys tie at the cap
    task = make_task(100)
    t = SM.tables(spec, task, params_for("cap-10", 100, 16, 1e4))
    ties = sum(1 for q in task.held_out
               if [t.S[q.ids[q.j_star]][ITEMS * a + b] for a, b in zip(q.ids, q.payloads)
                   ].count(10.0) > 1)
    assert ties > 0 and SM.evaluate(spec, task, t).accuracy <= 1 - ties / len(task.held_out)


# ------------------------------------------------------------------ the records

def committed_lines(name="stability.json"):
    with open(ST.RECORDS[name], encoding="utf-8") as f:
        return f.read().splitlines()


def run_line(record):
    return "  " + json.dumps(record, separators=(",", ":"))


@pytest.mark.parametrize("arm, octave", [("1/sqrt(d_k)", -3), ("cap-50", 1), ("qk-norm", -2)])
def test_a_committed_run_is_regenerated_byte_for_byte(arm, octave):
    lines = committed_lines()
    line = run_line(SS.record(SS.Spec("adam", arm, 16, 100, octave)))
    assert line in lines or line + "," in lines


def test_the_records_are_written_one_run_per_line_and_read_back_unchanged():
    records = SS.load(ST.RECORDS["stability.json"])
    assert SS.dumps(records).splitlines() == committed_lines()


@pytest.mark.slow
def test_a_small_plan_gives_the_same_bytes_with_any_jobs_and_the_committed_lines(tmp_path):
    paths = [tmp_path / f"jobs{n}.json" for n in (1, 2)]
    for n, path in zip((1, 2), paths):
        assert ST.main(["--seeds", "1", "--rates", "-1", "0", "--jobs", str(n),
                        "--json", str(path)]) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    committed = set(line.rstrip(",") for line in committed_lines())
    small = json.loads(paths[0].read_text())["runs"]
    assert len(small) == 8 and all(run_line(r) in committed for r in small)


def process_id(_):
    """The id of the process a run_all item runs in (picklable: a spawned worker imports it)."""
    return os.getpid()


def test_run_all_keeps_the_planned_order_with_a_pool():
    import multiprocessing
    items = [9.0, 1.0, 4.0, 16.0]
    assert SS.run_all(math.sqrt, items, jobs=2, weights=[1, 3, 2, 4]) == [3.0, 1.0, 2.0, 4.0]
    assert SS.run_all(math.sqrt, items, jobs=1) == [3.0, 1.0, 2.0, 4.0]
    # jobs = 2 runs in other processes, and ends them before it returns
    assert os.getpid() not in SS.run_all(process_id, items, jobs=2)
    assert multiprocessing.active_children() == []
    # jobs = 1 runs here, with no pool: a function that cannot be pickled is fine
    assert SS.run_all(process_id, items) == [os.getpid()] * 4
    assert SS.run_all(lambda x: x + 1, [1, 2], jobs=1) == [2, 3]


def test_run_all_reports_progress_by_weight_heaviest_first(monkeypatch):
    clock = iter([0.0, 8.0, 14.0, 20.0, 22.0])
    monkeypatch.setattr(SS.time, "monotonic", lambda: next(clock))
    heard, order = [], []

    def fn(x):
        order.append(x)
        return x.upper()
    assert SS.run_all(fn, ["a", "b", "c", "d"], 1, heard.append, [1, 3, 2, 4]) == [
        "A", "B", "C", "D"]
    assert order == ["d", "b", "c", "a"]  # the heaviest first
    # elapsed time x the weight left / the weight done: 8 x 6/4, 14 x 3/7, 20 x 1/9, 0
    assert heard == ["1 of 4 runs done, about 12 s left", "2 of 4 runs done, about 6 s left",
                     "3 of 4 runs done, about 2 s left", "4 of 4 runs done, about 0 s left"]
    clock = iter([0.0, 300.0, 600.0])
    heard.clear()
    SS.run_all(str, [1, 2], progress=heard.append)  # no weights: equal, in the given order
    assert heard == ["1 of 2 runs done, about 5 min left", "2 of 2 runs done, about 0 s left"]


def test_ctrl_c_in_run_all_says_how_many_were_done():
    def fn(x):
        if x == 2:
            raise KeyboardInterrupt
        return x
    with pytest.raises(SS.Stopped) as stopped:
        SS.run_all(fn, [1, 2, 3])
    assert (stopped.value.done, stopped.value.total) == (1, 3)
    assert str(stopped.value) == "1 of 3 runs done"


def test_the_estimate_of_the_time_left_is_in_seconds_below_two_minutes():
    assert [SS._eta(t) for t in (30.0, 119.4, 120.0, 185.0, 3600.0)] == [
        "30 s", "119 s", "2 min", "3 min", "60 min"]


def test_a_worker_of_the_pool_leaves_ctrl_c_to_the_main_process():
    import signal
    before = signal.getsignal(signal.SIGINT)
    try:
        SS._quiet_worker()
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_the_weights_are_the_measured_costs_per_step_heaviest_first():
    # ms per step as first measured (benchmarks/stability.py prints today's): QK-norm
    # 3.7 + 0.077 d_k, the others 1.2 + 0.042 d_k; they order the runs and estimate the time
    # left, nothing else
    weights = {(arm, d_k): SS._weight(SS.Spec("adam", arm, d_k, 100, 0))
               for arm in ("qk-norm", "qk-norm-g1", "1/sqrt(d_k)", "cap-10") for d_k in (16, 256)}
    assert_close([weights["qk-norm", 16], weights["qk-norm-g1", 256]],
                 [3.7 + 0.077 * 16, 3.7 + 0.077 * 256], rel=1e-15)
    assert_close([weights["1/sqrt(d_k)", 16], weights["cap-10", 256]],
                 [1.2 + 0.042 * 16, 1.2 + 0.042 * 256], rel=1e-15)


def test_measure_runs_the_plan_in_this_process_unless_asked_and_keeps_its_settings(
        monkeypatch):
    plan = SS.Plan("adam", ("1/sqrt(d_k)",), (4,), (100,), -2, -1, steps=2)
    records = SS.measure(plan)
    assert records == {"settings": records["settings"],
                       "runs": [SS.record(spec) for spec in SS.specs(plan)]}
    assert records["settings"]["octaves"] == [-2, -1] and records["settings"]["steps"] == 2
    committed = SS.load(ST.RECORDS["stability.json"])["settings"]
    assert SS.measure(SS.PUBLISHED["stability.json"]._replace(d_ks=(), seeds=()))[
        "settings"] == {**committed, "d_ks": [], "seeds": []}
    asked = []
    monkeypatch.setattr(SS, "run_all", lambda fn, items, jobs, *rest: asked.append(jobs) or [])
    SS.measure(plan)
    assert asked == [1]


def test_a_non_finite_run_s_record_has_no_final_values_and_counts_above_l_0():
    r = SS.record(SS.Spec("sgd", "1", 16, 100, 80, steps=5))
    assert (r["final_loss"], r["final_accuracy"], r["final_entropy"]) == (None, None, None)
    assert r["non_finite"] and r["collapsed"] and r["above_initial"]


def test_a_run_that_ends_at_its_initial_loss_is_not_above_it():
    # at rate 2^-1074 every Adam step rounds away: the weights never change
    r = SS.record(SS.Spec("adam", "1/sqrt(d_k)", 16, 100, -1074, steps=2))
    assert r["final_loss"] == r["initial_loss"] and not r["above_initial"]


# ------------------------------------------------------------------ the command line

@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--seeds", "11"], ["--dk", "0"],
                                  ["--dk", "4", "0"], ["--rates", "0", "21"],
                                  ["--rates", "2", "1"], ["--rates", "-21", "0"],
                                  ["--arms", "qk"], ["--jobs", "0"],
                                  ["--optimizer", "rmsprop"], ["--publish", "--dk", "16"],
                                  ["--publish", "--arms", "cap-50"],
                                  ["--publish", "--arms", "all", "--optimizer", "sgd"]],
                         ids=["no seeds", "too many seeds", "d_k 0", "a later d_k 0",
                              "rate too high", "rates reversed",
                              "rate too low", "arm name", "no jobs", "optimizer",
                              "publish at another d_k", "publish one arm", "publish sgd all"])
def test_the_command_line_rejects_bad_options_with_one_message(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        ST.main(argv)
    out, err = capsys.readouterr()
    assert (exit_info.value.code, out) == (2, "") and "Traceback" not in err
    assert err.startswith("python3 experiments/stability.py: ") and err.count("\n") == 1
    assert err.endswith(" (see python3 experiments/stability.py --help)\n"), err


def test_the_command_line_plans_what_it_is_asked_for(monkeypatch, capsys):
    asked = []

    def plan_only(plan, jobs=1, progress=None):
        asked.append((plan, jobs))
        raise SS.Stopped(0, 1)
    monkeypatch.setattr(ST, "measure", plan_only)
    for argv in ([], ["--jobs", "2"], ["--arms", "cap-50,1/d_k,cap-50"], ["--dk", "8", "8", "4"],
                 ["--seeds", "1", "--dk", "1"], ["--seeds", "10", "--rates", "-20", "-20"],
                 ["--rates", "20", "20"]):
        assert ST.main(argv) == 130
    capsys.readouterr()
    (default, one), (_, two), (named, _), (d_ks, _), (least, _), (most, _), (top, _) = asked
    assert (one, two) == (1, 2)  # one process unless asked
    assert named.arms == ("1/d_k", "cap-50")  # each once, in the page's order
    assert d_ks.d_ks == (8, 4) and default.d_ks == (16,)
    assert (least.seeds, least.d_ks) == ((100,), (1,))  # the smallest values each flag takes
    assert (most.seeds, most.low, most.high) == (tuple(range(100, 110)), -20, -20)
    assert (top.low, top.high) == (20, 20)


def test_the_docs_data_needs_no_timing_file(monkeypatch, tmp_path):
    monkeypatch.setattr(ST, "TIMING", str(tmp_path / "none.json"))
    assert ST.docs_data()["timing"] == {}


def test_an_output_path_is_checked_before_any_run(tmp_path, monkeypatch, capsys):
    def no_runs(*args, **kwargs):
        raise AssertionError("the sweep started")
    monkeypatch.setattr(ST, "measure", no_runs)
    for path in (tmp_path / "missing" / "x.json", tmp_path):
        with pytest.raises(SystemExit) as exit_info:
            ST.main(["--json", str(path)])
        assert exit_info.value.code == 2 and "--json: cannot write" in capsys.readouterr().err


class FakeClock:
    """The time module as stability.py reads it, with a clock that reads given values."""
    def __init__(self, *readings):
        self.readings = iter(readings)

    def monotonic(self):
        return next(self.readings)

    @staticmethod
    def strftime(pattern):
        return "2026-01-02" if pattern == "%Y-%m-%d" else pattern


def small_records(arm="1/sqrt(d_k)", d_k=16, name="stability.json"):
    records = SS.load(ST.RECORDS[name])
    return {"settings": {**records["settings"], "arms": [arm], "d_ks": [d_k]},
            "runs": [r for r in records["runs"] if (r["arm"], r["d_k"]) == (arm, d_k)]}


@pytest.mark.parametrize("arms, name", [("default", "stability.json"),
                                        ("all", "stability_all.json")])
def test_publish_writes_the_records_and_keeps_the_time_of_each(arms, name, monkeypatch,
                                                                 tmp_path, capsys):
    import platform
    import types
    reference = tmp_path / "stability.json"
    reference.write_text(SS.dumps(small_records()))  # --arms all reads its reference
    records = small_records("cap-10", name="stability_all.json") if arms == "all" else \
        small_records()
    for each in ST.RECORDS:
        monkeypatch.setitem(ST.RECORDS, each, str(tmp_path / f"new_{each}"))
    monkeypatch.setitem(ST.RECORDS, "stability.json", str(reference))
    timing = tmp_path / "timing.json"
    timing.write_text('{"other.json": {"runs": 1}}\n')  # an earlier publish's entry stays
    monkeypatch.setattr(ST, "TIMING", str(timing))
    fake_os = types.SimpleNamespace(**{**vars(os), "getloadavg": lambda: (4.126, 3.0, 2.0)})
    times = iter([(1.0, 0.5, 10.0, 0.25, 5.0), (2.0, 0.75, 20.345, 0.5, 9.0)])  # 5th: elapsed
    fake_os.times = lambda: next(times)
    monkeypatch.setattr(ST, "os", fake_os)
    monkeypatch.setattr(ST, "time", FakeClock(100.0, 100.0, 107.26))
    monkeypatch.setattr(ST, "measure", lambda plan, jobs, progress: records)
    assert ST.main(["--publish", "--arms", arms, "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    written = tmp_path / f"new_{name}" if name != "stability.json" else reference
    assert written.read_text() == SS.dumps(records)
    kept = json.loads(timing.read_text())
    assert timing.read_text() == json.dumps(kept, indent=1, sort_keys=True) + "\n"  # diffable
    plan = SS.PUBLISHED[name]
    assert kept == {"other.json": {"runs": 1}, name: {
        "cpu_seconds": 11.8, "wall_seconds": 7.3, "jobs": 2, "python": platform.python_version(),
        "runs": len(SS.specs(plan)), "load_average": [4.13, 4.13], "cpus": os.cpu_count(),
        "date": "2026-01-02"}}
    assert err.endswith(f"CPU time 11.8 s, wall 7.3 s, jobs 2 (Python "
                        f"{platform.python_version()})\n")
    assert f"--publish: will overwrite experiments/{name}" in err
    assert ("== Adam: each arm against 1/sqrt(d_k), seed by seed" in out) == (arms == "all")


def test_the_first_publish_starts_the_timing_file(monkeypatch, tmp_path, capsys):
    records = small_records()
    for each in ST.RECORDS:
        monkeypatch.setitem(ST.RECORDS, each, str(tmp_path / each))
    monkeypatch.setattr(ST, "TIMING", str(tmp_path / "timing.json"))
    monkeypatch.setattr(ST, "measure", lambda plan, jobs, progress: records)
    import types  # a platform without os.getloadavg: no load average is kept
    monkeypatch.setattr(ST, "os", types.SimpleNamespace(
        **{k: v for k, v in vars(os).items() if k != "getloadavg"}))
    assert ST.main(["--publish", "--optimizer", "sgd"]) == 0
    capsys.readouterr()
    kept = json.loads((tmp_path / "timing.json").read_text())
    assert list(kept) == ["stability_sgd.json"]
    assert kept["stability_sgd.json"]["load_average"] == []


def test_json_writes_the_records_to_a_writable_path(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(ST, "measure", lambda plan, jobs, progress: small_records())
    path = tmp_path / "runs.json"
    assert ST.main(["--json", str(path)]) == 0
    assert path.read_text() == SS.dumps(small_records())
    out, err = capsys.readouterr()
    assert "== Adam: per arm and d_k" in out and "--publish" not in err


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_one_line_redrawn_on_a_terminal_and_a_line_every_10_s_elsewhere(
        monkeypatch):
    monkeypatch.setattr(ST, "time", FakeClock(50.0, 51.0, 59.9, 60.0, 75.0))
    piped = io.StringIO()
    monkeypatch.setattr(ST.sys, "stderr", piped)
    progress = ST._progress_printer()
    for message in ("a", "b", "c", "d"):
        progress(message)
    assert piped.getvalue() == "[    10 s] c\n[    25 s] d\n"  # 1 s and 9.9 s: too soon
    ST._clear_progress()
    assert piped.getvalue().endswith("d\n")  # nothing to clear in a pipe
    terminal = Terminal()
    monkeypatch.setattr(ST.sys, "stderr", terminal)
    monkeypatch.setattr(ST, "time", FakeClock(0.0, 3.0))
    ST._progress_printer()("x" * 95)
    assert terminal.getvalue() == "\r[     3 s] " + "x" * 90
    ST._clear_progress()
    assert terminal.getvalue().endswith("\r" + " " * 100 + "\r")


def test_ctrl_c_says_how_far_the_sweep_got_and_exits_130(monkeypatch, capsys):
    def stopped(*args, **kwargs):
        raise SS.Stopped(5, 132)
    monkeypatch.setattr(ST, "measure", stopped)
    assert ST.main([]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python3 experiments/stability.py: interrupted after 5 of 132 runs; nothing written")


def test_ctrl_c_outside_the_runs_is_one_line_and_130(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(ST, "measure", interrupted)
    assert ST.main([]) == 130
    assert capsys.readouterr().err == "python3 experiments/stability.py: interrupted\n"


@pytest.mark.slow
def test_ctrl_c_stops_a_pool_of_workers_with_one_line(tmp_path):
    import signal
    import time
    # SIGINT at its default in the child, as in a terminal, even when this run of the tests
    # ignores it (a background job does, and an ignored signal stays ignored in a child)
    process = subprocess.Popen([sys.executable, "experiments/stability.py", "--jobs", "2",
                                "--json", str(tmp_path / "x.json")], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and out == ""
    assert err.splitlines()[-1].startswith(
        "python3 experiments/stability.py: interrupted after ")
    assert "Traceback" not in err and not (tmp_path / "x.json").exists()


# ------------------------------------------------------------------ the statistics, by hand

def runs_of(losses, collapsed=None, initial=2.0):
    """Records of one seed at octaves 0, 1, ...: final losses (None: non-finite)."""
    collapsed = collapsed or [False] * len(losses)
    return [{"octave": k, "final_loss": l, "initial_loss": initial, "collapsed": c}
            for k, (l, c) in enumerate(zip(losses, collapsed))]


def test_the_best_rate_is_the_lowest_loss_and_a_tie_goes_to_the_smaller_rate():
    assert SS.seed_statistics(runs_of([0.3, 0.2, 0.2, 0.5])).best == 1
    assert SS.seed_statistics(runs_of([None, 0.4, 0.3])).best == 2  # non-finite: not best


def test_the_edge_is_where_every_higher_rate_collapsed():
    c = [False, True, False, True, True]
    assert SS.seed_statistics(runs_of([0.1] * 5, c)).edge == 3  # 1 collapsed, 2 did not
    assert SS.seed_statistics(runs_of([0.1] * 3, [True] * 3)).edge == 0
    assert SS.seed_statistics(runs_of([0.1] * 3, [True, True, False])).edge is None


def test_the_band_is_the_unbroken_run_within_a_tenth_of_a_nat_and_says_if_it_is_cut():
    s = SS.seed_statistics(runs_of([0.9, 0.3, 0.2, 0.3, 0.31, 0.2999]))
    assert (s.band, s.band_censored) == (2, False)  # 0.31 breaks it: 0.11 above the best
    s = SS.seed_statistics(runs_of([0.25, 0.2, 0.3, 0.2, 0.9]))
    assert (s.band, s.band_censored) == (3, True)  # reaches the lowest rate
    s = SS.seed_statistics(runs_of([0.9, 0.2, 0.9]))
    assert (s.band, s.band_censored) == (0, False)
    s = SS.seed_statistics(runs_of([0.9, 0.2, 0.25]))
    assert (s.band, s.band_censored) == (1, True)  # reaches the highest rate
    s = SS.seed_statistics(runs_of([0.1, 0.0, 0.1, 0.6]))
    assert (s.band, s.band_censored) == (2, True)  # exactly 0.1 above the best is inside
    s = SS.seed_statistics(runs_of([0.2, 0.7, 0.8, 0.25]))
    assert (s.band, s.band_censored) == (0, True)  # the band does not wrap around the grid


def test_lr_sensitivity_clips_at_l_0_and_takes_its_minimum_over_the_window():
    runs = runs_of([0.5, 0.25, 3.0, None])  # l_0 = 2: 3.0 and the non-finite count 2
    s = SS.seed_statistics(runs, (None, (0, 1), (2, 3)))
    assert s.lr_sensitivity[0] == (0.25 + 0.0 + 1.75 + 1.75) / 4
    assert s.lr_sensitivity[1] == 0.25 / 2  # l* = 0.25 inside the window
    # every run of the window above l_0: l* = 3.0 (the paper's minimum, not clipped), and
    # both count 2, so the formula taken literally gives 2 - 3; no window of the records is so
    assert s.lr_sensitivity[2] == -1.0
    assert SS.seed_statistics(runs_of([None, None]), (None,)).lr_sensitivity == (None,)


def test_a_seed_s_statistics_do_not_depend_on_the_order_of_its_runs():
    runs = runs_of([0.9, 0.3, 0.2, 0.25, 2.5, 3.0], [False] * 4 + [True] * 2)
    want = SS.seed_statistics(runs, (None, (1, 3)))
    assert want == SS.SeedStatistics(2, 4, 2, False, want.lr_sensitivity)
    for seed in range(5):
        shuffled = runs[:]
        random.Random(seed).shuffle(shuffled)
        assert SS.seed_statistics(shuffled, (None, (1, 3))) == want


def test_over_the_seeds_a_beyond_the_grid_edge_ranks_above_every_rate():
    stats = {seed: SS.SeedStatistics(0, edge, 2, False, (0.5,))
             for seed, edge in zip(range(5), [1, 2, None, None, None])}
    summary = SS.summaries(stats)
    assert summary["edge"].median is None and summary["edge"].low == 1
    assert summary["edge_above_best"].misses == 3 and summary["censored"] == 0
    assert summary["best"].median == 0 and summary["lr_sensitivity"][0].median == 0.5
    one = SS.summaries({100: SS.SeedStatistics(-3, 1, 2, True, (0.5, 0.25))})  # one seed
    assert one["edge_above_best"].median == 4 and one["censored"] == 1
    assert [s.median for s in one["lr_sensitivity"]] == [0.5, 0.25]


def test_paired_counts_and_offsets_compare_seed_by_seed():
    def stats(edges, bands, lrs):
        return {seed: SS.SeedStatistics(0, e, b, False, (l,))
                for seed, e, b, l in zip(range(100, 105), edges, bands, lrs)}
    reference = stats([1, 1, None, 2, None], [3, 3, 3, 3, 3], [0.5, 0.5, 0.5, 0.5, 0.5])
    other = stats([2, 1, 3, None, None], [4, 2, 3, 3, 3], [0.4, 0.4, 0.6, 0.5, 0.3])
    edge = SS.paired_counts(reference, other, "edge")
    assert (edge["higher"], edge["lower"], edge["tied"], edge["both beyond"]) == (2, 1, 1, 1)
    assert edge["p"] == 1.0
    band = SS.paired_counts(reference, other, "band")
    assert (band["higher"], band["lower"], band["tied"]) == (1, 1, 3)
    lr = SS.paired_counts(reference, other, "lr", 0)
    assert (lr["higher"], lr["lower"], lr["tied"]) == (1, 3, 1)
    assert SS.edge_offsets(reference, other) == [1, 0, None, None, None]
    assert SS.paired_counts(reference, other, "lr") == lr  # the first window by default
    assert SS.edge_offsets(stats([1], [3], [0.5]), stats([3], [3], [0.5])) == [2]


def test_by_seed_groups_the_runs_of_each_arm_d_k_and_seed():
    runs = [dict(r, optimizer="adam", arm=arm, d_k=16, seed=seed)
            for arm in ("1/sqrt(d_k)", "1/d_k") for seed in (100, 101)
            for r in runs_of([0.5, 0.2, 3.0], [False, False, True])]
    grouped = SS.by_seed(runs)
    assert list(grouped) == [("adam", "1/sqrt(d_k)", 16), ("adam", "1/d_k", 16)]
    assert list(grouped["adam", "1/d_k", 16]) == [100, 101]
    assert grouped["adam", "1/d_k", 16][101].edge == 2


def test_the_published_plans_are_the_committed_records_settings():
    for name, plan in SS.PUBLISHED.items():
        settings = SS.load(ST.RECORDS[name])["settings"]
        assert (settings["optimizer"], tuple(settings["arms"]), tuple(settings["d_ks"]),
                tuple(settings["seeds"]), tuple(settings["octaves"]), settings["steps"]) == (
            plan.optimizer, plan.arms, plan.d_ks, plan.seeds, (plan.low, plan.high), plan.steps)
    assert SS.D_KS == (16, 64, 256) and SS.SEEDS == tuple(range(100, 110))


def test_the_plans_and_the_paper_s_window_on_each_grid():
    assert [len(SS.specs(p)) for p in SS.PUBLISHED.values()] == [1560, 1170, 1560]
    assert SS.paper_window(SS.PUBLISHED["stability_sgd.json"]) is None
    assert SS.paper_window(SS.Plan("adam", ("1",), (16,), (100,), 0, 3)) is None  # 1 to 8
    assert SS.paper_window(SS.Plan("adam", ("1",), (16,), (100,), -12, -1)) == (-11, -2)
    assert SS.octaves(SS.PUBLISHED["stability_sgd.json"]) == list(range(-2, 11))
    assert SS.specs(SS.Plan("sgd", ("1/d_k",), (16,), (100, 101), 0, 1)) == [
        SS.Spec("sgd", "1/d_k", 16, seed, k) for seed in (100, 101) for k in (0, 1)]


# ------------------------------------------------------------------ the tables' code

@pytest.fixture(scope="module")
def committed():
    return {name: SS.load(path) for name, path in ST.RECORDS.items()}


@pytest.fixture(scope="module")
def data():
    return ST.docs_data()


def text_cells(line):
    return re.split(r"\s{2,}", line.strip())


def markdown_cells(block):
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in block.splitlines()[2:]]


def test_the_report_prints_every_table_of_the_pages_as_text(data):
    lines = SX.report(data)
    blocks = SX.blocks(data)
    titles = [line for line in lines if line.startswith("== ")]
    adam = ["per arm and d_k: median [interval] over the seeds",
            "at the best rate and at the collapse edge", "one octave below the edge",
            "behind the norm and the cap", "each arm against 1/sqrt(d_k), seed by seed",
            "1/d_k's edge against the identity's guide",
            "unscaled's edge against the identity's guide"]
    assert titles == [f"== Adam: {t}" for t in adam] + [f"== SGD: {t}" for t in adam[:-1]]
    assert lines[-1] != "" and all(lines[i - 1] == "" for i, line in enumerate(lines)
                                   if line.startswith("== ") and i > 0)
    sections, name = {}, None
    for line in lines:
        if line.startswith("== "):
            name, sections[line] = line, []
        elif line:
            sections[name].append(text_cells(line))
    want = {"== Adam: per arm and d_k: median [interval] over the seeds":
            markdown_cells(blocks["stability-table"])
            + markdown_cells(blocks["stability-all-table"])[3:],
            "== Adam: at the best rate and at the collapse edge":
            markdown_cells(blocks["stability-edge"])
            + markdown_cells(blocks["stability-all-edge"]),
            "== Adam: each arm against 1/sqrt(d_k), seed by seed":
            markdown_cells(blocks["stability-paired"])
            + markdown_cells(blocks["stability-all-paired"]),
            "== Adam: 1/d_k's edge against the identity's guide":
            markdown_cells(blocks["stability-offset"]),
            "== Adam: unscaled's edge against the identity's guide":
            markdown_cells(blocks["stability-all-offset"]),
            "== SGD: per arm and d_k: median [interval] over the seeds":
            markdown_cells(blocks["stability-sgd-table"]),
            "== SGD: at the best rate and at the collapse edge":
            markdown_cells(blocks["stability-sgd-edge"]),
            "== SGD: each arm against 1/sqrt(d_k), seed by seed":
            markdown_cells(blocks["stability-sgd-paired"]),
            "== SGD: 1/d_k's edge against the identity's guide":
            markdown_cells(blocks["stability-sgd-offset"])}
    for title, rows in want.items():
        assert sections[title][1:] == rows, title  # the header first, then the rows
    below = sections["== Adam: one octave below the edge"][1:]
    assert below[:12] == markdown_cells(blocks["stability-below"])
    assert [r[0] for r in below[12:]] == ["unscaled"] * 3 + ["soft-cap 10"] * 3  # g = 1: no edge
    behind = sections["== Adam: behind the norm and the cap"][1:]
    assert behind[:6] == markdown_cells(blocks["stability-behind"])
    assert [r[0] for r in behind[6:]] == ["soft-cap 10"] * 3


def test_the_tables_keep_the_page_s_order_whatever_order_the_records_come_in(committed, data):
    shuffled = SX.tables({"sgd": committed["stability_sgd.json"],
                          "adam-all": committed["stability_all.json"],
                          "adam": committed["stability.json"]}, data["timing"])
    for key in ("rows", "paired", "offsets", "growth", "seeds"):
        assert shuffled[key] == data[key], key
    assert SX.values(shuffled) == SX.values(data) and SX.blocks(shuffled) == SX.blocks(data)
    assert [(r["optimizer"], r["arm"], r["d_k"]) for r in data["offsets"]] == [
        ("adam", "1/d_k", 16), ("adam", "1/d_k", 64), ("adam", "1/d_k", 256),
        ("adam", "1", 16), ("adam", "1", 64), ("adam", "1", 256),
        ("sgd", "1/d_k", 16), ("sgd", "1/d_k", 64), ("sgd", "1/d_k", 256)]


def part(records, arms, d_ks):
    """The records of some arms and d_k of a sweep, as a sweep of their own."""
    runs = [r for r in records["runs"] if r["arm"] in arms and r["d_k"] in d_ks]
    return {"settings": {**records["settings"], "arms": list(arms), "d_ks": list(d_ks)},
            "runs": runs}


def test_a_sweep_of_one_capped_arm_gives_the_tables_it_can(committed):
    # the command line's case: whatever arms and d_k were asked for, no reference
    data = SX.tables({"run": part(committed["stability_sgd.json"], ("cap-50",), (16,))}, {})
    assert data["paired"] == [] and data["offsets"] == [] and data["growth"] == []
    values = SX.values(data)
    assert values["stability.sgd.edge.cap50"] == "5" and "stability.sgd.offset" not in values
    assert "stability.sgd.logit-edge.range" not in values  # no arm whose logits are free
    assert "stability.gap.range" not in values and "stability.edge.cap50" not in values
    titles = [line for line in SX.report(data) if line.startswith("== ")]
    assert titles == ["== SGD: per arm and d_k: median [interval] over the seeds",
                      "== SGD: at the best rate and at the collapse edge",
                      "== SGD: one octave below the edge", "== SGD: behind the norm and the cap"]
    assert SX.blocks(data)["stability-table"].count("\n") == 1  # a header and its rule


def test_a_table_without_rows_is_left_out_of_the_report(committed):
    data = SX.tables({"run": part(committed["stability.json"], ("1/sqrt(d_k)",), (16,))}, {})
    titles = [line for line in SX.report(data) if line.startswith("== ")]
    assert "== Adam: at the best rate and at the collapse edge" in titles
    assert not any("behind the norm and the cap" in title for title in titles)  # no such arm


def test_the_figure_of_logit_growth_needs_the_reference_and_its_edge(committed):
    adam = committed["stability.json"]
    assert SX.tables({"run": part(adam, ("qk-norm",), (64,))}, {})["growth"] == []
    never = part(adam, ("1/sqrt(d_k)",), (64,))
    never["runs"] = [{**r, "collapsed": False} for r in never["runs"]]  # no seed collapses
    assert SX.tables({"run": never}, {})["growth"] == []


def test_a_seed_whose_only_collapse_is_the_top_rate_and_a_run_cut_short(committed):
    # seed 100: only 2^2 collapsed (its edge is the top rate, with no run above it); seed
    # 101: its run at 2^-3 went non-finite after 50 steps
    reference = part(committed["stability.json"], ("1/sqrt(d_k)",), (64,))
    runs = []
    for r in reference["runs"]:
        if r["seed"] == 100:
            r = {**r, "collapsed": r["octave"] == 2}
        if (r["seed"], r["octave"]) == (101, -3):
            r = {**r, "final_loss": None, "final_accuracy": None, "final_entropy": None,
                 "non_finite": True, "above_initial": True, "collapsed": True,
                 "largest": r["largest"][:50]}
        runs.append(r)
    data = SX.tables({"run": {**reference, "runs": runs}}, {})
    row = data["rows"][0]
    assert row["edges"][0] == 2 and row["accuracy_above"].n == 9  # seed 100 has none above
    by_seed = {}
    for r in runs:
        by_seed.setdefault(r["seed"], []).append(r)
    shares = []
    for seed, rs in by_seed.items():
        edge = row["edges"][seed - 100]
        star = min(r["final_loss"] for r in rs if r["final_loss"] is not None)
        terms = [(r["octave"] >= edge, (r["initial_loss"] if r["final_loss"] is None
                                        else min(r["final_loss"], r["initial_loss"])) - star)
                 for r in rs]
        shares.append(math.fsum(t for up, t in terms if up) / math.fsum(t for _, t in terms))
    assert row["lrs_share"].median == statistics.median(shares)
    growth = {g["octave"]: g["median"] for g in data["growth"]}
    assert len(growth[-3]) == 50 and len(growth[-4]) == 200  # the shortest run bounds it


def test_a_cell_prints_its_median_and_interval_with_the_digits_it_supports():
    def summary(m, lo, hi):
        return Summary(m, lo, hi, 0.98, 0, 10)
    assert SX._percent_cell(summary(0.5, 0.5, 0.5)) == "50% [50%, 50%]"
    assert SX._percent_cell(summary(0.6, 0.6, 0.6)) == "60% [60%, 60%]"  # 1.01 x 60 is 61
    assert SX._percent_cell(summary(0.25, 0.125, 0.5)) == "25% [12%, 50%]"
    assert SX._percent_cell(summary(None, 0.1, None)) == "-"
    assert SX._number_cell(summary(0.123, 0.123, 0.123)) == "0.12 [0.12, 0.12]"
    assert SX._number_cell(summary(0.5, None, 0.7)) == "-"
    assert SX._number_cell(summary(0.5, 0.4, 0.7)) == "0.50 [0.40, 0.70]"
    assert [SX._p(p) for p in (0.002, 0.0039, 0.01, 0.5, 1.0)] == [
        "0.002", "0.0039", "0.01", "0.50", "1.00"]
    assert SX._sig_cell(summary(1234.5, 9.87, None), 3) == "-"
    assert SX._gap_cell(summary(2, 1, None)) == "2 [1, -]"
