"""Each module declares its public API in __all__, its docstring lists the same names, every
public callable has a doctest, and no code outside tests/ reaches for a private name.
softmax.py's docstring lists its names in two blocks: the mathematics, then the input policy
that the other modules and the programs check with."""

import ast
import pathlib
import re

import pytest

import attention
import softmax
import stats

MODULES = [softmax, attention, stats]
LIBRARY = {module.__name__ for module in MODULES}
ROOT = pathlib.Path(__file__).resolve().parent.parent
# every Python file of the project but the tests: the modules and the programs' folders
PATTERNS = ("*.py", "scripts/**/*.py", "interview/**/*.py", "benchmarks/**/*.py",
            "experiments/**/*.py")
SOURCES = sorted(path.relative_to(ROOT).as_posix() for pattern in PATTERNS
                 for path in ROOT.glob(pattern))


def docstring_names(module, block="Public API (`__all__`):"):
    """The names listed in a block of the module docstring, "Public API (`__all__`):" unless
    told otherwise.

    Each line of the block starts (at the block's indentation) with one or more names
    separated by commas, each possibly followed by its arguments in parentheses.
    """
    if block not in module.__doc__:
        return []
    lines = module.__doc__.split(block, 1)[1].split("\n", 1)[1].split("\n")
    names, indent = [], None
    for line in lines:
        if not line.strip():
            if names:
                break
            continue
        here = len(line) - len(line.lstrip())
        indent = here if indent is None else indent
        if here > indent:  # a continuation line of the previous entry
            continue
        head = re.split(r"\s{2,}", line.strip())[0]
        while re.search(r"\([^()]*\)", head):
            head = re.sub(r"\([^()]*\)", "", head)
        names += [item.split()[0] for item in head.split(",") if item.strip()]
    return names


POLICY = "Input policy (`__all__`):"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_equals_the_docstring_list_and_every_name_exists(module):
    listed = docstring_names(module) + docstring_names(module, POLICY)
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name
        assert not name.startswith("_")


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_public_callable_has_a_doctest(module):
    for name in module.__all__:
        obj = getattr(module, name)
        # main is the command line, pinned by tests/test_report.py instead
        if callable(obj) and not isinstance(obj, type) and name != "main":
            assert ">>>" in (obj.__doc__ or ""), f"{module.__name__}.{name} has no doctest"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_no_other_public_function_is_defined_in_the_module(module):
    unlisted = [name for name, obj in vars(module).items()
                if callable(obj) and getattr(obj, "__module__", None) == module.__name__
                and not name.startswith("_") and name not in module.__all__]
    assert not unlisted, f"{module.__name__} defines public names missing from __all__: {unlisted}"


def test_the_input_policy_is_public_and_listed_in_softmax_alone():
    policy = docstring_names(softmax, POLICY)
    assert policy == ["LIMIT", "as_list", "as_vector", "as_matrix", "as_real", "as_int",
                      "as_flag", "as_logits", "as_probabilities", "in_log_range", "shown"]
    assert set(policy) <= set(softmax.__all__)
    assert docstring_names(attention, POLICY) == docstring_names(stats, POLICY) == []


def private_names_used(source):
    """Yield (line, text) for each private name of the library that source imports or reads:
    `from softmax import _x`, and `softmax._x` after `import softmax [as s]`."""
    tree = ast.parse(source)
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name in LIBRARY}
        elif isinstance(node, ast.ImportFrom) and node.module in LIBRARY:
            for a in node.names:
                if a.name.startswith("_"):
                    yield node.lineno, f"from {node.module} import {a.name}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            yield node.lineno, f"{node.value.id}.{node.attr}"


def test_the_private_name_finder_finds_both_forms():
    source = "import attention as at\nfrom softmax import _x, y\nat._dots(1)\nat.__doc__\n"
    assert list(private_names_used(source)) == [(2, "from softmax import _x"),
                                                (3, "at._dots")]


@pytest.mark.parametrize("path", SOURCES)
def test_no_code_outside_the_tests_uses_a_private_name_of_the_library(path):
    used = list(private_names_used((ROOT / path).read_text(encoding="utf-8")))
    assert not used, f"{path} uses private names: {used}"
