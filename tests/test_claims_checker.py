"""The claims of docs/checker.md: what interview/check.py computes and does, each sentence
checked by running the checker, its judge or its draws, against answers computed here with
the library (attention.py, softmax.py), exact arithmetic, or the candidate's own code in a
file of its own.  A claim that tests/test_check.py checks already is registered with
`covered`, naming the test; claims about PyTorch, JAX and other tools name their source.

The tests that start the checker's child process (a whole run of check.py) are marked slow
where a run takes more than a fraction of a second; the in-process ones judge replies built
here (runner.Reply) or call the candidate's function in this process (Here, below), as the
child would.
"""

import ast
import copy
import json
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from attention import causal_mask, scaled_dot_product_attention
from interview import battery, check, judge, mode_backward, mode_mha, mode_online, mode_softmax
from interview import mode_forward as F
from interview import runner, serve
from interview.calling import CallError, arguments, plan, takes
from interview.check import Options
from interview.runner import Reply
from softmax import softmax
from tests.claims import Z, claim, covered, source
from tests.helpers import assert_close

PAGE = "docs/checker.md"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READERS = os.path.join(ROOT, "tests", "readers")
CHECK = os.path.join(ROOT, "interview", "check.py")
NAMED = Options(cases=0, time_limit=10)  # the named cases only
MODES = check.MODES
TORCH = ("scripts/check_frameworks.py, check_torch: PyTorch 2.13.0, CPU, run 2026-11-25 "
         "(pytorch-jax.md records it)")
JAX = "scripts/check_frameworks.py, check_jax: JAX 0.10.2, CPU, run 2026-11-26"
HAS_PROC = os.path.isdir("/proc")

# A right answer in plain Python, written here: the candidate of the end-to-end tests.
RIGHT = '''import math


def _softmax(x):
    top = max(x)
    if top == -math.inf:
        raise ValueError("softmax: every entry is -inf")
    e = [math.exp(v - top) for v in x]
    total = math.fsum(e)
    return [v / total for v in e]


def attention(Q, K, V, mask=None, is_causal=False, scale=None):
    n, m, d_k = len(Q), len(K), len(K[0])
    if any(len(row) != d_k for row in Q + K) or len(V) != m:
        raise ValueError("attention: Q, K and V do not fit")
    c = 1 / math.sqrt(d_k) if scale is None else scale
    S = [[c * math.fsum(a * b for a, b in zip(q, k)) for k in K] for q in Q]
    for i in range(n):
        for j in range(m):
            if mask is not None and not mask[i][j] or is_causal and j > i:
                S[i][j] = -math.inf
    P = [_softmax(row) for row in S]
    return [[math.fsum(p * v[e] for p, v in zip(P_i, V)) for e in range(len(V[0]))]
            for P_i in P]
'''


