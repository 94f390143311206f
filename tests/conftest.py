"""Session fixtures shared by several test files, and the lines the test run ends with:
why each skipped test was skipped, and how to run the slow tests that the default run
deselects.  The bounded comparison lives in tests/helpers.py (`from tests.helpers import
assert_close`); the one path, the repository's root, comes from pytest's configuration
(pyproject.toml: pythonpath), not from here."""

import collections  # Counter, of the skip reasons
import os  # the interpreter's path, as the reader would type it
import sys  # the interpreter running the tests

import pytest

# The readers are candidate files for the checker, which loads each in a child process of its
# own; pytest's --doctest-modules would import them all into the test process.
collect_ignore = ["readers"]
RUN_ALL = '-m "slow or not slow"'  # the option that runs every test, as README.md says


@pytest.fixture(scope="session")
def default_report():
    """stats.report() at its defaults: the numbers `python3 stats.py` prints (about 3 s)."""
    import stats
    return stats.report()


def pytest_terminal_summary(terminalreporter):
    """Say, above the counts, why tests were skipped and which slow tests did not run."""
    skipped = collections.Counter(_reason(report)
                                  for report in terminalreporter.stats.get("skipped", []))
    slow = [item for item in terminalreporter.stats.get("deselected", [])
            if item.get_closest_marker("slow")]
    lines = [f"{count} skipped: {reason}" for reason, count in sorted(skipped.items())]
    if any("numpy" in reason.lower() for reason in skipped):
        lines.append(f"  NumPy is optional; with it installed ({_python()} -m pip install "
                     "numpy), those tests run")
    if slow:
        tests = "test" if len(slow) == 1 else "tests"
        lines.append(f"{len(slow)} slow {tests} deselected (training runs, Monte Carlo); "
                     f"run them with -m slow, or every test with {RUN_ALL}")
    if lines:
        terminalreporter.write_sep("-", "not run")
        for line in lines:
            terminalreporter.write_line(line)


def _reason(report) -> str:
    """The reason a skipped test or module gave (pytest stores "Skipped: REASON")."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


def _python() -> str:
    """The interpreter running the tests, relative to here when it is below (.venv/bin/python)."""
    relative = os.path.relpath(sys.executable)
    return sys.executable if relative.startswith("..") else relative
