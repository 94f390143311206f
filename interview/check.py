"""Check your own attention function against this library, case by case: each mistake named,
with the answer to read; then a seeded random battery, each failure shrunk to its smallest case.

    python3 interview/check.py FILE.py[:NAME]              attention(Q, K, V, ...)
    python3 interview/check.py FILE.py[:NAME] --softmax    softmax(x)
    python3 interview/check.py FILE.py[:NAME] --backward   f(Q, K, V, dO) -> dQ, dK, dV
    python3 interview/check.py FILE.py[:NAME] --online     f(Q, K, V, block_size)
    python3 interview/check.py FILE.py[:NAME] --mha        f(X_q, X_kv, W_Q, W_K, W_V, W_O, h)

It withstands code written by the person who runs it, with honest mistakes (crashes, hangs,
prints, forks, threads left running, exceptions of any kind, mutation of arguments,
nondeterminism); not code written to attack it (docs/checker.md says how that could fool it).

Verdicts: FAIL (exit 1) for a wrong answer on valid input; NOTE (exit 0) for an edge case to
discuss (no error for bad shapes, NaN for a query with no key, another convention); ok.
--strict makes every NOTE a FAIL; exit 2 is a usage error only.  After the named cases, a
random battery of --cases cases (200 by default) from --seed (1 by default); its failures
are shrunk and named.  docs/checker.md tells the flags, the calling conventions, the cases
of each mode, and what the checker cannot see.

Public API (`__all__`): check, Options, MODES, Report, Result, UsageError, main, quoted,
question.

>>> check(os.path.join(ROOT, "attention.py"), "attention", options=Options(cases=20)).lines()[-2:]
['random battery, seed 1: 20 cases agree', 'correct on all 13 ordinary cases']
"""

import os  # paths
import sys  # sys.path when run as a script, stdout, stderr

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import argparse  # the command line
import functools  # the questions of a page, read once
import re  # Markdown headings and their anchors
import signal  # SIGTERM ends a run as Ctrl-C does
import threading  # signal handlers belong to the main thread
from typing import Callable, List, NamedTuple, Optional

from interview import battery, mode_backward, mode_forward, mode_mha, mode_online, mode_softmax
from interview.battery import Battery, Trial
from interview.calling import CallError, plan
from interview.judge import (DIED, IMPORT_FAILED, NOT_RUN, TIME_OUT, UNREADABLE, Conventions,
                             Mistake, Verdict, batch)
from interview.runner import Child, InternalError, LoadError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository

__all__ = ["check", "Options", "MODES", "Report", "Result", "UsageError", "main", "quoted",
           "question"]

MODES = {mode.MODE.name: mode.MODE for mode in
         (mode_forward, mode_softmax, mode_backward, mode_online, mode_mha)}
TIME_LIMIT = 3.0  # seconds per call
MAX_CASES = 100_000  # --cases at most
SHOWN = 3  # lines of the candidate's own output shown under a case
NOT_EXERCISED = Mistake("not exercised", "checker.md#how-your-function-is-called")


class UsageError(Exception):
    """The file cannot be checked: no such file, a syntax error, no such function, a name
    that is not a function, a signature the mode cannot call, or an option out of range."""


class Options(NamedTuple):
    """The flags of a run (the command line's, by the same names)."""
    arrays: bool = False  # NumPy arrays instead of lists
    batched: bool = False  # a leading batch axis of two on every per-example argument
    causal: Optional[str] = None  # "top-left" or "bottom-right" as meant; None: detected
    true_blocks: Optional[bool] = None  # the mask's True means blocked; None: detected
    strict: bool = False  # every NOTE is a FAIL
    time_limit: float = TIME_LIMIT  # seconds per call
    cases: int = battery.COUNT  # the random battery's cases; 0: the named cases only
    seed: int = battery.SEED  # the random battery's seed
    echo: Optional[Callable] = None  # receives each line of the report as soon as it is known


