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
import ast  # does a module parse?
import importlib.util  # is pytest installed for this Python?
import os  # the test runs' environment, process groups
import random  # --sample, seeded
import re  # find the tests that import a module
import shutil  # copy the repository
import signal  # kill a timed-out test run; SIGTERM ends a run cleanly
import subprocess  # run pytest on each mutant
import sys  # the interpreter that runs the tests
import tempfile  # the copies of the repository
import threading  # a lock for the results, a flag to stop
import time  # the baseline run and the timeouts
from concurrent.futures import ThreadPoolExecutor  # --jobs workers
from pathlib import Path
from queue import Queue  # hand each worker a private copy of the repository
from typing import Dict, List, Optional, Sequence, Set, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from tools.mutants import Mutant, apply, find_mutants

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
BASE_TIMEOUT = 3600  # seconds for each step of the unmutated run (the slow tests take minutes)
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
    it), its doctests, then SHARED_TESTS; only the files that exist, each once."""
    own = DEFAULT_TESTS.get(module)
    if own is None:
        imports = _importers(module)
        own = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").glob("test_*.py"))
               if imports.search(p.read_text(encoding="utf-8"))]
        if not own:
            raise SystemExit(f"mutate: no file in tests/ imports {module}; name the tests "
                             f"with --tests")
    return [t for t in dict.fromkeys([*own, module, *SHARED_TESTS]) if (ROOT / t).exists()]


def _importers(module: str) -> "re.Pattern[str]":
    """The import lines that load module: `import stats` for a top-level module; for one in a
    folder, `from experiments import learning_model` or `from experiments.learning_model
    import ...`."""
    *folders, name = Path(module).with_suffix("").parts
    if not folders:
        return re.compile(rf"^\s*(from|import)\s+{re.escape(name)}\b", re.M)
    package = re.escape(".".join(folders))
    return re.compile(rf"^\s*(from\s+{package}\s+import\s+.*\b{re.escape(name)}\b"
                      rf"|(from|import)\s+{package}\.{re.escape(name)}\b)", re.M)


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


def stages(options: List[str], tests: List[str], slow: bool) -> List[List[str]]:
    """Return the pytest arguments of each step of a mutant's run.

    The first test path runs alone first, and the others only if it passes: most mutants
    fail their module's own tests, and then the others are not even collected.  With slow,
    a last step runs the slow tests of every path, only on the mutants that passed the rest:
    the verdict of one run of every test, but a killed mutant never waits for the slow ones.
    """
    steps = [options + tests[:1]] + ([options + tests[1:]] if tests[1:] else [])
    return steps + ([options + ["-m", "slow"] + tests] if slow else [])


def _interrupt(signum, frame):
    """Turn SIGTERM into KeyboardInterrupt, so that a stopped run still reports."""
    raise KeyboardInterrupt


class _Runner:
    """Runs the tests on the mutants of one module, in one copy of the repository per job.

    Each mutant goes through the steps of stages(), each only if it passed the one before."""

    def __init__(self, module: str, options: List[str], tests: List[str], slow: bool,
                 jobs: int, base: Path, report, equivalents: Dict[str, str]):
        """Copy the repository once per job into base; time the unmutated tests, which must
        pass, and allow each step of a mutant's run ten times as long."""
        self.module, self.report, self.equivalents = module, report, equivalents
        self.text = (ROOT / module).read_text(encoding="utf-8")
        self.stages = stages(options, tests, slow)
        self.copies: "Queue[Path]" = Queue()
        for k in range(jobs):
            self.copies.put(Path(shutil.copytree(ROOT, base / f"w{k}", ignore=IGNORED_IN_COPY)))
        self.timeouts = []
        for stage in self.stages:
            outcome, seconds, out = _run(base / "w0", stage, timeout=BASE_TIMEOUT)
            if outcome != "passed":
                raise SystemExit(f"{out}\nmutate: the unmutated tests do not pass ({outcome}); "
                                 f"fix them or choose others with --tests")
            self.timeouts.append(max(10 * seconds, 5.0))
        print(f"{module}: pytest {' '.join(options + tests)}"
              f"{', then the slow tests' if slow else ''}; timeouts "
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
            if outcome == "passed":  # a listed equivalent is no news: say which it is
                said = "equivalent" if mutant.key in self.equivalents else "survived"
                print(f"  {said}: {mutant.describe()}", flush=True)
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
                print(f"mutate: interrupted after {len(self.outcomes)} of {self.total} mutants "
                      f"of {self.module}; finishing the runs under way", file=sys.stderr,
                      flush=True)
            finally:
                self.stop.set()  # the mutants not started yet stay unrun
        return self.outcomes


def run_module(module: str, mutants: List[Mutant], options: List[str], tests: List[str],
               slow: bool, jobs: int, report,
               equivalents: Optional[Dict[str, str]] = None) -> Dict[Mutant, str]:
    """Run the tests (and the slow ones, if slow) on every mutant of one module; return each
    mutant's outcome.  Ctrl-C before the first mutant (while the repository is copied and
    the unmutated tests run) raises KeyboardInterrupt; after it, see _Runner.run."""
    base = Path(tempfile.mkdtemp(prefix="mutate-"))
    try:
        print(f"{module}: {len(mutants)} mutants", flush=True)
        runner = _Runner(module, options, tests, slow, jobs, base, report, equivalents or {})
        return runner.run(mutants, jobs)
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


def survivors(report: Path) -> Set[str]:
    """Return the keys of the mutants that survived in a report of this tool: its lines
    `survived  passed   file:line:col  function  operator  original -> mutant`."""
    keys, verdict = set(), "survived  passed   "  # the verdict and outcome columns
    for line in report.read_text(encoding="utf-8").splitlines():
        if line.startswith(verdict):
            where, function, operator, change = line[len(verdict):].split("  ")
            original, mutated = change.split(" -> ", 1)
            keys.add(f"{where.rsplit(':', 2)[0]}:{function}:{operator}:{original}->{mutated}")
    return keys


def select(mutants: List[Mutant], args: argparse.Namespace,
           again: Optional[Set[str]] = None) -> List[Mutant]:
    """Return the mutants that --function, --operators, --sample and the keys `again` (those
    of --rerun) choose, in source order."""
    chosen = [m for m in mutants if (args.function is None
                                     or m.function.split("#")[0] in args.function)
              and (args.operators is None or m.operator in args.operators)
              and (again is None or m.key in again)]
    if args.sample is not None and args.sample < len(chosen):
        sample = set(random.Random(args.seed).sample(chosen, args.sample))
        chosen = [m for m in chosen if m in sample]
    return chosen


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python3 tools/mutate.py", description="Mutation testing: run a module's tests "
        "on each small change of its code, and count the changes they catch (tools/README.md).")
    parser.add_argument("modules", nargs="+", help="module paths, e.g. softmax.py or "
                        "experiments/learning.py")
    parser.add_argument("--tests", nargs="+", help="test paths to run instead of the module's "
                        "default tests")
    parser.add_argument("--slow", action="store_true", help="the slow tests too (-m slow), "
                        "on the mutants that pass the others")
    parser.add_argument("--jobs", type=int, default=2, help="test runs at once (default 2)")
    parser.add_argument("--function", nargs="+", help="only the mutants inside these "
                        "functions (Class.method for a method)")
    parser.add_argument("--operators", nargs="+", help="only these operators, e.g. raise-delete")
    parser.add_argument("--rerun", type=Path, metavar="REPORT", help="only the mutants that "
                        "survived in an earlier report (matched without line numbers)")
    parser.add_argument("--sample", type=int, help="a random sample of N mutants per module")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--report", type=Path, help="the report file (default "
                        "/tmp/mutation-report-MODULES.txt)")
    return parser


