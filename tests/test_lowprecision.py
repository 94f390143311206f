"""scripts/lowprecision.py and the tables of scripts/lowprecision_tables.py against oracles
that share none of their code.

- rounding: round-to-nearest-even written out in Fractions, from each format's precision
  and exponent range (bfloat16 through float32, as the module documents);
- exp's limits: each checked with 50-digit decimal exp against the exact overflow
  boundary of the format;
- the softmax, masks and dot products: every step redone in Fractions and rounded with
  the oracle (exp from 50-digit decimal);
- the overflow probability: a closed form for one key (q . k is a difference of two Gamma
  variables at even d_k), and a seeded Monte Carlo with a tolerance of 4 standard errors;
- NumPy's float16 and float32, where NumPy is installed (optional).
"""

import math
import os
import random
import struct
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from lowprecision import emulation as lp
from scripts import lowprecision_tables as lpt
from tests.helpers import assert_close
from softmax import softmax

INF = math.inf
# precision p (significant bits), e_min, e_max of each format, from IEEE 754 (bfloat16:
# float32's exponent range with 8 bits)
SPEC = {"float16": (11, -14, 15), "float32": (24, -126, 127), "bfloat16": (8, -126, 127),
        "float64": (53, -1022, 1023)}


# ------------------------------------------------------------------ the oracle

