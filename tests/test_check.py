"""interview/check.py against the files of tests/readers/: what candidates write, right, wrong
and hostile, in every mode.

Each wrong reader has one slip, and the checker must name that slip on its FAIL lines; each
right one must pass, with the notes its edge cases deserve.  The whole table of readers runs
with -m slow (about 0.3 s a reader); the default run keeps one right and one wrong reader per
mode, the hostile ones, and the tests that start no process at all (the cases, the mistakes,
the judge).  NumPy readers skip without NumPy.
"""

import importlib.util
import math
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

from interview import check, judge, mode_backward, mode_mha, mode_online, mode_softmax
from interview import mode_forward as F
from interview.calling import CallError, Plan, arguments, plan
from interview.runner import Reply

HERE = os.path.dirname(os.path.abspath(__file__))
READERS = os.path.join(HERE, "readers")
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(ROOT, "interview", "check.py")
NUMPY = importlib.util.find_spec("numpy") is not None
needs_numpy = pytest.mark.skipif(not NUMPY, reason="NumPy is not installed")
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the process table")
MODULES = [judge, F, mode_softmax, mode_backward, mode_online, mode_mha, check]


def reader(spec):
    """(the path of a reader, its function's name or None) from "FILE.py[:NAME]"."""
    path, _, name = spec.partition(":")
    return os.path.join(READERS, path), name or None


def names(*mistakes):
    return {m.name for m in mistakes}


def failed(report):
    return {r.mistake for r in report.results if r.status == "FAIL"}


def noted(report):
    return {r.mistake for r in report.results if r.status == "NOTE"}


# ------------------------------------------------------------- every reader, its verdict

NAN, ODD = names(judge.NAN_ROW), names(judge.ODD_ERROR)  # what a query with no key got
SHAPES, BUG = names(judge.NOT_VALUE_ERROR), names(judge.RAISED)
B, O, M = mode_backward, mode_online, mode_mha
FAST = {("reader_lists.py", "attention"), ("reader_no_scale.py", "attention"),
        ("reader_backward_diagonal.py", "backward"), ("reader_online_drop_last.py", "online"),
        ("reader_mha_interleaved.py", "mha")}  # the rest of the table runs with -m slow

