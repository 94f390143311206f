"""The house as the code builds it: which folder imports which, and every import visible.

- scripts/README.md's table "Who imports whom" is the import graph of the code, row for row,
  rebuilt here from every file's import statements (ast), and every row imports only rows
  above it: no folder reaches up or sideways into another, and there is no circle.
- Nothing edits sys.path but one line under a program's main guard, which puts the root in
  the place of the program's own folder, and the checker's child, which puts the
  candidate's folder first as `python3 FILE.py` would.  No test edits it: pytest's one path
  is the root (pyproject.toml).
- Code outside a module uses its public names: every `from X import name` of the project
  outside the tests names a public name (in X's __all__ where X has one), and no
  `module._name` is read across files.  The tests may reach a private core to test it.
"""

import ast
import importlib
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = ("softmax", "attention", "stats")
FOLDERS = ("lowprecision", "oracles", "experiments", "interview", "scripts", "benchmarks",
           "tools", "tests")
GUARD = "sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))"
CHILD = "interview/serve.py"  # the checker's child: the candidate's folder first


def sources():
    """Every Python file of the project but the checker's candidate files (tests/readers)."""
    paths = [f"{name}.py" for name in LIBRARY]
    for folder in FOLDERS:
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".py"):
                paths.append(f"{folder}/{name}")
    return paths


def tree(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return ast.parse(f.read())


def unit(path):
    """The row of the table a file belongs to: its folder, or the module itself."""
    return path.split("/")[0] if "/" in path else path[:-3]


def imported(node):
    """The project's top-level names an import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0:
        names = [node.module]
    else:
        return set()
    return {name.split(".")[0] for name in names} & set(LIBRARY + FOLDERS)


def graph():
    edges = {}
    for path in sources():
        for node in ast.walk(tree(path)):
            edges.setdefault(unit(path), set()).update(imported(node) - {unit(path)})
    return edges


def table():
    """scripts/README.md's rows: (the row, what it imports), in the table's order."""
    with open(os.path.join(ROOT, "scripts", "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## Who imports whom")[1]
    rows = re.findall(r"^\| `([\w.]+/?)` \| (.+?) \|$", section, re.M)
    assert rows, "no table under '## Who imports whom'"

    def name(cell):
        return cell.rstrip("/").replace(".py", "")

    return [(name(row), set() if imports == "nothing" else
             {name(cell) for cell in re.findall(r"`([\w.]+/?)`", imports)})
            for row, imports in rows]


def test_the_import_table_is_the_code_s_import_graph():
    rows = table()
    edges = graph()
    assert [row for row, _ in rows] == list(dict.fromkeys(row for row, _ in rows))  # no repeats
    assert {row for row, _ in rows} == set(LIBRARY + FOLDERS)
    assert {row: imports for row, imports in rows} == {u: edges.get(u, set())
                                                      for u in LIBRARY + FOLDERS}


def test_every_row_imports_only_rows_above_it():
    above = set()
    for row, imports in table():
        assert imports <= above, (row, sorted(imports - above))  # up, sideways, or a circle
        above.add(row)


def path_edits(path):
    """The statements of a file that read or change sys.path (or pytest's syspath_prepend)."""
    found = []
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Attribute) and (
                node.attr == "syspath_prepend" or
                node.attr == "path" and isinstance(node.value, ast.Name)
                and node.value.id == "sys"):
            found.append(node)
    return found


@pytest.mark.parametrize("path", sources())
def test_no_file_edits_sys_path_but_the_one_root_line_under_its_main_guard(path):
    if path == CHILD:
        return  # the exception: it strips its own folder and puts the candidate's first
    if path.startswith("tests/"):
        assert path_edits(path) == [], path  # pytest puts the root on the path, nothing else
        return
    module = tree(path)
    guarded = [node for node in module.body if isinstance(node, ast.If)
               and "__main__" in ast.unparse(node.test) and path_edits_in(node)]
    assert len(path_edits(path)) == len(guarded), path  # every edit sits under a main guard
    for node in guarded:
        lines = [ast.unparse(statement) for statement in node.body]
        assert lines == [GUARD], (path, lines)  # one line: the root, in the folder's place


def path_edits_in(node):
    return any(isinstance(n, ast.Attribute) and n.attr == "path" and
               isinstance(n.value, ast.Name) and n.value.id == "sys" for n in ast.walk(node))


def test_the_tests_path_is_the_root_alone_and_no_import_is_excused():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    assert 'pythonpath = ["."]' in text
    assert "per-file-ignores" not in text
    for path in sources():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            assert "noqa: " + "E402" not in f.read(), path  # split: not this line itself


def test_code_outside_a_module_imports_its_public_names_only():
    used = []
    for path in sources():
        if path.startswith("tests/"):
            continue
        module = tree(path)
        for node in ast.walk(module):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and imported(node)):
                continue
            target = importlib.import_module(node.module)
            public = getattr(target, "__all__", None)
            for alias in node.names:
                if os.path.isdir(os.path.join(ROOT, *node.module.split("."), alias.name)) or \
                        os.path.isfile(os.path.join(ROOT, *node.module.split("."),
                                                    alias.name + ".py")):
                    continue  # a module of the package, not a name in it
                if alias.name.startswith("_") or public is not None and alias.name not in public:
                    used.append((path, node.module, alias.name))
    assert used == []


def test_no_private_name_of_another_module_is_read():
    for path in sources():
        if path.startswith("tests/"):
            continue
        module = tree(path)
        aliases = {}  # a name bound to one of the project's modules -> that module
        for node in ast.walk(module):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if imported(ast.Import(names=[alias])):
                        aliases[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and imported(node):
                for alias in node.names:
                    if os.path.isfile(os.path.join(ROOT, *node.module.split("."),
                                                   alias.name + ".py")):
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(module):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id in aliases and node.attr.startswith("_") and \
                    not node.attr.startswith("__"):
                pytest.fail(f"{path}: {node.value.id}.{node.attr} ({aliases[node.value.id]})")