def floor_log2(x: Fraction) -> int:
    """floor(log2 x) for x > 0, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if Fraction(2) ** e <= x else e - 1


def rne(x: Fraction, fmt: str):
    """x rounded to nearest, ties to even, in one step; inf past the range."""
    p, e_min, e_max = SPEC[fmt]
    if x == 0:
        return Fraction(0)
    quantum = Fraction(2) ** (max(floor_log2(abs(x)), e_min) - p + 1)
    r = round(x / quantum) * quantum  # Fraction.__round__ rounds half to even
    return math.copysign(INF, x) if abs(r) >= Fraction(2) ** (e_max + 1) else r


def oracle(x, fmt: str):
    """What the module documents: bfloat16 is float32 first, then 8 bits."""
    x = Fraction(x)
    return rne(rne(x, "float32"), "bfloat16") if fmt == "bfloat16" else rne(x, fmt)


def exp50(x) -> Fraction:
    """exp(x) at 50 digits, for a float or a Fraction x."""
    x = Fraction(x)
    with localcontext() as context:
        context.prec = 50
        return Fraction((Decimal(x.numerator) / Decimal(x.denominator)).exp())


def next_up(x: Fraction, fmt: str) -> Fraction:
    """The next number of the format above x > 0 (a normal number)."""
    p = SPEC[fmt][0]
    return x + Fraction(2) ** (floor_log2(x) - p + 1)


# the exact boundary above which a value rounds to inf: half a spacing past the largest
# finite number; bfloat16's is where float32 rounding first lands on bfloat16's boundary
BOUNDARY = {"float16": Fraction(65520), "float32": (2 - Fraction(1, 2 ** 24)) * 2 ** 127,
            "bfloat16": (2 - Fraction(1, 2 ** 8) - Fraction(1, 2 ** 24)) * 2 ** 127,
            "float64": (2 - Fraction(1, 2 ** 53)) * 2 ** 1023}
NARROW = ("float16", "bfloat16", "float32")  # the emulated formats


def values(seed: int, n: int = 300):
    rng = random.Random(seed)
    return [rng.choice([-1, 1]) * 2.0 ** rng.uniform(-30, 20) * rng.random() for _ in range(n)]


# ------------------------------------------------------------------ rounding

EDGES = {"float16": [1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, 3 * 2 ** -25, 2 ** -26,
                     65519.99, 65520.0, -65520.0, 65535.0, 1e300, 0.1, -1e9],
         "bfloat16": [1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.3961e38, 3.3962e38, 1e-40, -1e9, 0.1],
         "float32": [1 + 2 ** -24, 3.4028235677973362e38, 3.4028235677973366e38, 1e39,
                     2 ** -150, 2 ** -149 * 1.5, -1e9, 0.1]}


@pytest.mark.parametrize("fmt", NARROW)
def test_round_to_is_round_to_nearest_even_with_overflow_to_inf(fmt):
    for x in values(1) + EDGES[fmt]:
        assert lp.round_to(x, fmt) == oracle(x, fmt), (fmt, x)  # the float equals the Fraction


def test_bfloat16_rounds_through_float32_which_a_direct_rounding_would_not():
    x = 1 + 2 ** -8 + 2 ** -30  # float32 drops 2^-30, leaving a tie that goes to even
    assert lp.round_to(x, "bfloat16") == 1.0
    assert rne(Fraction(x), "bfloat16") == 1 + Fraction(1, 128)  # one rounding: up


@pytest.mark.parametrize("code, largest, first_too_large", [
    ("<e", 65519.99, 65520.0), ("<f", 3.4028235677973362e38, 3.4028235677973366e38)],
    ids=["half", "single"])
def test_struct_raises_exactly_where_ieee_rounds_to_inf(code, largest, first_too_large):
    # the premise of the module's overflow handling, as documented in low-precision.md
    assert struct.unpack(code, struct.pack(code, largest))[0] < INF
    with pytest.raises(OverflowError):
        struct.pack(code, first_too_large)
    assert lp.round_to(first_too_large, "float16" if code == "<e" else "float32") == INF
    assert lp.round_to(-first_too_large, "float16" if code == "<e" else "float32") == -INF


def test_round_to_keeps_float64_and_infinities():
    assert lp.round_to(0.1, "float64") == 0.1
    assert [lp.round_to(-INF, fmt) for fmt in lp.FORMATS] == [-INF] * 4


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_largest_finite_is_two_minus_an_ulp_times_two_to_the_e_max(fmt):
    p, _, e_max = SPEC[fmt]
    assert lp.largest_finite(fmt) == (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** e_max


# ------------------------------------------------------------------ exp's limits

@pytest.mark.parametrize("fmt", NARROW)
def test_the_boundaries_are_where_the_oracle_starts_rounding_to_inf(fmt):
    B = BOUNDARY[fmt]
    assert oracle(B, fmt) == INF
    assert oracle(B - Fraction(2) ** (floor_log2(B) - 60), fmt) == lp.largest_finite(fmt)


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_exp_threshold_real_is_the_last_float64_below_log_of_the_boundary(fmt):
    t = lp.exp_threshold(fmt)
    B = BOUNDARY[fmt]
    assert exp50(t.real) < B < exp50(math.nextafter(t.real, INF))


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_exp_threshold_stored_is_the_last_number_of_the_format_below_it(fmt):
    t = lp.exp_threshold(fmt)
    stored = Fraction(t.stored)
    assert oracle(stored, fmt) == stored  # a number of the format
    assert exp50(t.stored) < BOUNDARY[fmt] < exp50(next_up(stored, fmt))


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_overflow_from_is_the_first_float64_that_is_stored_above_it(fmt):
    t = lp.exp_threshold(fmt)
    assert oracle(t.overflow_from, fmt) == next_up(Fraction(t.stored), fmt)
    assert oracle(math.nextafter(t.overflow_from, 0.0), fmt) == Fraction(t.stored)


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_the_numbers_of_a_format_are_its_ieee_definitions(fmt):
    p, e_min, e_max = SPEC[fmt]
    assert lp.significant_bits(fmt) == p
    assert lp.smallest_positive(fmt) == 2.0 ** (e_min - p + 1)
    for x in (1.0, 3.0, 1000.0, 2.0 ** e_min):  # the next number up: one quantum more
        assert lp.next_up(x, fmt) == next_up(Fraction(x), fmt)
    assert lp.next_up(lp.largest_finite(fmt), fmt) == INF
    with pytest.raises(ValueError, match="next_up: x must be a non-negative number of"):
        lp.next_up(-1.0, fmt)


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_exp_underflow_is_where_the_oracle_starts_rounding_exp_to_zero(fmt):
    x = lp.exp_underflow(fmt)
    assert oracle(exp50(x), fmt) > 0
    assert oracle(exp50(math.nextafter(x, -INF)), fmt) == 0


def test_the_float16_limits_are_the_ones_quoted():
    t = lp.exp_threshold("float16")
    assert (round(t.real, 2), t.stored, t.overflow_from) == (11.09, 11.0859375, 11.08984375)
    assert [round(lp.exp_threshold(f).real, 2) for f in lp.FORMATS] == [
        11.09, 88.72, 88.72, 709.78]


# ------------------------------------------------------------------ softmax and masks

def softmax_oracle(x, fmt, shift=True):
    """The documented steps in Fractions, each rounded with the oracle: x stored, x - m,
    exp (at 50 digits), the exact sum Z, e_i / Z; inf and 0/0 as IEEE has them."""
    x = [oracle(v, fmt) for v in x]
    m = max(x) if shift else 0
    e = [oracle(exp50(oracle(v - m, fmt)), fmt) for v in x]
    Z = oracle(sum(e), fmt) if INF not in e else INF
    if Z == INF:  # inf / inf is NaN, finite / inf is 0
        return [math.nan if v == INF else 0.0 for v in e]
    return [math.nan if Z == 0 else oracle(v / Z, fmt) for v in e]


def same(got, want):
    return all((g != g and w != w) or g == w for g, w in zip(got, want)) and len(got) == len(
        want)


@pytest.mark.parametrize("fmt", NARROW)
@pytest.mark.parametrize("shift", [True, False], ids=["shifted", "unshifted"])
def test_softmax_in_rounds_each_step_as_the_oracle_does(fmt, shift):
    rng = random.Random(7)
    rows = [[rng.gauss(0.0, s) for _ in range(rng.randint(2, 6))] for s in (1, 4, 9, 30)
            for _ in range(5)] + [[10.0, 11.0, 12.0], [-20.0, -21.0], [100.0, 101.0]]
    for x in rows:
        if shift or max(x) < 80:  # unshifted, exp50 of a huge x is slow and the answer NaN
            assert same(lp.softmax_in(x, fmt, shift), softmax_oracle(x, fmt, shift)), (fmt, x)


def test_softmax_in_float64_is_the_library_softmax():
    x = [0.3, -1.7, 2.2, 0.0]
    assert_close(lp.softmax_in(x, "float64"), softmax(x), rel=4e-16)
    assert_close(lp.softmax_in(x, "float64", shift=False), softmax(x), rel=4e-16)


@pytest.mark.parametrize("x, fmt, why", [
    ([10.0, 11.0, 12.0], "float16", "exp(12) > 65504"),
    ([-20.0, -21.0, -22.0], "float16", "every exp rounds to 0: 0/0"),
    ([100.0, 101.0], "bfloat16", "exp(100) past float32's range"),
    ([1000.0, 1001.0], "float64", "exp(1000) past float64's range"),
    ([-1000.0, -1001.0], "float64", "every exp underflows"),
], ids=["float16-overflow", "float16-underflow", "bfloat16-overflow", "float64-overflow",
        "float64-underflow"])
def test_an_unshifted_softmax_gives_nan_where_the_shifted_one_is_fine(x, fmt, why):
    assert any(v != v for v in lp.softmax_in(x, fmt, shift=False)), why
    assert_close(lp.softmax_in(x, fmt), softmax(x), abs=4 * 2.0 ** -SPEC[fmt][0])


def test_a_fill_is_stored_in_the_format_before_it_is_added():
    scores, none = [1.3, -0.6], [False, False]
    assert lp.mask_scores(scores, none, -1e9, "float16") == [-INF, -INF]
    assert lp.mask_scores(scores, none, -1e9, "bfloat16") == [-998244352.0] * 2
    assert lp.mask_scores(scores, none, -1e9, "float32") == [-1e9, -1e9]  # absorbed: |s| < 32
    assert lp.mask_scores(scores, none, -1e9, "float64") == [
        float(Fraction(1.3) - 10 ** 9), float(Fraction(-0.6) - 10 ** 9)]  # each sum rounded
    assert lp.mask_scores(scores, [True, False], -1e9, "float32", how="fill") == [
        float(oracle(1.3, "float32")), -1e9]


SCORES, NONE = lpt.SCORES, [False] * len(lpt.SCORES)


def full_row(fill, fmt, how="add"):
    return lp.softmax_in(lp.mask_scores(SCORES, NONE, fill, fmt, how), fmt)


def test_a_fully_masked_row_with_minus_inf_is_nan_in_every_format():
    for fmt in lp.FORMATS:
        for how in ("add", "fill"):
            assert all(v != v for v in full_row(-INF, fmt, how)), (fmt, how)


def test_minus_1e9_added_to_a_fully_masked_row_depends_on_the_format():
    assert all(v != v for v in full_row(-1e9, "float16"))  # -1e9 is -inf in float16
    assert full_row(-1e9, "bfloat16") == [0.25] * 4  # absorbed: uniform
    assert full_row(-1e9, "float32") == [0.25] * 4
    float64 = full_row(-1e9, "float64")  # scores kept to 1e9's spacing, 2^-23
    assert_close(float64, softmax(SCORES), abs=1e-7)
    assert max(float64) > 0.5  # not uniform: as if unmasked


def test_minus_1000_added_to_a_fully_masked_row_keeps_the_scores_to_the_spacing_at_1000():
    assert_close(full_row(-1000.0, "float32"), softmax(SCORES), abs=1e-5)  # spacing 2^-14
    assert_close(full_row(-1000.0, "float16"), softmax(SCORES), abs=0.1)  # spacing 0.5
    assert full_row(-1000.0, "float16") != full_row(-1000.0, "float64")


@pytest.mark.parametrize("fill", [-1e9, -1000.0, "lowest"],
                         ids=["fill -1e9", "fill -1000", "the lowest finite"])
def test_a_finite_fill_written_over_a_fully_masked_row_gives_a_uniform_row(fill):
    for fmt in lp.FORMATS[1:] if fill == -1e9 else lp.FORMATS:
        f = -lp.largest_finite(fmt) if fill == "lowest" else fill
        assert full_row(f, fmt, "fill") == [0.25] * 4, fmt


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_a_row_that_keeps_keys_attends_as_if_the_masked_key_were_absent(fmt):
    kept = softmax([s for s, k in zip(SCORES, lpt.KEEP) if k])
    for fill in (-INF, -1e9, -1000.0, -lp.largest_finite(fmt)):
        for how in ("add", "fill"):
            p = lp.softmax_in(lp.mask_scores(SCORES, lpt.KEEP, fill, fmt, how), fmt)
            assert p[-1] == 0.0  # the masked key, exactly
            assert_close(p[:-1], kept, abs=8 * 2.0 ** -SPEC[fmt][0])


@pytest.mark.parametrize("fmt", lp.FORMATS)
def test_minus_1000_does_not_mask_a_score_that_leads_by_1000(fmt):
    assert lp.softmax_in(lp.mask_scores([0.0, 1000.0], [True, False], -1000.0, fmt), fmt) == [
        0.5, 0.5]


# ------------------------------------------------------------------ dot products

@pytest.mark.parametrize("fmt", NARROW)
def test_dot_in_is_the_exact_dot_product_of_the_stored_numbers_rounded_once(fmt):
    rng = random.Random(3)
    for _ in range(40):
        d = rng.randint(1, 20)
        q, k = ([rng.gauss(0.0, 30.0) for _ in range(d)] for _ in range(2))
        exact = sum(oracle(a, fmt) * oracle(b, fmt) for a, b in zip(q, k))
        assert lp.dot_in(q, k, fmt) == oracle(exact, fmt)


@pytest.mark.parametrize("d_k", [16, 64, 128, 1024], ids=lambda d: f"d_k={d}")
def test_q_dot_k_overflows_float16_when_the_norms_reach_256(d_k):
    # the smallest float16 c with c^2 d_k >= 65520 (the boundary), found from Fractions
    c = c_over = oracle(250 / math.sqrt(d_k), "float16")
    while c_over * c_over * d_k < BOUNDARY["float16"]:
        c, c_over = c_over, next_up(c_over, "float16")
    assert c * c * d_k < BOUNDARY["float16"] <= c_over * c_over * d_k
    assert lp.dot_in([float(c_over)] * d_k, [float(c_over)] * d_k, "float16") == INF
    assert lp.dot_in([float(c)] * d_k, [float(c)] * d_k, "float16") < INF
    assert abs(float(c_over) * math.sqrt(d_k) - 256) < 256 * 2 ** -9  # ‖q‖ = 256
    assert lp.dot_overflow(d_k) == float(c_over)


def scaled_dot_is_inf(c: Fraction, d_k: int, q_scale: float, k_scale: float) -> bool:
    """The oracle's q . k for q = c q_scale (1, ..., 1), k = c k_scale (1, ..., 1), each
    stored in float16, and the exact sum rounded: inf or not."""
    q, k = (oracle(c * Fraction(s), "float16") for s in (q_scale, k_scale))
    return oracle(d_k * q * k, "float16") == INF


@pytest.mark.parametrize("placement", ["q", "q and k"])
@pytest.mark.parametrize("d_k", [16, 64, 128, 1024], ids=lambda d: f"d_k={d}")
def test_a_factor_before_the_product_moves_the_overflow_by_the_fourth_root(d_k, placement):
    scales = (d_k ** -0.5, 1.0) if placement == "q" else (d_k ** -0.25, d_k ** -0.25)
    c = Fraction(lp.dot_overflow(d_k, "float16", *scales))
    below = c - Fraction(2) ** (floor_log2(c) - 10)  # the float16 number before c (c > 2^e)
    assert scaled_dot_is_inf(c, d_k, *scales) and not scaled_dot_is_inf(below, d_k, *scales)
    assert abs(float(c) * math.sqrt(d_k) / 256 - d_k ** 0.25) < 0.01 * d_k ** 0.25


def test_the_norms_block_quotes_256_and_the_fourth_root_gain():
    lines = lpt.blocks()["lp-norms"].splitlines()
    for line in lines[2:2 + len(lpt.NORM_D_KS)]:
        d_k, c, norm, c_q, norm_q, c_both, norm_both = (
            float(v) for v in line.strip("| ").split(" | "))
        assert norm == 256 and c == lp.dot_overflow(int(d_k))
        assert c_q == lp.dot_overflow(int(d_k), q_scale=d_k ** -0.5)
        assert c_both == lp.dot_overflow(int(d_k), q_scale=d_k ** -0.25, k_scale=d_k ** -0.25)
        for n in (norm_q, norm_both):
            assert abs(n / norm - d_k ** 0.25) < 0.01 * d_k ** 0.25


# ------------------------------------------------------------------ overflow probability

def one_key_probability(d_k: int, c: Fraction) -> float:
    """P(q . k >= c) at even d_k: q . k = G1 - G2, G_i ~ Gamma(d_k/2, 1) (both have the
    characteristic function (1 + t^2)^(-d_k/2)), so with k = d_k/2,
    P = e^-c sum_{i<k} (1/i!) sum_{j<=i} C(i,j) c^(i-j) Gamma(j+k) / (Gamma(k) 2^(j+k))."""
    k = d_k // 2
    poly = sum(Fraction(1, math.factorial(i)) * math.comb(i, j) * c ** (i - j)
               * Fraction(math.factorial(j + k - 1), math.factorial(k - 1) * 2 ** (j + k))
               for i in range(k) for j in range(i + 1))
    with localcontext() as context:
        context.prec = 50
        return float((-Decimal(c.numerator) / Decimal(c.denominator)).exp()
                     * Decimal(poly.numerator) / Decimal(poly.denominator))


@pytest.mark.parametrize("d_k", [2, 4, 16, 64, 128], ids=lambda d: f"d_k={d}")
def test_the_overflow_probability_for_one_key_is_the_closed_form_within_its_error(d_k):
    c = Fraction(lp.exp_threshold("float16").overflow_from)
    P = lp.overflow_probability(d_k, 1)
    exact = one_key_probability(d_k, c)
    assert abs(P.value - exact) <= P.error, (P, exact)
    assert P.error < 1e-12


def test_the_overflow_probability_grows_with_d_k_and_m_and_the_scale_removes_it():
    P = [lp.overflow_probability(d_k, 16).value for d_k in (4, 16, 64, 1024)]
    assert P == sorted(P) and 0.0 < P[0] < 0.001 and P[-1] > 0.999
    assert lp.overflow_probability(16, 1024).value > lp.overflow_probability(16, 16).value
    assert lp.overflow_probability(1024, 16, scale=1 / 32).value < 1e-20
    assert lp.overflow_probability(64, 16, "float32").value < 1e-17


def test_the_overflow_probability_of_m_keys_is_one_minus_the_chance_that_all_stay_below():
    # m = 2 from m = 1 alone is not possible (the keys share q), but the bounds
    # P1 <= P2 <= 2 P1 hold for any dependence
    P1, P2 = (lp.overflow_probability(16, m).value for m in (1, 2))
    assert P1 < P2 < 2 * P1


@pytest.mark.slow
@pytest.mark.parametrize("d_k, rows", [(16, 3000), (32, 1500)],
                         ids=["d_k=16, 3000 rows", "d_k=32, 1500 rows"])
def test_the_overflow_probability_agrees_with_a_brute_force_monte_carlo(d_k, rows):
    # the emulated pipeline, not the formula: seed 12345 + d_k; with the exact P, the count
    # is Binomial(rows, P): |estimate - P| <= 4 sqrt(P (1 - P) / rows) + P.error fails with
    # probability about 6e-5 for a correct P
    P = lp.overflow_probability(d_k, 16)
    mc = lp.overflow_monte_carlo(d_k, 16, rows, seed=12345 + d_k)
    assert abs(mc.estimate - P.value) <= 4 * math.sqrt(P.value * (1 - P.value) / rows) + P.error
    assert mc.exp_overflows <= mc.sum_overflows


def test_a_probability_lost_in_its_error_bound_is_printed_as_the_bound():
    # float64 at d_k = 64: exp overflows at q . k = 709.78, about 89 standard deviations of
    # q . k; the quadrature's value underflows to 0 and only its error bound is proven, so
    # the interview table prints that bound (it once printed "< 1e-300", which was not)
    P = lp.overflow_probability(64, 16, "float64")
    assert P.value == 0.0 and 1e-48 < P.error < 1e-47
    assert "| < 1e-47 |" in "\n".join(lpt.blocks().values())


@pytest.mark.slow
def test_the_published_monte_carlo_agrees_with_the_exact_probability():
    for d_k in lpt.D_KS:  # the rows of docs/low-precision.md, same seeds and sizes
        P = lp.overflow_probability(d_k, lpt.KEYS)
        mc = lp.overflow_monte_carlo(d_k, lpt.KEYS, lpt.ROWS, lpt.SEED + d_k)
        assert abs(mc.estimate - P.value) <= 4 * math.sqrt(P.value * (1 - P.value) / lpt.ROWS)


def test_the_monte_carlo_with_one_key_agrees_with_the_closed_form():
    # seed 3; Binomial(1000, P) with P = 0.08 from the closed form: 4 standard errors
    P = one_key_probability(64, Fraction(lp.exp_threshold("float16").overflow_from))
    mc = lp.overflow_monte_carlo(64, 1, 1000, seed=3)
    assert abs(mc.estimate - P) <= 4 * math.sqrt(P * (1 - P) / 1000)


def test_the_monte_carlo_counts_what_the_documented_draws_give_in_fractions():
    # the protocol of overflow_monte_carlo: per row, |q|^2 ~ chi^2(d_k) (gammavariate), then
    # m N(0, 1) draws z_j, logits |q| z_j; here each logit's rounding to float16, its exp
    # and the sum Z are redone in Fractions and rounded with the oracle
    d_k, m, rows, seed = 32, 16, 40, 4
    rng, exp_overflows, sum_overflows = random.Random(seed), 0, 0
    for _ in range(rows):
        norm = math.sqrt(rng.gammavariate(d_k / 2, 2.0))
        e = [oracle(exp50(oracle(norm * rng.gauss(0.0, 1.0), "float16")), "float16")
             for _ in range(m)]
        exp_overflows += INF in e
        sum_overflows += INF in e or oracle(sum(e), "float16") == INF
    mc = lp.overflow_monte_carlo(d_k, m, rows, seed)
    assert (mc.exp_overflows, mc.sum_overflows) == (exp_overflows, sum_overflows)
    assert 0 < exp_overflows < sum_overflows < rows  # the case exercises both counts


def test_the_monte_carlo_counts_a_row_once_and_is_reproducible():
    a = lp.overflow_monte_carlo(8, 4, 50, seed=5)
    assert a == lp.overflow_monte_carlo(8, 4, 50, seed=5)
    assert lp.overflow_monte_carlo(1, 1, 50, seed=5).exp_overflows == 0  # |q k| < 11 here
    big = lp.overflow_monte_carlo(1024, 16, 8, seed=1)  # P = 0.9993 per row
    assert big.exp_overflows == big.sum_overflows == 8
    assert (big.estimate, big.standard_error) == (1.0, 0.0)
    some = lp.overflow_monte_carlo(32, 16, 40, seed=2)  # P = 0.33 per row
    assert 0 < some.exp_overflows <= some.sum_overflows < 40
    assert some.standard_error == math.sqrt(some.estimate * (1 - some.estimate) / 40)
    assert some.sum_estimate == some.sum_overflows / 40
    assert some.sum_standard_error == math.sqrt(
        some.sum_estimate * (1 - some.sum_estimate) / 40)


# ------------------------------------------------------------------ the boundary

@pytest.mark.parametrize("call, error", [
    (lambda: lp.round_to(1.0, "half"), ValueError),
    (lambda: lp.round_to(1.0, 16), TypeError),
    (lambda: lp.round_to(math.nan, "float16"), ValueError),
    (lambda: lp.round_to(INF, "float16"), ValueError),
    (lambda: lp.round_to("1", "float16"), TypeError),
    (lambda: lp.softmax_in([], "float16"), ValueError),
    (lambda: lp.softmax_in([1.0], "float16", shift=1), TypeError),
    (lambda: lp.mask_scores([1.0, 2.0], [True], -1e9, "float16"), ValueError),
    (lambda: lp.mask_scores([1.0], [1], -1e9, "float16"), TypeError),
    (lambda: lp.mask_scores([1.0], [True], -1e9, "float16", how="bias"), ValueError),
    (lambda: lp.dot_in([1e5], [1.0], "float16"), ValueError),
    (lambda: lp.dot_in([1.0, 2.0], [1.0], "float16"), ValueError),
    (lambda: lp.overflow_probability(0, 16), ValueError),
    (lambda: lp.overflow_probability(16, 16, scale=0.0), ValueError),
    (lambda: lp.overflow_monte_carlo(16, 16, 1.5), TypeError),
], ids=["unknown-format", "format-not-a-str", "nan", "plus-inf", "str-input", "empty-row",
        "shift-not-a-flag", "keep-too-short", "keep-not-bool", "unknown-how",
        "dot-beyond-range", "dot-lengths", "d_k-zero", "scale-zero", "trials-float"])
def test_bad_arguments_are_refused_at_the_boundary(call, error):
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).split(":")[0] in {
        "round_to", "softmax_in", "mask_scores", "dot_in", "overflow_probability",
        "overflow_monte_carlo"}  # the message names the function called


def test_arguments_are_not_mutated():
    scores, keep = [1.3, 2.1], [True, False]
    lp.softmax_in(lp.mask_scores(scores, keep, -1e9, "float16"), "float16")
    assert (scores, keep) == ([1.3, 2.1], [True, False])


# ------------------------------------------------------------------ the docs

def test_the_values_name_the_limits_and_the_required_blocks_exist():
    values = lpt.values()
    assert values["lp.exp.float16"] == "11.09" and values["lp.exp.float64"] == "709.78"
    assert values["lp.norm.float16"] == "256" and values["lp.spread"] == "[0.5, 0.5]"
    assert values["lp.f32.spacing"] == "64" and values["lp.f32.absorbed"] == "32"


def cells(block: str, rows: int):
    """The cells of the first table of a block: its body's first `rows` rows."""
    return [line.strip("| ").split(" | ") for line in block.splitlines()[2:2 + rows]]


