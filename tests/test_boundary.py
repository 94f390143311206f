"""The one input policy at the public boundary of softmax.py and attention.py.

TypeError for the wrong kind of thing, ValueError for a wrong value or shape, each naming
the function called, the argument as passed, the rule and the shapes that matter; one
rule, one message.  The tests pin that meaning (function, argument, index, rule), not
every word, except where a message once named the wrong rule: those are pinned whole.
Every entry of a vector or matrix argument is finite and at most softmax.LIMIT = 2^200 in
size: that keeps every result finite, so larger entries are refused, never rescued.
softmax and its logarithms take any finite logit; softmax_backward takes
|g_i| <= 2^1021.  Masks hold bools; NumPy-like arrays are read through tolist(), integral
types through __index__.

The policy itself (softmax.as_list, ..., shown) is public: each of its functions has its
own tests first, for what it returns and refuses, and for its own arguments (fn, what,
masked, limit, minimum, maximum), which it refuses in its own name.
"""

import math
import re
from fractions import Fraction

import pytest

from attention import (MAX_SCORES, additive_attention, additive_attention_cost,
                       attention_backward, attention_steps, causal_mask, dot,
                       dot_product_attention_cost, matmul, multi_head_attention,
                       scaled_dot_product_attention, score_gradient, streaming_attention,
                       transpose)
from softmax import (EMPTY, LIMIT, Normalizer, as_flag, as_int, as_list, as_logits,
                     as_matrix, as_probabilities, as_real, as_vector, in_log_range,
                     log_softmax, logsumexp, online_logsumexp, online_merge, online_update,
                     rescale_factors, shown, softmax, softmax_backward,
                     softmax_jacobian)

INF, NAN = math.inf, math.nan
LARGEST = 1.7976931348623157e308  # the largest float
ABOVE_LIMIT = LIMIT * (1 + 2 ** -52)  # the next float above LIMIT
G_LIMIT = 2.0 ** 1021  # softmax_backward's bound on |g_i|
Q, K, V = [[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 2.0], [1.0, -1.0]], [[1.0], [2.0], [3.0]]
I2 = [[1.0, 0.0], [0.0, 1.0]]


def all_finite(value):
    """True if every number in a nested structure of lists and tuples is finite."""
    if isinstance(value, (list, tuple)):
        return all(all_finite(v) for v in value)
    return math.isfinite(value)


class Index:
    """An integral type that is not int, as numpy.int64 is: it has __index__."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


class bool_:  # noqa: N801 - named as numpy's: the library no longer goes by the name
    """A flag type that is not bool, named as numpy.bool_ is."""

    def __init__(self, value):
        self.value = value

    def __bool__(self):
        return self.value


class Array:
    """An ndarray-like object: not a Sequence, but with tolist()."""

    def __init__(self, rows):
        self.rows = rows

    def tolist(self):
        return [list(r) if isinstance(r, list) else r for r in self.rows]


# ------------------------------------------------------------ the input policy, one by one
# Each policy function's contract: what it returns, the rules it refuses in the caller's
# name (fn), and its own arguments refused in its own name.

def test_as_list_returns_a_new_list_of_a_sequence_or_an_array():
    """as_list copies a tuple, a list or an array's tolist() into a new list, and leaves the
    entries unchecked (NaN and strs included: as_vector and the other checks judge them)."""
    x = [1.0, NAN, "a"]
    got = as_list("f", x, "x")
    assert got[0] == 1.0 and got[1] is NAN and got[2] == "a" and got is not x
    assert as_list("f", (1, 2), "x") == [1, 2]
    assert as_list("f", Array([1.0, 2.0]), "x") == [1.0, 2.0]


@pytest.mark.parametrize("bad, kind", [("12", "str"), (b"12", "bytes"), ({1.0, 2.0}, "set"),
                                       ({"a": 1}, "dict"), (3.0, "float"), (None, "NoneType")])
def test_as_list_refuses_what_is_not_a_sequence_naming_its_type(bad, kind):
    """A str is a sequence of characters, not of numbers: refused with sets, dicts and
    scalars, by type."""
    with pytest.raises(TypeError, match=f"^f: x must be a list, not {kind}$"):
        as_list("f", bad, "x")


def test_as_list_refuses_an_empty_sequence():
    """An empty list or array has no entry to compute with."""
    for empty in ([], (), Array([])):
        with pytest.raises(ValueError, match="^f: x is empty; it needs at least one entry$"):
            as_list("f", empty, "x")


def test_as_vector_returns_new_floats_and_names_the_bad_entry():
    """Every entry becomes a float, in a new list, on the fast path (all floats) and the slow
    one alike; a bad entry is named by its index and value."""
    x = [1, Fraction(1, 2), 2.5]
    got = as_vector("f", x, "u")
    assert got == [1.0, 0.5, 2.5] and all(type(v) is float for v in got) and got is not x
    floats = [1.0, -2.0]
    assert as_vector("f", floats) == floats and as_vector("f", floats) is not floats
    with pytest.raises(TypeError, match=r"^f: u\[1\] is True, not a real number$"):
        as_vector("f", [1.0, True], "u")
    with pytest.raises(TypeError, match=r"^f: u\[0\] is 1j, not a real number$"):
        as_vector("f", [1j, 0.0], "u")
    with pytest.raises(ValueError, match=r"^f: u\[1\] is nan; it must be finite$"):
        as_vector("f", [1.0, NAN], "u")


def test_as_vector_admits_minus_inf_only_where_masked():
    """-inf is a mask, allowed with masked=True; +inf never is."""
    assert as_vector("f", [0.0, -INF], masked=True) == [0.0, -INF]
    assert as_vector("f", [-INF, -INF], masked=True) == [-INF, -INF]  # a masked bias row
    with pytest.raises(ValueError, match=r"^f: x\[1\] is -inf; it must be finite$"):
        as_vector("f", [0.0, -INF])
    with pytest.raises(ValueError, match=r"^f: x\[1\] is inf; it must be finite or -inf$"):
        as_vector("f", [0.0, INF], masked=True)


def test_as_vector_takes_entries_up_to_its_limit_and_says_why_the_limit_is_there():
    """LIMIT = 2^200 is admitted, the next float above it is not, and the message says the
    rule (a size), its value as a power of two, and its reason; another limit is shown as
    given, and the largest float's limit is the float range."""
    assert as_vector("f", [LIMIT, -LIMIT]) == [LIMIT, -LIMIT]
    assert as_vector("f", [1e300], limit=LARGEST) == [1e300]
    assert as_vector("f", [2.0], limit=2) == [2.0]
    with pytest.raises(ValueError, match=re.escape(
            f"f: x[0] is {-ABOVE_LIMIT!r}; it must be at most 2^200 (about 1.6e+60) in size, "
            "so that sums of products stay within the float range")):
        as_vector("f", [-ABOVE_LIMIT, 0.0])
    with pytest.raises(ValueError, match=r"^f: x\[1\] is 3.0; it must be at most 2.0 in size$"):
        as_vector("f", [1.0, 3.0], limit=2.0)
    with pytest.raises(ValueError, match=r"^f: x\[0\] is 4e\+20; it must be at most 3e\+20 in "
                                         "size$"):
        as_vector("f", [4e20], limit=3e20)  # large, but no power of two
    with pytest.raises(ValueError, match=r"^f: x\[0\] is 0.75; it must be at most 0.5 in size$"):
        as_vector("f", [0.75], limit=0.5)  # a limit below 1 is a limit too
    with pytest.raises(ValueError, match=r"^f: x\[0\] is an int of 400 digits; it must be at "
                                         r"most the largest float \(about 1.8e\+308\) in size$"):
        as_vector("f", [10 ** 399], limit=LARGEST)


