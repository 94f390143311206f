"""Mutation testing of the project's modules: do the tests fail when the code is wrong?

Each mutant changes one small thing in one module (an operator, a comparison, a constant,
a deleted statement or raise, an `if` forced to True or False, an off-by-one slice or range
bound, min <-> max, `return x` -> `return None`), and the module's tests must then fail.
Standard library only; pytest must be installed for the Python that runs this file.

    python3 tools/mutate.py softmax.py --jobs 1        # every mutant, the default tests
    python3 tools/mutate.py attention.py --list        # list the mutants, run nothing

tools/README.md explains the options, the figures and the list of equivalent mutants
(tools/mutation_equivalent.txt).
"""

import argparse  # the command line
import ast  # parse a module and find what to mutate
import importlib.util  # is pytest installed for this Python?
import io  # tokenize reads from a stream
import math  # isfinite: a doubled float constant may overflow
import os  # the test runs' environment, process groups
import random  # --sample, seeded
import re  # find the tests that import a module
import shutil  # copy the repository
import signal  # kill a timed-out test run; SIGTERM ends a run cleanly
import subprocess  # run pytest on each mutant
import sys  # the interpreter that runs the tests
import tempfile  # the copies of the repository
import textwrap  # dedent a statement's source
import threading  # a lock for the results, a flag to stop
import time  # the baseline run and the timeouts
import tokenize  # locate operator tokens exactly
from concurrent.futures import ThreadPoolExecutor  # --jobs workers
from pathlib import Path
from queue import Queue  # hand each worker a private copy of the repository
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent  # the repository (tools/..)
EQUIVALENT_FILE = ROOT / "tools" / "mutation_equivalent.txt"
DEFAULT_TESTS = {  # the tests closest to each library module, fastest first
    "softmax.py": ("tests/test_softmax.py", "tests/test_boundary.py",
                   "tests/test_gradient_accuracy.py", "tests/test_fuzz.py"),
    "attention.py": ("tests/test_attention.py", "tests/test_boundary.py",
                     "tests/test_gradient_accuracy.py", "tests/test_fuzz.py"),
    "stats.py": ("tests/test_stats.py", "tests/test_report.py", "tests/test_boundary.py",
                 "tests/test_fuzz.py"),
}  # any other module: the test files that import it; then its doctests and SHARED_TESTS
SHARED_TESTS = ("tests/test_api.py", "tests/test_documents.py", "tests/test_docs.py")
# A test of source text, not behaviour, left out of every run: docs/whiteboard.md holds copies
# of the cores, so it would "kill" any mutant of a core shown there, equivalent or not.
TEXT_ONLY = ("tests/test_docs.py::test_whiteboard_markdown_shows_the_modules_own_cores_and_the_"
             "standalone_versions",)
IGNORED_IN_COPY = shutil.ignore_patterns(  # what git ignores too (.ci/run makes a .venv here)
    ".git", "__pycache__", ".pytest_cache", "*.pyc", ".venv", ".ruff_cache", "build", "dist",
    "*.egg-info")
MEMORY_LIMIT = 4 * 2 ** 30  # bytes of address space per test run
# Unset in every test run, so that the verdicts do not depend on who runs the tool:
# PYTHONUNBUFFERED hid a missing flush and a missing dup2 in stats.py's pipe handling, and
# PYTHONOPTIMIZE strips the tests' asserts.
UNSET = ("PYTHONUNBUFFERED", "PYTHONOPTIMIZE")
# `python3 -m pytest` with the address space capped first, where the platform can: a mutant
# such as `2 * n * m -> (2 * n) ** (m)` would otherwise eat a shared machine's memory before
# its timeout.  MemoryError then fails the run, and kills the mutant.
LAUNCH = ("import runpy, sys\n"
          "try:\n"
          "    import resource\n"
          f"    resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
          "except (ImportError, ValueError, OSError):\n"
          "    pass  # no such limit here: run without it\n"
          "sys.argv[0] = 'pytest'\n"
          "runpy.run_module('pytest', run_name='__main__', alter_sys=True)\n")

