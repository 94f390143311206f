"""A seeded fuzz of every public function of softmax.py, attention.py and stats.py.

Each public function (every callable name in a module's __all__, softmax.py's input
policy included) has one valid call written by hand (valid_calls).  Hostile calls are
derived from it: one argument at a time replaced by a hostile value (wrong types, None,
strings, NaN, +-inf, +-1e308, entries at and just above softmax.LIMIT, empty and ragged
lists, bools, huge and negative ints, nested junk, NumPy scalars and arrays when NumPy
is installed), a few seeded two-at-a-time replacements, and structured corruptions of
the valid vectors and matrices (a NaN, an inf, a 1e308 or an entry just above LIMIT at a
random entry, one ragged row, a column of +-1.7e308, every entry +-LIMIT).  Every call
must

- return normally or raise ValueError or TypeError whose message starts with the name
  of the function called, nothing else (no AttributeError, OverflowError, ...); for a
  function of the input policy (as_list, ..., in_log_range), the name its fn argument
  gives (the caller's function, "caller: x[1] is nan; ..."), or its own when fn, what or
  an option is bad ("as_int: fn must be a str naming the function called, not None");
- raise no warning (warnings are errors here: NumPy's float32 scalars must not make
  NumPy warn about an overflow inside the library);
- return nothing that holds a NaN or +inf (-inf only from the functions that pass
  masked logits through, MAY_RETURN_MINUS_INF; anything from as_list, which by contract
  leaves the entries unchecked);
- leave its arguments as they were;
- return within a second (a call still running after a second is interrupted, and
  after two such calls the rest of that function's fuzz is skipped).

Two tests do this: one per function runs every hostile call derived for it, and one
runs 4,000 calls in total, round-robin over every public function, each drawn at
random (seeded) from that function's hostile calls, and must end 0 bad of 4,000.

Sizes are requests for work, taken at their word: the fuzz does not ask a function in
WORK_SIZES for 10^30 draws or entries.  (causal_mask and the attention functions bound
n m by attention.MAX_SCORES, so huge sizes are fuzzed there.)  The input policy of
softmax.py is public (in its __all__), so it is fuzzed as every other public function:
its fn, what and options (masked, limit, minimum, maximum) get hostile values too.

Every public name (`__all__`) needs a valid call here, or a reason in NOT_CALLED.

The command line of stats.py gets the same treatment with hostile argv at small sizes:
it must return or exit through SystemExit (argparse), never raise anything else.
"""

import contextlib
import importlib
import inspect
import io
import math
import random
import re
import signal
import sys
import threading
import time
import warnings
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
LIMIT = 2.0 ** 200  # softmax.LIMIT, written out: the fuzz must not depend on the module loading
ABOVE_LIMIT = LIMIT * (1 + 2 ** -52)  # the next float above it


class ArrayOfFloats:
    """What a NumPy array of floats does where a number or a flag is expected, without NumPy:
    __index__ raises TypeError, and == gives something whose truth value raises ValueError."""

    def __index__(self):
        raise TypeError("only integer scalar arrays can be converted to a scalar index")

    def __eq__(self, other):
        return self

    __hash__ = object.__hash__

    def __bool__(self):
        raise ValueError("The truth value of an array with more than one element is ambiguous")

    def __repr__(self):
        return "ArrayOfFloats()"


