"""Check your own attention function against this library, case by case: each mistake named,
with the answer to read.

    python3 interview/check.py FILE.py[:NAME]              attention(Q, K, V, ...)
    python3 interview/check.py FILE.py[:NAME] --softmax    softmax(x)
    python3 interview/check.py FILE.py[:NAME] --backward   f(Q, K, V, dO) -> dQ, dK, dV
    python3 interview/check.py FILE.py[:NAME] --online     f(Q, K, V, block_size)
    python3 interview/check.py FILE.py[:NAME] --mha        f(X_q, X_kv, W_Q, W_K, W_V, W_O, h)

Verdicts: FAIL (exit 1) for a wrong answer on valid input; NOTE (exit 0) for an edge case to
discuss (no error for bad shapes, NaN for a query with no key, another convention); ok.
--strict makes every NOTE a FAIL; exit 2 is a usage error only.  docs/checker.md tells the
flags, the calling conventions, the cases of each mode, and what the checker cannot see.

Public API (`__all__`): check, check_attention, check_softmax, check_backward, check_online,
check_mha, MODES, Report, Result, UsageError, main.

>>> check_attention(os.path.join(ROOT, "attention.py")).summary  # the library itself
'correct on all 13 ordinary cases'
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

from interview import mode_backward, mode_forward, mode_mha, mode_online, mode_softmax
from interview.calling import CallError, arguments, needs, plan
from interview.judge import (DIED, IMPORT_FAILED, NOT_RUN, TIME_OUT, UNREADABLE, Conventions,
                             Mistake, Verdict, batch, expect_batch, judge)
from interview.runner import Child, LoadError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository

__all__ = ["check", "check_attention", "check_softmax", "check_backward", "check_online",
           "check_mha", "MODES", "Report", "Result", "UsageError", "main"]

MODES = {mode.MODE.name: mode.MODE for mode in
         (mode_forward, mode_softmax, mode_backward, mode_online, mode_mha)}
TIME_LIMIT = 3.0  # seconds per call
TROUBLES = 2  # after this many time-outs, deaths or unreadable replies, the rest are not run
SHOWN = 3  # lines of the candidate's own output shown under a case
NOT_EXERCISED = Mistake("not exercised", "checker.md#how-your-function-is-called")


class UsageError(Exception):
    """The file cannot be checked: no such file, a syntax error, no such function, a name
    that is not a function, or a signature the mode cannot call."""


class Result(NamedTuple):
    """One line of the report: status "ok", "NOTE", "FAIL" or "skip"."""
    title: str
    status: str
    mistake: str = ""  # the mistake's name; "" when none
    detail: str = ""  # the numbers, or the convention followed
    link: str = ""  # docs/PAGE.md#anchor: the answer to read
    edge: bool = False  # an edge case: input with no right answer, or invalid input
    output: tuple = ()  # the candidate's own printed lines

    def lines(self) -> List[str]:
        """The verdict's line, the question a NOTE raises, and the candidate's own output."""
        said = self.title + (f": {self.mistake}" if self.mistake else "")
        if self.detail:
            said += f" ({self.detail})" if self.mistake else f": {self.detail}"
        lines = [f"  {self.status:<4}  {said}" + (f" -> {self.link}" if self.link else "")]
        asked = question(self.link) if self.status == "NOTE" and self.link else ""
        return lines + ([f"        asked: {asked}"] if asked else []) + quoted(self.output)


def quoted(output: tuple) -> List[str]:
    """The candidate's printed lines, indented after "|", the first SHOWN of them."""
    more = len(output) - SHOWN
    return [f"        | {line[:100]}" for line in output[:SHOWN]] + (
        [f"        | (+{more} more lines)"] if more > 0 else [])


