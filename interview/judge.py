"""Judge one case: the candidate's two replies against the right answer and the known mistakes.

Vocabulary (the modes, mode_*.py, build these; check.py runs them):
    answer       nested lists of floats, as runner.Reply.value carries them
    reference    the right answer, with None where any value is right (a query with no key)
                 and NaN where only a non-finite value matches (a mistake's overflow)
    Case         one call: its title, arguments and kind ("ordinary", "no key", "error")
    Variant      a Mistake and the answer it gives; a convention says what it implies
    Expectation  what a mode knows of one case: reference, variants, the answers a query with
                 no key may get, and how to read and explain an answer
    Conventions  what the run has stated or learnt: mask polarity, causal alignment, the
                 mistakes that earlier cases ruled out or named, the answers seen
    Verdict      status "ok", "NOTE", "FAIL" or "skip", the mistake, the numbers

A verdict names a mistake only when its answer matches, and never one that an earlier case
showed the candidate does not make (the promise of docs/checker.md):
- a variant (a slip whose answer is computed): an earlier case where it would have changed
  the answer, and the candidate's was right;
- a lower precision: most of the earlier cases where that format's own answer is off,
  each where the candidate's was neither nearly that answer nor off by as much (within 8x);
- a described mistake (another scale): an earlier case whose Expectation.rules_out says so.
The named cases are ordered so that each trap comes after the cases that rule out its
look-alikes.

    judge(case, first, second, expect, conventions) -> Verdict
    agrees(first, second, expect, conventions) -> bool   the battery's quick verdict: right?
    batch(case, mode, twin=None), expect_batch(case, mode, conventions)

Public API (`__all__`): judge, agrees, batch, expect_batch, close, worst, entry, tolerance,
same_shape, shape, Mistake, Variant, NoKey, Verdict, Case, Expectation, Mode, Conventions,
TOL, LOW, TIME_OUT, DIED, NOT_RUN, UNREADABLE, UNREADABLE_ANSWER, NONDETERMINISTIC,
MUTATED, RAISED, IMPORT_FAILED, NEEDS_ARRAYS, WRONG_SHAPE, NOT_FINITE, ROUNDED, PRECISION,
UNNAMED, NO_ERROR, NOT_VALUE_ERROR, NAN_ROW, ODD_ERROR, UNMASKED_ROW, OTHER_ROW,
FIRST_BATCH, BATCH_DROPPED.

python3 interview/check.py --help runs the checker.
"""

import math  # isfinite, log, inf
from typing import Callable, Dict, List, NamedTuple, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from lowprecision.emulation import FORMATS

TOL = 1e-9  # an entry passes within TOL * max(1, the largest |entry| of the answer)
NO_KEY_TOL = 1e-5  # the same for a convention of a query with no key: they differ by far more
LOW = [f for f in FORMATS if f != "float64"]  # float16, bfloat16, float32
ARRAY_CODE = ("'list' object has no attribute", "for @: 'list'")  # NumPy code given lists
NEAR = 0.1  # an answer within NEAR x its error of a format's own answer is that format's
APART = math.log(8.0)  # a format's error within 8x of the candidate's describes it

__all__ = ["judge", "agrees", "batch", "expect_batch", "close", "worst", "entry", "tolerance",
           "same_shape", "shape", "Mistake", "Variant", "NoKey", "Verdict", "Case",
           "Expectation", "Mode", "Conventions", "TOL", "LOW", "TIME_OUT", "DIED", "NOT_RUN",
           "UNREADABLE", "UNREADABLE_ANSWER", "NONDETERMINISTIC", "MUTATED", "RAISED",
           "IMPORT_FAILED", "NEEDS_ARRAYS", "WRONG_SHAPE", "NOT_FINITE", "ROUNDED", "PRECISION",
           "UNNAMED", "NO_ERROR", "NOT_VALUE_ERROR", "NAN_ROW", "ODD_ERROR", "UNMASKED_ROW",
           "OTHER_ROW", "FIRST_BATCH", "BATCH_DROPPED"]


