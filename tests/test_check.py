"""interview/check.py against a set of readers' files (tests/readers/), right and wrong.

Each wrong reader has one slip; the checker must name that slip (and nothing else) on the
lines that fail, and exit 1.  Each right one must pass, exit 0, and have its convention for a
fully masked row named.  Most tests call check_attention and check_softmax directly; a few
run the command line in a subprocess for its exact output and exit statuses.  The NumPy
readers run only where NumPy is installed.
"""

import importlib.util
import math
import multiprocessing
import os
import re
import signal
import subprocess
import sys

import pytest

import attention
import check
import softmax

HERE = os.path.dirname(os.path.abspath(__file__))
READERS = os.path.join(HERE, "readers")
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(ROOT, "interview", "check.py")
needs_numpy = pytest.mark.skipif(importlib.util.find_spec("numpy") is None,
                                 reason="NumPy is not installed")


def reader(name):
    return os.path.join(READERS, name)  # an absolute name stays as it is


def case(*values, numpy=False):
    """A parametrize case named after its file; numpy=True: skipped without NumPy."""
    return pytest.param(*values, id=values[0], marks=[needs_numpy] if numpy else [])


# ------------------------------------------------------------- the readers, right and wrong

# (file, keyword arguments, the mistakes named, how many checks fail)
WRONG = [
    case("reader_no_scale.py", {}, {check.NO_SCALE}, 9),  # all but d_k=1, the raise and the shapes
    case("reader_scale_d_k.py", {}, {check.BY_D_K}, 9),
    case("reader_scale_d_v.py", {}, {check.BY_SQRT_D_V}, 10),  # d_k=1 too: sqrt(d_v) = 2 there
    case("reader_scale_m.py", {}, {check.BY_SQRT_M}, 10),
    case("reader_scale_after_softmax.py", {}, {check.SCALE_AFTER}, 9),
    case("reader_wrong_axis.py", {}, {check.COLUMNS, None}, 11),  # None: the causal n < m case,
    # where keys 3 and 4 are open to no query, so a column's softmax raises
    case("reader_no_max_shift.py", {}, {check.NO_SHIFT}, 3),  # the three cases near 1e3
    case("reader_returns_weights.py", {}, {check.WEIGHTS}, 10),
    case("reader_mask_after_softmax.py", {}, {check.MASK_AFTER}, 2),
    case("reader_mask_zero_fill.py", {}, {check.MASK_ZERO}, 5),  # the masks and the causal masks
    case("reader_silent_nan.py", {}, {check.NAN_ROW}, 1),
    case("reader_minus_1e9_added.py", {}, {check.UNMASKED_ROW}, 1),
    case("reader_no_shape_check.py", {}, {check.NO_ERROR}, 2),
    case("reader_causal_bottom_right.py", {}, {check.BOTTOM_RIGHT, None}, 2),  # None: n > m leaves
    # the first queries no key, and its softmax raises
    case("reader_mask_true_blocks.py", {}, {check.TRUE_BLOCKS}, 2),
    case("reader_lists.py", {"true_blocks": True}, {check.TRUE_ATTENDS}, 2),
    case("reader_type_error.py", {}, {None}, 3),  # raises TypeError for is_causal=True
    case("reader_numpy_no_max_shift.py", {}, {check.NO_SHIFT}, 3, numpy=True),  # NaN, silently
    case("reader_numpy_whole_max.py", {}, {check.WHOLE_MAX}, 1, numpy=True),
    case("reader_numpy_no_axis.py", {}, {check.WHOLE}, 8, numpy=True),
    case("reader_numpy_float32.py", {}, {check.LOW_PRECISION}, 6, numpy=True),
]

# (file, keyword arguments, the convention for a fully masked row, how many checks skipped)
RIGHT = [
    case("reader_lists.py", {}, "raises", 0),
    case("reader_zeros.py", {}, "zeros", 0),
    case("reader_uniform.py", {}, "uniform", 0),
    case("reader_pair.py", {}, "uniform", 3),  # returns (output, weights); takes no is_causal
    case("reader_mask_true_blocks.py", {"true_blocks": True}, "raises", 0),
    pytest.param(os.path.join(ROOT, "attention.py"), {}, "raises", 0, id="the library"),
    case("reader_numpy.py", {}, "zeros", 0, numpy=True),
]