def test_as_matrix_checks_every_row_and_refuses_a_ragged_one():
    """A matrix is a non-empty list of rows of equal length, each checked as a vector; the
    rows returned are new lists."""
    A = [[1, 2], (3, 4)]
    got = as_matrix("f", A, "A")
    assert got == [[1.0, 2.0], [3.0, 4.0]] and got[1] is not A[1] and got is not A
    assert as_matrix("f", Array([[1.0], [2.0]]), "A") == [[1.0], [2.0]]
    assert as_matrix("f", [[-INF, 0.0]], "B", masked=True) == [[-INF, 0.0]]
    with pytest.raises(ValueError, match=r"^f: B\[0\]\[0\] is -inf; it must be finite$"):
        as_matrix("f", [[-INF, 0.0]], "B")
    with pytest.raises(ValueError, match=r"^f: A\[1\] has length 2 but A\[0\] has length 1; "
                                         "the rows of A must all have the same length$"):
        as_matrix("f", [[1.0], [1.0, 2.0]], "A")
    with pytest.raises(ValueError, match=r"^f: A\[1\]\[1\] is nan"):
        as_matrix("f", [[1.0, 2.0], [3.0, NAN]], "A")
    with pytest.raises(ValueError, match=r"^f: A\[1\] is empty"):
        as_matrix("f", [[1.0], []], "A")


def test_as_matrix_says_that_a_matrix_is_a_list_of_rows():
    """A vector where a matrix belongs, or a row that is not a list, is named with the rule
    that a matrix is a list of rows."""
    rule = "not a row; a matrix is a list of rows, so one row r is written [r]"
    with pytest.raises(TypeError, match=re.escape(f"f: A[0] is 1.0, {rule}")):
        as_matrix("f", [1.0, 2.0, 3.0], "A")
    with pytest.raises(TypeError, match=re.escape(f"f: A[1] is 'a', {rule}")):
        as_matrix("f", [[1.0], "a"], "A")
    with pytest.raises(TypeError, match="^f: A must be a list, not float$"):
        as_matrix("f", 1.0, "A")


def test_as_real_returns_a_float_of_any_real_number_within_the_limit():
    """ints, Fractions and floats become floats; bools, complex numbers, strs and None are
    not real numbers; NaN and inf are not finite."""
    assert as_real("f", Fraction(1, 4), "c") == 0.25 and type(as_real("f", 3, "c")) is float
    assert as_real("f", -INF, "x", masked=True) == -INF
    assert as_real("f", -LIMIT, "c") == -LIMIT
    for bad, text in ((None, "None"), (True, "True"), (1j, "1j"), ("1", "'1'")):
        with pytest.raises(TypeError, match=f"^f: c is {re.escape(text)}, not a real number$"):
            as_real("f", bad, "c")
    for bad in (NAN, INF, -INF):
        with pytest.raises(ValueError, match=f"^f: c is {bad!r}; it must be finite$"):
            as_real("f", bad, "c")
    with pytest.raises(ValueError, match="^f: x is nan; it must be finite or -inf$"):
        as_real("f", NAN, "x", masked=True)


def test_as_real_refuses_an_exact_number_beyond_the_float_range_by_its_size():
    """An int or a Fraction too large for a float is finite: the rule it breaks is the size
    (once reported as 'must be finite')."""
    with pytest.raises(ValueError, match="^f: c is an int of 401 digits; it must be at most "
                                         r"2\^200 \(about 1.6e\+60\) in size"):
        as_real("f", -10 ** 400, "c")
    with pytest.raises(ValueError, match=r"^f: x is Fraction\(1000+ \.\.\.; it must be at most "
                                         r"the largest float \(about 1.8e\+308\) in size$"):
        as_real("f", Fraction(10 ** 400, 3), "x", masked=True, limit=LARGEST)


def test_as_int_takes_any_integral_type_within_its_bounds():
    """An int, or any type with __index__ (NumPy's), comes back an int; a bool, a float, a
    str or None is refused; each bound broken is named alone."""
    assert as_int("f", Index(3), "n") == 3 and type(as_int("f", Index(3), "n")) is int
    assert as_int("f", 4, "n", minimum=1, maximum=4) == 4
    assert as_int("f", 3, "n", minimum=3, maximum=3) == 3  # one int allowed
    assert as_int("f", -2 ** 64, "seed", minimum=-2 ** 64) == -2 ** 64
    assert as_int("f", 10 ** 40, "n", maximum=None) == 10 ** 40
    for bad, text in ((True, "True"), (2.0, "2.0"), ("2", "'2'"), (None, "None")):
        with pytest.raises(TypeError, match=f"^f: n must be an int, not {re.escape(text)}$"):
            as_int("f", bad, "n")
    with pytest.raises(ValueError, match="^f: n must be at least 0, not -1$"):
        as_int("f", -1, "n", minimum=0, maximum=4)  # the bound broken, not both
    with pytest.raises(ValueError, match="^f: n must be at most 4, not 5$"):
        as_int("f", 5, "n", maximum=4)


def test_as_int_shows_a_bound_that_is_a_power_of_two_by_its_exponent():
    """2^53 is shown as 2^53, not 9007199254740992 (and 2^64 - 1, -2^64 likewise); a small
    bound, or one that is no power of two, as it is."""
    with pytest.raises(ValueError, match=r"^f: d_k must be at most 2\^53, not 9007199254740993$"):
        as_int("f", 2 ** 53 + 1, "d_k", maximum=2 ** 53)
    with pytest.raises(ValueError, match=r"^f: seed must be at most 2\^64 - 1, not "):
        as_int("f", 2 ** 64, "seed", 0, 2 ** 64 - 1)
    with pytest.raises(ValueError, match=r"^f: seed must be at least -2\^64, not "):
        as_int("f", -2 ** 64 - 1, "seed", minimum=-2 ** 64)
    with pytest.raises(ValueError, match="^f: n must be at most 1048575, not 1048576$"):
        as_int("f", 2 ** 20, "n", maximum=2 ** 20 - 1)  # below a million: printed in full
    with pytest.raises(ValueError, match=r"^f: n must be at most 2\^20, not 1048577$"):
        as_int("f", 2 ** 20 + 1, "n", maximum=2 ** 20)  # from 2^20 on, by its exponent
    with pytest.raises(ValueError, match="^f: n must be at least -18446744073709551615, not "):
        as_int("f", -2 ** 64, "n", minimum=-(2 ** 64 - 1))  # only 2^64 - 1 itself is short
    with pytest.raises(ValueError, match="^f: n must be at most 3000000, not 3000001$"):
        as_int("f", 3000001, "n", maximum=3000000)
    with pytest.raises(ValueError, match="^f: n must be at most 4, not an int of 5001 digits$"):
        as_int("f", 10 ** 5000, "n", maximum=4)


def test_as_flag_takes_true_and_false_only():
    """1, 0, "yes", None and a type named like numpy's bool_ are not flags."""
    assert as_flag("f", False, "is_causal") is False and as_flag("f", True, "x") is True
    for bad in (1, 0, "yes", None, bool_(True)):
        with pytest.raises(TypeError, match="^f: is_causal must be True or False, not "):
            as_flag("f", bad, "is_causal")


def test_as_logits_takes_any_finite_float_and_minus_inf_but_not_minus_inf_everywhere():
    """Softmax takes any finite logit (its max-shift keeps it in range) and -inf as a mask;
    with every logit -inf no distribution exists."""
    assert as_logits("f", [LARGEST, -INF, 1]) == [LARGEST, -INF, 1.0]
    with pytest.raises(ValueError, match="^f: x is -inf everywhere; at least one logit must be "
                                         "finite for a probability distribution to exist$"):
        as_logits("f", [-INF, -INF])
    with pytest.raises(ValueError, match=r"^f: x\[0\] is inf; it must be finite or -inf$"):
        as_logits("f", [INF, 0.0])