# Values that replace one argument of a valid call: plausible mistakes and adversarial
# numbers.  A few are valid for some parameters (1, 0.5, 64): the call then just returns.
HOSTILE = [
    None, "3", "", b"1", "abc",  # wrong types and strings
    True, False,  # bool is not accepted as a number or an int
    NAN, INF, -INF, 1e308, -1e308, 5e-324, -0.0, 0.0, 0.5,  # floats at the edges
    LIMIT, -ABOVE_LIMIT, 2.0 ** 1021, [LIMIT, -LIMIT], [[ABOVE_LIMIT, 1.0]],  # the policy's limits
    # ints: zero, negative counts, huge (not 10**5000, whose repr raises: test_boundary's xfail)
    0, 1, -1, 2, 64, 10**30, -10**30, 10**400,
    complex(1, 1), Fraction(1, 3),  # numbers that are not floats
    [], [[]], [[], []], (), {}, set(),  # empty containers
    [1.0, "a"], [None], [NAN], [INF, 1.0], [-INF], [True, 1.0], [1e308, 1e308], [-1e308, 1e308],
    [[1.0, 2.0], [3.0]], [[1.0], [2.0, 3.0]],  # ragged rows
    [[NAN]], [[1e308, -1e308]], [[INF]], [[True]], [["1"]], [[None]],  # bad entries in a matrix
    [[[1.0]]], [1.0, [2.0]], {"a": 1}, object(), print, ArrayOfFloats(),  # nested junk
    "1/sqrt(d_k)", "none",  # strings that are valid somewhere else
]
if np is not None:
    HOSTILE += [np.int64(3), np.int64(-1), np.float64(NAN), np.float64(1e308), np.bool_(True),
                np.float32(1.5), np.array([1.0, 2.0]), np.array([[1.0, 2.0]]),
                np.array([[True, False]]), np.array([]), [[np.bool_(True)] * 3] * 2]


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
        # the input policy: fn names the caller's function, what its argument
        "as_list": (["caller", [1.0, 2.0], "x"], {}),
        "as_vector": (["caller", [1.0, -2.0]], {"what": "u", "masked": False, "limit": 4.0}),
        "as_matrix": (["caller", [[1.0, 2.0], [3.0, -INF]], "A"], {"masked": True}),
        "as_real": (["caller", 0.5, "scale"], {"masked": False, "limit": 2.0}),
        "as_int": (["caller", 3, "n"], {"minimum": 1, "maximum": 8}),
        "as_flag": (["caller", True, "is_causal"], {}),
        "as_logits": (["caller", [1.0, -INF]], {"what": "x"}),
        "as_probabilities": (["caller", [0.25, 0.75]], {"what": "p"}),
        "in_log_range": (["caller", [1.0, -INF]], {"what": "x"}),
        "shown": ([1.5], {}),
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
        "causal_mask": ([2, 3], {"align": "bottom-right"}),
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
        "correlated_dot_product_moments": ([8, 0.5], {}),
        "correlated_logits": ([16, 0.5], {"scale_name": "1/sqrt(d_k)", "m": 4}),
        "variance_standard_error": ([8, 100], {}),
        "median_interval": ([[3.0, 1.0, 2.0, 5.0]], {"coverage": 0.9}),
        "quantile_interval": ([[3.0, 1.0, 2.0, 5.0, 4.0], 0.25], {"coverage": 0.9}),
        "sample_dot_products": ([4, 5], {"seed": 1, "scale": 0.5, "rho": 0.25}),
        "layer_norm": ([[1.0, 2.0, 4.0]], {}),
        "sample_projected_dot_products": ([2, 3], {"d_model": 4, "seed": 1}),
        "additive_score_variance": ([4, 10], {"d": 4, "sigma_w": 0.5, "seed": 1}),
        "softmax_entropy": ([[0.0, 1.0, -1.0]], {}),
        "saturation_stats": ([4, "1/sqrt(d_k)"], {"m": 3, "trials": 2, "seed": 1}),
        "gradient_stats": ([4, "1"], {"m": 3, "trials": 2, "seed": 1}),
        "gradient_spread": ([4, "1"], {"m": 3, "trials": 2, "seed": 1}),
        "report": ([], {"seed": 1, "samples": 4, "trials": 2, "keys": 3, "dks": [4]}),
        "format_report": ([_small_report(st)], {}),
        "format_estimate": ([1026.2, 45.9], {}),
        "format_interval": ([st.Median(0.5, 0.25, 1.0, 0.95)], {}),
        "main": ([], {}),  # fuzzed through MAIN_ARGV below, never at its defaults
    }


_REPORTS = {}


def _small_report(st):
    """One small report per module object, made once (format_report's valid call)."""
    if st not in _REPORTS:
        _REPORTS[st] = st.report(seed=1, samples=4, trials=2, keys=3, dks=[4])
    return _REPORTS[st]


