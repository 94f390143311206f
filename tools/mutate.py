"""A small AST mutation tester for the project's modules (standard library only).

Usage (from the repository root):

    python3 tools/mutate.py softmax.py                     # every mutant, default tests
    python3 tools/mutate.py softmax.py --sample 150 --seed 1
    python3 tools/mutate.py stats.py --function median_interval --list   # list some mutants
    python3 tools/mutate.py attention.py --tests tests/test_attention.py --jobs 2
    python3 tools/mutate.py softmax.py --operators raise-delete   # is every raise reached?
    python3 tools/mutate.py stats.py --pytest-args "--deselect tests/test_stats.py::test_x"

Each mutant changes one small thing in one module (an operator, a comparison, a
constant, a deleted statement or raise, an `if` guard forced to True or False, an
off-by-one slice or range bound, min <-> max, `return x` -> `return None`).  The
repository is copied once per worker to /tmp/mut_<pid>/w<k>/ and the mutated module
is written there, so the working tree is never touched.  The module's tests run with
`python3 -m pytest -x -q -p no:cacheprovider <tests>`, in at most MEMORY_LIMIT (4 GiB) of
address space, without PYTHONUNBUFFERED or PYTHONOPTIMIZE (see UNSET); a failure, an error
or a timeout (10x the unmutated run) kills the mutant, a pass lets it survive.  Survivors are
printed as they are found, with a progress line every 25 mutants.  Default tests
(DEFAULT_TESTS below): the module's own test file (stats.py: test_stats.py and
test_report.py), test_boundary.py, test_gradient_accuracy.py (softmax, attention),
test_fuzz.py, the module's doctests, then test_api.py, test_documents.py and test_docs.py,
those that exist, without TEXT_ONLY (tests of source text, not behaviour).  --tests
replaces the list; the unmutated run must pass first.

Survivors are written as `file:line:col  function  operator  original -> mutant` to the
report file.  The original is the changed operation; a changed constant, unary minus, index
or slice bound is shown inside its nearest enclosing operation, call or conditional
expression (`columns[0] % h -> columns[1] % h`, not `0 -> 1`).  Equivalent mutants (no
input can tell them apart) are listed in tools/mutation_equivalent.txt, one per line,
keyed by the function they sit in and their source text, not by line number, so that
editing other code does not make the list stale:

    softmax.py:as_vector:compare:abs(v) <= limit->abs(v) < limit  # why it cannot matter

A second identical mutation in the same function gets "#2" after the function's name.
Listed mutants are left out of the kill rate; entries that match no current mutant are
reported as stale.  Run it with the same interpreter each time (python3, 3.11 here):
before 3.12 the positions of expressions inside f-strings are not always exact, so such
expressions are skipped there, and 3.12+ finds a few more mutants.
"""

import argparse  # the command line
import ast  # parse the module and find what to mutate
import io  # tokenize reads from a stream
import math  # isfinite: a doubled float constant may overflow
import os  # environment, process groups
import random  # --sample, seeded
import shlex  # split --pytest-args
import shutil  # copy the repository
import signal  # kill a timed-out test run and its children
import subprocess  # run pytest on each mutant
import sys  # the interpreter to use
import textwrap  # dedent a statement's source
import threading  # a lock for the progress lines
import time  # baseline and throughput
import tokenize  # locate operator tokens exactly
from concurrent.futures import ThreadPoolExecutor  # --jobs workers
from pathlib import Path  # paths
from queue import Queue  # hand each job a private copy of the repository
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent  # the repository (tools/..)
EQUIVALENT_FILE = ROOT / "tools" / "mutation_equivalent.txt"
SHARED_TESTS = ("tests/test_api.py", "tests/test_documents.py", "tests/test_docs.py")
DEFAULT_TESTS = {  # the tests that should kill a module's mutants, fastest and closest first
    "softmax.py": ("tests/test_softmax.py", "tests/test_boundary.py",
                   "tests/test_gradient_accuracy.py", "tests/test_fuzz.py"),
    "attention.py": ("tests/test_attention.py", "tests/test_boundary.py",
                     "tests/test_gradient_accuracy.py", "tests/test_fuzz.py"),
    "stats.py": ("tests/test_stats.py", "tests/test_report.py", "tests/test_boundary.py",
                 "tests/test_fuzz.py"),
}  # then the module's doctests and SHARED_TESTS; only the files that exist
# Tests that compare the modules' source text rather than their behaviour, left out of every
# run: docs/whiteboard.md holds copies of the cores, so this test would "kill" any mutant of
# a core shown there, however equivalent, and the kill rate would count it.
TEXT_ONLY = ("tests/test_docs.py::test_whiteboard_markdown_shows_the_modules_own_cores_and_the_"
             "standalone_versions",)