def parse_arguments(parser: argparse.ArgumentParser,
                    argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """Return the command line's options, each checked: a bad one is a usage error."""
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    if args.sample is not None and args.sample < 1:
        parser.error(f"--sample must be at least 1, not {args.sample}")
    if args.rerun is not None and not args.rerun.is_file():
        parser.error(f"--rerun: there is no report {args.rerun}")
    missing = [t for t in args.tests or [] if not (ROOT / t.split("::")[0]).exists()]
    if missing:
        parser.error(f"--tests: no {missing[0]} under {ROOT}")
    args.modules = [_module_path(parser, m) for m in args.modules]
    args.report = args.report or Path(tempfile.gettempdir()) / (
        "mutation-report-" + "-".join(Path(m).stem for m in args.modules) + ".txt")
    why = None if args.list else _cannot_write(args.report)
    if why:
        parser.error(f"--report: cannot write {args.report}: {why}")
    return args


def _module_path(parser: argparse.ArgumentParser, path: str) -> str:
    """Return a module's path relative to the repository, given from here or from the root;
    a usage error unless it is a Python file of the repository that parses."""
    here = (Path.cwd() / path).resolve()
    if here.is_file() and ROOT in here.parents:
        relative = here.relative_to(ROOT).as_posix()
    elif (ROOT / path).is_file():
        relative = Path(path).as_posix()
    else:
        parser.error(f"no module {path} here or under {ROOT}")
    if not relative.endswith(".py"):
        parser.error(f"{path} is not a Python module (a .py file)")
    try:
        ast.parse((ROOT / relative).read_text(encoding="utf-8"))
    except (SyntaxError, ValueError) as error:  # ValueError: not UTF-8, or a NUL byte
        parser.error(f"{path} does not parse as Python: {error}")
    return relative


def _cannot_write(path: Path) -> Optional[str]:
    """Why the file path cannot be written, or None if it can."""
    if path.is_dir():
        return "it is a folder"
    if not path.parent.exists():
        return f"there is no folder {path.parent}"
    if not path.parent.is_dir():
        return f"{path.parent} is not a folder"
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        return "permission denied"
    return None


class _Report:
    """The report file, opened (and emptied) at its first line: a run that ends before any
    mutant has run leaves an earlier report, which the next --rerun may need, as it was."""

    def __init__(self, path: Path):
        self.path, self.file = path, None

    def write(self, text: str) -> int:
        if self.file is None:
            self.file = open(self.path, "w", encoding="utf-8")
        return self.file.write(text)

    def flush(self) -> None:
        if self.file is not None:
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Mutate the modules named on the command line and print the figures; return 0, 2 for
    a usage error (before anything runs: a bad option, or a module of which --function,
    --operators or --rerun select no mutant), 130 when interrupted by Ctrl-C or SIGTERM
    (the mutants that ran are reported; those that did not are counted as not killed)."""
    parser = _parser()
    args = parse_arguments(parser, argv)
    if not args.list and importlib.util.find_spec("pytest") is None:
        raise SystemExit(f"mutate: pytest is not installed for this Python: {sys.executable} "
                         f"(Python {sys.version.split()[0]}); install it there "
                         f"(python3 -m pip install pytest), or run the tool with a Python "
                         f"that has it")
    equivalents = read_equivalents(EQUIVALENT_FILE)
    again = None if args.rerun is None else _survivors(parser, args.rerun)  # before the report
    plans = [_plan(parser, module, args, again) for module in args.modules]  # before any run
    if args.list:
        for module, mutants, selected, _ in plans:
            for m in selected:
                print(m.describe() + ("  [equivalent]" if m.key in equivalents else ""))
            print(f"{module}: {len(selected)} mutants")
        return 0
    held = signal.signal(signal.SIGTERM, _interrupt)
    report = _Report(args.report)
    try:
        return _run_plans(plans, args, equivalents, report)
    finally:
        report.close()
        signal.signal(signal.SIGTERM, held)


def _survivors(parser: argparse.ArgumentParser, report: Path) -> Set[str]:
    """survivors(report), or a usage error if it names none."""
    try:
        keys = survivors(report)
    except (OSError, ValueError) as error:  # unreadable, not UTF-8, or lines of another kind
        parser.error(f"--rerun: {report} is not a report of this tool ({error})")
    if not keys:
        parser.error(f"--rerun: {report} lists no survivor: nothing to run again")
    return keys


def _plan(parser: argparse.ArgumentParser, module: str, args: argparse.Namespace,
          again: Optional[Set[str]]) -> Tuple[str, List[Mutant], List[Mutant], List[str]]:
    """(module, its mutants, those selected, its tests); exit with status 2 if the options
    select none of its mutants."""
    mutants = find_mutants(module, (ROOT / module).read_text(encoding="utf-8"))
    selected = select(mutants, args, again)
    if not selected:
        chosen = " ".join(f"{flag} {' '.join(map(str, values))}" for flag, values in (
            ("--function", args.function), ("--operators", args.operators),
            ("--rerun", [args.rerun] if args.rerun else None)) if values)
        parser.error(f"no mutant of {module} matches {chosen or 'the options'} "
                     f"(--list shows its mutants)")
    tests = args.tests or ([] if args.list else default_tests(module))
    return module, mutants, selected, tests


def _run_plans(plans: list, args: argparse.Namespace, equivalents: Dict[str, str],
               report: _Report) -> int:
    """Run each module's plan, print and write its figures; return the exit status."""
    options = ["-x", "-q", "-p", "no:cacheprovider", "--doctest-modules"]
    options += [f"--deselect={t}" for t in TEXT_ONLY]
    figures, current = [], set()
    for module, mutants, selected, tests in plans:
        current |= {m.key for m in mutants}
        try:
            outcomes = run_module(module, selected, options, tests, args.slow, args.jobs,
                                  report, equivalents)
        except KeyboardInterrupt:  # while the repository was copied or the baseline ran
            outcomes = {}
        if not outcomes:  # interrupted before its first verdict: nothing to report of it
            untouched = "" if figures else f"; {args.report} is as it was"
            print(f"mutate: interrupted before the first mutant of {module} had run"
                  f"{untouched}", file=sys.stderr)
            break
        figures.append(summarise(module, len(mutants), selected, outcomes, equivalents,
                                 report))
        if len(outcomes) < len(selected):
            break  # interrupted: no further module
    if not figures:  # the report was never opened
        return 130
    stale = [f"stale: {key}" for key in equivalents
             if key.split(":", 1)[0] in args.modules and key not in current]
    print("\n".join(stale), file=report)
    for line in stale:
        print(line)
    print(f"\n{_table(figures)}\nreport: {args.report}")
    interrupted = len(figures) < len(plans) or any(f["not run"] for f in figures)
    return 130 if interrupted else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader closed the pipe (--list | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