# Public names that are not functions to fuzz: data types and constants.  A new public
# name must land either here or in the valid-call table.
NOT_CALLED = {
    "softmax": {"Normalizer": "a NamedTuple: a plain record, any two values",
                "EMPTY": "a constant", "LIMIT": "a constant"},
    "attention": {"AttentionSteps": "a NamedTuple record", "AttentionGrads": "a NamedTuple record",
                  "Cost": "a NamedTuple record", "MAX_SCORES": "a constant"},
    "stats": {"Moments": "a NamedTuple record", "Saturation": "a NamedTuple record",
              "ScoreVariance": "a NamedTuple record", "GradientNorms": "a NamedTuple record",
              "GradientSpread": "a NamedTuple record", "Median": "a NamedTuple record",
              "Quantile": "a NamedTuple record",
              "Report": "a NamedTuple record", "SCALE_CHOICES": "a constant",
              "PERCENTILES": "a constant", "TOP_PERCENTS": "a constant"},
}

MAIN_ARGV = ["--samples", "20", "--dk", "4,8", "--trials", "2", "--keys", "3", "--seed", "1"]
MAIN_HOSTILE_VALUES = ["0", "1", "-1", "", "abc", "nan", "1e308", "4.5", "4,,8", "1,2",
                       "99999999999999999999", "-99999999999999999999", "--dk", "\u0663"]
MAIN_HOSTILE_ARGV = [3, "--seed 1", [1, 2], ("--seed", None), {"--seed": "1"}, b"--dk"]


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
        for bad in (NAN, INF, 1e308, -1e308, ABOVE_LIMIT, True, "1"):
            x = list(value)
            x[rng.randrange(len(x))] = bad
            out.append(x)
        out.append([1.7e308 * (-1) ** j for j in range(len(value))])  # sums overflow
        out.append([LIMIT * (-1) ** j for j in range(len(value))])  # at the limit: finite results
    elif _is_matrix(value):
        for bad in (NAN, INF, -INF, 1e308, -1e308, ABOVE_LIMIT):
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
        out.append([[LIMIT * (-1) ** (i + j) for j in range(len(r))]  # at the limit: finite
                    for i, r in enumerate(value)])
    rng.shuffle(out)
    return out[:CORRUPTIONS_PER_ARGUMENT]


# A size is a request for work: 10^30 of them would run for ever, by design (issue 15
# dropped the library's caps), so these parameters never get a huge int.
WORK_SIZES = {
    "stats.sample_dot_products": {"n"},
    "stats.sample_projected_dot_products": {"n", "d_model"},
    "stats.correlated_logits": {"m"},
    "stats.saturation_stats": {"m", "trials"},
    "stats.gradient_stats": {"m", "trials"},
    "stats.gradient_spread": {"m", "trials"},
    "stats.report": {"samples", "keys", "trials"},
}


def _is_huge_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 10 ** 9


def hostile_calls(fn_name, args, kwargs, parameters=()):
    """Yield (args, kwargs) derived from the valid call, each with one or two bad arguments.

    parameters: the function's parameter names in order, to find its WORK_SIZES.
    """
    rng = random.Random(zlib.crc32(fn_name.encode()))
    slots = [("arg", i) for i in range(len(args))] + [("kw", k) for k in kwargs]
    sizes = WORK_SIZES.get(fn_name, set())

    def allowed(slot, value):
        name = parameters[slot[1]] if slot[0] == "arg" else slot[1]
        return not (name in sizes and _is_huge_int(value))

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
            if allowed(slot, value):
                yield replaced([(slot, value)])
        for value in _corruptions(current(slot), rng):
            if allowed(slot, value):
                yield replaced([(slot, value)])
    if len(slots) >= 2:
        for _ in range(PAIRS_PER_FUNCTION):
            a, b = rng.sample(slots, 2)
            u, v = rng.choice(HOSTILE), rng.choice(HOSTILE)
            if allowed(a, u) and allowed(b, v):
                yield replaced([(a, u), (b, v)])


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


# The functions whose results may hold -inf: a masked logit passed through (log_softmax's
# log 0, attention_steps' scaled scores, the policy with masked=True, the empty state).
MAY_RETURN_MINUS_INF = {"log_softmax", "online_update", "online_merge", "rescale_factors",
                        "attention_steps", "as_vector", "as_matrix", "as_real", "as_logits",
                        "in_log_range"}
