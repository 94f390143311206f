"""Tests for experiments/learning.py.

- the gradient: against the textbook route through attention.attention_backward (the
  oracle lives here, not in the experiment) and against central finite differences;
- the optimisers against their textbook forms;
- the general identity: scale c' from a W at the mapped rate (and eps) retraces scale c;
- the pairing of arms, the streams, determinism, the variance at initialisation;
- the defects of issue 16, each with a test that fails on the old behaviour;
- the stored rates and records, the tables, the figure and the Markdown blocks.

Training runs take seconds: those tests are marked slow.
"""

import ast
import doctest
import json
import math
import os
import random

import pytest
from helpers import assert_close

import attention
import learning as L
import softmax
import stats
from attention import attention_backward, attention_steps, matmul, transpose
from softmax import log_softmax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "experiments", "learning.py")


def batch_of(task, count, seed=7):
    rng = random.Random(seed)
    return [L._draw_example(task, rng) for _ in range(count)]


def logit_matrix(params):
    """M^T = (W_Q W_K^T)^T, the form the training code holds it in."""
    return L._logit_matrix_transposed(params)


# --------------------------------------------------------- the textbook route (oracle)

def textbook_gradients(params, batch, c, readout):
    """Mean loss and (dW_Q, dW_K) the long way: q = x_q W_Q, K = X W_K, attention_backward
    gives dQ and dK, then dW_Q = x_q^T dQ and dW_K = X^T dK.  The pointer loss -log p_j*
    goes through V = I (so O = P) and dL/dO = -e_j* / p_j*."""
    losses, dW_Q, dW_K = [], [], []
    for e in batch:
        q, K = matmul([e.x_q], params[0]), matmul(e.X, params[1])
        if readout == "pointer":
            V = [[float(i == j) for j in range(L.ITEMS)] for i in range(L.ITEMS)]
            p = attention_steps(q, K, V, scale=c).output[0][e.j_star]
            dO = [[-1.0 / p if j == e.j_star else 0.0 for j in range(L.ITEMS)]]
            losses.append(-math.log(p))
        else:
            V = [[float(b == j) for j in range(L.ITEMS)] for b in e.payloads]
            z = [L.BETA * o for o in attention_steps(q, K, V, scale=c).output[0]]
            t = e.payloads[e.j_star]
            dO = [[L.BETA * (p - (i == t)) for i, p in enumerate(softmax.softmax(z))]]
            losses.append(-log_softmax(z)[t])
        grads = attention_backward(q, K, V, dO, scale=c)
        dW_Q.append(matmul(transpose([e.x_q]), grads.dQ))
        dW_K.append(matmul(transpose(e.X), grads.dK))

    def mean(As):
        return [[math.fsum(column) / len(As) for column in zip(*rows)] for rows in zip(*As)]
    return math.fsum(losses) / len(batch), (mean(dW_Q), mean(dW_K))


CASES = [(d_k, scale) for d_k in (4, 24) for scale in L.SCALES]


@pytest.mark.parametrize("readout", L.READOUTS)
@pytest.mark.parametrize("d_k, scale", CASES, ids=[f"d_k={d}, c={s}" for d, s in CASES])
def test_fused_gradient_equals_the_textbook_route_through_attention_backward(d_k, scale,
                                                                             readout):
    task, params = L._make_task(3), L._initial_weights(3, d_k)
    batch, c = batch_of(task, 5), stats.scale_factor(scale, d_k)
    loss, grads = L._loss_and_gradients(params, logit_matrix(params), batch, c, readout)
    want_loss, want = textbook_gradients(params, batch, c, readout)
    assert_close(loss, want_loss, rel=1e-13)
    for got, ref in zip(grads, want):  # different roundings of the same sums
        assert_close(got, ref, abs=1e-13 * max(abs(v) for row in ref for v in row))


@pytest.mark.parametrize("readout", L.READOUTS)
@pytest.mark.parametrize("scale", ["1/sqrt(d_k)", "1"])
def test_fused_gradient_matches_central_finite_differences(scale, readout):
    d_k, h = 6, 1e-6
    task, params = L._make_task(5), L._initial_weights(5, d_k)
    batch, c = batch_of(task, 3), stats.scale_factor(scale, d_k)
    _, grads = L._loss_and_gradients(params, logit_matrix(params), batch, c, readout)

    def loss(P):
        return L._loss_and_gradients(P, logit_matrix(P), batch, c, readout)[0]
    rng = random.Random(0)
    for which in (0, 1):  # W_Q, then W_K
        for _ in range(5):
            a, b = rng.randrange(L.D_MODEL), rng.randrange(d_k)
            plus, minus = ([[row[:] for row in W] for W in params] for _ in range(2))
            plus[which][a][b] += h
            minus[which][a][b] -= h
            fd = (loss(plus) - loss(minus)) / (2 * h)
            # truncation h^2 L''' / 6 and rounding eps L / h: both below 1e-8 here
            assert_close(grads[which][a][b], fd, abs=1e-7, rel=1e-6)