def candidate(folder, text, name="candidate.py"):
    path = os.path.join(str(folder), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(*args, cwd=ROOT, timeout=120):
    """interview/check.py as a reader runs it; a hang fails the test instead of hanging it."""
    return subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def alive(pid):
    """Whether process pid runs (a zombie, killed and waiting to be reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ----------------------------------------------------------- replies and calls, in process

def reply(value, **fields):
    """A Reply as the child sends it: the value through JSON, every number a float."""
    return Reply("returned", runner._floats(json.loads(json.dumps(value))), **fields)


def raised(kind, message="x"):
    """A Reply for an exception of class kind, read as the child reads one (isinstance)."""
    return Reply("raised", types=tuple(c.__name__ for c in kind.__mro__),
                 error=f"{kind.__name__}: {message}", refusal=issubclass(kind, ValueError),
                 arithmetic=issubclass(kind, ArithmeticError))


class Here:
    """What battery.Trial needs of runner.Child: f called in this process on copies of the
    arguments, as the child calls it; its answer read back as the child sends it."""

    def __init__(self, f):
        self.f, self.calls = f, 0

    def call(self, args, kwargs, labels):
        self.calls += 1
        try:
            value = self.f(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except Exception as e:
            return raised(type(e), str(e))
        return reply(value)


def signature(mode, options=("mask", "is_causal", "scale"), required=()):
    """runner.Child.info's parameters: the mode's arguments, then the options by keyword."""
    return [[p, "POSITIONAL_OR_KEYWORD", False] for p in MODES[mode].labels] + [
        [p, "KEYWORD_ONLY", p not in required] for p in options]


def trial(f, mode="attention", options=("mask", "is_causal", "scale"), conventions=None,
          batched=False):
    spec = MODES[mode]
    calls = plan({"name": "f", "params": signature(mode, options)}, spec.labels, spec.block)
    return battery.Trial(Here(f), calls, spec, conventions or judge.Conventions(), batched)


def sdpa(Q, K, V, mask=None, is_causal=False, scale=None):
    return scaled_dot_product_attention(Q, K, V, mask, is_causal=is_causal, scale=scale)


def verdict(case, got, conventions=None, second=None, mode=F):
    """The judge's verdict on an answer (a value, or a Reply) called twice, the second call
    answering `second` when given."""
    conventions = conventions or judge.Conventions()
    expect = mode.expect(case, conventions)
    first = got if isinstance(got, Reply) else reply(got)
    again = first if second is None else (second if isinstance(second, Reply)
                                          else reply(second))
    return judge.judge(case, first, again, expect, conventions)


def named(title, mode=F):
    return next(c for c in mode.cases() if c.title == title)


def library(case, align="top-left", true_blocks=False):
    """The library's answer to an attention case, the mask read in the polarity given and
    the causal mask in the alignment given (a query left with no key: None)."""
    Q, K, V = case.args
    n, m = len(Q), len(K)
    keep = [[True] * m for _ in range(n)]
    if case.mask is not None:
        keep = [[a != true_blocks for a in row] for row in case.mask]
    if case.causal:
        keep = [[a and b for a, b in zip(r, s)] for r, s in zip(keep, causal_mask(
            n, m, align=align))]
    return [sdpa([q], K, V, mask=[row], scale=case.scale)[0] if any(row) else None
            for q, row in zip(Q, keep)]


# ------------------------------------------------------------------ what it is, what it needs

@claim(PAGE, "names each mistake it finds with the answer to read in [interview.md](interview.md) "
             "(or on this page, for a verdict of the checker's own)")
def test_every_mistake_links_an_answer_in_interview_md_or_this_page():
    mistakes = {m for module in (judge, F, mode_softmax, mode_backward, mode_online, mode_mha)
                for m in vars(module).values() if isinstance(m, judge.Mistake)}
    mistakes |= set(judge.PRECISION.values()) | {mode_mha.axis(1), check.NOT_EXERCISED}
    assert len(mistakes) > 70
    for mistake in mistakes:
        page = mistake.page.partition("#")[0]
        assert page in ("interview.md", "checker.md"), mistake
        assert check.question("docs/" + mistake.page), mistake  # a heading that exists
    for mode in (F, mode_softmax, mode_backward, mode_online, mode_mha):  # the slips: answers
        for case in mode.cases():
            for variant in mode.expect(case, judge.Conventions()).variants:
                assert variant.mistake.page.startswith("interview.md#"), variant.mistake


@claim(PAGE, "then tries it on a seeded random battery and shrinks up to three of its failures "
             "to small inputs that still fail.")
def test_the_battery_shrinks_up_to_three_failures_each_to_a_case_that_still_fails():
    def wrong(Q, K, V, mask=None, is_causal=False, scale=None):  # the scale ignored, and a
        O = sdpa(Q, K, V, mask, is_causal)  # causal mask that leaks the next key
        return O if not is_causal else sdpa(Q, K, V, mask, False, scale)
    ran = battery.run(trial(wrong), 60, 1, 0)
    assert ran.failed > 3 and 1 <= len(ran.failures) <= 3
    case = next(c for c in battery.draws(F.MODE, {"mask", "causal", "scale"}, "top-left",
                                         False, 1, 60) if c.scale and len(c.args[1]) > 3)
    shrinking = trial(wrong)
    smallest, tries = battery.shrink(shrinking, case)
    assert tries < battery.TRIES  # it stopped because no step fails, not at its tries
    right, _ = shrinking.agrees(smallest, shrinking.expect(smallest))
    assert not right  # it still fails
    entries = sum(len(A) * len(A[0]) for A in smallest.args)
    assert entries < sum(len(A) * len(A[0]) for A in case.args) / 10
    for smaller in battery._steps(F.MODE, smallest):  # no step smaller still fails
        expect = shrinking.expect(smaller)
        if None not in expect.reference:
            assert shrinking.agrees(smaller, expect)[0], smaller.title


PYTHONS = [os.path.expanduser(f"~/.pyenv/versions/{v}/bin/python3") for v in ("3.9.18", "3.13.0")]


@pytest.mark.slow
@claim(PAGE, "It needs Python 3.9 or later and nothing else; NumPy only if your code uses it.")
def test_the_checker_runs_on_3_9_and_later_and_imports_only_the_standard_library():
    own = {"interview", "attention", "softmax", "stats", "lowprecision", "oracles"}
    for name in os.listdir(os.path.join(ROOT, "interview")):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(ROOT, "interview", name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            roots = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) else [])
            for root in (r.split(".")[0] for r in roots):
                assert root in sys.stdlib_module_names or root in own or (
                    root == "numpy" and name == "serve.py"), (name, root)  # --arrays only
    ran = 0
    for python in PYTHONS:
        if os.path.exists(python):
            done = subprocess.run([python, CHECK, os.path.join(READERS, "reader_lists.py"),
                                   "--cases", "5"], capture_output=True, text=True, timeout=120,
                                  env={k: v for k, v in os.environ.items()
                                       if k != "PYTHONPATH"})
            assert done.returncode == 0, (python, done.stderr)
            assert "random battery, seed 1: 5 cases agree" in done.stdout
            ran += 1
    if not ran:
        pytest.skip("no Python 3.9 or 3.13 under ~/.pyenv/versions")


HONEST = '''import math
import os
import random
import subprocess
import sys
import threading
import time

PIDS = {pids!r}


def attention(Q, K, V, mask=None, is_causal=False, scale=None):
    if not os.path.exists(PIDS):  # a process of its own, and a thread, left running
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        with open(PIDS, "w") as f:
            f.write(f"{{child.pid}} {{os.getpid()}}")
        threading.Thread(target=time.sleep, args=(120,)).start()
    print("working on", len(Q), "queries")
    if len(K[0]) == 7:
        raise ZeroDivisionError("an honest slip")
    if len(K[0]) == 1:
        time.sleep(120)  # a hang
    O = _right(Q, K, V, mask, is_causal, scale)
    if mask is not None and len(K) == 5:
        mask[0][0] = not mask[0][0]  # an argument changed in place
    if Q[0][0] == -1000.0:
        O[0][0] += random.random() * 1e-6  # an unseeded random number
    return O
'''


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PROC, reason="reads the process table")
@claim(PAGE, "Code written by the person who runs it, with honest mistakes: crashes, hangs, "
             "prints, forks, threads left running, exceptions of any kind, mutation of "
             "arguments, nondeterminism.")
@claim(PAGE, "Each is caught in the case where it happens and named there (after two time-outs "
             "or deaths the rest is not run); the checker neither hangs nor crashes, and leaves "
             "no process behind.")
def test_honest_mistakes_are_caught_in_their_case_and_no_process_is_left_behind(tmp_path):
    pids = str(tmp_path / "pids")
    text = HONEST.format(pids=pids) + RIGHT.replace("def attention(", "def _right(")
    report = check.check(candidate(tmp_path, text), "attention",
                         options=Options(cases=10))  # 3 s a call: a hang costs 3 s
    failed = [r for r in report.results if r.status == "FAIL"]
    assert [(r.title, r.mistake) for r in failed] == [  # each in the case where it happens
        ("n=5 m=2 d_k=7 d_v=3", judge.RAISED.name), ("n=3 m=4 d_k=1 d_v=5", judge.TIME_OUT.name),
        ("logits near -1e3", judge.NONDETERMINISTIC.name),
        ("mask n=3 m=5 d_k=16 d_v=2", judge.MUTATED.name)]
    assert "ZeroDivisionError" in failed[0].detail
    assert report.results[0].output == ("working on 3 queries",)  # shown under its case
    grandchild, child = map(int, open(pids).read().split())
    time.sleep(0.5)
    assert not alive(grandchild) and not alive(child)
    dies = candidate(tmp_path, "import os\n\n\ndef attention(Q, K, V):\n    os._exit(3)\n",
                     "dies.py")
    report = check.check(dies, "attention", options=Options(cases=10))
    said = [r.mistake for r in report.results]
    assert said[:2] == [judge.DIED.name] * 2 and set(said[2:]) == {judge.NOT_RUN.name}
    assert report.battery.line == "random battery, seed 1: not run, after 2 broken calls"


BORROWS = '''import importlib.util
import os
import subprocess
import sys

ROOT = {root!r}
for name in ("softmax", "attention"):  # the library's files, read as files: not imported
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
borrowed = module.scaled_dot_product_attention


def attention(Q, K, V, mask=None, is_causal=False, scale=None):
    if not os.path.exists({pid!r}):  # a process that leaves the child's process group
        escaped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                   start_new_session=True)
        with open({pid!r}, "w") as f:
            f.write(str(escaped.pid))
    return borrowed(Q, K, V, mask, is_causal=is_causal, scale=scale)
'''


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PROC, reason="reads the process table")
@claim(PAGE, "It is not a sandbox, and not for code written to attack the checker: such code "
             "could still fool it, for example by writing into the checker's memory through "
             "`/proc`, signalling or tracing its parent, leaving its process group (`setsid`) "
             "to outlive the run, forging replies on the checker's pipe, or reading the "
             "library's files to compute the right answers.")
@claim(PAGE, "the child cannot import the project's modules, but it can read their files, and a "
             "process that leaves its process group (`setsid`) is not killed with it.")
def test_code_that_reads_the_library_s_files_passes_and_a_setsid_process_outlives_the_run(
        tmp_path):
    pid = str(tmp_path / "escaped")
    path = candidate(tmp_path, BORROWS.format(root=ROOT, pid=pid))
    report = check.check(path, "attention", options=Options(cases=20))
    escaped = int(open(pid).read())
    try:
        assert report.ok and report.mistakes == set(), report.lines()  # fooled: all right
        assert alive(escaped)  # outlived the run
    finally:
        os.kill(escaped, signal.SIGKILL)


# ------------------------------------------------------------------ what a run prints

@claim(PAGE, "A run prints the call it makes, the conventions it judges in, one line per named "
             "case, the random battery's line, and a summary:")
def test_a_run_prints_the_call_the_conventions_a_line_per_case_the_battery_and_a_summary(
        tmp_path):
    path = candidate(tmp_path, RIGHT)
    lines = check.check(path, "attention", options=Options(cases=5)).lines()
    assert lines[:2] == [f"{path}: attention(Q, K, V, mask=, is_causal=, scale=)",
                         "  mask True = may attend; causal top-left"]
    verdicts = [line for line in lines[2:] if not line.startswith("        ")]
    titles = [c.title for c in F.cases()]
    assert len(verdicts) == len(titles) + 2
    for line, title in zip(verdicts, titles):
        assert line[:6] in ("  ok  ", "  NOTE", "  FAIL", "  skip") and line[8:].startswith(
            title), (line, title)
    assert verdicts[-2:] == ["random battery, seed 1: 5 cases agree",
                             "correct on all 13 ordinary cases"]


# ------------------------------------------------------------------ the verdicts

@claim(PAGE, "Each case gets one of three verdicts:")
@claim(PAGE, "A `skip` line is a case your function has no parameter for (a mask, a causal "
             "flag, a scale); the summary counts them as not run.")
def test_each_case_is_ok_note_or_fail_and_skipped_only_without_a_parameter_for_it(tmp_path):
    bare = RIGHT.replace("def attention(Q, K, V, mask=None, is_causal=False, scale=None):",
                         "def attention(Q, K, V):\n    mask, is_causal, scale = None, False, None")
    report = check.check(candidate(tmp_path, bare), "attention", options=NAMED)
    for result, case in zip(report.results, F.cases()):
        needs = case.mask is not None or case.causal or case.scale is not None
        assert (result.status == "skip") == needs, case.title
        assert result.status in ("ok", "NOTE", "FAIL", "skip")
    skipped = [r for r in report.results if r.status == "skip"]
    assert len(skipped) == 6 and report.summary.endswith(f"; {len(skipped)} not run")
    full = check.check(candidate(tmp_path, RIGHT), "attention", options=NAMED)
    assert {r.status for r in full.results} == {"ok"}  # all three, and only, with parameters


@claim(PAGE, "The line names the mistake and links its answer.")
@claim(PAGE, "a wrong answer on ordinary, valid input: wrong numbers, NaN or inf where the right "
             "answer is finite, an exception, an argument changed in place, or two calls that "
             "disagree.")
def test_each_kind_of_wrong_answer_on_valid_input_fails():
    case = F.cases()[0]
    right = library(case)
    off = [[v + 0.25 for v in row] for row in right]
    nan = [[math.nan if (i, j) == (1, 0) else v for j, v in enumerate(row)]
           for i, row in enumerate(right)]
    inf = [[math.inf if (i, j) == (2, 1) else v for j, v in enumerate(row)]
           for i, row in enumerate(right)]
    for got, second in ((off, None), (nan, None), (inf, None), (raised(TypeError), None),
                        (reply(right, mutated=("K",)), None), (right, off)):
        said = verdict(case, got, second=second)
        assert said.status == "FAIL" and said.mistake, (got, second)
        line = check._result(case.title, said, False, (), False).lines()[0]
        assert line.startswith(f"  FAIL  {case.title}: {said.mistake.name}")  # named, and
        assert line.endswith(f" -> docs/{said.mistake.page}")  # its answer linked
    assert verdict(case, right).status == "ok"


def bottom_right_answer(case):
    return library(case, align="bottom-right")


@claim(PAGE, "an edge case to discuss with your interviewer, where more than one answer is "
             "defensible or the input itself is wrong:")
def test_each_kind_of_edge_case_is_a_note():
    shapes = next(c for c in F.cases() if c.kind == "error")
    keyless = next(c for c in F.cases() if c.kind == "no key")
    notes = [(shapes, reply([[0.0, 0.0]] * 2)), (shapes, raised(IndexError)),
             (keyless, reply([[math.nan] * 2 if row is None else row
                              for row in library(keyless)])),
             (keyless, raised(RuntimeError))]
    for case, got in notes:
        assert verdict(case, got).status == "NOTE", (case.title, got)
    causal = named("is_causal n=3 m=5 d_k=6 d_v=2")  # n != m: the alignments differ
    conventions = judge.Conventions()
    assert verdict(causal, bottom_right_answer(causal), conventions).status == "NOTE"
    masked = next(c for c in F.cases() if c.mask is not None and c.kind == "ordinary")
    inverted = library(masked, true_blocks=True)
    assert verdict(masked, inverted).status == "NOTE"


@claim(PAGE, "a parameter whose name suggests a mask or a causal flag that the checker cannot "
             "pass.")
@claim(PAGE, "Another parameter whose name contains `mask` or `causal`, such as "
             "`key_padding_mask`, cannot be passed: a NOTE says so rather than skipping it "
             "silently.")
def test_a_parameter_the_checker_cannot_pass_is_a_note(tmp_path):
    text = RIGHT.replace("scale=None):", "scale=None, key_padding_mask=None, my_causal=0):")
    report = check.check(candidate(tmp_path, text), "attention", options=NAMED)
    said = [(r.title, r.status, r.mistake) for r in report.results[:2]]
    assert said == [("parameter key_padding_mask", "NOTE", check.NOT_EXERCISED.name),
                    ("parameter my_causal", "NOTE", check.NOT_EXERCISED.name)]
    assert report.ok and len(report.results) == 2 + len(F.cases())


@claim(PAGE, "The line says what was found, the next line the question an interviewer may ask, "
             "and the link its answer.")
def test_a_note_line_is_followed_by_the_question_its_link_answers():
    report = check.check(os.path.join(READERS, "reader_textbook.py"), "attention",
                         options=NAMED)
    notes = [r for r in report.results if r.status == "NOTE"]
    assert len(notes) == 3
    for note in notes:
        line, asked = note.lines()[:2]
        assert line.startswith(f"  NOTE  {note.title}: {note.mistake}")
        assert line.endswith(f" -> {note.link}") and note.link.startswith("docs/")
        page, anchor = note.link[len("docs/"):].split("#")
        with open(os.path.join(ROOT, "docs", page), encoding="utf-8") as f:
            headings = [h for h in f.read().splitlines() if h.startswith("#")]
        question = next(h.lstrip("# ") for h in headings
                        if check._headings("docs/" + page).get(anchor) == h.lstrip("# "))
        assert asked == f"        asked: {question}" and question.endswith("?")


@claim(PAGE, "For a query with no key, the line says which convention you follow: `raises "
             "ValueError` (this library), `zeros`")
def test_a_query_with_no_key_is_ok_under_each_convention_and_the_line_names_it():
    case = next(c for c in F.cases() if c.kind == "no key")
    Q, K, V = case.args
    with pytest.raises(ValueError):  # this library refuses the row that sees no key
        sdpa(Q, K, V, mask=case.mask)
    rows = library(case)
    mean = [math.fsum(column) / len(V) for column in zip(*V)]
    for got, said in ((raised(ValueError), "raises ValueError"),
                      ([[0.0] * len(V[0]) if r is None else r for r in rows], "zeros"),
                      ([mean if r is None else r for r in rows], "mean of V")):
        assert verdict(case, got) == judge.Verdict("ok", None, said)
        result = check._result(case.title, verdict(case, got), True, (), False)
        assert result.lines() == [f"  ok    {case.title}: {said}"]


source(PAGE, "`zeros` (PyTorch's `F.scaled_dot_product_attention`) or `mean of V` (JAX's "
             "uniform weights)", f"{TORCH}; {JAX}: pytorch-jax.md's table of a fully masked row")
source(PAGE, "n x m bools, True = may attend (PyTorch's `F.scaled_dot_product_attention`, JAX, "
             "this library)", f"{TORCH}; {JAX}")
source(PAGE, "If your answer is the one True = blocked gives (the convention of "
             "`torch.nn.MultiheadAttention`)", TORCH)
source(PAGE, "With n != m, top-left is expected (PyTorch's `is_causal`, JAX).", f"{TORCH}; {JAX}")
source(PAGE, "FlashAttention 2.1 and later, PyTorch's `causal_lower_right`",
       "PyTorch's documentation (torch.nn.attention.bias); FlashAttention's README, its 2.1 "
       "change; not rechecked in literature.md")
source(PAGE, "or `(output, None)` as `nn.MultiheadAttention(need_weights= False)` returns",
       f"{TORCH}: pytorch-jax.md's row for `need_weights=False`")
source(PAGE, "With the battery the checker meets what a judge of competitive programming does "
             "(hidden random tests behind the samples) and what property-based testing does "
             "(Hypothesis: random inputs, each failure shrunk to a small example).",
       "Hypothesis's documentation (hypothesis.readthedocs.io, github.com/HypothesisWorks/"
       "hypothesis): inputs drawn from strategies, a failure shrunk to a simplest example; "
       "online judges (ICPC, Codeforces) grade on hidden tests beyond a statement's samples; "
       "not rechecked in literature.md")


@claim(PAGE, "`SystemExit` (`sys.exit()`), `KeyboardInterrupt` and every other exception are "
             "never a refusal: on valid input they fail, on bad input they are a NOTE.")
def test_every_exception_but_a_value_error_fails_on_valid_input_and_is_a_note_on_bad_input():
    valid = F.cases()[0]
    shapes = next(c for c in F.cases() if c.kind == "error")
    keyless = next(c for c in F.cases() if c.kind == "no key")
    for kind in (SystemExit, KeyboardInterrupt, TypeError, IndexError, KeyError, RuntimeError,
                 AssertionError, ZeroDivisionError, OverflowError, ArithmeticError, Exception):
        assert verdict(valid, raised(kind)).status == "FAIL", kind
        assert verdict(shapes, raised(kind)).status == "NOTE", kind
        assert verdict(keyless, raised(kind)).status == "NOTE", kind
    assert verdict(shapes, raised(ValueError)).status == "ok"


# ------------------------------------------------------------------ the exit status

WRONG_SCALE = RIGHT.replace("c = 1 / math.sqrt(d_k) if scale is None else scale",
                            "c = 1 / math.sqrt(d_k)")  # the scale argument ignored


@pytest.mark.slow
@claim(PAGE, "The exit status follows the verdicts: **0** when no case fails, named or random, "
             "**1** when one does")
@claim(PAGE, "and the battery's shrunk cases come after all of them.")
def test_the_exit_status_is_0_without_a_failure_and_1_with_one_named_or_random(
        tmp_path, capsys):
    right = candidate(tmp_path, RIGHT, "right.py")
    notes = os.path.join(READERS, "reader_textbook.py")  # NOTEs, no FAIL
    random_only = candidate(tmp_path, WRONG_SCALE, "random_only.py")
    named_too = candidate(tmp_path, RIGHT.replace("math.sqrt(d_k)", "d_k"), "named_too.py")
    assert check.main([right, "--cases", "30"]) == 0
    assert check.main([notes, "--cases", "30"]) == 0
    capsys.readouterr()
    assert check.main([random_only, "--cases", "0"]) == 0  # named cases only: all pass
    assert check.main([random_only, "--cases", "30"]) == 1  # its random cases fail
    lines = capsys.readouterr().out.splitlines()
    battery_line = next(k for k, line in enumerate(lines) if line.startswith("random battery"))
    shrunk = [k for k, line in enumerate(lines) if " shrunk to " in line]
    named = [k for k, line in enumerate(lines) if line[:6] in ("  ok  ", "  NOTE", "  skip")]
    assert shrunk and max(named) < battery_line < min(shrunk)
    assert check.main([named_too, "--cases", "0"]) == 1


@pytest.mark.slow
@claim(PAGE, "**2** for a usage error only (no such file, a syntax error in your file, no "
             "function of that name, a name that is not a function, a signature the mode cannot "
             "call, a bad flag)")
@claim(PAGE, "An exception while your file loads fails the run (\"error on import\", exit status "
             "1); a syntax error is a usage error (exit status 2).")
def test_the_exit_status_is_2_for_a_usage_error_only(tmp_path, capsys):
    right = candidate(tmp_path, RIGHT, "right.py")
    usage = [str(tmp_path / "none.py"),
             candidate(tmp_path, "def attention(Q, K, V)\n    return V\n", "syntax.py"),
             right + ":nothing", candidate(tmp_path, "attention = 3\n", "number.py"),
             candidate(tmp_path, "def attention(Q):\n    return Q\n", "one.py")]
    for argv in usage:
        assert check.main([argv]) == 2, argv
    with pytest.raises(SystemExit) as bad_flag:  # argparse's exit, through check.main's parser
        check.main([right, "--no-such-flag"])
    assert bad_flag.value.code == 2
    capsys.readouterr()
    raises = candidate(tmp_path, "raise ImportError('no')\n", "raises.py")
    assert check.main([raises]) == 1  # the candidate's own error: a FAIL, not a usage error
    assert capsys.readouterr().out.splitlines()[1].startswith(
        "  FAIL  loading the file: error on import")


covered(PAGE, "**3** for an error of the checker's own (a bug to report, never your code's), "
              "and 130 or 143 when Ctrl-C or SIGTERM stops the run, with one line that says how "
              "far it had got", "test_check.py::test_main_exits_2_3_and_130_with_one_line")


@claim(PAGE, "`--strict` turns every NOTE into a FAIL.")
def test_strict_turns_every_note_into_a_fail_and_nothing_else():
    path = os.path.join(READERS, "reader_textbook.py")
    plain = check.check(path, "attention", options=NAMED)
    strict = check.check(path, "attention", options=NAMED._replace(strict=True))
    assert [r.status for r in plain.results].count("NOTE") == 3
    for a, b in zip(plain.results, strict.results):
        assert b.status == ("FAIL" if a.status == "NOTE" else a.status)
        assert (a.title, a.mistake, a.detail) == (b.title, b.mistake, b.detail)
    assert plain.ok and not strict.ok


def tree(folder):
    """The files under folder, each with its size and modification time, bytecode caches
    and the .git of a worktree left out."""
    found = {}
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git")]
        for name in files:
            path = os.path.join(top, name)
            if name != ".git":
                stat = os.stat(path)
                found[path] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.mark.slow
@claim(PAGE, "Apart from Python's own bytecode cache of the checker's modules, the checker "
             "writes no file, and beside your code not even that (its child runs with `-B`).")
def test_the_checker_writes_no_file_beside_the_code_nor_in_the_repository(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    candidate(folder, "def helper(x):\n    return x\n", "helpers.py")  # a module it imports
    path = candidate(folder, "from helpers import helper\n" + RIGHT)
    before, repository = tree(folder), tree(ROOT)
    done = run(path, "--cases", "20", cwd=str(folder))
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(folder)) == ["candidate.py", "helpers.py"]  # no __pycache__
    assert tree(folder) == before and tree(ROOT) == repository


@pytest.mark.slow
@claim(PAGE, "A refusal is an instance of Python's own `ValueError` (or of a subclass of it), "
             "tested in the child with `isinstance`: a class of your own that is only named "
             "`ValueError` is not one.")
def test_a_subclass_of_value_error_refuses_and_a_class_named_value_error_does_not(tmp_path):
    subclass = RIGHT.replace("import math\n", "import math\n\n\nclass ShapeError(ValueError):\n"
                             "    pass\n").replace('raise ValueError("attention:',
                                                   'raise ShapeError("attention:')
    own = RIGHT.replace("import math\n", "import math\n\n\nclass ValueError(Exception):\n"
                        "    pass\n")
    shapes = [c.title for c in F.cases() if c.kind == "error"]
    for text, status, said in ((subclass, "ok", "raises ShapeError"),
                               (own, "NOTE", "raises ValueError")):
        report = check.check(candidate(tmp_path, text), "attention", options=NAMED)
        found = [(r.status, r.detail) for r in report.results if r.title in shapes]
        assert found == [(status, said)] * 2, found


# ------------------------------------------------------------------ how it is called

LOADS = '''import math
import os
import sys

import softmax  # the candidate's own, beside it
assert softmax.OWN == "mine" and os.path.dirname(os.path.abspath(softmax.__file__)) == {here!r}
assert sys.path[0] == {here!r}  # its own directory first, as python3 FILE.py has it
for name in ("attention", "stats"):
    try:
        __import__(name)
    except ImportError:
        pass
    else:
        raise SystemExit(f"imported the project's {{name}}")
with open({pid!r}, "w") as f:
    f.write(str(os.getpid()))
'''


@pytest.mark.slow
@claim(PAGE, "Your file is loaded in a process of its own, as `python3 FILE.py` would load it: "
             "its own directory first on the path, so that your `softmax.py` or `attention.py` "
             "is the one your code imports.")
@claim(PAGE, "The project's own `softmax`, `attention` and `stats` cannot be imported from "
             "there: your code is judged against them.")
def test_the_file_loads_in_a_process_of_its_own_with_its_folder_first_and_no_reference(
        tmp_path):
    here, pid = str(tmp_path), str(tmp_path / "pid")
    candidate(tmp_path, "OWN = 'mine'\n", "softmax.py")
    path = candidate(tmp_path, LOADS.format(here=here, pid=pid) + RIGHT)
    report = check.check(path, "attention", options=NAMED)
    assert report.ok and report.mistakes == set(), report.lines()
    assert int(open(pid).read()) != os.getpid()
    os.remove(os.path.join(here, "softmax.py"))  # now `import softmax` finds the project's
    report = check.check(path, "attention", options=NAMED)
    assert [r.mistake for r in report.results] == [judge.IMPORT_FAILED.name]
    assert "ImportError" in report.results[0].detail and "softmax" in report.results[0].detail


def page_table(first_cell):
    """The rows of the page's table whose header row starts with first_cell, as cells."""
    lines = open(os.path.join(ROOT, PAGE), encoding="utf-8").read().splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(f"| {first_cell} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            return rows
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])