ARITH = {ast.Add: ["-"], ast.Sub: ["+"], ast.Mult: ["/", "**"], ast.Div: ["*", "//"],
         ast.FloorDiv: ["/", "*"], ast.Mod: ["//"], ast.Pow: ["*"],
         ast.BitAnd: ["|"], ast.BitOr: ["&"], ast.BitXor: ["&"],
         ast.LShift: [">>"], ast.RShift: ["<<"]}
ARITH_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
              ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
              ast.LShift: "<<", ast.RShift: ">>"}
OPERATOR_OF = {text: op for op, text in ARITH_TEXT.items()}
COMPARE = {ast.Lt: ["<=", ">="], ast.LtE: ["<", ">"], ast.Gt: [">=", "<="],
           ast.GtE: [">", "<"], ast.Eq: ["!="], ast.NotEq: ["=="],
           ast.Is: ["is not"], ast.IsNot: ["is"], ast.In: ["not in"], ast.NotIn: ["in"]}
ATOMS = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant)
WIDE_CONTEXTS = (ast.BinOp, ast.Compare, ast.BoolOp, ast.Call, ast.IfExp)  # see _Finder.wider
ADDITIVE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


class Edit(NamedTuple):
    """Replace the characters start:end of the module's source by text."""
    start: int
    end: int
    text: str


class Mutant(NamedTuple):
    """One mutation of one module: where, which operator, and the source before and after."""
    module: str  # path relative to the repository, e.g. "softmax.py"
    line: int
    col: int
    operator: str
    original: str  # the source of the enclosing expression, whitespace collapsed
    mutated: str  # the same after the edit
    edits: Tuple[Edit, ...]
    function: str  # the enclosing Class.function, with "#2" etc. on a repeated key

    @property
    def key(self) -> str:
        """Return the identity used by the equivalent list (no line number)."""
        return f"{self.module}:{self.function}:{self.operator}:{self.original}->{self.mutated}"

    def describe(self) -> str:
        """Return `file:line:col  function  operator  original -> mutant`."""
        return (f"{self.module}:{self.line}:{self.col}  {self.function}  {self.operator}  "
                f"{self.original} -> {self.mutated}")


def _squash(text: str) -> str:
    """Return text with every run of whitespace collapsed to one space.

    >>> _squash("a +\\n      b")
    'a + b'
    """
    return " ".join(text.split())


# ------------------------------------------------------------------ finding mutants

class _Source:
    """A module's text, with AST positions (line, UTF-8 byte column) as character offsets."""

    def __init__(self, text: str):
        """Index the start of every line, and the operator and name tokens."""
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                       if t.type in (tokenize.OP, tokenize.NAME)]

    def offset(self, line: int, byte_col: int) -> int:
        """Return the character offset of an AST position."""
        prefix = self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8")
        return self.starts[line - 1] + len(prefix)

    def span(self, node: ast.AST) -> Tuple[int, int]:
        """Return the character offsets where node starts and ends."""
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))

    def segment(self, node: ast.AST) -> str:
        """Return node's source text."""
        start, end = self.span(node)
        return self.text[start:end]

    def operator_between(self, left: ast.AST, right: ast.AST) -> Optional[Tuple[int, int]]:
        """Return the span of the operator token(s) between two nodes, parentheses excluded."""
        a, b = self.span(left)[1], self.span(right)[0]
        inside = [(self.starts[t.start[0] - 1] + t.start[1], self.starts[t.end[0] - 1] + t.end[1])
                  for t in self.tokens if t.string not in "()"]
        inside = [(s, e) for s, e in inside if a <= s and e <= b]
        return (inside[0][0], inside[-1][1]) if inside else None


def _same_tree(text: str, node: ast.AST) -> bool:
    """Return whether text parses back to node: guards against wrong positions (old f-strings)."""
    try:
        if isinstance(node, ast.expr):
            parsed = ast.parse("(" + text + "\n)", mode="eval").body
        else:  # later lines of a statement keep their indentation: restore the first's
            parsed = ast.parse(textwrap.dedent(" " * node.col_offset + text)).body[0]
    except SyntaxError:
        return False
    return ast.dump(parsed) == ast.dump(node)


def _is_docstring(stmt: ast.AST) -> bool:
    """Return whether stmt is a bare string: a docstring."""
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))