def test_as_probabilities_takes_entries_of_at_least_0_that_sum_to_1_within_1e_9():
    """A probability vector, as softmax returns it: a negative entry, or a sum 1e-9 from 1,
    is named as the logits passed by mistake would be."""
    assert as_probabilities("f", [0.25, 0.75]) == [0.25, 0.75]
    assert as_probabilities("f", [0.5, 0.5 + 5e-10]) == [0.5, 0.5 + 5e-10]
    with pytest.raises(ValueError, match=r"^f: p\[1\] is -0.5; a probability cannot be "):
        as_probabilities("f", [1.5, -0.5])
    with pytest.raises(ValueError, match=r"^f: p sums to 1.00001, not 1 \(within 1e-9\)"):
        as_probabilities("f", [0.5, 0.50001])
    with pytest.raises(ValueError, match=r"^f: p\[0\] is -inf; it must be finite$"):
        as_probabilities("f", [-INF, 1.0])  # not a mask here


def test_in_log_range_checks_the_logits_and_their_distance_below_the_max():
    """in_log_range checks its input as as_logits does, then refuses a finite logit more than
    the largest float below the max, whose log-probability would not be a float."""
    half = LARGEST / 2
    assert in_log_range("f", [half, -half, -INF]) == [half, -half, -INF]
    x = [1.0, 2]
    assert in_log_range("f", x) == [1.0, 2.0] and x == [1.0, 2]
    with pytest.raises(ValueError, match=r"^f: x\[1\] is -1.7e\+308, more than the largest "
                                         r"float below the max x\[0\] = 1.7e\+308"):
        in_log_range("f", [1.7e308, -1.7e308])
    with pytest.raises(ValueError, match="^f: x is -inf everywhere"):
        in_log_range("f", [-INF])
    with pytest.raises(TypeError, match="^f: x must be a list, not str$"):
        in_log_range("f", "ab")


def test_shown_cuts_a_long_repr_and_sizes_a_long_int():
    """A message shows a value by its repr, at most 60 characters; an int of more than 40
    digits by its number of digits."""
    assert shown(1.5) == "1.5" and shown("ab") == "'ab'"
    assert shown(10 ** 40) == repr(10 ** 40)  # 41 digits: still printed
    assert shown(2 ** 133 - 1) == repr(2 ** 133 - 1)  # the largest int printed (41 digits)
    assert shown(2 ** 133) == "an int of 41 digits"  # the smallest by its size
    assert shown(-10 ** 41) == "an int of 42 digits"
    long = shown(list(range(100)))
    assert len(long) == 60 and long.endswith(" ...") and long.startswith("[0, 1, 2, ")
    assert shown("a" * 58) == repr("a" * 58)  # a repr of exactly 60 characters: whole
    assert shown("a" * 59) == "'" + "a" * 55 + " ..."  # 61: cut to 60


class BrokenRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


def test_shown_names_by_its_type_a_value_whose_repr_fails():
    """Whatever a repr raises (an int too long to print inside a Fraction, nesting too deep,
    a broken __repr__), the message still gets made."""
    assert shown(Fraction(10 ** 5000, 3)) == "a Fraction that cannot be printed"
    deep = [1.0]
    for _ in range(100_000):
        deep = [deep]
    assert shown(deep) == "a list that cannot be printed"
    assert shown(BrokenRepr()) == "a BrokenRepr that cannot be printed"
    with pytest.raises(TypeError, match=r"^f: x\[0\] is a BrokenRepr that cannot be printed, "):
        as_vector("f", [BrokenRepr()])


# A valid call of each policy function, by keyword: fn and what (and the options) are
# replaced one at a time below.
POLICY_CALLS = {
    "as_list": (as_list, {"x": [1.0]}),
    "as_vector": (as_vector, {"x": [1.0], "masked": False, "limit": 2.0}),
    "as_matrix": (as_matrix, {"A": [[1.0]], "masked": True}),
    "as_real": (as_real, {"value": 1.0, "masked": True, "limit": 2.0}),
    "as_int": (as_int, {"value": 3, "minimum": 1, "maximum": 4}),
    "as_flag": (as_flag, {"value": True}),
    "as_logits": (as_logits, {"x": [1.0]}),
    "as_probabilities": (as_probabilities, {"p": [1.0]}),
    "in_log_range": (in_log_range, {"x": [1.0]}),
}


@pytest.mark.parametrize("name", POLICY_CALLS)
@pytest.mark.parametrize("change, error, message", [
    ({"fn": None}, TypeError, "fn must be a str naming the function called, not None"),
    ({"fn": 3}, TypeError, "fn must be a str naming the function called, not 3"),
    ({"fn": ""}, ValueError, "fn is empty; it must name the function called"),
    ({"what": ["x"]}, TypeError, "what must be a str naming the argument checked, not ['x']"),
    ({"what": ""}, ValueError, "what is empty; it must name the argument checked"),
    ({"fn": None, "what": None}, TypeError, "fn must be a str"),  # the first named first
], ids=["fn None", "fn an int", "fn empty", "what a list", "what empty", "both None"])
def test_a_bad_fn_or_what_is_refused_in_the_policy_functions_own_name(name, change, error,
                                                                       message):
    """fn and what are the policy's own arguments: misused, the policy function is the one
    called wrongly, and its message names it (the valid value is accepted)."""
    function, kwargs = POLICY_CALLS[name]
    assert function(fn="caller", what="x", **kwargs) is not None
    with pytest.raises(error) as raised:
        function(**dict({"fn": "caller", "what": "x"}, **kwargs, **change))
    assert str(raised.value).startswith(f"{name}: {message}"), str(raised.value)


@pytest.mark.parametrize("name, change, error, message", [
    ("as_vector", {"masked": 1}, TypeError, "masked must be True or False, not 1"),
    ("as_matrix", {"masked": None}, TypeError, "masked must be True or False, not None"),
    ("as_real", {"masked": "yes"}, TypeError, "masked must be True or False, not 'yes'"),
    ("as_vector", {"limit": None}, TypeError, "limit is None, not a real number"),
    ("as_real", {"limit": True}, TypeError, "limit is True, not a real number"),
    ("as_real", {"limit": NAN}, ValueError, "limit is nan; it must be finite"),
    ("as_vector", {"limit": INF}, ValueError, "limit is inf; it must be finite"),
    ("as_vector", {"limit": -INF}, ValueError, "limit is -inf; it must be finite"),
    ("as_real", {"limit": 0}, ValueError, "limit is 0; it must be positive"),
    ("as_vector", {"limit": -1.0}, ValueError, "limit is -1.0; it must be positive"),
    ("as_real", {"limit": 10 ** 400}, ValueError, "limit is an int of 401 digits; it must be "
                                                  "at most the largest float"),
    ("as_int", {"minimum": 1.5}, TypeError, "minimum must be an int, not 1.5"),
    ("as_int", {"minimum": None}, TypeError, "minimum must be an int, not None"),
    ("as_int", {"maximum": "4"}, TypeError, "maximum must be an int or None, not '4'"),
    ("as_int", {"maximum": 0}, ValueError, "maximum is 0, below minimum = 1; no int would "
                                           "pass"),
])
def test_a_bad_option_is_refused_in_the_policy_functions_own_name(name, change, error,
                                                                   message):
    """masked is a flag, limit a positive finite real number, minimum an int and maximum an
    int (or None) at least minimum: else the policy function says so in its own name."""
    function, kwargs = POLICY_CALLS[name]
    with pytest.raises(error) as raised:
        function(**dict({"fn": "caller", "what": "x"}, **dict(kwargs, **change)))
    assert str(raised.value).startswith(f"{name}: {message}"), str(raised.value)