def test_the_formats_block_against_the_formats_definitions():
    table = cells(lpt.blocks()["lp-formats"], 4)
    for (fmt, bits, largest, smallest, stored, at_1e9, at_1000), name in zip(table, lp.FORMATS):
        p, e_min, e_max = SPEC[name]
        assert (fmt, int(bits)) == (name, p)
        assert float(largest) == float(f"{(2 - 2.0 ** (1 - p)) * 2.0 ** e_max:.5g}")
        assert float(smallest) == float(f"{2.0 ** (e_min - p + 1):.3g}")
        assert float(stored) == oracle(-1e9, fmt)
        assert float(at_1000) == float(f"{2.0 ** (9 - p + 1):.3g}")  # 1000 is in [2^9, 2^10)
        assert at_1e9 == "(inf)" if fmt == "float16" else float(at_1e9) == float(
            f"{2.0 ** (29 - p + 1):.3g}")  # 1e9 is in [2^29, 2^30)


def test_the_exp_block_against_the_underflow_boundary_and_the_first_d_k_at_the_limit():
    table = cells(lpt.blocks()["lp-exp"], 4)
    for row, name in zip(table, lp.FORMATS):
        p, e_min, _ = SPEC[name]
        # exp(x) rounds to 0 once it is at most half the smallest positive number
        assert float(row[5]) == round((e_min - p) * math.log(2), 2)
        # the first integer d_k with sqrt(d_k) >= the limit: d_k - 1 < limit^2 <= d_k
        limit, d_k = Fraction(lp.exp_threshold(name).real), int(row[6])
        assert d_k - 1 < limit * limit <= d_k
    assert [int(row[6]) for row in table] == [123, 7872, 7872, 503792]


