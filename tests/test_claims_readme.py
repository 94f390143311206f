"""The claims of README.md that are not about the report's numbers (those are in
tests/test_claims_report.py): the variance, exactly; how the code is built; the same numbers
on every Python; what the programs print.  Its section "Beyond initialisation" is the
training study's (tests/claims.py, OWNERS).
"""

import ast
import itertools
import os
import re
import subprocess
import sys
from fractions import Fraction

import pytest

from tests.claims import REPORT, claim, covered, page_text

README = "README.md"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHONS = [os.path.expanduser(f"~/.pyenv/versions/{v}/bin/python3")
           for v in ("3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0")]


@claim(README, "so q · k, a sum of d_k independent products, has variance d_k.")
@pytest.mark.parametrize("d_k", [1, 2, 3, 4])
def test_q_dot_k_of_independent_unit_components_has_variance_d_k_exactly(d_k):
    # every one of the 2^(2 d_k) equally likely sign patterns of q and k, each component
    # +-1 with probability 1/2 (mean 0, variance 1): E[(q . k)^2] - E[q . k]^2, in Fractions
    values = [sum(a * b for a, b in zip(s[:d_k], s[d_k:]))
              for s in itertools.product((-1, 1), repeat=2 * d_k)]
    mean = Fraction(sum(values), len(values))
    assert mean == 0 and Fraction(sum(v * v for v in values), len(values)) - mean ** 2 == d_k


def body(function):
    """A function's statements after its docstring and its `fn = "name"` line."""
    statements = function.body[1:] if ast.get_docstring(function) else function.body
    return [s for s in statements if not (isinstance(s, ast.Assign) and
                                          ast.unparse(s.targets[0]) == "fn")]


def calls(statement):
    return [ast.unparse(node.func) for node in ast.walk(statement) if isinstance(node, ast.Call)]


@claim(README, "`attention_steps` and `scaled_dot_product_attention` are each one call that "
               "checks the input (`_inputs`, built from small named checks at the bottom of "
               "the file) and one call to the core; the backward pass, the one-pass form, "
               "multi-head and additive attention check their own further arguments in a few "
               "more lines before calling theirs.")
def test_two_public_functions_are_one_check_and_one_core_the_others_check_more():
    with open(os.path.join(ROOT, "attention.py"), encoding="utf-8") as f:
        functions = {node.name: node for node in ast.parse(f.read()).body
                     if isinstance(node, ast.FunctionDef)}
    for name in ("attention_steps", "scaled_dot_product_attention"):
        named = [c for s in body(functions[name]) for c in calls(s) if c.startswith("_")]
        assert sorted(named) == ["_attention", "_inputs"], (name, named)
    for name, core in (("attention_backward", "_backward"), ("streaming_attention", "_streamed"),
                       ("multi_head_attention", "_heads"), ("additive_attention", "_additive")):
        statements = body(functions[name])
        assert calls(statements[-1])[0] == core, name  # the last line: the core
        checks = [s for s in statements[:-1] if calls(s)]
        assert len(checks) >= 2, name  # more than the one call that checks the input


@claim(README, "`python3 stats.py` prints the argument in numbers: section 1 the variance of "
               "q · k, unscaled and scaled; 2 what each scale choice does to it; 3 how far "
               "softmax saturates; 4 and 5 the gradient reaching the logits and the queries in "
               "the typical row; then how that gradient spreads over all the rows; 6 the "
               "pictures.")
def test_the_sections_of_the_main_job_are_the_ones_the_readme_lists():
    text = page_text(REPORT)
    titles = ["1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)",
              "2. Var(c q . k) = d_k c^2 for each scale c",
              "3. Saturation over m =",
              "4. The gradient reaching the logits, ||dL/dS|| ",
              "5. The gradient reaching the queries, ||dL/dQ|| = ||c dS K|| ",
              "median [95% interval]",  # sections 4 and 5 give medians: the typical row
              "The gradient over all the rows (sections 4 and 5 in full)", "6. Pictures"]
    places = [text.index(t) for t in titles]
    assert places[:5] == sorted(places[:5]) and places[-2] < places[-1]


def standard_library(name):
    return name in sys.stdlib_module_names


@claim(README, "Standard library only, Python 3.9 to 3.13, the same numbers on each;")
@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is 3.10+")
def test_the_library_and_its_programs_import_the_standard_library_only():
    project = {"softmax", "attention", "stats", "lowprecision", "oracles", "experiments",
               "interview", "scripts", "benchmarks", "tools"}
    for folder, _, files in os.walk(ROOT):
        relative = os.path.relpath(folder, ROOT)
        if relative.split(os.sep)[0] in {"tests", ".git", ".venv", "docs"}:
            continue
        for name in files:
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module]
                else:
                    continue
                for module in names:
                    top = module.split(".")[0]
                    optional = top in {"numpy", "torch", "jax"}  # optional, inside functions
                    assert standard_library(top) or top in project or optional, (name, module)


@pytest.mark.slow
@claim(README, "Standard library only, Python 3.9 to 3.13, the same numbers on each;")
def test_the_report_prints_the_same_bytes_on_every_installed_python():
    # a small report, every number of which depends on the rounding of the dot products,
    # the draws and the formatting; each installed interpreter from 3.9 to 3.13
    args = ["--seed", "5", "--samples", "30", "--trials", "40", "--dk", "16,256"]
    outputs = {}
    for python in [sys.executable] + [p for p in PYTHONS if os.path.exists(p)]:
        run = subprocess.run([python, os.path.join(ROOT, "stats.py"), *args], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (python, run.stderr)
        outputs[python] = run.stdout
    assert len(set(outputs.values())) == 1, sorted(outputs)


@pytest.mark.slow
@claim(README, "`python3 scripts/report_tables.py` prints these tables as they stand:")
def test_report_tables_prints_the_readme_s_blocks_as_they_stand():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report_tables.py")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    with open(os.path.join(ROOT, README), encoding="utf-8") as f:
        readme = f.read()
    for name in ("report-head", "argument-table", "gradient-spread-table"):
        block = re.search(rf"<!--begin:{name}-->\n(.*?)\n<!--end:{name}-->", readme, re.S)[1]
        assert f"{name}:\n{block}\n" in run.stdout, name
    assert "report-head:\n```\n..." not in run.stdout  # not an empty excerpt


covered(README, "equal to the library to about 1e-12 on the tests' random inputs",
        "test_docs.py::test_whiteboard_attention_forward_backward_and_streaming_equal_the_library")


@claim(README, "at the bottom, the one input policy that every module checks with.")
def test_attention_and_stats_check_their_input_with_softmax_s_policy_alone():
    for module in ("attention.py", "stats.py"):
        with open(os.path.join(ROOT, module), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        own = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
               and node.name.startswith("as_")]
        imported = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    and node.module == "softmax" for alias in node.names}
        assert own == [] and {"as_int", "as_list"} <= imported, module