@claim(PAGE, "The function is the first of these names, in this order, that your file defines, "
             "or the `NAME` you give:")
def test_the_names_looked_for_are_the_page_s_and_the_first_in_their_order_is_taken(tmp_path):
    flags = {"(default)": "attention", "`--softmax`": "softmax", "`--backward`": "backward",
             "`--online`": "online", "`--mha`": "mha"}
    rows = page_table("mode")
    assert [flags[row[0]] for row in rows] == list(MODES)
    for flag, names, called in rows:
        spec = MODES[flags[flag]]
        assert [n.strip("`") for n in names.split(", ")] == list(spec.names)
        passed = spec.labels + ("block_size",) * spec.block  # the one-pass mode's block too
        assert called == f"`NAME({', '.join(passed)})`"
    both = ("def scaled_dot_product_attention(Q, K, V):\n    return [[0.0] * len(V[0])] * len(Q)"
            "\n\n\n" + RIGHT)  # defined first in the file, but second in the list
    report = check.check(candidate(tmp_path, both), "attention", options=NAMED)
    assert report.header[0].endswith(": attention(Q, K, V, mask=, is_causal=, scale=)")
    assert report.ok
    report = check.check(candidate(tmp_path, both), "attention", "scaled_dot_product_attention",
                         options=NAMED)
    assert report.header[0].endswith(": scaled_dot_product_attention(Q, K, V)")


def independent_draws(mode, count, takes=("mask", "causal", "scale"), align="top-left", seed=0):
    """count draws of the mode, each from its own generator: no case repeats another's shape."""
    return [MODES[mode].draw(random.Random(f"{seed} {k}"), set(takes), align)
            for k in range(count)]


def third(count, hits, p=1 / 3):
    """hits of count draws at rate p: within Z binomial standard errors sqrt(p (1 - p) count)."""
    return abs(hits - p * count) <= Z * math.sqrt(p * (1 - p) * count)


@pytest.mark.slow
@claim(PAGE, "a number: in one named case of the default and `--backward` modes, and in a "
             "third of the random cases of those and `--online`")
def test_a_scale_is_passed_in_one_named_case_and_a_third_of_the_random_ones():
    for mode in MODES:
        scaled = [c for c in MODES[mode].cases() if c.scale is not None]
        assert len(scaled) == (1 if mode in ("attention", "backward") else 0), mode
        cases = independent_draws(mode, 1200)
        hits = sum((c.scale if not c.parts else c.parts[0].scale) is not None for c in cases)
        if mode in ("attention", "backward", "online"):
            assert third(len(cases), hits), (mode, hits)
        else:
            assert hits == 0, mode


covered(PAGE, "1 to m + 1; without one of these names, the next positional parameter, unless "
              "that is spelled as another option",
        "test_check.py::test_a_block_size_goes_by_its_name_or_the_next_position_never_into_an_"
        "option")
covered(PAGE, "0.0 if it has no default; a default is left alone",
        "test_check.py::test_a_required_mask_is_all_true_where_a_case_has_none")


@claim(PAGE, "A parameter with no default must be one of these (a mask with no default gets one "
             "that blocks nothing).")
def test_a_required_parameter_must_be_an_option_and_a_required_mask_blocks_nothing():
    labels = ("Q", "K", "V")
    with pytest.raises(CallError, match="parameter W has no default"):
        plan({"name": "f", "params": signature("attention", ("W",), required=("W",))}, labels)
    calls = plan({"name": "f", "params": signature("attention", ("mask",), required=("mask",))},
                 labels)
    case = F.cases()[1]  # n=5 m=2
    args, kwargs = arguments(calls, case, judge.Conventions())
    assert args == list(case.args) and kwargs == {"mask": [[True, True]] * 5}
    assert library(case) == sdpa(*args, **kwargs)


@claim(PAGE, "An option whose parameter is positional-only (before a `/`) is passed by position, "
             "and then always, with the value the case implies (a mask that blocks nothing, "
             "`False`, the default scale).")
def test_a_positional_only_option_is_always_passed_by_position_with_what_the_case_implies():
    params = [[p, "POSITIONAL_ONLY", p not in ("Q", "K", "V")]
              for p in ("Q", "K", "V", "mask", "is_causal", "scale")]
    calls = plan({"name": "f", "params": params}, ("Q", "K", "V"))
    plain = F.cases()[0]  # n=3 m=5 d_k=16, no option
    args, kwargs = arguments(calls, plain, judge.Conventions())
    assert args[3:] == [[[True] * 5] * 3, False, 0.25] and kwargs == {}
    causal = named("is_causal n=3 m=5 d_k=6 d_v=2")
    args, _ = arguments(calls, causal, judge.Conventions())
    assert args[3:5] == [[[True] * 5] * 3, True]
    assert_close(args[5], 1 / math.sqrt(6), rel=2 ** -52)  # d_k ** -0.5: the same to an ulp


