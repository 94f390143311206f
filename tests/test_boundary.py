"""One validation policy at the public boundary of softmax.py and attention.py:
TypeError for the wrong kind of thing, ValueError for a wrong value or shape,
each naming the function called; NumPy-like arguments accepted without NumPy;
finite answers wherever the true answer is finite, a clear error where it is not."""

import math
from fractions import Fraction

import pytest

from attention import (additive_attention, additive_attention_cost, attention_backward,
                       attention_steps, dot, dot_product_attention_cost, matmul,
                       multi_head_attention, scaled_dot_product_attention, score_gradient,
                       streaming_attention, transpose)
from softmax import (EMPTY, Normalizer, log_softmax, logsumexp, online_logsumexp, online_merge,
                     online_update, rescale_factors, softmax, softmax_backward,
                     softmax_jacobian)

INF, NAN = math.inf, math.nan
Q, K, V = [[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 2.0], [1.0, -1.0]], [[1.0], [2.0], [3.0]]
I2 = [[1.0, 0.0], [0.0, 1.0]]


class Index:
    """An integral type that is not int, as numpy.int64 is: it has __index__."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


class bool_:  # noqa: N801 - named as numpy's, which is how the library recognises it
    """A flag type that is not bool, as numpy.bool_ is."""

    def __init__(self, value):
        self.value = value

    def __bool__(self):
        return self.value


class Array:
    """An ndarray-like object: not a Sequence, but with ndim and tolist()."""

    def __init__(self, rows):
        self.rows, self.ndim = rows, 2 if isinstance(rows[0], list) else 1

    def tolist(self):
        return [list(r) for r in self.rows] if self.ndim == 2 else list(self.rows)


# ------------------------------------------------------------ ints and flags

@pytest.mark.parametrize("call, name", [
    (lambda v: streaming_attention(Q, K, V, block_size=v), "streaming_attention: block_size"),
    (lambda v: multi_head_attention(I2, I2, I2, I2, I2, I2, v), "multi_head_attention: num_heads"),
    (lambda v: dot_product_attention_cost(v, 1, 1, 1), "dot_product_attention_cost: n"),
    (lambda v: dot_product_attention_cost(1, 1, 1, v), "dot_product_attention_cost: d_v"),
    (lambda v: additive_attention_cost(1, v, 1, 1), "additive_attention_cost: m"),
    (lambda v: additive_attention_cost(1, 1, v, 1), "additive_attention_cost: d_a"),
])
def test_an_int_argument_takes_any_integral_type_and_refuses_the_rest(call, name):
    assert call(2) == call(Index(2))  # numpy.int64 has __index__ too
    for bad in ("2", 2.0, True, None, [2]):
        with pytest.raises(TypeError, match=f"{name} must be an int"):
            call(bad)
    for bad in (0, -3, Index(0)):
        with pytest.raises(ValueError, match=f"{name} must be at least 1, not "):
            call(bad)


def test_operation_counts_are_exact_for_large_sizes():
    big = 10 ** 30  # ints never overflow: the counts stay exact
    assert dot_product_attention_cost(big, 1, 1, 1).multiply_adds == 3 * big
    assert additive_attention_cost(1, 1, big, 1) == (2 * big + 1, 1, big)


def test_numpy_like_bools_are_accepted_in_masks_and_flags():
    mask = [[bool_(True), bool_(False), bool_(True)], [bool_(False), bool_(True), bool_(True)]]
    plain = [[True, False, True], [False, True, True]]
    assert attention_steps(Q, K, V, mask) == attention_steps(Q, K, V, plain)
    assert (scaled_dot_product_attention(Q, K, V, is_causal=bool_(True))
            == scaled_dot_product_attention(Q, K, V, is_causal=True))
    with pytest.raises(TypeError, match=r"attention_steps: mask\[0\]\[0\] is 1 \(int\)"):
        attention_steps(Q, K, V, [[1, 0, 1], [0, 1, 1]])
    with pytest.raises(TypeError, match="attention_steps: is_causal must be True or False"):
        attention_steps(Q, K, V, is_causal=0)


def test_array_like_arguments_are_read_through_tolist():
    assert scaled_dot_product_attention(Array(Q), Array(K), Array(V)) == \
        scaled_dot_product_attention(Q, K, V)
    assert softmax(Array([1.0, 2.0])) == softmax([1.0, 2.0])
    assert attention_steps(Q, K, V, Array([[True, False, True], [True, True, False]])) == \
        attention_steps(Q, K, V, [[True, False, True], [True, True, False]])


def test_exact_number_types_are_accepted_and_huge_ones_are_out_of_range():
    assert softmax([Fraction(1, 2), Fraction(1, 2)]) == [0.5, 0.5]
    with pytest.raises(ValueError, match=r"softmax: x\[0\] is inf; entries must be finite or"):
        softmax([10 ** 400, 1.0])  # an int beyond the float range is +inf, not OverflowError
    with pytest.raises(ValueError, match=r"dot: u\[1\] is -inf; entries must be finite"):
        dot([1, -Fraction(10 ** 400)], [1, 1])
    with pytest.raises(TypeError, match=r"softmax: x\[1\] is True \(bool\); expected a real"):
        softmax([0.0, True])
    with pytest.raises(TypeError, match=r"softmax: x\[2\] is None"):
        softmax([0.0, 1, None])


@pytest.mark.parametrize("fn", [softmax, log_softmax, logsumexp, softmax_jacobian])
def test_every_softmax_function_refuses_what_is_not_logits(fn):
    name = fn.__name__
    with pytest.raises(TypeError, match=f"{name}: x must be a list or tuple of numbers, not str"):
        fn("1, 2")
    with pytest.raises(TypeError, match=f"{name}: x must be a list or tuple of numbers, not set"):
        fn({1.0, 2.0})
    with pytest.raises(ValueError, match=f"{name}: x is empty"):
        fn([])
    with pytest.raises(ValueError, match=rf"{name}: x\[1\] is nan"):
        fn([0.0, NAN])
    with pytest.raises(ValueError, match=f"{name}: every entry of x .length 2. is -inf"):
        fn([-INF, -INF])


def test_softmax_backward_refuses_what_is_not_a_probability_and_a_gradient():
    fn = softmax_backward
    with pytest.raises(ValueError, match=r"softmax_backward: p\[0\] = 2.0 is not a probability"):
        fn([2.0, -1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"softmax_backward: p\[1\] = nan is not a probability"):
        fn([1.0, NAN], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"softmax_backward: p sums to 0.75, not 1 \(length 2\)"):
        fn([0.5, 0.25], [0.0, 0.0])
    with pytest.raises(ValueError, match="softmax_backward: g has length 3 but p has length 2"):
        fn([0.5, 0.5], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"softmax_backward: g\[1\] is inf; entries must be fin"):
        fn([0.5, 0.5], [0.0, INF])
    with pytest.raises(TypeError, match="softmax_backward: g must be a list or tuple"):
        fn([0.5, 0.5], None)


# ------------------------------------------------------------ normaliser states

@pytest.mark.parametrize("bad, error, message", [
    ("ab", TypeError, "must be a Normalizer"),
    ((1.0, 1.0, 1.0), TypeError, "must be a Normalizer"),
    (None, TypeError, "must be a Normalizer"),
    (Normalizer("a", 1.0), TypeError, "must hold two real numbers"),
    ((0.0, None), TypeError, "must hold two real numbers"),
    ((NAN, 1.0), ValueError, "is not a normaliser state"),
    ((INF, 1.0), ValueError, "is not a normaliser state"),
    ((0.0, -1.0), ValueError, "is not a normaliser state"),
    ((0.0, 0.5), ValueError, "is not a normaliser state"),  # the max alone contributes 1
    ((0.0, INF), ValueError, "is not a normaliser state"),
    ((0.0, NAN), ValueError, "is not a normaliser state"),
    ((-INF, 1.0), ValueError, "is not a normaliser state"),  # no logit, yet a sum
])
def test_normaliser_states_are_checked_by_every_function(bad, error, message):
    good = Normalizer(0.0, 1.0)
    calls = [("online_merge", lambda s: online_merge(s, good)),
             ("online_merge", lambda s: online_merge(good, s)),
             ("rescale_factors", lambda s: rescale_factors(good, s)),
             ("online_update", lambda s: online_update(s, 1.0)),
             ("online_logsumexp", online_logsumexp)]
    for name, call in calls:
        with pytest.raises(error, match=f"{name}: .*{message}"):
            call(bad)


def test_valid_states_include_plain_tuples_and_the_empty_state():
    assert online_merge((0.0, 1.0), EMPTY) == Normalizer(0.0, 1.0)
    assert online_merge(EMPTY, EMPTY) == EMPTY
    assert rescale_factors(EMPTY, EMPTY) == (-INF, 0.0, 0.0)
    assert online_update(EMPTY, -INF) == EMPTY


# ------------------------------------------------------- linear algebra and range

def test_dot_and_matmul_are_finite_whenever_the_true_result_is():
    assert dot([1e200, 1e200], [1e200, -1e200]) == 0.0  # each product overflows, the sum is 0
    u, v = [1e300, 1e300], [1e10, -1e10 * (1 - 2 ** -52)]  # u . v = 1.9e294, the products 1e310
    exact = sum(Fraction(a) * Fraction(b) for a, b in zip(u, v))
    terms = sum(abs(Fraction(a) * Fraction(b)) for a, b in zip(u, v))
    assert abs(Fraction(dot(u, v)) - exact) <= Fraction(2, 2 ** 53) * terms  # the usual bound
    assert matmul([[1e200, 1e200]], [[1e200], [-1e200]]) == [[0.0]]
    with pytest.raises(ValueError, match="dot: u . v is beyond the float range"):
        dot([1e200], [1e200])
    with pytest.raises(ValueError, match="matmul: A B is beyond the float range"):
        matmul([[1e200, 1e200]], [[1e200], [1e200]])


@pytest.mark.parametrize("call, error, message", [
    (lambda: dot([1.0], [1.0, 2.0]), ValueError, "dot: v has length 2 but u has length 1|"
                                                 "dot: u has length 1 but v has length 2"),
    (lambda: matmul([[1.0, 2.0]], [[1.0, 2.0]]), ValueError, "matmul: A is 1x2 and B is 1x2"),
    (lambda: matmul([[1.0], [1.0, 2.0]], [[1.0]]), ValueError, "matmul: A is ragged"),
    (lambda: transpose("ab"), TypeError, "transpose: A must be a list of rows, not str"),
    (lambda: transpose([]), ValueError, r"transpose: A is empty \(0 rows\)"),
    (lambda: transpose([[1.0], "a"]), TypeError, r"transpose: A\[1\] must be a list or tuple"),
    (lambda: transpose([[NAN]]), ValueError, r"transpose: A\[0\]\[0\] is nan; entries must be "
                                             r"finite$"),
])
def test_linear_algebra_errors_name_the_function_and_the_shapes(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_overflowing_logits_are_recomputed_scale_first_or_refused():
    big = [[1e200, 1e200]]
    # masked out, an overflowing score does not matter
    out = scaled_dot_product_attention(big, [[1e200, 1e200], [1.0, 1.0]], [[1.0], [2.0]],
                                       [[False, True]], scale=1.0)
    assert out == [[2.0]]
    # a bias of -inf masks it too, whatever the score
    out = scaled_dot_product_attention(big, [[1e200, 1e200], [1.0, 1.0]], [[1.0], [2.0]],
                                       bias=[[-INF, 0.0]], scale=1.0)
    assert out == [[2.0]]
    # scale 0 makes every logit 0, however large q . k
    assert scaled_dot_product_attention(big, big + [[0.0, 0.0]], [[1.0], [3.0]], scale=0.0) == \
        [[2.0]]
    # a finite score with a huge bias overflows the logit itself
    with pytest.raises(ValueError, match=r"streaming_attention: logit S\[0\]\[1\]"):
        streaming_attention([[1.0]], [[1.0], [1.0]], [[1.0], [1.0]],
                            bias=[[0.0, 1.7e308]], scale=1e308, block_size=1)


def test_attention_shape_errors_name_every_shape():
    with pytest.raises(ValueError, match=r"attention_backward: grad_output is 2x2 but the "
                                         r"output is 2x1 \(Q is 2x2, V is 3x1\)"):
        attention_backward(Q, K, V, [[1.0, 1.0]] * 2)
    with pytest.raises(ValueError, match=r"score_gradient: P is 1x2, V is 3x1 and dO is 1x1"):
        score_gradient([[0.5, 0.5]], V, [[1.0]])
    with pytest.raises(ValueError, match="score_gradient: row 0 of P is not a probability"):
        score_gradient([[0.5, 0.6, -0.1]], V, [[1.0]])
    with pytest.raises(ValueError, match=r"attention_steps: mask must be 2x3 .* got 2 rows of "
                                         r"lengths \[2, 3\]"):
        attention_steps(Q, K, V, [[True, True], [True, True, True]])
    with pytest.raises(TypeError, match=r"attention_steps: mask\[1\] must be a list of bools"):
        attention_steps(Q, K, V, [[True] * 3, True])
    with pytest.raises(TypeError, match="attention_steps: mask must be a list of rows of bools"):
        attention_steps(Q, K, V, "all")


def test_additive_attention_checks_its_weights_and_its_scores():
    with pytest.raises(ValueError, match=r"additive_attention: w_v\[0\] is nan"):
        additive_attention(Q, K, V, I2, I2, [NAN, 0.0])
    with pytest.raises(ValueError, match="additive_attention: the scores e is beyond the float"):
        additive_attention(Q, K, V, I2, I2, [1.7e308, 1.7e308])
    with pytest.raises(ValueError, match="additive_attention: need W_q d_a x d_q"):
        additive_attention(Q, K, V, [[1.0, 0.0, 0.0]], I2, [1.0, 1.0])


@pytest.mark.parametrize("change, message", [
    ({"X_kv": [[1.0, 0.0, 0.0]]}, "X_q, X_kv and the rows of W_Q, W_K, W_V must share d_model"),
    ({"W_K": [[1.0], [0.0]]}, "W_Q and W_K need the same number of columns"),
    ({"W_V": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}, "W_V has 3 columns, not divisible by"),
    ({"W_O": [[1.0, 0.0]]}, "W_O needs one row per column of W_V"),
    ({"X_q": [[1e300, 1e300]], "W_Q": [[1e300, 0.0], [0.0, 1e300]]},
     "X_q W_Q is beyond the float range"),
])
def test_multi_head_shape_checks_refuse_what_zip_would_silently_truncate(change, message):
    args = {"X_q": I2, "X_kv": I2, "W_Q": I2, "W_K": I2, "W_V": I2, "W_O": I2}
    args.update(change)
    with pytest.raises(ValueError, match="multi_head_attention: " + message):
        multi_head_attention(args["X_q"], args["X_kv"], args["W_Q"], args["W_K"], args["W_V"],
                             args["W_O"], 2)


# ------------------------------------------------------------ the shared checks

def test_softmax_backward_takes_zero_weights_and_refuses_what_is_not_a_number():
    assert softmax_backward([1.0, 0.0], [1.0, 2.0]) == [0.0, 0.0]  # a masked key: p = 0
    with pytest.raises(TypeError, match=r"softmax_backward: p\[0\] is None"):
        softmax_backward([None, 1.0], [0.0, 0.0])
    assert softmax_backward((Fraction(1, 2), Fraction(1, 2)), (1, 0)) == [0.25, -0.25]
    assert all(type(v) is float for v in softmax_backward((Fraction(1, 2), 0.5), (1, 0)))


def test_a_huge_gradient_with_small_entries_is_scaled_by_its_largest_entry():
    # e is taken from max |g|: taken from the smallest, g_1 - g_2 would still overflow
    got = softmax_backward([0.25, 0.5, 0.25], [1.5e308, -1.5e308, 1.0])
    mean = sum(Fraction(p) * Fraction(g) for p, g in zip([0.25, 0.5, 0.25],
                                                        [1.5e308, -1.5e308, 1.0]))
    exact = [Fraction(p) * (Fraction(g) - mean) for p, g in zip([0.25, 0.5, 0.25],
                                                               [1.5e308, -1.5e308, 1.0])]
    assert got == [float(v) for v in exact]


def test_integer_limits_name_the_limit():
    from softmax import _integer
    assert _integer("f", 4, "n", minimum=1, maximum=4) == 4
    with pytest.raises(ValueError, match="f: n must be at most 4, not 5"):
        _integer("f", 5, "n", maximum=4)
    with pytest.raises(ValueError, match="f: n must be at least 1, not 0"):
        _integer("f", 0, "n", minimum=1)


# --------------------------------------------- corners found by mutation testing

def test_the_rescaled_dot_product_is_exact_where_the_products_cancel():
    # (1e200)^2 overflows twice and cancels; the third term survives untouched
    assert dot([1e200, 1e200, 1.0], [1e200, -1e200, 1e100]) == 1e100


def test_only_the_overflowed_entries_of_a_product_are_recomputed():
    # entry [0][0]: inf - inf directly, 0 in truth; entry [0][1]: a subnormal product that
    # rescaling the whole row by 2^-665 would flush to zero, so it must stay as computed
    got = matmul([[1e200, 1e200, 1e-160]], [[1e200, 0.0], [-1e200, 0.0], [0.0, 1e-160]])
    assert got == [[0.0, 1e-160 * 1e-160]] and got[0][1] > 0.0


def test_large_finite_entries_whose_sum_overflows_are_not_an_error():
    assert matmul([[1e308], [1e308]], [[1.0]]) == [[1e308], [1e308]]


def test_single_row_and_single_column_shapes():
    assert score_gradient([[1.0]], [[3.0]], [[2.0]]) == [[0.0]]  # one key: no gradient
    assert streaming_attention([[1.0]], [[1.0]], [[5.0]]) == [[5.0]]
    assert additive_attention([[0.0]], [[1.0]], [[2.0]], [[1.0]], [[1.0]], [1.0]) == [[2.0]]
    # d_model = 1: W_Q is 1 x 2, two heads of d_k = 1
    out = multi_head_attention([[1.0]], [[1.0], [2.0]], [[1.0, 2.0]], [[1.0, -1.0]],
                               [[3.0, 4.0]], [[1.0], [1.0]], 2)
    head_1 = scaled_dot_product_attention([[1.0]], [[1.0], [2.0]], [[3.0], [6.0]])
    head_2 = scaled_dot_product_attention([[2.0]], [[-1.0], [-2.0]], [[4.0], [8.0]])
    assert out == [[head_1[0][0] + head_2[0][0]]]


def test_three_heads_each_see_only_their_own_columns():
    Q6 = [[0.1 * (i + 1) * (c - 2.5) for c in range(6)] for i in range(2)]
    X = [[1.0 if r == c else 0.0 for c in range(6)] for r in range(6)]  # identity projections
    W_O = [[1.0 if r == c else 0.0 for c in range(6)] for r in range(6)]
    out = multi_head_attention(Q6, Q6, X, X, X, W_O, 3)
    for t in range(3):
        cols = slice(2 * t, 2 * t + 2)
        head = scaled_dot_product_attention(*([r[cols] for r in Q6] for _ in range(3)))
        assert [r[cols] for r in out] == head


def test_streaming_recomputes_an_overflow_in_a_later_block():
    # q . k_1 = 2e400 overflows; scaled by 1e-300 it is 2e100, the logit that wins
    Q1, K2, V2 = [[1e200, 1e200]], [[1.0, 1.0], [1e200, 1e200]], [[1.0], [7.0]]
    assert streaming_attention(Q1, K2, V2, scale=1e-300, block_size=1) == [[7.0]]
    assert scaled_dot_product_attention(Q1, K2, V2, scale=1e-300) == [[7.0]]


def test_the_default_block_size_is_64():
    rng = __import__("random").Random(0)  # blocks of 64 and 65 round differently here
    Qr = [[rng.gauss(0, 3) for _ in range(3)] for _ in range(2)]
    Kr = [[rng.gauss(0, 3) for _ in range(3)] for _ in range(150)]
    Vr = [[rng.gauss(0, 1) for _ in range(4)] for _ in range(150)]
    assert streaming_attention(Qr, Kr, Vr) == streaming_attention(Qr, Kr, Vr, block_size=64)
    assert streaming_attention(Qr, Kr, Vr) != streaming_attention(Qr, Kr, Vr, block_size=65)


def test_a_gradient_whose_dp_overflows_is_computed_from_rescaled_values():
    from oracle import decimal_attention_backward, normwise_relative_error
    # dP = dO V^T = [4e308, -4e308, 4e-300] overflows; the true dS is within range.  The
    # tiny third value must not set the rescaling: V is divided by its largest entry.
    Q1, K3, V3, dO = [[1.0]], [[1.0], [0.0], [0.0]], [[1e308], [-1e308], [1e-300]], [[4.0]]
    got = attention_backward(Q1, K3, V3, dO, scale=1.0)
    for computed, exact in zip(got, decimal_attention_backward(Q1, K3, V3, dO, 1.0)):
        assert normwise_relative_error(computed, exact) <= 1e-15


def test_bias_messages_say_that_minus_infinity_is_allowed():
    with pytest.raises(ValueError, match=r"bias\[0\]\[1\] is nan; entries must be finite or -inf"):
        attention_steps(Q, K, V, bias=[[0.0, NAN, 0.0], [0.0, 0.0, 0.0]])


def test_probability_rows_are_checked_to_within_1e_9():
    assert score_gradient([[0.5, 0.5 + 0.5e-9]], [[1.0], [0.0]], [[1.0]])  # within 1e-9
    with pytest.raises(ValueError, match="score_gradient: row 0 of P is not a probability"):
        score_gradient([[0.5, 0.5 + 1.5e-9]], [[1.0], [0.0]], [[1.0]])
    with pytest.raises(ValueError, match="softmax_backward: p sums to"):
        softmax_backward([0.5, 0.5 + 1.5e-9], [1.0, 0.0])
    assert softmax_backward([0.5, 0.5 + 0.5e-9], [1.0, 0.0])