def _never_mutated(node: ast.AST) -> List[ast.AST]:
    """Return the parts of node that are never mutated: imports, the `__main__` guard,
    `__all__`, annotations, docstrings, the literal text of f-strings and error messages."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [node]
    if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
        return [node] if getattr(node.test.left, "id", None) == "__name__" else []
    parts = []
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(getattr(t, "id", None) == "__all__" for t in targets):
            parts.append(node)
        parts += [node.annotation] if isinstance(node, ast.AnnAssign) else []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = node.args.args + node.args.kwonlyargs + node.args.posonlyargs
        parts += [a.annotation for a in arguments] + [node.returns]
    if isinstance(node, ast.Raise):
        parts += [node.exc, node.cause]
    if isinstance(node, ast.Call):
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
        if name.endswith(("Error", "Exception", "Warning")):  # its arguments are the message
            parts += node.args + [k.value for k in node.keywords]
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        parts += node.body[:1] if node.body and _is_docstring(node.body[0]) else []
    if isinstance(node, ast.JoinedStr):  # an f-string's literal text; its {fields} stay
        parts += [v for v in node.values if isinstance(v, ast.Constant)]
    return [p for p in parts if p is not None]


class _Finder(ast.NodeVisitor):
    """Collects the mutants of one module, walking its tree once."""

    def __init__(self, module: str, text: str):
        """Parse text; note each node's parent and the nodes never mutated."""
        self.module, self.src, self.tree = module, _Source(text), ast.parse(text)
        self.parents = {id(child): node for node in ast.walk(self.tree)
                        for child in ast.iter_child_nodes(node)}
        self.skipped = {id(part) for node in ast.walk(self.tree)
                        for whole in _never_mutated(node) for part in ast.walk(whole)}
        self.mutants: List[Mutant] = []
        self.depth = 0  # > 0 inside a function body
        self.names: List[str] = []  # the enclosing classes and functions

    def add(self, operator: str, context: ast.AST, edits: Sequence[Edit],
            where: Optional[ast.AST] = None) -> None:
        """Record a mutant: context is the source shown (and keyed), where its position."""
        start, end = self.src.span(context)
        original = mutated = self.src.text[start:end]
        for e in sorted(edits, reverse=True):
            mutated = mutated[:e.start - start] + e.text + mutated[e.end - start:]
        where = where or context
        self.mutants.append(Mutant(self.module, where.lineno, where.col_offset, operator,
                                   _squash(original), _squash(mutated), tuple(edits),
                                   ".".join(self.names) or "<module>"))

    def replace(self, operator: str, context: ast.AST, node: ast.AST, text: str,
                where: Optional[ast.AST] = None) -> None:
        """Record the mutant that replaces node's source by text."""
        self.add(operator, context, [Edit(*self.src.span(node), text)], where)

    def wider(self, node: ast.AST) -> ast.AST:
        """Return the context that keys a small mutation: the nearest enclosing operation, call
        or conditional expression (`columns[0] % h`, not `0`), else the outermost expression
        around node.  Two zeros of one function then rarely share a key."""
        context, parent = node, self.parents.get(id(node))
        while isinstance(parent, (ast.expr, ast.keyword, ast.comprehension)):
            if isinstance(parent, ast.expr):
                context = parent
                if isinstance(parent, WIDE_CONTEXTS):
                    break
            parent = self.parents.get(id(parent))
        return context

    def ok(self, node: ast.AST) -> bool:
        """Return whether node may be mutated, and its position is exact."""
        return id(node) not in self.skipped and _same_tree(self.src.segment(node), node)

    def shifted(self, node: ast.AST, delta: str) -> str:
        """Return node's source plus delta ("+ 1"), in parentheses where precedence needs."""
        text = self.src.segment(node)
        is_atom = isinstance(node, ATOMS) or (isinstance(node, ast.BinOp)
                                              and isinstance(node.op, ADDITIVE))
        return f"{text} {delta}" if is_atom else f"({text}) {delta}"

    def visit_FunctionDef(self, node):
        """Mutate a function's body, keyed by its name."""
        self.depth += 1
        self.names.append(node.name)
        self.generic_visit(node)
        self.names.pop()
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        """Mutate a class's body, keyed by its name."""
        self.names.append(node.name)
        self.generic_visit(node)
        self.names.pop()

    def generic_visit(self, node):
        """Delete each statement of node's blocks in turn, then visit the children."""
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            for stmt in statements if isinstance(statements, list) else []:
                if isinstance(stmt, ast.stmt):
                    self.delete(stmt)
        super().generic_visit(node)

    def delete(self, stmt: ast.stmt) -> None:
        """Record stmt replaced by `pass`, inside functions, where that changes something."""
        kept = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass, ast.Return,
                ast.Global, ast.Nonlocal)
        if self.depth == 0 or isinstance(stmt, kept) or _is_docstring(stmt) or not self.ok(stmt):
            return
        start, end = self.src.span(stmt)
        if not self.src.text.startswith("elif", start):  # an elif's condition is mutated instead
            operator = "raise-delete" if isinstance(stmt, ast.Raise) else "delete"
            self.add(operator, stmt, [Edit(start, end, "pass")])

    def visit_If(self, node, values=("True", "False")):
        """Force the condition of an `if` or a conditional expression to each value."""
        if self.ok(node.test):
            for value in values:
                self.replace("if-cond", node.test, node.test, value)
        self.generic_visit(node)

    visit_IfExp = visit_If

    def visit_While(self, node):
        """Force a loop's condition to False."""
        self.visit_If(node, ("False",))

    def visit_Return(self, node):
        """Record `return x` -> `return None`."""
        value = node.value
        if value is not None and self.ok(value) and not (
                isinstance(value, ast.Constant) and value.value is None):
            self.replace("return-none", node, value, "None")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        """Swap the operator of `x op= y` (ARITH)."""
        span = self.src.operator_between(node.target, node.value) if self.ok(node) else None
        if span is not None and type(node.op) in ARITH:
            for new in ARITH[type(node.op)]:
                self.add("arith", node, [Edit(*span, new + "=")])
        self.generic_visit(node)

    def visit_BinOp(self, node):
        """Swap an arithmetic operator (ARITH), unless one side is text."""
        is_text = any(isinstance(side, ast.JoinedStr) or (isinstance(side, ast.Constant)
                                                          and isinstance(side.value, (str, bytes)))
                      for side in (node.left, node.right))
        if self.ok(node) and type(node.op) in ARITH and not is_text:
            span = self.src.operator_between(node.left, node.right)
            if span is not None and self.src.text[span[0]:span[1]] == ARITH_TEXT[type(node.op)]:
                for new in ARITH[type(node.op)]:
                    self.add("arith", node, [self.operator_edit(node, span, new)])
        self.generic_visit(node)

    def operator_edit(self, node: ast.BinOp, span: Tuple[int, int], new: str) -> Edit:
        """Return the edit that swaps node's operator for new and nothing else: `n * m * d`
        with ** would become `n * (m ** d)`, so the operands are parenthesised then."""
        start, end = self.src.span(node)
        text = self.src.text[start:span[0]] + new + self.src.text[span[1]:end]
        if _same_tree(text, ast.BinOp(node.left, OPERATOR_OF[new](), node.right)):
            return Edit(*span, new)
        left, right = self.src.segment(node.left), self.src.segment(node.right)
        return Edit(start, end, f"({left}) {new} ({right})")

    def visit_Compare(self, node):
        """Swap each comparison operator (COMPARE)."""
        if self.ok(node):
            operands = [node.left] + node.comparators
            for i, op in enumerate(node.ops):
                span = self.src.operator_between(operands[i], operands[i + 1])
                for new in COMPARE.get(type(op), []) if span else []:
                    self.add("compare", node, [Edit(*span, new)])
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        """Swap `and` and `or`."""
        if self.ok(node):
            new = "or" if isinstance(node.op, ast.And) else "and"
            spans = [self.src.operator_between(a, b) for a, b in zip(node.values, node.values[1:])]
            if all(spans):
                self.add("boolop", node, [Edit(*span, new) for span in spans])
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        """Remove a `not` or a unary minus."""
        if self.ok(node) and isinstance(node.op, (ast.Not, ast.USub)):
            start = self.src.span(node)[0]
            operand_start = self.src.span(node.operand)[0]
            # the operand may sit in parentheses that started before it: keep them
            while self.src.text[operand_start - 1] in "( \t" and operand_start - 1 > start:
                operand_start -= 1
            operator = "not" if isinstance(node.op, ast.Not) else "unary-minus"
            self.add(operator, self.wider(node), [Edit(start, operand_start, "")], node)
        self.generic_visit(node)

    def visit_Constant(self, node):
        """Flip a bool; change an int (0 -> 1, 1 -> 0 or 2, n -> n + 1) or a float (x -> 2x
        or 0.0, 0.0 -> 1.0)."""
        value = node.value
        if isinstance(value, bool) and self.ok(node):
            self.replace("bool", self.wider(node), node, str(not value), node)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not self.ok(node):
            return
        if isinstance(value, int):
            new = {0: [1], 1: [0, 2]}.get(value, [value + 1])
        else:
            new = [1.0] if value == 0.0 else [value * 2, 0.0]
        for v in new:  # repr(2 * 1.8e308) is "inf", a name: write the float literal instead
            self.replace("number", self.wider(node), node,
                         repr(v) if math.isfinite(v) else "1e999", node)

    def visit_Call(self, node):
        """Swap min and max; move a range's start or stop by one."""
        name = getattr(node.func, "id", None)
        if name in ("min", "max") and self.ok(node.func):
            self.replace("minmax", node, node.func, "max" if name == "min" else "min")
        if name == "range" and self.ok(node):
            for arg in [a for a in node.args[:2] if not isinstance(a, ast.Constant)]:
                for delta in ("+ 1", "- 1"):
                    self.replace("range", node, arg, self.shifted(arg, delta))
        self.generic_visit(node)

    def visit_Subscript(self, node):
        """Move a slice bound by one, or an index by + 1, inside functions."""
        index = node.slice
        if self.depth and self.ok(node):
            context = self.wider(node)
            if isinstance(index, ast.Slice):
                for bound in (index.lower, index.upper):
                    if bound is None or isinstance(bound, ast.Constant):
                        continue
                    for delta in ("+ 1", "- 1"):
                        self.replace("slice", context, bound, self.shifted(bound, delta), node)
            elif isinstance(index, (ast.Name, ast.BinOp)) and isinstance(node.ctx, ast.Load):
                self.replace("index", context, index, self.shifted(index, "+ 1"), node)
        self.generic_visit(node)