@claim(PAGE, "`**kwargs` receives nothing.")
def test_a_function_with_only_kwargs_is_passed_no_option():
    params = signature("attention", ()) + [["kwargs", "VAR_KEYWORD", False]]
    calls = plan({"name": "f", "params": params}, ("Q", "K", "V"))
    assert takes(calls) == set() and calls.keywords == {}
    for case in F.cases():
        call = arguments(calls, case, judge.Conventions())
        if case.mask is None and not case.causal and case.scale is None:
            assert call[1] == {}, case.title
        else:
            assert call is None, case.title  # skipped: no parameter for its option


covered(PAGE, "The function may be any callable, an instance of a class with `__call__` too",
        "test_check.py::test_each_reader_gets_its_verdict_and_each_slip_its_name")


class Rows:
    """Anything with .tolist(), as a NumPy array or a PyTorch tensor."""

    def __init__(self, rows):
        self.rows = rows

    def tolist(self):
        return self.rows


@claim(PAGE, "anything with `.tolist()` (a NumPy array, a PyTorch tensor), of numbers that "
             "`float()` reads (floats, ints, `Decimal`, `Fraction`, NumPy scalars; a string is "
             "not a number)")
def test_the_child_reads_any_number_float_reads_through_tolist_and_refuses_a_string():
    from decimal import Decimal
    from fractions import Fraction
    assert serve._plain(Rows([[Decimal("0.5"), Fraction(1, 4)], [2, 1.5]])) == [
        [0.5, 0.25], [2.0, 1.5]]
    assert serve._plain([True, 3]) == [1.0, 3.0]
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        assert serve._plain([numpy.float32(0.5), numpy.int64(3)]) == [0.5, 3.0]
        assert serve._plain(numpy.array([[1.0, 2.0]])) == [[1.0, 2.0]]
    for text in ("0.5", b"0.5", ["1.0"]):
        with pytest.raises(TypeError, match="not numbers"):
            serve._plain(text)


@claim(PAGE, "a pair `(output, weights)`, or `(output, None)`")
@claim(PAGE, "with `--backward`, `(dQ, dK, dV)`, or a dict with the keys `dQ`, `dK`, `dV` in any "
           "case.")
def test_a_pair_s_output_and_a_dict_s_gradients_are_what_is_checked():
    case = F.cases()[0]
    right = library(case)
    weights = [softmax([0.0] * 5)] * 3
    for value in ((right, weights), (right, None)):
        got = F.unpack(runner._floats(json.loads(json.dumps(serve._plain(value)))), False)
        assert got == right and verdict(case, got).status == "ok"
    backward = mode_backward.cases()[0]
    expect = mode_backward.expect(backward, judge.Conventions())
    dQ, dK, dV = expect.reference
    for value in ((dQ, dK, dV), {"DQ": dQ, "dk": dK, "Dv": dV}, {"dQ": dQ, "dK": dK, "dV": dV}):
        got = mode_backward.unpack(serve._plain(value), False)
        assert verdict(backward, got, mode=mode_backward).status == "ok", value.__class__


# ------------------------------------------------------------------ conventions it detects

@claim(PAGE, "Without `--mask-true-blocks`, a mask is passed with True = may attend.")
@claim(PAGE, "If your answer is the one True = blocked gives (the convention of "
             "`torch.nn.MultiheadAttention`), a NOTE says so, and the later cases pass the mask "
             "your way.")
def test_an_answer_with_true_blocked_is_noted_and_later_masks_go_its_way():
    masked = next(c for c in F.cases() if c.mask is not None and c.kind == "ordinary")
    conventions = judge.Conventions()
    calls = plan({"name": "f", "params": signature("attention", ("mask",))}, ("Q", "K", "V"))
    assert arguments(calls, masked, conventions)[1]["mask"] == masked.mask  # True = may attend
    assert verdict(masked, library(masked, true_blocks=True), conventions) == judge.Verdict(
        "NOTE", F.TRUE_BLOCKS)
    sent = arguments(calls, masked, conventions)[1]["mask"]
    assert sent == [[not a for a in row] for row in masked.mask]
    assert verdict(masked, library(masked), conventions).status == "ok"  # its answer to that


@claim(PAGE, "With the flag, the mask goes True = blocked from the start, and the other polarity "
             "fails.")
def test_with_the_flag_the_mask_goes_true_blocked_and_the_other_polarity_fails():
    masked = next(c for c in F.cases() if c.mask is not None and c.kind == "ordinary")
    stated = judge.Conventions(true_blocks=True)
    calls = plan({"name": "f", "params": signature("attention", ("mask",))}, ("Q", "K", "V"))
    assert arguments(calls, masked, stated)[1]["mask"] == [[not a for a in row]
                                                            for row in masked.mask]
    assert verdict(masked, library(masked), stated).status == "ok"  # the case's own meaning
    mine = library(masked, true_blocks=True)  # may attend where the flag says blocked
    assert verdict(masked, mine, judge.Conventions(true_blocks=True)) == judge.Verdict(
        "FAIL", F.TRUE_ATTENDS)


@claim(PAGE, "An answer aligned bottom-right (query i sees j <= i + m - n:")
@claim(PAGE, "gets a NOTE that names it, and the later cases expect it. `--causal bottom-right` "
             "states it; then top-left fails.")
def test_a_bottom_right_answer_is_noted_then_expected_and_stated_top_left_fails():
    first, later = named("is_causal n=3 m=5 d_k=6 d_v=2"), named("is_causal n=5 m=3 d_k=6 d_v=2")
    Q = first.args[0]
    assert causal_mask(len(Q), 5, align="bottom-right") == [
        [j <= i + 5 - 3 for j in range(5)] for i in range(3)]
    conventions = judge.Conventions()
    assert verdict(first, bottom_right_answer(first), conventions) == judge.Verdict(
        "NOTE", F.BOTTOM_RIGHT)
    assert conventions.align == "bottom-right"
    assert verdict(later, bottom_right_answer(later), conventions).status in ("ok", "NOTE")
    assert verdict(later, library(later), conventions).status == "FAIL"
    stated = judge.Conventions(align="bottom-right")
    assert verdict(first, library(first), stated) == judge.Verdict("FAIL", F.TOP_LEFT)


@claim(PAGE, "The random battery follows the conventions the named cases stated or detected; an "
             "answer in the other one fails there.")
def test_the_battery_follows_the_conventions_the_named_cases_detected():
    def bottom_right(Q, K, V, mask=None, is_causal=False, scale=None):
        n, m = len(Q), len(K)
        keep = mask or [[True] * m for _ in Q]
        if is_causal:
            keep = [[a and j <= i + m - n for j, a in enumerate(row)]
                    for i, row in enumerate(keep)]
        return sdpa(Q, K, V, keep, scale=scale)
    detected = trial(bottom_right)
    for case in F.cases():
        detected.verdict(case)
    assert detected.conventions.align == "bottom-right"
    ran = battery.run(detected, 40, 1, 0)
    assert ran.failed == 0 and sum(c.causal for c in battery.draws(
        F.MODE, takes(detected.calls), "bottom-right", False, 1, 40)) > 5
    settled = judge.Conventions()
    settled.settle()  # the battery's: top-left, not to be changed now
    case = next(c for c in battery.draws(F.MODE, {"causal"}, "top-left", False, 1, 200)
                if c.causal and len(c.args[0]) < len(c.args[1]))
    assert verdict(case, bottom_right(*case.args, is_causal=True), settled).status == "FAIL"


@claim(PAGE, "`--mha` uses the library's convention, which the report's second line states: "
             "rows are tokens, Q = X_q W_Q, K = X_kv W_K, V = X_kv W_V; head t takes the t-th of "
             "h consecutive slices of their columns and divides by the square root of its own "
             "d_k; the output is Concat(head_1, ..., head_h) W_O.")
def test_the_multi_head_reference_is_the_convention_the_page_and_the_header_state():
    def matmul(A, B):
        return [[math.fsum(a * b for a, b in zip(row, col)) for col in zip(*B)] for row in A]
    for case in mode_mha.cases():
        if case.kind != "ordinary":
            continue
        X_q, X_kv, W_Q, W_K, W_V, W_O, h = case.args
        Q, K, V = matmul(X_q, W_Q), matmul(X_kv, W_K), matmul(X_kv, W_V)
        d_k, d_v = len(Q[0]) // h, len(V[0]) // h
        heads = [sdpa([q[t * d_k:(t + 1) * d_k] for q in Q], [k[t * d_k:(t + 1) * d_k] for k in K],
                      [v[t * d_v:(t + 1) * d_v] for v in V], case.mask, case.causal,
                      1 / math.sqrt(d_k)) for t in range(h)]
        mine = matmul([[x for head in heads for x in head[i]] for i in range(len(X_q))], W_O)
        reference = mode_mha.expect(case, judge.Conventions()).reference
        assert_close(reference, mine, rel=1e-12)
    calls = plan({"name": "f", "params": signature("mha", ())}, MODES["mha"].labels)
    header = check._header("f.py", calls, MODES["mha"], judge.Conventions(), Options())
    assert header[1] == "  rows are tokens; Q = X_q W_Q; head t: the t-th slice of columns"


@claim(PAGE, "`--arrays` passes NumPy arrays (float64; bool for a mask) instead of lists")
def test_arrays_are_float64_and_a_mask_bool():
    numpy = pytest.importorskip("numpy")
    case = next(c for c in F.cases() if c.mask is not None)
    assert serve._build(case.args[0], numpy).dtype == numpy.float64
    assert serve._build(case.mask, numpy).dtype == numpy.bool_
    assert serve._build(case.args[0], None) is case.args[0]  # without --arrays: the lists


# ------------------------------------------------------------------ arrays and batches

@claim(PAGE, "Without it, a function that fails on lists with `'list' object has no attribute "
             "'shape'` gets the mistake \"needs arrays: add --arrays\".")
def test_a_function_that_needs_arrays_is_told_to_add_arrays():
    case = F.cases()[0]
    error = Reply("raised", types=("AttributeError", "Exception", "BaseException", "object"),
                  error="AttributeError at mine.py:3: 'list' object has no attribute 'shape'")
    assert verdict(case, error).mistake == judge.NEEDS_ARRAYS
    assert judge.NEEDS_ARRAYS.name == "needs arrays: add --arrays"


@claim(PAGE, "`--batched` adds a leading batch axis of two to every per-example argument (Q, K, "
             "V, dO, the mask; X_q and X_kv for `--mha`, whose weights are shared)")
def test_batched_stacks_two_elements_of_every_per_example_argument_and_shares_the_weights():
    per_example = {"attention": {"Q", "K", "V"}, "softmax": {"x"},
                   "backward": {"Q", "K", "V", "dO"}, "online": {"Q", "K", "V"},
                   "mha": {"X_q", "X_kv"}}
    for name, spec in MODES.items():
        for case in spec.cases():
            if case.kind == "error":
                continue
            stacked = judge.batch(case, spec)
            for label, arg, one in zip(spec.labels, stacked.args, case.args):
                if label in per_example[name]:
                    assert len(arg) == 2 and arg[0] == one and len(arg[1]) == len(one), label
                else:
                    assert arg == one, (name, label)  # shared: the weights, num_heads
            if case.mask is not None:
                assert stacked.mask[0] == case.mask and len(stacked.mask) == 2


@claim(PAGE, "In a named case the second element is the same case with its queries negated (for "
             "`--softmax`, x reversed), so a function that answers for the first element only "
             "(\"first batch only\") or drops the axis (\"batch axis dropped\") fails.")
def test_a_named_case_s_twin_negates_the_queries_and_first_only_or_no_axis_fails():
    for name, spec in MODES.items():
        said = set()
        for case in spec.cases():
            if case.kind != "ordinary":
                continue
            first, second = judge.batch(case, spec).parts
            if name == "softmax":
                assert second.args[0] == first.args[0][::-1]
            else:
                assert second.args[0] == [[-v for v in row] for row in first.args[0]]
                assert second.args[1:] == first.args[1:]
            stacked = judge.batch(case, spec)
            expect = judge.expect_batch(stacked, spec, judge.Conventions())
            mine = spec.expect(first, judge.Conventions()).reference
            for got in (spec.stack(mine, mine), mine):
                verdict_ = judge.judge(stacked, reply(got), reply(got), expect,
                                       judge.Conventions())
                said.add(verdict_.mistake if verdict_.status == "FAIL" else None)
        assert {judge.FIRST_BATCH, judge.BATCH_DROPPED} <= said, name


@claim(PAGE, "In the random battery the second element is another draw of the same shapes and "
             "options: every per-example argument differs")