def test_a_policy_message_names_the_callers_function_and_argument():
    """The value's rules are the caller's: the message starts with fn, not the policy."""
    with pytest.raises(ValueError, match=r"^softmax: x\[0\] is nan; "):
        as_logits("softmax", [NAN])
    with pytest.raises(ValueError, match=r"^my_attention: K\[1\]\[0\] is inf; "):
        as_matrix("my_attention", [[0.0], [INF]], "K")


# ------------------------------------------------------------ the messages of issue 28
# Each was a slip: the rule not the one broken, a number the caller did not write, a plural
# of one.  Pinned whole.

@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: dot([10 ** 400], [1.0]), ValueError,
                 "dot: u[0] is an int of 401 digits; it must be at most 2^200 (about 1.6e+60) "
                 "in size, so that sums of products stay within the float range",
                 id="a finite int beyond LIMIT (was: must be finite, |x| <= 1.61e+60)"),
    pytest.param(lambda: softmax([Fraction(10 ** 400, 3)]), ValueError,
                 f"softmax: x[0] is {shown(Fraction(10 ** 400, 3))}; it must be at most the "
                 "largest float (about 1.8e+308) in size",
                 id="a finite Fraction beyond the float range (was: must be finite or -inf)"),
    pytest.param(lambda: transpose([1.0, 2.0, 3.0]), TypeError,
                 "transpose: A[0] is 1.0, not a row; a matrix is a list of rows, so one row r "
                 "is written [r]", id="a vector for a matrix"),
    pytest.param(lambda: matmul([[1.0, 2.0], [3.0]], [[1.0], [2.0]]), ValueError,
                 "matmul: A[1] has length 1 but A[0] has length 2; the rows of A must all "
                 "have the same length", id="a ragged row of one (was: 1 entries)"),
])
def test_the_message_names_the_rule_broken_in_the_callers_terms(call, error, message):
    """The whole message: the function called, the argument as passed, the rule broken."""
    assert refused(error, call) == message


# ------------------------------------------------------------ the limits

REFUSED_ABOVE_LIMIT = [
    pytest.param("dot", "u[1]", lambda x: dot([1.0, x], [1.0, 1.0]), id="dot u"),
    pytest.param("matmul", "B[0][1]", lambda x: matmul([[1.0]], [[1.0, x]]), id="matmul B"),
    pytest.param("transpose", "A[0][1]", lambda x: transpose([[1.0, x]]), id="transpose A"),
    pytest.param("attention_steps", "K[1][0]",
                 lambda x: attention_steps(Q, [[1.0, 1.0], [x, 0.0], [1.0, -1.0]], V),
                 id="attention_steps K"),
    pytest.param("attention_steps", "bias[0][1]",
                 lambda x: attention_steps(Q, K, V, bias=[[0.0, x, 0.0], [0.0] * 3]),
                 id="attention_steps bias"),
    pytest.param("scaled_dot_product_attention", "V[2][1]",
                 lambda x: scaled_dot_product_attention(Q, K, [[1.0, 0.0], [2.0, 0.0], [3.0, x]]),
                 id="scaled_dot_product_attention V"),
    pytest.param("scaled_dot_product_attention", "scale",
                 lambda x: scaled_dot_product_attention(Q, K, V, scale=x),
                 id="scaled_dot_product_attention scale"),
    pytest.param("streaming_attention", "Q[1][1]",
                 lambda x: streaming_attention([[1.0, 0.0], [0.0, x]], K, V),
                 id="streaming_attention Q"),
    pytest.param("attention_backward", "grad_output[1][0]",
                 lambda x: attention_backward(Q, K, I2 + [[1.0, 1.0]], [[1.0, 1.0], [x, 1.0]]),
                 id="attention_backward grad_output"),
    pytest.param("score_gradient", "dO[0][1]",
                 lambda x: score_gradient([[0.5, 0.5]], I2, [[1.0, x]]),
                 id="score_gradient dO"),
    pytest.param("multi_head_attention", "W_O[1][0]",
                 lambda x: multi_head_attention(Q, Q, I2, I2, I2, [[1.0, 0.0], [x, 1.0]], 2),
                 id="multi_head_attention W_O"),
    pytest.param("additive_attention", "w_v[1]",
                 lambda x: additive_attention(Q, K, V, I2, I2, [1.0, x]),
                 id="additive_attention w_v"),
]


@pytest.mark.parametrize("fn, entry, call", REFUSED_ABOVE_LIMIT)
def test_an_entry_just_above_limit_is_refused_naming_the_argument_and_entry(fn, entry, call):
    # bias may hold -inf (a masked key): the bound on its size is the same
    message = re.escape(f"{fn}: {entry} is {ABOVE_LIMIT!r}; it must be at most 2^200 (about "
                        "1.6e+60) in size, so that sums of products stay within the float range")
    with pytest.raises(ValueError, match=f"^{message}$"):
        call(ABOVE_LIMIT)


def test_multi_head_attention_names_its_own_arguments():
    with pytest.raises(ValueError, match=re.escape("multi_head_attention: X_q[0][0] is ")):
        multi_head_attention([[ABOVE_LIMIT, 0.0]], Q, I2, I2, I2, I2, 2)


@pytest.mark.parametrize("call, entry", [
    pytest.param(lambda x: scaled_dot_product_attention(Q, K, [[1.0], [2.0], [x]]), "V[2][0]",
                 id="V with d_v = 1"),
    pytest.param(lambda x: transpose([[x]]), "A[0][0]", id="a 1 x 1 matrix"),
])
def test_an_entry_of_a_one_column_matrix_is_named_with_both_indices(call, entry):
    with pytest.raises(ValueError, match=re.escape(f": {entry} is {ABOVE_LIMIT!r}")):
        call(ABOVE_LIMIT)


L = LIMIT
AT_LIMIT = [  # every entry +-LIMIT, and scale = LIMIT where there is one
    pytest.param(lambda: dot([L, L], [L, -L]), id="dot"),
    pytest.param(lambda: matmul([[L, L]], [[L], [L]]), id="matmul"),
    pytest.param(lambda: attention_steps([[L, L]], [[L, L], [-L, L]], [[L], [-L]],
                                         bias=[[L, -L]], scale=L), id="attention_steps"),
    pytest.param(lambda: scaled_dot_product_attention([[L, -L]], [[L, L], [L, -L]], [[L], [L]],
                                                      scale=L),
                 id="scaled_dot_product_attention"),
    pytest.param(lambda: streaming_attention([[L, L]] * 2, [[L, L], [-L, -L], [L, L]],
                                             [[L], [-L], [L]], scale=L, block_size=2),
                 id="streaming_attention"),
    pytest.param(lambda: attention_backward([[L, L]] * 2, [[L, L], [-L, L]], [[L], [-L]],
                                            [[L], [-L]], bias=[[L, -L]] * 2, scale=L),
                 id="attention_backward"),
    pytest.param(lambda: attention_backward([[L, L]], [[L, L], [L, L]], [[L], [-L]],
                                            [[L]], scale=L), id="attention_backward, a tie"),
    pytest.param(lambda: score_gradient([[0.5, 0.5]], [[L], [-L]], [[L]]), id="score_gradient"),
    pytest.param(lambda: multi_head_attention([[L, L]], [[L, -L], [L, L]], [[L, L], [L, -L]],
                                              [[L, -L], [L, L]], [[L, L], [-L, L]],
                                              [[L, L], [L, -L]], 2), id="multi_head_attention"),
    pytest.param(lambda: additive_attention([[L, L]], [[L, -L]], [[L]], [[L, L]], [[L, L]], [L]),
                 id="additive_attention"),
]


@pytest.mark.parametrize("call", AT_LIMIT)
def test_entries_at_limit_are_accepted_and_the_result_is_finite(call):
    assert all_finite(call())


@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[1e308, 1e308], [LARGEST, LARGEST / 2], [-LARGEST, -LARGEST, 0.0]],
                         ids=["two of 1e308", "the largest float", "the most negative float"])