def apply(text: str, mutant: Mutant) -> str:
    """Return the module's text with the mutant's edits made."""
    for e in sorted(mutant.edits, reverse=True):
        text = text[:e.start] + e.text + text[e.end:]
    return text


def find_mutants(module: str, text: str) -> List[Mutant]:
    """Return the mutants of one module's source that parse and change its tree, in source
    order, a repeated key numbered ("function#2")."""
    finder = _Finder(module, text)
    finder.visit(finder.tree)
    original_dump = ast.dump(finder.tree)
    mutants, seen, repeats = [], set(), {}
    for m in sorted(finder.mutants, key=lambda m: (m.line, m.col, m.operator, m.mutated)):
        identity = (m.line, m.col, m.operator, m.original, m.mutated)
        if identity in seen:  # the same mutation, reached twice
            continue
        seen.add(identity)
        try:
            changed = ast.dump(ast.parse(apply(text, m))) != original_dump
        except SyntaxError:
            continue
        if changed:
            count = repeats[m.key] = repeats.get(m.key, 0) + 1
            mutants.append(m if count == 1 else m._replace(function=f"{m.function}#{count}"))
    return mutants


def read_equivalents(path: Path) -> Dict[str, str]:
    """Return the equivalent list's keys, each with its reason."""
    keys = {}
    for raw in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        if raw.strip() and not raw.lstrip().startswith("#"):
            key, _, reason = raw.partition("  #")  # snippets never hold two spaces
            keys[key.strip()] = reason.strip()
    return keys


