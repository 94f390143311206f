"""Session fixtures shared by several test files.  The bounded comparison lives in
tests/helpers.py (`from helpers import assert_close`); paths come from pytest's
configuration (pyproject.toml: pythonpath), not from here."""

import pytest


@pytest.fixture(scope="session")
def default_report():
    """stats.report() at its defaults: the numbers `python3 stats.py` prints (about 3 s)."""
    import stats
    return stats.report()