def test_softmax_functions_take_any_finite_logit(fn, x):
    # the shift by m keeps every exponent at most 0, whatever the size of the logits
    assert all_finite(fn(x))


def test_log_softmax_refuses_a_log_probability_beyond_the_float_range():
    # log p_1 = -3.4e308 - log1p(0): beyond the float range, so refused rather than -inf
    x = [1.7e308, -1.7e308]
    assert_names(refused(ValueError, lambda: log_softmax(x)), "log_softmax",
                 "x[1] is -1.7e+308", "below the max x[0] = 1.7e+308",
                 "beyond the float range")
    assert softmax(x) == [1.0, 0.0] and logsumexp(x) == 1.7e308  # these stay exact
    half = LARGEST / 2  # x_2 - m = -LARGEST exactly: at the edge of the range, still a float
    assert log_softmax([half, -half]) == [0.0, -LARGEST]
    assert in_log_range("f", [half, -half, -INF]) == [half, -half, -INF]


def test_softmax_of_huge_logits_is_exact():
    assert softmax([1e308, 1e308]) == [0.5, 0.5]
    assert softmax([LARGEST, -LARGEST]) == [1.0, 0.0]  # x_2 - m overflows to -inf: e^-inf = 0
    assert logsumexp([1e308, 1e308]) == 1e308  # + log 2 is far below an ulp
    assert log_softmax([LARGEST, LARGEST]) == [-math.log(2.0)] * 2
    assert online_logsumexp(online_update(EMPTY, LARGEST)) == LARGEST


def test_softmax_backward_takes_g_up_to_2_to_the_1021_and_stays_exact_there():
    # dS_i = p_i (g_i - <g, p>): <g, p> = -2^1020, dS = [0.25 * 3 * 2^1020, -0.75 * 2^1020]
    assert softmax_backward([0.25, 0.75], [G_LIMIT, -G_LIMIT]) == [3 * 2.0 ** 1018,
                                                                   -3 * 2.0 ** 1018]
    # every term is below 4 max|g| = 2^1023: finite for any p
    assert all_finite(softmax_backward([1.0, 0.0, 0.0], [-G_LIMIT, G_LIMIT, -G_LIMIT]))
    assert all_finite(softmax_backward([0.5, 2.0 ** -60, 0.5 - 2.0 ** -60],
                                       [G_LIMIT, -G_LIMIT, G_LIMIT]))
    above = G_LIMIT * (1 + 2 ** -52)
    with pytest.raises(ValueError, match=re.escape(f"softmax_backward: g[1] is {above!r}; it must "
                                                   "be at most 2^1021 (about 2.2e+307) in size")):
        softmax_backward([0.5, 0.5], [0.0, above])


def test_a_merge_whose_sum_leaves_the_float_range_is_refused():
    with pytest.raises(ValueError, match="online_merge: d' is beyond the float range"):
        online_merge(Normalizer(0.0, 1e308), Normalizer(0.0, 1e308))
    assert online_merge(Normalizer(0.0, 1e308), Normalizer(-1.0, 1e308)).d < INF  # e^-1 saves it


# ------------------------------------------------------------ ints, flags and masks

@pytest.mark.parametrize("call, name", [
    pytest.param(lambda v: streaming_attention(Q, K, V, block_size=v),
                 "streaming_attention: block_size", id="block_size"),
    pytest.param(lambda v: multi_head_attention(I2, I2, I2, I2, I2, I2, v),
                 "multi_head_attention: num_heads", id="num_heads"),
    pytest.param(lambda v: causal_mask(v, 3), "causal_mask: n", id="causal_mask n"),
    pytest.param(lambda v: causal_mask(3, v, align="bottom-right"), "causal_mask: m",
                 id="causal_mask m"),
    pytest.param(lambda v: dot_product_attention_cost(v, 1, 1, 1), "dot_product_attention_cost: n",
                 id="dot_product_attention_cost n"),
    pytest.param(lambda v: dot_product_attention_cost(1, 1, 1, v),
                 "dot_product_attention_cost: d_v", id="dot_product_attention_cost d_v"),
    pytest.param(lambda v: additive_attention_cost(1, v, 1, 1), "additive_attention_cost: m",
                 id="additive_attention_cost m"),
    pytest.param(lambda v: additive_attention_cost(1, 1, v, 1), "additive_attention_cost: d_a",
                 id="additive_attention_cost d_a"),
])
def test_an_int_argument_takes_any_integral_type_and_refuses_the_rest(call, name):
    assert call(2) == call(Index(2))  # numpy.int64 has __index__ too
    for bad in ("2", 2.0, True, None, [2]):
        with pytest.raises(TypeError, match=f"{name} must be an int"):
            call(bad)
    for bad in (0, -3, Index(0)):
        with pytest.raises(ValueError, match=f"{name} must be at least 1, not "):
            call(bad)


@pytest.mark.parametrize("mask, entry", [
    pytest.param([[1, 0, 1], [0, 1, 1]], "mask[0][0] is 1", id="a mask of ints"),
    pytest.param([[True, True, 1.0], [True] * 3], "mask[0][2] is 1.0", id="a float"),
    pytest.param([[True] * 3, [True, None, True]], "mask[1][1] is None", id="None"),
    pytest.param([[True] * 3, [True, True, bool_(True)]], "mask[1][2] is <", id="bool_"),
])
def test_a_mask_entry_that_is_not_a_bool_is_named_with_its_index_and_value(mask, entry):
    for fn in (attention_steps, scaled_dot_product_attention, streaming_attention):
        with pytest.raises(TypeError, match="^" + re.escape(f"{fn.__name__}: {entry}")
                           + ".*; mask entries must be True \\(attend\\) or False$"):
            fn(Q, K, V, mask)


@pytest.mark.parametrize("is_causal", [1, 0, None, "yes", bool_(True)],
                         ids=["1", "0", "None", "a str", "a class named bool_"])
def test_is_causal_must_be_a_bool(is_causal):
    with pytest.raises(TypeError, match="^attention_steps: is_causal must be True or False, "
                                        "not "):
        attention_steps(Q, K, V, is_causal=is_causal)


def test_array_like_arguments_are_read_through_tolist():
    assert scaled_dot_product_attention(Array(Q), Array(K), Array(V)) == \
        scaled_dot_product_attention(Q, K, V)
    assert softmax(Array([1.0, 2.0])) == softmax([1.0, 2.0])
    mask = [[True, False, True], [True, True, False]]
    assert attention_steps(Q, K, V, Array(mask)) == attention_steps(Q, K, V, mask)
    assert attention_steps(Q, K, V, [Array(row) for row in mask]) == attention_steps(Q, K, V,
                                                                                    mask)


def test_exact_number_types_are_accepted_and_huge_ones_are_out_of_range():
    assert softmax([Fraction(1, 2), Fraction(1, 2)]) == [0.5, 0.5]
    with pytest.raises(ValueError, match=r"^softmax: x\[0\] is an int of 401 digits; it must "
                                         "be at most the largest float"):
        softmax([10 ** 400, 1.0])  # beyond the float range: refused, not an OverflowError
    with pytest.raises(ValueError, match=r"^dot: u\[1\] is Fraction\(-10+ \.\.\.; it must be "
                                         r"at most 2\^200"):
        dot([1, -Fraction(10 ** 400)], [1, 1])  # its repr, cut to 60 characters
    with pytest.raises(TypeError, match=r"softmax: x\[1\] is True, not a real number"):
        softmax([0.0, True])
    with pytest.raises(TypeError, match=r"softmax: x\[2\] is None, not a real number"):
        softmax([0.0, 1, None])