def test_a_random_batch_is_two_draws_of_the_same_shapes_and_options():
    for name, spec in MODES.items():
        for case in battery.draws(spec, {"mask", "causal", "scale"}, "top-left", True, 1, 60):
            first, second = case.parts
            if name == "softmax":  # its title names the places of -inf, values of its own
                assert len(first.args[0]) == len(second.args[0])
            else:
                assert spec.describe(first) == spec.describe(second)  # shapes and options
            assert (first.mask is None) == (second.mask is None)
            assert (first.causal, first.scale, first.block_size) == (
                second.causal, second.scale, second.block_size)
            for k in spec.per_example:
                assert first.args[k] != second.args[k], (name, k)


# ------------------------------------------------------------------ the cases of each mode

@claim(PAGE, "Ordinary cases are valid input with one right answer. Edge cases are a query that "
             "sees no key, and input that must be refused.")
def test_ordinary_cases_have_an_answer_and_edge_cases_none_or_must_be_refused():
    for name, spec in MODES.items():
        kinds = set()
        for case in spec.cases():
            kinds.add(case.kind)
            reference = spec.expect(case, judge.Conventions()).reference
            if case.kind == "ordinary":
                assert reference is not None and None not in reference, (name, case.title)
            elif case.kind == "no key":  # the library refuses it: no right answer
                assert reference is None or None in reference, (name, case.title)
            else:
                assert case.kind == "error" and reference is None
        assert "ordinary" in kinds and kinds - {"ordinary"}, name
    for case in F.cases():  # the library itself: an answer, or a ValueError
        if case.kind == "ordinary":
            assert library(case) == sdpa(*case.args, mask=case.mask, is_causal=case.causal,
                                         scale=case.scale)
        else:
            with pytest.raises(ValueError):
                sdpa(*case.args, mask=case.mask, is_causal=case.causal, scale=case.scale)


@claim(PAGE, "The shapes of the first cases make every wrong square root give its own answer: n, "
             "m, d_k, d_v, d_k + 1 (and d_model) all differ.")
def test_the_first_case_of_each_mode_tells_every_wrong_square_root_apart():
    for spec in (F, mode_backward, mode_online):
        case = next(c for c in spec.cases() if len(c.args[0]) != len(c.args[1]))
        Q, K, V = case.args[:3]
        sizes = [len(Q), len(K), len(K[0]), len(V[0]), len(K[0]) + 1]
        assert len(set(sizes)) == 5 and spec.cases().index(case) <= 1, case.title
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = mode_mha.cases()[0].args
    d_k, d_v = len(W_Q[0]) // h, len(W_V[0]) // h
    assert len({len(X_q), len(X_kv), d_k, d_v, d_k + 1, len(X_q[0])}) == 6
    Q, K, V = F.cases()[0].args  # each wrong sqrt gives its own answer, by the library
    answers = [sdpa(Q, K, V, scale=1 / math.sqrt(x)) for x in (16, 3, 5, 2, 17, 256)]
    for i, a in enumerate(answers):
        for b in answers[:i]:
            assert max(abs(x - y) for r, s in zip(a, b) for x, y in zip(r, s)) > 1e-3


covered(PAGE, "`-inf entries` (their weights must be exactly 0)",
        "test_check.py::test_a_weight_of_a_minus_inf_logit_must_be_exactly_0")


@claim(PAGE, "`n=4 m=4 d_k=6 d_v=3` (where a missing transpose still fits)")
def test_in_the_square_backward_case_a_missing_transpose_gives_the_right_shapes():
    case = mode_backward.cases()[0]
    Q, K, V, dO = case.args
    assert len(Q) == len(K) == 4
    P = [softmax([math.fsum(a * b for a, b in zip(q, k)) / math.sqrt(6) for k in K]) for q in Q]
    P_dO = [[math.fsum(P[i][j] * dO[j][t] for j in range(4)) for t in range(3)]
            for i in range(4)]  # P dO where P^T dO belongs
    right = mode_backward.expect(case, judge.Conventions())
    assert judge.shape(P_dO) == judge.shape(right.reference[2]) == "4 x 3"
    assert {judge.tolerance(right.reference) < judge.worst(P_dO, right.reference[2])[0]}
    assert {mode_backward.P_DO, mode_backward.DS_Q} <= {v.mistake for v in right.variants}


@claim(PAGE, "One pass (`--online`), against the two-pass output, m = 7 keys (3 where the "
             "logits are near 1e3):")
@claim(PAGE, "`block_size=3, mask n=3 m=7 d_k=16 d_v=2` (a block the mask hides entirely)")
def test_the_one_pass_cases_have_seven_keys_and_a_block_the_mask_hides():
    for case in mode_online.cases():
        assert len(case.args[2]) == (3 if "e3" in case.title else 7), case.title
        reference = mode_online.expect(case, judge.Conventions()).reference
        if case.kind == "ordinary":  # the two-pass output
            assert reference == sdpa(*case.args, mask=case.mask, is_causal=case.causal)
    case = named("block_size=3, mask n=3 m=7 d_k=16 d_v=2", mode_online)
    hidden = [(i, j) for i, row in enumerate(case.mask) for j in range(0, 7, 3)
              if not any(row[j:j + 3])]
    assert hidden


@claim(PAGE, "An answer passes when every entry is within 1e-9 of the library's, times the "
             "largest entry of the right answer when that is above 1 (float64 answers agree to "
             "about 1e-15).")
def test_an_answer_passes_within_1e_9_times_the_largest_entry_above_1():
    for case in (F.cases()[0], named("logits near +1e3")):
        right = library(case)
        largest = max(abs(v) for row in right for v in row)
        tol = 1e-9 * max(1.0, largest)
        assert (largest > 1) == (case.title == "logits near +1e3")
        for step, status in ((0.9, "ok"), (1.1, "FAIL")):
            got = [row[:] for row in right]
            got[0][0] += step * tol
            assert verdict(case, got).status == status, (case.title, step)
    worst = 0.0  # a plain float64 attention written here, on every ordinary case
    for case in F.cases():
        if case.kind != "ordinary":
            continue
        Q, K, V = case.args
        keep = F.allowed(case, "top-left")
        c = case.scale or 1 / math.sqrt(len(K[0]))
        mine = []
        for i, q in enumerate(Q):
            s = [c * sum(a * b for a, b in zip(q, k)) if keep is None or keep[i][j] else -math.inf
                 for j, k in enumerate(K)]
            e = [math.exp(x - max(s)) for x in s]
            mine.append([sum(w * v[t] for w, v in zip(e, V)) / sum(e) for t in range(len(V[0]))])
        right = library(case)
        largest = max(1.0, max(abs(v) for row in right for v in row))
        worst = max(worst, judge.worst(mine, right)[0] / largest)
    assert 0 < worst < 1e-14  # about 1e-15, far within 1e-9


# ------------------------------------------------------------------ the random battery

covered(PAGE, "The named cases are few, and hand-picked; a bug that shows only on other inputs "
              "would pass them.",
        "test_check.py::test_the_named_cases_let_each_class_through_and_the_battery_shrinks_and_"
        "names_it")
covered(PAGE, "every run tries your function on 200 random cases (`--cases N`; 0 for none), "
              "drawn from `random.Random(seed)` with seed 1 (`--seed S` for another).",
        "test_check.py::test_cases_and_seed_choose_the_battery_and_the_seed_is_printed")


@pytest.mark.slow
@claim(PAGE, "says which seed ran, so that any run can be repeated exactly: the same seed draws "
             "the same cases for a function with the same parameters.")
def test_a_run_repeats_exactly_under_its_seed_and_another_seed_draws_others():
    def no_scale(Q, K, V, mask=None, is_causal=False, scale=None):
        return sdpa(Q, K, V, mask, is_causal, 1.0 if scale is None else scale)
    runs = [battery.run(trial(no_scale), 40, seed, 0) for seed in (5, 5, 6)]
    assert runs[0] == runs[1] and runs[0].failed > 0  # failures, shrunk cases and all
    assert runs[0] != runs[2]
    for mode, spec in MODES.items():
        again = [battery.draws(spec, {"mask", "causal"}, "top-left", False, 3, 30)
                 for _ in range(2)]
        assert again[0] == again[1], mode


def orders(cases):
    return [(len(c.args[0]) > len(c.args[1])) - (len(c.args[0]) < len(c.args[1]))
            for c in cases]


@claim(PAGE, "n < m, n = m and n > m alike; d_k and d_v apart (but one case in ten); most cases "
             "small (n up to 8, m up to 10, d up to 6), and one in 10 up to n = 16, m = 64 keys, "
             "d = 16.")
def test_the_shapes_drawn_are_each_order_alike_and_one_case_in_ten_large():
    count = 1500
    cases = independent_draws("attention", count)
    drawn = orders(cases)
    for order in (-1, 0, 1):
        assert third(count, drawn.count(order)), order
    same = sum(len(c.args[1][0]) == len(c.args[2][0]) for c in cases)
    assert third(count, same, 1 / 10)
    small = [c for c in cases if len(c.args[0]) <= 8 and len(c.args[1]) <= 10
             and max(len(c.args[1][0]), len(c.args[2][0])) <= 6]
    for c in cases:
        assert len(c.args[0]) <= 16 and len(c.args[1]) <= 64
        assert max(len(c.args[1][0]), len(c.args[2][0])) <= 16
    # a large case is small by chance with probability (8/16)(...)...: at least 9 in 10 small
    assert count - len(small) <= count / 10 + Z * math.sqrt(count * 0.1 * 0.9)
    assert max(len(c.args[1]) for c in cases) > 48 and max(len(c.args[0]) for c in cases) == 16


@pytest.mark.slow
@claim(PAGE, "`--mha`: 1 to 8 heads of width 1 to 4, d_model = h d_k, n and m up to 8 (16 in one "
             "case in ten), X_kv = X_q in one case in six of those with n = m. `--softmax`: rows "
             "of 1 to 8 logits, and one in ten up to 64.")
def test_the_multi_head_and_softmax_draws_have_the_sizes_the_page_gives():
    count = 1500
    cases = independent_draws("mha", count, ("mask", "causal"))
    heads = [c.args[6] for c in cases]
    assert set(heads) == set(range(1, 9))
    for c in cases:
        X_q, X_kv, W_Q, W_K, W_V, W_O, h = c.args
        assert len(W_Q[0]) % h == 0 and 1 <= len(W_Q[0]) // h <= 4
        assert len(W_V[0]) % h == 0 and 1 <= len(W_V[0]) // h <= 4
        assert len(X_q[0]) == len(W_Q[0]) and len(X_q) <= 16 and len(X_kv) <= 16
    large = sum(len(c.args[0]) > 8 or len(c.args[1]) > 8 for c in cases)
    p_large = 0.1 * (1 - (8 / 16) ** 2)  # a large case with n or m above 8
    assert third(count, large, p_large)
    square = [c for c in cases if len(c.args[0]) == len(c.args[1])]
    assert third(len(square), sum(c.args[1] is c.args[0] for c in square), 1 / 6)
    lengths = [len(c.args[0]) for c in independent_draws("softmax", count, ())]
    assert min(lengths) == 1 and max(lengths) > 48 and max(lengths) <= 64
    assert third(count, sum(n > 8 for n in lengths), 0.1 * 56 / 64)  # one in ten: 1 to 64


@pytest.mark.slow
@claim(PAGE, "each in a third of the cases when your function takes it, so that a mask and the "
             "causal flag come together in a ninth: a random boolean mask in which every query "
             "keeps a key; `is_causal` with n > m and n < m (n <= m when you follow "
             "bottom-right, which would leave the first queries without a key); a scale that is "
             "not 1/sqrt(d_k) (0.3 of it away at least).")
def test_each_option_comes_in_a_third_of_the_cases_and_every_query_keeps_a_key():
    count = 1500
    cases = independent_draws("attention", count)
    masked = [c.mask is not None for c in cases]
    causal = [c.causal for c in cases]
    assert third(count, sum(masked)) and third(count, sum(causal))
    assert third(count, sum(a and b for a, b in zip(masked, causal)), 1 / 9)
    assert {o for o, c in zip(orders(cases), causal) if c} == {-1, 0, 1}
    for c in cases:
        assert None not in library(c), c.title  # every query keeps a key
        if c.scale is not None:
            assert abs(c.scale * math.sqrt(len(c.args[1][0])) - 1) >= 0.3, c.title
    assert all(c.mask is None and not c.causal and c.scale is None
               for c in independent_draws("attention", 200, ()))  # not taken: never drawn
    right = independent_draws("attention", count, align="bottom-right")
    for c in right:
        if c.causal:
            assert len(c.args[0]) <= len(c.args[1]), c.title
            assert None not in library(c, align="bottom-right"), c.title