IGNORED_IN_COPY = shutil.ignore_patterns(  # what git ignores too (.ci/run makes a .venv here)
    ".git", "__pycache__", ".pytest_cache", "*.pyc", ".venv", ".ruff_cache", "build", "dist",
    "*.egg-info")

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
    start: int  # character offset in the module's source
    end: int
    text: str


class Mutant(NamedTuple):
    module: str  # path relative to the repository, e.g. "softmax.py"
    line: int
    col: int
    operator: str
    original: str  # the source of the enclosing node, whitespace collapsed
    mutated: str  # the same node after the edit
    edits: Tuple[Edit, ...]
    function: str = ""  # the enclosing function (Class.method), "#2" etc. on a repeat

    @property
    def key(self) -> str:
        """The identity used by the equivalent list: module:function:operator:original->mutant."""
        return f"{self.module}:{self.function}:{self.operator}:{self.original}->{self.mutated}"

    def describe(self) -> str:
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
    """Maps AST positions (line, UTF-8 byte column) to character offsets, and back."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                       if t.type in (tokenize.OP, tokenize.NAME)]

    def offset(self, line: int, byte_col: int) -> int:
        prefix = self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8")
        return self.starts[line - 1] + len(prefix)

    def token_offset(self, line: int, char_col: int) -> int:
        return self.starts[line - 1] + char_col

    def span(self, node: ast.AST) -> Tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def operator_between(self, left: ast.AST, right: ast.AST) -> Optional[Tuple[int, int]]:
        """Return the span of the operator token(s) between two nodes, parentheses excluded."""
        a, b = self.span(left)[1], self.span(right)[0]
        inside = [t for t in self.tokens
                  if a <= self.token_offset(*t.start) and self.token_offset(*t.end) <= b
                  and t.string not in "()"]
        if not inside:
            return None
        return self.token_offset(*inside[0].start), self.token_offset(*inside[-1].end)


def _same_tree(text: str, node: ast.AST) -> bool:
    """Whether text parses back to node: guards against wrong positions (old f-strings)."""
    try:
        if isinstance(node, ast.expr):
            parsed = ast.parse("(" + text + "\n)", mode="eval").body
        else:  # later lines of a statement keep their indentation: restore the first's
            parsed = ast.parse(textwrap.dedent(" " * node.col_offset + text)).body[0]
    except SyntaxError:
        return False
    return ast.dump(parsed) == ast.dump(node)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))


def _is_main_guard(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
            and isinstance(stmt.test.left, ast.Name) and stmt.test.left.id == "__name__")


def _is_error_call(node: ast.AST) -> bool:
    """A call that builds an exception: its arguments are only the message."""
    if not isinstance(node, ast.Call):
        return False
    name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
    return name.endswith(("Error", "Exception", "Warning"))


def _skipped_nodes(tree: ast.Module) -> set:
    """ids of nodes never mutated: docstrings, __all__, annotations, imports, messages."""
    skipped = set()

    def skip(node):
        skipped.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_main_guard(node):
            skip(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                skip(node)
            if isinstance(node, ast.AnnAssign):
                skip(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None:
                skip(node.returns)
            for arg in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                if arg.annotation is not None:
                    skip(arg.annotation)
        elif isinstance(node, ast.Raise):
            for part in (node.exc, node.cause):
                if part is not None:
                    skip(part)
        elif _is_error_call(node):
            for part in node.args + [k.value for k in node.keywords]:
                skip(part)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.body and _is_docstring(node.body[0]):
                skip(node.body[0])
        if isinstance(node, ast.JoinedStr):  # an f-string's literal text; its {fields} stay
            skipped.update(id(v) for v in node.values if isinstance(v, ast.Constant))
    return skipped


class _Finder(ast.NodeVisitor):
    """Collects the mutants of one module."""

    def __init__(self, module: str, source: _Source, skipped: set, parents: Dict[int, ast.AST]):
        self.module, self.src, self.skipped, self.parents = module, source, skipped, parents
        self.mutants: List[Mutant] = []
        self.depth = 0  # > 0 inside a function body
        self.names: List[str] = []  # the enclosing classes and functions

    # -- helpers

    def add(self, operator: str, context: ast.AST, edits: Sequence[Edit],
            where: Optional[ast.AST] = None) -> None:
        """Record a mutant: context is the source shown (and keyed), where its position."""
        start, end = self.src.span(context)
        original = self.src.text[start:end]
        mutated = original
        for e in sorted(edits, reverse=True):
            mutated = mutated[:e.start - start] + e.text + mutated[e.end - start:]
        where = where or context
        self.mutants.append(Mutant(self.module, where.lineno, where.col_offset, operator,
                                   _squash(original), _squash(mutated), tuple(edits),
                                   ".".join(self.names) or "<module>"))

    def replace(self, operator: str, context: ast.AST, node: ast.AST, text: str,
                where: Optional[ast.AST] = None) -> None:
        start, end = self.src.span(node)
        self.add(operator, context, [Edit(start, end, text)], where)

    def wider(self, node: ast.AST) -> ast.AST:
        """The context that keys a small mutation: the nearest enclosing operation, call or
        conditional expression (`columns[0] % h`, not `0`; `m == -math.inf`, not `-math.inf`),
        else the outermost expression around node.  Two zeros of one function then rarely
        share a key, and a "#2" that would shift when code is added above is rarely needed."""
        context, parent = node, self.parents.get(id(node))
        while isinstance(parent, (ast.expr, ast.keyword, ast.comprehension)):
            if isinstance(parent, ast.expr):
                context = parent
                if isinstance(parent, WIDE_CONTEXTS):
                    break
            parent = self.parents.get(id(parent))
        return context

    def ok(self, node: ast.AST) -> bool:
        return id(node) not in self.skipped and _same_tree(self.src.segment(node), node)

    @staticmethod
    def _shifted(text: str, node: ast.AST, delta: str) -> str:
        is_atom = isinstance(node, ATOMS) or (isinstance(node, ast.BinOp)
                                              and isinstance(node.op, ADDITIVE))
        return f"{text} {delta}" if is_atom else f"({text}) {delta}"

    # -- statements

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.names.append(node.name)
        self.generic_visit(node)
        self.names.pop()
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.names.append(node.name)
        self.generic_visit(node)
        self.names.pop()

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            for stmt in statements if isinstance(statements, list) else []:
                if isinstance(stmt, ast.stmt):
                    self._statement(stmt)
        super().generic_visit(node)

    def _statement(self, stmt: ast.stmt) -> None:
        if self.depth == 0 or not self.ok(stmt) or _is_docstring(stmt):
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass,
                             ast.Return, ast.Global, ast.Nonlocal)):
            return
        start, end = self.src.span(stmt)
        if self.src.text.startswith("elif", start):
            return  # an elif cannot become `pass`; its condition is mutated instead
        operator = "raise-delete" if isinstance(stmt, ast.Raise) else "delete"
        self.add(operator, stmt, [Edit(start, end, "pass")])

    def visit_If(self, node):
        if self.ok(node.test):
            for value in ("True", "False"):
                self.replace("if-cond", node.test, node.test, value)
        self.generic_visit(node)

    def visit_IfExp(self, node):
        if self.ok(node.test):
            for value in ("True", "False"):
                self.replace("if-cond", node.test, node.test, value)
        self.generic_visit(node)

    def visit_While(self, node):
        if self.ok(node.test):
            self.replace("if-cond", node.test, node.test, "False")
        self.generic_visit(node)

    def visit_Return(self, node):
        value = node.value
        if value is not None and self.ok(value) and not (
                isinstance(value, ast.Constant) and value.value is None):
            self.replace("return-none", node, value, "None")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if self.ok(node) and type(node.op) in ARITH:
            span = self.src.operator_between(node.target, node.value)
            if span is not None:
                for new in ARITH[type(node.op)]:
                    self.add("arith", node, [Edit(*span, new + "=")])
        self.generic_visit(node)

    # -- expressions

    def visit_BinOp(self, node):
        strings = (ast.JoinedStr,)
        is_text = any(isinstance(side, strings) or (isinstance(side, ast.Constant)
                                                    and isinstance(side.value, (str, bytes)))
                      for side in (node.left, node.right))
        if self.ok(node) and type(node.op) in ARITH and not is_text:
            span = self.src.operator_between(node.left, node.right)
            if span is not None and self.src.text[span[0]:span[1]] == ARITH_TEXT[type(node.op)]:
                for new in ARITH[type(node.op)]:
                    self.add("arith", node, [self._operator_edit(node, span, new)])
        self.generic_visit(node)

    def _operator_edit(self, node: ast.BinOp, span: Tuple[int, int], new: str) -> Edit:
        """The edit that swaps node's operator for new, and nothing else: ** binds tighter
        than * and to the right, so `n * m * d` would become `n * (m ** d)`; then the operands
        are parenthesised, `(n * m) ** (d)`."""
        start, end = self.src.span(node)
        text = self.src.text[start:span[0]] + new + self.src.text[span[1]:end]
        wanted = ast.BinOp(node.left, OPERATOR_OF[new](), node.right)
        if _same_tree(text, wanted):
            return Edit(*span, new)
        left, right = self.src.segment(node.left), self.src.segment(node.right)
        return Edit(start, end, f"({left}) {new} ({right})")

    def visit_Compare(self, node):
        if self.ok(node):
            operands = [node.left] + node.comparators
            for i, op in enumerate(node.ops):
                span = self.src.operator_between(operands[i], operands[i + 1])
                for new in COMPARE.get(type(op), []) if span else []:
                    self.add("compare", node, [Edit(*span, new)])
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        if self.ok(node):
            new = "or" if isinstance(node.op, ast.And) else "and"
            spans = [self.src.operator_between(a, b) for a, b in zip(node.values, node.values[1:])]
            if all(spans):
                self.add("boolop", node, [Edit(*span, new) for span in spans])
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
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
        value = node.value
        if isinstance(value, bool):
            if self.ok(node):
                self.replace("bool", self.wider(node), node, str(not value), node)
            return
        if not isinstance(value, (int, float)) or not self.ok(node):
            return
        if isinstance(value, int):
            new = {0: [1], 1: [0, 2]}.get(value, [value + 1])
        else:
            new = [1.0] if value == 0.0 else [value * 2, 0.0]
        for v in new:  # repr(2 * 1.8e308) is "inf", a name: write the float literal instead
            self.replace("number", self.wider(node), node,
                         repr(v) if math.isfinite(v) else "1e999", node)

    def visit_Call(self, node):
        name = getattr(node.func, "id", None)
        if name in ("min", "max") and self.ok(node.func):
            self.replace("minmax", node, node.func, "max" if name == "min" else "min")
        if name == "range" and self.ok(node):
            for arg in node.args[:2]:
                if not isinstance(arg, ast.Constant):
                    text = self.src.segment(arg)
                    for delta in ("+ 1", "- 1"):
                        self.replace("range", node, arg, self._shifted(text, arg, delta))
        self.generic_visit(node)

    def visit_Subscript(self, node):
        index = node.slice
        if self.depth and self.ok(node):
            context = self.wider(node)
            if isinstance(index, ast.Slice):
                for bound in (index.lower, index.upper):
                    if bound is not None and not isinstance(bound, ast.Constant):
                        text = self.src.segment(bound)
                        for delta in ("+ 1", "- 1"):
                            self.replace("slice", context, bound,
                                         self._shifted(text, bound, delta), node)
            elif isinstance(index, (ast.Name, ast.BinOp)) and isinstance(node.ctx, ast.Load):
                self.replace("index", context, index,
                             self._shifted(self.src.segment(index), index, "+ 1"), node)
        self.generic_visit(node)


def find_mutants(module: str, text: str) -> List[Mutant]:
    """Return the mutants of one module's source, each checked to compile."""
    tree = ast.parse(text)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    finder = _Finder(module, _Source(text), _skipped_nodes(tree), parents)
    finder.visit(tree)
    original_dump = ast.dump(tree)
    mutants, seen, repeats = [], set(), {}
    for m in sorted(finder.mutants, key=lambda m: (m.line, m.col, m.operator, m.mutated)):
        identity = (m.line, m.col, m.operator, m.original, m.mutated)
        if identity in seen:
            continue
        seen.add(identity)
        try:
            mutated_tree = ast.parse(apply(text, m))
        except SyntaxError:
            continue
        if ast.dump(mutated_tree) != original_dump:
            count = repeats[m.key] = repeats.get(m.key, 0) + 1
            mutants.append(m if count == 1 else m._replace(function=f"{m.function}#{count}"))
    return mutants


