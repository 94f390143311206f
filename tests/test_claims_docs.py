"""The claims of docs/*.md and benchmarks/README.md that the report's numbers do not carry
(those are in tests/test_claims_report.py): each recomputed here from the library's
functions, the emulation of lowprecision/emulation.py, exact Fractions or 50-digit decimal,
never through the code that writes the pages' tables.  Claims that an existing test checks
already are registered with `covered`; claims about the literature are in
tests/test_claims_sources.py.
"""

import itertools
import math
import os
import random
import re
import struct
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

import stats
from attention import causal_mask, scaled_dot_product_attention
from lowprecision import emulation as E
from oracles.exact import decimal_softmax
from scripts import scales
from softmax import softmax, softmax_backward, softmax_jacobian
from tests.claims import Z, apart, claim, covered, within
from tests.helpers import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = "README.md"
INTERVIEW, DERIVATIONS = "docs/interview.md", "docs/derivations.md"
LOW, FRAMEWORKS, NUMERICS = "docs/low-precision.md", "docs/pytorch-jax.md", "docs/numerics.md"
WORKED, WHITEBOARD, DOCS = "docs/worked-examples.md", "docs/whiteboard.md", "docs/README.md"
BENCHMARKS = "benchmarks/README.md"
SCORES = [1.3, -0.6, 0.2, 2.1]  # low-precision.md's masked row (lowprecision.SCORES there)
HALF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24,
        "float64": 2.0 ** -53}  # unit roundoff, from the significant bits 11, 8, 24, 53


def exact_softmax(x):
    return [float(p) for p in decimal_softmax(list(x))]


# ------------------------------------------------------------------ the one-pass slip

def zero_started(x):
    """The one-pass softmax of the slip, written here: running max m from 0, not -inf."""
    m, d = 0.0, 0.0
    for v in x:
        new = max(m, v)
        d, m = d * math.exp(m - new) + math.exp(v - new), new
    return [math.exp(v - m) / d for v in x] if d > 0 else None


def worst(x):
    """The largest relative error of the slip's weights against 50-digit decimal."""
    return max(abs(a - b) / b for a, b in zip(zero_started(x), exact_softmax(x)))


@claim(INTERVIEW, "every exp is then taken relative to 0, not to the row's max, and loses bits "
                  "for a logit below about {onepass.normal}, where exp leaves the normal floats.")
@claim(INTERVIEW, "Once every logit is below about {onepass.zero}, every e underflows to 0 and "
                  "d is 0;")
def test_the_zero_started_running_max_is_right_only_above_the_normal_range():
    normal = math.log(2.0 ** -1022)  # exp(x) is a normal float from ln 2^-1022 = -708.4 on
    # above it: each exp within an ulp, the running sum's 3 roundings, the division: 5 ulps
    for top in (0.0, -20.0, -300.0, -700.0):
        assert worst([top, top - 1.0, top - 3.0, normal + 0.5]) <= 5 * 2.0 ** -53, top
    errors = [worst([top, top - 1.0]) for top in (-715.0, -730.0, -740.0, -744.0)]
    assert errors == sorted(errors) and errors[0] > 100 * 2.0 ** -53  # far beyond those
    assert zero_started([-745.2, -746.0]) is None  # d = 0: every e is 0
    assert_close(softmax([-745.2, -746.0]), exact_softmax([-745.2, -746.0]),
                 rel=4 * 2.0 ** -53)  # the library's, from -inf: fine


# ------------------------------------------------------------------ a token's own key

def normal_moment(k):
    """E[Z^k] for Z ~ N(0, 1), exactly: 0 for odd k, (k - 1)!! for even k."""
    return 0 if k % 2 else math.prod(range(k - 1, 0, -2))