class Result(NamedTuple):
    """One line of the report: status "ok", "NOTE", "FAIL" or "skip"."""
    title: str
    status: str
    mistake: str = ""  # the mistake's name; "" when none
    detail: str = ""  # the numbers, or the convention followed
    link: str = ""  # docs/PAGE.md#anchor: the answer to read
    edge: bool = False  # an edge case: input with no right answer, or invalid input
    output: tuple = ()  # the candidate's own printed lines
    arguments: str = ""  # a shrunk case's arguments, when they are few

    def lines(self) -> List[str]:
        """The verdict's line, the question a NOTE raises, a shrunk case's arguments, and the
        candidate's own output."""
        said = self.title + (f": {self.mistake}" if self.mistake else "")
        if self.detail:
            said += f" ({self.detail})" if self.mistake else f": {self.detail}"
        lines = [f"  {self.status:<4}  {said}" + (f" -> {self.link}" if self.link else "")]
        asked = question(self.link) if self.status == "NOTE" and self.link else ""
        lines += [f"        asked: {asked}"] if asked else []
        lines += [f"        {self.arguments}"] if self.arguments else []
        return lines + quoted(self.output)


def quoted(output: tuple) -> List[str]:
    """The candidate's printed lines, indented after "|", the first SHOWN of them."""
    more = len(output) - SHOWN
    return [f"        | {line[:100]}" for line in output[:SHOWN]] + (
        [f"        | (+{more} more lines)"] if more > 0 else [])


class Report(NamedTuple):
    """Every result of one check, after its header lines: the named cases', then the random
    battery's line and its shrunk failures'."""
    header: List[str]
    results: List[Result]
    battery: Optional[Battery] = None
    random: List[Result] = []  # the battery's failures, shrunk

    @property
    def ok(self) -> bool:
        return all(r.status != "FAIL" for r in self.results + self.random)

    @property
    def mistakes(self) -> set:
        """The names of the mistakes on FAIL and NOTE lines."""
        return {r.mistake for r in self.results + self.random if r.status in ("FAIL", "NOTE")}

    @property
    def summary(self) -> str:
        """The named cases' count ("correct on all 13 ordinary cases"), the notes, the cases
        not run, and the random cases that failed."""
        count = {s: sum(r.status == s for r in self.results) for s in ("FAIL", "NOTE", "skip")}
        run = [r for r in self.results if r.status != "skip"]
        ordinary = sum(not r.edge for r in run)
        parts = [f"{count['FAIL']} of {len(run)} cases failed" if count["FAIL"] else
                 f"correct on all {ordinary} ordinary cases"]
        if count["NOTE"]:
            parts.append(f"{count['NOTE']} edge case{'s' * (count['NOTE'] > 1)} to discuss")
        if count["skip"]:
            parts.append(f"{count['skip']} not run")
        if self.battery and self.battery.failed:
            parts.append(f"{self.battery.failed} of {self.battery.run} random cases failed")
        return "; ".join(parts)

    def lines(self) -> List[str]:
        named = [line for r in self.results for line in r.lines()]
        shrunk = [line for r in self.random for line in r.lines()]
        said = [self.battery.line] if self.battery else []
        return self.header + named + said + shrunk + [self.summary]


class _Progress:
    """How far a run has got, for the line of a run stopped by Ctrl-C."""

    def __init__(self, named: int, random: int):
        self.named, self.random, self.done, self.drawn = named, random, 0, 0

    def said(self) -> str:
        if self.done < self.named:
            return f"after {self.done} of {self.named} cases"
        if self.drawn < self.random:
            return f"after the {self.named} cases and {self.drawn} of {self.random} random ones"
        return f"after the {self.named} cases and {self.random} random ones, while shrinking"


# ----------------------------------------------------------------- the public function

def check(path: str, mode: str, name: Optional[str] = None,
          options: Options = Options()) -> Report:
    """Return the Report of the candidate's function in the file at path, run in a child
    process on every named case of the mode (a key of MODES), then on options.cases random
    ones, each compared with the library.

    name: the function's name (by default the mode's usual names); options: the flags
    (Options).  UsageError when the file cannot be checked or an option is out of range.

    >>> check(os.path.join(ROOT, "softmax.py"), "softmax", options=Options(cases=0)).summary
    'correct on all 8 ordinary cases'
    """
    spec, echo = MODES[mode], options.echo or (lambda line: None)
    _check_options(options)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    if not path.endswith(".py"):
        raise UsageError(f"{path} is not a .py file")
    try:
        child = Child(path, (name,) if name else spec.names, options.arrays, options.time_limit)
    except LoadError as e:
        if e.usage:
            raise UsageError(str(e)) from None
        return _failed_load(path, str(e), options.strict, echo)
    progress = _Progress(len(spec.cases()), options.cases)
    try:
        return _run(child, path, spec, options, echo, progress)
    except _Stopped as e:
        raise _Stopped(e.args[0], progress.said()) from None
    finally:
        child.close()