def test_pointer_gradient_is_the_softmax_backward_of_minus_e_over_p():
    # -log p_j through O = P: dL/dO = -e_j / p_j, and the Jacobian turns it into p - e_j
    task, params = L._make_task(1), L._initial_weights(1, 16)
    example = task.held_out[0]
    loss, dS, steps = L._example_gradient(logit_matrix(params), example, 0.25, "pointer")
    p, j = steps.weights[0], example.j_star
    identity = [[float(r == c) for c in range(L.ITEMS)] for r in range(L.ITEMS)]
    via_jacobian = attention.score_gradient([p], identity, [[-1.0 / p[j] if i == j else 0.0
                                                             for i in range(L.ITEMS)]])[0]
    assert_close(dS, via_jacobian, abs=1e-15)
    assert_close(loss, -math.log(p[j]), rel=1e-14)


@pytest.mark.parametrize("shape", [(1, 16, 8), (16, 16, 256), (8, 16, 64)],
                         ids=["1x16 by 16x8", "16x16 by 16x256", "8x16 by 16x64"])
def test_the_private_products_round_exactly_like_attention_matmul(shape):
    # the training loop's one core: the same math.fsum of the same products, bit for bit
    r, d, s = shape
    rng = random.Random(r * d * s)
    A = [[rng.gauss(0, 1) * 2.0 ** rng.randrange(-30, 30) for _ in range(d)] for _ in range(r)]
    B = [[rng.gauss(0, 1) for _ in range(s)] for _ in range(d)]
    assert L._dots(A, transpose(B)) == matmul(A, B)
    params = L._initial_weights(3, s)
    assert L._logit_matrix_transposed(params) == transpose(matmul(params[0],
                                                                  transpose(params[1])))


# ------------------------------------------------------------------------ optimisers

def test_sgd_step_moves_each_weight_by_minus_lr_times_its_gradient():
    new, state = L._sgd(0.5)(([[1.0, -2.0]], [[0.5]]), ([[0.25, 4.0]], [[-1.0]]), None, 1)
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
    params, step, state = (start,), L._adam(0.01), None
    for t, g in enumerate(sequence, start=1):
        params, state = step(params, (g,), state, t)
    want = [[textbook_adam(start[r][c], [g[r][c] for g in sequence], 0.01) for c in range(3)]
            for r in range(2)]
    assert_close(params[0], want, abs=1e-15)  # the folded form rounds in another order


# ------------------------------------------------------------ the general identity

PAIRS = [(a, b) for i, a in enumerate(L.SCALES) for b in L.SCALES[i + 1:]]


def power_of_two(x):
    return math.frexp(x)[0] == 0.5


