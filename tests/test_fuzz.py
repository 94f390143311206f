"""A seeded fuzz of every public function of softmax.py, attention.py and stats.py.

Each public function has one valid call written by hand (valid_calls).  Hostile
calls are derived from it: one argument at a time replaced by a hostile value
(wrong types, None, strings, NaN, +-inf, +-1e308, empty and ragged lists, bools,
huge and negative ints, nested junk, NumPy scalars and arrays when NumPy is
installed), a few seeded two-at-a-time replacements, and structured corruptions of
the valid vectors and matrices (a NaN, an inf or a 1e308 at a random entry, one
ragged row, a column of +-1.7e308, every entry 1e200).  Every call must

- return normally or raise ValueError or TypeError, nothing else;
- return nothing that holds a NaN;
- leave its arguments as they were;
- return within a second (a call still running after a second is interrupted, and
  after two such calls the rest of that function's fuzz is skipped).

Every public name (`__all__`) needs a valid call here, or a reason in NOT_CALLED.

The command line of stats.py gets the same treatment with hostile argv at small sizes:
it must return or exit through SystemExit (argparse), never raise anything else.
"""

import contextlib
import importlib
import io
import math
import random
import signal
import sys
import threading
import time
import zlib
from fractions import Fraction

import pytest

MODULES = ("softmax", "attention", "stats")
TIME_LIMIT = 1.0  # seconds per call
HANGS_BEFORE_GIVING_UP = 2  # per function: keeps a broken module's fuzz from taking minutes
PAIRS_PER_FUNCTION = 8  # seeded two-at-a-time replacements
CORRUPTIONS_PER_ARGUMENT = 8  # seeded structured corruptions of each vector or matrix

try:
    import numpy as np
except ImportError:  # the NumPy part of the fuzz is skipped
    np = None

NAN, INF = math.nan, math.inf

# Values that replace one argument of a valid call: plausible mistakes and adversarial
# numbers.  A few are valid for some parameters (1, 0.5, 64): the call then just returns.
HOSTILE = [
    None, "3", "", b"1", "abc",  # wrong types and strings
    True, False,  # bool is not accepted as a number or an int
    NAN, INF, -INF, 1e308, -1e308, 5e-324, -0.0, 0.0, 0.5,  # floats at the edges
    0, 1, -1, 2, 64, 10**30, -10**30, 10**400,  # ints: zero, negative counts, huge
    complex(1, 1), Fraction(1, 3),  # numbers that are not floats
    [], [[]], [[], []], (), {}, set(),  # empty containers
    [1.0, "a"], [None], [NAN], [INF, 1.0], [-INF], [True, 1.0], [1e308, 1e308], [-1e308, 1e308],
    [[1.0, 2.0], [3.0]], [[1.0], [2.0, 3.0]],  # ragged rows
    [[NAN]], [[1e308, -1e308]], [[INF]], [[True]], [["1"]], [[None]],  # bad entries in a matrix
    [[[1.0]]], [1.0, [2.0]], {"a": 1}, object(), print,  # nested junk
    "1/sqrt(d_k)", "none",  # strings that are valid somewhere else
]
if np is not None:
    HOSTILE += [np.int64(3), np.int64(-1), np.float64(NAN), np.float64(1e308), np.bool_(True),
                np.float32(1.5), np.array([1.0, 2.0]), np.array([[1.0, 2.0]]),
                np.array([[True, False]]), np.array([])]


# ------------------------------------------------------------------ the valid calls

def valid_calls(name):
    """Return {function name: (args, kwargs)}: one valid call per public function of a module.

    Small sizes throughout: the whole fuzz must stay well under a few seconds.
    """
    module = importlib.import_module(name)
    return {"softmax": _softmax_calls, "attention": _attention_calls,
            "stats": _stats_calls}[name](module)


