"""The mutation tool's command line (tools/mutate.py), run as a reader runs it.

The tool is run by hand, never by the tests; these only check that it starts, explains
itself, and says plainly when the Python that runs it has no pytest.
"""

import os  # the repository's root
import subprocess  # run the tool as a program
import sys  # the interpreter that runs the tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tool(*args, cwd=ROOT, python=(sys.executable,)):
    """Run tools/mutate.py with args; return the finished process."""
    return subprocess.run([*python, os.path.join(ROOT, "tools", "mutate.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_help_exits_0_from_the_root_and_from_tools():
    for cwd in (ROOT, os.path.join(ROOT, "tools")):
        run = tool("--help", cwd=cwd)
        assert run.returncode == 0, run.stderr
        assert "--jobs" in run.stdout and "--slow" in run.stdout  # the options are listed


def test_a_python_without_pytest_is_named_as_such():
    # python -S leaves site-packages, and so pytest, off the path: a real Python without
    # pytest, whichever environment runs the tests.
    run = tool("softmax.py", python=(sys.executable, "-S"))
    assert run.returncode == 1
    assert "pytest is not installed for this Python" in run.stderr  # not "the tests fail"
    assert "do not pass" not in run.stderr


def test_the_slow_tests_are_a_last_step_over_every_path(monkeypatch):
    # --slow must give the verdict of one run of every test: the slow tests of all the paths,
    # after the default steps, which a killed mutant never gets past
    from tools import mutate
    options, tests = ["-x"], ["tests/a.py", "tests/b.py"]
    default = [["-x", "tests/a.py"], ["-x", "tests/b.py"]]
    assert mutate.stages(options, tests, slow=False) == default
    assert mutate.stages(options, tests, slow=True) == default + [
        ["-x", "-m", "slow", "tests/a.py", "tests/b.py"]]
    assert mutate.stages(options, tests[:1], slow=True) == [
        ["-x", "tests/a.py"], ["-x", "-m", "slow", "tests/a.py"]]


def test_rerun_reads_the_survivors_of_a_report_without_their_line_numbers(monkeypatch, tmp_path):
    # the report's lines are `verdict outcome describe()`; a rerun matches the mutants by
    # key (function, operator and text), so that lines added above them do not matter
    from tools import mutate
    report = tmp_path / "report.txt"
    report.write_text(
        "killed    failed   m.py:3:4  f  compare  a < b -> a <= b\n"
        "survived  passed   m.py:5:8  g.h  arith  x - 1 -> x + 1\n"
        "survived  passed   dir/m.py:9:1  <module>#2  number  [1.0] * n -> [2.0] * n\n"
        "survived (not listed as equivalent): 2\n"
        "  m.py:5:8  g.h  arith  x - 1 -> x + 1\n", encoding="utf-8")
    assert mutate.survivors(report) == {"m.py:g.h:arith:x - 1->x + 1",
                                        "dir/m.py:<module>#2:number:[1.0] * n->[2.0] * n"}
