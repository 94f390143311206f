"""The mutants of one module, found on its syntax tree; tools/mutate.py runs them.

Each mutant changes one small thing: an operator, a comparison, a constant, a deleted
statement or `raise`, an `if` forced to True or False, an off-by-one slice or range bound,
min <-> max, `return x` -> `return None`.  Its key (the function, the operator and the source
text changed) stays the same while that text does, so tools/mutation_equivalent.txt can
record the equivalent mutants by key.

python3 tools/mutate.py --help runs the mutation tool.
"""

import ast  # parse a module and find what to mutate
import io  # tokenize reads from a stream
import math  # isfinite: a doubled float constant may overflow
import textwrap  # dedent a statement's source
import tokenize  # locate operator tokens exactly
from typing import List, NamedTuple, Optional, Sequence, Tuple

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


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