def retrace(d_k, scale, to_scale, optimizer, lr, steps=20, seed=101):
    """A run of `scale` from W, and of `to_scale` from a W at the mapped rate and eps."""
    e = L.equivalent_run(d_k, scale, to_scale, optimizer, lr)
    a = L.train(seed, d_k, scale=scale, optimizer=optimizer, lr=lr, max_steps=steps,
                stop_at_target=False)
    b = L.train(seed, d_k, scale=to_scale, optimizer=optimizer, lr=e.lr, eps=e.eps,
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


@pytest.mark.parametrize("optimizer", L.OPTIMIZERS)
def test_scaled_and_unscaled_retrace_each_other_at_d_k_16(optimizer):
    # the fast case: the paper's two arms, a = 1/2, bit for bit over 10 steps (the slow tests
    # below run every pair over 20)
    lr = L.tuned_rate(optimizer, "1/sqrt(d_k)", 16)
    assert_bit_identical(*retrace(16, "1/sqrt(d_k)", "1", optimizer, lr, steps=10), steps=10)


IDENTITY_CASES = [(s, t, o, d_k) for s, t in PAIRS for o in L.OPTIMIZERS for d_k in (16, 256)]
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
    lr = L.tuned_rate(optimizer, scale, d_k)
    e, a, b = retrace(d_k, scale, to_scale, optimizer, lr)
    assert len(a.losses) == len(b.losses) == 20 and a.accuracies == b.accuracies
    if power_of_two(e.init_factor):
        assert_bit_identical(e, a, b)
        return
    assert gap(*retrace(d_k, scale, to_scale, optimizer, lr / 4)[1:], e.init_factor) <= 1e-12
    ulp = L.train(101, d_k, scale=scale, optimizer=optimizer, lr=lr, max_steps=20,
                  stop_at_target=False, init_factor=1 + 2.0 ** -52)
    assert gap(a, b, e.init_factor) <= max(10 * gap(a, ulp), 1e-14)


def test_the_identity_needs_the_rate_mapping():
    # the control: the rescaled start at the same rate is another run after one step
    _, a, b = retrace(16, "1/sqrt(d_k)", "1", "sgd", 1.0, steps=3)
    unmapped = L.train(101, 16, scale="1", optimizer="sgd", lr=1.0, init_factor=0.5,
                       max_steps=3, stop_at_target=False)
    assert unmapped.losses[0] == a.losses[0] == b.losses[0]  # the same function at the start
    assert unmapped.losses[1:] != a.losses[1:]


@pytest.mark.parametrize("d_k", [16, 64, 256], ids=lambda d: f"d_k={d}")
def test_the_old_unscaled_identity_is_the_case_c_prime_equal_1(d_k):
    # "unscaled from W is scaled from d_k^(1/4) W, SGD at sqrt(d_k) times the rate, Adam at
    # d_k^(1/4) times the rate with eps divided by d_k^(1/4)"
    root = d_k ** 0.25
    sgd = L.equivalent_run(d_k, "1", "1/sqrt(d_k)", "sgd", 0.1)
    adam = L.equivalent_run(d_k, "1", "1/sqrt(d_k)", "adam", 0.01, eps=1e-8)
    assert_close([sgd.init_factor, sgd.lr, adam.lr, adam.eps],
                 [root, 0.1 * math.sqrt(d_k), 0.01 * root, 1e-8 / root], rel=1e-15)


# ------------------------------------------------- the pairing, streams, determinism

def first_steps(monkeypatch, seed, d_k, scale):
    """The first batch and the weights that the training code hands to the gradient."""
    seen = []
    original = L._loss_and_gradients

    def spy(params, M, batch, c, readout):
        seen.append(([list(map(list, W)) for W in params], list(batch)))
        return original(params, M, batch, c, readout)
    monkeypatch.setattr(L, "_loss_and_gradients", spy)
    L.train(seed, d_k, scale=scale, optimizer="sgd", lr=0.5, max_steps=1, stop_at_target=False)
    monkeypatch.undo()
    return seen[0]


def test_every_arm_of_a_seed_gets_the_same_first_batch_and_initial_weights(monkeypatch):
    # through train(): the scale changes neither the questions nor the starting weights
    runs = [first_steps(monkeypatch, 100, 16, s) for s in L.SCALES]
    assert all(run == runs[0] for run in runs[1:])
    other_seed = first_steps(monkeypatch, 101, 16, L.SCALES[0])
    other_d_k = first_steps(monkeypatch, 100, 32, L.SCALES[0])
    assert other_seed[0] != runs[0][0] and other_seed[1] != runs[0][1]  # the test can fail
    assert other_d_k[1] == runs[0][1] and len(other_d_k[0][0][0]) == 32  # same questions


def test_held_out_questions_differ_from_the_training_stream():
    task = L._make_task(100)
    stream = random.Random("learning:train:100")

    def key(e):
        return tuple(e.ids), tuple(e.payloads), e.j_star
    train = {key(L._draw_example(task, stream)) for _ in range(300)}
    held = {key(e) for e in task.held_out}
    assert len(held) == L.HELD_OUT and not train & held


def test_the_same_seed_gives_the_same_run_and_another_seed_does_not():
    def run(seed):
        return L.train(seed, 64, scale="1", optimizer="adam", lr=0.01, max_steps=4,
                       stop_at_target=False)
    assert run(104) == run(104) and run(104).losses != run(105).losses
    assert L.make_task(3) == L.make_task(3) != L.make_task(4)


def test_unscaled_logit_variance_is_d_k_even_though_d_k_exceeds_d_model():
    # With |x|^2 = |y|^2 = d_model and W entries N(0, 1/d_model), x W_Q W_K^T y^T is a sum of
    # d_k products a_c b_c of independent N(0, 1): E S^2 = d_k, Var S^2 = 2 d_k^2 + 6 d_k,
    # whatever the rank (<= d_model) of W_Q W_K^T.  The mean of S^2 / d_k over N draws has
    # standard error sqrt((2 + 6 / d_k) / N); the test allows 4 of them.
    d_k, N = 32, 200
    task = L._make_task(0)
    x, y = task.queries[2], task.keys[5][1]
    ratios = []
    for seed in range(N):
        W_Q, W_K = L._initial_weights(1000 + seed, d_k)
        S = matmul(matmul([x], matmul(W_Q, transpose(W_K))), [[v] for v in y])
        ratios.append(S[0][0] ** 2 / d_k)
    assert_close(stats.mean(ratios), 1.0, abs=4 * math.sqrt((2 + 6 / d_k) / N))


def test_a_run_whose_weights_blow_up_stops_and_counts_as_a_miss():
    run = L.train(100, 16, scale="1", optimizer="sgd", lr=1e30, max_steps=50)
    assert run.steps_to_target is None
    assert len(run.losses) < 50 and len(run.accuracies) == len(run.losses) + 1
    assert all(math.isfinite(v) for v in run.losses)  # never a silent NaN


def test_a_run_goes_on_to_step_late_and_keeps_the_weights_of_both_steps():
    short = L.train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=1.0)
    long = L.train(100, 16, scale="1/sqrt(d_k)", optimizer="sgd", lr=1.0, late=12)
    assert long.steps_to_target == short.steps_to_target < 12 == len(long.losses)
    assert long.at_target == short.at_target == short.final and long.at_late == long.final