# ------------------------------------------------------------------ running the tests

def default_tests(module: str) -> List[str]:
    """Return a module's default tests: its DEFAULT_TESTS (else the test files that import
    it), its doctests, then SHARED_TESTS; only the files that exist."""
    own = DEFAULT_TESTS.get(module)
    if own is None:
        imports = re.compile(rf"^\s*(from|import)\s+{re.escape(Path(module).stem)}\b", re.M)
        own = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").glob("test_*.py"))
               if imports.search(p.read_text(encoding="utf-8"))]
        if not own:
            raise SystemExit(f"mutate: no file in tests/ imports {module}; name the tests "
                             f"with --tests")
    return [t for t in [*own, module, *SHARED_TESTS] if (ROOT / t).exists()]


def _run(cwd: Path, tests: Sequence[str], timeout: float) -> Tuple[str, float, str]:
    """Run pytest on tests in cwd; return (outcome, seconds, the output's end), where the
    outcome is passed, failed, timeout or error."""
    env = {name: value for name, value in os.environ.items() if name not in UNSET}
    # Third-party pytest plugins are not loaded: the tests need pytest alone, and hypothesis's
    # plugin alone costs 1.6 s a run here.
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, *tests], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out = proc.communicate(timeout=timeout)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the process group of this pytest run only
        proc.communicate()
        return "timeout", time.perf_counter() - start, ""
    if proc.returncode == 5:
        raise SystemExit(f"mutate: pytest collected no tests from {' '.join(tests)}")
    outcome = {0: "passed", 1: "failed"}.get(proc.returncode, f"error (exit {proc.returncode})")
    return outcome, time.perf_counter() - start, out[-1500:]


