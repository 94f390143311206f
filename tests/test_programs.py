"""Every program a reader may run does what its documentation says: `python3 PATH` (or
`python3 PATH --help`, where a full run takes long) exits 0 with output, from the
repository root and from the program's own folder, with nothing on PYTHONPATH.  A bad
argument is one line on stderr and exit status 2, never a traceback; Ctrl-C is one line and
status 130, with how far a long run had got.  The test run itself ends by saying why tests
were skipped and how to run the slow ones.

Every .py outside tests/ and the three modules is found by listing its folder, so a new
one cannot be forgotten; only the folders' __init__.py files, which make them packages, are
not programs.  The modules of interview/, experiments/, tools/, lowprecision/ and oracles/ are
parts of a program: run by hand, they print what they are and the command of their program.
"""

import importlib
import os
import re
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGUMENTS = {  # program -> the arguments of a quick documented run ([] for the full run)
    "stats.py": ["--help"],
    "scripts/build.py": ["--help"],  # a full run is `python3 scripts/build.py --check`: 10 s
    "scripts/check_frameworks.py": [],  # without torch and jax: says each is skipped
    "scripts/compensated.py": [],
    "scripts/figures.py": [],
    "scripts/lowprecision.py": [],
    "scripts/lowprecision_tables.py": ["--help"],  # a full run: the Monte Carlo, 2 s
    "scripts/report_tables.py": ["--help"],  # a full run computes the report: seconds
    "scripts/scales.py": [],
    "scripts/whiteboard.py": [],
    "scripts/worked_examples.py": [],
    "benchmarks/bench.py": ["--help"],  # a full run takes minutes
    "benchmarks/accuracy.py": ["--vectors", "5"],
    "benchmarks/checker.py": ["--modes", "softmax", "--cases", "5", "--repeat", "1"],
    "interview/check.py": ["--help"],
    "experiments/learning.py": ["--help"],
    "experiments/stability.py": ["--help"],  # a full run: about a minute
    "benchmarks/stability.py": ["--help"],  # a full run: minutes
    "tools/mutate.py": ["--help"],
}
PARTS = {  # a module of a program -> the program it names when run by hand
    **{f"interview/{name}.py": "python3 interview/check.py --help"
       for name in ("battery", "calling", "judge", "serve", "runner", "mode_backward",
                    "mode_forward", "mode_mha", "mode_online", "mode_softmax")},
    **{f"experiments/{name}.py": "python3 experiments/learning.py --help"
       for name in ("learning_model", "learning_measure", "learning_tables")},
    **{f"experiments/{name}.py": "python3 experiments/stability.py --help"
       for name in ("stability_model", "stability_measure", "stability_tables")},
    "tools/mutants.py": "python3 tools/mutate.py --help",
    "scripts/tables.py": "python3 scripts/build.py",
    "lowprecision/emulation.py": "python3 scripts/lowprecision.py",
    "oracles/exact.py": "python3 benchmarks/accuracy.py",
    "oracles/bounds.py": "python3 benchmarks/accuracy.py",
}
FOLDERS = ("scripts", "benchmarks", "interview", "experiments", "tools", "lowprecision",
           "oracles")