def test_the_overflow_block_labels_both_events_and_z_includes_the_single_exp():
    table = cells(lpt.blocks()["lp-overflow"], len(lpt.D_KS))
    for row in table:
        exp_count, z_count = (int(cell.split("/")[0]) for cell in (row[2], row[4]))
        assert exp_count <= z_count
    header = lpt.blocks()["lp-overflow"].splitlines()[0]
    assert "exp = inf" in header and "Z = inf" in header


def test_the_format_facts_written_in_the_pages_are_the_emulations():
    # stated as plain text, one generated value per sentence being the pages' rule
    facts = {"docs/interview.md": [
        f"float16 has {lp.significant_bits('float16')} significant bits and its largest "
        f"finite number is {lp.largest_finite('float16'):.0f}",
        f"only {lp.significant_bits('bfloat16')}\nsignificant bits",
        f"1e9 is past {lp.largest_finite('float16'):.0f}, so -1e9 is stored as "
        f"{lp.round_to(-1e9, 'float16')}"],
        "docs/low-precision.md": [
            f"adds the rows\n  where only the sum passes {lp.largest_finite('float16'):.0f}",
            f"reaches the largest\nfinite float16 ({lp.largest_finite('float16'):.0f})"],
        "docs/derivations.md": [f"itself pass {lp.largest_finite('float16'):.0f}"]}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for page, sentences in facts.items():
        with open(os.path.join(root, page), encoding="utf-8") as f:
            text = f.read()
        for sentence in sentences:
            assert sentence in text, (page, sentence)


