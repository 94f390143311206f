"""Tests for experiments/learning.py: the fused gradient against the textbook route through
attention_backward and against central finite differences, SGD and Adam against their
textbook forms, the reparametrisation identity, the effect with margins, the pointer
control, determinism and bad input."""

import math
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "experiments"))
import learning as L  # noqa: E402
from attention import score_gradient  # noqa: E402


def batch_of(task, count, seed=7):
    rng = random.Random(seed)
    return [L._draw_example(task.keys, task.queries, rng) for _ in range(count)]


def max_abs(A):
    return max(abs(v) for row in A for v in row)


def max_abs_diff(A, B):
    return max(abs(a - b) for ra, rb in zip(A, B) for a, b in zip(ra, rb))


def scaled_copy(params, c):
    return tuple([[c * w for w in row] for row in W] for W in params)


# ------------------------------------------------------------------------- gradients

@pytest.mark.parametrize("readout", ["fixed", "pointer"])
@pytest.mark.parametrize("d_k, scaled", [(4, True), (4, False), (24, True), (24, False)])
def test_fused_gradient_equals_the_textbook_route_through_attention_backward(d_k, scaled,
                                                                             readout):
    task = L._make_task(3)
    params = L._initial_weights(3, d_k)
    batch = batch_of(task, 5)
    scale = L._logit_scale(d_k, scaled)
    loss, (dW_Q, dW_K) = L._loss_and_gradients(params, L._M_transpose(*params), batch, scale,
                                               readout)
    ref_loss, (ref_Q, ref_K) = L._textbook_gradients(params, batch, scale, readout)
    assert abs(loss - ref_loss) <= 1e-12 * abs(ref_loss)
    for got, ref in ((dW_Q, ref_Q), (dW_K, ref_K)):
        assert max_abs_diff(got, ref) <= 1e-12 * max_abs(ref), (max_abs_diff(got, ref),
                                                                 max_abs(ref))


@pytest.mark.parametrize("readout", ["fixed", "pointer"])
@pytest.mark.parametrize("scaled", [True, False])
def test_fused_gradient_matches_central_finite_differences(scaled, readout):
    d_k, h = 6, 1e-6
    task = L._make_task(5)
    params = L._initial_weights(5, d_k)
    batch = batch_of(task, 3)
    scale = L._logit_scale(d_k, scaled)
    _, grads = L._loss_and_gradients(params, L._M_transpose(*params), batch, scale, readout)
    rng = random.Random(0)
    for which in (0, 1):  # W_Q, then W_K
        for _ in range(6):
            a, c = rng.randrange(L.D_MODEL), rng.randrange(d_k)
            plus, minus = ([[row[:] for row in W] for W in params] for _ in range(2))
            plus[which][a][c] += h
            minus[which][a][c] -= h
            fd = (L._loss(plus, batch, scale, readout)
                  - L._loss(minus, batch, scale, readout)) / (2 * h)
            # truncation O(h^2 L''') and rounding O(eps L / h): both far below 1e-6 here
            assert abs(grads[which][a][c] - fd) <= 1e-6 + 1e-5 * abs(fd), (which, a, c, fd)


def test_pointer_gradient_is_the_softmax_backward_of_minus_e_over_p():
    # -log p_j through O = P (V = I): dL/dO = -e_j / p_j, and the Jacobian turns it into p - e_j
    task = L._make_task(1)
    params = L._initial_weights(1, 16)
    example = task.held_out[0]
    loss, dS, steps = L._example_gradient(L._M_transpose(*params), example, 0.25, "pointer")
    p, j = steps.weights[0], example.j_star
    identity = [[float(r == c) for c in range(L.ITEMS)] for r in range(L.ITEMS)]
    via_jacobian = score_gradient([p], identity, [[-1.0 / p[j] if i == j else 0.0
                                                  for i in range(L.ITEMS)]])[0]
    assert max(abs(a - b) for a, b in zip(dS, via_jacobian)) <= 1e-15
    assert loss == pytest.approx(-math.log(p[j]), rel=1e-14)


# ------------------------------------------------------------------------ optimisers

def test_sgd_step_moves_each_weight_by_minus_lr_times_its_gradient():
    params = ([[1.0, -2.0]], [[0.5]])
    grads = ([[0.25, 4.0]], [[-1.0]])
    new, state = L._sgd(0.5)(params, grads, None, 1)
    assert new == ([[0.875, -4.0]], [[1.0]]) and state is None


