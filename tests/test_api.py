"""Each module declares its public API in __all__, and its docstring lists the same names."""

import re

import pytest

import attention
import softmax
import stats


def docstring_names(module):
    """The names listed in the module docstring's "Public API (`__all__`):" block.

    Each line of the block starts (at the block's indentation) with one or more names
    separated by commas, each possibly followed by its arguments in parentheses.
    """
    lines = module.__doc__.split("Public API (`__all__`):", 1)[1].split("\n")[1:]
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


@pytest.mark.parametrize("module", [softmax, attention, stats], ids=lambda m: m.__name__)
def test_all_equals_the_docstring_list_and_every_name_exists(module):
    listed = docstring_names(module)
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name
        assert not name.startswith("_")


@pytest.mark.parametrize("module", [softmax, attention, stats], ids=lambda m: m.__name__)
def test_every_public_callable_has_a_doctest(module):
    for name in module.__all__:
        obj = getattr(module, name)
        # main is the command line, pinned by tests/test_report.py instead
        if callable(obj) and not isinstance(obj, type) and name != "main":
            assert ">>>" in (obj.__doc__ or ""), f"{module.__name__}.{name} has no doctest"


@pytest.mark.parametrize("module", [softmax, attention, stats], ids=lambda m: m.__name__)
def test_no_other_public_function_is_defined_in_the_module(module):
    for name, obj in vars(module).items():
        if callable(obj) and getattr(obj, "__module__", None) == module.__name__:
            assert name.startswith("_") or name in module.__all__, name