def _interrupt(signum, frame):
    """Turn SIGTERM into KeyboardInterrupt, so that a stopped run still reports."""
    raise KeyboardInterrupt


class _Runner:
    """Runs the tests on the mutants of one module, in one copy of the repository per job.

    The first test path runs alone first, and the others only if it passes: most mutants
    fail their module's own tests, and then the others are not even collected."""

    def __init__(self, module: str, options: List[str], tests: List[str], jobs: int,
                 base: Path, report):
        """Copy the repository once per job into base; time the unmutated tests, which must
        pass, and allow each step of a mutant's run ten times as long."""
        self.module, self.report = module, report
        self.text = (ROOT / module).read_text(encoding="utf-8")
        self.stages = [options + tests[:1]] + ([options + tests[1:]] if tests[1:] else [])
        self.copies: "Queue[Path]" = Queue()
        for k in range(jobs):
            self.copies.put(Path(shutil.copytree(ROOT, base / f"w{k}", ignore=IGNORED_IN_COPY)))
        self.timeouts = []
        for stage in self.stages:
            outcome, seconds, out = _run(base / "w0", stage, timeout=600)
            if outcome != "passed":
                raise SystemExit(f"{out}\nmutate: the unmutated tests do not pass ({outcome}); "
                                 f"fix them or choose others with --tests")
            self.timeouts.append(max(10 * seconds, 5.0))
        print(f"{module}: pytest {' '.join(options + tests)}; timeouts "
              f"{' and '.join(f'{t:.0f}' for t in self.timeouts)} s, {jobs} jobs", flush=True)
        self.outcomes: Dict[Mutant, str] = {}
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.total, self.start = 0, time.perf_counter()

    def one(self, mutant: Mutant) -> None:
        """Run the tests on one mutant in a free copy, and record the outcome."""
        if self.stop.is_set():
            return
        copy = self.copies.get()
        try:
            (copy / self.module).write_text(apply(self.text, mutant), encoding="utf-8")
            for stage, timeout in zip(self.stages, self.timeouts):
                outcome = _run(copy, stage, timeout)[0]
                if outcome != "passed":
                    break
        finally:
            (copy / self.module).write_text(self.text, encoding="utf-8")
            self.copies.put(copy)
        with self.lock:
            self.outcomes[mutant] = outcome
            verdict = "survived" if outcome == "passed" else "killed"
            print(f"{verdict:9} {outcome:8} {mutant.describe()}", file=self.report, flush=True)
            if outcome == "passed":
                print(f"  survived: {mutant.describe()}", flush=True)
            done = len(self.outcomes)
            if done % 25 == 0 or done == self.total:
                print(f"  {done}/{self.total} mutants in {time.perf_counter() - self.start:.0f} s",
                      flush=True)

    def run(self, mutants: List[Mutant], jobs: int) -> Dict[Mutant, str]:
        """Run every mutant, jobs at a time; return each outcome.  An interrupted run (Ctrl-C,
        or SIGTERM) finishes the runs under way and returns the outcomes it has."""
        self.total, self.start = len(mutants), time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(self.one, m) for m in mutants]
            try:
                for future in futures:
                    future.result()
            except KeyboardInterrupt:
                print("mutate: interrupted; finishing the runs under way", flush=True)
            finally:
                self.stop.set()  # the mutants not started yet stay unrun
        return self.outcomes