class Mistake(NamedTuple):
    """A slip the checker names, and the page and anchor of its answer under docs/."""
    name: str  # short: the report's line says it, the tests match it
    page: str  # "interview.md#anchor" or "checker.md#anchor"


class Variant(NamedTuple):
    """The answer a mistake gives.  A convention (mask True = blocked, bottom-right causal)
    is a NOTE when the candidate did not state theirs, and the run then follows it."""
    mistake: Mistake
    answer: object
    convention: Optional[dict] = None  # the Conventions attributes it implies


class NoKey(NamedTuple):
    """A whole answer whose rows without a key follow one convention: zeros, the mean of V."""
    label: str  # what the report's line says: "zeros", "mean of V"
    answer: object
    mistake: Optional[Mistake] = None  # None: a defensible convention, ok; else a NOTE


class Verdict(NamedTuple):
    status: str  # "ok", "NOTE", "FAIL" or "skip"
    mistake: Optional[Mistake] = None
    detail: str = ""  # the numbers, or what a query with no key got


class Case(NamedTuple):
    """One call of the candidate's function, in the modes' own terms."""
    title: str
    args: tuple  # the positional arguments, lists of rows
    mask: Optional[list] = None  # True = may attend, whatever the candidate's polarity
    causal: bool = False
    scale: Optional[float] = None
    block_size: Optional[int] = None
    kind: str = "ordinary"  # "ordinary", "no key" (a query sees no key) or "error" (must raise)
    parts: tuple = ()  # with --batched: the two cases stacked along the batch axis


class Expectation(NamedTuple):
    reference: object
    variants: List[Variant]
    no_key: List[NoKey] = []  # the conventions for a query with no key
    precision: Optional[Callable] = None  # fmt -> the answer computed in that format
    explain: Optional[Callable] = None  # answer -> (Mistake, detail) or None
    veto: Optional[Callable] = None  # answer within tolerance -> (Mistake, detail) or None
    rules_out: Optional[Callable] = None  # answer -> the described mistakes it shows absent


class Mode(NamedTuple):
    """One mode of the checker: what it calls, its cases, how it reads an answer, and how
    its random cases are drawn and shrunk (battery.py)."""
    name: str  # "attention", "softmax", "backward", "online", "mha"
    names: tuple  # the function names looked for, in order
    labels: tuple  # the positional arguments, by the names the report uses
    per_example: tuple  # which arguments --batched stacks along a batch axis
    cases: Callable  # () -> List[Case]
    expect: Callable  # (Case, Conventions) -> Expectation
    twin: Callable  # Case -> the second batch element
    unpack: Callable  # (value, batched) -> the answer inside a pair or a dict
    stack: Callable  # (answer, answer) -> the two along the batch axis
    draw: Callable  # (rng, options taken, like=None) -> a random Case (like's shapes, options)
    axes: Callable  # Case -> [(axis, length, keep(Case, indices) -> Case)], in shrinking order
    describe: Callable  # Case -> its shapes and options, for the battery's lines
    block: bool = False  # the function takes a block size too
    header: str = ""  # the convention the report states


class _Seen(NamedTuple):
    """An answer an earlier case got, kept to tell whether it rules out a described mistake."""
    expect: Expectation
    got: object
    error: float  # the largest error of got
    ruled: Dict[Mistake, bool]  # what has been worked out of it so far