def textbook_adam(w, gradients, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """Kingma and Ba, Algorithm 1, one scalar, bias corrections written out."""
    m = v = 0.0
    for t, g in enumerate(gradients, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t)
        v_hat = v / (1 - beta2 ** t)
        w = w - lr * m_hat / (math.sqrt(v_hat) + eps)
    return w


def test_adam_agrees_with_the_textbook_form_with_explicit_bias_correction():
    rng = random.Random(2)
    sequence = [[[rng.gauss(0, 1) for _ in range(3)] for _ in range(2)] for _ in range(12)]
    params = ([[0.3, -0.1, 2.0], [1.0, 0.0, -0.5]],)
    step, state = L._adam(0.01), None
    for t, g in enumerate(sequence, start=1):
        params, state = step(params, (g,), state, t)
    for r in range(2):
        for c in range(3):
            start = ([[0.3, -0.1, 2.0], [1.0, 0.0, -0.5]])[r][c]
            expected = textbook_adam(start, [g[r][c] for g in sequence], 0.01)
            assert abs(params[0][r][c] - expected) <= 1e-15


def test_adam_first_step_is_lr_times_the_sign_of_the_gradient():
    # m_hat = g and v_hat = g^2 after one step, so the move is lr g / (|g| + eps)
    # (to a few ulps: the folded form rounds in another order)
    new, _ = L._adam(0.1)(([[1.0, 1.0]],), ([[3.0, -0.5]],), None, 1)
    assert new[0][0][0] == pytest.approx(1.0 - 0.1 * 3.0 / (3.0 + 1e-8), abs=4e-16)
    assert new[0][0][1] == pytest.approx(1.0 + 0.1 * 0.5 / (0.5 + 1e-8), abs=4e-16)


# ------------------------------------------------------------ the reparametrisation

def run_both(d_k, step_unscaled, step_scaled, steps=8):
    """Unscaled from W and scaled from d_k^(1/4) W, same questions: (unscaled, scaled) runs."""
    task, params = L._make_task(101), L._initial_weights(101, d_k)
    c = d_k ** 0.25
    unscaled = L._train(task, params, 1.0, step_unscaled, "fixed", steps, False)
    scaled = L._train(task, scaled_copy(params, c), 1.0 / math.sqrt(d_k), step_scaled,
                      "fixed", steps, False)
    return unscaled, scaled


def test_unscaled_sgd_is_scaled_sgd_at_sqrt_dk_times_the_rate_bit_for_bit():
    # d_k = 16: c = d_k^(1/4) = 2 and sqrt(d_k) = 4 are powers of two, so every rounding
    # of one run is the other's times a power of two
    unscaled, scaled = run_both(16, L._sgd(0.1), L._sgd(0.4))
    assert unscaled.losses == scaled.losses
    assert unscaled.accuracies == scaled.accuracies


def test_unscaled_adam_without_eps_is_scaled_adam_at_dk_to_the_quarter_times_the_rate():
    unscaled, scaled = run_both(16, L._adam(0.01, eps=0.0), L._adam(0.02, eps=0.0))
    assert unscaled.losses == scaled.losses  # exact, for the same power-of-two reason
    c = 64 ** 0.25  # not a power of two: the runs agree to rounding
    unscaled, scaled = run_both(64, L._adam(0.01, eps=0.0), L._adam(0.01 * c, eps=0.0))
    for a, b in zip(unscaled.losses, scaled.losses):
        assert abs(a - b) <= 1e-12 * abs(a), (a, b)


def test_the_identity_needs_the_rate_change():
    # the same rate on both sides is not the same run: the control for the two tests above
    unscaled, scaled = run_both(16, L._sgd(0.1), L._sgd(0.1), steps=3)
    assert unscaled.losses[0] == scaled.losses[0]  # same function at the start
    assert unscaled.losses[1:] != scaled.losses[1:]


# ------------------------------------------------------- the variance argument at init

def test_unscaled_logit_variance_is_d_k_even_though_d_k_exceeds_d_model():
    # For |x|^2 = |y|^2 = d_model and W entries N(0, 1/d_model), x W_Q W_K^T y^T is a sum
    # of d_k products a_c b_c of independent N(0, 1): E S^2 = d_k, Var S^2 = 2 d_k^2 + 6 d_k,
    # whatever the rank (<= d_model) of W_Q W_K^T.  Mean of S^2 / d_k over N independent
    # draws: standard error sqrt((2 + 6 / d_k) / N); the test allows 4 of them.
    d_k, N = 32, 200
    task = L._make_task(0)
    x, y = task.queries[2], task.keys[5][1]
    ratios = []
    for seed in range(N):
        MT = L._M_transpose(*L._initial_weights(1000 + seed, d_k))
        S = sum(a * b for a, b in zip(L._dots(x, MT), y))
        ratios.append(S * S / d_k)
    mean = math.fsum(ratios) / N
    assert abs(mean - 1.0) <= 4 * math.sqrt((2 + 6 / d_k) / N), mean


# ---------------------------------------------------------------- determinism, input

def test_the_same_seed_gives_the_same_run_and_another_seed_does_not():
    a = L.train(104, 64, scaled=False, optimizer="adam", lr=0.01, max_steps=4,
                stop_at_target=False)
    b = L.train(104, 64, scaled=False, optimizer="adam", lr=0.01, max_steps=4,
                stop_at_target=False)
    c = L.train(105, 64, scaled=False, optimizer="adam", lr=0.01, max_steps=4,
                stop_at_target=False)
    assert a == b
    assert a.losses != c.losses
    assert L.make_task(3) == L.make_task(3) != L.make_task(4)


def test_both_arms_of_a_seed_see_the_same_questions_and_start_from_the_same_weights():
    task = L._make_task(100)
    a = L._train(task, L._initial_weights(100, 16), 1.0, L._sgd(0.0), "fixed", 2, False)
    b = L._train(task, L._initial_weights(100, 16), 0.25, L._sgd(0.0), "fixed", 2, False)
    assert a.accuracies == b.accuracies  # lr 0: argmax unchanged by the scale
    assert a.losses != b.losses  # but the logits differ by the factor 4


def test_held_out_questions_differ_from_the_training_stream():
    task = L._make_task(100)
    stream = L._stream(task, "train")
    train = {(tuple(e.ids), tuple(e.payloads), e.j_star)
             for e in (L._draw_example(task.keys, task.queries, stream) for _ in range(200))}
    held = {(tuple(e.ids), tuple(e.payloads), e.j_star) for e in task.held_out}
    assert len(held) == L.HELD_OUT and not train & held


BAD_CALLS = [
    (TypeError, "make_task", lambda: L.make_task("0")),
    (TypeError, "make_task", lambda: L.make_task(True)),
    (TypeError, "train", lambda: L.train(1.5, 16, scaled=True, optimizer="sgd", lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 0, scaled=True, optimizer="sgd", lr=1.0)),
    (TypeError, "train", lambda: L.train(0, 16, scaled=1, optimizer="sgd", lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 16, scaled=True, optimizer="rmsprop", lr=1.0)),
    (TypeError, "train", lambda: L.train(0, 16, scaled=True, optimizer=None, lr=1.0)),
    (ValueError, "train", lambda: L.train(0, 16, scaled=True, optimizer="sgd", lr=0.0)),
    (ValueError, "train", lambda: L.train(0, 16, scaled=True, optimizer="sgd", lr=math.nan)),
    (TypeError, "train", lambda: L.train(0, 16, scaled=True, optimizer="sgd", lr="1")),
    (ValueError, "train", lambda: L.train(0, 16, scaled=True, optimizer="sgd", lr=1.0,
                                          readout="argmax")),
    (ValueError, "train", lambda: L.train(0, 16, scaled=True, optimizer="sgd", lr=1.0,
                                          max_steps=-1)),
    (TypeError, "train", lambda: L.train(0, 16, scaled=True, optimizer="sgd", lr=1.0,
                                         stop_at_target="yes")),
    (ValueError, "tuned_rate", lambda: L.tuned_rate("sgd", "fixed", 17, True)),
    (ValueError, "tuned_rate", lambda: L.tuned_rate("adamw", "fixed", 16, True)),
    (TypeError, "compare", lambda: L.compare(16)),
    (TypeError, "compare", lambda: L.compare([16], seeds=[])),
    (TypeError, "compare", lambda: L.compare([16], seeds="100")),
    (ValueError, "compare", lambda: L.compare([16], lr=-1.0)),
    (ValueError, "compare", lambda: L.compare([16], readout="both")),
    (ValueError, "initial_diagnostics", lambda: L.initial_diagnostics(0, True)),
    (TypeError, "initial_diagnostics", lambda: L.initial_diagnostics(16, None)),
    (TypeError, "initial_diagnostics", lambda: L.initial_diagnostics(16, True, [1.0])),
    (ValueError, "learning_curves", lambda: L.learning_curves([16], steps=-2)),
    (TypeError, "learning_curves", lambda: L.learning_curves([16.0])),
    (ValueError, "learning_curves", lambda: L.learning_curves([16], optimizer="SGD")),
    (TypeError, "sweep", lambda: L.sweep("sgd")),
    (ValueError, "sweep", lambda: L.sweep(["sgd"], ["fixd"], [16], seeds=[0])),
    (ValueError, "sweep", lambda: L.sweep(["sgd"], ["fixed"], [-4], seeds=[0])),
]


@pytest.mark.parametrize("error, fn, call", BAD_CALLS)
def test_bad_input_raises_a_clear_error_naming_the_function(error, fn, call):
    with pytest.raises(error, match=f"^{fn}: "):
        call()


def test_the_command_line_rejects_bad_options():
    with pytest.raises(SystemExit):
        L.main(["--seeds", "0"])
    with pytest.raises(SystemExit):
        L.main(["--optimizer", "rmsprop"])


# ------------------------------------------------------------------- the effect itself

def steps_to_target(seed, d_k, scaled, optimizer, readout="fixed", max_steps=L.MAX_STEPS):
    lr = L.tuned_rate(optimizer, readout, d_k, scaled)
    return L.train(seed, d_k, scaled=scaled, optimizer=optimizer, lr=lr, readout=readout,
                   max_steps=max_steps).steps_to_target


def unscaled_needs_at_least(seed, d_k, optimizer, ratio, readout="fixed"):
    """True when the unscaled arm needs >= ratio times the scaled arm's steps (held-out seed).

    The unscaled run is cut at ratio * scaled - 1 steps: it only has to fail to get there.
    Ratios, not step counts: sumprod on 3.12+ rounds differently and the unscaled
    dynamics amplify rounding.
    """
    scaled = steps_to_target(seed, d_k, True, optimizer, readout)
    assert scaled is not None and scaled <= 30, (seed, d_k, scaled)  # scaled learns fast
    cap = math.ceil(ratio * scaled) - 1
    return steps_to_target(seed, d_k, False, optimizer, readout, max_steps=cap) is None


@pytest.mark.parametrize("d_k, ratio", [(16, 1.5), (64, 4.0), (256, 6.0)])
def test_unscaled_sgd_needs_several_times_the_steps_and_more_as_d_k_grows(d_k, ratio):
    for seed in (100, 101):  # held-out seeds: never used to tune the rates
        assert unscaled_needs_at_least(seed, d_k, "sgd", ratio), (seed, d_k)


@pytest.mark.parametrize("d_k", [16, 256])
def test_pointer_loss_control_shows_no_growth_with_d_k(d_k):
    # d(-log p_j*)/dS = p - e_j*: the Jacobian cancels, so large logits do not starve the
    # gradient; unscaled stays within 3x the scaled steps at every d_k (the fixed readout
    # needs more than 6x at d_k = 256, test above)
    for seed in (100, 101):
        scaled = steps_to_target(seed, d_k, True, "sgd", "pointer")
        assert scaled is not None and scaled <= 30
        unscaled = steps_to_target(seed, d_k, False, "sgd", "pointer", max_steps=3 * scaled)
        assert unscaled is not None, (seed, d_k, scaled)


def test_adam_does_not_rescue_the_unscaled_arm_at_large_d_k():
    # Adam rescales each weight's step, but the typical example's dL/dS stays tiny
    assert unscaled_needs_at_least(100, 256, "adam", 6.0)


# ------------------------------------------------------------------------ the sweep

def test_stored_rates_record_how_they_were_found():
    with open(L.RATES_FILE, encoding="utf-8") as f:
        stored = __import__("json").load(f)
    assert stored["seeds"] == list(L.TUNING_SEEDS)
    assert stored["rule"] == L.SWEEP_RULE and stored["max_steps"] == L.MAX_STEPS
    assert stored["grids"] == {name: list(grid) for name, grid in L.GRIDS.items()}
    assert not set(stored["seeds"]) & set(L.HELD_OUT_SEEDS)  # tuned and judged apart
    assert len(stored["arms"]) == 2 * 2 * 3 * 2  # optimizer x readout x d_k x scaled
    for key, arm in stored["arms"].items():
        optimizer = key.split("/")[0]
        assert arm["lr"] in stored["grids"][optimizer], key
        assert arm["tried"][repr(arm["lr"])] == arm["total_steps"], key
        exact = [t for t in arm["tried"].values() if isinstance(t, int)]
        assert min(exact) == arm["total_steps"], key  # the winner has the lowest total


def test_cut_short_totals_are_exact_below_the_bound_and_none_above_it():
    arm, seeds = ("sgd", "pointer", 16, True), (0, 1)
    full = [L._run(s, 16, True, "sgd", 1.0, "pointer").steps_to_target for s in seeds]
    total = sum(full)
    assert L._total_steps(arm, 1.0, seeds, 10 ** 6) == total
    assert L._total_steps(arm, 1.0, seeds, total) == total  # reaching it exactly counts
    assert L._total_steps(arm, 1.0, seeds, total - 1) is None


def test_a_run_whose_weights_blow_up_stops_and_counts_as_a_miss():
    run = L.train(100, 16, scaled=False, optimizer="sgd", lr=1e150, max_steps=50)
    assert run.steps_to_target is None
    assert len(run.losses) < 50 and len(run.accuracies) == len(run.losses) + 1
    assert all(math.isfinite(v) for v in run.losses)  # never a silent NaN