def run(program, arguments, cwd):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    path = os.path.relpath(os.path.join(ROOT, program), cwd)
    return subprocess.run([sys.executable, path] + arguments, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_python_file_outside_tests_is_listed():
    found = {f"{folder}/{name}" for folder in FOLDERS
             for name in os.listdir(os.path.join(ROOT, folder))
             if name.endswith(".py") and name != "__init__.py"}
    assert found == set(ARGUMENTS) - {"stats.py"} | set(PARTS), sorted(
        found ^ (set(ARGUMENTS) - {"stats.py"} | set(PARTS)))


@pytest.mark.parametrize("where", ["root", "own folder"])
@pytest.mark.parametrize("part", sorted(PARTS))
def test_a_part_of_a_program_run_by_hand_names_its_program(part, where):
    cwd = ROOT if where == "root" else os.path.dirname(os.path.join(ROOT, part))
    result = run(part, ["--help"], cwd)
    assert result.returncode == 0, result.stderr[-2000:]
    assert PARTS[part] in result.stdout


@pytest.mark.parametrize("where", ["root", "own folder"])
@pytest.mark.parametrize("program", sorted(ARGUMENTS))
def test_the_program_runs_as_documented(program, where):
    cwd = ROOT if where == "root" else os.path.dirname(os.path.join(ROOT, program))
    result = run(program, ARGUMENTS[program], cwd)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip(), "no output"


SLOW_AND_NUMPY = [  # a tiny selection: one slow test, one that needs NumPy
    "tests/test_scales.py::test_the_input_variance_of_embeddings_and_positions_is_real_in_every_place",
    "tests/test_scales.py::test_numpy_integers_and_arrays_are_read_as_ints_and_lists"]


def test_the_test_run_says_why_tests_were_skipped_and_how_to_run_the_slow_ones(tmp_path):
    # NumPy hidden by a module of its name that fails to import as a missing one would;
    # pytest's own plugins only, as in the README's virtual environment
    (tmp_path / "numpy.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    result = subprocess.run([sys.executable, "-m", "pytest"] + SLOW_AND_NUMPY, cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout[-2000:]
    assert "1 skipped: NumPy is not installed" in lines  # the reason the test gives
    assert any(line.startswith("  NumPy is optional; with it installed (") and
               line.endswith(" -m pip install numpy), those tests run") for line in lines)
    assert ("1 slow test deselected (training runs, Monte Carlo); run them with -m slow, "
            'or every test with -m "slow or not slow"') in lines
    assert lines[-1].startswith("=") and "1 skipped, 1 deselected" in lines[-1]


# ------------------------------------------------------ bad arguments and Ctrl-C

MISSING = os.path.join("no-such-folder", "out")  # a folder that does not exist, anywhere
BAD = {  # program -> a bad argument (each program's own tests try more)
    "stats.py": ["--keys", "1"],
    "scripts/build.py": ["--figures-dir", MISSING],
    "scripts/check_frameworks.py": ["--torch"],
    "scripts/compensated.py": ["5", "nan"],
    "scripts/figures.py": [os.path.join(MISSING, "f.svg")],
    "scripts/lowprecision.py": ["--format", "float8"],
    "scripts/lowprecision_tables.py": ["--seed", "1"],
    "scripts/report_tables.py": ["--seed", "1"],
    "scripts/scales.py": ["--lengths", "16,abc"],
    "scripts/worked_examples.py": ["extra"],
    "benchmarks/bench.py": ["--table", os.path.join(MISSING, "run.json")],
    "benchmarks/accuracy.py": ["--vectors", "-1"],
    "benchmarks/checker.py": ["--cases", "0"],
    "interview/check.py": ["--time-limit", "0", "f.py"],
    "experiments/learning.py": ["--json", os.path.join(MISSING, "runs.json")],
    "experiments/stability.py": ["--json", os.path.join(MISSING, "runs.json")],
    "benchmarks/stability.py": ["--steps", "0"],
    "tools/mutate.py": ["softmax.py", "--sample", "-1"],
}


NO_COMMAND_LINE = {  # program -> why it reads no arguments, and so refuses none
    "scripts/whiteboard.py": "it needs only math and random (tests/test_docs.py): its demo of "
                             "a fifth of a second runs whatever it is given"}


def test_every_program_has_a_bad_argument_to_try():
    assert set(BAD) | set(NO_COMMAND_LINE) == set(ARGUMENTS)
    assert not set(BAD) & set(NO_COMMAND_LINE)


@pytest.mark.parametrize("program", sorted(BAD))
def test_a_bad_argument_is_one_line_and_status_2_never_a_traceback(program):
    result = run(program, BAD[program], ROOT)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n"), result.stderr
    assert "Traceback" not in result.stderr
    assert os.path.basename(program) in result.stderr.split(":")[0]  # who is speaking


def _started(program, arguments):
    """A child in a session of its own, as a terminal starts a command: os.killpg then
    sends SIGINT to it and to every process it started, as Ctrl-C does.  Its SIGINT starts
    at the default, as in a terminal, even if this run of the tests ignores SIGINT (a
    background job does, and an ignored signal would stay ignored in the child)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.Popen([sys.executable, program] + arguments, cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


LONG_RUNS = {  # program -> a run of a minute or more, and the line Ctrl-C leaves
    "stats.py": (["--samples", "40000"], r"python3 stats\.py: interrupted"),
    "experiments/learning.py": (
        ["--scales", "all", "--jobs", "2"],
        r"python3 experiments/learning\.py: interrupted after \d+ of 420 runs"),
    "benchmarks/bench.py": (
        ["--only", "memory"],
        r"python3 benchmarks/bench\.py: interrupted in section memory, after 0 of 1 sections"),
}


def test_ctrl_c_ends_a_long_run_with_one_line_status_130_and_no_traceback():
    # the three at once, to wait once: each is well into its work after 2 s (its imports
    # take a tenth of that), and would go on for a minute or more
    children = {program: _started(program, arguments)
                for program, (arguments, _) in LONG_RUNS.items()}
    time.sleep(2.0)
    for child in children.values():
        os.killpg(child.pid, signal.SIGINT)
    for program, child in children.items():
        out, err = child.communicate(timeout=60)
        assert child.returncode == 130, (program, err[-2000:])
        assert re.fullmatch(LONG_RUNS[program][1] + "\n", err), (program, err)


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


CTRL_C = {  # program -> (its module, the name its work calls, arguments, the line)
    "stats.py": ("stats", "report", [], "python3 stats.py: interrupted"),
    "scripts/build.py": ("scripts.build", "compute", [],
                         "python3 scripts/build.py: interrupted after writing 0 files"),
    "scripts/check_frameworks.py": ("scripts.check_frameworks", "check_torch", [],
                                    "python3 scripts/check_frameworks.py: interrupted"),
    "scripts/compensated.py": ("scripts.compensated", "ulp_errors", [],
                               "python3 scripts/compensated.py: interrupted"),
    "scripts/figures.py": ("scripts.figures", "plot", ["OUT"],
                           "python3 scripts/figures.py: interrupted"),
    "scripts/lowprecision.py": ("scripts.lowprecision", "_limits", [],
                                "python3 scripts/lowprecision.py: interrupted"),
    "scripts/lowprecision_tables.py": ("scripts.lowprecision_tables", "blocks", [],
                                       "python3 scripts/lowprecision_tables.py: interrupted"),
    "scripts/report_tables.py": ("stats", "report", [],
                                 "python3 scripts/report_tables.py: interrupted"),
    "scripts/scales.py": ("scripts.scales", "logit_variance", [],
                          "python3 scripts/scales.py: interrupted"),
    "scripts/worked_examples.py": ("scripts.worked_examples", "worked_examples_table", [],
                                   "python3 scripts/worked_examples.py: interrupted"),
    "benchmarks/accuracy.py": ("benchmarks.accuracy", "random_logits", [],
                               "python3 benchmarks/accuracy.py: interrupted"),
    "benchmarks/stability.py": ("benchmarks.stability", "per_step", [],
                                "python3 benchmarks/stability.py: interrupted"),
    "experiments/stability.py": ("experiments.stability", "measure", ["--json", "OUT"],
                                 "python3 experiments/stability.py: interrupted"),
    "tools/mutate.py": ("tools.mutate", "run_module", ["scripts/tables.py", "--report", "OUT"],
                        "mutate: interrupted before the first mutant of scripts/tables.py "
                        "had run; OUT is as it was"),
}


@pytest.mark.parametrize("program", sorted(CTRL_C))
def test_ctrl_c_in_a_program_s_main_is_one_line_and_status_130(program, monkeypatch, capsys,
                                                                tmp_path):
    # the work the program calls is interrupted; the real signal is tried on the long runs
    # above, and experiments/learning.py's count in tests/test_learning.py
    where, name, arguments, line = CTRL_C[program]
    out = str(tmp_path / "out")
    monkeypatch.setattr(importlib.import_module(where), name, _interrupt)
    main = importlib.import_module(program[:-3].replace("/", ".")).main
    assert main([out if a == "OUT" else a for a in arguments]) == 130
    err = capsys.readouterr().err  # what came before it is the program's progress
    assert err.endswith("\n" + line.replace("OUT", out) + "\n") or \
        err == line.replace("OUT", out) + "\n", err
    assert "Traceback" not in err and not os.path.exists(out)  # nothing written


def test_ctrl_c_in_bench_names_the_section_it_stopped_in(monkeypatch, capsys):
    from benchmarks import bench
    done = (lambda out, *args: out.section("a section that returns at once"), (), ())
    monkeypatch.setitem(bench.SECTIONS, "forward", done)
    monkeypatch.setitem(bench.SECTIONS, "backward", (_interrupt, (), ()))
    assert bench.main(["--quick", "--only", "forward,backward"]) == 130
    assert capsys.readouterr().err == ("python3 benchmarks/bench.py: interrupted in section "
                                       "backward, after 1 of 2 sections\n")


# ------------------------------------------ each program's checks, named by the flag

def _one_line(program, argv, capsys):
    """The message of a usage error: SystemExit(2) and one line on stderr, nothing out."""
    main = importlib.import_module(program[:-3].replace("/", ".")).main
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    assert (exit_info.value.code, out) == (2, ""), err
    prefix, suffix = f"python3 {program}: ", f" (see python3 {program} --help)\n"
    assert err.startswith(prefix) and err.endswith(suffix) and err.count("\n") == 1, err
    return err[len(prefix):-len(suffix)]


FLAGS = [  # (program, arguments, the message): the flag the user typed, never a parameter
    ("scripts/scales.py", ["--lengths", "16,abc"],
     "--lengths: each n must be a whole number, not 'abc'"),
    ("scripts/scales.py", ["--lengths", "16,"],
     "--lengths: each n must be a whole number, not ''"),
    ("scripts/scales.py", ["--lengths", "1"], "--lengths: each n must be from 2 to 2**53, not 1"),
    ("scripts/scales.py", ["--lengths", str(2 ** 53 + 1)],
     f"--lengths: each n must be from 2 to 2**53, not {2 ** 53 + 1}"),
    ("scripts/scales.py", ["--d-model", "0"], "--d-model must be from 1 to 2**53, not 0"),
    ("scripts/scales.py", ["--d-model", str(2 ** 53 + 1)],
     f"--d-model must be from 1 to 2**53, not {2 ** 53 + 1}"),
    ("scripts/scales.py", ["--heads", "0"], "--heads must be from 1 to 2**53, not 0"),
    ("scripts/scales.py", ["--base", "1"], "--base must be from 2 to 2**53, not 1"),
    ("scripts/scales.py", ["--heads", "3"],
     "--heads 3 does not divide --d-model 512: a head has d_k = d_model / heads"),
    ("scripts/scales.py", ["--gap", "-0.5"], "--gap must be from 0 to 1.61e+60, not -0.5"),
    ("scripts/scales.py", ["--gap", "nan"], "--gap must be from 0 to 1.61e+60, not nan"),
    ("scripts/scales.py", ["--gap", "1e61"], "--gap must be from 0 to 1.61e+60, not 1e+61"),
    ("scripts/compensated.py", ["1", "inf"], "every LOGIT must be finite, not inf"),
    ("scripts/compensated.py", ["--", "-1e308", "1e308"],
     "the LOGITs -1e+308 and 1e+308 are too far apart: their difference is beyond the float "
     "range"),
    ("scripts/lowprecision.py", ["0", "nan"], "every LOGIT must be finite or -inf, not nan"),
    ("scripts/lowprecision.py", ["0", "inf"], "every LOGIT must be finite or -inf, not inf"),
    ("benchmarks/accuracy.py", ["--vectors", "-1"],
     "--vectors must be from 0 to 30000 (about a minute), not -1"),
    ("benchmarks/accuracy.py", ["--vectors", "30001"],
     "--vectors must be from 0 to 30000 (about a minute), not 30001"),
    ("benchmarks/bench.py", ["--only", "forward,speed"],
     "--only: unknown section(s) ['speed']; choose from ['forward', 'backward', 'streaming', "
     "'memory', 'main', 'learning', 'dots', 'steps']"),
]


@pytest.mark.parametrize("program, argv, message", FLAGS)
def test_a_program_names_the_flag_the_user_typed(program, argv, message, capsys):
    assert _one_line(program, argv, capsys) == message


def test_the_edges_of_each_range_are_taken(capsys):
    # the inclusive ends: two keys, 2^53 keys, a gap of 0 and of the largest taken
    from scripts import scales
    from softmax import LIMIT
    assert scales.main(["--lengths", f"2,{2 ** 53}", "--gap", "0", "--base", "2"]) == 0
    assert scales.main(["--gap", repr(LIMIT), "--d-model", "1", "--heads", "1"]) == 0
    from scripts import compensated, lowprecision
    assert compensated.main(["--", "-8e307", "8e307"]) == 0
    assert lowprecision.main(["--", "-inf", "0"]) == 0
    out = capsys.readouterr().out
    assert f"{2 ** 53:>10,}" in out and "[-8e+307, 8e+307]" in out and "[0.0, 1.0]" in out


def test_one_logit_is_a_row_like_any_other():
    # `python3 scripts/compensated.py 5` ended in a TypeError: the exact sum of no other
    # terms was the int 0, which decimal would not subtract from
    from scripts import compensated
    assert compensated.ulp_errors([1.0], [5.0]) == [0.0]
    assert compensated.ulp_errors([0.0], [5.0], log=True) == [0.0]


def test_bench_reads_only_runs_that_it_saved(tmp_path, capsys):
    runs = {"missing.json": None, "words.json": "not json", "list.json": "[1]",
            "rowless.json": '{"python": "CPython 3.11.7"}',
            "bad row.json": '{"python": "CPython 3.11.7", "rows": [{"key": "x"}]}'}
    for name, text in runs.items():
        if text is not None:
            (tmp_path / name).write_text(text)
    said = {name: _one_line("benchmarks/bench.py", ["--table", str(tmp_path / name)], capsys)
            for name in runs}
    assert said["missing.json"] == (f"--table: cannot read {tmp_path / 'missing.json'}: No "
                                    f"such file or directory")
    assert said["words.json"].startswith(f"--table: {tmp_path / 'words.json'} is not JSON")
    for name in ("list.json", "rowless.json", "bad row.json"):
        assert said[name] == f"--table: {tmp_path / name} is not a run saved by --save"
    assert _one_line("benchmarks/bench.py", ["--table", str(tmp_path)], capsys) == (
        f"--table: cannot read {tmp_path}: Is a directory")


def test_bench_checks_the_file_to_save_before_it_runs(tmp_path, monkeypatch, capsys):
    from benchmarks import bench
    monkeypatch.setattr(bench, "_bench", _interrupt)  # the run: must not be reached
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for path, why in ((tmp_path / "none" / "f.json", f"there is no folder {tmp_path / 'none'}"),
                      (tmp_path, "it is a folder"), ("", "the path is empty"),
                      (a_file / "f.json", f"{a_file} is not a folder")):
        assert _one_line("benchmarks/bench.py", ["--save", str(path)], capsys) == (
            f"--save: cannot write {path}: {why}")
    monkeypatch.setattr(bench.os, "access", lambda path, mode: False)
    assert _one_line("benchmarks/bench.py", ["--save", str(a_file)], capsys) == (
        f"--save: cannot write {a_file}: permission denied")


def test_bench_saves_a_run_that_its_table_reads(tmp_path, monkeypatch, capsys):
    from benchmarks import bench

    def section(out, *args):
        out.section("a section of one figure")
        out.add("x.ratio", "a ratio", 1.5, ".2f", "<= 2", True)
    monkeypatch.setattr(bench, "SECTIONS", {"forward": (section, (), ())})
    path = tmp_path / "run.json"
    assert bench.main(["--quick", "--save", str(path)]) == 0
    capsys.readouterr()
    assert bench.main(["--table", str(path)]) == 0
    assert "| a ratio |  | 1.50 |" in capsys.readouterr().out


def test_the_figures_and_the_pages_are_checked_before_the_build(tmp_path, monkeypatch, capsys):
    from scripts import build, figures
    monkeypatch.setattr(build, "compute", _interrupt)  # the work: must not be reached
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for where in (str(a_file), ""):
        assert _one_line("scripts/build.py", ["--figures-dir", where], capsys) == (
            f"--figures-dir {where!r} is not an existing directory")
    monkeypatch.setattr(figures.os, "access", lambda path, mode: False)
    said = _one_line("scripts/build.py", ["--figures-dir", str(tmp_path)], capsys)
    assert said == (f"cannot write {os.path.relpath(tmp_path / 'data.json')}: the folder "
                    f"{tmp_path} is not writable")
    assert build.main(["--check", "--figures-dir", str(a_file)]) == 130  # --check writes nothing


def test_the_example_figure_is_checked_before_it_is_drawn(tmp_path, monkeypatch, capsys):
    from scripts import figures
    monkeypatch.setattr(figures, "plot", _interrupt)  # the work: must not be reached
    for path, why in ((tmp_path / "none" / "f.svg", f"there is no folder {tmp_path / 'none'}"),
                      (tmp_path, "it is a folder"), ("", "the path is empty"),
                      (os.devnull, "it is not a regular file")):  # a device is never replaced
        assert _one_line("scripts/figures.py", [str(path)], capsys) == (
            f"cannot write {path}: {why}")