# ------------------------------------------------------ the defects of issue 16

def test_a_pair_where_both_arms_miss_is_not_counted_as_slower():
    counts = L._paired([None, 5, None, 4, 7], [None, None, 3, 4, 9])
    assert counts == {"slower": 2, "faster": 1, "tied": 1, "both missed": 1}


def test_the_command_line_reports_a_d_k_without_a_tuned_rate_instead_of_a_traceback(capsys):
    with pytest.raises(SystemExit) as exit_info:
        L.main(["--dk", "32"])
    assert exit_info.value.code == 2
    assert "no tuned rate for 'sgd fixed 1/sqrt(d_k) 32'" in capsys.readouterr().err


def test_a_partial_sweep_refuses_to_replace_the_committed_rates(capsys):
    with open(L.RATES_FILE, "rb") as f:
        before = f.read()
    with pytest.raises(SystemExit):
        L.main(["--sweep", "--dk", "32"])
    assert "--rates PATH" in capsys.readouterr().err
    with open(L.RATES_FILE, "rb") as f:
        assert f.read() == before


def test_the_plain_sweep_command_redoes_exactly_the_committed_arms(monkeypatch):
    class Stop(Exception):
        pass
    seen = []

    def fake_sweep(arms, seeds, progress):
        seen.append((list(arms), tuple(seeds)))
        raise Stop  # before anything is written
    monkeypatch.setattr(L, "sweep", fake_sweep)
    with pytest.raises(Stop):
        L.main(["--sweep"])
    assert seen == [(L._default_arms(), L.TUNING_SEEDS)]
    assert sorted(L._load(L.RATES_FILE)["arms"]) == sorted(L._arm_key(*a) for a in seen[0][0])


@pytest.mark.slow
def test_a_sweep_at_another_d_k_goes_to_its_own_file_and_the_run_reads_it(tmp_path, capsys):
    path = str(tmp_path / "rates.json")
    common = ["--dk", "32", "--scales", "1/sqrt(d_k)", "--optimizer", "sgd", "--rates", path]
    L.main(["--sweep"] + common)
    assert sorted(L._load(path)["arms"]) == ["sgd fixed 1/sqrt(d_k) 32",
                                             "sgd pointer 1/sqrt(d_k) 32"]
    capsys.readouterr()
    L.main(common + ["--seeds", "2"])
    assert "1/sqrt(d_k)   32" in capsys.readouterr().out


def test_the_diagnostics_follow_the_readout(capsys):
    L.main(["--dk", "16", "--seeds", "1", "--scales", "1/sqrt(d_k)", "--optimizer", "sgd",
            "--readout", "pointer"])
    out = capsys.readouterr().out
    pointer = L.initial_diagnostics(16, "1/sqrt(d_k)", [100], "pointer")
    fixed = L.initial_diagnostics(16, "1/sqrt(d_k)", [100], "fixed")
    assert pointer.gradient != fixed.gradient  # so the printed value tells them apart
    assert "(pointer readout;" in out and L._fmt(*pointer.gradient) in out
    assert L._fmt(*fixed.gradient) not in out


def library_imports():
    tree = ast.parse(open(SOURCE, encoding="utf-8").read())
    return tree, [(node.module, alias.name) for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) for alias in node.names]


def test_the_experiment_imports_only_public_names_of_the_library():
    import figures  # scripts/figures.py, which draws the figure
    modules = {"attention": attention, "softmax": softmax, "stats": stats, "figures": figures}
    _, imports = library_imports()
    project = [(m, name) for m, name in imports if m != "typing"]
    assert {m for m, _ in project} == set(modules)
    for module, name in project:
        assert not name.startswith("_") and hasattr(modules[module], name), (module, name)


def test_no_compatibility_fallback_and_no_test_oracle_in_the_experiment():
    tree, imports = library_imports()
    handlers = [h for node in ast.walk(tree) if isinstance(node, ast.Try) for h in node.handlers]
    assert not [h for h in handlers if "ImportError" in ast.dump(h)]
    assert ("attention", "attention_backward") not in imports  # the textbook route is here
    assert not [n for n in dir(L) if "textbook" in n]