# (reader, mode, options, the names on its FAIL lines, the names on its NOTE lines)
TABLE = [
    ("reader_lists.py", "attention", {}, set(), set()),
    ("reader_zeros.py", "attention", {}, set(), set()),
    ("reader_uniform.py", "attention", {}, set(), set()),
    ("reader_pair.py", "attention", {}, set(), set()),
    ("reader_none_pair.py", "attention", {}, set(), set()),
    ("reader_pytorch_style.py", "attention", {}, set(), set()),
    ("reader_textbook.py", "attention", {}, set(), NAN | SHAPES),
    ("reader_sys_exit.py", "attention", {}, set(), SHAPES),
    ("reader_mask_true_blocks.py", "attention", {}, set(), names(F.TRUE_BLOCKS)),
    ("reader_mask_true_blocks.py", "attention", {"true_blocks": True}, set(), set()),
    ("reader_lists.py", "attention", {"true_blocks": True}, names(F.TRUE_ATTENDS), set()),
    ("reader_attn_mask_inverted.py", "attention", {}, set(), names(F.TRUE_BLOCKS)),
    ("reader_flash_style.py:flash_attn_func", "attention", {}, set(), names(F.BOTTOM_RIGHT)),
    ("reader_flash_style.py:flash_attn_func", "attention", {"causal": "bottom-right"}, set(),
     set()),
    ("reader_causal_bottom_right.py", "attention", {}, set(), names(F.BOTTOM_RIGHT)),
    ("reader_key_padding.py", "attention", {}, set(), {check.NOT_EXERCISED.name}),
    ("reader_no_scale.py", "attention", {}, names(F.NO_SCALE), set()),
    ("reader_scale_d_k.py", "attention", {}, names(F.BY_D_K), set()),
    ("reader_scale_d_v.py", "attention", {}, names(F.BY_SQRT_D_V), set()),
    ("reader_scale_m.py", "attention", {}, names(F.BY_SQRT_M), set()),
    ("reader_scale_512.py", "attention", {}, names(F.OTHER_SCALE), set()),
    ("reader_scale_after_softmax.py", "attention", {}, names(F.SCALE_AFTER), set()),
    ("reader_wrong_axis.py", "attention", {}, names(F.COLUMNS) | BUG, set()),  # the bug: under
    # causal n < m, keys 3 and 4 are open to no query, so a column's softmax raises
    ("reader_returns_weights.py", "attention", {}, names(F.WEIGHTS), set()),
    ("reader_no_max_shift.py", "attention", {}, names(F.NO_SHIFT), ODD),
    ("reader_shift_min.py", "attention", {}, names(F.SHIFT_MIN), set()),
    ("reader_shift_first.py", "attention", {}, names(F.SHIFT_FIRST), set()),
    ("reader_mask_after_softmax.py", "attention", {}, names(F.MASK_AFTER), set()),
    ("reader_mask_zero_fill.py", "attention", {}, names(F.MASK_ZERO, F.CAUSAL_ZERO), set()),
    ("reader_silent_nan.py", "attention", {}, set(), NAN),
    ("reader_minus_1e9_added.py", "attention", {}, set(), names(judge.UNMASKED_ROW)),
    ("reader_no_shape_check.py", "attention", {}, set(), names(judge.NO_ERROR)),
    ("reader_causal_strict.py", "attention", {}, names(F.STRICT), set()),
    ("reader_causal_plus_one.py", "attention", {}, names(F.PLUS_ONE), set()),
    ("reader_type_error.py", "attention", {}, BUG, set()),  # TypeError for is_causal=True
    ("reader_bfloat16.py", "attention", {}, names(judge.PRECISION["bfloat16"]), set()),
    ("reader_rounded.py", "attention", {}, names(judge.ROUNDED), set()),
    ("reader_noise.py", "attention", {}, names(judge.NONDETERMINISTIC), set()),
    ("reader_mutates.py", "attention", {}, names(judge.MUTATED), set()),
    ("reader_batched_first.py", "attention", {"batched": True}, names(judge.FIRST_BATCH),
     names(judge.NO_ERROR)),
    ("reader_interrupt_call.py", "attention", {}, BUG, SHAPES),
    ("reader_bad_str.py", "attention", {}, BUG, SHAPES),
    ("reader_hang.py", "attention", {"time_limit": 0.5}, names(judge.TIME_OUT), set()),
    ("reader_lists.py:softmax", "softmax", {}, set(), set()),
    ("reader_softmax_zeros.py", "softmax", {}, set(), set()),
    ("reader_softmax_nan.py", "softmax", {}, set(), NAN),
    ("reader_softmax_no_shift.py", "softmax", {}, names(F.NO_SHIFT), ODD),
    ("reader_softmax_shift_min.py", "softmax", {}, names(F.SHIFT_MIN), NAN),
    ("reader_softmax_shift_first.py", "softmax", {}, names(F.SHIFT_FIRST), NAN),
    ("reader_softmax_epsilon.py", "softmax", {}, names(mode_softmax.INF_WEIGHT), set()),
    ("reader_softmax_unnormalised.py", "softmax", {}, names(mode_softmax.NOT_NORMALISED), set()),
    ("reader_backward.py", "backward", {}, set(), set()),
    ("reader_backward_flash.py", "backward", {}, set(), set()),
    ("reader_backward_unscaled.py", "backward", {}, names(B.UNSCALED), set()),
    ("reader_backward_dv_scaled.py", "backward", {}, names(B.DV_SCALED), set()),
    ("reader_backward_diagonal.py", "backward", {}, names(B.DIAGONAL), set()),
    ("reader_backward_p_do.py", "backward", {}, names(B.P_DO) | BUG, set()),  # n != m: an
    ("reader_backward_ds_q.py", "backward", {}, names(B.DS_Q) | BUG, set()),  # IndexError
    ("reader_backward_s_in_dv.py", "backward", {}, names(B.S_IN_DV), set()),
    ("reader_backward_masked_gradient.py", "backward", {}, names(B.MASKED_GRADIENT),
     names(judge.OTHER_ROW)),  # the mask forgotten: its query with no key gets an answer
    ("reader_backward_unshifted.py", "backward", {}, names(B.UNSHIFTED), set()),
    ("reader_online.py", "online", {}, set(), set()),
    ("reader_online_normalised.py", "online", {}, set(), set()),
    ("reader_online_max_from_0.py", "online", {}, names(O.MAX_FROM_0), set()),
    ("reader_online_no_rescale.py", "online", {}, names(O.NO_RESCALE), set()),
    ("reader_online_output_not_rescaled.py", "online", {}, names(O.OUTPUT_NOT_RESCALED), set()),
    ("reader_online_divide_per_block.py", "online", {}, names(O.DIVIDED_PER_BLOCK), set()),
    ("reader_online_drop_last.py", "online", {}, names(O.LAST_BLOCK_DROPPED), set()),
    ("reader_online_masked_block_nan.py", "online", {}, names(O.MASKED_BLOCK_NAN), NAN),
    ("reader_online_unscaled.py", "online", {}, names(F.NO_SCALE), set()),
    ("reader_online_scale_d_k.py", "online", {}, names(F.BY_D_K), set()),
    ("reader_mha.py", "mha", {}, set(), set()),
    ("reader_mha_loops.py", "mha", {}, set(), set()),
    ("reader_mha_d_model.py", "mha", {}, names(M.BY_SQRT_D_MODEL), set()),
    ("reader_mha_interleaved.py", "mha", {}, names(M.INTERLEAVED), set()),
    ("reader_mha_reversed.py", "mha", {}, names(M.REVERSED), set()),
    ("reader_mha_no_w_o.py", "mha", {}, names(M.NO_W_O), set()),
    ("reader_mha_one_head.py", "mha", {}, names(M.ONE_HEAD), names(judge.NO_ERROR)),
    ("reader_mha_axis.py", "mha", {}, names(M.axis(2)), set()),
    ("reader_mha_unscaled.py", "mha", {}, names(F.NO_SCALE), set()),
    ("reader_mha_scale_d_k.py", "mha", {}, names(F.BY_D_K), set()),
]
WITH_NUMPY = [
    ("reader_numpy.py", "attention", {}, set(), set()),
    ("reader_numpy.py:softmax", "softmax", {}, set(), set()),
    ("reader_numpy_whole_max.py", "attention", {}, names(F.SHIFT_GLOBAL), set()),
    ("reader_numpy_no_max_shift.py", "attention", {}, names(F.NO_SHIFT), set()),
    ("reader_numpy_no_axis.py", "attention", {}, names(F.WHOLE), set()),
    ("reader_numpy_float32.py", "attention", {}, names(judge.PRECISION["float32"]), set()),
    ("reader_numpy_float16.py", "attention", {}, names(judge.PRECISION["float16"]), set()),
    ("reader_needs_arrays.py", "attention", {}, names(judge.NEEDS_ARRAYS), SHAPES),
    ("reader_needs_arrays.py", "attention", {"arrays": True}, set(), set()),
    ("reader_batched.py", "attention", {"batched": True}, set(), set()),
    ("reader_batched.py", "attention", {"batched": True, "arrays": True}, set(), set()),
    ("reader_backward_numpy.py", "backward", {}, set(), set()),
    ("reader_online_numpy.py", "online", {}, set(), set()),
    ("reader_mha_numpy.py", "mha", {}, set(), set()),
]


