"""Every program a reader may run does what its documentation says: `python3 PATH` (or
`python3 PATH --help`, where a full run takes long) exits 0 with output, from the
repository root and from the program's own folder, with nothing on PYTHONPATH.  The test
run itself ends by saying why tests were skipped and how to run the slow ones.

Every .py outside tests/ and the three modules is found by listing its folder, so a new
one cannot be forgotten; only the folders' __init__.py files, which make them packages, are
not programs.  The modules of interview/, experiments/, tools/, lowprecision/ and oracles/ are
parts of a program: run by hand, they print what they are and the command of their program.
"""

import os
import subprocess
import sys

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
    "scripts/tables.py": [],
    "scripts/whiteboard.py": [],
    "scripts/worked_examples.py": [],
    "benchmarks/bench.py": ["--help"],  # a full run takes minutes
    "benchmarks/accuracy.py": ["--vectors", "5"],
    "interview/check.py": ["--help"],
    "experiments/learning.py": ["--help"],
    "experiments/stability.py": ["--help"],  # a full run: about a minute
    "benchmarks/stability.py": ["--help"],  # a full run: minutes
    "tools/mutate.py": ["--help"],
}
PARTS = {  # a module of a program -> the program it names when run by hand
    **{f"interview/{name}.py": "python3 interview/check.py --help"
       for name in ("calling", "judge", "serve", "runner", "mode_backward", "mode_forward",
                    "mode_mha", "mode_online", "mode_softmax")},
    **{f"experiments/{name}.py": "python3 experiments/learning.py --help"
       for name in ("learning_model", "learning_measure", "learning_tables")},
    **{f"experiments/{name}.py": "python3 experiments/stability.py --help"
       for name in ("stability_model", "stability_measure", "stability_tables")},
    "tools/mutants.py": "python3 tools/mutate.py --help",
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