def _check_options(options: Options) -> None:
    if not 0 < options.time_limit <= 3600:
        raise UsageError(f"the time limit must be above 0 and at most 3600 s, not "
                         f"{options.time_limit:g}")
    if not 0 <= options.cases <= MAX_CASES:
        raise UsageError(f"the number of random cases must be from 0 to {MAX_CASES}, not "
                         f"{options.cases}")


def _run(child: Child, path: str, spec, options: Options, echo: Callable,
         progress: _Progress) -> Report:
    """The run once the file has loaded: the header, the named cases, the battery."""
    try:
        calls = plan(child.info, spec.labels, spec.block)
    except CallError as e:
        raise UsageError(str(e)) from None
    conventions = Conventions(options.true_blocks, options.causal)
    header = _header(path, calls, spec, conventions, options)
    header += quoted(child.output)  # what the file printed on loading
    for line in header:
        echo(line)
    trial = Trial(child, calls, spec, conventions, options.batched)
    results, troubles = [], 0
    for result, broke in _results(trial, options.strict):
        results.append(result)
        troubles += broke
        progress.done = len(results) - len(calls.unexercised)
        for line in result.lines():
            echo(line)
    if not options.cases:
        report = Report(header, results)
        echo(report.summary)
        return report

    def drawn(done: int) -> None:
        progress.drawn = done

    ran = battery.run(trial, options.cases, options.seed, troubles, drawn)
    echo(ran.line)
    random = []
    for title, verdict, output, shown in ran.failures:
        random.append(_result(title, verdict, False, output, options.strict)._replace(
            arguments=shown))
        for line in random[-1].lines():
            echo(line)
    report = Report(header, results, ran, random)
    echo(report.summary)
    return report


# ----------------------------------------------------------------------- one run

def _results(trial: Trial, strict: bool):
    """Yield (the Result, whether the child broke) of each parameter left unexercised, then
    of each named case."""
    for parameter in trial.calls.unexercised:
        yield Result(f"parameter {parameter}", "FAIL" if strict else "NOTE",
                     NOT_EXERCISED.name, link="docs/" + NOT_EXERCISED.page), False
    troubles = 0
    for case in trial.mode.cases():
        edge = case.kind != "ordinary"
        if troubles >= battery.TROUBLES:
            verdict = Verdict("FAIL", NOT_RUN, f"after {troubles} broken calls")
            yield _result(case.title, verdict, edge, (), strict), False
            continue
        outcome = trial.verdict(batch(case, trial.mode) if trial.batched else case)
        broke = outcome.verdict.mistake in (TIME_OUT, DIED, UNREADABLE)  # the child was killed
        troubles += broke
        yield _result(case.title, outcome.verdict, edge, outcome.output, strict), broke


def _result(title: str, verdict: Verdict, edge: bool, output: tuple, strict: bool) -> Result:
    status = "FAIL" if strict and verdict.status == "NOTE" else verdict.status
    mistake = verdict.mistake
    return Result(title, status, mistake.name if mistake else "", verdict.detail,
                  "docs/" + mistake.page if mistake else "", edge, output)


def _header(path: str, calls, spec, conventions: Conventions, options: Options) -> List[str]:
    """The call as made, then the conventions the answers are judged in."""
    shown = list(calls.labels) + [parameter for _, parameter in calls.positional]
    shown += [f"{p}=" for option, p in calls.keywords.items()
              if option != "dropout" or option in calls.required]
    facts = [spec.header] if spec.header else []
    options_taken = set(calls.keywords) | {option for option, _ in calls.positional}
    if "mask" in options_taken:
        facts.append("mask True = " + ("blocked" if conventions.true_blocks else "may attend"))
    if "causal" in options_taken:
        facts.append(f"causal {conventions.align}")
    facts += ["NumPy arrays"] * options.arrays + ["batched"] * options.batched
    header = [f"{path}: {calls.name}({', '.join(shown)})"]
    return header + (["  " + "; ".join(facts)] if facts else [])