def names(mistakes):
    return {m.name if m else "" for m in mistakes}


@pytest.mark.parametrize("file, kwargs, mistakes, failed", WRONG)
def test_each_wrong_reader_is_told_its_mistake(file, kwargs, mistakes, failed):
    report = check.check_attention(reader(file), time_limit=10, **kwargs)
    assert not report.ok
    assert report.mistakes == names(mistakes)
    assert sum(r.status == "FAIL" for r in report.results) == failed


@pytest.mark.parametrize("file, kwargs, convention, skipped", RIGHT)
def test_each_right_reader_passes_and_its_convention_is_named(file, kwargs, convention, skipped):
    report = check.check_attention(reader(file), time_limit=10, **kwargs)
    assert report.ok and report.mistakes == set()
    assert report.convention == convention
    assert [r.status for r in report.results].count("skip") == skipped


WRONG_SOFTMAX = [
    case("reader_softmax_no_shift.py", {check.NO_SHIFT}, "raises"),  # 0/0 for all -inf: raises
    case("reader_softmax_nan.py", {check.NAN_ROW}, ""),
    case("reader_softmax_epsilon.py", {check.INF_WEIGHT}, "uniform"),
    case("reader_softmax_unnormalised.py", {check.NOT_NORMALISED}, "raises"),
]

RIGHT_SOFTMAX = [
    case("reader_lists.py:softmax", "raises"),
    case("reader_softmax_zeros.py", "zeros"),
    pytest.param(os.path.join(ROOT, "softmax.py"), "raises", id="the library"),
    case("reader_numpy.py:softmax", "zeros", numpy=True),
]


@pytest.mark.parametrize("file, mistakes, convention", WRONG_SOFTMAX)
def test_each_wrong_softmax_is_told_its_mistake(file, mistakes, convention):
    report = check.check_softmax(reader(file), time_limit=10)
    assert report.mistakes == names(mistakes) and report.convention == convention


@pytest.mark.parametrize("spec, convention", RIGHT_SOFTMAX)
def test_each_right_softmax_passes_and_its_convention_is_named(spec, convention):
    path, _, name = spec.partition(":")
    report = check.check_softmax(reader(path), name or None, time_limit=10)
    assert report.ok and report.convention == convention


# ----------------------------------------------------------------- the cases and mistakes

def distance(got, want):
    """The largest |got - want| over the rows both have (inf if the shapes differ)."""
    if len(got) != len(want):
        return math.inf
    rows = [(g, w) for g, w in zip(got, want) if g is not None and w is not None]
    if any(len(g) != len(w) for g, w in rows):
        return math.inf
    return max((abs(a - b) for g, w in rows for a, b in zip(g, w)), default=0.0)


def test_in_the_first_case_every_mistake_is_far_from_the_library_and_from_each_other():
    # d_k = 64, and n, m, d_v differ: each answer is > 1e-3 (10^6 tolerances) from the others
    case = check.attention_cases()[0]
    want, outputs = check._expected(case), list(check._variants(case, False))
    assert len(outputs) == 11  # six scales, the scale after softmax, two axes, two returns
    for k, (mistake, output) in enumerate(outputs):
        assert distance(output, want) > 1e-3, mistake.name
        for other, other_output in outputs[:k]:
            assert distance(output, other_output) > 1e-3, (mistake.name, other.name)


def test_each_case_title_states_its_shapes():
    for case in check.attention_cases():
        shape = {"n": len(case.Q), "m": len(case.K), "d_k": len(case.K[0]), "d_v": len(case.V[0])}
        title = case.title.replace("n=m=", "n=4 m=")
        stated = {k: int(v) for k, v in re.findall(r"\b(n|m|d_k|d_v)=(\d+)", title)}
        assert all(shape[k] == v for k, v in stated.items()), case.title
    cases = check.attention_cases()
    assert (len(cases[-2].Q[0]), len(cases[-2].K[0])) == (4, 3)  # Q with d_k=4, K with d_k=3
    assert (len(cases[-1].K), len(cases[-1].V)) == (3, 2)  # K with 3 rows, V with 2
    assert len(cases[-1].Q[0]) == len(cases[-1].K[0])  # and nothing else wrong