class Conventions:
    """The mask polarity and causal alignment the answers follow, stated or detected, and
    what earlier cases showed about the candidate's mistakes."""

    def __init__(self, true_blocks: Optional[bool] = None, align: Optional[str] = None):
        self.stated = {"true_blocks": true_blocks is not None, "align": align is not None}
        self.true_blocks, self.align = bool(true_blocks), align or "top-left"
        self.ruled_out, self.named = set(), []
        self.passed = 0  # the cases the candidate got right
        self.seen: List[_Seen] = []  # every answer of the shape expected, in order

    def settle(self) -> None:
        """From now on the conventions are fixed: an answer in another is a FAIL."""
        self.stated = {key: True for key in self.stated}

    def shown_absent(self, mistake: Mistake) -> bool:
        """Earlier answers showed the candidate does not make this described mistake: for a
        lower precision, most of the earlier cases where that format is off (its error
        fluctuates from case to case); for another, one case."""
        said = [_rules_out(seen, mistake) for seen in self.seen]
        if mistake in PRECISION.values():
            shown = [s for s in said if s is not None]
            return 2 * sum(shown) > len(shown)
        return any(said)


# --------------------------------------------------------------- the generic mistakes
# The long explanations live in docs/checker.md and docs/interview.md, at these anchors.

SHAPES = "interview.md#what-should-attention-do-with-shapes-that-do-not-match"
FULL = "interview.md#what-should-a-fully-masked-row-return"
TIME_OUT = Mistake("time limit", "checker.md#time-limits")
DIED = Mistake("process died", "checker.md#time-limits")
NOT_RUN = Mistake("not run", "checker.md#time-limits")
UNREADABLE = Mistake("unreadable reply", "checker.md#unreadable-replies")
UNREADABLE_ANSWER = Mistake("unreadable answer", "checker.md#unreadable-replies")
NONDETERMINISTIC = Mistake("nondeterministic", "checker.md#each-case-runs-twice")
MUTATED = Mistake("argument changed in place", "interview.md#may-attention-change-its-arguments")
RAISED = Mistake("error on valid input", "checker.md#an-error-on-valid-input")
IMPORT_FAILED = Mistake("error on import", "checker.md#an-error-on-valid-input")
NEEDS_ARRAYS = Mistake("needs arrays: add --arrays", "checker.md#arrays-and-batches")
WRONG_SHAPE = Mistake("wrong shape", "interview.md#what-does-attention-return-weights-or-outputs")
NOT_FINITE = Mistake("not finite", "checker.md#no-named-mistake")
ROUNDED = Mistake("rounded", "checker.md#how-a-mistake-is-named")
PRECISION = {f: Mistake(f"{f} precision", "interview.md#what-changes-in-float16-and-bfloat16")
             for f in LOW}
UNNAMED = Mistake("no named mistake", "checker.md#no-named-mistake")
NO_ERROR = Mistake("no shape error", SHAPES)
NOT_VALUE_ERROR = Mistake("not a ValueError", SHAPES)
NAN_ROW = Mistake("NaN", FULL)
ODD_ERROR = Mistake("not a ValueError", FULL)
UNMASKED_ROW = Mistake("attends as if unmasked", FULL)
OTHER_ROW = Mistake("neither zeros nor uniform", FULL)
FIRST_BATCH = Mistake("first batch only", "checker.md#arrays-and-batches")
BATCH_DROPPED = Mistake("batch axis dropped", "checker.md#arrays-and-batches")


# ------------------------------------------------------------------------ batches

def batch(case: Case, mode: Mode, twin: Optional[Case] = None) -> Case:
    """The case and its twin (by default mode.twin's) stacked along a leading batch axis."""
    twin = twin or mode.twin(case)
    args = tuple([a, b] if k in mode.per_example else a
                 for k, (a, b) in enumerate(zip(case.args, twin.args)))
    mask = None if case.mask is None else [case.mask, twin.mask]
    return case._replace(args=args, mask=mask, parts=(case, twin))