def test_the_experiment_doctests_are_collected_and_exist():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        assert '"experiments"' in f.read().split("testpaths")[1].split("\n")[0]
    examples = sum(len(t.examples) for t in doctest.DocTestFinder().find(L))
    assert examples >= 20


# ------------------------------------------------------- bad input, command line

BAD_CALLS = [
    (TypeError, "make_task", lambda: L.make_task("0")),
    (TypeError, "make_task", lambda: L.make_task(True)),
    (TypeError, "train", lambda: L.train(1.5, 16, scale="1", optimizer="sgd", lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 1, scale="1", optimizer="sgd", lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 16, scale="1/d", optimizer="sgd", lr=1.0)),
    (TypeError, "train", lambda: L.train(0, 16, scale=1, optimizer="sgd", lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 16, scale="1", optimizer="rmsprop", lr=1.0)),
    (TypeError, "train", lambda: L.train(0, 16, scale="1", optimizer=None, lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 16, scale="1", optimizer="sgd", lr=0.0)),
    (ValueError, "train", lambda: L.train(0, 16, scale="1", optimizer="sgd", lr=math.nan)),
    (TypeError, "train", lambda: L.train(0, 16, scale="1", optimizer="sgd", lr="1")),
    (ValueError, "train", lambda: L.train(0, 16, scale="1", optimizer="sgd", lr=1.0,
                                          readout="argmax")),
    (ValueError, "train", lambda: L.train(0, 16, scale="1", optimizer="sgd", lr=1.0,
                                          max_steps=-1)),
    (TypeError, "train", lambda: L.train(0, 16, scale="1", optimizer="sgd", lr=1.0,
                                         stop_at_target="yes")),
    (ValueError, "train", lambda: L.train(0, 16, scale="1", optimizer="adam", lr=1.0,
                                          eps=-1e-8)),
    (ValueError, "equivalent_run", lambda: L.equivalent_run(16, "1", "muP", "sgd", 1.0)),
    (TypeError, "equivalent_run", lambda: L.equivalent_run(16.0, "1", "1", "sgd", 1.0)),
    (ValueError, "tuned_rate", lambda: L.tuned_rate("sgd", "1", 17)),
    (ValueError, "tuned_rate", lambda: L.tuned_rate("adamw", "1", 16)),
    (ValueError, "steps_to_target", lambda: L.steps_to_target("sgd", "1", 16, 1.0, [])),
    (TypeError, "steps_to_target", lambda: L.steps_to_target("sgd", "1", 16, 1.0, "100")),
    (TypeError, "summarise", lambda: L.summarise(5)),
    (ValueError, "summarise", lambda: L.summarise([1.0, math.inf])),
    (ValueError, "initial_diagnostics", lambda: L.initial_diagnostics(0, "1")),
    (TypeError, "initial_diagnostics", lambda: L.initial_diagnostics(16, "1", [1.0])),
    (ValueError, "trained_logits", lambda: L.trained_logits(0, 16, scale="1",
                                                            optimizer="sgd", lr=1.0, late=-1)),
    (TypeError, "sweep", lambda: L.sweep([("sgd", "fixed", "1")])),
    (ValueError, "sweep", lambda: L.sweep([("sgd", "fixd", "1", 16)], seeds=[0])),
]


@pytest.mark.parametrize("error, fn, call", BAD_CALLS,
                         ids=[f"{fn}-{i}" for i, (_, fn, _) in enumerate(BAD_CALLS)])
def test_bad_input_raises_a_clear_error_naming_the_function(error, fn, call):
    with pytest.raises(error, match=f"^{fn}: "):
        call()


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--seeds", "11"], ["--optimizer", "rmsprop"],
                                  ["--dk", "1"], ["--scales", "1/d"], ["--perturb", "8"],
                                  ["--publish", "--dk", "16"], ["--publish", "--scales", "1"],
                                  ["--publish", "--optimizer", "sgd"]],
                         ids=["no seeds", "too many seeds", "optimizer", "d_k 1", "scale name",
                              "perturbations", "publish at another d_k", "publish one scale",
                              "publish one optimizer"])
def test_the_command_line_rejects_bad_options(argv):
    with pytest.raises(SystemExit) as exit_info:
        L.main(argv)
    assert exit_info.value.code == 2


def test_the_help_text_prints_its_percent_signs(capsys):
    with pytest.raises(SystemExit) as exit_info:
        L.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal width
    assert exit_info.value.code == 0 and "first 90% and after step" in out and "%%" not in out