@pytest.mark.parametrize("x, error, message", [
    ([10 ** 5000], ValueError, "softmax: x[0] is an int of 5001 digits; it must be at most "
                               "the largest float (about 1.8e+308) in size"),
    ([-10 ** 5000, 1.0], ValueError, "softmax: x[0] is an int of 5001 digits; it must be "),
    ([[10 ** 5000]], TypeError, "softmax: x[0] is a list that cannot be printed, not a real "
                                "number"),
    ([Fraction(10 ** 5000, 3)], ValueError, "softmax: x[0] is a Fraction that cannot be "
                                            "printed; "),
], ids=["an int of 5001 digits", "its negative", "the same inside a list", "a Fraction"])
def test_an_int_too_long_to_print_is_refused_naming_the_function(x, error, message):
    # Python refuses to print an int of more than 4,300 digits: the message says its size
    with pytest.raises(error, match="^" + re.escape(message)):
        softmax(x)


def test_finiteness_and_size_are_two_rules_with_a_message_each():
    # NaN and inf break finiteness alone; a finite number too large breaks the size alone
    assert refused(ValueError, lambda: softmax([NAN])) == (
        "softmax: x[0] is nan; it must be finite or -inf")
    assert refused(ValueError, lambda: online_update((0.0, INF), 1.0)) == (
        "online_update: state.d is inf; it must be finite")
    assert refused(ValueError, lambda: dot([NAN], [1.0])) == (
        "dot: u[0] is nan; it must be finite")
    assert refused(ValueError, lambda: attention_steps(Q, K, V, bias=[[NAN] * 3] * 2)) == (
        "attention_steps: bias[0][0] is nan; it must be finite or -inf")
    assert refused(ValueError, lambda: attention_steps(Q, K, V, bias=[[-1e61] * 3] * 2)) == (
        "attention_steps: bias[0][0] is -1e+61; it must be at most 2^200 (about 1.6e+60) in "
        "size, so that sums of products stay within the float range")


# ------------------------------------------------------------ normaliser states

@pytest.mark.parametrize("bad, error, message", [
    pytest.param("ab", TypeError, "{s} must be a Normalizer(m, d), not 'ab'", id="a str"),
    pytest.param((1.0, 1.0, 1.0), TypeError, "{s} must be a Normalizer(m, d)", id="three numbers"),
    pytest.param(None, TypeError, "{s} must be a Normalizer(m, d), not None", id="None"),
    pytest.param(Normalizer("a", 1.0), TypeError, "{s}.m is 'a', not a real number", id="m a str"),
    pytest.param((0.0, None), TypeError, "{s}.d is None, not a real number", id="d None"),
    pytest.param((NAN, 1.0), ValueError, "{s}.m is nan; it must be finite", id="m nan"),
    pytest.param((INF, 1.0), ValueError, "{s}.m is inf; it must be finite", id="m +inf"),
    pytest.param((0.0, INF), ValueError, "{s}.d is inf; it must be finite", id="d +inf"),
    pytest.param((0.0, NAN), ValueError, "{s}.d is nan; it must be finite", id="d nan"),
    pytest.param((0.0, -1.0), ValueError, "{s} = (0.0, -1.0) is not a normaliser state: once "
                 "it holds a logit (m finite), d must be at least 1", id="d negative"),
    # the max alone contributes e^0 = 1
    pytest.param((0.0, 0.5), ValueError, "{s} = (0.0, 0.5) is not a normaliser state: once it "
                 "holds a logit (m finite), d must be at least 1", id="d below 1"),
    pytest.param((-INF, 1.0), ValueError, "{s} = (-inf, 1.0) is not a normaliser state: with "
                 "no logit yet (m = -inf), d must be 0", id="no logit, yet a sum"),
])
def test_normaliser_states_are_checked_by_every_function(bad, error, message):
    good = Normalizer(0.0, 1.0)
    calls = [("online_merge", "a", lambda s: online_merge(s, good)),
             ("online_merge", "b", lambda s: online_merge(good, s)),
             ("rescale_factors", "b", lambda s: rescale_factors(good, s)),
             ("online_update", "state", lambda s: online_update(s, 1.0)),
             ("online_logsumexp", "state", online_logsumexp)]
    for name, argument, call in calls:
        with pytest.raises(error, match=re.escape(f"{name}: " + message.format(s=argument))):
            call(bad)


def test_valid_states_include_plain_tuples_and_the_empty_state():
    assert online_merge((0.0, 1.0), EMPTY) == Normalizer(0.0, 1.0)
    assert online_merge(EMPTY, EMPTY) == EMPTY
    assert rescale_factors(EMPTY, EMPTY) == (-INF, 0.0, 0.0)
    assert online_update(EMPTY, -INF) == EMPTY


# ------------------------------------------------------------ shapes

# ------------------------------------------------------------ shapes: one rule, one message

def refused(error, call):
    """The message of the error that call() raises."""
    with pytest.raises(error) as caught:
        call()
    return str(caught.value)


def assert_names(message, fn, *parts, absent=()):
    """message names fn first and holds each part (argument, index, rule, shapes) and none of
    absent (the arguments the call did not pass)."""
    assert message.startswith(f"{fn}: "), message
    for part in parts:
        assert part in message, (part, message)
    for part in absent:
        assert part not in message, (part, message)


Q1 = [[1.0, 2.0]]  # 1 x 2
K1 = [[1.0], [2.0]]  # 2 x 1: d_k 1, not Q1's 2
ATTENTION = [attention_steps, scaled_dot_product_attention, streaming_attention,
             lambda Q, K, V, *a, **k: attention_backward(Q, K, V, [[1.0]] * len(Q), *a, **k)]
ATTENTION_IDS = ["attention_steps", "scaled_dot_product_attention", "streaming_attention",
                 "attention_backward"]


@pytest.mark.parametrize("fn", ATTENTION, ids=ATTENTION_IDS)
def test_each_attention_shape_rule_has_its_own_message(fn):
    name = fn.__name__ if fn.__name__ != "<lambda>" else "attention_backward"
    # the example of the issue: only Q's and K's shapes, no mask or bias the caller never gave
    assert_names(refused(ValueError, lambda: fn(Q1, K1, [[1.0], [1.0]])), name,
                 "K has 1 column but Q has 2", "the same d_k", "(Q is 1x2, K is 2x1)",
                 absent=("mask", "bias", "V "))
    assert_names(refused(ValueError, lambda: fn(Q, K, V[:2])), name,
                 "V has 2 rows but K has 3", "each key", "K is 3x2", "V is 2x1",
                 absent=("Q is", "mask", "bias"))
    assert_names(refused(ValueError, lambda: fn(Q, K, V, [[True] * 3])), name,
                 "mask has 1 row but Q has 2", "one row per query", "Q is 2x2",
                 absent=("bias", "K is"))
    assert_names(refused(ValueError, lambda: fn(Q, K, V, [[True] * 3, [True] * 2])), name,
                 "mask[1] has 2 entries but K has 3 rows", "one entry per key", "K is 3x2",
                 absent=("bias", "Q is"))
    assert_names(refused(ValueError, lambda: fn(Q, K, V, bias=[[0.0] * 3])), name,
                 "bias has 1 row but Q has 2", "one row per query", absent=("mask",))
    assert_names(refused(ValueError, lambda: fn(Q, K, V, bias=[[0.0] * 2] * 2)), name,
                 "bias[0] has 2 entries but K has 3 rows", "one entry per key",
                 absent=("mask",))
    assert_names(refused(TypeError, lambda: fn(Q, K, V, [[True] * 3, True])), name,
                 "mask[1] must be a list, not bool")
    assert_names(refused(TypeError, lambda: fn(Q, K, V, "all")), name,
                 "mask must be a list, not str")


def test_the_gradient_of_the_output_has_the_output_shape():
    fn = "attention_backward"
    assert_names(refused(ValueError, lambda: attention_backward(Q, K, V, [[1.0]])), fn,
                 "grad_output has 1 row but Q has 2", "(Q is 2x2, grad_output is 1x1)",
                 absent=("V is",))
    assert_names(refused(ValueError, lambda: attention_backward(Q, K, V, [[1.0, 1.0]] * 2)),
                 fn, "grad_output has 2 columns but V has 1", "d_v",
                 "(V is 3x1, grad_output is 2x2)", absent=("Q is",))