def overflows(x):
    try:
        math.exp(x)
    except OverflowError:
        return True
    return False


def test_the_logits_near_1e3_are_beyond_what_an_unshifted_exp_can_take():
    # each scaled logit near +1e3 overflows exp, each near -1e3 makes it 0: every row
    # breaks an unshifted softmax
    high, low, both = [c for c in check.attention_cases() if c.expect == "no overflow"]
    S = [attention.attention_steps(c.Q, c.K, c.V).scaled_scores for c in (high, low, both)]
    assert all(overflows(s) for row in S[0] for s in row)
    assert all(math.exp(s) == 0.0 for row in S[1] for s in row)
    assert S[2] == [S[0][0], S[1][0]]
    high_x, low_x = [c.x for c in check.softmax_cases() if c.expect == "no overflow"]
    assert all(map(overflows, high_x)) and all(math.exp(x) == 0.0 for x in low_x)


def test_which_mistakes_each_case_can_name():
    # 11: six scales, the scale after softmax, two axes, weights, transposed; a mask adds its
    # 4 (ignored, after softmax, 0 for -inf, polarity), is_causal its 5 (ignored, after, 0,
    # bottom-right, reversed).  A fully masked row has no transposed output; under causal
    # n < m, keys 3 and 4 are open to no query, so no softmax over columns.
    counts = [len(list(check._variants(case, False)))
              for case in check.attention_cases() if case.expect != "error"]
    assert counts == [11] * 6 + [15, 14, 16, 15, 16]


# Two mistakes give the same answer only where the case cannot tell them apart.
TIES = {("is_causal, n=m=4", check.BY_SQRT_N.name): check.BY_SQRT_M.name}


@pytest.mark.parametrize("true_blocks", [False, True], ids=["True=attend", "True=blocked"])
@pytest.mark.parametrize("case", [c for c in check.attention_cases() if c.expect != "error"],
                         ids=lambda case: case.title)
def test_the_answer_of_each_mistake_is_diagnosed_as_that_mistake(case, true_blocks):
    tol = 1e-9 * max(1.0, max(abs(v) for row in case.V for v in row))
    want = check._expected(case)
    for mistake, output in check._variants(case, true_blocks):
        answer = [row if row is not None else [0.0] * len(case.V[0]) for row in output]
        status, named, _, _ = check._judge(case, ("returned", answer, ()), true_blocks)
        if distance(output, want) <= tol:  # not a mistake here: a scale at d_k = 1, say
            assert status == "ok", mistake.name
        else:
            assert status == "FAIL"
            assert named.name == TIES.get((case.title, mistake.name), mistake.name)


def test_a_mistake_is_diagnosed_through_a_pair_and_through_tolist():
    case = check.attention_cases()[0]
    wrong = dict(check._variants(case, False))[check.NO_SCALE]
    P = [[0.2] * 5 for _ in range(3)]
    assert check._judge(case, ("returned", [wrong, P], ()), False)[1] is check.NO_SCALE
    want = check._expected(case)
    assert check._judge(case, ("returned", [want, P], ()), False)[0] == "ok"


# ------------------------------------------------------ what each answer is judged as

FULL = next(c for c in check.attention_cases() if c.expect == "fully masked")
BUG = ("TypeError", "Exception", "BaseException", "object")


UNMASKED = attention.scaled_dot_product_attention([FULL.Q[1]], FULL.K, FULL.V)[0]  # row 1


def with_row(case, row):
    """The library's answer to case, with row in place of the fully masked row's."""
    return [row if w is None else w for w in check._expected(case)]


def mean_of_V(case):
    return [math.fsum(column) / len(case.V) for column in zip(*case.V)]