def expect_batch(case: Case, mode: Mode, conventions: Conventions) -> Expectation:
    """The Expectation of a batched case, from its two parts'."""
    a, b = (mode.expect(part, conventions) for part in case.parts)
    if case.kind == "error":  # no answer to stack: it must raise
        return a
    both = mode.stack
    mistakes = list(dict.fromkeys(v.mistake for v in a.variants + b.variants))
    first, second = ({v.mistake: v for v in e.variants} for e in (a, b))
    variants = [Variant(m, both(first[m].answer if m in first else a.reference,
                                second[m].answer if m in second else b.reference),
                        (first.get(m) or second.get(m)).convention) for m in mistakes]
    if a.reference is not None:  # else no right answer, only conventions (backward's no key)
        variants += [Variant(FIRST_BATCH, both(a.reference, a.reference)),
                     Variant(BATCH_DROPPED, a.reference)]
    labels = {c.label: c for c in b.no_key}
    no_key = [c._replace(answer=both(c.answer, labels[c.label].answer))
              for c in a.no_key if c.label in labels]
    precision = a.precision and b.precision and (
        lambda fmt: _both(both, a.precision(fmt), b.precision(fmt)))
    veto = a.veto and (lambda got: a.veto(got[0]) or b.veto(got[1]))
    rules_out = a.rules_out and (lambda got: a.rules_out(got[0]) | b.rules_out(got[1]))
    reference = _both(both, a.reference, b.reference)
    return Expectation(reference, variants, no_key, precision, None, veto, rules_out)


def _both(stack: Callable, a, b):
    return None if a is None or b is None else stack(a, b)


# ------------------------------------------------------------------------ judging

BROKEN = {"timeout": TIME_OUT, "died": DIED, "broken": UNREADABLE, "unreadable": UNREADABLE_ANSWER}


def judge(case: Case, first, second, expect: Expectation, conventions: Conventions) -> Verdict:
    """The verdict on one case from the candidate's two replies (runner.Reply)."""
    for reply in (first, second):
        if reply is not None and reply.kind in BROKEN:
            return Verdict("FAIL", BROKEN[reply.kind], reply.error)
    apart = _apart(first, second, expect.reference)
    if apart:
        return Verdict("FAIL", NONDETERMINISTIC, apart)
    if first.kind == "raised":
        verdict = _raised(case, first, expect, conventions)
    elif case.kind == "error":
        verdict = Verdict("NOTE", NO_ERROR)
    else:
        verdict = _returned(first.value, expect, conventions)
        _remember(first.value, expect, conventions)
    changed = ", ".join(first.mutated)
    if changed and verdict.status == "FAIL":  # the wrong answer first, the change after it
        return verdict._replace(detail=_join(verdict.detail, "changed " + changed))
    return Verdict("FAIL", MUTATED, changed) if changed else verdict


def agrees(first, second, expect: Expectation, conventions: Conventions) -> bool:
    """True when both calls returned the right answer (no veto), the same twice, and changed
    no argument: judge's "ok" on an ordinary case, without the cost of naming a mistake.  A
    right answer rules out what it rules out in judge."""
    replies = (first, second)
    if any(r is None or r.kind != "returned" or r.mutated for r in replies):
        return False
    got, tol = first.value, tolerance(expect.reference)
    if _apart(first, second, expect.reference) or not close(got, expect.reference, tol):
        return False
    if expect.veto and expect.veto(got):
        return False
    _passed(expect, conventions)
    _remember(got, expect, conventions)
    return True


def _apart(first, second, reference) -> str:
    """Where two calls on the same arguments differ, or ""."""
    if second is None or first.kind != second.kind:
        return "" if second is None else f"{first.kind}, then {second.kind}"
    if first.kind == "raised":
        return "" if first.types == second.types else f"{first.types[0]}, then {second.types[0]}"
    if first.value == second.value or close(second.value, first.value, tolerance(reference)):
        return ""  # the same answer (a dict too), or the same within tolerance, NaN for NaN
    if not same_shape(second.value, first.value):
        return f"shape {shape(first.value)}, then {shape(second.value)}"
    error, where = worst(second.value, first.value)
    return f"by {error:.2g} at {where}"