def _failed_load(path: str, error: str, strict: bool, echo: Callable) -> Report:
    """The Report of a file whose loading raised or ran past its time limit."""
    verdict = Verdict("FAIL", TIME_OUT if error.startswith("still running") else IMPORT_FAILED,
                      error)
    report = Report([path], [_result("loading the file", verdict, False, (), strict)])
    for line in report.lines():
        echo(line)
    return report


@functools.lru_cache(maxsize=None)
def _headings(page: str) -> dict:
    """{anchor: heading} of a page of docs/, as GitHub makes the anchors."""
    try:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return {}
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-"): h for h in headings}


def question(link: str) -> str:
    """The heading a link "docs/PAGE.md#anchor" points to: the question an interviewer asks.

    >>> question("docs/interview.md#what-should-a-fully-masked-row-return")
    'What should a fully masked row return?'
    """
    page, _, anchor = link.partition("#")
    return _headings(page).get(anchor, "")


# ------------------------------------------------------------------------ the command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        self.exit(2, f"check.py: {message} (see python3 interview/check.py --help)\n")


class _Stopped(BaseException):
    """SIGTERM or SIGINT: the run ends, its child is killed on the way out.  args: the
    signal's number, then how far the run had got (check adds it)."""


def _stop(signum, frame):
    raise _Stopped(signum)


def _split(spec: str) -> tuple:
    """(path, NAME or None) from FILE.py[:NAME]; a path that exists as given wins."""
    path, colon, name = spec.rpartition(":")
    if colon and name.isidentifier() and not os.path.isfile(spec):
        return path, name
    return spec, None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="check.py", description=__doc__.split("\nPublic API")[0],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="FILE.py[:NAME]", help="your file, and your "
                        "function's name if it is not one the mode looks for")
    modes = parser.add_mutually_exclusive_group()
    for mode in ("softmax", "backward", "online", "mha"):
        modes.add_argument(f"--{mode}", dest="mode", action="store_const", const=mode,
                           default="attention", help=f"check {MODES[mode].names[0]}")
    parser.add_argument("--arrays", action="store_true", help="pass NumPy arrays, not lists")
    parser.add_argument("--batched", action="store_true", help="add a leading batch axis")
    parser.add_argument("--causal", choices=("top-left", "bottom-right"), help="the causal "
                        "alignment you meant (default: top-left expected, the other noted)")
    parser.add_argument("--mask-true-blocks", action="store_const", const=True,
                        help="your mask's True means blocked (default: detected)")
    parser.add_argument("--strict", action="store_true", help="every NOTE is a FAIL")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT, metavar="SECONDS",
                        help=f"a call running longer fails (default {TIME_LIMIT:g}; the first "
                        "call may take 20 times as long)")
    parser.add_argument("--cases", type=int, default=battery.COUNT, metavar="N",
                        help=f"random cases after the named ones (default {battery.COUNT}; "
                        "0: none)")
    parser.add_argument("--seed", type=int, default=battery.SEED, metavar="S",
                        help=f"the random cases' seed (default {battery.SEED})")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; return the exit status: 0 no FAIL, 1 a FAIL, 2 a usage error,
    3 an error of the checker's own, 130 or 143 when stopped by SIGINT or SIGTERM."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 < args.time_limit <= 3600:
        parser.error(f"--time-limit must be above 0 and at most 3600, not {args.time_limit:g}")
    if not 0 <= args.cases <= MAX_CASES:
        parser.error(f"--cases must be from 0 to {MAX_CASES}, not {args.cases}")
    path, name = _split(args.file)
    options = Options(args.arrays, args.batched, args.causal, args.mask_true_blocks,
                      args.strict, args.time_limit, args.cases, args.seed,
                      echo=lambda line: print(line, flush=True))
    held = {}
    if threading.current_thread() is threading.main_thread():  # else signal() would raise
        held = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        report = check(path, args.mode, name, options)
    except UsageError as e:
        print(f"check.py: {e}", file=sys.stderr)
        return 2
    except InternalError as e:
        print(f"check.py: an error of the checker's own, not of your code (please report "
              f"it): {e}", file=sys.stderr)
        return 3
    except _Stopped as e:
        where = e.args[1] if len(e.args) > 1 else "while loading the file"
        print(f"check.py: stopped by {signal.Signals(e.args[0]).name} {where}",
              file=sys.stderr)
        return 128 + e.args[0]
    except BrokenPipeError:  # the output's reader stopped early (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