@pytest.mark.parametrize("row, status, mistake, convention", [
    ([0.0, 0.0], "ok", None, "zeros"),
    (mean_of_V(FULL), "ok", None, "uniform"),
    ([math.nan, math.nan], "FAIL", check.NAN_ROW, ""),
    ([5.0, -5.0], "FAIL", check.OTHER_ROW, ""),
    (UNMASKED, "FAIL", check.UNMASKED_ROW, ""),
    ([UNMASKED[0] + 1e-3, UNMASKED[1]], "FAIL", check.OTHER_ROW, ""),  # 1e-5 is the bound
], ids=["zeros", "mean-of-V", "NaN", "other", "unmasked", "near-unmasked"])
def test_the_fully_masked_row_is_judged_by_its_convention(row, status, mistake, convention):
    got = check._judge(FULL, ("returned", with_row(FULL, row), ()), False)
    assert (got[0], got[1], got[3]) == (status, mistake, convention)


def test_an_exception_for_a_fully_masked_row_passes_unless_it_signals_a_bug():
    refusal = ("raised", "ValueError at f.py:3: no key", ("ValueError", "Exception"))
    assert check._judge(FULL, refusal, False) == ("ok", None, "raises ValueError", "raises")
    bug = ("raised", "TypeError at f.py:3: bad operand", BUG)
    assert check._judge(FULL, bug, False)[:2] == ("FAIL", check.BUG_RAISED)


def test_an_answer_no_mistake_explains_is_reported_by_its_largest_error():
    case = check.attention_cases()[0]
    want = check._expected(case)
    close = [[v + 3e-8 for v in row] for row in want]  # float32's rounding, about
    assert check._judge(case, ("returned", close, ()), False)[:3] == (
        "FAIL", check.LOW_PRECISION, "off by 3.0e-08 at [0][0]")
    tol = check.TOL * max(1.0, max(abs(v) for row in case.V for v in row))
    tiny = [row[:] for row in want]
    tiny[1][0] += 2 * tol  # an error above the tolerance, below float32's rounding
    assert check._judge(case, ("returned", tiny, ()), False)[:3] == (
        "FAIL", None, f"off by {2 * tol:.1e} at [1][0]: a small systematic error (an epsilon "
        "added somewhere?)")
    off = [row[:] for row in want]
    off[2][1] += 0.5
    assert check._judge(case, ("returned", off, ()), False)[:3] == (
        "FAIL", None, "off by 0.5 at [2][1]; no known mistake matches: compare docs/whiteboard.md")
    off[2][1] = math.inf
    assert check._judge(case, ("returned", off, ()), False)[:3] == (
        "FAIL", None, "not finite at [2][1]")
    assert check._judge(case, ("returned", [[1.0, 2.0, 3.0]], ()), False)[:3] == (
        "FAIL", None, "returned 1 x 3, not n x d_v = 3 x 2")
    assert check._judge(case, ("returned", 1.0, ()), False)[2] == (
        "returned a single number, not n x d_v = 3 x 2")
    assert check._judge(case, ("returned", [1.0, 2.0], ()), False)[2] == (
        "returned a flat list of 2 numbers, not n x d_v = 3 x 2")
    assert check._judge(case, ("returned", [[1.0], [2.0, 3.0]], ()), False)[2] == (
        "returned rows of lengths [1, 2], not n x d_v = 3 x 2")


def test_a_softmax_answer_is_judged_by_its_length_and_its_all_minus_inf_convention():
    few, all_inf = check.softmax_cases()[0], check.softmax_cases()[-1]
    assert check._judge_softmax(few, ("returned", [[0.25] * 4], ()))[:3] == (
        "FAIL", None, "returned 1 x 4, not a list of 4 numbers")
    assert check._judge_softmax(all_inf, ("returned", [1.0, 0.0, 0.0], ()))[:2] == (
        "FAIL", check.OTHER_ROW)
    assert check._judge_softmax(all_inf, ("returned", [1 / 3] * 3, ())) == (
        "ok", None, "uniform weights 1/n", "uniform")
    assert check._judge_softmax(few, ("returned", [math.exp(v) for v in few.x], ()))[:2] == (
        "FAIL", check.NOT_NORMALISED)
    off = softmax.softmax(few.x)
    off[3] += 0.125
    assert check._judge_softmax(few, ("returned", off, ()))[2] == (
        "off by 0.12 at [3]; no known mistake matches: compare docs/whiteboard.md")