def _raised(case: Case, reply, expect: Expectation, conventions: Conventions) -> Verdict:
    """An exception: a refusal (a builtin ValueError) is right where the case has no right
    answer."""
    refusal = reply.refusal
    text = "raises " + reply.types[0]
    if case.kind == "error":
        return Verdict("ok", None, text) if refusal else Verdict("NOTE", NOT_VALUE_ERROR, text)
    if _has_none(expect.reference):
        return Verdict("ok", None, text) if refusal else Verdict("NOTE", ODD_ERROR, text)
    if any(sign in reply.error for sign in ARRAY_CODE):
        return Verdict("FAIL", NEEDS_ARRAYS, reply.error)
    passed = conventions.passed > 0  # an earlier case passed: this input is the trouble
    if reply.arithmetic or passed and refusal:
        # exp's overflow, 0/0 after it underflows, or the candidate's own guard against them
        # or against a query its mistake leaves without a key
        broken = [v for v in expect.variants if _has_nan(v.answer)
                  or refusal and _keyless(v.answer, expect.reference)]
        named = _name(broken, conventions)
        if named:
            return Verdict("FAIL", named.mistake, reply.error)
    return Verdict("FAIL", RAISED, reply.error)


def _returned(got, expect: Expectation, conventions: Conventions) -> Verdict:
    """An answer: right, a variant, or described by its error."""
    reference, tol = expect.reference, tolerance(expect.reference)
    if close(got, reference, tol):
        veto = expect.veto(got) if expect.veto else None
        if veto:
            return Verdict("FAIL", *veto)
        _passed(expect, conventions)
        return _no_key(got, expect, tol) if _has_none(reference) else Verdict("ok")
    matching = [v for v in expect.variants if close(got, _free(v.answer, reference), tol)]
    if not conventions.passed and not any(map(math.isfinite, _numbers(got))):
        # NaN everywhere, and no case right yet: a slip's overflow only if named before
        matching = [v for v in matching if v.mistake in conventions.named]
    named = _name(matching, conventions)
    if named is None:
        return _describe(got, expect, tol, conventions)
    if named.convention and not any(conventions.stated[k] for k in named.convention):
        for key, value in named.convention.items():
            setattr(conventions, key, value)
        return Verdict("NOTE", named.mistake)
    return Verdict("FAIL", named.mistake)


def _passed(expect: Expectation, conventions: Conventions) -> None:
    """A right answer: each variant of the case is ruled out for the rest of the run."""
    conventions.passed += 1
    conventions.ruled_out |= {v.mistake for v in expect.variants}


def _remember(got, expect: Expectation, conventions: Conventions) -> None:
    """Keep an answer of the expected shape, for the described mistakes it may rule out."""
    if expect.reference is not None and same_shape(got, expect.reference):
        error = worst(got, expect.reference)[0]
        conventions.seen.append(_Seen(expect, got, error, {}))


def _rules_out(seen: _Seen, mistake: Mistake) -> Optional[bool]:
    """Whether the answer seen shows the candidate does not make the described mistake:
    for a precision, that format's answer is off there (else None: it shows nothing) and
    the candidate's is neither nearly it nor off by as much; otherwise, as the case's own
    rules_out says."""
    if mistake not in seen.ruled:
        fmt = next((f for f, m in PRECISION.items() if m == mistake), None)
        if fmt is not None:
            seen.ruled[mistake] = _not_in_format(seen, fmt)
        else:
            rules_out = seen.expect.rules_out
            seen.ruled[mistake] = bool(rules_out) and mistake in rules_out(seen.got)
    return seen.ruled[mistake]


def _not_in_format(seen: _Seen, fmt: str) -> Optional[bool]:
    expect = seen.expect
    answer = _in_format(expect, fmt)
    if answer is None or not math.isfinite(seen.error):  # no error to compare
        return None
    own = worst(answer, expect.reference)[0]
    if own <= tolerance(expect.reference):  # the format is as good as float64 here
        return None
    if worst(seen.got, answer)[0] <= NEAR * seen.error:  # nearly the format's own answer
        return False
    return seen.error == 0.0 or abs(math.log(seen.error / own)) > APART