def style(case):
    """The style of an attention case's values, read off them (m >= 4 and d_k >= 2)."""
    Q, K, V = case.args
    numbers = [v for A in (Q, K, V) for row in A for v in row]
    if all(v == round(v) and abs(v) <= 2 for v in numbers):
        return "integers"
    if len({tuple(row) for row in K}) <= 3:
        return "pool"
    if len({row[0] for row in K}) == 1:
        return "offsets"
    return "gauss"


@pytest.mark.slow
@claim(PAGE, "each case in one of four styles: N(0, 1) entries; small integers (ties); an offset "
             "for each query of up to 1e3 either way")
@claim(PAGE, "keys drawn from a pool of one to three (ties between keys, and between the maxima "
             "of blocks).")
def test_each_case_s_values_come_in_one_of_four_styles_a_quarter_each():
    cases = [c for c in independent_draws("attention", 4000, ("mask",))
             if len(c.args[1]) >= 4 and len(c.args[1][0]) >= 2]
    styles = [style(c) for c in cases]
    for name in ("integers", "pool", "offsets", "gauss"):
        assert third(len(cases), styles.count(name), 1 / 4), (name, styles.count(name))
    pools = {len({tuple(row) for row in c.args[1]}) for c, s in zip(cases, styles) if s == "pool"}
    assert pools == {1, 2, 3}
    for c, s in zip(cases, styles):
        if s == "offsets":
            for row in F.logits(F.matmul(c.args[0], F.transpose(c.args[1])), c.scale or 1 /
                                math.sqrt(len(c.args[1][0]))):
                spread = max(row) - min(row)
                assert abs(sum(row) / len(row)) <= 1000 + 6 * spread + 30, c.title
    assert max(abs(s) for c, st in zip(cases, styles) if st == "offsets"
               for row in F.logits(F.matmul(c.args[0], F.transpose(c.args[1])), 1.0)
               for s in row) > 500


covered(PAGE, "Masks put -inf in any place, the first included.",
        "test_check.py::test_the_attention_draws_cover_every_shape_option_and_kind_of_logit")
covered(PAGE, "`--online`: a block size from 1 to m + 1.",
        "test_check.py::test_the_one_pass_draws_every_block_size_and_ties_of_a_block_max_with_"
        "the_running_max")


@claim(PAGE, "with -inf in any place but one at least")
def test_the_softmax_draws_keep_a_finite_entry_and_put_minus_inf_anywhere_else():
    xs = [c.args[0] for c in independent_draws("softmax", 1500, ())]
    assert all(max(x) > -math.inf for x in xs)
    places = {j for x in xs for j, v in enumerate(x) if v == -math.inf}
    assert set(range(8)) <= places
    assert any(sum(v == -math.inf for v in x) == len(x) - 1 for x in xs if len(x) > 2)


covered(PAGE, "one case in 4 is the shape and options of the case before it with new values",
        "test_check.py::test_one_case_in_four_is_the_shape_of_the_one_before_with_new_values")


@claim(PAGE, "Every case is called twice, as the named ones are: two answers that differ are a "
             "FAIL (nondeterministic).")
def test_every_random_case_is_called_twice_and_two_answers_apart_fail():
    count = 25
    counted = trial(sdpa)
    assert battery.run(counted, count, 1, 0).failed == 0 and counted.child.calls == 2 * count
    named_cases = trial(sdpa)
    for case in F.cases():
        named_cases.verdict(case)
    assert named_cases.child.calls == 2 * len(F.cases())
    calls = []

    def wavers(*args, **kwargs):
        calls.append(1)
        O = sdpa(*args, **kwargs)
        return [[v + 1e-6 * (len(calls) % 2) for v in row] for row in O]
    ran = battery.run(trial(wavers), 10, 1, 0)
    assert ran.failed == 10 and {v.mistake for _, v, _, _ in ran.failures} == {
        judge.NONDETERMINISTIC}


@claim(PAGE, "A case agrees when both calls return the right answer and change no argument; no "
             "mistake is named for a case that fails, so that a battery of a right function stays "
             "fast.")
def test_a_case_agrees_only_right_twice_and_unchanged_and_no_failing_case_is_judged(
        monkeypatch):
    case = F.cases()[0]
    right = library(case)
    off = [[v + 1e-3 for v in row] for row in right]
    for first, second, agrees in ((right, right, True), (right, off, False), (off, off, False),
                                  (reply(right, mutated=("Q",)), right, False),
                                  (right, raised(ValueError), False)):
        first, second = (x if isinstance(x, Reply) else reply(x) for x in (first, second))
        expect = F.expect(case, judge.Conventions())
        assert judge.agrees(first, second, expect, judge.Conventions()) == agrees
    judged = []
    monkeypatch.setattr(battery, "judge", lambda *args: judged.append(args) or judge.judge(*args))

    def always_off(*args, **kwargs):
        return [[v + 0.5 for v in row] for row in sdpa(*args, **kwargs)]
    ran = battery.run(trial(always_off), 30, 1, 0)
    assert ran.failed == 30 and len(ran.failures) <= len(judged) <= battery.SHRUNK


@pytest.mark.slow
@claim(PAGE, "The first failing case, and then each with options of its own, up to 3 failing "
             "cases, is shrunk while it still fails, 200 tries at most:")
def test_the_first_failure_and_each_with_other_options_are_shrunk_200_tries_at_most(
        monkeypatch):
    shrunk = []
    original = battery.shrink
    monkeypatch.setattr(battery, "shrink", lambda t, c: shrunk.append(c) or original(t, c))

    def always_off(*args, **kwargs):
        return [[v + 0.5 for v in row] for row in sdpa(*args, **kwargs)]
    cases = battery.draws(F.MODE, {"mask", "causal", "scale"}, "top-left", False, 1, 40)
    battery.run(trial(always_off), 40, 1, 0)
    options = [(c.mask is not None, c.causal, c.scale is not None) for c in cases]
    kinds = [(c.mask is not None, c.causal, c.scale is not None) for c in shrunk]
    assert shrunk[0] == cases[0] and len(shrunk) == 3 and len(set(kinds)) == 3
    for c, kind in zip(shrunk, kinds):  # the first case with options of its own
        assert c == cases[options.index(kind)]
    big = next(c for c in independent_draws("attention", 3000, ()) if len(c.args[0]) >= 8
               and len(c.args[1]) >= 40 and min(len(c.args[1][0]), len(c.args[2][0])) >= 4)
    size = len(big.args[0]) * len(big.args[1]) * len(big.args[1][0])

    def fails_while_large(Q, K, V, **options):  # n m d_k at least 3/4 of the case's
        if 4 * len(Q) * len(K) * len(K[0]) >= 3 * size:  # (each round then scans many steps)
            return [[0.0] * len(V[0]) for _ in Q]
        return sdpa(Q, K, V, **options)
    shrinking = trial(fails_while_large, options=())
    smallest, tries = original(shrinking, big)
    assert tries == 200 and shrinking.child.calls == 2 * 200  # each try a case called twice


covered(PAGE, "Each step that still fails is kept, and the steps start again from the smaller "
              "case; the shrinking stops when no step fails, or after its tries.",
        "test_check.py::test_shrinking_stops_when_no_step_fails_or_after_its_tries")


@claim(PAGE, "fewer heads;")
@claim(PAGE, "fewer queries, then keys, then columns (d_k, d_v; d_model and d_out for `--mha`): "
             "the first half, the second half, then all but one;")
@claim(PAGE, "without each option (the mask, the causal flag, the scale), a smaller block size;")
@claim(PAGE, "the values of each argument rounded to integers from -3 to 3, else to integers.")
def test_the_steps_of_shrinking_come_in_the_page_s_order():
    def kind(before, after, mode):
        if mode == "mha" and after.args[6] < before.args[6]:
            return 0  # fewer heads
        shapes = [judge.shape(a) for a in after.args[:6]]
        if shapes != [judge.shape(a) for a in before.args[:6]]:
            return 1  # fewer queries, keys or columns
        if (after.mask, after.causal, after.scale, after.block_size) != (
                before.mask, before.causal, before.scale, before.block_size):
            return 2  # an option gone, a smaller block
        return 3  # the values rounded
    for mode, takes_ in (("mha", {"mask", "causal"}), ("online", {"mask", "causal", "scale"})):
        spec = MODES[mode]
        case = next(c for c in battery.draws(spec, takes_, "top-left", False, 1, 200)
                    if c.mask is not None and c.causal and min(map(len, c.args[:2])) > 2
                    and (mode != "mha" or c.args[6] > 2) and (mode != "online"
                                                               or c.block_size > 2))
        steps = list(battery._steps(spec, case))
        kinds = [kind(case, s, mode) for s in steps]
        assert kinds == sorted(kinds) and set(kinds) == ({0, 1, 2, 3} if mode == "mha"
                                                         else {1, 2, 3}), mode
        rounded = [s for s in steps if kind(case, s, mode) == 3]
        small = [v for s in rounded[:1] for v in s.args[0][0]]
        assert all(v == round(v) and -3 <= v <= 3 for v in small)
        options = [s for s in steps if kind(case, s, mode) == 2]
        assert options[0].mask is None and options[1].causal is False
    x = [3.7, -1.2, 9.6]
    halves = [s.args[0] for s in battery._steps(mode_softmax.MODE,
                                                 mode_softmax.cases()[0]._replace(args=(x,)))]
    assert halves == [[3.7], [-1.2, 9.6], [-1.2, 9.6], [3.7, 9.6], [3.7, -1.2],
                      [3.0, -1.0, 3.0], [4.0, -1.0, 10.0]]


covered(PAGE, "The smallest case is then judged as a named case is: its line names the mistake if "
              "one matches, or gives the worst entry and what it should be, and the next line "
              "gives its arguments, as your function was passed them, when they are 30 numbers "
              "or fewer:",
        "test_check.py::test_a_shrunk_case_s_arguments_are_shown_when_few_the_mask_as_passed")
covered(PAGE, "A failure shrunk to the same mistake with the same options as one shown already is "
              "counted, not shown again.",
        "test_check.py::test_the_battery_shows_each_failure_once_and_a_batched_one_with_both_"
        "elements")
covered(PAGE, "The summary's \"correct on all N ordinary cases\" counts the named cases; the "
              "random cases that failed are added after it.",
        "test_check.py::test_the_report_puts_the_battery_after_the_named_cases_and_counts_its_"
        "failures")
covered(PAGE, "A case that broke the child (a time-out, a death) is shown as it came, unshrunk, "
              "and counts towards the two broken calls after which the rest is not run.",
        "test_check.py::test_two_broken_calls_stop_the_battery_and_a_broken_case_is_shown_as_it_"
        "came")
source(PAGE, "A right plain-Python function takes the whole battery of one mode in a few "
             "seconds",
       "python3 benchmarks/checker.py, on 2026-11-28 at 6b18a59, 2 x AMD EPYC (nproc 2), "
       "CPython 3.11.7 (and 3.9.18, 3.13.0), load average 7.8 to 8.0: 0.07 to 5.98 s a battery "
       "(benchmarks/README.md, \"The checker's battery\")")


# ------------------------------------------------------------------ how a mistake is named

covered(PAGE, "Each mistake is computed, not guessed: the checker computes the answer a function "
              "with that slip gives (in IEEE arithmetic, so that an overflow gives inf and NaN "
              "where plain Python raises) and names it when your answer matches.",
        "test_check.py::test_every_mistake_of_every_case_is_named_as_itself")


def unshifted(case):
    """softmax(S) V without the max-shift, in IEEE arithmetic: exp overflows to inf, inf / inf
    is NaN (written here with the library's matmul)."""
    Q, K, V = case.args
    c = 1 / math.sqrt(len(K[0]))
    out = []
    for q in Q:
        e = []
        for k in K:
            try:
                e.append(math.exp(c * math.fsum(a * b for a, b in zip(q, k))))
            except OverflowError:
                e.append(math.inf)
        total = sum(e)
        out.append([sum(w / total * v[t] for w, v in zip(e, V)) for t in range(len(V[0]))])
    return out


@claim(PAGE, "When your code raises instead of returning NaN, the exception is named the same "
             "way; an answer that is NaN everywhere is named after a slip's overflow only once a "
             "case was right or that slip was named.")