def test_an_error_where_none_belongs_is_reported_in_one_line():
    case = check.attention_cases()[0]
    bug = ("raised", "TypeError at f.py:3: bad operand", BUG)
    assert check._judge(case, bug, False) == (
        "FAIL", None, "raised TypeError at f.py:3: bad operand", "")
    overflow = ("raised", "OverflowError at f.py:3: math range error",
                ("OverflowError", "ArithmeticError", "Exception"))
    large = check.attention_cases()[3]
    assert check._judge(large, overflow, False)[:2] == ("FAIL", check.NO_SHIFT)
    assert check._judge(case, overflow, False)[:2] == ("FAIL", None)  # not near 1e3: no guess


def test_mismatched_shapes_must_raise():
    for case in [c for c in check.attention_cases() if c.expect == "error"]:
        assert check._judge(case, ("raised", "ValueError: x", ("ValueError",)), False)[0] == "ok"
        assert check._judge(case, ("returned", [[0.0, 0.0]] * 2, ()), False)[:2] == (
            "FAIL", check.NO_ERROR)


def test_each_failure_line_names_the_mistake_and_links_its_answer():
    lines = []
    check.check_attention(reader("reader_no_max_shift.py"), echo=lines.append)
    assert lines[0].endswith("reader_no_max_shift.py: attention(Q, K, V, mask=..., is_causal=...)")
    assert lines[4] == (
        "  FAIL  logits near +1e3 (an unshifted exp overflows): no max-shift (raised "
        "OverflowError at reader_no_max_shift.py:7: math range error) -> "
        "docs/interview.md#why-subtract-the-max-inside-softmax")
    assert lines[1] == "  ok    n=3 m=5 d_k=64 d_v=2 (each wrong scale shows)"
    assert lines[-1] == "3 of 13 checks failed" and len(lines) == 15
    line = check.check_attention(reader("reader_no_scale.py")).results[0].line
    assert line == "no scale: Q K^T is not divided by sqrt(d_k) -> " \
        "docs/interview.md#why-divide-by-sqrtd_k"


def test_no_child_process_outlives_a_check():
    check.check_attention(reader("reader_lists.py"))
    assert multiprocessing.active_children() == []