def _in_format(expect: Expectation, fmt: str):
    """The case's answer computed in fmt; None where there is none to compare (the input is
    beyond the format, or the answer is not finite)."""
    if expect.precision is None:
        return None
    try:
        answer = expect.precision(fmt)
    except ValueError:  # an input beyond the format's range: no answer in it
        return None
    return answer if answer is not None and _finite(answer) else None


def _free(answer, reference):
    """The answer with None (anything) in the rows where the reference has None."""
    if isinstance(answer, list) and isinstance(reference, list) and len(answer) == len(reference):
        return [None if r is None else _free(a, r) for a, r in zip(answer, reference)]
    return answer


def _name(variants: List[Variant], conventions: Conventions) -> Optional[Variant]:
    """The variant to name: not ruled out, one already named if any, else the first."""
    left = [v for v in variants if v.mistake not in conventions.ruled_out]
    if not left:
        return None
    chosen = next((v for v in left if v.mistake in conventions.named), left[0])
    conventions.named.append(chosen.mistake)
    return chosen


def _no_key(got, expect: Expectation, tol: float) -> Verdict:
    """The rows with a key are right: which convention does a query with no key follow?"""
    for convention in expect.no_key:  # -1e9 added keeps a logit only to 1e9's spacing
        if close(got, convention.answer, NO_KEY_TOL / TOL * tol):
            status = "ok" if convention.mistake is None else "NOTE"
            return Verdict(status, convention.mistake, convention.label)
    if not _finite(got):
        return Verdict("NOTE", NAN_ROW)
    return Verdict("NOTE", OTHER_ROW)


def _describe(got, expect: Expectation, tol: float, conventions: Conventions) -> Verdict:
    """An answer no known mistake gives: its shape, its largest error, what that error
    looks like (rounding, a lower precision), or the mode's own explanation."""
    reference = expect.reference
    missing = _none_where(got, reference)
    if missing:  # the shape is right, but an entry is None
        return Verdict("FAIL", UNREADABLE_ANSWER, f"None at {missing}, not a number")
    if not same_shape(got, reference):
        return Verdict("FAIL", WRONG_SHAPE, f"{shape(got)}, not {shape(reference)}")
    error, where = worst(got, reference)
    if error == math.inf:
        return Verdict("FAIL", NOT_FINITE, "at " + where)
    places = _decimals(got, reference, error)
    if places is not None:
        return Verdict("FAIL", ROUNDED, f"to {places} decimals")
    fmt = _format(got, error, expect, conventions)
    if fmt:
        return Verdict("FAIL", PRECISION[fmt], f"off by {error:.1e} at {where}")
    explained = expect.explain(got) if expect.explain else None
    if explained and not conventions.shown_absent(explained[0]):
        return Verdict("FAIL", *explained)
    return Verdict("FAIL", UNNAMED, f"off by {error:.2g} at {where}")


def _none_where(got, want, where: str = "") -> str:
    """Where got has None and want a number, or ""."""
    if got is None and isinstance(want, float):
        return where
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return next((w for w in (_none_where(g, v, f"{where}[{i}]")
                                 for i, (g, v) in enumerate(zip(got, want))) if w), "")
    return ""


def _decimals(got, reference, error: float) -> Optional[int]:
    """k when every entry of got is a multiple of 10^-k, within half of which it is right."""
    values = list(_numbers(got))
    if len(set(values)) < 2:  # zeros, or one value everywhere: not a rounding
        return None
    for k in range(1, 13):
        if all(math.isfinite(g) and round(g, k) == g for g in values):
            exact = all(round(w, k) == w for w in _numbers(reference) if math.isfinite(w))
            return None if exact or error > 0.51 * 10.0 ** -k else k
    return None