def test_json_records_have_exactly_the_schema_and_null_for_a_miss(tmp_path):
    path = tmp_path / "runs.json"
    L.main(["--dk", "16", "--seeds", "2", "--scales", "1/sqrt(d_k)", "--optimizer", "sgd",
            "--json", str(path)])
    records = json.loads(path.read_text())
    assert [sorted(r) for r in records] == [sorted(["optimizer", "scale", "d_k", "seed", "lr",
                                                    "steps"])] * 2
    assert [r["seed"] for r in records] == [100, 101] and all(r["steps"] for r in records)
    miss = L.steps_to_target("sgd", "1", 256, 0.01, [100], max_steps=2)
    assert json.dumps(miss[0]["steps"]) == "null"


# ----------------------------------------------------------------- summaries, tables

def test_summary_ranks_a_miss_above_every_number_and_keeps_the_order_statistic_interval():
    steps = [6, 9, 5, 7, None, 8, 6, 10, 9, None]
    s = L.summarise(steps)
    m = stats.median_interval([v if v is not None else 1e9 for v in steps])
    assert (s.median, s.low, s.coverage, s.misses, s.n) == (8.5, m.low, m.coverage, 2, 10)
    assert s.high is None  # x_(9) is a miss
    assert L.summarise([1, None, None]).median is None


def test_ten_seeds_give_the_2nd_and_9th_values_with_coverage_97_9_percent():
    # docs/experiments.md says so in words
    m = stats.median_interval([float(v) for v in range(10)])
    assert (m.low, m.high, f"{m.coverage:.1%}") == (1.0, 8.0, "97.9%")


def test_the_published_interval_is_the_wider_of_seeds_and_rounding():
    s = L.Summary(100.0, 80.0, 150.0, 0.9785, 0, 10)
    assert L._published(s, [100.0] * 7) == (80.0, 150.0, "seeds")
    assert L._published(s, [95.0, 120.0]) == (80.0, 150.0, "seeds")  # narrower: seeds
    assert L._published(s, [60.0, 190.0]) == (60.0, 190.0, "rounding")
    assert L._published(s, [None]) == (100.0, None, "rounding")  # a median that misses


def test_the_fitted_exponent_recovers_a_power_law():
    assert_close(L._exponent([16, 64, 256], [3 * d ** 0.75 for d in (16, 64, 256)]), 0.75,
                 abs=1e-14)


def test_the_grid_search_scores_every_rate_and_widens_until_the_winner_is_inside(monkeypatch):
    # a fake score with its minimum 9 half-octaves above the guess (outside the first grid),
    # and a tie with the rate above it: the smaller rate wins
    best = L._guess("sgd", "1", 16) + 9

    def total(arm, lr, seeds, bound):
        k = round(2 * math.log2(lr))
        score = 10 + abs(k - best) - (k == best + 1)
        return score if score <= bound else None
    monkeypatch.setattr(L, "_total_steps", total)
    arm = L._tune(("sgd", "fixed", "1", 16), (0,), None)
    ks = [round(2 * math.log2(lr)) for lr in arm["grid"]]
    assert ks == list(range(ks[0], ks[-1] + 1)) and len(arm["totals"]) == len(ks)
    assert ks[0] < best < ks[-1] and arm["lr"] == L._rate(best)  # inside, the tie to the smaller


def test_the_scales_are_the_library_s_scale_choices():
    assert sorted(L.SCALES) == sorted(stats.SCALE_CHOICES) and L.SCALES[0] == "1/sqrt(d_k)"


def test_the_rate_ladder_is_exact():
    assert [L._rate(k) for k in (-3, -2, 0, 1, 4)] == [
        math.sqrt(2.0) / 4, 0.5, 1.0, math.sqrt(2.0), 4.0]


# ------------------------------------------------- the committed rates and records

def test_stored_rates_are_a_full_grid_search_with_every_winner_inside_its_grid():
    stored = L._load(L.RATES_FILE)
    assert stored["seeds"] == list(L.TUNING_SEEDS) and stored["rule"] == L.SWEEP_RULE
    assert not set(stored["seeds"]) & set(L.HELD_OUT_SEEDS)  # tuned and judged apart
    assert sorted(stored["arms"]) == sorted(L._arm_key(*arm) for arm in L._default_arms())
    for key, arm in stored["arms"].items():
        grid = arm["grid"]
        assert sorted(arm["totals"], key=float) == [repr(lr) for lr in grid], key  # all scored
        assert grid[0] < arm["lr"] < grid[-1], key  # not at an edge
        exact = [t for t in arm["totals"].values() if isinstance(t, int)]
        assert arm["totals"][repr(arm["lr"])] == arm["total_steps"] == min(exact), key
        assert all(t == f">{arm['total_steps']}" for t in arm["totals"].values()
                   if not isinstance(t, int)), key


