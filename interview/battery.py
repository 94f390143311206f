"""Run cases against the candidate: the named ones one by one, then the seeded random battery,
each failure of which is shrunk to the smallest case that still fails, and named.

    Trial(child, calls, mode, conventions, batched)   how one case is called and judged
    trial.verdict(case) -> Outcome                    both calls, judged in full
    run(trial, count, seed, troubles, progress) -> Battery
                                                      the battery's count and shrunk failures
    draws(mode, takes, align, batched, seed, count)   its cases, from the seed alone
    shrink(trial, case) -> (smallest, tries)          a failing case made small

The battery, after the named cases (docs/checker.md, "The random battery"):
- COUNT cases by default (--cases), from random.Random(seed) (--seed, SEED by default), so
  that one seed gives the same cases for the same function: the run prints it;
- each mode's draw: shapes of every order (n < m, n = m, n > m), every option the function
  takes and their pairs, scales that are not 1/sqrt(d_k), ties, -inf, logits up to 1e3;
- one case in four is the shape of the case before it with new values, so that an answer
  kept from an earlier call (by shape, or by an argument's id) shows;
- each case is called twice, as the named ones are; a right answer that is the same twice
  and changes no argument agrees (judge.agrees: no mistake is named, which is what keeps a
  battery of a right function fast);
- a failing case is shrunk while it still fails (at most TRIES tries): fewer heads, then
  fewer queries, keys and columns (halved, then one removed), then fewer options, then its
  values rounded to small integers; the smallest is judged in full, which names its mistake
  or gives its worst entry and what it should be.  Up to SHRUNK failures are shrunk, each
  with options of its own; a case that broke the child (a time-out) is reported as it came.

Public API (`__all__`): Trial, Outcome, Battery, run, draws, shrink, COUNT, SEED, TRIES,
SHRUNK, TROUBLES.

python3 interview/check.py --help runs the checker.
"""

import math  # isfinite, inf
import random  # the seeded draws
from typing import Callable, List, NamedTuple, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from interview.calling import Plan, arguments, needs, takes
from interview.judge import (NONDETERMINISTIC, UNNAMED, Case, Conventions, Mode, Verdict, agrees,
                             batch, entry, expect_batch, judge)

__all__ = ["Trial", "Outcome", "Battery", "run", "draws", "shrink", "COUNT", "SEED", "TRIES",
           "SHRUNK", "TROUBLES"]

COUNT = 200  # random cases by default
SEED = 1  # the default seed
TRIES = 200  # calls at most to shrink one failing case
SHRUNK = 3  # failing cases shrunk and shown at most
REPEAT = 4  # one case in REPEAT has the shape of the one before, with new values
TROUBLES = 2  # after this many time-outs, deaths or unreadable replies, the rest are not run
SHOWN_INPUT = 30  # numbers in a shrunk case's arguments, at most, to show them


class Outcome(NamedTuple):
    """One case called twice and judged."""
    verdict: Verdict
    first: object  # the first runner.Reply, its answer taken out of a pair or a dict
    expect: object  # the judge.Expectation
    output: tuple  # the candidate's printed lines


class Battery(NamedTuple):
    """The battery of one run: its seed, how many cases ran and failed, and the failures to
    show, each (title, Verdict, the candidate's printed lines, the input's line or "")."""
    seed: int
    count: int  # the cases asked for
    run: int  # the cases called
    failed: int
    stopped: bool  # the rest were not run, after TROUBLES broken calls
    failures: list

    @property
    def line(self) -> str:
        """"random battery, seed S: 200 cases agree", or how many failed, or were not run."""
        said = f"random battery, seed {self.seed}: "
        if not self.run:
            return said + f"not run, after {TROUBLES} broken calls"
        said += f"{self.failed} of {self.run} cases failed" if self.failed else (
            f"{self.run} cases agree")
        if self.stopped:
            said += f"; {self.count - self.run} not run, after {TROUBLES} broken calls"
        return said