def apply(text: str, mutant: Mutant) -> str:
    for e in sorted(mutant.edits, reverse=True):
        text = text[:e.start] + e.text + text[e.end:]
    return text


# ------------------------------------------------------------------ equivalents

class EquivalentList(NamedTuple):
    keys: Dict[str, str]  # key -> reason
    path: Path


def read_equivalents(path: Path) -> EquivalentList:
    keys = {}
    if path.exists():
        for raw in path.read_text(encoding="utf-8").splitlines():
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            key, _, reason = raw.partition("  #")  # snippets never hold two spaces
            keys[key.strip()] = reason.strip()
    return EquivalentList(keys, path)


# ------------------------------------------------------------------ running

def default_tests(module: str, root: Path) -> List[str]:
    wanted = list(DEFAULT_TESTS.get(Path(module).name, ())) + [module] + list(SHARED_TESTS)
    return [t for t in wanted if (root / t).exists()]


MEMORY_LIMIT = 4 * 2 ** 30  # bytes of address space per test run
# Variables of the caller's shell that change what the tests see, unset in every test run so
# that the verdicts do not depend on who runs the tool: PYTHONUNBUFFERED makes every print
# reach a pipe at once (it hid a missing flush and a missing dup2 of stats.py's pipe
# handling), and PYTHONOPTIMIZE strips the tests' assert statements.
UNSET = ("PYTHONUNBUFFERED", "PYTHONOPTIMIZE")
# `python3 -m pytest`, with the address space capped first where the platform can (a mutant
# such as `2 * n * m -> (2 * n) ** (m)` meeting n = 10^30 would otherwise eat gigabytes of a
# shared machine's memory before the timeout): MemoryError then fails the run, and kills it.
_LAUNCH = ("import runpy, sys\n"
           "try:\n"
           "    import resource\n"
           f"    resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
           "except (ImportError, ValueError, OSError):\n"
           "    pass  # no such limit here: run without it\n"
           "sys.argv[0] = 'pytest'\n"
           "runpy.run_module('pytest', run_name='__main__', alter_sys=True)\n")