@pytest.mark.slow
def test_the_blocks_are_complete_and_stable():
    blocks = lpt.blocks()
    assert {"lp-interview", "lp-misconception", "lp-overflow", "lp-full"} <= set(blocks)
    assert blocks == lpt.blocks()
    assert "| -1e9 added | NaN | uniform, exactly | uniform, exactly | as if unmasked" in \
        blocks["lp-misconception"]
    # bfloat16's spacing at 1000 is 4: the added -1000 row is near no answer at all
    assert "| -1000 | added (a bias) | as if unmasked, off by 0.06 | none of them" in \
        blocks["lp-full"]


# ------------------------------------------------------------------ NumPy (optional)

def numpy_softmax(np, x, t, shift):
    """softmax written out of NumPy's own operations in dtype t, each rounded to t."""
    a = np.array(x, dtype=t)
    e = np.exp(a - a.max()) if shift else np.exp(a)
    return (e / e.sum(dtype=t)).tolist()


# NumPy's float16 operations are float32 ones rounded to float16, as the emulation's are:
# they agree to the bit.  Its float32 exp is not correctly rounded and its sums run in
# float32 in its own order: within 8 units of float32's last place (2^-24 relative each).
NUMPY_TOLERANCE = {"float16": 0.0, "float32": 8 * 2.0 ** -24}