def _format(got, error: float, expect: Expectation, conventions: Conventions) -> Optional[str]:
    """The format whose answer the candidate's nearly is, or whose own error on this case is
    as large as the candidate's (within 8x, and small: one named before first, else the
    nearest); never one that earlier answers ruled out."""
    distances = {}
    for fmt in LOW:
        answer = _in_format(expect, fmt)
        if answer is None or conventions.shown_absent(PRECISION[fmt]):
            continue
        own = worst(answer, expect.reference)[0]
        if 0.0 < own < math.inf:
            distances[fmt] = abs(math.log(error / own))
        if worst(got, answer)[0] <= NEAR * error:  # nearly the format's own answer
            return _named_format(fmt, conventions)
    small = error <= 0.05 * max(1.0, max(map(abs, _numbers(expect.reference))))
    close_enough = [f for f in distances if distances[f] <= APART] if small else []
    if not close_enough:
        return None
    named = [f for f in close_enough if PRECISION[f] in conventions.named]
    return _named_format(min(named or close_enough, key=distances.get), conventions)


def _named_format(fmt: str, conventions: Conventions) -> str:
    conventions.named.append(PRECISION[fmt])
    return fmt


def _join(detail: str, more: str) -> str:
    return f"{detail}; {more}" if detail else more


# ---------------------------------------------------------------- comparing answers

def close(got, want, tol: float) -> bool:
    """got matches want entry by entry within tol; None in want matches anything, NaN in
    want matches a non-finite entry only."""
    if want is None:
        return True
    if isinstance(want, float):
        if math.isnan(want):
            return isinstance(got, float) and not math.isfinite(got)
        return isinstance(got, float) and (got == want or abs(got - want) <= tol)
    return isinstance(got, list) and isinstance(want, list) and len(got) == len(want) and all(
        close(g, w, tol) for g, w in zip(got, want))


def worst(got, want, where: str = "") -> tuple:
    """(the largest |got - want| over want's finite entries, where it is), inf where got is
    not finite; for two answers of the same shape."""
    if want is None:
        return 0.0, where
    if isinstance(want, float):
        if not math.isfinite(want):
            return 0.0, where
        return (abs(got - want) if math.isfinite(got) else math.inf), where
    pairs = [worst(g, w, f"{where}[{i}]") for i, (g, w) in enumerate(zip(got, want))]
    return max(pairs, key=lambda p: p[0], default=(0.0, where))


def entry(x, where: str):
    """The entry of x at where ("[2][1]"), or None where x has none."""
    for index in where[1:-1].split("][") if where else []:
        if not isinstance(x, list) or not index.isdigit() or int(index) >= len(x):
            return None
        x = x[int(index)]
    return x


def tolerance(reference) -> float:
    return TOL * max([1.0] + [abs(x) for x in _numbers(reference) if math.isfinite(x)])


def same_shape(a, b) -> bool:
    """a and b nest alike (None in b stands for anything)."""
    if b is None:
        return True
    if isinstance(b, float):
        return isinstance(a, float)
    return isinstance(a, list) and len(a) == len(b) and all(map(same_shape, a, b))


def shape(x) -> str:
    """"3 x 2", "2 x 3 x 2", "(3 x 16, 5 x 16, 5 x 2)", "a number", "None"."""
    if x is None or isinstance(x, (float, dict)):
        return {type(None): "None", float: "a number", dict: "a dict"}[type(x)]
    inner = {shape(v) for v in x if v is not None}
    if not inner or inner == {"a number"}:
        return str(len(x))
    if len(inner) == 1:
        return f"{len(x)} x {inner.pop()}"
    return "(" + ", ".join(shape(v) for v in x) + ")"


def _numbers(x):
    if isinstance(x, float):
        yield x
    elif isinstance(x, list):
        for v in x:
            yield from _numbers(v)


def _has_none(x) -> bool:
    return x is None or isinstance(x, list) and any(map(_has_none, x))


def _keyless(answer, reference) -> bool:
    """The answer has None (a query without a key) where the reference has a row."""
    return isinstance(answer, list) and isinstance(reference, list) and any(
        a is None and r is not None or _keyless(a, r) for a, r in zip(answer, reference))


def _has_nan(x) -> bool:
    return any(math.isnan(v) for v in _numbers(x))


def _finite(x) -> bool:
    return all(math.isfinite(v) for v in _numbers(x))


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