def _pytest_command(tests: Sequence[str]) -> List[str]:
    deselect = [f"--deselect={t}" for t in TEXT_ONLY if t.split("::")[0] in tests]
    return [sys.executable, "-c", _LAUNCH, "-x", "-q", "-p", "no:cacheprovider",
            "--doctest-modules", *deselect, *tests]


def _run(cwd: Path, tests: Sequence[str], timeout: float) -> Tuple[str, float]:
    """Run the tests in cwd; return (outcome, seconds): passed, failed, error or timeout."""
    env = {name: value for name, value in os.environ.items() if name not in UNSET}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    start = time.perf_counter()
    proc = subprocess.Popen(_pytest_command(tests), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the process group of this pytest run only
        proc.communicate()
        return "timeout", time.perf_counter() - start
    seconds = time.perf_counter() - start
    if proc.returncode == 0:
        return "passed", seconds
    if proc.returncode == 1:
        return "failed", seconds
    if proc.returncode == 5:
        raise SystemExit(f"mutate: no tests were collected by {' '.join(tests)}")
    return f"error (exit {proc.returncode}): {out.decode(errors='replace')[-300:]}", seconds


def _make_copies(root: Path, jobs: int) -> Tuple[Path, List[Path]]:
    base = Path("/tmp") / f"mut_{os.getpid()}"
    copies = []
    for k in range(jobs):
        copy = base / f"w{k}"
        shutil.copytree(root, copy, ignore=IGNORED_IN_COPY)
        copies.append(copy)
    return base, copies


def run_module(module: str, mutants: List[Mutant], text: str, tests: List[str],
               equivalents: EquivalentList, jobs: int, report: Path, root: Path) -> dict:
    """Run every mutant of one module; write the report; return the counts."""
    base, copies = _make_copies(root, jobs)
    try:
        outcome, baseline = _run(copies[0], tests, timeout=600)
        if outcome != "passed":
            raise SystemExit(f"mutate: the unmutated tests do not pass ({outcome}); "
                             f"fix them or choose others with --tests")
        timeout = max(10 * baseline, 5.0)
        print(f"{module}: {len(mutants)} mutants; tests {' '.join(tests)}; baseline "
              f"{baseline:.1f} s, timeout {timeout:.0f} s, {jobs} jobs", flush=True)
        free: "Queue[Path]" = Queue()
        for copy in copies:
            free.put(copy)

        done = [0]  # mutants finished, for the progress lines
        lock = threading.Lock()

        def one(mutant: Mutant) -> Tuple[Mutant, str]:
            copy = free.get()
            try:
                (copy / module).write_text(apply(text, mutant), encoding="utf-8")
                outcome = _run(copy, tests, timeout)[0]
            finally:
                (copy / module).write_text(text, encoding="utf-8")
                free.put(copy)
            with lock:  # survivors as they come, and a line every 25 mutants
                done[0] += 1
                if outcome == "passed":
                    mark = "  [listed equivalent]" if mutant.key in equivalents.keys else ""
                    print(f"  survived: {mutant.describe()}{mark}", flush=True)
                if done[0] % 25 == 0 or done[0] == len(mutants):
                    print(f"  {done[0]}/{len(mutants)} mutants in "
                          f"{time.perf_counter() - start:.0f} s", flush=True)
            return mutant, outcome

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, mutants))
        elapsed = time.perf_counter() - start
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return _summarise(module, results, equivalents, elapsed, report)