class Report(NamedTuple):
    """Every result of one check, after its header lines."""
    header: List[str]
    results: List[Result]

    @property
    def ok(self) -> bool:
        return all(r.status != "FAIL" for r in self.results)

    @property
    def mistakes(self) -> set:
        """The names of the mistakes on FAIL and NOTE lines."""
        return {r.mistake for r in self.results if r.status in ("FAIL", "NOTE")}

    @property
    def summary(self) -> str:
        count = {s: sum(r.status == s for r in self.results) for s in ("FAIL", "NOTE", "skip")}
        run = [r for r in self.results if r.status != "skip"]
        ordinary = sum(not r.edge for r in run)
        parts = [f"{count['FAIL']} of {len(run)} cases failed" if count["FAIL"] else
                 f"correct on all {ordinary} ordinary cases"]
        if count["NOTE"]:
            parts.append(f"{count['NOTE']} edge case{'s' * (count['NOTE'] > 1)} to discuss")
        if count["skip"]:
            parts.append(f"{count['skip']} not run")
        return "; ".join(parts)

    def lines(self) -> List[str]:
        return self.header + [line for r in self.results for line in r.lines()] + [self.summary]


# ----------------------------------------------------------------- the public functions

def check(path: str, mode: str = "attention", name: Optional[str] = None, *,
          arrays: bool = False, batched: bool = False, causal: Optional[str] = None,
          true_blocks: Optional[bool] = None, strict: bool = False,
          time_limit: float = TIME_LIMIT, echo: Optional[Callable] = None) -> Report:
    """Return the Report of the candidate's function in the file at path, run in a child
    process on every case of the mode (a key of MODES) and compared with the library.

    name: the function's name (by default the mode's usual names); arrays: NumPy arrays
    instead of lists; batched: a leading batch axis; causal: "top-left" or "bottom-right"
    as the candidate meant it (None: top-left expected, the other detected); true_blocks:
    the mask's True means blocked (None: detected); strict: every NOTE is a FAIL; echo
    receives each line of the report as soon as it is known.  UsageError when the file
    cannot be checked.

    >>> check(os.path.join(ROOT, "softmax.py"), "softmax").summary  # the library itself
    'correct on all 8 ordinary cases'
    """
    spec, echo = MODES[mode], echo or (lambda line: None)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    if not path.endswith(".py"):
        raise UsageError(f"{path} is not a .py file")
    try:
        child = Child(path, (name,) if name else spec.names, arrays, time_limit)
    except LoadError as e:
        if e.usage:
            raise UsageError(str(e)) from None
        return _failed_load(path, str(e), strict, echo)
    try:
        try:
            calls = plan(child.info, spec.labels, spec.block)
        except CallError as e:
            raise UsageError(str(e)) from None
        conventions = Conventions(true_blocks, causal)
        header = _header(path, calls, spec, conventions, arrays, batched)
        header += quoted(child.output)  # what the file printed on loading
        for line in header:
            echo(line)
        results = []
        for result in _results(child, calls, spec, conventions, batched, strict):
            results.append(result)
            for line in result.lines():
                echo(line)
        report = Report(header, results)
        echo(report.summary)
        return report
    finally:
        child.close()


def check_attention(path: str, name: Optional[str] = None, **options) -> Report:
    """Return check(path, "attention", name, **options): NAME(Q, K, V[, mask=][, is_causal=]
    [, scale=]) against attention.scaled_dot_product_attention.

    >>> check_attention(os.path.join(ROOT, "attention.py"), causal="bottom-right").mistakes
    {'causal top-left'}
    """
    return check(path, "attention", name, **options)


def check_softmax(path: str, name: Optional[str] = None, **options) -> Report:
    """Return check(path, "softmax", name, **options): NAME(x) against softmax.softmax.

    >>> check_softmax(os.path.join(ROOT, "softmax.py")).ok
    True
    """
    return check(path, "softmax", name, **options)


def check_backward(path: str, name: Optional[str] = None, **options) -> Report:
    """Return check(path, "backward", name, **options): NAME(Q, K, V, dO[, ...]) -> dQ, dK, dV
    against attention.attention_backward.

    >>> check_backward(os.path.join(ROOT, "attention.py")).ok
    True
    """
    return check(path, "backward", name, **options)


def check_online(path: str, name: Optional[str] = None, **options) -> Report:
    """Return check(path, "online", name, **options): NAME(Q, K, V, block_size) against the
    two-pass attention, for every block size.

    >>> check_online(os.path.join(ROOT, "attention.py")).ok
    True
    """
    return check(path, "online", name, **options)