def test_an_overflow_raised_or_nan_everywhere_is_named_only_after_a_right_case():
    case = named("logits near +1e3")
    nan = unshifted(case)
    assert all(math.isnan(v) for row in nan for v in row)
    after_right = judge.Conventions()
    assert verdict(F.cases()[0], library(F.cases()[0]), after_right).status == "ok"
    assert verdict(case, raised(OverflowError), after_right).mistake == F.NO_SHIFT
    assert verdict(case, nan, after_right).mistake == F.NO_SHIFT
    assert verdict(case, nan).mistake == judge.NOT_FINITE  # nothing right yet
    after_named = judge.Conventions()
    after_named.named.append(F.NO_SHIFT)
    assert verdict(case, nan, after_named).mistake == F.NO_SHIFT


covered(PAGE, "a slip the checker computes: one earlier case where the slip would have changed "
              "the answer, and yours was right;",
        "test_check.py::test_a_mistake_ruled_out_by_an_earlier_case_is_not_named")
covered(PAGE, "another scale: one earlier case where the right scale fits your answer, and a "
              "scale 2^(1/4) times larger or smaller would not (there, the scale shows);",
        "test_check.py::test_another_scale_is_not_named_after_a_case_answered_with_the_right_one")
covered(PAGE, "a lower precision, whose error goes up and down from case to case: most of the "
              "earlier cases where that format's own answer is off, in each of which yours is "
              "neither nearly that answer nor off by as much (within 8 times).",
        "test_check.py::test_a_precision_is_ruled_out_by_most_of_the_cases_where_its_format_is_off")


def scaled(case, factor):
    """softmax(factor c Q K^T) V by the library, c the right scale."""
    Q, K, V = case.args
    return library(case._replace(scale=factor / math.sqrt(len(K[0]))))


def shown_absent(mode, seen, mistake):
    """The page's promise, worked out here from the earlier answers seen, [(case, expect, got)]:
    whether they showed the candidate does not make the mistake."""
    said = []
    for case, expect, got in seen:
        reference = expect.reference
        if got is None or not judge.same_shape(got, reference):
            said.append(None)
            continue
        tol, error = judge.tolerance(reference), judge.worst(got, reference)[0]
        slip = [v.answer for v in expect.variants if v.mistake == mistake]
        fmt = next((f for f, m in judge.PRECISION.items() if m == mistake), None)
        if slip:  # a slip that would have changed this answer, and the answer was right
            said.append(error <= tol and judge.worst(slip[0], reference)[0] > tol)
        elif fmt and expect.precision:  # that format is off here, and the answer is not it
            try:
                own_answer = expect.precision(fmt)
            except ValueError:
                own_answer = None
            own = math.inf if own_answer is None else judge.worst(own_answer, reference)[0]
            if not (tol < own < math.inf and math.isfinite(error)):
                said.append(None)
                continue
            near = judge.worst(got, own_answer)[0] <= 0.1 * error
            said.append(not near and (error == 0 or abs(math.log(error / own)) > math.log(8)))
        elif mistake == F.OTHER_SCALE and case.scale is None and mode in ("attention", "online"):
            fits = [judge.worst(got, scaled(case, f))[0] for f in (1, 2 ** -0.25, 2 ** 0.25)]
            said.append(fits[0] <= 10 * judge.tolerance(got) < min(fits[1:]))
        else:
            said.append(False)
    if mistake in judge.PRECISION.values():
        shown = [s for s in said if s is not None]
        return 2 * sum(shown) > len(shown)
    return any(said)


def answers(mode):
    """Candidates that answer each named case: right but a little off, in a lower precision,
    or with one slip where it shows."""
    spec = MODES[mode]
    found = {"off by 1.5e-9": lambda case, e: _times(e.reference, 1 + 1.5e-9),
             "off by 4e-9": lambda case, e: _times(e.reference, 1 + 4e-9)}
    for fmt in judge.LOW:
        found[fmt] = lambda case, e, fmt=fmt: _format_answer(e, fmt)
    slips = {v.mistake for case in spec.cases() if case.kind == "ordinary"
             for v in spec.expect(case, judge.Conventions()).variants}
    for mistake in slips:
        found[mistake.name] = lambda case, e, mistake=mistake: next(
            (v.answer for v in e.variants if v.mistake == mistake), e.reference)
    if mode in ("attention", "online"):  # a scale fixed at the paper's model width
        found["1/sqrt(512)"] = lambda case, e: scaled(case, math.sqrt(len(case.args[1][0]) / 512))
    return found


def _times(x, factor):
    if isinstance(x, list):
        return [_times(v, factor) for v in x]
    return x if x is None else x * factor


def _format_answer(expect, fmt):
    try:
        return expect.precision(fmt) if expect.precision else expect.reference
    except ValueError:
        return expect.reference


@pytest.mark.slow
@claim(PAGE, "A mistake is never named after the earlier cases showed you do not make it:")
@pytest.mark.parametrize("mode", list(MODES))
def test_no_mode_names_a_mistake_an_earlier_case_showed_absent(mode):
    spec = MODES[mode]
    for name, answer in answers(mode).items():
        conventions, seen = judge.Conventions(), []
        for case in spec.cases():
            if case.kind != "ordinary":
                continue
            expect = spec.expect(case, conventions)
            got = answer(case, expect)
            if got is None or judge._has_none(got):
                continue
            said = judge.judge(case, reply(got), reply(got), expect, conventions)
            if said.status in ("FAIL", "NOTE") and said.mistake:
                assert not shown_absent(mode, seen, said.mistake), (name, case.title, said)
            seen.append((case, expect, got))


@claim(PAGE, "The named cases come in an order where each trap follows the cases that rule out "
             "its look-alikes (a shift by the row's minimum breaks `row [1e3, 0, -1e3]`, a shift "
             "by the first entry only `row [0, 1e3, -1e3]`)")
def test_each_shift_trap_comes_after_the_case_that_rules_out_its_look_alike():
    def overflows(row, shift):
        try:
            [math.exp(v - shift) for v in row]
        except OverflowError:
            return True
        return False
    first, second = [1e3, 0.0, -1e3], [0.0, 1e3, -1e3]
    assert overflows(first, min(first)) and not overflows(first, first[0])
    assert overflows(second, second[0]) and overflows(second, min(second))
    for mode, titles in ((F, ("row [1e3, 0, -1e3]", "row [0, 1e3, -1e3]")),
                         (mode_softmax, ("[1e3, 0, -1e3]", "[0, 1e3, -1e3]"))):
        order = [c.title for c in mode.cases()]
        assert order.index(titles[0]) < order.index(titles[1])
    conventions = judge.Conventions()  # right on the first: then the second's overflow is
    for case in F.cases()[:5]:  # the shift by the first entry, the min ruled out
        verdict(case, library(case), conventions)
    assert verdict(named("row [1e3, 0, -1e3]"), library(named("row [1e3, 0, -1e3]")),
                   conventions).status == "ok"
    assert verdict(named("row [0, 1e3, -1e3]"), raised(OverflowError),
                   conventions).mistake == F.SHIFT_FIRST


@claim(PAGE, "every entry a multiple of 10^-k, and within half of that of the right answer (give "
             "or take 2%, the floats' own rounding);")
def test_rounded_means_multiples_of_a_power_of_ten_within_half_of_it():
    case = F.cases()[0]
    right = library(case)
    for k in range(1, 8):
        got = [[round(v, k) for v in row] for row in right]
        assert verdict(case, got) == judge.Verdict("FAIL", judge.ROUNDED, f"to {k} decimals")
    plain = judge.Case("two numbers", ([[0.0]],))  # an answer of two entries, judged alone
    for last, said in ((0.2049, judge.ROUNDED), (0.20505, judge.ROUNDED),  # 0.49, 0.505 of
                       (0.2053, judge.UNNAMED), (0.207, judge.UNNAMED)):  # 0.01; 0.53, 0.7
        expect = judge.Expectation([0.1234, last], [])
        got = reply([0.12, 0.2])  # multiples of 0.01
        assert judge.judge(plain, got, got, expect, judge.Conventions()).mistake == said, last


covered(PAGE, "the error is the size of the error of the same computation in that format "
              "(emulated by `lowprecision/emulation.py`), or your answer is nearly that "
              "computation's",
        "test_check.py::test_a_precision_is_named_when_the_error_is_its_size_and_small")


@claim(PAGE, "softmax(c Q K^T) V for one constant c fits, the right scale does not, c is more "
             "than 0.1% from it, and the line gives c (`1/sqrt(512)` for a scale fixed at the "
             "paper's model width).")
def test_another_scale_is_named_with_its_constant_only_beyond_a_tenth_of_a_percent():
    case = F.cases()[0]  # d_k = 16: the right scale 1/4
    assert verdict(case, scaled(case, math.sqrt(16 / 512))) == judge.Verdict(
        "FAIL", F.OTHER_SCALE, "1/sqrt(512)")
    explain = F.expect(case, judge.Conventions()).explain  # the mode's description of an error
    for factor in (1.3, 0.6, 1.01, 1.002):
        mistake, c = explain(scaled(case, factor))
        assert mistake == F.OTHER_SCALE and abs(float(c) / (factor / 4) - 1) < 1e-3, factor
    for factor in (1.0005, 0.9995):  # within 0.1% of the right one: not another scale
        assert explain(scaled(case, factor)) is None, factor
    assert explain(library(case)) is None  # the right scale fits
    noise = [[v + 1e-4 * (-1) ** (i + j) for j, v in enumerate(row)]
             for i, row in enumerate(library(case))]
    assert explain(noise) is None  # no constant fits


@claim(PAGE, "Otherwise the line gives the largest error and where it is (\"off by 0.5 at "
             "[2][1]\": row 2, column 1 of the output; for a shrunk random case, also the entry "
             "and what it should be), or the first entry that is not finite, or the first entry "
             "that is `None` where a number belongs, or the shape you returned against the one "
             "expected.")
def test_an_unnamed_answer_is_described_by_its_largest_error_first_non_number_or_shape():
    case = F.cases()[0]
    right = library(case)

    def changed(**at):
        got = [row[:] for row in right]
        for where, value in at.items():
            i, j = int(where[1]), int(where[2])
            got[i][j] = value if value is None or not math.isfinite(value) else got[i][j] + value
        return got
    assert verdict(case, changed(a00=0.3, a21=0.5)).detail == "off by 0.5 at [2][1]"
    assert verdict(case, changed(a00=-0.5, a21=0.3)).detail == "off by 0.5 at [0][0]"
    inf = verdict(case, changed(a10=math.inf, a21=-math.inf))
    assert (inf.mistake, inf.detail) == (judge.NOT_FINITE, "at [1][0]")
    none = verdict(case, changed(a01=None, a20=None))
    assert (none.mistake, none.detail) == (judge.UNREADABLE_ANSWER, "None at [0][1], not a number")
    assert verdict(case, right[:2]).detail == "2 x 2, not 3 x 2"
    off = changed(a21=0.5)  # a shrunk random case's line: the entry and what it should be
    outcome = battery.Outcome(verdict(case, off), reply(off), F.expect(case, judge.Conventions()),
                              ())
    assert battery._worst(outcome).detail == (
        f"off by 0.5 at [2][1]: {off[2][1]:.6g}, should be {right[2][1]:.6g}")


# ------------------------------------------------------------------ each case twice

@pytest.mark.slow
@claim(PAGE, "Every case is called twice on fresh copies of its arguments.")
def test_each_call_gets_fresh_arguments_whatever_the_call_before_did_to_them(tmp_path):
    text = RIGHT.replace("    n, m, d_k = len(Q), len(K), len(K[0])\n",
                         "    n, m, d_k = len(Q), len(K), len(K[0])\n"
                         "    if Q[0][0] == 1234.5:  # the mark a call before left: shared\n"
                         "        return [[0.0] * len(V[0]) for _ in Q]\n"
                         "    first = Q[0][0]\n    Q[0][0] = 1234.5  # changed in place\n"
                         "    Q = [[first] + Q[0][1:]] + Q[1:]\n")
    report = check.check(candidate(tmp_path, text), "attention", options=Options(cases=10))
    ordinary = [r for r in report.results if not r.edge]
    assert {(r.status, r.mistake, r.detail) for r in ordinary} == {
        ("FAIL", judge.MUTATED.name, "Q")}  # never nondeterministic: each call had fresh Q
    assert report.battery.failed == 10