class Trial:
    """How the run calls and judges a case: the child, the call's plan, the mode, the
    conventions learnt so far, and whether each argument has a batch axis."""

    def __init__(self, child, calls: Plan, mode: Mode, conventions: Conventions,
                 batched: bool):
        self.child, self.calls, self.mode = child, calls, mode
        self.conventions, self.batched = conventions, batched
        self.labels = list(mode.labels) + [option for option, _ in calls.positional]

    def expect(self, case: Case):
        if case.parts:
            return expect_batch(case, self.mode, self.conventions)
        return self.mode.expect(case, self.conventions)

    def replies(self, case: Case) -> Optional[tuple]:
        """(first, second): the two calls' replies, the second None after a broken first;
        None when the function has no parameter for what the case passes."""
        call = arguments(self.calls, case, self.conventions)
        if call is None:
            return None
        first = self._read(self.child.call(*call, self.labels), case)
        second = None
        if first.kind in ("returned", "raised"):
            second = self._read(self.child.call(*call, self.labels), case)
        return first, second

    def verdict(self, case: Case) -> Outcome:
        """Both calls, judged in full: the mistake named, or the error described."""
        replies = self.replies(case)
        if replies is None:
            return Outcome(Verdict("skip", None, f"no {needs(self.calls, case)} parameter"),
                           None, None, ())
        expect = self.expect(case)
        first, second = replies
        verdict = judge(case, first, second, expect, self.conventions)
        return Outcome(verdict, first, expect, first.output)

    def agrees(self, case: Case, expect) -> tuple:
        """(True when the answer is right, the same twice, and changed nothing; the first
        reply)."""
        first, second = self.replies(case)
        return agrees(first, second, expect, self.conventions), first

    def _read(self, reply, case: Case):
        """The reply with its answer taken out of a pair or a dict."""
        if reply.kind != "returned":
            return reply
        return reply._replace(value=self.mode.unpack(reply.value, bool(case.parts)))


# ------------------------------------------------------------------------ the battery

def draws(mode: Mode, options: set, align: str, batched: bool, seed: int,
          count: int) -> List[Case]:
    """The battery's cases: count draws of the mode from random.Random(seed), one in REPEAT
    the shape and options of the one before with new values; with batched, each stacked
    with a twin of its shape and options.

    >>> from interview import mode_softmax
    >>> [c.title for c in draws(mode_softmax.MODE, set(), "top-left", False, 2, 4)]
    ['2 logits', '4 logits', '4 logits, -inf at 0, 1, 2', '4 logits']
    """
    rng = random.Random(seed)
    cases: List[Case] = []
    for _ in range(count):
        before = cases[-1] if cases else None
        like = before.parts[0] if before and before.parts else before
        case = mode.draw(rng, options, align, like if rng.randrange(REPEAT) == 0 else None)
        if batched:
            case = batch(case, mode, mode.draw(rng, options, align, case))
        cases.append(case)
    return cases


def run(trial: Trial, count: int, seed: int, troubles: int,
        progress: Callable = lambda done: None) -> Battery:
    """Call every case of the battery, then shrink up to SHRUNK of its failures; troubles:
    the broken calls of the named cases, which count towards TROUBLES."""
    trial.conventions.settle()  # a convention the named cases did not show is now a FAIL
    cases = draws(trial.mode, takes(trial.calls), trial.conventions.align, trial.batched,
                  seed, count)
    failed, broken, ran = [], {}, 0
    for k, case in enumerate(cases, 1):
        if troubles >= TROUBLES:
            break
        expect = trial.expect(case)
        right, first = trial.agrees(case, expect)
        ran += 1
        progress(ran)
        if first.kind in ("timeout", "died", "broken"):  # the child was killed
            troubles += 1
            broken[k] = Outcome(judge(case, first, None, expect, trial.conventions), first,
                                expect, first.output)
        if not right:
            failed.append(k)
    failures, said = [], set()
    for k in _shown(failed, cases):
        failure = _failure(trial, k, cases[k - 1], broken.get(k))
        if failure[4] not in said:  # not the same mistake on the same options again
            failures.append(failure[:4])
            said.add(failure[4])
    return Battery(seed, count, ran, len(failed), ran < count, failures)


def _shown(failed: List[int], cases: List[Case]) -> List[int]:
    """The failures to shrink: the first, then each with options of its own, SHRUNK at most."""
    shown, kinds = [], set()
    for k in failed:
        kind = _options(cases[k - 1])
        if kind not in kinds and len(shown) < SHRUNK:
            shown.append(k)
            kinds.add(kind)
    return shown


def _options(case: Case) -> tuple:
    case = case.parts[0] if case.parts else case
    return case.mask is not None, case.causal, case.scale is not None


def _failure(trial: Trial, k: int, case: Case, broken: Optional[Outcome]) -> tuple:
    """(title, Verdict, printed lines, the input's line, what tells it from another failure)
    of failing case k, shrunk unless the child broke on it (broken: that call's Outcome)."""
    if broken:
        title = f"case {k}, {_title(trial.mode, case)}"
        return title, broken.verdict, broken.output, "", title
    smallest, tries = shrink(trial, case)
    outcome = trial.verdict(smallest)
    if outcome.verdict.status != "FAIL":  # it passed when run again: not the same twice
        verdict = Verdict("FAIL", NONDETERMINISTIC, "failed, then right on the same input")
        outcome = outcome._replace(verdict=verdict)
    title = f"case {k} shrunk to {_title(trial.mode, smallest)}"
    shown = _input(trial.mode, smallest, trial.conventions.true_blocks)
    return (title, _worst(outcome), outcome.output, shown,
            (outcome.verdict.mistake, _options(smallest)))