def row(entry, numpy=False):
    spec, mode, options = entry[:3]
    fast = (spec, mode) in FAST and not options
    marks = ([] if fast else [pytest.mark.slow]) + ([needs_numpy] if numpy else [])
    flags = "".join(f" {k}={v}" for k, v in options.items())
    return pytest.param(*entry, id=f"{spec} {mode}{flags}", marks=marks)


@pytest.mark.parametrize("spec, mode, options, fails, notes",
                         [row(e) for e in TABLE] + [row(e, numpy=True) for e in WITH_NUMPY])
def test_each_reader_gets_its_verdict_and_each_slip_its_name(spec, mode, options, fails, notes):
    path, name = reader(spec)
    report = check.check(path, mode, name, **dict({"time_limit": 10}, **options))
    assert (failed(report), noted(report)) == (fails, notes)
    assert report.ok == (not fails)


def test_every_new_mode_has_three_right_and_eight_wrong_readers():
    for mode in ("backward", "online", "mha"):
        rows = [e for e in TABLE + WITH_NUMPY if e[1] == mode]
        assert sum(not e[3] for e in rows) >= 3 and sum(bool(e[3]) for e in rows) >= 8, mode


def test_a_textbook_answer_exits_0_with_its_notes_and_1_under_strict(capsys):
    path = os.path.join(READERS, "reader_textbook.py")
    assert check.main([path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "correct on all 9 ordinary cases; 3 edge cases to discuss; 4 not run"
    assert "        asked: What should a fully masked row return?" in out
    assert check.main([path, "--strict"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "3 of 12 cases failed; 4 not run"


# ----------------------------------------------------------------- the cases and mistakes

def distance(a, b):
    """The largest |a - b| between two answers of the same shape, inf otherwise."""
    if not judge.same_shape(a, b) or not judge.same_shape(b, a):
        return math.inf
    return judge.worst(a, b)[0]


def test_in_the_first_case_every_wrong_scale_has_its_own_answer():
    # n=3 m=5 d_k=16 d_v=2: d_k, d_v, n, m and d_k + 1 all differ, so does each wrong sqrt
    case = F.cases()[0]
    expect = F.expect(case, judge.Conventions())
    answers = [(v.mistake.name, v.answer) for v in expect.variants]
    assert len(answers) == 12  # seven scales, after softmax, two axes, weights, transposed
    for k, (name, answer) in enumerate(answers):
        assert distance(answer, expect.reference) > 1e-3, name
        for other, other_answer in answers[:k]:
            assert distance(answer, other_answer) > 1e-3, (name, other)


def test_the_shapes_of_the_cases_tell_every_wrong_sqrt_apart():
    for mode in (F, mode_backward):
        for case in mode.cases():
            Q, K, V = case.args[:3]
            if case.kind != "error" and len(K[0]) > 1 and not case.title.startswith("logits"):
                sizes = [len(K[0]), len(V[0]), len(K), len(K[0]) + 1]
                assert len(set(sizes)) == 4 or len(Q) == len(K), case.title
    for case in mode_mha.cases()[:1]:
        X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
        d_k = len(W_Q[0]) // h
        assert len({d_k, len(W_V[0]) // h, len(X_q[0]), d_k + 1, len(X_q), len(X_kv)}) == 6


def test_each_case_title_states_its_shapes():
    for case in F.cases() + mode_backward.cases() + mode_online.cases():
        Q, K, V = case.args[:3]
        shape = {"n": len(Q), "m": len(K), "d_k": len(K[0]), "d_v": len(V[0])}
        stated = {k: int(v) for k, v in re.findall(r"\b(n|m|d_k|d_v)=(\d+)", case.title)}
        if case.kind != "error":
            assert stated.items() <= shape.items(), case.title


def overflows(x):
    try:
        math.exp(x)
    except OverflowError:
        return True
    return False


def test_the_logits_near_1e3_break_an_unshifted_exp_and_each_trap_its_own_shift():
    near = {c.title: c for c in F.cases() if "e3" in c.title}
    S = {t: [[s / 2 for s in row] for row in F.matmul(c.args[0], F.transpose(c.args[1]))]
         for t, c in near.items()}  # k_j = 2 e_j and sqrt(d_k) = 2: the logits themselves
    assert all(overflows(s) for row in S["logits near +1e3"] for s in row)
    assert all(math.exp(s) == 0.0 for row in S["logits near -1e3"] for s in row)
    assert S["row [1e3, 0, -1e3]"] == [[1000.0, 0.0, -1000.0]]  # the max first: min breaks
    assert S["row [0, 1e3, -1e3]"] == [[0.0, 1000.0, -1000.0]]  # and the first entry too
    top, low = S["rows 2e3 apart"]
    assert max(top) - max(low) > 1490  # the top row's max underflows the bottom row's exp


def test_every_mistake_of_every_case_is_named_as_itself():
    # the answer each mistake gives is judged as that mistake (or one whose answer is the
    # same here), in every case of every mode
    for mode in check.MODES.values():
        for case in mode.cases():
            expect = mode.expect(case, judge.Conventions())
            for variant in expect.variants:
                answer = Reply("returned", variant.answer)
                verdict = judge.judge(case, answer, answer, expect, judge.Conventions())
                assert verdict.status in ("FAIL", "NOTE"), (case.title, variant.mistake)
                same = [v.answer for v in expect.variants if v.mistake == verdict.mistake]
                tol = judge.tolerance(expect.reference)  # NaN: any non-finite answer
                assert any(judge.close(variant.answer, a, tol) for a in same), (
                    case.title, variant.mistake)


def github_anchor(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def every_mistake():
    found = {m for module in MODULES for m in vars(module).values()
             if isinstance(m, judge.Mistake)}
    return found | set(judge.PRECISION.values()) | {mode_mha.axis(1)}


def test_every_answer_the_checker_links_to_exists_and_names_a_question():
    pages = {}
    for page in ("interview.md", "checker.md"):
        with open(os.path.join(ROOT, "docs", page), encoding="utf-8") as f:
            pages[page] = {github_anchor(h) for h in re.findall(r"^#+ (.+)$", f.read(), re.M)}
    mistakes = every_mistake()
    assert len(mistakes) > 70
    for mistake in mistakes:
        page, _, anchor = mistake.page.partition("#")
        assert anchor in pages[page], mistake
        assert check.question("docs/" + mistake.page), mistake


def test_a_mistakes_name_is_short_and_the_output_stays_on_its_line():
    for mistake in every_mistake():
        assert len(re.findall(r"[A-Za-z][A-Za-z'-]*", mistake.name)) < 6, mistake.name


# ------------------------------------------------------------------- the judge's verdicts

FULL = next(c for c in F.cases() if c.kind == "no key")
SHAPE_CASE = next(c for c in F.cases() if c.kind == "error")


def verdict_of(case, reply, conventions=None):
    expect = F.expect(case, conventions or judge.Conventions())
    second = reply if reply.kind in ("returned", "raised") else None
    return judge.judge(case, reply, second, expect, conventions or judge.Conventions())


def with_row(row):
    """The right answer to FULL, with row in place of the row that sees no key."""
    return [row if r is None else r for r in F.expect(FULL, judge.Conventions()).reference]


def raised(*types):
    return Reply("raised", types=types + ("BaseException", "object"), error=types[0])


UNMASKED = F.scaled_dot_product_attention([FULL.args[0][1]], *FULL.args[1:])[0]


@pytest.mark.parametrize("reply, status, mistake, detail", [
    (Reply("returned", with_row([0.0, 0.0])), "ok", None, "zeros"),
    (Reply("returned", with_row([math.fsum(c) / 4 for c in zip(*FULL.args[2])])), "ok", None,
     "mean of V"),
    (raised("ValueError", "Exception"), "ok", None, "raises ValueError"),
    (raised("IndexError", "Exception"), "NOTE", judge.ODD_ERROR, "raises IndexError"),
    (raised("SystemExit"), "NOTE", judge.ODD_ERROR, "raises SystemExit"),
    (Reply("returned", with_row([math.nan, math.nan])), "NOTE", judge.NAN_ROW, ""),
    (Reply("returned", with_row(UNMASKED)), "NOTE", judge.UNMASKED_ROW, "as if unmasked"),
    (Reply("returned", with_row([5.0, -5.0])), "NOTE", judge.OTHER_ROW, ""),
], ids=["zeros", "mean-of-V", "ValueError", "IndexError", "SystemExit", "NaN", "unmasked",
        "other"])
def test_a_query_with_no_key_is_judged_by_its_convention(reply, status, mistake, detail):
    assert verdict_of(FULL, reply) == judge.Verdict(status, mistake, detail)


@pytest.mark.parametrize("types, status", [
    (("ValueError", "Exception"), "ok"),
    (("ShapeError", "ValueError", "Exception"), "ok"),  # a subclass refuses too
    (("TypeError", "Exception"), "NOTE"),
    (("AttributeError", "Exception"), "NOTE"),
    (("SystemExit",), "NOTE"),
    (("KeyboardInterrupt",), "NOTE"),
])
def test_only_a_value_error_refuses_shapes_that_do_not_match(types, status):
    verdict = verdict_of(SHAPE_CASE, raised(*types))
    assert (verdict.status, verdict.detail) == (status, "raises " + types[0])
    answer = Reply("returned", [[0.0, 0.0]] * 2)
    assert verdict_of(SHAPE_CASE, answer) == judge.Verdict("NOTE", judge.NO_ERROR)


def test_an_answer_no_mistake_gives_is_described_by_its_numbers():
    case = F.cases()[0]
    right = F.expect(case, judge.Conventions()).reference

    def say(answer):
        return verdict_of(case, Reply("returned", answer))[1:]

    off = [r[:] for r in right]
    off[2][1] += 0.5
    assert say(off) == (judge.UNNAMED, "off by 0.5 at [2][1]")
    off[2][1] = math.inf
    assert say(off) == (judge.NOT_FINITE, "at [2][1]")
    assert say([[1.0, 2.0, 3.0]]) == (judge.WRONG_SHAPE, "1 x 3, not 3 x 2")
    assert say([1.0, 2.0]) == (judge.WRONG_SHAPE, "2, not 3 x 2")
    assert say(1.0) == (judge.WRONG_SHAPE, "a number, not 3 x 2")
    assert say([[round(v, 4) for v in r] for r in right]) == (judge.ROUNDED, "to 4 decimals")
    noise = [[v + 3e-9 * (-1) ** (i + j) for j, v in enumerate(r)] for i, r in enumerate(right)]
    assert say(noise) == (judge.UNNAMED, "off by 3e-09 at [0][0]")  # not a precision
    assert say({"output": right}) == (judge.WRONG_SHAPE, "a dict, not 3 x 2")


def test_a_batch_is_judged_as_its_two_cases_stacked():
    softmax = check.MODES["softmax"]
    for case in softmax.cases():
        stacked = judge.batch(case, softmax)
        expect = judge.expect_batch(stacked, softmax, judge.Conventions())
        answers = [softmax.expect(part, judge.Conventions()) for part in stacked.parts]
        if case.kind == "no key":
            zeros = Reply("returned", [[0.0] * 3] * 2)
            assert judge.judge(stacked, zeros, zeros, expect, judge.Conventions()) == \
                judge.Verdict("ok", None, "zeros")
            continue
        right = Reply("returned", [a.reference for a in answers])
        assert judge.judge(stacked, right, right, expect, judge.Conventions()).status == "ok"
        first = Reply("returned", [answers[0].reference] * 2)
        named = judge.judge(stacked, first, first, expect, judge.Conventions()).mistake
        assert named == (judge.FIRST_BATCH if answers[0].reference != answers[1].reference
                         else None), case.title


def junk(rng, depth=0):
    """Any answer a reply may carry: numbers (NaN, inf), None, lists and dicts of them."""
    draw = rng.random()
    if depth > 4 or draw < 0.3:
        return rng.choice([0.0, 1.5, -2.0, math.nan, math.inf, -math.inf, None, 1e300])
    if draw < 0.4:
        return {rng.choice(["dQ", "dk", "x"]): junk(rng, depth + 1) for _ in range(3)}
    return [junk(rng, depth + 1) for _ in range(rng.randint(0, 6))]


@pytest.mark.slow
def test_no_answer_whatever_its_shape_makes_the_judge_raise():
    rng = random.Random(5)
    for mode in check.MODES.values():
        for case in mode.cases():
            for batched in (False, True):
                run = judge.batch(case, mode) if batched else case
                expect = (judge.expect_batch(run, mode, judge.Conventions()) if batched
                          else mode.expect(run, judge.Conventions()))
                for _ in range(20):
                    first, second = (Reply("returned", mode.unpack(junk(rng), batched))
                                     for _ in "12")
                    for pair in ((first, first), (first, second)):
                        assert judge.judge(run, *pair, expect, judge.Conventions()).status in (
                            "ok", "NOTE", "FAIL")


def test_two_calls_that_differ_are_nondeterministic():
    case, expect = F.cases()[0], F.expect(F.cases()[0], judge.Conventions())
    first = Reply("returned", expect.reference)
    second = Reply("returned", [r[:] for r in expect.reference])
    second.value[1][0] += 1e-6
    assert judge.judge(case, first, second, expect, judge.Conventions()) == judge.Verdict(
        "FAIL", judge.NONDETERMINISTIC, "by 1e-06 at [1][0]")
    assert judge.judge(case, first, raised("ValueError"), expect, judge.Conventions()) == \
        judge.Verdict("FAIL", judge.NONDETERMINISTIC, "returned, then raised")


def test_a_changed_argument_fails_even_with_the_right_answer():
    case, expect = F.cases()[0], F.expect(F.cases()[0], judge.Conventions())
    changed = Reply("returned", expect.reference, mutated=("Q", "V"))
    assert judge.judge(case, changed, changed, expect, judge.Conventions()) == judge.Verdict(
        "FAIL", judge.MUTATED, "Q, V")
    wrong = Reply("returned", [[0.0, 0.0]] * 3, mutated=("Q",))
    assert judge.judge(case, wrong, wrong, expect, judge.Conventions()).detail.endswith(
        "; changed Q")


def test_a_convention_detected_once_is_followed_after():
    case = next(c for c in F.cases() if c.mask is not None)
    conventions = judge.Conventions()
    inverted = next(v for v in F.expect(case, conventions).variants if v.mistake == F.TRUE_BLOCKS)
    assert verdict_of(case, Reply("returned", inverted.answer), conventions) == judge.Verdict(
        "NOTE", F.TRUE_BLOCKS)
    assert conventions.true_blocks  # the next masks are sent inverted
    stated = judge.Conventions(true_blocks=False)
    assert verdict_of(case, Reply("returned", inverted.answer), stated).status == "FAIL"


def test_a_mistake_ruled_out_by_an_earlier_case_is_not_named():
    # a candidate that passed the row [1e3, 0, -1e3] does not shift by the row's min, so its
    # overflow on [0, 1e3, -1e3] is the shift by the first entry
    first, second = [c for c in F.cases() if c.title.startswith("row [")]
    conventions = judge.Conventions()
    right = F.expect(first, conventions).reference
    assert verdict_of(first, Reply("returned", right), conventions).status == "ok"
    overflow = raised("OverflowError", "ArithmeticError", "Exception")
    assert verdict_of(second, overflow, conventions).mistake == F.SHIFT_FIRST
    assert verdict_of(second, overflow).mistake == F.NO_SHIFT  # nothing ruled out yet


def test_the_summary_counts_ordinary_cases_notes_and_cases_not_run():
    line = check.Result
    report = check.Report([], [line("a", "ok"), line("b", "NOTE", edge=True), line("c", "skip")])
    assert report.summary == "correct on all 1 ordinary cases; 1 edge case to discuss; 1 not run"
    report = check.Report([], [line("a", "FAIL"), line("b", "ok")])
    assert (report.summary, report.ok) == ("1 of 2 cases failed", False)


# ------------------------------------------------------------------ how a function is called

@pytest.mark.parametrize("signature, keywords", [
    ("Q, K, V, mask=None, is_causal=False, scale=None",
     {"mask": "mask", "causal": "is_causal", "scale": "scale"}),
    ("query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None",
     {"mask": "attn_mask", "causal": "is_causal", "scale": "scale", "dropout": "dropout_p"}),
    ("q, k, v, attention_mask=None, *, causal=False, softmax_scale=None",
     {"mask": "attention_mask", "causal": "causal", "scale": "softmax_scale"}),
])
def test_each_spelling_of_the_mask_causal_flag_and_scale_is_passed(signature, keywords):
    params = [[p.split("=")[0].strip(), "KEYWORD_ONLY" if "causal" in p and "*" in signature
               else "POSITIONAL_OR_KEYWORD", "=" in p] for p in signature.split(", ") if p != "*"]
    assert plan({"name": "f", "params": params}, ("Q", "K", "V")).keywords == keywords


def parameters(*names):
    """A signature's parameters as runner.Child.info gives them: Q, K, V required."""
    return [[n, "POSITIONAL_OR_KEYWORD", n not in ("Q", "K", "V")] for n in names]


def test_a_block_size_goes_by_its_name_or_the_next_position_never_into_an_option():
    labels = ("Q", "K", "V")
    assert plan({"name": "f", "params": parameters("Q", "K", "V", "B")}, labels,
                block=True).block_positional
    named = plan({"name": "f", "params": parameters("Q", "K", "V", "mask", "block_size")},
                 labels, block=True)
    assert (named.block_positional, named.keywords) == (
        False, {"mask": "mask", "block_size": "block_size"})
    with pytest.raises(CallError) as error:  # the whiteboard's one-pass takes no block size
        plan({"name": "f", "params": parameters("Q", "K", "V", "scale")}, labels, block=True)
    assert str(error.value) == "f(Q, K, V, scale) takes no block size: name a parameter block_size"


def test_a_required_mask_is_all_true_where_a_case_has_none():
    calls = Plan("f", ("Q", "K", "V"), {"mask": "mask"}, ("mask",), ())
    case = F.cases()[2]  # n=3 m=4
    assert arguments(calls, case, judge.Conventions())[1] == {"mask": [[True] * 4] * 3}
    assert arguments(calls, case, judge.Conventions(true_blocks=True))[1] == {
        "mask": [[False] * 4] * 3}
    causal = next(c for c in F.cases() if c.causal)
    assert arguments(calls, causal, judge.Conventions()) is None  # no is_causal to pass
    dropout = Plan("f", ("Q", "K", "V"), {"dropout": "dropout"}, (), ())
    assert arguments(dropout, case, judge.Conventions())[1] == {}  # its default may be a module
    required = dropout._replace(required=("dropout",))
    assert arguments(required, case, judge.Conventions())[1] == {"dropout": 0.0}


def test_a_parameter_that_looks_like_a_mask_is_never_skipped_silently():
    params = [["Q", "POSITIONAL_OR_KEYWORD", False], ["K", "POSITIONAL_OR_KEYWORD", False],
              ["V", "POSITIONAL_OR_KEYWORD", False], ["key_padding_mask", "KEYWORD_ONLY", True],
              ["causal_mask", "KEYWORD_ONLY", True]]
    assert plan({"name": "f", "params": params}, ("Q", "K", "V")).unexercised == (
        "key_padding_mask", "causal_mask")


@pytest.mark.slow
def test_answers_are_read_from_pairs_dicts_and_anything_with_tolist(tmp_path):
    path = tmp_path / "tensor.py"
    path.write_text("import math\n\n\nclass Tensor:\n    def __init__(self, rows):\n"
                    "        self.rows = rows\n\n    def tolist(self):\n        return self.rows\n"
                    "\n\ndef attention(Q, K, V):\n    out = []\n    for q in Q:\n"
                    "        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(len(q))"
                    " for k in K]\n"
                    "        e = [math.exp(x - max(s)) for x in s]\n"
                    "        out.append([sum(p * v[t] for p, v in zip(e, V)) / sum(e)"
                    " for t in range(len(V[0]))])\n"
                    "    return Tensor(out), Tensor([[0.0]])\n")
    report = check.check_attention(str(path), time_limit=10)
    assert failed(report) == set()


# ------------------------------------------------------ nothing the candidate does fools it

def test_a_forged_reply_is_data_never_code(capsys):
    for spec in ("reader_forge_pickle.py", "reader_forge_json.py"):
        report = check.check_attention(reader(spec)[0], time_limit=10)
        assert failed(report) == names(judge.UNREADABLE, judge.NOT_RUN), spec
    assert "all ok" not in capsys.readouterr().out  # the pickle was never loaded


@pytest.mark.slow
def test_a_partial_reply_then_a_hang_costs_the_time_limit_not_the_run():
    start = time.monotonic()
    report = check.check_attention(reader("reader_partial_write.py")[0], time_limit=0.3)
    assert failed(report) == names(judge.TIME_OUT, judge.NOT_RUN)
    assert [r.status for r in report.results].count("FAIL") == 16
    assert time.monotonic() - start < 5


@pytest.mark.slow
def test_after_two_broken_calls_the_rest_are_not_run_and_a_death_costs_one_case(tmp_path):
    path = tmp_path / "odd.py"
    path.write_text("import attention as mine\nimport os\n\n\ndef attention(Q, K, V):\n"
                    "    if len(K[0]) == 1:\n        os._exit(7)\n    return 'O'\n")
    (tmp_path / "attention.py").write_text("")  # its own attention module, empty
    report = check.check_attention(str(path), time_limit=10)
    assert report.results[2] == check.Result(
        "n=3 m=4 d_k=1 d_v=5", "FAIL", judge.DIED.name, "exit status 7",
        "docs/" + judge.DIED.page, False, ())
    assert report.results[0].detail == "TypeError: returned a str, not numbers"
    assert report.results[0].mistake == judge.UNREADABLE_ANSWER.name
    assert [r.status for r in report.results].count("FAIL") == 10  # the rest still ran


@pytest.mark.slow
def test_a_failed_reload_is_that_cases_fail(tmp_path):
    marker = tmp_path / "loaded"
    path = tmp_path / "once.py"
    path.write_text(f"import os\nif os.path.exists({str(marker)!r}):\n    raise ImportError('x')\n"
                    f"open({str(marker)!r}, 'w').close()\n\n\ndef attention(Q, K, V):\n"
                    "    os._exit(1)\n")
    report = check.check_attention(str(path), time_limit=10)
    assert report.results[1].detail.startswith("reload failed: ImportError")
    assert report.results[2].mistake == judge.NOT_RUN.name


@pytest.mark.slow
def test_an_oversized_or_too_deep_answer_is_an_unreadable_reply(tmp_path):
    path = tmp_path / "big.py"
    path.write_text("def attention(Q, K, V):\n    if len(K[0]) == 7:\n"
                    "        x = 0.0\n        for _ in range(20):\n            x = [x]\n"
                    "        return x\n    return [[0.5] * 200000] * 3\n")
    report = check.check_attention(str(path), time_limit=10)
    assert [r.detail for r in report.results[:2]] == [
        "reply over 1 MiB", "ValueError: nested too deep"]


@pytest.mark.slow
def test_the_reference_cannot_be_borrowed_and_a_file_named_attention_loads_as_itself(tmp_path):
    report = check.check_attention(reader("reader_borrows.py")[0], time_limit=10)
    assert failed(report) == names(judge.IMPORT_FAILED)
    assert "ImportError at reader_borrows.py:4: import attention" in report.results[0].detail
    (tmp_path / "softmax.py").write_text(  # its own softmax, without the max-shift
        "import math\n\n\ndef softmax(x):\n    e = [math.exp(v) for v in x]\n"
        "    return [v / sum(e) for v in e]\n")
    (tmp_path / "attention.py").write_text(
        "import math\nfrom softmax import softmax\n\n\ndef attention(Q, K, V):\n"
        "    P = [softmax([sum(a * b for a, b in zip(q, k)) / math.sqrt(len(q)) for k in K])"
        " for q in Q]\n"
        "    return [[sum(p * v[e] for p, v in zip(P_i, V)) for e in range(len(V[0]))]"
        " for P_i in P]\n")
    report = check.check_attention(str(tmp_path / "attention.py"), time_limit=10)
    assert failed(report) == names(F.NO_SHIFT)


@pytest.mark.slow
def test_a_process_pool_works_in_the_child():
    report = check.check_attention(reader("reader_pool.py")[0], time_limit=20)
    assert failed(report) == set() and noted(report) == set()


# ------------------------------------------------------------------- the command line

def run(*args, cwd=ROOT):
    """Run interview/check.py; a hang fails the test instead of hanging it."""
    return subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


@pytest.mark.slow
def test_the_command_line_runs_from_the_root_and_from_inside_interview():
    for cwd in (ROOT, os.path.join(ROOT, "interview")):
        assert run("--help", cwd=cwd).returncode == 0
    done = run(os.path.join(READERS, "reader_lists.py"), cwd=os.path.join(ROOT, "interview"))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1] == "correct on all 12 ordinary cases; 1 not run"


@pytest.mark.slow
def test_the_candidates_output_is_shown_indented_under_its_case_never_as_a_report_line():
    done = run("tests/readers/reader_forged_summary.py")
    lines = done.stdout.splitlines()
    assert (done.returncode, done.stderr) == (1, "")
    assert lines[-1] == "8 of 10 cases failed; 2 edge cases to discuss; 6 not run"
    printed = [line for line in lines if "correct on all" in line or line.endswith("d_v=2")]
    assert printed[:2] == ["        |   ok    n=3 m=5 d_k=16 d_v=2",
                           "        | correct on all 13 ordinary cases"]
    assert all(line.startswith("        | ") for line in printed[1:])


@pytest.mark.slow
def test_an_interrupt_or_an_unprintable_exception_is_reported_in_one_line():
    for spec, first in (("reader_interrupt_import.py", "loading the file: error on import"),
                        ("reader_interrupt_call.py", "n=3 m=5 d_k=16 d_v=2: error on valid"),
                        ("reader_bad_str.py", "n=3 m=5 d_k=16 d_v=2: error on valid input "
                         "(Broken at reader_bad_str.py:10) ->")):
        done = run("tests/readers/" + spec)
        assert (done.returncode, done.stderr) == (1, ""), spec
        assert done.stdout.splitlines()[1].startswith("  FAIL  " + first), spec
        assert "Traceback" not in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["no_such_file.py"], "check.py: no such file: no_such_file.py"),
    (["tests/readers/reader_lists.py:nope"], "check.py: reader_lists.py defines no nope; name "
     "the function: reader_lists.py:NAME"),
    (["tests/readers/reader_lists.py", "--time-limit", "0"], "check.py: --time-limit must be "
     "above 0 and at most 3600, not 0 (see python3 interview/check.py --help)"),
    (["--no-such-flag", "x.py"], "check.py: unrecognized arguments: --no-such-flag (see "
     "python3 interview/check.py --help)"),
    (["x.py", "--softmax", "--mha"], "check.py: argument --mha: not allowed with argument "
     "--softmax (see python3 interview/check.py --help)"),
    (["README.md"], "check.py: README.md is not a .py file"),
], ids=["no-file", "no-function", "bad-time-limit", "bad-flag", "two-modes", "not-python"])
def test_a_usage_error_exits_2_with_one_line(args, message):
    done = run(*args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("source, message", [
    ("def attention(Q, K, V)\n    pass\n", "bad.py:1: SyntaxError: "),
    ("attention = 'soon'\n", "bad.py: attention is a str, not a function"),
    ("def attn(Q, K, V):\n    pass\n", "bad.py defines no attention or "
     "scaled_dot_product_attention; name the function: bad.py:NAME"),
    ("def attention(Q):\n    pass\n", "attention(Q) cannot be called as attention(Q, K, V)"),
    ("def attention(Q, K, V, W):\n    pass\n", "attention: parameter W has no default"),
], ids=["syntax-error", "not-callable", "no-function", "too-few-parameters", "one-too-many"])
def test_a_file_that_cannot_be_checked_is_a_usage_error(tmp_path, source, message):
    path = tmp_path / "bad.py"
    path.write_text(source)
    with pytest.raises(check.UsageError) as error:
        check.check_attention(str(path), time_limit=10)
    assert str(error.value).startswith(message)


@pytest.mark.slow
def test_what_the_file_prints_on_loading_is_shown_under_the_header(tmp_path, capsys):
    path = tmp_path / "prints.py"
    path.write_text("for k in range(5):\n    print('line', k)\n\n\ndef attention(Q, K, V):\n"
                    "    return V\n")
    check.main([str(path)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:5] == ["        | line 0", "        | line 1", "        | line 2",
                          "        | (+2 more lines)"]


@pytest.mark.slow
def test_a_file_whose_import_fails_is_a_fail_not_a_usage_error(tmp_path):
    path = tmp_path / "imports.py"
    path.write_text("import no_such_module_for_check\n")
    done = run(str(path))
    assert (done.returncode, done.stderr) == (1, "")
    assert "ModuleNotFoundError at imports.py:1" in done.stdout


def group_of_child(pid, timeout=20):
    """The process group of the checker's child, once the call is running in it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in processes():
            if proc[1] == pid and len(members(proc[2])) >= 2:  # the child and its own child
                return proc[2]
        time.sleep(0.05)
    raise AssertionError("the checker started no child")


def processes():
    """(pid, parent pid, process group) of every process."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            found.append((int(entry), int(fields[1]), int(fields[2])))
        except (OSError, ValueError, IndexError):
            continue
    return found


def members(group):
    return [p for p in processes() if p[2] == group]


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_process_of_the_group_outlives_the_checker_killed_mid_run(tmp_path, sig):
    path = tmp_path / "spawns.py"
    path.write_text("import subprocess\nimport sys\nimport time\n\n\ndef attention(Q, K, V):\n"
                    "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                    "    while True:\n        time.sleep(0.01)\n")
    process = subprocess.Popen([sys.executable, CHECK, str(path), "--time-limit", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    group = None
    try:
        group = group_of_child(process.pid)
        process.send_signal(sig)
        out, err = process.communicate(timeout=20)
        deadline = time.monotonic() + 2
        while members(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert members(group) == []
        if sig == signal.SIGTERM:
            assert (process.returncode, err) == (143, "check.py: stopped by SIGTERM\n")
    finally:
        process.kill()
        process.wait()
        if group is not None and members(group):
            os.killpg(group, signal.SIGKILL)


@pytest.mark.slow
def test_ctrl_c_stops_the_checker_and_its_child_without_a_traceback(tmp_path):
    path = tmp_path / "loops.py"
    path.write_text("def attention(Q, K, V):\n    while True:\n        pass\n")
    process = subprocess.Popen([sys.executable, CHECK, str(path), "--time-limit", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    assert process.stdout.readline().endswith("loops.py: attention(Q, K, V)\n")
    time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (130, "", "check.py: stopped by SIGINT\n")


@pytest.mark.slow
def test_output_cut_short_by_its_reader_ends_quietly(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text("import time\n\n\ndef attention(Q, K, V):\n    time.sleep(0.1)\n")
    process = subprocess.Popen([sys.executable, CHECK, str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdout.readline()  # the header, then gone, as `| head -1` would be
    process.stdout.close()
    assert (process.wait(timeout=60), process.stderr.read()) == (1, "")


# ------------------------------------------------------------- the page that documents it

def checker_page():
    with open(os.path.join(ROOT, "docs", "checker.md"), encoding="utf-8") as f:
        return f.read()


def test_the_page_lists_each_modes_cases_as_the_checker_runs_them():
    section = checker_page().split("## The cases of each mode", 1)[1].split("\n## ", 1)[0]
    listed = re.split(r"\n(?=\S.*\(`--\w+`\)|Attention \(default\))", section)[1:]
    assert [part.split()[0] for part in listed] == [
        "Attention", "Softmax", "Backward", "One", "Multi-head"]
    for part, mode in zip(listed, ("attention", "softmax", "backward", "online", "mha")):
        ordinary, edge = part.split("\n", 1)[1].split("- edge:")
        cases = check.MODES[mode].cases()
        assert re.findall(r"`([^`]+)`", ordinary) == [
            c.title for c in cases if c.kind == "ordinary"], mode
        assert re.findall(r"`([^`]+)`", edge) == [c.title for c in cases if c.kind != "ordinary"]


def test_the_page_lists_the_spellings_the_checker_takes():
    rows = re.findall(r"^\| (mask|causal flag|scale|block size|dropout) \| (.+?) \|",
                      checker_page(), re.M)
    from interview.calling import SPELLINGS
    listed = [re.findall(r"`(\w+)`", spellings) for _, spellings in rows]
    assert listed == [list(names) for names in SPELLINGS.values()]


def test_the_pages_example_is_what_the_checker_prints(capsys):
    example = checker_page().split("```\ntests/", 1)[1].split("```", 1)[0].splitlines()
    example[0] = "tests/" + example[0]
    assert check.main([os.path.join(READERS, "reader_textbook.py")]) == 0
    printed = capsys.readouterr().out.splitlines()
    printed[0] = printed[0].replace(READERS, "tests/readers")
    shown = iter(printed)
    assert all(line == "  ..." or any(line == p for p in shown) for line in example), example


def test_every_link_of_the_page_resolves():
    for target in re.findall(r"\]\(([^)\s]+)\)", checker_page()):
        file, _, anchor = target.partition("#")
        path = os.path.join(ROOT, "docs", file)
        with open(path, encoding="utf-8") as f:
            headings = {github_anchor(h) for h in re.findall(r"^#+ (.+)$", f.read(), re.M)}
        assert not anchor or anchor in headings, target


def test_the_readme_has_a_line_per_mode():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        section = f.read().split("## For an interview", 1)[1].split("\n## ", 1)[0]
    for flag in ("", "--softmax", "--backward", "--online", "--mha"):
        assert re.search(rf"`python3 interview/check.py \S+ ?{flag}`", section), flag