def _summarise(module, results, equivalents, elapsed, report) -> dict:
    killed = [m for m, o in results if o != "passed"]
    survived = [m for m, o in results if o == "passed"]
    equivalent = [m for m in survived if m.key in equivalents.keys]
    counted_survivors = [m for m in survived if m.key not in equivalents.keys]
    timeouts = sum(o == "timeout" for _, o in results)
    errors = sum(o.startswith("error") for _, o in results)
    denominator = len(results) - len(equivalent)
    rate = 100.0 * len(killed) / denominator if denominator else 100.0
    raises = [(m, o) for m, o in results if m.operator == "raise-delete"]
    lines = [f"{module}: {len(killed)} killed ({timeouts} by timeout, {errors} by error), "
             f"{len(counted_survivors)} survived, {len(equivalent)} equivalent; "
             f"kill rate {rate:.1f}% of {denominator}",
             f"  raise statements deleted: {len(raises)}, survived: "
             f"{sum(o == 'passed' for _, o in raises)}",
             f"  {len(results)} mutants in {elapsed:.0f} s = "
             f"{60 * len(results) / max(elapsed, 1e-9):.1f} mutants/minute"]
    by_operator: Dict[str, List[int]] = {}
    for m, o in results:
        by_operator.setdefault(m.operator, [0, 0])[o == "passed"] += 1
    lines.append("  by operator (killed/survived): " + ", ".join(
        f"{op} {k}/{s}" for op, (k, s) in sorted(by_operator.items())))
    wrongly_listed = [m for m in killed if m.key in equivalents.keys]
    lines += ["survivors:"] + [m.describe() for m in counted_survivors]
    lines += ["killed by timeout:"] + [m.describe() for m, o in results if o == "timeout"]
    lines += ["equivalent (listed, survived as expected):"] + [m.describe() for m in equivalent]
    lines += ["listed as equivalent but killed (remove from the list):"] + [
        m.describe() for m in wrongly_listed]
    print("\n".join(lines[:4]))
    with report.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n")
    return {"module": module, "killed": len(killed), "survived": len(counted_survivors),
            "equivalent": len(equivalent), "rate": rate, "seconds": elapsed,
            "mutants": len(results)}