def test_the_committed_records_follow_the_schema_and_the_committed_rates():
    results = L._load(L.RESULTS_FILE)
    keys = ["d_k", "lr", "optimizer", "scale", "seed", "steps"]
    runs = results["runs"] + results["transfer"] + results["pointer"] + results["long"] + [
        r for records in results["perturbed"].values() for r in records]
    assert all(sorted(r) == keys for r in runs)
    assert len(results["runs"]) == len(L.OPTIMIZERS) * len(L.SCALES) * len(L.D_KS) * 10
    for r in results["runs"]:
        assert r["lr"] == L.tuned_rate(r["optimizer"], r["scale"], r["d_k"])
    assert results["settings"]["seeds"] == list(L.HELD_OUT_SEEDS)
    assert sorted(results["perturbed"]) == [str(k) for k in L.PERTURBATIONS]


@pytest.mark.parametrize("optimizer", L.OPTIMIZERS)
def test_the_committed_records_are_what_the_code_computes_at_d_k_16(optimizer):
    committed = [r for r in L._load(L.RESULTS_FILE)["runs"]
                 if (r["optimizer"], r["scale"], r["d_k"]) == (optimizer, "1/sqrt(d_k)", 16)]
    assert committed[:3] == L.steps_to_target(optimizer, "1/sqrt(d_k)", 16, committed[0]["lr"],
                                              L.HELD_OUT_SEEDS[:3])


@pytest.mark.slow
@pytest.mark.parametrize("d_k", L.D_KS, ids=lambda d: f"d_k={d}")
def test_the_committed_records_are_what_the_code_computes_for_every_fast_arm(d_k):
    committed = L._groups(L._load(L.RESULTS_FILE)["runs"])
    for (optimizer, scale, d), records in committed.items():
        if d == d_k and scale != "1":
            assert records == L.steps_to_target(optimizer, scale, d, records[0]["lr"])


def test_the_docs_data_is_json_and_every_median_has_an_interval():
    data = L.docs_data()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    for row in data["table"]:
        low, high = row["published"]
        assert row["n"] == 10 and (row["median"] is None or
                                   (low or 0) <= row["median"] <= (high or math.inf))


def test_the_figure_plots_every_published_median_and_interval():
    import xml.etree.ElementTree as ET
    data = L.docs_data()
    svg = ET.fromstring(L.figure(data))
    groups = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("data-label")]
    assert len(groups) == len(L.SCALES) * len(L.OPTIMIZERS)
    plotted = {g.get("data-label"): [(float(p.get("data-x")), float(p.get("data-y")),
                                      float(p.get("data-low")), float(p.get("data-high")))
                                     for p in g if p.get("data-x")] for g in groups}
    for row in data["table"]:
        label = f"{row['scale']}, {L._name(row['optimizer'])}"
        low, high = (L.MISS if v is None else v for v in row["published"])
        assert (row["d_k"], row["median"] or L.MISS, low, high) in plotted[label]


def test_the_markdown_blocks_the_docs_need_exist_with_the_interview_headings(data):
    blocks = L.markdown_blocks(data)
    assert {"learning-table", "learning-answers", "learning-diagnostics",
            "learning-pointer"} <= set(blocks)
    headings = [line for line in blocks["learning-answers"].splitlines()
                if line.startswith("### ")]
    assert headings == ["### Why not 1/d_k?", "### What happens to q · k after training?",
                        "### Does the learning rate carry over when d_k changes?",
                        "### Isn't unscaled just a different initialisation?"]
    table = blocks["learning-table"].splitlines()
    assert len([line for line in table if line.startswith("| ")]) == 1 + 8  # header, rows


# ------------------------------------- the sentences of the prose, against the records
# README.md, docs/interview.md and docs/experiments.md say these in words; the numbers
# beside them are generated, the words are checked here.

@pytest.fixture(scope="module")
def data():
    return L.docs_data()


def row(data, optimizer, scale, d_k):
    return L._row(data["table"], optimizer, scale, d_k)


def test_the_paper_s_scale_and_mup_s_learn_in_a_handful_of_steps_at_every_d_k(data):
    for optimizer in L.OPTIMIZERS:
        for scale in ("1/sqrt(d_k)", "1/d_k"):
            for d_k in L.D_KS:
                r = row(data, optimizer, scale, d_k)
                assert r["misses"] == 0 and r["median"] <= 8, (optimizer, scale, d_k)


def test_the_scales_whose_initial_logits_spread_with_d_k_slow_down_unscaled_most(data):
    for optimizer in L.OPTIMIZERS:
        for scale in ("1/ln(d_k)", "1"):
            medians = [row(data, optimizer, scale, d_k)["median"] for d_k in L.D_KS]
            assert medians == sorted(medians) and medians[0] < medians[-1], (optimizer, scale)
        assert (row(data, optimizer, "1", L.D_KS[-1])["median"]
                > row(data, optimizer, "1/ln(d_k)", L.D_KS[-1])["median"])
    unscaled = [p for p in data["paired"] if p["scale"] == "1"]
    assert len(unscaled) == 6 and all(p["slower"] == 10 for p in unscaled)