def shifted_moment(k, p2, var):
    """E[(e + p)^k] for e ~ N(0, var), in Fractions given p^2 = p2 (odd powers of p meet odd
    moments of e, which vanish)."""
    return sum(math.comb(k, j) * p2 ** (j // 2) * var ** Fraction(k - j, 2) * normal_moment(k - j)
               for j in range(0, k + 1, 2))


@claim(DERIVATIONS, "computes Var(S) exactly for a query and a key of two different tokens, "
                    "whose inputs x and x' are independent draws:")
@claim(DERIVATIONS, "and the 9/4 of the table becomes 9/4 + 4/d_model; with x = E + PE it gains "
                    "(2 + 2/d_model) / d_model^2.")
@claim(DERIVATIONS, "Without the sqrt(d_model) the tokens' part is 1/d_model against the "
                    "positions' 1/2")
@claim(INTERVIEW, "The variance of the logit at initialisation, exactly, for a query and a key "
                  "of two different tokens")
@pytest.mark.parametrize("d_model", [8, 512])
def test_a_token_s_own_key_has_a_larger_logit_variance_than_another_token_s(d_model):
    # given x and x', Var(S) = d_k c^2 (|x|^2 / d)(|x'|^2 / d); at d_k c^2 = 1 (the right
    # scale) that is E|x|^2 E|x'|^2 / d^2 for two tokens, E[|x|^4] / d^2 for one.  The
    # sinusoidal positions give sum_i p_i^2 = d / 2; the embeddings N(0, 1) per component
    # (E sqrt(d)) or N(0, 1/d) (E): exact moments, one component p_i^2 = 1/2 at a time
    for inputs, var, gain in (("E sqrt(d_model) + PE", Fraction(1), Fraction(4, d_model)),
                              ("E + PE", Fraction(1, d_model),
                               (2 + Fraction(2, d_model)) / d_model ** 2)):
        p2 = Fraction(1, 2)  # every component's p_i^2, summing to d / 2
        second = d_model * shifted_moment(2, p2, var)  # E|x|^2
        spread = d_model * (shifted_moment(4, p2, var) - shifted_moment(2, p2, var) ** 2)
        two_tokens = (second / d_model) ** 2
        own_key = (second ** 2 + spread) / d_model ** 2  # E|x|^4 = (E|x|^2)^2 + Var|x|^2
        listed = scales.logit_variance(d_model, 1, inputs=inputs).variance  # d_k = d_model
        assert listed == two_tokens and own_key - two_tokens == gain, inputs
    assert two_tokens != own_key
    e_plus_pe = d_model * shifted_moment(2, Fraction(1, 2), Fraction(1, d_model)) / d_model
    assert e_plus_pe == Fraction(1, d_model) + Fraction(1, 2)  # tokens' part, positions' part


@pytest.mark.slow
@claim(DERIVATIONS, "For a token's own key both are the same |x|^2, and Var(S) = d_k c^2 "
                    "E[(|x|^2 / d_model)^2] = d_k c^2 (v^2 + Var(|x|^2) / d_model^2).")
def test_the_own_key_logit_variance_by_monte_carlo():
    # d_model = d_k = 8, c = 1/sqrt(8), x = e + PE(position 3) with e ~ N(0, 1): own key
    # 9/4 + 4/8 = 2.75, another token's (e' independent, position 5) 9/4; each estimate
    # (1/n) sum S^2 with standard error sqrt(((1/n) sum S^4 - v^2) / n)
    d, n, rng = 8, 20000, random.Random(29)

    def position(t):
        return [math.sin(t / 10000 ** (2 * (i // 2) / d)) if i % 2 == 0 else
                math.cos(t / 10000 ** (2 * (i // 2) / d)) for i in range(d)]

    own, other = [], []
    for _ in range(n):
        x = [rng.gauss(0, 1) + p for p in position(3)]
        y = [rng.gauss(0, 1) + p for p in position(5)]
        W_Q = [[rng.gauss(0, 1 / math.sqrt(d)) for _ in range(d)] for _ in range(d)]
        W_K = [[rng.gauss(0, 1 / math.sqrt(d)) for _ in range(d)] for _ in range(d)]
        q = [math.fsum(a * w[c] for a, w in zip(x, W_Q)) for c in range(d)]
        k = [math.fsum(a * w[c] for a, w in zip(x, W_K)) for c in range(d)]
        k2 = [math.fsum(a * w[c] for a, w in zip(y, W_K)) for c in range(d)]
        own.append(math.fsum(a * b for a, b in zip(q, k)) / math.sqrt(d))
        other.append(math.fsum(a * b for a, b in zip(q, k2)) / math.sqrt(d))
    cells = []
    for s in (own, other):
        v = math.fsum(t * t for t in s) / n
        cells.append((v, math.sqrt((math.fsum(t ** 4 for t in s) / n - v * v) / n)))
    assert within(*cells[0], 9 / 4 + 4 / d, 0.0) and within(*cells[1], 9 / 4, 0.0)
    assert apart(*cells[0], 9 / 4, 0.0) > Z


# ------------------------------------------------------------------ the length axis

def weight(g, n):
    """The winner's softmax weight over n keys, one logit g above n - 1 equal ones, exactly
    as 1 / (1 + (n - 1) e^-g), in 60-digit decimal."""
    with localcontext() as ctx:
        ctx.prec = 60
        return 1 / (1 + (n - 1) * (-Decimal(g)).exp())


def scaled_weight(g, n, n_0):
    """The same with every logit times ln(n) / ln(n_0)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return weight(Decimal(g) * Decimal(n).ln() / Decimal(n_0).ln(), n)


LENGTHS = [16, 64, 256, 1024, 4096, 65536, 2 ** 20]


@claim(INTERVIEW, "Multiplying the logits by s ln n")
@claim(DERIVATIONS, "which falls towards 0 as n grows, whatever d_k was.")
@claim(INTERVIEW, "keeps the winner as n grows only when its gap g exceeds ln n_0")
@claim(INTERVIEW, "At g = ln n_0 exactly the weight still falls, from {length.level.16} at "
                  "n_0 = 16 towards 1/2. Below ln n_0 the scaling only slows the fall")
@claim(DERIVATIONS, "So the scaling keeps the winner only when the gap exceeds ln n_0, "
                    "g > ln n_0:")
@claim(DERIVATIONS, "**g = ln n_0:** p_win = n / (2n - 1), which still falls, towards 1/2.")
@claim(DERIVATIONS, "**g < ln n_0:** it still falls, like n^(a - 1), only more slowly than "
                    "e^g / n.")
def test_ln_n_scaling_keeps_the_winner_only_above_a_gap_of_ln_n_0():
    n_0 = 16
    plain = [weight(5, n) for n in LENGTHS]
    assert plain == sorted(plain, reverse=True) and plain[-1] < Decimal("0.001")
    above = [scaled_weight(5, n, n_0) for n in LENGTHS]  # 5 > ln 16 = 2.77
    assert above[-1] > above[0] and above[-1] > Decimal("0.999")
    at = [scaled_weight(Decimal(n_0).ln(), n, n_0) for n in LENGTHS]
    assert at == sorted(at, reverse=True) and all(w > Decimal(1) / 2 for w in at)
    assert abs(at[-1] - Decimal(1) / 2) < Decimal("1e-6")  # towards 1/2
    for n, w in zip(LENGTHS, at):
        assert abs(w - Decimal(n) / (2 * n - 1)) < Decimal("1e-25")  # ln 16 to 28 digits
    below = [scaled_weight(2, n, n_0) for n in LENGTHS]  # 2 < ln 16
    unscaled = [weight(2, n) for n in LENGTHS]
    assert below == sorted(below, reverse=True) and below[-1] < below[0] / 10
    assert all(b > u for b, u in zip(below[1:], unscaled[1:]))  # more slowly


@claim(DERIVATIONS, "It never dips below its value at n_0 when (n - 1) n^(-a) falls for every "
                    "n >= n_0, that is when a (n_0 - 1) >= n_0, or g >= ln(n_0) n_0 / (n_0 - 1) "
                    "= {length.steady} for n_0 = 16 (`scales.steady_gap`); between ln n_0 and "
                    "that, it dips first, then recovers.")
def test_from_the_steady_gap_on_the_scaled_weight_never_dips_below_its_start():
    n_0 = 16
    with localcontext() as ctx:
        ctx.prec = 60
        steady = Decimal(n_0).ln() * n_0 / (n_0 - 1)
    grid = list(range(16, 600)) + LENGTHS[3:]
    for g in (steady, steady + Decimal("0.5")):
        start = scaled_weight(g, n_0, n_0)
        assert all(scaled_weight(g, n, n_0) >= start - Decimal("1e-40") for n in grid), g
    with localcontext() as ctx:
        ctx.prec = 60
        g = (Decimal(n_0).ln() + steady) / 2  # between: it dips, then recovers
    cells = [scaled_weight(g, n, n_0) for n in grid]
    assert min(cells) < cells[0] < cells[-1]


@claim(INTERVIEW, "its weight over 16 keys is {length.16}, whatever d_k is.")
def test_the_winner_s_weight_depends_on_n_and_the_gap_not_on_d_k():
    # the weight of logits [5, 0, ..., 0], computed by the library's attention with keys of
    # any width: q . k_j = 5 for the winner, 0 for the others, whatever d_k
    for d_k in (4, 64, 512):
        q = [5.0] + [0.0] * (d_k - 1)  # q . k_1 = 5, q . k_j = 0 for the others
        K = [[1.0] + [0.0] * (d_k - 1)] + [[0.0] * d_k] * 15
        V = [[1.0]] + [[0.0]] * 15  # the output is the winner's weight
        got = scaled_dot_product_attention([q], K, V, scale=1.0)[0][0]
        assert_close(got, float(weight(5, 16)), rel=1e-14)


# ------------------------------------------------------------------ which sqrt

@claim(INTERVIEW, "with 8 heads of 64 in a 512-wide model, dividing by sqrt(512) leaves the "
                  "logits a variance of 1/8.")
@claim(INTERVIEW, "with 8 heads the logits' variance is 1/8")
def test_dividing_by_the_model_width_leaves_one_over_heads():
    d_model, heads = 512, 8
    d_k = d_model // heads
    assert d_k * Fraction(1, d_model) == Fraction(1, 8)  # Var(q . k) c^2 = d_k / d_model


@claim(INTERVIEW, "Scaling after softmax is no scale at all: the weights are already saturated, "
                  "and a factor on them only shrinks the output.")
def test_a_factor_after_softmax_only_multiplies_the_output():
    rng = random.Random(3)
    Q = [[rng.gauss(0, 1) for _ in range(64)]]
    K = [[rng.gauss(0, 1) for _ in range(64)] for _ in range(8)]
    V = [[rng.gauss(0, 1) for _ in range(3)] for _ in range(8)]
    p = softmax([math.fsum(a * b for a, b in zip(Q[0], k)) for k in K])  # unscaled
    c = 1 / 8
    after = [math.fsum(c * w * v[e] for w, v in zip(p, V)) for e in range(3)]
    unscaled = scaled_dot_product_attention(Q, K, V, scale=1.0)[0]
    assert_close(after, [c * o for o in unscaled], rel=1e-12)


@claim(INTERVIEW, "The sinusoidal positions added to them have mean square 1/2.")
@pytest.mark.parametrize("position", [0, 1, 7, 100, 4095])
def test_sinusoidal_positions_have_mean_square_one_half(position):
    d = 512
    pe = [math.sin(position / 10000 ** (i / d)) if i % 2 == 0 else
          math.cos(position / 10000 ** ((i - 1) / d)) for i in range(d)]
    assert_close(math.fsum(v * v for v in pe) / d, 0.5, rel=1e-14)


# ------------------------------------------------------------------ writing it

@claim(INTERVIEW, "Logits near 1e3 are enough to break an unshifted softmax in float64")
@claim(INTERVIEW, "Any constant keeps the weights, but only the row's own max keeps every "
                  "exponent at most 0 and the largest term at 1.")
@claim(INTERVIEW, "P recomputed without the max-shift overflows on logits near 1e3, even when "
                  "the forward shifted.")
@claim(INTERVIEW, "the row's minimum: on [1e3, 0, -1e3] the largest exponent is 2e3, and exp "
                  "overflows;")
@claim(INTERVIEW, "the row's first entry: on [0, 1e3, -1e3] the second exponent is 1e3;")
@claim(INTERVIEW, "the max over the whole matrix (or batch): a row whose logits sit near -1e3 "
                  "below a row near +1e3 has every exponent near -2e3, which underflows to 0, "
                  "and 0/0 is NaN.")
def test_shifts_other_than_the_row_s_max_break_where_it_does_not():
    def shifted(x, c):
        try:
            e = [math.exp(v - c) for v in x]
        except OverflowError:
            return "overflow"
        total = math.fsum(e)
        return "NaN" if total == 0 else [v / total for v in e]

    assert shifted([1e3, 999.0], 0.0) == "overflow"  # no shift at all
    assert shifted([1e3, 0.0, -1e3], -1e3) == "overflow"  # the minimum
    assert shifted([0.0, 1e3, -1e3], 0.0) == "overflow"  # the first entry
    assert shifted([-1e3, -1001.0], 1e3) == "NaN"  # the batch's max, from a row near +1e3
    for x in ([1e3, 0.0, -1e3], [0.0, 1e3, -1e3], [-1e3, -1001.0], [1e3, 999.0]):
        assert shifted(x, max(x)) == softmax(x)  # the row's own max: fine


@claim(INTERVIEW, "applied after softmax, zeroing weights that were already normalised: the row "
                  "no longer sums to 1, and renormalising afterwards fails when the masked keys "
                  "held nearly all the weight (the kept weights underflow to 0, and 0/0 is NaN);")
def test_masking_after_softmax_then_renormalising_fails_on_a_dominant_masked_key():
    p = softmax([800.0, 0.0, 1.0])  # the masked key (0) holds all the weight
    kept = [0.0, p[1], p[2]]
    assert kept == [0.0, 0.0, 0.0] and math.fsum(kept) == 0.0  # renormalising: 0/0
    assert softmax([-math.inf, 0.0, 1.0]) == exact_softmax([-math.inf, 0.0, 1.0])


@claim(INTERVIEW, "a block the mask hides entirely has max -inf, and exp(-inf - (-inf)) is NaN")
def test_minus_inf_minus_minus_inf_is_nan():
    assert math.isnan(math.exp(-math.inf - (-math.inf)))


@claim(INTERVIEW, "With n > m, bottom-right leaves the first n - m queries with no key at all.")
@pytest.mark.parametrize("n, m", [(3, 1), (5, 2), (4, 3)])
def test_bottom_right_with_more_queries_than_keys_leaves_the_first_ones_nothing(n, m):
    rows = causal_mask(n, m, align="bottom-right")
    assert [any(row) for row in rows] == [False] * (n - m) + [True] * m


@claim(INTERVIEW, "A saturated row passes almost nothing (every entry of its Jacobian is at most "
                  "1 - p_max in size)")
@claim(DERIVATIONS, "As the logits spread, p heads to one-hot: with p_1 = 1 - e, every entry of J "
                    "is at most e in size, and the gradient fades with e.")
@pytest.mark.parametrize("seed", range(20))
def test_every_entry_of_the_jacobian_is_at_most_one_minus_the_largest_weight(seed):
    rng = random.Random(seed)
    x = [rng.gauss(0, rng.choice([1, 5, 30])) for _ in range(rng.randint(2, 9))]
    p = [Fraction(v) for v in softmax(x)]
    p = [v / sum(p) for v in p]  # exactly a distribution
    top = max(p)
    J = [[p_i * ((i == j) - p_j) for j, p_j in enumerate(p)] for i, p_i in enumerate(p)]
    assert all(abs(entry) <= 1 - top for row in J for entry in row)


@claim(INTERVIEW, "has dL/dS = p - e_t: the log cancels the Jacobian, and the gradient stays "
                  "large exactly when p is wrong, however saturated.")
def test_the_pointer_loss_gradient_is_p_minus_e_t_and_stays_large_when_saturated():
    x, t, h = [30.0, 0.0, -2.0], 1, 1e-6  # saturated on key 0; the target is key 1

    def loss(z):
        return -math.log(float(decimal_softmax(z)[t]))

    gradient = [(loss([v + h * (i == j) for j, v in enumerate(x)]) -
                 loss([v - h * (i == j) for j, v in enumerate(x)])) / (2 * h)
                for i in range(3)]
    p = softmax(x)
    assert_close(gradient, [p_i - (i == t) for i, p_i in enumerate(p)], abs=1e-6)
    assert math.hypot(*gradient) > 1.4  # |p - e_t| near sqrt(2): large
    through_jacobian = softmax_backward(p, [0.0, 1.0, 0.0])  # a loss on the output instead
    assert max(map(abs, through_jacobian)) < 1e-12


@claim(INTERVIEW, "Dot-product attention takes fewer multiply-adds at these sizes, and whenever "
                  "d_a = d_k > 1, and no tanh.")
@pytest.mark.parametrize("n, d", [(128, 64), (1, 2), (7, 300)])
def test_dot_product_attention_takes_fewer_multiply_adds_and_no_tanh(n, d):
    # dot-product, counted here: Q K^T (n m d_k), the scale (n m), P V (n m d_v)
    import attention
    dot, add = (attention.dot_product_attention_cost(n, n, d, d),
                attention.additive_attention_cost(n, n, d, d))
    assert dot.multiply_adds == n * n * d + n * n + n * n * d
    assert dot.multiply_adds < add.multiply_adds and dot.tanhs == 0 < add.tanhs
    one = (attention.dot_product_attention_cost(n, n, 1, 1),
           attention.additive_attention_cost(n, n, 1, 1))
    assert one[0].multiply_adds == one[1].multiply_adds  # at d = 1, as many


@pytest.mark.slow
@claim(INTERVIEW, "So additive attention needs no 1/sqrt(d_a) only under that initialisation")
@claim(INTERVIEW, "it grows like d_a with unit-variance w_v, as Var(q · k) grows like d_k, and "
                  "stays level when w_v has variance 1/d_a (the usual fan-in initialisation):")
def test_additive_scores_grow_like_d_a_unless_w_v_has_variance_one_over_d_a():
    # the additive table's simulation, called directly: 1000 scores per d_a (the report's
    # samples), seed 0 + d_a (the report's seed)
    cells = {d_a: stats.additive_score_variance(d_a, 1000, d=64, seed=d_a)
             for d_a in (16, 64, 256, 1024)}
    fan_in = [(v / d_a, se / d_a) for d_a, (v, se) in cells.items()]  # the same draws
    assert all(within(*a, *b) for a, b in itertools.combinations(fan_in, 2))
    unit = [tuple(cells[d_a]) for d_a in (16, 64, 256, 1024)]
    assert all(apart(*b, *a) > Z for a, b in zip(unit, unit[1:]))


@claim(INTERVIEW, "with E[tanh(u)^2] about one half here.")
def test_the_mean_square_of_tanh_of_the_pre_activations_is_about_one_half():
    # u ~ N(0, 2) given |q|^2 = |k|^2 = d: E[tanh(u)^2] by the trapezoid rule on +-12 sd;
    # "about one half": one half to one digit
    var, n, L = 2.0, 20000, 12.0
    h = 2 * L * math.sqrt(var) / n
    xs = [-L * math.sqrt(var) + i * h for i in range(n + 1)]
    value = math.fsum(math.tanh(x) ** 2 * math.exp(-x * x / (2 * var)) for x in xs) * h / (
        math.sqrt(2 * math.pi * var))
    assert round(value, 1) == 0.5


@claim(INTERVIEW, "With one shared projection, q_i = k_i for the same token, and the diagonal "
                  "logit is |q_i|^2: correlation 1, so its mean is d_k, not 0, and its variance "
                  "2 d_k")
@claim(INTERVIEW, "Scaled by 1/sqrt(d_k), each token's own key sits sqrt(d_k) above the others "
                  "on average, and softmax hands it most of the weight.")
def test_a_shared_projection_puts_each_token_s_own_logit_at_d_k():
    for d_k in (1, 16, 64):
        # |q|^2 is chi-squared with d_k degrees of freedom: E = d_k, Var = 2 d_k, from the
        # normal's moments E[z^2] = 1, E[z^4] = 3 and independence
        assert d_k * normal_moment(2) == d_k and d_k * (normal_moment(4) - 1) == 2 * d_k
        moments = stats.correlated_dot_product_moments(d_k, 1)
        assert (moments.mean, moments.variance) == (d_k, 2 * d_k)
    gap = 64 / math.sqrt(64)  # the own key's mean scaled logit, the others' 0
    assert gap == math.sqrt(64) and softmax([gap] + [0.0] * 15)[0] > 0.99


# ------------------------------------------------------------------ low precision

FORMATS = ("float16", "bfloat16", "float32", "float64")


def mask_softmax(keep, fill, fmt, how):
    return E.softmax_in(E.mask_scores(SCORES, keep, fill, fmt, how), fmt)


def gap(p, q):
    return max(abs(a - b) for a, b in zip(p, q))


AS_IF_UNMASKED, UNIFORM = softmax(SCORES), [0.25] * 4


@claim(LOW, "float16 cannot hold 1e9 at all.")
@claim(LOW, "float16 stores -1e9 as -inf, so -1e9 behaves as -inf and the row is NaN")
@claim(INTERVIEW, "1e9 is past 65504, so -1e9 is stored as -inf")
def test_float16_stores_minus_1e9_as_minus_inf_and_a_row_masked_by_it_is_nan():
    assert E.round_to(-1e9, "float16") == -math.inf and 1e9 > E.largest_finite("float16")
    for how in ("add", "fill"):
        assert all(math.isnan(v) for v in mask_softmax([False] * 4, -1e9, "float16", how))


@claim(LOW, "In float32 and bfloat16, adding -1e9 absorbs the scores: each sum rounds to the "
            "fill itself and the row becomes uniform. Only float64 keeps enough bits to attend "
            "\"as if unmasked\". The sentence \"-1e9 attends as if unmasked\" holds in float64 "
            "only.")
@claim(INTERVIEW, "So adding -1e9 to a score below {lp.f32.absorbed} in size gives exactly "
                  "-1e9: a fully masked row comes out uniform. Only float64 (spacing "
                  "{lp.f64.spacing}) keeps the scores, and there the row attends as if unmasked.")
def test_minus_1e9_added_absorbs_the_scores_except_in_float64():
    for fmt in ("float32", "bfloat16"):
        stored = E.mask_scores(SCORES, [False] * 4, -1e9, fmt, "add")
        assert len(set(stored)) == 1, fmt  # every sum rounds to the fill
        assert mask_softmax([False] * 4, -1e9, fmt, "add") == UNIFORM, fmt
    assert all(-1e9 + s != -1e9 for s in SCORES)  # float64 keeps every score
    assert E.round_to(-1e9 + 31.0, "float32") == E.round_to(-1e9, "float32")  # spacing 64
    assert E.round_to(-1e9 + 33.0, "float32") != E.round_to(-1e9, "float32")
    assert gap(mask_softmax([False] * 4, -1e9, "float64", "add"), AS_IF_UNMASKED) < 1e-7


@claim(LOW, "Adding -1000 keeps the scores only to the spacing at 1000 ([section "
            "1](#1-the-formats)): close to \"as if unmasked\" in float32, coarse in float16, "
            "and in bfloat16 far from every answer.")
def test_minus_1000_added_keeps_the_scores_to_the_spacing_at_1000():
    # each stored sum s + fill is off by at most half the spacing at 1000, which moves a
    # weight by at most half of that (sum_j |J_ij| <= 2 p_i (1 - p_i) <= 1/2), plus the
    # softmax's own four roundings
    for fmt in ("float64", "float32", "float16"):
        spacing = E.next_up(1000.0, fmt) - 1000.0
        off = gap(mask_softmax([False] * 4, -1000.0, fmt, "add"), AS_IF_UNMASKED)
        assert off <= spacing / 4 + 5 * HALF[fmt], fmt
    bf = mask_softmax([False] * 4, -1000.0, "bfloat16", "add")  # spacing 4: "none of them",
    assert min(gap(bf, ref) for ref in (AS_IF_UNMASKED, UNIFORM)) >= 0.1  # as the table names


@claim(LOW, "Written over the scores, any finite fill gives a uniform row; -inf gives NaN.")
@claim(LOW, "**A row that keeps a key** is fine with every fill, added or written over, in "
            "every format: the masked weight rounds to exactly 0, and the rest differs from "
            "the float64 answer only by the format's rounding.")
@claim(INTERVIEW, "A row that keeps at least one key is fine with any of these fills in every "
                  "format, as long as no masked score leads the kept ones by nearly the fill's "
                  "size: the masked weight rounds to exactly 0.")
@claim(INTERVIEW, "A fill of -1e9 instead of -inf gives the same weights to a row that keeps a "
                  "key, in every format from float16 to float64")
@pytest.mark.parametrize("fmt", FORMATS)
def test_fills_on_a_row_that_keeps_keys_and_fills_written_over_a_full_row(fmt):
    keep = [True, True, True, False]  # the masked key has the largest score
    absent = softmax(SCORES[:3]) + [0.0]
    # storing the scores moves each by u |s|, a weight by half the largest of those; then
    # the softmax's four roundings
    bound = (4 + max(map(abs, SCORES)) / 2) * HALF[fmt]
    lowest = -E.largest_finite(fmt)
    for fill in (-math.inf, -1e9, -1000.0, lowest):
        for how in ("add", "fill"):
            p = mask_softmax(keep, fill, fmt, how)
            assert p[3] == 0.0 and gap(p, absent) <= bound, (fill, how)
        full = mask_softmax([False] * 4, fill, fmt, "fill")
        if math.isinf(E.round_to(fill, fmt)):
            assert all(math.isnan(v) for v in full), fill
        else:
            assert full == UNIFORM, fill
    assert mask_softmax(keep, -1e9, fmt, "add") == mask_softmax(keep, -math.inf, fmt, "add")


@claim(LOW, "With scores [0, 1000] and the second key masked by adding -1000, the two logits "
            "tie, and the weights are {lp.spread} in every format.")
@claim(INTERVIEW, "with scores [0, 1000] and key 1 masked by adding -1000, the logits tie, "
                  "weights {lp.spread} in every format.")
@pytest.mark.parametrize("fmt", FORMATS)
def test_minus_1000_does_not_mask_a_score_that_leads_by_1000(fmt):
    p = E.softmax_in([E.round_to(0.0, fmt), E.round_to(1000.0 - 1000.0, fmt)], fmt)
    stored = E.mask_scores([0.0, 1000.0], [True, False], -1000.0, fmt, "add")
    assert stored[0] == stored[1] and E.softmax_in(stored, fmt) == p == [0.5, 0.5]


@claim(LOW, "Without the shift, float16 fails in both directions within a few units of 0: a "
            "logit of 12 overflows its exp, and logits near -20 underflow every exp to 0, so Z "
            "= 0 and every p_i = 0/0. Subtracting the max puts the largest exponent at exactly "
            "0 and the largest term at exactly 1, in every format.")
@claim(LOW, "(the shifted one is right to the format's precision on every row here)")
def test_without_the_shift_float16_fails_both_ways_and_with_it_every_format_is_right():
    assert E.round_to(math.exp(12.0), "float16") == math.inf
    assert E.round_to(math.exp(-20.0), "float16") == 0.0
    assert E.softmax_in([10.0, 11.0, 12.0], "float16", shift=False)[2] != E.softmax_in(
        [10.0, 11.0, 12.0], "float16", shift=False)[2]  # inf / inf: NaN
    assert all(math.isnan(v) for v in E.softmax_in([-20.0, -21.0, -22.0], "float16",
                                                    shift=False))  # 0 / 0
    rows = ([0.0, 1.0, 2.0], [10.0, 11.0, 12.0], [-20.0, -21.0, -22.0], [100.0, 101.0, 102.0],
            [-100.0, -101.0, -102.0], [1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0])
    for fmt in FORMATS:
        assert E.round_to(math.exp(E.round_to(0.0, fmt)), fmt) == 1.0
        for x in rows:  # four roundings (x - m, exp, Z, p_i), each within u: within 5 u of
            stored = [E.round_to(v, fmt) for v in x]  # the weights of the stored logits
            got, want = E.softmax_in(x, fmt), exact_softmax(stored)
            assert_close(got, want, rel=5 * HALF[fmt], abs=E.smallest_positive(fmt))


@claim(LOW, "bfloat16 has float32's exponent range with far fewer significant bits, so it "
            "overflows where float32 does but rounds much more coarsely.")
@claim(INTERVIEW, "bfloat16 keeps float32's range with only 8 significant bits.")
def test_bfloat16_has_float32_s_range_and_8_significant_bits():
    assert E.significant_bits("bfloat16") == 8 < E.significant_bits("float32") == 24
    top = [E.largest_finite(fmt) for fmt in ("bfloat16", "float32")]
    assert math.frexp(top[0])[1] == math.frexp(top[1])[1]  # the same largest exponent
    limits = [E.exp_threshold(fmt).real for fmt in ("bfloat16", "float32")]
    # exp overflows where float32's does, but for the last bit of bfloat16's largest number:
    # the two largest numbers differ by less than a factor 1 + 2^-7
    assert 0 < limits[1] - limits[0] < math.log(1 + 2.0 ** -7) and top[1] / top[0] < 1 + 2 ** -7


@claim(LOW, "because float64 carries more than twice the format's bits plus two (a double "
            "rounding is then harmless)")
def test_float64_carries_more_than_twice_each_format_s_bits_plus_two():
    assert all(53 >= 2 * E.significant_bits(fmt) + 2 for fmt in ("float16", "bfloat16",
                                                                 "float32"))


@claim(LOW, "float32's error is so far below float16's or bfloat16's that the two agree except "
            "on rare near-ties.")
@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_a_float32_accumulation_rounds_like_the_exact_sum_except_near_ties(fmt):
    # 2000 sums of 2 to 16 exps of random float16 / bfloat16 logits: accumulated in float32,
    # then rounded once to the format, against the exact sum rounded once.  Where they differ,
    # the exact sum lies within the float32 accumulation's error bound (n - 1) 2^-24 sum of a
    # midpoint of two neighbours of the format: a near-tie
    rng, differ = random.Random(11), 0
    for _ in range(2000):
        e = [E.round_to(math.exp(E.round_to(rng.gauss(0, 3), fmt) - 8), fmt)
             for _ in range(rng.randint(2, 16))]
        acc = 0.0
        for v in e:
            acc = E.round_to(acc + v, "float32")
        exact = math.fsum(e)
        a, b = E.round_to(exact, fmt), E.round_to(acc, fmt)
        if a != b:  # a midpoint of a and b lies between exact and acc
            differ += 1
            assert abs(exact - (a + b) / 2) <= (len(e) - 1) * 2.0 ** -24 * exact, e
    assert differ < 2000 / 100  # rare: fewer than 1 in 100


@claim(LOW, "so from that d_k on a logit of one standard deviation is already past the limit.")
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_first_d_k_is_the_first_whose_standard_deviation_reaches_the_limit(fmt):
    limit = E.exp_threshold(fmt).real
    first = math.ceil(limit * limit)
    assert math.sqrt(first) >= limit > math.sqrt(first - 1)
    try:
        beyond = E.round_to(math.exp(math.sqrt(first + 1)), fmt)
    except OverflowError:  # past float64's range
        beyond = math.inf
    assert beyond == math.inf


@claim(LOW, "That includes every row of the first kind (an inf term makes Z inf), and adds the "
            "rows where only the sum passes 65504.")
@claim(LOW, "The normaliser overflows a little more often than a single exp")
@claim(INTERVIEW, "The normaliser Z, a sum of 16 rounded exps, overflows a little more often")
def test_the_normaliser_overflows_in_every_row_a_single_exp_does_and_a_few_more():
    # seeded rows, counted by the emulation's Monte Carlo: Z's count includes the single exp's
    for d_k in (16, 32, 64):
        mc = E.overflow_monte_carlo(d_k, 16, 4096, seed=d_k)
        assert mc.sum_overflows > mc.exp_overflows > 0, d_k
    assert math.inf + 1.0 == math.inf


@claim(LOW, "Unscaled, an unshifted float16 softmax over 16 keys fails on most rows from d_k = "
            "{lp.most.keys} on. Over 1024 keys it does from d_k = {lp.most.long} on.")
@claim(LOW, "With the 1/sqrt(d_k) the logits have variance 1 at initialisation and overflow is "
            "out of reach (the last column).")
@claim(INTERVIEW, "With the 1/sqrt(d_k) scale a single exp overflows in fewer than "
                  "{lp.p.scaled} of rows.")
def test_most_rows_overflow_unscaled_from_64_keys_16_and_none_scaled():
    p = {d_k: E.overflow_probability(d_k, 16) for d_k in (16, 32, 64, 128, 512, 1024)}
    assert p[32].value < 0.5 < p[64].value and all(p[d].value > 0.5 for d in (128, 512, 1024))
    assert E.overflow_probability(16, 1024).value > 0.5
    for d_k in (16, 32, 64, 128, 512, 1024):
        assert E.overflow_probability(d_k, 16, scale=1 / math.sqrt(d_k)).value < 1e-12, d_k


@claim(DERIVATIONS, "In float16 it does not: the product q · k can itself pass 65504, and only a "
                    "factor applied before the product moves that limit, by d_k^(1/4) for q along "
                    "k")
@claim(LOW, "Unscaled, or scaled after the product, the limit is ‖q‖ = ‖k‖ = {lp.norm.float16} "
            "at every d_k here: ‖q‖ ‖k‖ reaches the largest finite float16 (65504) plus half a "
            "spacing.")
@claim(LOW, "A factor applied before it moves the limit up by d_k^(1/4), whether it is "
            "1/sqrt(d_k) on q or d_k^(-1/4) on each of q and k.")
@claim(INTERVIEW, "only a factor applied before the product, on q or split over q and k, moves "
                  "that limit, from ‖q‖ = ‖k‖ = {lp.norm.float16} up by d_k^(1/4)")
@pytest.mark.parametrize("d_k", [16, 64, 128, 1024])
def test_q_dot_k_overflows_float16_at_norm_256_and_a_factor_before_moves_it(d_k):
    c = E.dot_overflow(d_k, "float16")
    below = struct.unpack("<e", (struct.unpack("<H", struct.pack("<e", c))[0] - 1).to_bytes(
        2, "little"))[0]  # the float16 just below c
    assert (c * math.sqrt(d_k)) ** 2 >= 65504 + 16 > (below * math.sqrt(d_k)) ** 2 - 16 * 0
    assert E.dot_in([c] * d_k, [c] * d_k, "float16") == math.inf
    assert E.dot_in([below] * d_k, [below] * d_k, "float16") < math.inf
    assert_close(c * math.sqrt(d_k), 256.0, rel=2.0 ** -10)
    for q_scale, k_scale in ((1 / math.sqrt(d_k), 1.0), (d_k ** -0.25, d_k ** -0.25)):
        moved = E.dot_overflow(d_k, "float16", q_scale=q_scale, k_scale=k_scale)
        assert_close(moved / c, d_k ** 0.25, rel=2.0 ** -9)  # to float16's grid of c


@claim(LOW, "bfloat16 and float32 have range to spare: at d_k = 64 the limit is ‖q‖ = ‖k‖ = "
            "{lp.norm.wide} in both.")
def test_bfloat16_and_float32_overflow_q_dot_k_far_later():
    norms = [E.dot_overflow(64, fmt) * 8 for fmt in ("bfloat16", "float32")]
    assert all(n > 1e18 for n in norms) and f"{norms[0]:.2g}" == f"{norms[1]:.2g}"


# ------------------------------------------------------------------ numerics, worked examples

@claim(NUMERICS, "softmax and its logarithms take any finite logit (the shift keeps them in "
                 "range);")
def test_softmax_takes_the_largest_and_smallest_finite_logits():
    big = 1.7976931348623157e308
    assert softmax([big, -big]) == [1.0, 0.0] and softmax([big, big]) == [0.5, 0.5]


@claim(WORKED, "The quoted values keep p_1 / p_2 = e^0.5, but their p_2 / p_3 is "
               "{ex.s321.1.quoted.ratio23}. It must be e^1, that is {e}.")
def test_the_quoted_first_case_keeps_one_ratio_and_breaks_the_other():
    quoted = [Fraction("0.506"), Fraction("0.307"), Fraction("0.187")]  # as the page quotes
    assert abs(quoted[0] / quoted[1] - Fraction(math.exp(0.5))) < Fraction(1, 100)
    assert abs(quoted[1] / quoted[2] - Fraction(math.e)) > 1


@claim(WORKED, "The conclusion (the gradient shrinks by an order of magnitude and more) "
               "survives; the number does not.")
def test_the_second_case_s_derivative_is_an_order_of_magnitude_below_the_first():
    first, second = (float(p[0]) * (1 - float(p[0])) for p in (
        decimal_softmax([1.0, 0.5, -0.5]), decimal_softmax([8.0, 4.0, -4.0])))
    assert first / second > 10 and abs(second - 0.0003) > 0.01


@claim(WORKED, "no entry of a softmax Jacobian can exceed 1/4 in size")
@pytest.mark.parametrize("seed", range(10))
def test_no_jacobian_entry_exceeds_one_quarter(seed):
    rng = random.Random(seed)
    x = [rng.gauss(0, 2) for _ in range(rng.randint(2, 6))]
    assert all(abs(v) <= 0.25 for row in softmax_jacobian(x) for v in row)


@claim(WORKED, "A normal score falls outside the first about once in "
               "{range.general.512.once-in} draws.")
def test_a_normal_score_falls_outside_4_42_standard_deviations_about_once_in_100000():
    outside = math.erfc(100 / math.sqrt(512) / math.sqrt(2))
    assert 0.5e5 < 1 / outside < 2e5


# ------------------------------------------------------------------ benchmarks, docs/README

@claim(BENCHMARKS, "`python3 stats.py` of one fixed revision took from 2.7 to 5.5 s of CPU, 1.7 "
                   "to 3.4 times the 1.63 s it took there on 3.11.7.")
def test_the_slowdown_of_the_second_machine_is_its_own_figures_ratio():
    with open(os.path.join(ROOT, BENCHMARKS), encoding="utf-8") as f:
        text = f.read()
    row = re.search(r"python3 stats.py: CPU s \(user \+ sys, child\) \| <= 2.5 on 3.11 \| "
                    r"([\d.]+) \| ([\d.]+) \|", text)
    assert row and row[2] == "1.63"  # 3.11.7's column of the 2026-11-25 table
    assert (f"{2.7 / float(row[2]):.1f}", f"{5.5 / float(row[2]):.1f}") == ("1.7", "3.4")


@claim(DOCS, "`.ci/run` runs it on the default `python3` (3.11 here) and on 3.12 and 3.13 where "
             "pyenv has them, which must agree to the byte; a version pyenv lacks is skipped, "
             "with a line that says so.")
@claim(NUMERICS, "`.ci/run` runs the check on the default `python3`, 3.11 here, and on 3.12 and "
                 "3.13 where pyenv has them, skipping a missing one with a line that says so;")
def test_ci_runs_the_build_check_on_python3_and_on_3_12_and_3_13_where_pyenv_has_them():
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert "\npython3 scripts/build.py --check\n" in ci
    loop = ci[ci.index("for want in 3.12 3.13; do"):]
    loop = loop[:loop.index("done")]
    assert 'not installed under pyenv, skipped"; continue' in loop
    assert '"$py" scripts/build.py --check' in loop


covered(INTERVIEW, "Every entry of the softmax Jacobian is at most 1/4 in size and its 2-norm "
                   "is at most 1/2, so softmax never amplifies a gradient; a saturated row passes "
                   "almost none", "test_documents.py::test_softmax_can_only_shrink_a_gradient")
covered(INTERVIEW, "the d_k terms are independent, and variances of independent terms add.",
        "test_documents.py::test_var_qk_is_dk_and_dividing_by_sqrt_dk_gives_one")
covered(INTERVIEW, "every cross term E[q_i q_j k_i k_j] = E[q_i] E[q_j] E[k_i] E[k_j] = 0.",
        "test_documents.py::test_cross_terms_have_expectation_zero")
covered(INTERVIEW, "at a fixed correlation q · k grows like d_k, and under 1/sqrt(d_k) the "
                   "scaled logit would grow like sqrt(d_k) and saturate softmax again.",
        "test_stats.py::test_correlated_logits_grow_like_sqrt_dk_under_the_paper_scale_and_not_"
        "under_mup")
covered(INTERVIEW, "and the answer equals the two-pass one for every block size",
        "test_attention.py::test_streaming_equals_two_pass_for_every_block_size")
covered(INTERVIEW, "Every function here copies first",
        "test_attention.py::test_arguments_are_never_mutated")
covered(INTERVIEW, "J = diag(p) - p p^T: symmetric, rows summing to 0, positive semidefinite, "
                   "entries at most 1/4, 2-norm at most 1/2.",
        "test_softmax.py::test_jacobian_largest_eigenvalue_is_at_most_one_half")
covered(INTERVIEW, "here every attention function raises a `ValueError` that names the rule it "
                   "broke and the shapes that matter, one message per rule",
        "test_boundary.py::test_each_attention_shape_rule_has_its_own_message")
covered(INTERVIEW, "one query decoding against m cached keys, bottom-right, equals the last row "
                   "of full causal attention",
        "test_attention.py::test_decoding_one_query_against_a_cache_equals_the_last_causal_row")
covered(INTERVIEW, "This project raises a `ValueError` naming the row",
        "test_attention.py::test_a_query_with_nothing_to_attend_to_is_refused_naming_its_row")
covered(INTERVIEW, "and so does the gradient that passes through it to the logits, and from them "
                   "to Q and K.",
        "test_documents.py::test_the_causal_chain_from_dk_to_frozen_queries_and_scaling_undoes_"
        "each_link")
covered(INTERVIEW, "q = x W_Q and k = x W_K have independent N(0, 1) components, and Var(q · k) = "
                   "d_k holds.",
        "test_stats.py::test_projected_queries_and_keys_also_have_variance_dk")
covered(DERIVATIONS, "So softmax can only shrink a gradient, never amplify it",
        "test_documents.py::test_softmax_can_only_shrink_a_gradient")
covered(DERIVATIONS, "In exact arithmetic the merge is associative and commutative",
        "test_softmax.py::test_merging_blocks_in_any_split_agrees")
covered(DERIVATIONS, "so two orders agree to a few ulps, not bit for bit.",
        "test_softmax.py::test_merging_blocks_in_any_split_agrees")
covered(DERIVATIONS, "The tests assert the derived bound |p_i - p_i*| / p_i* <= (|x_i - m| + "
                     "E_p|x - m| + 6) U.",
        "test_softmax.py::test_softmax_matches_decimal_within_the_stated_bound")
covered(DERIVATIONS, "`tests/test_stats.py` checks that these rows give the same statistics as "
                     "literal draws of Q, K, V, G pushed through `attention_backward`",
        "test_report.py::test_sections_4_and_5_are_the_medians_with_their_intervals")
covered(DERIVATIONS, "The general-variance document writes d_k sigma^2 and sqrt(d_k) sigma "
                     "instead. That form is right only when one side has variance sigma^2 and "
                     "the other variance 1",
        "test_documents.py::test_with_component_variance_sigma_squared_the_scale_is_sqrt_dk_"
        "sigma_squared")
covered(DERIVATIONS, "The one-pass E[X^2] - E[X]^2 subtracts two nearly equal numbers when the "
                     "data sit far from 0 and can lose every digit.",
        "test_stats.py::test_the_one_pass_formula_fails_where_two_passes_do_not")
covered(DERIVATIONS, "Under c = 1/d_k the gap is rho, whatever d_k.",
        "test_stats.py::test_correlated_logits_grow_like_sqrt_dk_under_the_paper_scale_and_not_"
        "under_mup")
covered(DERIVATIONS, "The sinusoidal positions (Section 3.5) have mean square exactly 1/2 at "
                     "every position",
        "test_scales.py::test_sinusoidal_positions_have_mean_square_one_half_at_every_position")
covered(NUMERICS, "`tests/test_softmax.py` asserts, against 50-digit `decimal`, |p_i - p_i*| / "
                  "p_i* <= (|x_i - m| + E_p|x - m| + 6) U",
        "test_softmax.py::test_softmax_matches_decimal_within_the_stated_bound")
covered(NUMERICS, "every entry of dS is then accurate to a few ulps of its own terms.",
        "test_gradient_accuracy.py::test_softmax_backward_is_within_a_few_ulps_of_its_own_terms")
covered(NUMERICS, "but it is within 4 U sum_t |u_t v_t| of it (`oracles/bounds.py`).",
        "test_attention.py::test_matmul_is_within_the_dot_product_bound_of_exact_fractions")
covered(NUMERICS, "so no result of attention, its backward pass, `dot`, `matmul` or the "
                  "statistics can overflow;",
        "test_boundary.py::test_entries_at_limit_are_accepted_and_the_result_is_finite")
covered(NUMERICS, "`softmax_backward` takes |g_i| up to 2^1021.",
        "test_boundary.py::test_softmax_backward_takes_g_up_to_2_to_the_1021_and_stays_exact_"
        "there")
covered(LOW, "(`1 + 2^-8 + 2^-30` is one; the tests pin it)",
        "test_lowprecision.py::test_bfloat16_rounds_through_float32_which_a_direct_rounding_"
        "would_not")
covered(LOW, "so each limit is exact, not a hand estimate",
        "test_lowprecision.py::test_exp_threshold_real_is_the_last_float64_below_log_of_the_"
        "boundary")
covered(LOW, "Every Monte Carlo count of single-exp overflows is within {lp.agreement} standard "
             "errors of the exact P (the test allows 4).",
        "test_lowprecision.py::test_the_published_monte_carlo_agrees_with_the_exact_probability")
covered(LOW, "the stated error is |T_n − T_(n/2)|, which overstates it",
        "test_lowprecision.py::test_the_overflow_probability_for_one_key_is_the_closed_form_"
        "within_its_error")
covered(WHITEBOARD, "Each function computes the same thing as the library to about 1e-12",
        "test_docs.py::test_whiteboard_attention_forward_backward_and_streaming_equal_the_"
        "library")
covered(WHITEBOARD, "a softmax body of at most 5 lines, attention at most 8, its backward pass "
                    "at most 15.", "test_docs.py::test_whiteboard_versions_fit_on_a_whiteboard")
covered(WORKED, "`tests/test_documents.py` checks every computed value against 50-digit "
                "`decimal` arithmetic.",
        "test_documents.py::test_worked_softmax_example_matches_decimal")
covered(WORKED, "\"agree?\" says whether the computed value, printed the way the document "
                "prints it, reads the same.",
        "test_documents.py::test_the_worked_examples_table_marks_exactly_the_quotes_decimal_"
        "contradicts")
covered("docs/equations.md", "`tests/test_docs.py` checks that every function and test named "
                             "here exists.", "test_docs.py::test_every_test_the_docs_name_exists")
covered("docs/documents.md", "(`tests/test_documents.py` checks that this table lists exactly "
                             "those)",
        "test_documents.py::test_the_documents_page_lists_exactly_the_documents")


# ------------------------------------------------------------------ more of the interview

@claim(INTERVIEW, "Where the factor goes matters less, in exact arithmetic: on the logits, on q, "
                  "or split as d_k^(-1/4) on q and on k, it is the same function of W_Q and W_K")
def test_the_factor_on_the_logits_on_q_or_split_gives_the_same_logits_exactly():
    # in Fractions, d_k = 16: c = 1/4, d_k^(-1/4) = 1/2
    rng = random.Random(5)
    x = [Fraction(rng.randint(-9, 9), 7) for _ in range(8)]
    W_Q = [[Fraction(rng.randint(-9, 9), 5) for _ in range(16)] for _ in range(8)]
    W_K = [[Fraction(rng.randint(-9, 9), 5) for _ in range(16)] for _ in range(8)]
    q = [sum(a * w[c] for a, w in zip(x, W_Q)) for c in range(16)]
    k = [sum(a * w[c] for a, w in zip(x, W_K)) for c in range(16)]
    on_logits = Fraction(1, 4) * sum(a * b for a, b in zip(q, k))
    on_q = sum(Fraction(1, 4) * a * b for a, b in zip(q, k))
    split = sum((a / 2) * (b / 2) for a, b in zip(q, k))
    assert on_logits == on_q == split


@claim(INTERVIEW, "j < i hides each query from its own key, and leaves query 0 with no key at "
                  "all; j <= i + 1 lets each query see one key ahead, one token of the future.")
def test_an_off_by_one_causal_mask_hides_the_own_key_or_shows_the_next():
    n = 5
    strict = [[j < i for j in range(n)] for i in range(n)]
    ahead = [[j <= i + 1 for j in range(n)] for i in range(n)]
    right = causal_mask(n, n)
    assert not any(strict[0]) and all(not strict[i][i] and right[i][i] for i in range(n))
    assert all(ahead[i][i + 1] and not right[i][i + 1] for i in range(n - 1))


@claim(INTERVIEW, "rowsum(P * dP) is also dO_i . O_i, which FlashAttention computes once per "
                  "query")
def test_the_row_sum_of_p_times_dp_is_do_dot_o():
    rng = random.Random(8)
    P = [[Fraction(v) for v in softmax([rng.gauss(0, 2) for _ in range(5)])] for _ in range(3)]
    V = [[Fraction(rng.randint(-9, 9), 4) for _ in range(2)] for _ in range(5)]
    dO = [[Fraction(rng.randint(-9, 9), 3) for _ in range(2)] for _ in range(3)]
    O = [[sum(p * v[e] for p, v in zip(row, V)) for e in range(2)] for row in P]
    dP = [[sum(g * v for g, v in zip(row, v_j)) for v_j in V] for row in dO]
    for i in range(3):
        assert sum(p * g for p, g in zip(P[i], dP[i])) == sum(a * b for a, b in zip(dO[i], O[i]))


# ------------------------------------------------------------------ derivations, numerics

@claim(DERIVATIONS, "Neither kappa_i nor the shift's error bounds the other: adding one constant "
                    "to every logit changes kappa_i and leaves the differences x_j - m, so the "
                    "shift's error, as they are.")
def test_a_constant_on_every_logit_moves_kappa_and_not_the_differences():
    def kappa(x, i):
        p = softmax(x)
        return (1 - p[i]) * abs(x[i]) + math.fsum(p[j] * abs(x[j]) for j in range(len(x))
                                                 if j != i)

    x = [0.0, 10.0, 3.0]
    shifted = [v + 2.0 ** 20 for v in x]  # exact: the differences stay the same floats
    assert [v - max(x) for v in x] == [v - max(shifted) for v in shifted]
    assert kappa(shifted, 1) > 1000 * kappa(x, 1)


@claim(NUMERICS, "A sum of products of up to four such numbers, as long as any list that fits "
                 "in memory, stays far below the float range (2^1024, about 1.8e308)")
def test_sums_of_products_of_four_entries_of_at_most_the_limit_stay_in_range():
    import softmax as library
    assert library.LIMIT == 2.0 ** 200
    assert (2 ** 200) ** 4 * 2 ** 64 < 2 ** 1024  # 2^64 terms: more than any memory holds
    assert f"{2.0 ** 1023 * (2 - 2 ** -52):.2g}" == "1.8e+308"  # the largest float


covered(INTERVIEW, "Each answer points at the code and the test behind it, and every number is "
                   "computed.",
        "test_docs.py::test_every_generated_file_is_what_the_build_writes_now")
covered(README, "The numbers below are those `python3 stats.py` prints at its defaults (seed 0)",
        "test_docs.py::test_every_generated_file_is_what_the_build_writes_now")
covered(INTERVIEW, "softmax(x + c) = softmax(x) for any constant c, so with c = -max every "
                   "exponent is at most 0, nothing overflows, and the largest term is exactly 1.",
        "test_softmax.py::test_softmax_is_shift_invariant_for_random_shifts")
covered(INTERVIEW, "so their weight is exactly 0 and the other weights still sum to 1.",
        "test_attention.py::test_masked_keys_get_weight_exactly_zero_and_vanish_from_the_output")
covered(INTERVIEW, "softmax makes that row a distribution, so each output row is a weighted mean "
                   "of the rows of V.", "test_attention.py::test_weight_rows_sum_to_one")
covered(INTERVIEW, "Two partial states merge the same way, so blocks can be processed "
                   "independently", "test_softmax.py::test_merging_blocks_in_any_split_agrees")
covered(DERIVATIONS, "With c = 1/sqrt(d_k), Var(q · k / sqrt(d_k)) = d_k / d_k = 1 for every "
                     "d_k.",
        "test_documents.py::test_var_qk_is_dk_and_dividing_by_sqrt_dk_gives_one")
covered(DERIVATIONS, "Off the diagonal p_i + p_j <= 1, so p_i p_j <= 1/4 for the same reason.",
        "test_softmax.py::test_jacobian_trace_and_entries_are_bounded")
covered(DERIVATIONS, "So v^T J v <= 2/4 = 1/2, reached at p = (1/2, 1/2) with v = (1, "
                     "-1)/sqrt(2).",
        "test_softmax.py::test_jacobian_largest_eigenvalue_is_at_most_one_half")
covered(DERIVATIONS, "so they are summed over the other entries instead (1 - p_k = sum_{j != k} "
                     "p_j): no cancellation.",
        "test_softmax.py::test_jacobian_diagonal_keeps_a_tiny_derivative")
covered(DERIVATIONS, "which has no such cancellation.",
        "test_gradient_accuracy.py::test_softmax_backward_keeps_the_gradient_of_a_weight_that_"
        "rounded_to_one")
covered(DERIVATIONS, "(it checks the sum to within 1e-9)",
        "test_boundary.py::test_probability_rows_are_checked_to_within_1e_9_one_rule_at_a_time")
covered(DERIVATIONS, "When s is below about 1.1e-16 (half an ulp of 1), the sum 1 + s rounds to "
                     "exactly 1 and log(1 + s) returns 0",
        "test_docs.py::test_the_numbers_written_in_the_prose_are_what_the_code_gives")
covered(DERIVATIONS, "`math.log1p(s)` takes s itself, never forms 1 + s, and returns s (1 - s/2 "
                     "+ ...) to full precision.",
        "test_softmax.py::test_log_softmax_keeps_the_tiny_log_of_the_largest_probability")
covered(DERIVATIONS, "the error of a subtraction is itself a float (TwoSum), and putting it back "
                     "removes it.", "test_compensated.py::test_the_compensated_shift_is_within_an_"
        "ulp_of_decimal")
covered(DERIVATIONS, "**The mean.** E[q_i k_i] = rho, so E[q · k] = rho d_k: it grows like d_k, "
                     "not sqrt(d_k).",
        "test_stats.py::test_correlated_moments_equal_the_gaussian_expectations")
covered(DERIVATIONS, "and against a Monte Carlo run of `stats.sample_dot_products(..., rho=...)`.",
        "test_stats.py::test_correlated_samples_have_the_exact_mean_and_variance")
covered(DERIVATIONS, "Under c = 1/sqrt(d_k) the gap is rho sqrt(d_k): at the same rho it grows "
                     "with d_k, and softmax saturates again",
        "test_stats.py::test_correlated_logits_grow_like_sqrt_dk_under_the_paper_scale_and_not_"
        "under_mup")
covered(DERIVATIONS, "After a LayerNorm |x|^2 = d_model exactly, and nothing changes.",
        "test_documents.py::test_layer_norm_and_independent_projections_give_the_assumed_unit_"
        "components")
covered(DERIVATIONS, "E[(q · k)^4] = 3 d_k^2 + 6 d_k.",
        "test_stats.py::test_fourth_moment_matches_its_conditional_derivation")
covered(WORKED, "And p_1 (1 - p_1) is {ex.s321.1.derivative}, not 0.250.",
        "test_documents.py::test_worked_softmax_example_matches_decimal")
covered(WORKED, "Section 3.2.1 explained uses 3 and the causal chain 2 standard deviations for a "
                "\"typical range\"",
        "test_documents.py::test_quoted_typical_ranges_are_a_fixed_number_of_standard_deviations")
covered(WORKED, "the README's softmax figure (softmax.svg) and section 6 of `python3 stats.py` "
                "draw the right one.",
        "test_docs.py::test_the_softmax_figure_plots_softmax_of_the_logits_and_ten_times_them")
covered(NUMERICS, "Every entry of a vector or matrix argument must be finite and at most "
                  "`softmax.LIMIT` = 2^200 (about 1.6e60) in size.",
        "test_docs.py::test_the_numbers_written_in_the_prose_are_what_the_code_gives")
covered(LOW, "The quadrature error is below {lp.quadrature.error} in every row",
        "test_lowprecision.py::test_the_overflow_probability_for_one_key_is_the_closed_form_"
        "within_its_error")


# ------------------------------------------------------------------ a docstring's claim

def gaussian_expectation(indices):
    """E[prod_t z_(indices[t])] for independent N(0, 1) z, exactly."""
    return math.prod(normal_moment(indices.count(i)) for i in set(indices))


@pytest.mark.parametrize("d_k", [1, 2, 3, 5])
def test_one_shared_q_leaves_the_samples_uncorrelated_but_their_squares_correlated(d_k):
    # stats.sample_dot_products' docstring (issue 29, item 4): with one q and two keys, all
    # components independent N(0, 1), E[(q.k1)(q.k2)] = 0 while corr((q.k1)^2, (q.k2)^2) =
    # 1/(d_k + 3), every expectation summed over the index patterns, exactly
    said = " ".join(stats.sample_dot_products.__doc__.split())
    assert ("would leave the samples q . k_j uncorrelated but not independent, since their "
            "squares share |q|^2 (at rho = 0, corr((q . k_1)^2, (q . k_2)^2) = 1/(d_k + 3))"
            ) in said
    pairs = list(itertools.product(range(d_k), repeat=2))
    quads = list(itertools.product(range(d_k), repeat=4))
    product = sum(gaussian_expectation([i, a]) * gaussian_expectation([i]) *
                  gaussian_expectation([a]) for i, a in pairs)  # E[q_i q_a] E[k1_i] E[k2_a]
    second = d_k  # E[(q . k)^2]
    fourth = sum(gaussian_expectation(list(t)) ** 2 for t in quads)  # E[(q . k)^4]
    cross = sum(gaussian_expectation([i, i, a, a]) for i, a in pairs)  # E[(q.k1)^2 (q.k2)^2]
    assert product == 0 and fourth == 3 * d_k ** 2 + 6 * d_k
    assert Fraction(cross - second ** 2, fourth - second ** 2) == Fraction(1, d_k + 3)


def test_the_one_pass_slip_s_numbers_on_the_page_are_recomputed_here():
    # the values docs/interview.md shows, from raw Markdown, against decimal: where exp leaves
    # the normal floats, the slip's worst relative error at [-740, -741] and [-744, -745] to
    # two digits, and where every exp rounds to 0 (below ln 2^-1075)
    with open(os.path.join(ROOT, INTERVIEW), encoding="utf-8") as f:
        shown = dict(re.findall(r"<!--v:(onepass\.[\w.]+)-->(.*?)<!--/v-->", f.read()))
    assert shown == {
        "onepass.normal": str(round((Decimal(2) ** -1022).ln())),
        "onepass.740": f"{100 * worst([-740.0, -741.0]):.2g}%",
        "onepass.744": f"{100 * worst([-744.0, -745.0]):.2g}%",
        "onepass.zero": str(round(-1075 * Decimal(2).ln()))}