@claim(PAGE, "Answers that differ by more than the tolerance are **nondeterministic**")
@claim(PAGE, "Noise above the tolerance is named so, never a precision.")
def test_two_answers_apart_by_more_than_the_tolerance_are_nondeterministic_never_a_precision():
    case = F.cases()[0]
    right = library(case)
    tol = 1e-9  # the answers are below 1
    for step, said in ((0.5 * tol, judge.Verdict("ok")), (2 * tol, judge.NONDETERMINISTIC)):
        second = [[v + step for v in row] for row in right]
        result = verdict(case, right, second=second)
        assert (result if step < tol else result.mistake) == said
    expect = F.expect(case, judge.Conventions())
    half, bf16 = expect.precision("float16"), expect.precision("bfloat16")
    assert verdict(case, half).mistake == judge.PRECISION["float16"]  # each alone: a format
    assert verdict(case, half, second=bf16).mistake == judge.NONDETERMINISTIC


covered(PAGE, "An exception on an ordinary case is a FAIL, given in one line: its type, the last "
              "line of your files in its traceback, and its message (its type alone when `str()` "
              "of it raises).",
        "test_check.py::test_an_interrupt_or_an_unprintable_exception_is_reported_in_one_line")


# ------------------------------------------------------------------ time limits

covered(PAGE, "Each call has 3 seconds (`--time-limit`); loading your file may take five times as "
              "long, for NumPy's or PyTorch's import, and the first call twenty times (60 s), for "
              "an import inside your function (JAX's).",
        "test_check.py::test_the_options_default_to_what_the_manual_says")


@claim(PAGE, "A function that hangs on the first case therefore costs a minute, at the default "
             "limit.")
def test_a_hang_on_the_first_case_costs_the_first_call_s_limit_a_minute():
    assert Options().time_limit * runner.FIRST_FACTOR == 60
    assert check._parser().parse_args(["x.py"]).time_limit == Options().time_limit


covered(PAGE, "A call that runs past its limit, or a process that dies (`os._exit`, a crash in C "
              "code), fails that case; the file is loaded again for the next one.",
        "test_check.py::test_after_two_broken_calls_the_rest_are_not_run_and_a_death_costs_one_"
        "case")


class Broken:
    """A child whose every call is broken in turn: a time-out, an unreadable reply, a death."""

    def __init__(self):
        self.calls = 0

    def call(self, args, kwargs, labels):
        self.calls += 1
        kind = ("timeout", "broken", "died")[(self.calls - 1) % 3]
        return Reply(kind, error=kind)


@claim(PAGE, "After two such cases (time-outs, deaths and unreadable replies together), the "
             "remaining cases are not run, and a file that fails to load again fails the case it "
             "was loaded for.")
def test_two_broken_calls_of_any_kind_together_stop_the_named_cases():
    calls = plan({"name": "f", "params": signature("attention")}, ("Q", "K", "V"))
    for first in (0, 1, 2):  # time-out then unreadable, unreadable then death, ...
        child = Broken()
        child.calls = first
        ran = battery.Trial(child, calls, F.MODE, judge.Conventions(), False)
        said = [r.mistake for r, _ in check._results(ran, False)]
        kinds = {judge.TIME_OUT.name, judge.UNREADABLE.name, judge.DIED.name}
        assert set(said[:2]) <= kinds and len(set(said[:2])) == 2
        assert set(said[2:]) == {judge.NOT_RUN.name} and child.calls - first == 2
    child = runner.Child.__new__(runner.Child)  # a reload that fails: that case's death
    child.process, child.calls, child.time_limit = None, 1, 1.0
    child._start = lambda: (_ for _ in ()).throw(runner.LoadError("ImportError: x", False))
    assert child.call([], {}, []) == Reply("died", error="reload failed: ImportError: x")


# ------------------------------------------------------------------ unreadable replies

@claim(PAGE, "Every field of every reply is checked, and a reply is data, never code: a line that "
             "is not JSON, answers another call, or comes with a second line fails its case as "
             "an **unreadable reply**, and the child is killed; a reply cut short fails as the "
             "time-out or the death that cut it.")
def test_a_reply_that_is_not_one_is_unreadable_and_one_cut_short_a_time_out_or_a_death():
    good = {"id": 3, "kind": "returned", "value": [[0.5]], "mutated": []}
    assert runner._reply(json.dumps(good).encode(), 3, (), {"Q"}) == Reply("returned", [[0.5]])
    for line in (b"not json", b'{"id": 3, "kind": "retu', json.dumps(dict(good, id=2)).encode(),
                 json.dumps(dict(good, value="[[0.5]]")).encode(),
                 json.dumps(dict(good, mutated=["os.system"])).encode(),
                 json.dumps(dict(good, kind="raised")).encode(), b"[1, 2]"):
        assert isinstance(runner._reply(line, 3, (), {"Q"}), str), line  # not a Reply
    reply_ = Reply("broken", error="more than one reply")
    assert verdict(F.cases()[0], reply_).mistake == judge.UNREADABLE
    for kind, mistake in (("timeout", judge.TIME_OUT), ("died", judge.DIED)):
        assert verdict(F.cases()[0], Reply(kind, error="")).mistake == mistake




@claim(PAGE, "An answer that is not numbers (a string, a generator, nesting deeper than 8, more "
             "than 1 MiB of JSON) fails as an **unreadable answer**.")
def test_an_answer_that_is_not_numbers_is_an_unreadable_answer():
    def nested(depth):
        x = 0.5
        for _ in range(depth):
            x = [x]
        return x
    assert serve._plain(nested(8)) == nested(8)
    for value in ("0.5", (v for v in [0.5]), nested(9)):
        with pytest.raises((TypeError, ValueError)):
            serve._plain(value)
    read, write = os.pipe()  # the child's reply to an answer over 1 MiB
    with os.fdopen(read, "rb") as f:
        writer = threading.Thread(target=serve._send, args=(write, {
            "id": 1, "kind": "returned", "value": [[0.5] * 60000] * 4, "mutated": []}))
        writer.start()
        line = f.readline().rstrip(b"\n")
        writer.join()
    os.close(write)
    sent = runner._reply(line, 1, (), set())
    assert sent.kind == "unreadable" and sent.error == "reply over 1 MiB"
    assert verdict(F.cases()[0], sent).mistake == judge.UNREADABLE_ANSWER
    assert len(json.dumps([[0.5] * 60000] * 4)) > 1 << 20 > len(json.dumps(nested(8)))


covered(PAGE, "The report shows the first three lines under the case that printed them, indented "
              "after `|` and with control characters replaced, so that no line of yours can pass "
              "for a line of the report.",
        "test_check.py::test_the_candidates_output_is_shown_indented_under_its_case_never_as_a_"
        "report_line")
covered(PAGE, "The names and messages of your exceptions are shown with their control "
              "characters escaped (a newline as `\\n`, an escape as `\\x1b`), so that they can "
              "neither forge a line nor move the terminal.",
        "test_check.py::test_exception_names_and_messages_are_shown_escaped_never_obeyed")
covered(PAGE, "An error of the child's own code, not of yours, ends the run as the checker's "
              "error (exit status 3), never as your output.",
        "test_check.py::test_an_error_of_the_child_s_own_is_the_checker_s")
covered(PAGE, "A child that closes its pipe without exiting gets a second to exit before the "
              "checker kills it; the line then says so, not that your code got a signal.",
        "test_check.py::test_a_pipe_closed_by_the_candidate_is_not_a_signal_the_candidate_got")

SPAWNS = '''import os
import subprocess
import sys
import threading
import time


def attention(Q, K, V):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open({pids!r}, "a") as f:
        f.write(f"{{sleeper.pid}}\\n")
    if len(K[0]) == {hang}:
        time.sleep(120)
    return [[0.0] * len(V[0]) for _ in Q]
'''


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PROC, reason="reads the process table")
@claim(PAGE, "The child runs in a process group of its own, which the checker kills at the end "
             "of the run, when a call runs past its limit, and when SIGTERM or Ctrl-C stops it; "
             "the child also kills its group when the checker dies.")
@claim(PAGE, "Any other end of the checker kills the child's group at once.")
def test_the_child_s_group_dies_at_a_time_out_at_the_end_and_with_the_checker(tmp_path):
    pids = str(tmp_path / "pids")
    path = candidate(tmp_path, SPAWNS.format(pids=pids, hang=16))  # the first case hangs
    report = check.check(path, "attention", options=NAMED._replace(time_limit=0.5))
    assert report.results[0].mistake == judge.TIME_OUT.name
    spawned = [int(p) for p in open(pids).read().split()]
    time.sleep(0.3)
    assert len(spawned) > 2 and not any(alive(p) for p in spawned)  # at the time-out, the end
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        os.remove(pids)
        path = candidate(tmp_path, SPAWNS.format(pids=pids, hang=7))  # the second case hangs
        process = subprocess.Popen([sys.executable, CHECK, path, "--time-limit", "60"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not (os.path.exists(pids) and len(open(pids).read().split()) >= 2):
                assert time.monotonic() < deadline, "the second case never started"
                time.sleep(0.05)
            time.sleep(0.2)
            spawned = [int(p) for p in open(pids).read().split()]
            assert all(alive(p) for p in spawned)
            process.send_signal(sig)
            process.communicate(timeout=30)
            deadline = time.monotonic() + 3  # the child's watch looks every 0.1 s
            while any(alive(p) for p in spawned) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not any(alive(p) for p in spawned), sig
            assert process.returncode == (-9 if sig == signal.SIGKILL else 128 + sig)
        finally:
            process.kill()
            process.wait()
            for p in spawned:
                if alive(p):
                    os.kill(p, signal.SIGKILL)


covered(PAGE, "It is an ordinary process, not a daemon, so your own process pool works.",
        "test_check.py::test_a_process_pool_works_in_the_child")


# ------------------------------------------------------------------ what it cannot see

@claim(PAGE, "`--online` checks that the answer equals the two-pass one for every block size; a "
             "function that builds the whole n x m matrix anyway passes.")
def test_a_one_pass_function_that_builds_the_whole_matrix_passes(tmp_path):
    two_pass = RIGHT + ("\n\ndef online_attention(Q, K, V, block_size, mask=None, "
                        "is_causal=False):\n    return attention(Q, K, V, mask, is_causal)  "
                        "# every block size ignored\n")
    report = check.check(candidate(tmp_path, two_pass), "online", options=Options(cases=20))
    assert report.ok and report.mistakes == set(), report.lines()
    sizes = {c.block_size for c in mode_online.cases()}
    assert sizes == set(range(1, 8))  # every block size of m = 7 keys


@claim(PAGE, "Matrices are lists of rows of floats.")
@claim(PAGE, "It passes float64 lists or arrays, and reads numbers back")
def test_every_number_passed_is_a_float_and_every_mask_entry_a_bool():
    def leaves(x):
        if isinstance(x, list):
            for v in x:
                yield from leaves(v)
        else:
            yield x
    for name, spec in MODES.items():
        cases = spec.cases() + battery.draws(spec, {"mask", "causal", "scale"}, "top-left",
                                             True, 1, 30)
        for case in cases:
            numbers = list(leaves(list(case.args[:6])))
            assert all(type(v) is float for v in numbers), (name, case.title)
            if case.mask is not None:
                assert all(type(a) is bool for a in leaves(case.mask))


@claim(PAGE, "**Inputs beyond its draws**: rows longer than 64 keys, d_k in the thousands, masks "
             "of other shapes, broadcasting rules, more than one batch axis, other batch sizes.")
def test_no_case_has_more_than_64_keys_d_k_above_16_or_a_batch_other_than_two():
    for name, spec in MODES.items():
        for case in spec.cases() + battery.draws(spec, {"mask", "causal", "scale"}, "top-left",
                                                 True, 1, 200):
            parts = case.parts or (case,)
            assert len(parts) in (1, 2)
            for part in parts:
                if name == "softmax":
                    assert len(part.args[0]) <= 64
                elif name == "mha":
                    assert len(part.args[1]) <= 16 and len(part.args[2][0]) // part.args[6] <= 4
                else:
                    assert len(part.args[1]) <= 64 and len(part.args[1][0]) <= 16
                if part.mask is not None:
                    assert len(part.mask) == len(part.args[0])  # n x m, no other shape
                    assert {len(row) for row in part.mask} == {len(part.args[1])}


covered(PAGE, "A wrong answer that happens to equal a known mistake's is named as that mistake; "
              "one that matches none is only described.",
        "test_check.py::test_every_mistake_of_every_case_is_named_as_itself")
covered(PAGE, "The checker's own tests run it on a dozen base files in `tests/readers/`, right "
              "answers in every mode and style",
        "test_check.py::test_the_readers_folder_holds_a_dozen_bases_and_the_hostile_ones")