def test_each_score_gradient_shape_rule_has_its_own_message():
    fn, P, V2 = "score_gradient", [[0.5, 0.5]], [[1.0], [0.0]]
    assert_names(refused(ValueError, lambda: score_gradient(P, V, [[1.0]])), fn,
                 "V has 3 rows but P has 2 columns", "(P is 1x2, V is 3x1)",
                 absent=("dO",))
    assert_names(refused(ValueError, lambda: score_gradient(P, V2, [[1.0], [1.0]])), fn,
                 "dO has 2 rows but P has 1", "(P is 1x2, dO is 2x1)", absent=("V is",))
    assert_names(refused(ValueError, lambda: score_gradient(P, V2, [[1.0, 2.0]])), fn,
                 "dO has 2 columns but V has 1", "(V is 2x1, dO is 1x2)", absent=("P is",))


@pytest.mark.parametrize("args, parts", [
    pytest.param((Q, K, V, [[1.0, 0.0, 0.0]], I2, [1.0, 1.0]),
                 ["W_q has 3 columns but Q has 2", "(Q is 2x2, W_q is 1x3)"], id="W_q columns"),
    pytest.param((Q, K, V, I2, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [1.0, 1.0]),
                 ["W_k has 3 columns but K has 2", "(K is 3x2, W_k is 2x3)"], id="W_k columns"),
    pytest.param((Q, K, V, [[1.0, 0.0]], [[1.0, 0.0]], [1.0, 1.0]),
                 ["W_q has 1 row but w_v has 2 entries", "d_a"], id="W_q rows"),
    pytest.param((Q, K, V, I2, [[1.0, 0.0]], [1.0, 1.0]),
                 ["W_k has 1 row but w_v has 2 entries", "d_a"], id="W_k rows"),
    pytest.param((Q, K, V[:2], I2, I2, [1.0, 1.0]),
                 ["V has 2 rows but K has 3", "(K is 3x2, V is 2x1)"], id="V rows"),
    pytest.param((Q, K, V, I2, I2, [1.0, 1.0], [[True] * 2] * 2),
                 ["mask[0] has 2 entries but K has 3 rows"], id="mask columns"),
])
def test_each_additive_attention_shape_rule_has_its_own_message(args, parts):
    assert_names(refused(ValueError, lambda: additive_attention(*args)), "additive_attention",
                 *parts)


J3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]  # 2 x 3: 3 columns, which 2 heads do not divide


@pytest.mark.parametrize("change, parts", [
    pytest.param({"X_kv": [[1.0, 0.0, 0.0]]},
                 ["X_kv has 3 columns but X_q has 2", "d_model", "(X_q is 2x2, X_kv is 1x3)"],
                 id="X_kv's columns are not X_q's"),
    pytest.param({"W_Q": [[1.0, 0.0]]}, ["W_Q has 1 row but X_q has 2 columns", "d_model",
                                         "W_Q is 1x2"], id="W_Q's rows are not d_model"),
    pytest.param({"W_K": [[1.0, 0.0]]}, ["W_K has 1 row but X_q has 2 columns"],
                 id="W_K's rows are not d_model"),
    pytest.param({"W_V": [[1.0, 0.0]]}, ["W_V has 1 row but X_q has 2 columns"],
                 id="W_V's rows are not d_model"),
    pytest.param({"W_K": [[1.0], [0.0]]}, ["W_K has 1 column but W_Q has 2", "h d_k",
                                           "(W_Q is 2x2, W_K is 2x1)"],
                 id="W_K narrower than W_Q"),
    pytest.param({"W_Q": J3, "W_K": J3}, ["W_Q has 3 columns, which num_heads = 2 does not "
                                          "divide", "(W_Q is 2x3)"],
                 id="W_Q's columns not divisible"),
    pytest.param({"W_V": J3}, ["W_V has 3 columns, which num_heads = 2 does not divide"],
                 id="W_V's columns not divisible"),
    pytest.param({"W_O": [[1.0, 0.0]]}, ["W_O has 1 row but W_V has 2 columns", "h d_v",
                                         "(W_V is 2x2, W_O is 1x2)"],
                 id="W_O's rows are not W_V's columns"),
    pytest.param({"mask": [[True]]}, ["mask has 1 row but X_q has 2"], id="mask rows"),
])
def test_multi_head_refuses_what_zip_would_silently_truncate_one_rule_at_a_time(change, parts):
    args = {"X_q": I2, "X_kv": I2, "W_Q": I2, "W_K": I2, "W_V": I2, "W_O": I2}
    mask = change.pop("mask", None)
    args.update(change)
    message = refused(ValueError, lambda: multi_head_attention(*args.values(), 2, mask))
    assert_names(message, "multi_head_attention", *parts)
    assert message.count(" is ") <= 3  # the shapes that matter, not all six


@pytest.mark.parametrize("call, error, parts", [
    pytest.param(lambda: dot([1.0], [1.0, 2.0]), ValueError,
                 ["dot: u has length 1 but v has length 2"], id="dot lengths"),
    pytest.param(lambda: matmul([[1.0, 2.0]], [[1.0, 2.0]]), ValueError,
                 ["matmul: A has 2 columns but B has 1 row", "(A is 1x2, B is 1x2)"],
                 id="matmul shapes"),
    pytest.param(lambda: matmul([[1.0], [1.0, 2.0]], [[1.0]]), ValueError,
                 ["matmul: A[1] has length 2 but A[0] has length 1", "same length"],
                 id="matmul ragged"),
    pytest.param(lambda: transpose("ab"), TypeError, ["transpose: A must be a list, not str"],
                 id="transpose a str"),
    pytest.param(lambda: transpose([]), ValueError, ["transpose: A is empty"],
                 id="transpose empty"),
    pytest.param(lambda: transpose([[1.0], "a"]), TypeError,
                 ["transpose: A[1] is 'a', not a row; a matrix is a list of rows"],
                 id="transpose a str row"),
    pytest.param(lambda: transpose([[1.0, NAN]]), ValueError,
                 ["transpose: A[0][1] is nan; it must be finite"], id="transpose nan"),
    pytest.param(lambda: softmax_backward([0.5, 0.5], [1.0]), ValueError,
                 ["softmax_backward: g has length 1 but p has length 2"],
                 id="softmax_backward lengths"),
    pytest.param(lambda: causal_mask(2, 2, align=3), TypeError,
                 ["causal_mask: align must be a str", "not 3"], id="align not a str"),
    pytest.param(lambda: causal_mask(2, 2, align="diagonal"), ValueError,
                 ["causal_mask: align must be 'top-left' or 'bottom-right', not 'diagonal'"],
                 id="align unknown"),
])
def test_the_other_errors_name_the_function_the_argument_and_the_shapes(call, error, parts):
    message = refused(error, call)
    assert_names(message, parts[0].split(":")[0], *parts)


def test_probability_rows_are_checked_to_within_1e_9_one_rule_at_a_time():
    assert score_gradient([[0.5, 0.5 + 0.5e-9]], [[1.0], [0.0]], [[1.0]])  # within 1e-9
    assert_names(refused(ValueError, lambda: score_gradient([[0.5, 0.5], [0.5, 0.5 + 1.5e-9]],
                                                            [[1.0], [0.0]], [[1.0]] * 2)),
                 "score_gradient", "P[1] sums to 1.0000000015", "not 1 (within 1e-9)",
                 "softmax(x)")
    assert_names(refused(ValueError, lambda: score_gradient([[0.5, 0.6, -0.1]], V, [[1.0]])),
                 "score_gradient", "P[0][2] is -0.1", "cannot be negative")  # sums to 1
    assert_names(refused(ValueError, lambda: softmax_backward([0.5, 0.5 + 1.5e-9], [1.0, 0.0])),
                 "softmax_backward", "p sums to", "not 1")
    assert softmax_backward([0.5, 0.5 + 0.5e-9], [1.0, 0.0])
    assert as_probabilities("f", (0.25, 0.75)) == [0.25, 0.75]