def stale_equivalents(equivalents: EquivalentList, all_mutants: List[Mutant],
                      modules: Sequence[str]) -> List[str]:
    """Entries of the list (for the modules examined) that match no current mutant."""
    current = {m.key for m in all_mutants}
    return [f"stale: {key}" for key in equivalents.keys
            if key.split(":", 1)[0] in modules and key not in current]


def _relative_module(path: str, root: Path) -> str:
    """Return the module's path relative to the repository, given it from here or from root."""
    here = (Path.cwd() / path).resolve()
    if here.exists():
        return str(here.relative_to(root))
    if not (root / path).exists():
        raise SystemExit(f"mutate: no module {path} here or under {root}")
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 tools/mutate.py",
                                     description="Mutation testing of the project's modules.")
    parser.add_argument("modules", nargs="+", help="module paths, e.g. softmax.py")
    parser.add_argument("--tests", nargs="+", help="test paths to run (default: per module)")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, one string "
                        "(e.g. \"--deselect tests/test_x.py::test_y\")")
    parser.add_argument("--sample", type=int, help="run a random sample of N mutants per module")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    parser.add_argument("--function", help="only mutants inside this function")
    parser.add_argument("--operators", nargs="+", help="only these operators (e.g. raise-delete)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--jobs", type=int, default=2, help="parallel test runs (default 2)")
    parser.add_argument("--equivalent", type=Path, default=EQUIVALENT_FILE,
                        help=f"equivalent-mutant list (default {EQUIVALENT_FILE})")
    parser.add_argument("--report", type=Path, help="report file "
                        "(default /tmp/mutation-report-<modules>.txt)")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    modules = [_relative_module(m, root) for m in args.modules]
    equivalents = read_equivalents(args.equivalent)
    report = args.report or Path("/tmp") / (
        "mutation-report-" + "-".join(Path(m).stem for m in modules) + ".txt")
    if not args.list:
        report.write_text("", encoding="utf-8")
    all_mutants, summaries = [], []
    for module in modules:
        text = (root / module).read_text(encoding="utf-8")
        mutants = find_mutants(module, text)
        all_mutants += mutants
        if args.function:
            mutants = [m for m in mutants if m.function.split("#")[0] == args.function]
        if args.operators:
            mutants = [m for m in mutants if m.operator in args.operators]
        if args.sample is not None and args.sample < len(mutants):
            mutants = sorted(random.Random(args.seed).sample(mutants, args.sample),
                             key=lambda m: (m.line, m.col, m.operator, m.mutated))
        if args.list:
            for m in mutants:
                mark = "  [equivalent]" if m.key in equivalents.keys else ""
                print(m.describe() + mark)
            print(f"{module}: {len(mutants)} mutants")
            continue
        tests = (args.tests or default_tests(module, root)) + shlex.split(args.pytest_args)
        summaries.append(run_module(module, mutants, text, tests, equivalents, args.jobs,
                                    report, root))
    stale = stale_equivalents(equivalents, all_mutants, modules)
    for line in stale:
        print(line)
    if not args.list:
        with report.open("a", encoding="utf-8") as f:
            f.write("\n".join(stale) + ("\n" if stale else ""))
        print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
