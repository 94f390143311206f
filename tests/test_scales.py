"""Tests for scripts/scales.py: logit_variance against an exact derivation in Fractions (every
place, input and divisor), its verdicts, and a Monte Carlo run that draws embeddings,
sinusoidal positions and projections; length_axis against softmax.softmax and
stats.softmax_entropy on explicit lists, and against its closed form at 50 digits."""

import itertools
import math
import random
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from tests.helpers import assert_close
from oracles.exact import U, decimal_log1p
from scripts.scales import (INPUTS, PLACES, LengthRow, LogitVariance, length_axis, logit_variance,
                            steady_gap)
from softmax import softmax
from stats import softmax_entropy

try:
    import numpy
except ImportError:  # the NumPy check is skipped without it
    numpy = None

DIVISORS = ("d_k", "d_model", "none")


# ------------------------------------------------------------------ which sqrt, where
# The model: inputs x whose components have mean square v; W_Q, W_K of N(0, 1/d_model)
# entries, so that q_c = x . W_Q[:, c] and k_c have variance v; the logit S = c q . k over
# d_k components, Var(S) = d_k Var(q_c) Var(k_c) c^2.  The code divides by sqrt(D) for
# D = d_k, d_model or 1; each place puts that factor, as a power of D, on q's variance, on
# k's variance or on the logit, and "twice" adds the framework's own 1/sqrt(d_k).

SIDES = {  # where -> (exponent of 1/D on Var(q_c), on Var(k_c), on the logit's c^2)
    "logits": (0, 0, 1), "q": (1, 0, 0), "q and k": (Fraction(1, 2), Fraction(1, 2), 0),
    "W_Q init": (1, 0, 0),  # W_Q entries of variance 1 / (d_model D)
    "framework scale": (0, 0, 1),  # passed as scale=, which replaces the default
    "twice": (0, 0, 1),  # by hand on the logits, then the framework's 1/sqrt(d_k) as well
}


def mean_square(inputs, d_model) -> Fraction:
    """v: LayerNorm makes it 1; embeddings N(0, 1/d_model) contribute 1/d_model, or 1 once
    multiplied by sqrt(d_model); sinusoidal positions add 1/2 (sin^2 + cos^2 = 1 per pair)."""
    return {"layer_norm": Fraction(1), "E sqrt(d_model) + PE": 1 + Fraction(1, 2),
            "E + PE": Fraction(1, d_model) + Fraction(1, 2)}[inputs]


def exact_logit_variance(d_model, heads, divide_by, where, inputs, d_k=None) -> Fraction:
    d_k = d_model // heads if d_k is None else d_k
    D = {"d_k": d_k, "d_model": d_model, "none": 1}[divide_by]
    on_q, on_k, on_logit = SIDES[where]
    exponent = on_q + on_k + on_logit  # 1 in every place: the powers of D multiply
    assert exponent == 1
    v = mean_square(inputs, d_model)
    framework = Fraction(1, d_k) if where == "twice" else 1
    return d_k * v * v * Fraction(1, D) * framework


SHAPES = [(512, 8, None), (64, 1, None), (768, 12, None), (16, 16, None), (512, 8, 32),
          (256, 4, 256)]
SHAPE_IDS = ["d_model 512, 8 heads", "one head", "d_model 768, 12 heads", "d_k = 1",
             "d_k = 32 given", "d_k = d_model given"]


@pytest.mark.parametrize("d_model, heads, d_k", SHAPES, ids=SHAPE_IDS)
def test_logit_variance_is_the_exact_variance_in_every_place(d_model, heads, d_k):
    for divide_by, where, inputs in itertools.product(DIVISORS, PLACES, INPUTS):
        got = logit_variance(d_model, heads, d_k=d_k, divide_by=divide_by, where=where,
                             inputs=inputs)
        assert isinstance(got, LogitVariance)
        want = exact_logit_variance(d_model, heads, divide_by, where, inputs, d_k)
        assert got.variance == want and type(got.variance) in (int, Fraction), \
            (divide_by, where, inputs)