def _softmax_calls(sm):
    state = sm.Normalizer(0.5, 1.25)
    return {
        "softmax": ([[1.0, -2.0, 0.5]], {}),
        "log_softmax": ([[1.0, -2.0, -INF]], {}),
        "logsumexp": ([[0.0, 1.0, 2.0]], {}),
        "softmax_jacobian": ([[0.25, -1.0]], {}),
        "softmax_backward": ([[0.25, 0.75], [1.0, -2.0]], {}),
        "online_update": ([state, 2.0], {}),
        "online_merge": ([state, sm.Normalizer(1.5, 2.0)], {}),
        "rescale_factors": ([state, sm.Normalizer(-1.0, 1.0)], {}),
        "online_logsumexp": ([state], {}),
    }


Q = [[1.0, 0.5], [-0.5, 2.0]]  # n = 2, d_k = 2
K = [[0.5, -1.0], [1.0, 1.0], [0.0, 0.25]]  # m = 3
V = [[1.0], [2.0], [-3.0]]  # d_v = 1
MASK = [[True, False, True], [True, True, False]]
BIAS = [[0.0, 0.5, -INF], [1.0, 0.0, 0.0]]


def _attention_calls(at):
    dO = [[1.0], [-0.5]]
    P = [[0.25, 0.75, 0.0], [0.5, 0.25, 0.25]]
    I2 = [[1.0, 0.0], [0.0, 1.0]]
    return {
        "dot": ([[1.0, 2.0], [3.0, -4.0]], {}),
        "transpose": ([[[1.0, 2.0], [3.0, 4.0]]], {}),
        "matmul": ([[[1.0, 2.0]], [[3.0], [4.0]]], {}),
        "attention_steps": ([Q, K, V, MASK], {"bias": BIAS, "is_causal": False, "scale": 0.5}),
        "scaled_dot_product_attention": ([Q, K, V, MASK], {"is_causal": True, "scale": None}),
        "attention_backward": ([Q, K, V, dO, MASK], {"bias": BIAS, "scale": 0.75}),
        "score_gradient": ([P, V, dO], {}),
        "streaming_attention": ([Q, K, V, MASK], {"bias": BIAS, "block_size": 2}),
        "additive_attention": ([Q, K, V, [[1.0, 0.0]], [[0.5, 0.5]], [1.0], MASK], {}),
        "multi_head_attention": ([Q, K, I2, I2, I2, I2, 2, [[True] * 3, [True] * 3]],
                                 {"is_causal": False}),
        "dot_product_attention_cost": ([2, 3, 4, 5], {}),
        "additive_attention_cost": ([2, 3, 4, 5], {}),
    }


def _stats_calls(st):
    return {
        "mean": ([[1.0, 2.0, 4.0]], {}),
        "variance": ([[1.0, 2.0, 4.0]], {"ddof": 1}),
        "product_variance": ([0.5, 1.0, -0.5, 2.0], {}),
        "dot_product_variance": ([4], {"mean_q": 0.0, "var_q": 1.0, "mean_k": 0.5, "var_k": 2.0}),
        "scaled_variance": ([4.0, 0.5], {}),
        "scale_factor": (["1/sqrt(d_k)", 16], {}),
        "exact_dot_product_moments": ([3, [-1.0, 0.5, 2.0]], {"probabilities": None}),
        "dot_product_fourth_moment": ([8], {}),
        "variance_standard_error": ([8, 100], {}),
        "sample_dot_products": ([4, 5], {"seed": 1, "scale": 0.5}),
        "layer_norm": ([[1.0, 2.0, 4.0]], {}),
        "sample_projected_dot_products": ([2, 3], {"d_model": 4, "seed": 1}),
        "additive_score_variance": ([4, 10], {"d": 4, "sigma_w": 0.5, "seed": 1}),
        "random_trials": ([2], {"m": 3, "d_v": 2, "trials": 2, "seed": 1}),
        "softmax_entropy": ([[0.0, 1.0, -1.0]], {}),
        "saturation_stats": ([4, "1/sqrt(d_k)"], {"m": 3, "trials": 2, "seed": 1}),
        "gradient_stats": ([4, "none"], {"m": 3, "trials": 2, "seed": 1}),
        "main": ([], {}),  # fuzzed through MAIN_ARGV below, never at its defaults
    }