def run_module(module: str, mutants: List[Mutant], options: List[str], tests: List[str],
               jobs: int, report) -> Dict[Mutant, str]:
    """Run the tests on every mutant of one module; return each mutant's outcome."""
    base = Path(tempfile.mkdtemp(prefix="mutate-"))
    try:
        print(f"{module}: {len(mutants)} mutants", flush=True)
        return _Runner(module, options, tests, jobs, base, report).run(mutants, jobs)
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ------------------------------------------------------------------ the figures

def summarise(module: str, generated: int, selected: List[Mutant], outcomes: Dict[Mutant, str],
              equivalents: Dict[str, str], report) -> dict:
    """Print one module's figures and write its lists to the report; return the figures.

    The kill rate is killed / (run - equivalent); the guaranteed rate counts every mutant
    that did not run as not killed: killed / (selected - equivalent)."""
    passed = [m for m in selected if outcomes.get(m) == "passed"]
    killed = [m for m in selected if m in outcomes and outcomes[m] != "passed"]
    equivalent = [m for m in passed if m.key in equivalents]
    f = {"module": module, "generated": generated, "selected": len(selected),
         "run": len(outcomes), "killed": len(killed), "equivalent": len(equivalent),
         "survived": len(passed) - len(equivalent), "not run": len(selected) - len(outcomes),
         "timeout": sum(outcomes[m] == "timeout" for m in killed)}
    f["rate"] = 100 * len(killed) / max(f["run"] - f["equivalent"], 1)
    f["guaranteed"] = 100 * len(killed) / max(f["selected"] - f["equivalent"], 1)
    lists = {"survived (not listed as equivalent)": [m for m in passed if m not in equivalent],
             "did not run (counted as not killed)": [m for m in selected if m not in outcomes],
             "killed by timeout": [m for m in killed if outcomes[m] == "timeout"],
             "equivalent (listed, survived)": equivalent,
             "listed as equivalent but killed (remove from the list)":
                 [m for m in killed if m.key in equivalents]}
    lines = [f"{module}: {generated} mutants generated, {f['selected']} selected, {f['run']} run, "
             f"{f['not run']} not run",
             f"  killed {f['killed']} ({f['timeout']} by timeout), survived {f['survived']}, "
             f"equivalent {f['equivalent']} (listed in {EQUIVALENT_FILE.name})",
             f"  kill rate {f['rate']:.1f}% of {f['run'] - f['equivalent']} non-equivalent; "
             f"guaranteed {f['guaranteed']:.1f}% of {f['selected'] - f['equivalent']}"]
    if f["not run"]:
        lines.append(f"  WARNING: {f['not run']} mutants did not run; the guaranteed rate "
                     f"counts them as not killed")
    print("\n".join(lines), flush=True)
    for title, mutants in lists.items():
        lines += [f"{title}: {len(mutants)}"] + [f"  {m.describe()}" for m in mutants]
    print("\n".join(lines), file=report, flush=True)
    return f


def _table(figures: List[dict]) -> str:
    """Return the figures of every module run, one line each."""
    rows = [("module", "generated", "run", "not run", "killed", "survived", "equivalent",
             "kill rate", "guaranteed")]
    rows += [(f["module"], f["generated"], f["run"], f["not run"], f["killed"], f["survived"],
              f["equivalent"], f"{f['rate']:.1f}%", f"{f['guaranteed']:.1f}%") for f in figures]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(v).rjust(w) for v, w in zip(row, widths)) for row in rows)