# The functions whose results are not checked for NaN and inf, with the reason.
UNCHECKED_RESULTS = {"as_list": "returns the caller's entries unchecked: by contract"}
# The input policy: a message starts with the caller's function that fn names, or with the
# policy function's own name when fn, what or an option is bad.
POLICY = {"as_list", "as_vector", "as_matrix", "as_real", "as_int", "as_flag", "as_logits",
          "as_probabilities", "in_log_range"}


def _bad_number(value, minus_inf_ok, depth=0):
    """The first NaN or inf (-inf allowed if minus_inf_ok) in a nested result, else None."""
    if depth > 20:
        return None
    if isinstance(value, (float, complex)):
        bad = value != value or value in (INF, -INF) and not (minus_inf_ok and value == -INF)
        return value if bad else None
    if isinstance(value, dict):
        value = list(value.values())
    if hasattr(value, "tolist") and not isinstance(value, type):  # NumPy values
        value = value.tolist()
    if isinstance(value, (list, tuple)):  # NamedTuples included
        for v in value:
            bad = _bad_number(v, minus_inf_ok, depth + 1)
            if bad is not None:
                return bad
    return None


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


def message_names(name, args):
    """The names an error message of the call may start with: the function's own; for a
    function of the input policy, also the caller's function that its fn (args[0]) names."""
    if name in POLICY and args and isinstance(args[0], str) and args[0]:
        return (name, args[0])
    return (name,)