@pytest.mark.parametrize("fmt", ["float16", "float32"])
def test_the_emulation_matches_numpy(fmt):
    np = pytest.importorskip("numpy")
    t = {"float16": np.float16, "float32": np.float32}[fmt]

    def check(got, want):
        assert [v != v for v in got] == [v != v for v in want], (got, want)  # NaN alike
        assert_close([g for g in got if g == g], [w for w in want if w == w],
                     rel=NUMPY_TOLERANCE[fmt])

    rng = random.Random(11)
    rows = [[rng.gauss(0.0, s) for _ in range(rng.randint(2, 9))] for s in (1, 3, 10)
            for _ in range(20)] + [list(x) for x in lpt.LOGITS[:5]] + [lpt.SCORES]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for x in values(11):
            assert float(t(x)) == lp.round_to(x, fmt), x
        for x in rows:
            for shift in (True, False):
                check(numpy_softmax(np, x, t, shift), lp.softmax_in(x, fmt, shift))
        scores = np.array(lpt.SCORES, dtype=t)
        for fill in (-1e9, -1000.0, -INF):
            for how, masked in (("add", scores + t(fill)), ("fill", np.full_like(scores, fill))):
                want = lp.mask_scores(lpt.SCORES, NONE, fill, fmt, how)
                assert masked.tolist() == want, (fill, how)
                check(numpy_softmax(np, want, t, True), lp.softmax_in(want, fmt))