# ------------------------------------------------------------ a query with no key

TWO, THREE = [[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 2.0], [1.0, -1.0]]  # Q 2 x 2, K 3 x 2
MINUS = -INF


@pytest.mark.parametrize("kwargs, row, reason", [
    pytest.param(dict(mask=[[True] * 3, [False] * 3]), 1,
                 "the mask is False everywhere in row 1", id="the mask"),
    pytest.param(dict(bias=[[MINUS] * 3, [0.0] * 3]), 0, "bias is -inf everywhere in row 0",
                 id="bias"),
    pytest.param(dict(bias=[[MINUS] * 3, [0.0] * 3], is_causal=True), 0,
                 "bias is -inf everywhere in row 0", id="bias, with is_causal"),
    pytest.param(dict(mask=[[False, True, True], [True] * 3], is_causal=True), 0,
                 "the mask and is_causal together hide every key of row 0",
                 id="the mask and is_causal"),
    pytest.param(dict(mask=[[True, False, False], [True] * 3],
                      bias=[[MINUS, 0.0, 0.0], [0.0] * 3]), 0,
                 "the mask and bias together hide every key of row 0", id="the mask and bias"),
    pytest.param(dict(bias=[[MINUS, 0.0, 0.0], [0.0] * 3], is_causal=True), 0,
                 "is_causal and bias together hide every key of row 0",
                 id="is_causal and bias"),
    pytest.param(dict(mask=[[True, False, True], [True] * 3],
                      bias=[[MINUS, 0.0, 0.0], [0.0] * 3], is_causal=True), 0,
                 "the mask, is_causal and bias together hide every key of row 0",
                 id="all three"),
    # the last query row of a square problem: is_causal hides none of its keys
    pytest.param(dict(mask=[[True] * 3, [True] * 3, [True, False, False]],
                      bias=[[0.0] * 3, [0.0] * 3, [MINUS, 0.0, 0.0]], is_causal=True), 2,
                 "the mask and bias together hide every key of row 2",
                 id="the mask and bias, is_causal hiding nothing"),
])
@pytest.mark.parametrize("fn", ATTENTION, ids=ATTENTION_IDS)
def test_a_query_left_without_a_key_is_named_by_its_row_and_by_what_hid_the_keys(
        fn, kwargs, row, reason):
    name = fn.__name__ if fn.__name__ != "<lambda>" else "attention_backward"
    Q = TWO if len(kwargs.get("mask", TWO)) == 2 else TWO + [[1.0, 1.0]]
    message = refused(ValueError, lambda: fn(Q, THREE, V, **kwargs))
    assert message == f"{name}: query row {row} has no key to attend to: {reason}"
    assert "B[" not in message  # never the internal name of the combined bias


def test_multi_head_and_additive_attention_name_the_masked_query_row_too():
    mask = [[True, True], [False, False]]
    for call, name in ((lambda: multi_head_attention(I2, I2, I2, I2, I2, I2, 2, mask),
                        "multi_head_attention"),
                       (lambda: additive_attention(I2, I2, I2, I2, I2, [1.0, 1.0], mask),
                        "additive_attention")):
        assert refused(ValueError, call) == (f"{name}: query row 1 has no key to attend to: "
                                             "the mask is False everywhere in row 1")


# ------------------------------------------------------------ sizes: MAX_SCORES

def test_causal_mask_refuses_more_than_max_scores_before_building_anything():
    assert MAX_SCORES == 2 ** 24 == 4096 * 4096
    assert len(causal_mask(4096, 4096)) == 4096  # exactly at the bound: built
    assert_names(refused(ValueError, lambda: causal_mask(10 ** 7, 10 ** 7)), "causal_mask",
                 "n is 10000000 and m is 10000000", "100000000000000 entries",
                 f"MAX_SCORES = {MAX_SCORES}")
    assert_names(refused(ValueError, lambda: causal_mask(4097, 4096)), "causal_mask",
                 "16781312 entries")


@pytest.mark.parametrize("fn, names, call", [
    ("attention_steps", "QK", lambda Q, K: attention_steps(Q, K, K)),
    ("scaled_dot_product_attention", "QK",
     lambda Q, K: scaled_dot_product_attention(Q, K, K)),
    ("streaming_attention", "QK", lambda Q, K: streaming_attention(Q, K, K)),
    ("attention_backward", "QK", lambda Q, K: attention_backward(Q, K, K, Q)),
    ("multi_head_attention", ("X_q", "X_kv"),
     lambda Q, K: multi_head_attention(Q, K, [[1.0]], [[1.0]], [[1.0]], [[1.0]], 1)),
    ("additive_attention", "QK",
     lambda Q, K: additive_attention(Q, K, K, [[1.0]], [[1.0]], [1.0])),
], ids=lambda v: v if isinstance(v, str) and len(v) > 2 else "")
def test_every_attention_entry_point_refuses_more_than_max_scores(fn, names, call):
    # 8193 x 2049 scores: refused from the lengths alone, before any n x m list exists
    Q, K = [[1.0]] * 8193, [[1.0]] * 2049
    message = refused(ValueError, lambda: call(Q, K))
    assert_names(message, fn, f"len({names[0]}) is 8193 and len({names[1]}) is 2049",
                 "16787457 entries", f"MAX_SCORES = {MAX_SCORES}")


# ------------------------------------------------------------ the merge's factors

def test_rescale_factors_moves_both_states_to_the_larger_max():
    a, b = Normalizer(0.0, 1.0), Normalizer(math.log(2.0), 3.0)
    assert rescale_factors(a, b) == (math.log(2.0), 0.5, 1.0)
    assert rescale_factors(EMPTY, b) == (math.log(2.0), 0.0, 1.0)  # e^-inf: nothing to move


def test_softmax_backward_takes_zero_weights_and_exact_numbers():
    assert softmax_backward([1.0, 0.0], [1.0, 2.0]) == [0.0, 0.0]  # a masked key: p = 0
    assert softmax_backward((Fraction(1, 2), Fraction(1, 2)), (1, 0)) == [0.25, -0.25]
    assert all(type(v) is float for v in softmax_backward((Fraction(1, 2), 0.5), (1, 0)))
    with pytest.raises(TypeError, match=r"softmax_backward: p\[0\] is None, not a real number"):
        softmax_backward([None, 1.0], [0.0, 0.0])


def test_single_row_and_single_column_shapes():
    assert score_gradient([[1.0]], [[3.0]], [[2.0]]) == [[0.0]]  # one key: no gradient
    assert streaming_attention([[1.0]], [[1.0]], [[5.0]]) == [[5.0]]
    assert additive_attention([[0.0]], [[1.0]], [[2.0]], [[1.0]], [[1.0]], [1.0]) == [[2.0]]
    assert causal_mask(1, 1) == [[True]]
    # d_model = 1: W_Q is 1 x 2, two heads of d_k = 1
    out = multi_head_attention([[1.0]], [[1.0], [2.0]], [[1.0, 2.0]], [[1.0, -1.0]],
                               [[3.0, 4.0]], [[1.0], [1.0]], 2)
    head_1 = scaled_dot_product_attention([[1.0]], [[1.0], [2.0]], [[3.0], [6.0]])
    head_2 = scaled_dot_product_attention([[2.0]], [[-1.0], [-2.0]], [[4.0], [8.0]])
    assert out == [[head_1[0][0] + head_2[0][0]]]