def check_mha(path: str, name: Optional[str] = None, **options) -> Report:
    """Return check(path, "mha", name, **options): NAME(X_q, X_kv, W_Q, W_K, W_V, W_O,
    num_heads) against attention.multi_head_attention.

    >>> check_mha(os.path.join(ROOT, "attention.py")).ok
    True
    """
    return check(path, "mha", name, **options)


# ----------------------------------------------------------------------- one run

def _results(child: Child, calls, spec, conventions: Conventions, batched: bool,
             strict: bool):
    """Yield the Result of each parameter left unexercised, then of each case."""
    for parameter in calls.unexercised:
        yield Result(f"parameter {parameter}", "FAIL" if strict else "NOTE",
                     NOT_EXERCISED.name, link="docs/" + NOT_EXERCISED.page)
    troubles = 0
    for case in spec.cases():
        edge = case.kind != "ordinary"
        if troubles >= TROUBLES:
            verdict = Verdict("FAIL", NOT_RUN, f"after {troubles} broken calls")
            yield _result(case.title, verdict, edge, (), strict)
            continue
        verdict, output = _one(child, calls, spec, batch(case, spec) if batched else case,
                               conventions)
        troubles += verdict.mistake in (TIME_OUT, DIED, UNREADABLE)  # the child was killed
        yield _result(case.title, verdict, edge, output, strict)


def _one(child: Child, calls, spec, case, conventions: Conventions) -> tuple:
    """(Verdict, the candidate's output) of one case, called twice."""
    call = arguments(calls, case, conventions)
    if call is None:
        return Verdict("skip", None, f"no {needs(calls, case)} parameter"), ()
    if case.parts:
        expectation = expect_batch(case, spec, conventions)
    else:
        expectation = spec.expect(case, conventions)
    labels = list(spec.labels) + ["block_size"] * calls.block_positional
    first = _read(child.call(*call, labels), spec, case)
    second = None
    if first.kind in ("returned", "raised"):
        second = _read(child.call(*call, labels), spec, case)
    return judge(case, first, second, expectation, conventions), first.output


def _read(reply, spec, case):
    """The reply with its answer taken out of a pair or a dict."""
    if reply.kind != "returned":
        return reply
    return reply._replace(value=spec.unpack(reply.value, bool(case.parts)))


def _result(title: str, verdict: Verdict, edge: bool, output: tuple, strict: bool) -> Result:
    status = "FAIL" if strict and verdict.status == "NOTE" else verdict.status
    mistake = verdict.mistake
    return Result(title, status, mistake.name if mistake else "", verdict.detail,
                  "docs/" + mistake.page if mistake else "", edge, output)


def _header(path: str, calls, spec, conventions: Conventions, arrays: bool,
            batched: bool) -> List[str]:
    """The call as made, then the conventions the answers are judged in."""
    shown = list(calls.labels) + ["block_size"] * calls.block_positional
    shown += [f"{p}=" for option, p in calls.keywords.items()
              if option != "dropout" or option in calls.required]
    facts = [spec.header] if spec.header else []
    if "mask" in calls.keywords:
        facts.append("mask True = " + ("blocked" if conventions.true_blocks else "may attend"))
    if "causal" in calls.keywords:
        facts.append(f"causal {conventions.align}")
    facts += ["NumPy arrays"] * arrays + ["batched"] * batched
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
    """SIGTERM or SIGINT: the run ends, its child is killed on the way out."""


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
                        help=f"a call running longer fails (default {TIME_LIMIT:g})")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; return the exit status: 0 no FAIL, 1 a FAIL, 2 a usage error,
    130 or 143 when stopped by SIGINT or SIGTERM."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 < args.time_limit <= 3600:
        parser.error(f"--time-limit must be above 0 and at most 3600, not {args.time_limit:g}")
    path, name = _split(args.file)
    held = {}
    if threading.current_thread() is threading.main_thread():  # else signal() would raise
        held = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        report = check(path, args.mode, name, arrays=args.arrays, batched=args.batched,
                       causal=args.causal, true_blocks=args.mask_true_blocks,
                       strict=args.strict, time_limit=args.time_limit,
                       echo=lambda line: print(line, flush=True))
    except UsageError as e:
        print(f"check.py: {e}", file=sys.stderr)
        return 2
    except _Stopped as e:
        print(f"check.py: stopped by {signal.Signals(e.args[0]).name}", file=sys.stderr)
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