def _title(mode: Mode, case: Case) -> str:
    return mode.describe(case.parts[0] if case.parts else case) + (
        ", batched" if case.parts else "")


def _worst(outcome: Outcome) -> Verdict:
    """The verdict, with the worst entry and what it should be when no mistake is named."""
    verdict = outcome.verdict
    if verdict.mistake != UNNAMED:
        return verdict
    where = verdict.detail.rsplit(" at ", 1)[-1]
    got, want = entry(outcome.first.value, where), entry(outcome.expect.reference, where)
    if not (isinstance(got, float) and isinstance(want, float)):
        return verdict
    return verdict._replace(detail=f"{verdict.detail}: {got:.6g}, should be {want:.6g}")


def _input(mode: Mode, case: Case, true_blocks: bool) -> str:
    """The case's arguments in one line, as the function was passed them (the mask in its
    polarity), when they are few enough to read."""
    args = list(zip(mode.labels, case.args))
    if case.mask is not None:
        args.append(("mask", _as_passed(case.mask, true_blocks)))
    if sum(1 for _, value in args for _ in _leaves(value)) > SHOWN_INPUT:
        return ""
    return "; ".join(f"{name} = {_shown_value(value)}" for name, value in args)


def _as_passed(mask, true_blocks: bool):
    """The mask as the function was passed it: True = blocked, when that is its polarity."""
    if isinstance(mask, bool):
        return mask != true_blocks
    return [_as_passed(row, true_blocks) for row in mask]


def _leaves(x):
    if isinstance(x, list):
        for v in x:
            yield from _leaves(v)
    else:
        yield x


def _shown_value(x) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(map(_shown_value, x)) + "]"
    return f"{x:g}" if isinstance(x, float) else str(x)


# ------------------------------------------------------------------------ shrinking

def shrink(trial: Trial, case: Case) -> tuple:
    """(the smallest case found that still fails, the calls it took): each step below is
    tried in order, and the first that still fails is taken and the steps start again;
    TRIES calls at most."""
    tries = 0
    shrinking = True
    while shrinking and tries < TRIES:
        shrinking = False
        for smaller in _steps(trial.mode, case):
            expect = trial.expect(smaller)
            if _keyless(expect.reference):  # a query left with no key: not an ordinary case
                continue
            tries += 1
            right, _ = trial.agrees(smaller, expect)
            if not right:
                case, shrinking = smaller, True
                break
            if tries >= TRIES:
                break
    return case, tries


def _steps(mode: Mode, case: Case):
    """The cases one step smaller: along each axis (mode.axes, in order) the first half, the
    second half, then all but one; then without each option; then the values rounded."""
    parts = case.parts or (case,)
    for name, length, keep in mode.axes(parts[0]):
        if length < 2:
            continue
        halves = [list(range(length // 2)), list(range(length // 2, length))]
        for kept in halves + [[i for i in range(length) if i != j] for j in range(length)]:
            yield _each(mode, case, lambda part: keep(part, kept))
    for option, off in (("mask", None), ("causal", False), ("scale", None)):
        if getattr(parts[0], option) not in (None, False):
            yield _each(mode, case, lambda part: part._replace(**{option: off}))
    block = parts[0].block_size or 1
    for smaller in sorted({block // 2, block - 1} - {0}):
        yield _each(mode, case, lambda part: part._replace(block_size=smaller))
    for k, arg in enumerate(parts[0].args):
        if isinstance(arg, list):
            for rounding in (_small, _integer):
                smaller = _each(mode, case, lambda part: part._replace(
                    args=part.args[:k] + (_rounded(part.args[k], rounding),) + part.args[k + 1:]))
                if smaller != case:
                    yield smaller


def _each(mode: Mode, case: Case, change: Callable) -> Case:
    """change applied to the case, or to both parts of a batched one (then stacked again)."""
    if not case.parts:
        smaller = change(case)
        return smaller._replace(title=mode.describe(smaller))
    first, second = (change(part) for part in case.parts)
    return batch(first._replace(title=mode.describe(first)), mode, second)


def _rounded(x, rounding: Callable):
    if isinstance(x, list):
        return [_rounded(v, rounding) for v in x]
    return rounding(x) if isinstance(x, float) and math.isfinite(x) else x


def _small(v: float) -> float:
    """The nearest integer from -3 to 3."""
    return float(max(-3, min(3, round(v))))


def _integer(v: float) -> float:
    return float(round(v))


def _keyless(reference) -> bool:
    return reference is None or isinstance(reference, list) and any(map(_keyless, reference))


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