def _module_path(path: str) -> str:
    """Return a module's path relative to the repository, given from here or from the root."""
    here = (Path.cwd() / path).resolve()
    if here.is_file() and ROOT in here.parents:
        return here.relative_to(ROOT).as_posix()
    if not (ROOT / path).is_file():
        raise SystemExit(f"mutate: no module {path} here or under {ROOT}")
    return Path(path).as_posix()


def select(mutants: List[Mutant], args: argparse.Namespace) -> List[Mutant]:
    """Return the mutants that --function, --operators and --sample choose, in source order."""
    chosen = [m for m in mutants if (args.function is None
                                     or m.function.split("#")[0] in args.function)
              and (args.operators is None or m.operator in args.operators)]
    if args.sample is not None and args.sample < len(chosen):
        sample = set(random.Random(args.seed).sample(chosen, args.sample))
        chosen = [m for m in chosen if m in sample]
    return chosen


def parse_arguments(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """Return the command line's options."""
    parser = argparse.ArgumentParser(
        prog="python3 tools/mutate.py", description="Mutation testing: run a module's tests "
        "on each small change of its code, and count the changes they catch (tools/README.md).")
    parser.add_argument("modules", nargs="+", help="module paths, e.g. softmax.py or "
                        "experiments/learning.py")
    parser.add_argument("--tests", nargs="+", help="test paths to run instead of the module's "
                        "default tests")
    parser.add_argument("--slow", action="store_true", help="include the slow tests "
                        "(-m 'slow or not slow')")
    parser.add_argument("--jobs", type=int, default=2, help="test runs at once (default 2)")
    parser.add_argument("--function", nargs="+", help="only the mutants inside these "
                        "functions (Class.method for a method)")
    parser.add_argument("--operators", nargs="+", help="only these operators, e.g. raise-delete")
    parser.add_argument("--sample", type=int, help="a random sample of N mutants per module")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--report", type=Path, help="the report file (default "
                        "/tmp/mutation-report-MODULES.txt)")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Mutate the modules named on the command line and print the figures; return 0, or 1
    if some mutants did not run."""
    args = parse_arguments(argv)
    if not args.list and importlib.util.find_spec("pytest") is None:
        raise SystemExit(f"mutate: pytest is not installed for this Python: {sys.executable} "
                         f"(Python {sys.version.split()[0]}); install it there "
                         f"(python3 -m pip install pytest), or run the tool with a Python "
                         f"that has it")
    modules = [_module_path(m) for m in args.modules]
    equivalents = read_equivalents(EQUIVALENT_FILE)
    report_path = args.report or Path(tempfile.gettempdir()) / (
        "mutation-report-" + "-".join(Path(m).stem for m in modules) + ".txt")
    signal.signal(signal.SIGTERM, _interrupt)
    figures, current = [], set()
    with open(os.devnull if args.list else report_path, "w", encoding="utf-8") as report:
        for module in modules:
            mutants = find_mutants(module, (ROOT / module).read_text(encoding="utf-8"))
            current |= {m.key for m in mutants}
            selected = select(mutants, args)
            if args.list:
                for m in selected:
                    print(m.describe() + ("  [equivalent]" if m.key in equivalents else ""))
                print(f"{module}: {len(selected)} mutants")
                continue
            tests = args.tests or default_tests(module)
            options = ["-x", "-q", "-p", "no:cacheprovider", "--doctest-modules"]
            options += [f"--deselect={t}" for t in TEXT_ONLY]
            options += ["-m", "slow or not slow"] if args.slow else []
            outcomes = run_module(module, selected, options, tests, args.jobs, report)
            figures.append(summarise(module, len(mutants), selected, outcomes, equivalents,
                                     report))
            if len(outcomes) < len(selected):
                break  # interrupted: no further module
        stale = [f"stale: {key}" for key in equivalents
                 if key.split(":", 1)[0] in modules and key not in current]
        print("\n".join(stale), file=report)
    for line in stale:
        print(line)
    if figures:
        print(f"\n{_table(figures)}\nreport: {report_path}")
    return 1 if any(f["not run"] for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