@pytest.mark.parametrize("kwargs, variance, verdict", [
    (dict(), 1, "1: right"),
    (dict(where="q"), 1, "1: right"),
    (dict(where="q and k"), 1, "1: right"),
    (dict(where="W_Q init"), 1, "1: right"),
    (dict(where="framework scale"), 1, "1: right"),
    (dict(divide_by="none"), 64, "d_k: no scale"),
    (dict(divide_by="none", where="q"), 64, "d_k: no scale"),
    (dict(divide_by="d_model"), Fraction(1, 8), "1/heads: divided by d_model"),
    (dict(divide_by="d_model", where="q and k"), Fraction(1, 8), "1/heads: divided by d_model"),
    (dict(where="twice"), Fraction(1, 64), "1/d_k: scaled twice"),
    (dict(divide_by="none", where="twice"), 1, "1: right"),  # the framework's scale alone
    (dict(divide_by="d_model", where="twice"), Fraction(1, 512), "0.00195: scaled twice"),
    (dict(inputs="E sqrt(d_model) + PE"), Fraction(9, 4), "2.25: inputs of mean square 3/2"),
    (dict(inputs="E + PE"), Fraction(257, 512) ** 2, "0.252: inputs of mean square 257/512"),
    (dict(divide_by="none", inputs="E + PE"), Fraction(257, 64) ** 2,
     "16.1: no scale and inputs of mean square 257/512"),
    (dict(d_k=32, divide_by="d_model"), Fraction(1, 16), "0.0625: divided by d_model"),
    (dict(d_k=32), 1, "1: right"),
], ids=["on the logits", "on q", "split between q and k", "folded into W_Q", "a framework's "
        "scale=", "no scale", "no scale, on q", "by d_model", "by d_model, split", "twice",
        "the framework's alone", "by d_model, then the framework's", "embeddings times "
        "sqrt(d_model), plus positions", "embeddings plus positions", "no scale, and "
        "embeddings plus positions", "d_k given, by d_model",
        "d_k given"])
def test_the_verdicts_of_the_documented_mistakes(kwargs, variance, verdict):
    # d_model 512 and 8 heads: d_k = 64, the paper's base model
    assert logit_variance(512, 8, **kwargs) == (variance, verdict)


def symbolic(verdict, d_k, heads):
    """The variance a verdict's first field names: "1", "d_k", "1/d_k", "1/heads", or a
    number printed to 3 significant digits (then returned as that string)."""
    head = verdict.split(":")[0]
    return {"1": Fraction(1), "d_k": Fraction(d_k), "1/d_k": Fraction(1, d_k),
            "1/heads": Fraction(1, heads)}.get(head, head)


