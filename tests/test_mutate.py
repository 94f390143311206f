"""The mutation tool's command line (tools/mutate.py), run as a reader runs it.

The tool is run by hand, never by the tests; these only check that it starts, explains
itself, refuses a bad argument or an empty selection in one line before it runs anything,
says plainly when the Python that runs it has no pytest, and reports what it did when it
is interrupted.
"""

import io  # a report in memory
import os  # the repository's root
import queue  # the runner's copies of the repository
import subprocess  # run the tool as a program
import sys  # the interpreter that runs the tests
import threading  # the runner's lock and flag

import pytest

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


def test_a_bad_argument_is_one_line_and_status_2_before_anything_runs(tmp_path, capsys):
    from tools import mutate
    report = tmp_path / "report.txt"
    report.write_text("survived  passed   scripts/tables.py:1:1  f  compare  a < b -> a <= b\n")
    not_python = tmp_path / "notes.txt"
    not_python.write_text("x")
    small = "scripts/tables.py"  # a module of few mutants: they are found in no time
    cases = {  # arguments -> what the one line says
        (small, "--sample", "-1"): "--sample must be at least 1, not -1",
        (small, "--sample", "0"): "--sample must be at least 1, not 0",
        (small, "--jobs", "0"): "--jobs must be at least 1, not 0",
        (small, "--rerun", str(tmp_path / "none.txt")):
            f"--rerun: there is no report {tmp_path / 'none.txt'}",
        (small, "--rerun", str(not_python)):
            f"--rerun: {not_python} lists no survivor: nothing to run again",
        ("README.md",): "README.md is not a Python module (a .py file)",
        ("nosuch.py",): f"no module nosuch.py here or under {ROOT}",
        (small, "--tests", "tests/nosuch.py"): f"--tests: no tests/nosuch.py under {ROOT}",
        (small, "--report", str(tmp_path / "none" / "r.txt")):
            f"--report: cannot write {tmp_path / 'none' / 'r.txt'}: there is no folder "
            f"{tmp_path / 'none'}",
        (small, "--report", str(tmp_path)): f"--report: cannot write {tmp_path}: it is a folder",
        (small, "--function", "nosuch", "--report", str(report)):
            f"no mutant of {small} matches --function nosuch (--list shows its mutants)",
        (small, "--operators", "nosuch", "--report", str(report)):
            f"no mutant of {small} matches --operators nosuch (--list shows its mutants)",
        (small, "--rerun", str(report), "--report", str(report)):
            f"no mutant of {small} matches --rerun {report} (--list shows its mutants)",
    }
    for arguments, said in cases.items():
        with pytest.raises(SystemExit) as exit_info:
            mutate.main(list(arguments))
        assert exit_info.value.code == 2, arguments
        assert capsys.readouterr() == ("", f"python3 tools/mutate.py: {said} (see python3 "
                                           f"tools/mutate.py --help)\n"), arguments
    # the report that a --rerun needs is still there, as it was
    assert report.read_text().startswith("survived  passed   scripts/tables.py:1:1  f  compare")


def test_a_file_that_does_not_parse_is_refused(tmp_path):
    broken = ROOT + "/tools/_broken_for_a_test.py"
    with open(broken, "w", encoding="utf-8") as f:
        f.write("x = (\n")
    try:
        run = tool("tools/_broken_for_a_test.py")
    finally:
        os.remove(broken)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "tools/_broken_for_a_test.py does not parse as Python: " in run.stderr


def test_a_listed_equivalent_is_said_to_be_equivalent_not_to_survive(monkeypatch, tmp_path,
                                                                      capsys):
    from tools import mutate
    from tools.mutants import find_mutants
    text = "def f(a, b):\n    return a < b\n"
    (tmp_path / "m.py").write_text(text)
    first, second = find_mutants("m.py", text)[:2]
    runner = mutate._Runner.__new__(mutate._Runner)  # its copies made by hand: no pytest
    runner.module, runner.text, runner.stages, runner.timeouts = "m.py", text, [["t"]], [1.0]
    runner.report, runner.equivalents = io.StringIO(), {first.key: "a reason"}
    runner.copies = queue.Queue()
    runner.copies.put(tmp_path)
    runner.outcomes, runner.lock, runner.stop = {}, threading.Lock(), threading.Event()
    runner.total, runner.start = 2, 0.0
    monkeypatch.setattr(mutate, "_run", lambda cwd, tests, timeout: ("passed", 0.0, ""))
    runner.one(first)
    runner.one(second)
    out = capsys.readouterr().out
    assert f"  equivalent: {first.describe()}\n" in out
    assert f"  survived: {second.describe()}\n" in out and "survived: " + first.describe() \
        not in out
    assert (tmp_path / "m.py").read_text() == text  # the copy is restored


def test_ctrl_c_says_how_many_mutants_ran_and_reports_them(monkeypatch, tmp_path, capsys):
    from tools import mutate
    from tools.mutants import find_mutants
    mutants = find_mutants("m.py", "def f(a, b):\n    return a < b + 1\n")[:2]
    runner = mutate._Runner.__new__(mutate._Runner)
    runner.module, runner.outcomes, runner.stop = "m.py", {}, threading.Event()

    def one(mutant):
        if mutant == mutants[1]:
            raise KeyboardInterrupt
        runner.outcomes[mutant] = "failed"
    runner.one = one
    assert runner.run(mutants, jobs=1) == {mutants[0]: "failed"}
    assert capsys.readouterr().err == ("mutate: interrupted after 1 of 2 mutants of m.py; "
                                       "finishing the runs under way\n")


def test_the_default_tests_name_each_file_once():
    # scripts/figures.py is imported by tests/test_docs.py, one of the shared tests too
    from tools import mutate
    tests = mutate.default_tests("scripts/figures.py")
    assert len(tests) == len(set(tests)) and "tests/test_docs.py" in tests


def test_a_run_stopped_before_its_first_verdict_leaves_the_report_as_it_was(
        monkeypatch, tmp_path, capsys):
    # the runs under way finished with no verdict (Ctrl-C right after the unmutated tests):
    # the earlier report, which the next --rerun needs, is not emptied
    from tools import mutate
    report = tmp_path / "report.txt"
    report.write_text("an earlier report\n")
    monkeypatch.setattr(mutate, "run_module", lambda *args: {})
    assert mutate.main(["scripts/tables.py", "--report", str(report)]) == 130
    assert capsys.readouterr().err == ("mutate: interrupted before the first mutant of "
                                       f"scripts/tables.py had run; {report} is as it was\n")
    assert report.read_text() == "an earlier report\n"