def test_only_the_unscaled_arm_is_rounding_sensitive(data):
    for r in data["table"]:
        assert (r["seeds_changed"] > 0) == (r["scale"] == "1" and (
            r["optimizer"] == "adam" or r["d_k"] > 16)), r
    sgd = row(data, "sgd", "1", 256)
    assert sgd["seeds_changed"] == 10 and len(set([sgd["median"]] + sgd["perturbed_medians"])) > 1


def test_a_miss_of_the_long_runs_is_itself_a_matter_of_rounding(data):
    stuck = [(r, p) for r in data["long"] for steps, p in zip(r["steps"], r["perturbed"])
             if steps is None]
    assert stuck and all(any(s is not None for s in p) for _, p in stuck)


def test_which_rate_carries_over_depends_on_the_optimizer(data):
    def transfer(optimizer, scale, d_k):
        t = next(t for t in data["transfer"] if (t["optimizer"], t["scale"], t["d_k"]) ==
                 (optimizer, scale, d_k))
        return t["carried"][0], t["tuned"][1], t["tuned"][2]
    for optimizer, scale in (("adam", "1/d_k"), ("sgd", "1/sqrt(d_k)")):  # carries over
        for d_k in L.D_KS[1:]:
            carried, low, high = transfer(optimizer, scale, d_k)
            assert low <= carried <= high, (optimizer, scale, d_k)
    for optimizer, scale in (("adam", "1/sqrt(d_k)"), ("sgd", "1/d_k")):  # does not
        carried, low, high = transfer(optimizer, scale, L.D_KS[-1])
        assert carried > high, (optimizer, scale)


def exponent(data, optimizer, scale, quantity, at="target"):
    return next(e["exponent"] for e in data["exponents"] if (
        e["optimizer"], e["scale"], e["at"], e["quantity"]) == (optimizer, scale, at, quantity))


def test_after_training_the_scaled_logit_does_not_grow_with_d_k(data):
    for optimizer in L.OPTIMIZERS:
        _, low, high = exponent(data, optimizer, "1/sqrt(d_k)", "scaled")
        assert low <= 0.0 <= high  # "its exponent is near 0"
        _, low, high = exponent(data, optimizer, "1/sqrt(d_k)", "matched")
        assert low <= 0.5 <= high  # "the raw q . k* grows like sqrt(d_k)"
        assert exponent(data, optimizer, "1/d_k", "scaled")[2] < 0.0  # "falls somewhat"
        _, low, high = exponent(data, optimizer, "1/d_k", "matched")
        assert 0.5 < low and high < 1.0  # "a little slower than d_k"
        _, low, high = exponent(data, optimizer, "1/d_k", "cos")
        assert low <= 0.0 <= high  # aligned equally at every d_k
        assert exponent(data, optimizer, "1/sqrt(d_k)", "cos")[2] < 0.0  # less as d_k grows


def test_training_keeps_growing_the_logits_after_90_percent_more_under_adam(data):
    def scaled(optimizer, scale, d_k, at):
        return next(r["scaled"][0] for r in data["logits"] if (
            r["optimizer"], r["scale"], r["d_k"], r["at"]) == (optimizer, scale, d_k, at))
    for scale in ("1/sqrt(d_k)", "1/d_k", "1/ln(d_k)"):
        for d_k in L.D_KS:
            for optimizer in L.OPTIMIZERS:
                assert scaled(optimizer, scale, d_k, "late") > scaled(optimizer, scale, d_k,
                                                                      "target")
            assert scaled("adam", scale, d_k, "late") > scaled("sgd", scale, d_k, "late")


def test_the_pointer_control_stays_near_one_while_the_fixed_readout_grows(data):
    fixed = [p["fixed"]["ratio"]["median"] for p in data["pointer"]]
    assert fixed == sorted(fixed) and fixed[0] > 1
    assert all(p["pointer"]["ratio"]["high"] <= 2.0 for p in data["pointer"])


def test_at_initialisation_unscaled_saturates_and_1_over_d_k_starts_near_uniform(data):
    def diag(scale, field):
        return next(r[field] for r in data["diagnostics"] if (r["scale"], r["d_k"]) ==
                    (scale, L.D_KS[-1]))
    assert diag("1", "largest_weight")[0] > 0.99
    assert diag("1", "gradient")[0] < diag("1/sqrt(d_k)", "gradient")[0] / 10
    assert diag("1/d_k", "largest_weight")[2] < 0.15  # uniform: 1/8
    assert diag("1/d_k", "gradient")[0] > diag("1/sqrt(d_k)", "gradient")[0] / 2
    assert diag("1", "tail_share")[1] > 0.3  # 0.1 if every question weighed the same