def verdict_mismatches(inputs_list):
    """(case, variance, verdict) for every verdict whose first field is not the variance."""
    wrong = []
    for (d_model, heads, d_k), divide_by, where, inputs in itertools.product(
            SHAPES, DIVISORS, PLACES, inputs_list):
        got = logit_variance(d_model, heads, d_k=d_k, divide_by=divide_by, where=where,
                             inputs=inputs)
        named = symbolic(got.verdict, d_k or d_model // heads, heads)
        printed = named if isinstance(named, str) else None
        if named != got.variance and printed != f"{float(got.variance):.3g}":
            wrong.append(((d_model, heads, d_k, divide_by, where, inputs), got))
        assert (got.verdict == "1: right") == (got.variance == 1)
    return wrong


def test_every_verdict_names_the_variance_with_unit_inputs():
    assert verdict_mismatches(["layer_norm"]) == []


def test_every_verdict_names_the_variance_whatever_the_inputs():
    # logit_variance(512, 8, divide_by="none", inputs="E + PE") is 66049/4096 = 16.1, but its
    # verdict reads "d_k: no scale", the variance of 64 with unit inputs
    assert verdict_mismatches(["E sqrt(d_model) + PE", "E + PE"]) == []


@pytest.mark.parametrize("d_model", [16, 512], ids=lambda d: f"d_model={d}")
def test_sinusoidal_positions_have_mean_square_one_half_at_every_position(d_model):
    # "Attention Is All You Need" (Section 3.5): PE(pos, 2i) = sin(pos / 10000^(2i/d)),
    # PE(pos, 2i + 1) = cos(the same): each pair has sin^2 + cos^2 = 1, within 2 U
    for pos in (0, 1, 7, 100, 4999):
        pe = positions(pos, d_model)
        assert_close(math.fsum(v * v for v in pe) / d_model, 0.5, abs=2 * U)


def positions(pos, d_model):
    return [f(pos / 10000 ** (2 * (c // 2) / d_model))
            for c, f in zip(range(d_model), itertools.cycle((math.sin, math.cos)))]


@pytest.mark.slow
def test_the_input_variance_of_embeddings_and_positions_is_real_in_every_place():
    # Two tokens at distinct positions: x = e sqrt(d_model) + PE(pos), e with N(0, 1/d_model)
    # entries; W_Q, W_K with N(0, 1/d_model) entries; q = x_a W_Q, k = x_b W_K; then each
    # place applies its 1/sqrt(d_model) literally.  E[S] = 0, so (1/n) sum S^2 estimates
    # Var(S), with standard error sqrt(((1/n) sum S^4 - ((1/n) sum S^2)^2) / n); four of them.
    d_model, heads, n = 32, 4, 3000
    d_k, D, rng = d_model // heads, d_model, random.Random(2024)
    sigma = 1 / math.sqrt(d_model)
    squares = {where: [] for where in PLACES}
    for _ in range(n):
        pos_a, pos_b = rng.sample(range(512), 2)
        x_a, x_b = ([rng.gauss(0.0, sigma) * math.sqrt(d_model) + p
                     for p in positions(pos, d_model)] for pos in (pos_a, pos_b))
        W_Q, W_K = ([[rng.gauss(0.0, sigma) for _ in range(d_k)] for _ in range(d_model)]
                    for _ in range(2))
        q, k = ([math.fsum(x[r] * W[r][c] for r in range(d_model)) for c in range(d_k)]
                for x, W in ((x_a, W_Q), (x_b, W_K)))
        q_small = [math.fsum(x_a[r] * W_Q[r][c] / math.sqrt(D) for r in range(d_model))
                   for c in range(d_k)]  # W_Q drawn with variance 1 / (d_model D)
        dot = math.fsum(a * b for a, b in zip(q, k))
        logits = {"logits": dot / math.sqrt(D),
                  "q": math.fsum(a / math.sqrt(D) * b for a, b in zip(q, k)),
                  "q and k": math.fsum(a * D ** -0.25 * b * D ** -0.25 for a, b in zip(q, k)),
                  "W_Q init": math.fsum(a * b for a, b in zip(q_small, k)),
                  "framework scale": (1 / math.sqrt(D)) * dot,
                  "twice": dot / math.sqrt(D) / math.sqrt(d_k)}
        for where, S in logits.items():
            squares[where].append(S * S)
    for where in PLACES:
        s = squares[where]
        estimate = math.fsum(s) / n
        se = math.sqrt((math.fsum(v * v for v in s) / n - estimate ** 2) / n)
        want = logit_variance(d_model, heads, divide_by="d_model", where=where,
                              inputs="E sqrt(d_model) + PE").variance
        assert want == exact_logit_variance(d_model, heads, "d_model", where,
                                            "E sqrt(d_model) + PE")
        assert_close(estimate, float(want), abs=4 * se)
        assert abs(estimate - float(want) / Fraction(9, 4)) > 4 * se  # v = 1 would fail


def test_logit_variance_checks_its_arguments():
    fn = "logit_variance"
    with pytest.raises(ValueError, match=f"{fn}: heads = 9 does not divide d_model = 8; give d_k"):
        logit_variance(8, 9)
    for kwargs, message in ((dict(divide_by="sqrt(d_k)"), "divide_by must be one of "
                             r"\('d_k', 'd_model', 'none'\), not 'sqrt\(d_k\)'"),
                            (dict(where="after softmax"), "where must be one of "
                             r"\('logits', 'q', .*\), not 'after softmax'"),
                            (dict(inputs="raw"), r"inputs must be one of \('layer_norm', .*\), "
                             "not 'raw'")):
        with pytest.raises(ValueError, match=f"{fn}: {message}"):
            logit_variance(512, 8, **kwargs)
    for name, value in (("d_model", 0), ("heads", 0), ("d_k", 0)):
        args = dict(d_model=512, heads=8, d_k=None)
        args[name] = value
        with pytest.raises(ValueError, match=f"{fn}: {name} must be at least 1, not 0"):
            logit_variance(args["d_model"], args["heads"], d_k=args["d_k"])
    for name, value in (("d_model", 512.0), ("heads", True), ("d_k", "64")):
        args = dict(d_model=512, heads=8, d_k=None)
        args[name] = value
        with pytest.raises(TypeError, match=f"{fn}: {name} must be an int"):
            logit_variance(args["d_model"], args["heads"], d_k=args["d_k"])
    assert logit_variance(8, 16, d_k=4).variance == 1  # more heads than d_model: d_k given


@pytest.mark.parametrize("name", ["divide_by", "where", "inputs"])
def test_an_argument_that_is_not_a_name_is_a_type_error(name):
    with pytest.raises(TypeError, match=f"logit_variance: {name} must be one of"):
        logit_variance(512, 8, **{name: None})


def test_heads_that_do_not_divide_d_model_are_refused():
    with pytest.raises(ValueError, match="logit_variance: .*d_model = 10.*heads = 3"
                                         "|logit_variance: .*heads = 3.*d_model = 10"):
        logit_variance(10, 3)


def test_the_module_example_and_the_exports():
    assert logit_variance(512, 8, divide_by="none").verdict == "d_k: no scale"
    assert PLACES == ("logits", "q", "q and k", "W_Q init", "framework scale", "twice")
    assert INPUTS == ("layer_norm", "E sqrt(d_model) + PE", "E + PE")
    assert logit_variance(512, 8) == logit_variance(512, 8, d_k=64, divide_by="d_k",
                                                    where="logits", inputs="layer_norm")


# ------------------------------------------------------------------ the length axis

def decimal_winner(gap, n):
    """(p_1, H) for softmax([g, 0, ..., 0]) over n keys at 50 digits, g taken exactly:
    r = (n - 1) e^-g, p_1 = 1 / (1 + r), H = ln(1 + r) + g r / (1 + r), two terms >= 0
    (from the shifted logits [0, -g, ..., -g]), with decimal_log1p for a tiny r."""
    with localcontext() as ctx:
        ctx.prec = 50
        g = Decimal(gap) if not isinstance(gap, Decimal) else gap
        r = (n - 1) * (-g).exp()
        return float(1 / (1 + r)), float(decimal_log1p(r) + g * r / (1 + r))


def scaled_gap(gap, n, base):
    with localcontext() as ctx:
        ctx.prec = 50
        return Decimal(gap) * Decimal(n).ln() / Decimal(base).ln()


def tolerance(g, n):
    """The bound on the relative error: the gap g carries up to 4 U of relative rounding
    (the scaled one: g ln(n) / ln(base)), which e^-g turns into 4 U g; log(n - 1), exp and
    log1p add a few U each, relative to H >= r (1 + g) or to ln n."""
    return (4 * float(g) + 4 * math.log(n) + 16) * U


@pytest.mark.parametrize("n", [2, 3, 16, 256, 4096], ids=lambda n: f"n={n}")
@pytest.mark.parametrize("gap", [0.0, 0.5, 5.0, 30.0, 700.0],
                         ids=["no gap", "gap 0.5", "gap 5", "gap 30", "gap 700"])
def test_length_axis_is_softmax_and_its_entropy_on_explicit_rows(gap, n):
    row = length_axis((n,), gap)[0]
    assert isinstance(row, LengthRow) and row.n == n
    for g, weight, entropy in ((gap, row.weight, row.entropy),
                               (gap * math.log(n) / math.log(16), row.weight_scaled,
                                row.entropy_scaled)):
        logits = [g] + [0.0] * (n - 1)
        assert_close(weight, softmax(logits)[0], rel=tolerance(g, n))
        assert_close(entropy, softmax_entropy(logits), rel=tolerance(g, n))
    assert_close([row.weight, row.entropy], list(decimal_winner(gap, n)), rel=tolerance(gap, n))
    g = scaled_gap(gap, n, 16)
    assert_close([row.weight_scaled, row.entropy_scaled], list(decimal_winner(g, n)),
                 rel=tolerance(g, n))


@pytest.mark.parametrize("n", [65536, 10 ** 6, 2 ** 53], ids=["n=65536", "n=10^6", "n=2^53"])
def test_length_axis_beyond_explicit_rows_is_its_closed_form(n):
    for gap, base in ((5.0, 16), (1.0, 2), (12.5, 1000)):
        row = length_axis((n,), gap, base)[0]
        assert_close([row.weight, row.entropy], list(decimal_winner(gap, n)),
                     rel=tolerance(gap, n))
        g = scaled_gap(gap, n, base)
        assert_close([row.weight_scaled, row.entropy_scaled], list(decimal_winner(g, n)),
                     rel=tolerance(g, n))


def test_the_winners_weight_falls_with_n_as_the_interview_kit_says():
    # the winner 5 above every other logit: 0.908 at 16 keys, 0.0023 at 65,536
    rows = length_axis()
    assert [r.n for r in rows] == [16, 256, 4096, 65536]
    assert [round(r.weight, 4) for r in rows] == [0.9082, 0.3679, 0.0350, 0.0023]
    assert [r.weight for r in rows] == sorted((r.weight for r in rows), reverse=True)
    assert [r.entropy for r in rows] == sorted(r.entropy for r in rows)
    assert rows == length_axis((16, 256, 4096, 65536), 5.0, 16)  # the defaults


def test_ln_n_scaling_is_the_plain_row_at_the_base_and_keeps_the_winner():
    for base in (2, 16, 1000):
        row = length_axis((base,), 5.0, base)[0]
        assert (row.weight_scaled, row.entropy_scaled) == (row.weight, row.entropy)
    # a gap of ln(base): the scaled gap is ln n, so p_1 = n / (2n - 1), within 1/(4n - 2) of 1/2
    rows = length_axis((16, 256, 4096, 65536, 2 ** 40), math.log(16), 16)
    for row in rows:
        assert_close(row.weight_scaled, row.n / (2 * row.n - 1),
                     rel=tolerance(math.log(row.n), row.n))
        assert_close(row.weight_scaled, 0.5, abs=1 / (4 * row.n - 2) + 1e-15)
    # a gap of 5 > ln 16: the scaled winner's weight grows with n while the plain one falls
    rows = length_axis((16, 256, 4096, 65536), 5.0, 16)
    assert [r.weight_scaled for r in rows] == sorted(r.weight_scaled for r in rows)
    assert rows[-1].weight_scaled > 0.9998 > rows[0].weight > rows[-1].weight


def test_huge_gaps_are_one_hot_without_an_error():
    # e^-g underflows to 0 once the scaled gap passes about 745: exactly one-hot
    rows = length_axis((16, 65536, 2 ** 53), 700.0, 2)
    assert [(r.weight_scaled, r.entropy_scaled) for r in rows] == [(1.0, 0.0)] * 3
    assert [r.weight for r in rows] == [1.0] * 3
    assert_close([r.entropy for r in rows], [decimal_winner(700.0, r.n)[1] for r in rows],
                 rel=tolerance(700.0, 2 ** 53))
    assert all(0.0 < r.entropy < 1e-280 for r in rows)
    uniform = length_axis((7,), 0.0)[0]  # no gap: the uniform row
    assert_close([uniform.weight, uniform.entropy], [1 / 7, math.log(7)], rel=4 * U)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(lengths=()), ValueError, "length_axis: lengths is empty"),
    (dict(lengths="16"), TypeError, "length_axis: lengths must be a list, not str"),
    (dict(lengths=(16, 1)), ValueError, "length_axis: n must be at least 2, not 1"),
    (dict(lengths=(2 ** 53 + 1,)), ValueError, "length_axis: n must be at most 2^53, not "
                                               "9007199254740993"),
    (dict(lengths=(16.0,)), TypeError, "length_axis: n must be an int, not 16.0"),
    (dict(lengths=(True,)), TypeError, "length_axis: n must be an int, not True"),
    (dict(gap=-1.0), ValueError, "length_axis: gap is -1.0; the winner's lead must be at "
                                 "least 0"),
    (dict(gap=math.nan), ValueError, "length_axis: gap is nan; it must be finite"),
    (dict(gap=math.inf), ValueError, "length_axis: gap is inf; it must be finite"),
    (dict(gap=2.0 ** 201), ValueError, "length_axis: gap is 3.2138760885179806e+60; it must "
                                       "be at most 2^200 (about 1.6e+60) in size"),
    (dict(gap="5"), TypeError, "length_axis: gap is '5', not a real number"),
    (dict(base=1), ValueError, "length_axis: base must be at least 2, not 1"),
    (dict(base=2.5), TypeError, "length_axis: base must be an int, not 2.5"),
], ids=["no lengths", "a str", "one key", "beyond 2^53", "a float n", "a bool n",
        "a negative gap", "a nan gap", "an infinite gap", "a gap beyond LIMIT", "a str gap",
        "base 1", "a float base"])
def test_length_axis_checks_its_arguments(kwargs, error, message):
    with pytest.raises(error) as raised:
        length_axis(**kwargs)
    assert str(raised.value).startswith(message)


@pytest.mark.skipif(numpy is None, reason="NumPy is not installed")
def test_numpy_integers_and_arrays_are_read_as_ints_and_lists():
    assert logit_variance(numpy.int64(512), numpy.int32(8), d_k=numpy.int64(64)) == \
        logit_variance(512, 8, d_k=64)
    assert length_axis(numpy.array([16, 4096]), numpy.float64(5.0), numpy.int64(16)) == \
        length_axis((16, 4096), 5.0, 16)


def test_ln_n_scaling_keeps_the_winner_only_when_the_gap_exceeds_ln_base():
    # n^(g s) / (n^(g s) + n - 1), s = 1 / ln 16: rises for g s > 1, falls for g s <= 1
    lengths = (16, 256, 4096, 65536)
    rising, level, falling = (length_axis(lengths, gap) for gap in (5.0, math.log(16), 1.0))
    assert all(a.weight_scaled < b.weight_scaled for a, b in zip(rising, rising[1:]))
    # at g = ln 16 exactly, n / (2n - 1): 16/31 = 0.516 at n_0, still falling, towards 1/2
    assert all(a.weight_scaled > b.weight_scaled for a, b in zip(level, level[1:]))
    assert_close([r.weight_scaled for r in level], [n / (2 * n - 1) for n in lengths],
                 rel=tolerance(math.log(65536), 65536))
    assert all(a.weight_scaled > b.weight_scaled > b.weight for a, b in zip(falling,
                                                                          falling[1:]))


def decimal_scaled_weight(g, n, base):
    """n^a / (n^a + n - 1), a = g / ln(base), at 50 digits."""
    with localcontext() as ctx:
        ctx.prec = 50
        a = Decimal(g) / Decimal(base).ln()
        n_a = (a * Decimal(n).ln()).exp()
        return n_a / (n_a + n - 1)


@pytest.mark.parametrize("base", [2, 16, 1000], ids=lambda b: f"n_0={b}")
def test_the_steady_gap_is_where_the_scaled_weight_stops_dipping_below_its_start(base):
    g = steady_gap(base)
    assert_close(g, math.log(base) * base / (base - 1), rel=4 * U)
    grid = [base + k for k in range(0, 64)] + [base * 2 ** k for k in range(1, 20)]
    start = decimal_scaled_weight(g, base, base)
    assert all(decimal_scaled_weight(g, n, base) >= start for n in grid)  # never below
    # halfway between ln(base) and it (a = g / ln base halfway to base / (base - 1)): the
    # weight dips first, its lowest near n = a / (a - 1), then recovers towards 1
    below = math.log(base) * (1 + base / (base - 1)) / 2
    start = decimal_scaled_weight(below, base, base)
    assert min(decimal_scaled_weight(below, n, base) for n in grid) < start
    assert decimal_scaled_weight(below, 10 ** 80, base) > start
    assert steady_gap(16) > math.log(16)  # "g > ln n_0" is not enough to never dip