def github_anchor(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_answer_linked_to_exists_in_interview_md():
    with open(os.path.join(ROOT, "docs", "interview.md"), encoding="utf-8") as f:
        anchors = {github_anchor(h) for h in re.findall(r"^#+ (.+)$", f.read(), re.M)}
    linked = {m.anchor for m in vars(check).values() if isinstance(m, check.Mistake)} - {""}
    assert len(linked) == 11
    assert linked <= anchors, linked - anchors


# --------------------------------------------------- loading, time limits, the child process

def test_a_reader_that_hangs_is_stopped_at_the_time_limit_and_the_rest_still_run():
    report = check.check_attention(reader("reader_hang.py"), time_limit=0.3)
    failed = [r for r in report.results if r.status == "FAIL"]
    assert [(r.title, r.mistake) for r in failed] == [("d_k=1 (n=2 m=3 d_v=4)",
                                                       check.TIME_OUT.name)]
    assert failed[0].line == "ran past the time limit (still running after 0.3 s)"
    assert [r.status for r in report.results].count("ok") == 7  # the cases after it too


def test_after_two_time_outs_the_rest_are_not_run(tmp_path):
    path = tmp_path / "loops.py"
    path.write_text("def attention(Q, K, V):\n    while True:\n        pass\n")
    report = check.check_attention(str(path), time_limit=0.1)
    assert [r.status for r in report.results] == ["FAIL"] * 2 + ["skip"] * 11
    assert report.results[2].line == "not run after two time-outs"


def test_a_reader_whose_process_dies_or_returns_no_numbers_fails_that_check(tmp_path):
    path = tmp_path / "odd.py"
    path.write_text("import os\n\ndef attention(Q, K, V):\n"
                    "    if len(K[0]) == 1:\n        os._exit(7)\n    return 'O'\n")
    lines = [r.line for r in check.check_attention(str(path), time_limit=10).results]
    assert lines[2] == "the process running it ended (exit code 7)"
    assert lines[0] == "returned str, not numbers in lists (found a str)"


def test_anything_with_tolist_is_read_through_it(tmp_path):
    path = tmp_path / "tensor.py"
    path.write_text("import attention as library\n\n\nclass Tensor:\n"
                    "    def __init__(self, rows):\n        self.rows = rows\n\n"
                    "    def tolist(self):\n        return self.rows\n\n\n"
                    "def attention(Q, K, V):\n"
                    "    return Tensor(library.scaled_dot_product_attention(Q, K, V))\n")
    report = check.check_attention(str(path), time_limit=10)
    assert report.ok and [r.status for r in report.results].count("ok") == 8


def test_the_readers_own_modules_win_over_the_librarys(tmp_path):
    # its attention.py imports its own softmax.py, which lacks the max-shift
    (tmp_path / "softmax.py").write_text(
        "import math\n\n\ndef softmax(x):\n    e = [math.exp(v) for v in x]\n"
        "    return [v / sum(e) for v in e]\n")
    (tmp_path / "attention.py").write_text(
        "import math\nfrom softmax import softmax\n\n\ndef attention(Q, K, V):\n"
        "    d = len(K[0])\n"
        "    P = [softmax([sum(a * b for a, b in zip(q, k)) / math.sqrt(d) for k in K])"
        " for q in Q]\n"
        "    return [[sum(p * v[e] for p, v in zip(P_i, V)) for e in range(len(V[0]))]"
        " for P_i in P]\n")
    report = check.check_attention(str(tmp_path / "attention.py"), time_limit=10)
    assert report.mistakes == {check.NO_SHIFT.name, check.NO_ERROR.name}


def test_a_required_mask_gets_all_true_where_a_case_has_none():
    info = {"name": "f", "takes": ["mask"], "required": ["mask"]}
    case = check.attention_cases()[2]  # n=2, m=3
    assert check._arguments(case, info, False) == {"mask": [[True] * 3] * 2}
    assert check._arguments(case, info, True) == {"mask": [[False] * 3] * 2}
    causal = check.attention_cases()[8]
    assert check._arguments(causal, info, False) is None  # no is_causal to pass


def test_a_file_that_loads_past_its_time_limit_is_a_usage_error(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text("import time\n\ntime.sleep(30)\n")
    with pytest.raises(check.UsageError) as error:
        check.check_attention(str(path), time_limit=0.05)  # loading may take 5 limits
    assert str(error.value) == "slow.py fails to load: still running after 0.25 s"


def test_an_exception_is_told_in_one_line_at_the_readers_last_line(tmp_path):
    path = str(tmp_path / "f.py")
    source = "def f():\n    g()\n\n\ndef g():\n    raise ValueError('a\\nb' + 'c' * 200)\n"
    namespace = {}
    exec(compile(source, path, "exec"), namespace)
    with pytest.raises(ValueError) as error:
        namespace["f"]()
    text = check._exception_text(error.value, path)
    assert text == "ValueError at f.py:6: a b" + "c" * 114 + "..."  # the message: 120 long


@pytest.mark.parametrize("source, message", [
    ("def attention(Q, K, V)\n    pass\n", "bad.py:1: SyntaxError: "),
    ("import no_such_module_for_check\n", "bad.py fails to load: ModuleNotFoundError at "
     "bad.py:1: No module named 'no_such_module_for_check'"),
    ("def attn(Q, K, V):\n    pass\n", "bad.py defines no function named attention or "
     "scaled_dot_product_attention; name it: bad.py:NAME"),
    ("def attention(Q):\n    pass\n", "bad.py: attention(Q) cannot be called as "
     "attention(Q, K, V): too many positional arguments"),
], ids=["syntax-error", "import-error", "no-function", "too-few-parameters"])
def test_a_file_that_cannot_be_checked_is_a_usage_error(tmp_path, source, message):
    path = tmp_path / "bad.py"
    path.write_text(source)
    with pytest.raises(check.UsageError) as error:
        check.check_attention(str(path), time_limit=10)
    assert str(error.value).startswith(message)


# ------------------------------------------------------------------- the command line

def run(*args, cwd=ROOT):
    """Run interview/check.py; a hang fails the test instead of hanging it."""
    return subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


def test_the_command_line_passes_a_right_reader_from_any_directory(tmp_path):
    done = run(reader("reader_lists.py"), cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert len(lines) == 15 and lines[-1] == "all 13 checks ok"
    assert lines[8] == "  ok    a fully masked row (n=3 m=4): raises ValueError"


def test_the_command_line_fails_a_wrong_reader_in_one_line_without_a_traceback():
    done = run("tests/readers/reader_type_error.py")
    assert (done.returncode, done.stderr) == (1, "")
    assert "  FAIL  is_causal, n=m=4: raised TypeError at reader_type_error.py:15: causal() " \
        "missing 1 required positional argument: 'm'" in done.stdout.splitlines()
    assert "Traceback" not in done.stdout


def test_the_command_line_stops_a_hang_at_the_time_limit():
    done = run("tests/readers/reader_hang.py", "--time-limit", "0.3")
    assert (done.returncode, done.stderr) == (1, "")
    assert "  FAIL  d_k=1 (n=2 m=3 d_v=4): ran past the time limit (still running after " \
        "0.3 s)" in done.stdout.splitlines()


def test_the_command_line_takes_a_name_and_the_softmax_flag():
    done = run("tests/readers/reader_lists.py:softmax", "--softmax")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "all 7 checks ok")
    done = run("tests/readers/reader_mask_true_blocks.py", "--mask-true-blocks")
    assert done.returncode == 0 and done.stdout.splitlines()[0] == (
        "tests/readers/reader_mask_true_blocks.py: attention(Q, K, V, mask=..., is_causal=...), "
        "mask True = blocked")


@pytest.mark.parametrize("args, message", [
    (["no_such_file.py"], "check.py: no such file: no_such_file.py"),
    (["tests/readers/reader_lists.py:nope"], "check.py: reader_lists.py defines no function "
     "named nope; name it: reader_lists.py:NAME"),
    (["tests/readers/reader_lists.py", "--time-limit", "0"], "check.py: --time-limit must be "
     "above 0 and at most 3600 seconds, not 0 (see python3 interview/check.py --help)"),
    (["--no-such-flag", "x.py"], "check.py: unrecognized arguments: --no-such-flag (see "
     "python3 interview/check.py --help)"),
], ids=["no-file", "no-function", "bad-time-limit", "bad-flag"])
def test_a_usage_error_exits_2_with_one_line(args, message):
    done = run(*args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message + "\n")


@pytest.mark.skipif(os.name != "posix", reason="signals to a process group: POSIX")
def test_ctrl_c_stops_the_checker_and_its_child_without_a_traceback(tmp_path):
    path = tmp_path / "loops.py"
    path.write_text("def attention(Q, K, V):\n    while True:\n        pass\n")
    process = subprocess.Popen([sys.executable, CHECK, str(path), "--time-limit", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    assert process.stdout.readline().endswith("loops.py: attention(Q, K, V)\n")
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (130, "", "check.py: interrupted\n")


def test_output_cut_short_by_its_reader_ends_quietly(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text("import time\n\n\ndef attention(Q, K, V):\n    time.sleep(0.2)\n")
    process = subprocess.Popen([sys.executable, CHECK, str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdout.readline()  # the header, then gone, as `| head -1` would be
    process.stdout.close()
    assert (process.wait(timeout=60), process.stderr.read()) == (1, "")