def check_call(fn, name, args, kwargs):
    """Return None if the call behaves, else a one-line description of what went wrong."""
    named = message_names(name, args)
    before = _fresh((args, kwargs))
    shown = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    call = f"{name}({', '.join(shown)})"
    start = time.perf_counter()
    problem = result = None
    try:
        with _time_limit(TIME_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning is a failure, NumPy's included
            result = fn(*args, **kwargs)
    except _TooSlow:
        return f"{call}: still running after {TIME_LIMIT} s (interrupted)"
    except (ValueError, TypeError) as error:
        if not str(error).startswith(tuple(f"{n}: " for n in named)):
            problem = (f"{call}: {type(error).__name__} does not start with "
                       f"{' or '.join(repr(n + ': ') for n in named)}: "
                       f"{_short(str(error), 120)}")
    except Exception as error:  # the fuzz reports whatever else escapes
        problem = f"{call}: {type(error).__name__}: {_short(str(error), 120)}"
    seconds = time.perf_counter() - start
    bad = None if name in UNCHECKED_RESULTS else _bad_number(result, name in MAY_RETURN_MINUS_INF)
    if problem is None and bad is not None:
        problem = f"{call}: returned {bad}: {_short(result)}"
    if problem is None and seconds > TIME_LIMIT:
        problem = f"{call}: took {seconds:.2f} s"
    if not _unchanged(before, (args, kwargs)):
        problem = (problem + "; " if problem else f"{call}: ") + "mutated its arguments"
    return problem


def fuzz_function(module, name):
    """Return the problems found by every hostile call of one function, but KNOWN ones."""
    fn = getattr(module, name)
    full_name = f"{module.__name__}.{name}"
    args, kwargs = valid_calls(module.__name__)[name]
    parameters = list(inspect.signature(fn).parameters)
    known = [(reason, re.compile(pattern)) for reason, pattern, names in KNOWN
             if full_name in names]
    seen = set()
    problems, hangs = [], 0
    for a, kw in hostile_calls(full_name, args, kwargs, parameters):
        problem = check_call(fn, name, a, kw)
        matched = [reason for reason, pattern in known if problem and pattern.search(problem)]
        if matched:
            seen.update(matched)
        elif problem:
            problems.append(problem)
            hangs += "still running" in problem
            if hangs >= HANGS_BEFORE_GIVING_UP:
                problems.append(f"{name}: gave up after {hangs} calls that did not return")
                break
    problems += [f"{full_name}: the known violation no longer shows; remove it from KNOWN: "
                 f"{reason}" for reason, _ in known if reason not in seen]
    return problems


# Known violations of the contract, each with the fix proposed: (the violation and its fix,
# a pattern of the problem it causes, the functions where the fuzz finds it).  A hostile call
# whose problem matches is set aside; a listed function whose fuzz no longer shows the
# problem fails, so that the entry goes when the fix lands.
_NDARRAY_AS_INT = r"TypeError does not start with .*only integer scalar arrays can be converted"
_NDARRAY_TRUTH = r"ValueError does not start with .*The truth value of an (empty )?array"
KNOWN = []


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
    yield from MAIN_HOSTILE_ARGV  # not a list of str at all


def check_main(module, argv):
    """None if main(argv) returns, exits through argparse (SystemExit), or raises a
    TypeError or ValueError that starts with 'main: ', within the time limit and leaving
    argv as it was; else a one-line description of what went wrong."""
    sink, before = io.StringIO(), _fresh(argv)
    call = f"main({_short(argv)})"
    start = time.perf_counter()
    problem = None
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                _time_limit(TIME_LIMIT):
            module.main(argv)
    except _TooSlow:
        return f"{call}: still running after {TIME_LIMIT} s (interrupted)"
    except SystemExit:
        pass
    except (TypeError, ValueError) as error:
        if not str(error).startswith("main: "):
            problem = f"{call}: {type(error).__name__} does not start with 'main: ': {error}"
    except Exception as error:  # anything else is a failure
        problem = f"{call}: {type(error).__name__}: {_short(str(error), 120)}"
    if problem is None and time.perf_counter() - start > TIME_LIMIT:
        problem = f"{call}: took {time.perf_counter() - start:.2f} s"
    if not _unchanged(before, argv):
        problem = (problem + "; " if problem else f"{call}: ") + "mutated its arguments"
    return problem


def fuzz_main(module):
    problems = []
    for argv in _main_argvs():
        problem = check_main(module, argv)
        if problem:
            problems.append(problem)
            if sum("still running" in p for p in problems) >= HANGS_BEFORE_GIVING_UP:
                break
    return problems


# ------------------------------------------------------------------ the tests

def _functions():
    """(module, name) for every public function, collected without failing on a broken import."""
    out = []
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception as error:  # the tests of this name then fail with the error
            out.append(pytest.param(module_name, f"<import failed: {type(error).__name__}>",
                                    id=f"{module_name} does not import"))
            continue
        out += [pytest.param(module_name, n, id=f"{module_name}.{n}")
                for n in public_names(module) if n not in NOT_CALLED.get(module_name, {})]
    return out


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_function_has_a_valid_call_or_a_reason_not_to(module_name):
    module = importlib.import_module(module_name)
    names = public_names(module)
    table = valid_calls(module_name)
    missing = [n for n in names if n not in table and n not in NOT_CALLED[module_name]]
    assert not missing, f"{module_name}: add a valid call to tests/test_fuzz.py for {missing}"


@pytest.mark.parametrize("module_name, name", _functions())
def test_the_valid_call_returns_finite_numbers(module_name, name):
    module = importlib.import_module(module_name)
    if name == "main":
        with contextlib.redirect_stdout(io.StringIO()):
            assert module.main(list(MAIN_ARGV)) in (0, None)
        return
    args, kwargs = valid_calls(module_name)[name]
    result = getattr(module, name)(*args, **kwargs)
    bad = _bad_number(result, name in MAY_RETURN_MINUS_INF)
    assert bad is None, f"{name}{tuple(args)} returned {result!r}"


@pytest.mark.parametrize("module_name, name", _functions())
def test_hostile_calls_return_finite_numbers_or_raise_a_named_error_and_mutate_nothing(
        module_name, name):
    module = importlib.import_module(module_name)
    problems = fuzz_main(module) if name == "main" else fuzz_function(module, name)
    assert not problems, (f"{len(problems)} hostile calls of {module_name}.{name} misbehaved:\n"
                          + "\n".join(problems[:25]))


BUDGET = 4000  # hostile calls in total, over every public function


def _plans():
    """[(module, name, calls)]: every public function with its hostile calls, shuffled
    with a seed of its own (for main: hostile argv)."""
    plans = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            if name in NOT_CALLED[module_name]:
                continue
            if name == "main":
                calls = list(_main_argvs())
            else:
                args, kwargs = valid_calls(module_name)[name]
                parameters = list(inspect.signature(getattr(module, name)).parameters)
                calls = list(hostile_calls(f"{module_name}.{name}", args, kwargs, parameters))
            random.Random(zlib.crc32(name.encode())).shuffle(calls)
            plans.append((module, name, calls))
    return plans


def test_4000_hostile_calls_over_every_public_function_end_0_bad():
    # call k goes to function k mod F, which takes the next of its shuffled hostile calls
    plans = _plans()
    assert len(plans) >= 40  # every callable name of the three __all__ lists
    bad, counts = [], {}
    for k in range(BUDGET):
        module, name, calls = plans[k % len(plans)]
        call = calls[(k // len(plans)) % len(calls)]
        counts[name] = counts.get(name, 0) + 1
        if name == "main":
            problem = check_main(module, call)
        else:
            problem = check_call(getattr(module, name), name, *_fresh(call))
        if problem:
            bad.append(problem)
    assert sum(counts.values()) == BUDGET and len(counts) == len(plans)
    assert min(counts.values()) >= BUDGET // len(plans)  # every function, about equally
    assert not bad, f"{len(bad)} bad of {BUDGET:,}:\n" + "\n".join(bad[:25])


def _spin():
    while True:
        pass


def _unnamed_error(x):
    raise ValueError("x must be finite")  # does not name f


@pytest.mark.parametrize("fn, args, expected", [
    pytest.param(lambda x: x.append(1.0), [[2.0]], "mutated its arguments", id="append"),
    pytest.param(lambda x: x.__setitem__(0, NAN), [[2.0]], "mutated its arguments", id="set"),
    pytest.param(lambda x: [NAN], [[2.0]], "returned nan", id="returns NaN"),
    pytest.param(lambda x: {"a": (1.0, [NAN])}, [[2.0]], "returned nan", id="a nested NaN"),
    pytest.param(lambda x: [1.0, INF], [[2.0]], "returned inf", id="returns inf"),
    pytest.param(lambda x: [-INF], [[2.0]], "returned -inf", id="returns -inf"),
    pytest.param(lambda x: x[5], [[2.0]], "IndexError", id="IndexError"),
    pytest.param(lambda x: 1.0 / 0.0, [[2.0]], "ZeroDivisionError", id="ZeroDivisionError"),
    pytest.param(_unnamed_error, [[2.0]], "ValueError does not start with 'f: '",
                 id="an error that does not name the function"),
    pytest.param(lambda x: _spin(), [[2.0]], "still running", id="a hang"),
    pytest.param(lambda x: warnings.warn("overflow encountered in cast", RuntimeWarning),
                 [[2.0]], "RuntimeWarning: 'overflow", id="a warning"),
])
def test_the_checker_reports_mutation_nan_escaping_errors_and_hangs(monkeypatch, fn, args,
                                                                     expected):
    monkeypatch.setattr(sys.modules[__name__], "TIME_LIMIT", 0.05)  # the hang costs 0.05 s
    assert expected in (check_call(fn, "f", args, {}) or "")


def test_the_main_checker_reports_what_escapes_and_accepts_argparse_exits():
    class Main:
        @staticmethod
        def main(argv):
            if argv == ["exit"]:
                raise SystemExit(2)
            if argv == ["named"]:
                raise TypeError("main: argv must be a list of str")
            if argv == ["mutate"]:
                argv.append("x")
                return 0
            raise AttributeError("'int' object has no attribute 'split'")
    assert check_main(Main, ["exit"]) is None and check_main(Main, ["named"]) is None
    assert "AttributeError" in check_main(Main, ["other"])
    assert "mutated its arguments" in check_main(Main, ["mutate"])


def test_the_checker_accepts_named_errors_and_nan_in_unmutated_arguments():
    def refuse(x):
        raise ValueError("f: x must be finite")
    assert check_call(refuse, "f", [[NAN]], {}) is None
    assert check_call(lambda x: len(x), "f", [[3.0, NAN, 1.0]], {}) is None  # NaN in, none out
    assert check_call(lambda x: [-INF], "log_softmax", [[2.0]], {}) is None  # a masked logit