# Public names that are not functions to fuzz: data types and constants.  A new public
# name must land either here or in the valid-call table.
NOT_CALLED = {
    "softmax": {"Normalizer": "a NamedTuple: a plain record, any two values",
                "EMPTY": "a constant"},
    "attention": {"AttentionSteps": "a NamedTuple record", "AttentionGrads": "a NamedTuple record",
                  "Cost": "a NamedTuple record"},
    "stats": {"Moments": "a NamedTuple record", "Trial": "a NamedTuple record",
              "Saturation": "a NamedTuple record", "ScoreVariance": "a NamedTuple record",
              "GradientNorms": "a NamedTuple record",
              "SCALE_CHOICES": "a constant"},
}

MAIN_ARGV = ["--samples", "20", "--dk", "4,8", "--trials", "2", "--keys", "3", "--seed", "1"]
MAIN_HOSTILE_VALUES = ["0", "1", "-1", "", "abc", "nan", "1e308", "4.5", "4,,8", "1,2",
                       "99999999999999999999", "-99999999999999999999", "--dk", "\u0663"]


def public_names(module):
    """The module's __all__, or until it has one, its public callables defined there."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return sorted(n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
                  and getattr(v, "__module__", None) == module.__name__)


# ------------------------------------------------------------------ deriving hostile calls

def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_vector(v):
    return isinstance(v, list) and v and all(_is_number(x) for x in v)


def _is_matrix(v):
    return isinstance(v, list) and v and all(_is_vector(r) for r in v)


def _corruptions(value, rng):
    """Seeded structured corruptions of a valid vector or matrix argument."""
    out = []
    if _is_vector(value):
        for bad in (NAN, INF, 1e308, -1e308, True, "1"):
            x = list(value)
            x[rng.randrange(len(x))] = bad
            out.append(x)
        out.append([1.7e308 * (-1) ** j for j in range(len(value))])  # sums overflow
        out.append([1e200] * len(value))  # products overflow
    elif _is_matrix(value):
        for bad in (NAN, INF, -INF, 1e308, -1e308):
            A = [list(r) for r in value]
            A[rng.randrange(len(A))][rng.randrange(len(A[0]))] = bad
            out.append(A)
        ragged = [list(r) for r in value]
        i = rng.randrange(len(ragged))
        ragged[i] = ragged[i][:-1] if len(ragged[i]) > 1 else ragged[i] + [1.0]
        out.append(ragged)
        j = rng.randrange(len(value[0]))
        out.append([r[:j] + [1.7e308 * (-1) ** i] + r[j + 1:]  # a column of +-1.7e308
                    for i, r in enumerate(value)])
        out.append([[1e200] * len(r) for r in value])  # every product overflows
    rng.shuffle(out)
    return out[:CORRUPTIONS_PER_ARGUMENT]


def hostile_calls(fn_name, args, kwargs):
    """Yield (args, kwargs) derived from the valid call, each with one or two bad arguments."""
    rng = random.Random(zlib.crc32(fn_name.encode()))
    slots = [("arg", i) for i in range(len(args))] + [("kw", k) for k in kwargs]

    def replaced(changes):  # fresh copies: a function that mutates must not spoil later calls
        a, kw = _fresh(list(args)), _fresh(dict(kwargs))
        for (kind, where), value in _fresh(changes):
            if kind == "arg":
                a[where] = value
            else:
                kw[where] = value
        return a, kw

    def current(slot):
        return args[slot[1]] if slot[0] == "arg" else kwargs[slot[1]]

    for slot in slots:
        for value in HOSTILE:
            yield replaced([(slot, value)])
        for value in _corruptions(current(slot), rng):
            yield replaced([(slot, value)])
    if len(slots) >= 2:
        for _ in range(PAIRS_PER_FUNCTION):
            a, b = rng.sample(slots, 2)
            yield replaced([(a, rng.choice(HOSTILE)), (b, rng.choice(HOSTILE))])


# ------------------------------------------------------------------ checking one call

class _TooSlow(BaseException):  # not an Exception: library code must not be able to catch it
    pass


@contextlib.contextmanager
def _time_limit(seconds):
    """Interrupt the block after `seconds` (main thread only; elsewhere only measured)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise _TooSlow()

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _holds_nan(value, depth=0):
    if depth > 20:
        return False
    if isinstance(value, float):
        return value != value
    if isinstance(value, complex):
        return value != value
    if isinstance(value, (list, tuple)):  # NamedTuples included
        return any(_holds_nan(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_holds_nan(v, depth + 1) for v in value.values())
    if hasattr(value, "tolist") and not isinstance(value, type):  # NumPy values
        return _holds_nan(value.tolist(), depth + 1)
    return False


def _fresh(value):
    """A copy of every container in value (lists, dicts, tuples, arrays); leaves are shared.

    Much faster than copy.deepcopy, and sharing the leaves keeps NaN == NaN by identity.
    """
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_fresh(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, set):
        return set(value)
    if np is not None and isinstance(value, np.ndarray):
        return value.copy()
    return value  # immutable, or opaque (object(), a function): shared


def _unchanged(before, after):
    try:
        if bool(before == after):  # the fast path; identical leaves compare equal, NaN too
            return True
    except ValueError:  # an ndarray inside: no single truth value
        pass
    return _same(before, after)


def _same(a, b, depth=0):
    """Structural equality in which NaN equals NaN (arguments often hold NaN on purpose)."""
    if depth > 20:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    if np is not None and isinstance(a, np.ndarray):
        return a.shape == b.shape and _same(a.tolist(), b.tolist(), depth + 1)
    if isinstance(a, (int, str, bytes, complex, Fraction, bool, type(None), set, frozenset)):
        return a == b
    return True  # objects without a meaningful equality (object(), functions)


def _short(value, limit=90):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_call(fn, name, args, kwargs):
    """Return None if the call behaves, else a one-line description of what went wrong."""
    before = _fresh((args, kwargs))
    shown = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    call = f"{name}({', '.join(shown)})"
    start = time.perf_counter()
    problem = None
    try:
        with _time_limit(TIME_LIMIT):
            result = fn(*args, **kwargs)
    except _TooSlow:
        return f"{call}: still running after {TIME_LIMIT} s (interrupted)"
    except (ValueError, TypeError):
        result = None
    except Exception as error:  # the fuzz reports whatever else escapes
        problem = f"{call}: {type(error).__name__}: {_short(str(error), 120)}"
        result = None
    seconds = time.perf_counter() - start
    if problem is None and _holds_nan(result):
        problem = f"{call}: returned a NaN: {_short(result)}"
    if problem is None and seconds > TIME_LIMIT:
        problem = f"{call}: took {seconds:.2f} s"
    if not _unchanged(before, (args, kwargs)):
        problem = (problem + "; " if problem else f"{call}: ") + "mutated its arguments"
    return problem


def fuzz_function(module, name):
    """Return the problems found by every hostile call of one function."""
    fn = getattr(module, name)
    args, kwargs = valid_calls(module.__name__)[name]
    problems, hangs = [], 0
    for a, kw in hostile_calls(f"{module.__name__}.{name}", args, kwargs):
        problem = check_call(fn, name, a, kw)
        if problem:
            problems.append(problem)
            hangs += "still running" in problem
            if hangs >= HANGS_BEFORE_GIVING_UP:
                problems.append(f"{name}: gave up after {hangs} calls that did not return")
                break
    return problems


def _main_argvs():
    yield list(MAIN_ARGV)
    for i in range(1, len(MAIN_ARGV), 2):  # each option's value replaced
        for value in MAIN_HOSTILE_VALUES:
            argv = list(MAIN_ARGV)
            argv[i] = value
            yield argv
    yield MAIN_ARGV + ["--worked-examples"]
    yield MAIN_ARGV + ["--no-such-option"]
    yield MAIN_ARGV[:-1]  # --seed without a value


def fuzz_main(module):
    problems, hangs = [], 0
    for argv in _main_argvs():
        sink = io.StringIO()
        call = f"main({argv})"
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                    _time_limit(TIME_LIMIT):
                module.main(argv)
        except _TooSlow:
            problems.append(f"{call}: still running after {TIME_LIMIT} s (interrupted)")
            hangs += 1
            if hangs >= HANGS_BEFORE_GIVING_UP:
                break
            continue
        except SystemExit:
            pass
        except Exception as error:  # anything but SystemExit is a failure
            problems.append(f"{call}: {type(error).__name__}: {_short(str(error), 120)}")
        if time.perf_counter() - start > TIME_LIMIT:
            problems.append(f"{call}: took {time.perf_counter() - start:.2f} s")
    return problems


# ------------------------------------------------------------------ the tests

def _functions():
    """(module, name) for every public function, collected without failing on a broken import."""
    out = []
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception as error:  # the tests of this name then fail with the error
            out.append((module_name, f"<import failed: {type(error).__name__}>"))
            continue
        out += [(module_name, n) for n in public_names(module)
                if n not in NOT_CALLED.get(module_name, {})]
    return out


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_function_has_a_valid_call_or_a_reason_not_to(module_name):
    module = importlib.import_module(module_name)
    names = public_names(module)
    table = valid_calls(module_name)
    missing = [n for n in names if n not in table and n not in NOT_CALLED[module_name]]
    assert not missing, f"{module_name}: add a valid call to tests/test_fuzz.py for {missing}"


@pytest.mark.parametrize("module_name, name", _functions())
def test_the_valid_call_returns_without_nan(module_name, name):
    module = importlib.import_module(module_name)
    if name == "main":
        with contextlib.redirect_stdout(io.StringIO()):
            assert module.main(list(MAIN_ARGV)) in (0, None)
        return
    args, kwargs = valid_calls(module_name)[name]
    result = getattr(module, name)(*args, **kwargs)
    assert not _holds_nan(result), f"{name}{tuple(args)} returned {result!r}"


@pytest.mark.parametrize("module_name, name", _functions())
def test_hostile_calls_raise_only_value_or_type_error_return_no_nan_and_mutate_nothing(
        module_name, name):
    module = importlib.import_module(module_name)
    problems = fuzz_main(module) if name == "main" else fuzz_function(module, name)
    assert not problems, (f"{len(problems)} hostile calls of {module_name}.{name} misbehaved:\n"
                          + "\n".join(problems[:25]))


def _spin():
    while True:
        pass


@pytest.mark.parametrize("fn, args, expected", [
    (lambda x: x.append(1.0), [[2.0]], "mutated its arguments"),
    (lambda x: x.__setitem__(0, NAN), [[2.0]], "mutated its arguments"),
    (lambda x: [NAN], [[2.0]], "returned a NaN"),
    (lambda x: {"a": (1.0, [NAN])}, [[2.0]], "returned a NaN"),
    (lambda x: x[5], [[2.0]], "IndexError"),
    (lambda x: 1.0 / 0.0, [[2.0]], "ZeroDivisionError"),
    (lambda x: _spin(), [[2.0]], "still running"),
])
def test_the_checker_reports_mutation_nan_escaping_errors_and_hangs(monkeypatch, fn, args,
                                                                     expected):
    monkeypatch.setattr(sys.modules[__name__], "TIME_LIMIT", 0.05)  # the hang costs 0.05 s
    assert expected in (check_call(fn, "f", args, {}) or "")


def test_the_checker_accepts_value_and_type_errors_and_nan_in_unmutated_arguments():
    def refuse(x):
        raise ValueError("f: x must be finite")
    assert check_call(refuse, "f", [[NAN]], {}) is None
    assert check_call(lambda x: len(x), "f", [[3.0, NAN, 1.0]], {}) is None  # NaN in, none out
