"""Tests for `python3 stats.py` (stats.main), its command line, and stats.report, the one
computation behind the report and the docs.

One small seeded configuration is pinned line by line; its numbers are then recomputed here
from the definitions (random.gauss draws, exact Fractions, 50-digit decimal, and the row
oracle of test_stats), independently of stats.py.  The same output on Python 3.9 and 3.13 is
checked by running them (slow).
"""

import inspect
import math
import os
import re
import statistics
import subprocess
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

import stats
from oracles.exact import (chi_square_rows, decimal_softmax, exact_interval, gauss_dot_products,
                           gauss_projected_dot_products, quantile_ranks, top_share_error)
from stats import (report, sample_dot_products, sample_projected_dot_products,
                   variance_standard_error)
from tests.rows import D_V, explicit_row, row_statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHONS = {version: os.path.expanduser(f"~/.pyenv/versions/{version}/bin/python3")
           for version in ("3.9.18", "3.13.0")}
SEED, SAMPLES, TRIALS, KEYS, DKS = 3, 40, 5, 8, (16, 128)  # labels of two widths
SMALL = ["--seed", str(SEED), "--samples", str(SAMPLES), "--trials", str(TRIALS), "--keys",
         str(KEYS), "--dk", ",".join(map(str, DKS))]

# `python3 stats.py` with SMALL, as printed by Python 3.9 to 3.13 (each prints exactly this),
# split at "\n": the last entry is the empty string after the final newline
GOLDEN = [
    'The sqrt(d_k) of softmax(Q K^T / sqrt(d_k)) V, in numbers',
    'At initialisation: q, k, V and the upstream gradient G with independent',
    'N(0, 1) entries.  Simulated numbers carry a standard error or an interval.',
    'Seed 3.',
    '',
    '1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)',
    '------------------------------------------------------',
    '   40 fresh (q, k) pairs per d_k; +- one standard error',
    '   sqrt((2 d_k^2 + 6 d_k) / n)',
    '    d_k        Var(q . k)    Var(q . k / sqrt(d_k))',
    '     16      18.9 +- 3.9             1.18 +- 0.24',
    '    128       117 +- 29              0.91 +- 0.23',
    '   With q = LN(x) W_Q, k = LN(x) W_K (d_model 32, W entries N(0, 1/32)):',
    '   Var(q . k) at d_k = 16: 8.0 +- 3.9',
    '',
    '2. Var(c q . k) = d_k c^2 for each scale c, at initialisation',
    '-------------------------------------------------------------',
    '    d_k            1  1/sqrt(d_k)        1/d_k    1/ln(d_k)',
    '     16           16            1       0.0625        2.081',
    '    128          128            1     0.007812        5.437',
    "   Only 1/sqrt(d_k) keeps it at 1 for every d_k.  1/d_k (muP's choice) keeps",
    '   the mean logit O(1) at a fixed correlation rho between q and k, where',
    '   E[q . k] = rho d_k (docs/derivations.md section 7).',
    '',
    '3. Saturation over m = 8 keys, 5 rows per d_k',
    '---------------------------------------------',
    '   means; standard errors up to 0.074, 0.22 and 0.072, column by column',
    '   uniform weights give max p = 0.1250 and entropy ln 8 = 2.079',
    '               unscaled (c = 1)       |   scaled (c = 1/sqrt(d_k))',
    '    d_k    max p  entropy  ||J||_F   |    max p  entropy  ||J||_F',
    '     16    0.836    0.535    0.184   |    0.400    1.679    0.358',
    '    128    0.851    0.430    0.203   |    0.262    1.863    0.366',
    '',
    '4. The gradient reaching the logits, ||dL/dS||',
    '----------------------------------------------',
    '    d_k   median [95% interval], c = 1  median [95% interval], c = 1/sqrt(d_k)',
    '     16   0.23 [0.0025, 0.65]           0.4 [0.18, 1.1]',
    '    128   0.17 [0.1, 0.91]              0.71 [0.53, 2.1]',
    '',
    '5. The gradient reaching the queries, ||dL/dQ|| = ||c dS K||',
    '------------------------------------------------------------',
    '    d_k   median [95% interval], c = 1  median [95% interval], c = 1/sqrt(d_k)',
    '     16   0.97 [0.0098, 2.2]            0.43 [0.18, 0.91]',
    '    128   1.8 [1.3, 11]                 0.77 [0.54, 2.2]',
    '   Unscaled, the typical gradient collapses as d_k grows.  dQ = c dS K keeps',
    '   a factor ||k|| ~ sqrt(d_k) that c = 1/sqrt(d_k) cancels, so at small d_k',
    '   dQ can look larger unscaled even though dS has already fallen.',
    '',
    'The gradient over all the rows (sections 4 and 5 in full)',
    '---------------------------------------------------------',
    "   Unscaled, the typical (median) row's gradient vanishes as d_k grows, and",
    '   the sum over the rows gathers in ever fewer of them.  The mean of',
    '   ||dL/dS|| falls too, more slowly, like d_k^(-1/2) from d_k = 1024 on; the',
    '   mean of ||dL/dQ|| does not fall, since dQ = c dS K gains a factor',
    '   ||k|| ~ sqrt(d_k) unscaled.  Below, over the 5 rows of each d_k:',
    '   quantiles with their 95% order-statistic intervals (the median\'s are in',
    '   sections 4 and 5); the share of the summed norms that the top 1% and top',
    '   10% of rows carry, in percent, and the mean, each +- one standard error.',
    '   ||dL/dS||',
    '    d_k   10% [95% interval], c = 1     10% [95% interval], c = 1/sqrt(d_k)',
    '     16   0.0039 [0.0025, 0.23]         0.23 [0.18, 0.4]',
    '    128   0.12 [0.1, 0.17]              0.6 [0.53, 0.71]',
    '    d_k   90% [95% interval], c = 1     90% [95% interval], c = 1/sqrt(d_k)',
    '     16   0.58 [0.23, 0.65]             0.93 [0.4, 1.1]',
    '    128   0.71 [0.17, 0.91]             1.6 [0.71, 2.1]',
    '    d_k   99% [95% interval], c = 1     99% [95% interval], c = 1/sqrt(d_k)',
    '     16   0.64 [0.49, 0.65]             1 [0.74, 1.1]',
    '    128   0.89 [0.41, 0.91]             2 [0.8, 2.1]',
    '    d_k   top 1% share (%), c = 1       top 1% share (%), c = 1/sqrt(d_k)',
    '     16   47 +- 14                      39.1 +- 6.4',
    '    128   52.2 +- 9.9                   43 +- 13',
    '    d_k   top 10% share (%), c = 1      top 10% share (%), c = 1/sqrt(d_k)',
    '     16   47 +- 14                      39.1 +- 6.4',
    '    128   52.2 +- 9.9                   43 +- 13',
    '    d_k   mean, c = 1                   mean, c = 1/sqrt(d_k)',
    '     16   0.27 +- 0.13                  0.54 +- 0.16',
    '    128   0.35 +- 0.15                  0.96 +- 0.28',
    '   ||dL/dQ||',
    '    d_k   10% [95% interval], c = 1     10% [95% interval], c = 1/sqrt(d_k)',
    '     16   0.015 [0.0098, 0.97]          0.22 [0.18, 0.43]',
    '    128   1.5 [1.3, 1.8]                0.63 [0.54, 0.77]',
    '    d_k   90% [95% interval], c = 1     90% [95% interval], c = 1/sqrt(d_k)',
    '     16   1.8 [0.97, 2.2]               0.74 [0.43, 0.91]',
    '    128   8.8 [1.8, 11]                 1.6 [0.77, 2.2]',
    '    d_k   99% [95% interval], c = 1     99% [95% interval], c = 1/sqrt(d_k)',
    '     16   2.2 [1.3, 2.2]                0.9 [0.48, 0.91]',
    '    128   11 [4.9, 11]                  2.1 [0.79, 2.2]',
    '    d_k   top 1% share (%), c = 1       top 1% share (%), c = 1/sqrt(d_k)',
    '     16   49 +- 13                      40.0 +- 9.1',
    '    128   54 +- 10                      43 +- 13',
    '    d_k   top 10% share (%), c = 1      top 10% share (%), c = 1/sqrt(d_k)',
    '     16   49 +- 13                      40.0 +- 9.1',
    '    128   54 +- 10                      43 +- 13',
    '    d_k   mean, c = 1                   mean, c = 1/sqrt(d_k)',
    '     16   0.90 +- 0.42                  0.46 +- 0.13',
    '    128   4.2 +- 1.9                    1.01 +- 0.29',
    '',
    '6. Pictures',
    '-----------',
    '   softmax([2, 1, 0, -1])',
    '   p_1 |##########################               0.6439',
    '   p_2 |#########                                0.2369',
    '   p_3 |###                                      0.08714',
    '   p_4 |#                                        0.03206',
    '   Jacobian diagonal p_i (1 - p_i): [0.229, 0.181, 0.0796, 0.031]',
    '   softmax([20, 10, 0, -10]): the same logits times 10',
    '   p_1 |######################################## 1',
    '   p_2 |                                         4.54e-05',
    '   p_3 |                                         2.061e-09',
    '   p_4 |                                         9.357e-14',
    '   Jacobian diagonal p_i (1 - p_i): [4.54e-05, 4.54e-05, 2.06e-09, 9.36e-14]',
    '   simulated Var(q . k): grows like d_k',
    '    d_k=16 |######',
    '   d_k=128 |########################################',
    '   simulated Var(q . k / sqrt(d_k)): level at 1 (bars from 0 to 2)',
    '    d_k=16 |########################',
    '   d_k=128 |##################',
    '',
]


def run(argv, capsys):
    assert stats.main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_the_small_report_is_pinned_line_by_line(capsys):
    lines = run(SMALL, capsys).split("\n")
    for got, want in zip(lines, GOLDEN):
        assert got == want
    assert lines == GOLDEN


# ------------------------------------------------ the small report's numbers, recomputed

def section(lines, number):
    """The lines of section `number` (or of the section whose title starts so), from its
    title to the next blank line."""
    head = number if isinstance(number, str) else f"{number}. "
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = lines.index("", start)
    return lines[start:end]


def table_rows(lines, number):
    """{d_k: the fields of its row} for the rows of section `number` that start with a d_k."""
    return {int(fields[0]): fields[1:] for fields in (line.split() for line in
                                                      section(lines, number))
            if fields and fields[0] in {str(d_k) for d_k in DKS}}


@pytest.fixture(scope="module")
def oracle_rows():
    """(d_k, scale) -> the five statistics of each of the report's rows, from the definitions."""
    out = {}
    for d_k in DKS:
        rows = chi_square_rows(d_k, KEYS, D_V, TRIALS, SEED + d_k)  # the report's seed + d_k
        for name in ("1", "1/sqrt(d_k)"):
            c = stats.scale_factor(name, d_k)
            out[d_k, name] = list(zip(*[row_statistics(*explicit_row(r, c), c) for r in rows]))
    return out


def test_section_1_is_the_mean_square_of_gauss_dot_products():
    # (1/n) sum (q . k)^2 with the standard error sqrt((2 d_k^2 + 6 d_k) / n), and both / d_k
    for d_k, fields in table_rows(GOLDEN, 1).items():
        xs = gauss_dot_products(d_k, SAMPLES, SEED + d_k)
        v = float(sum(Fraction(x) ** 2 for x in xs) / SAMPLES)
        se = math.sqrt(Fraction(2 * d_k * d_k + 6 * d_k, SAMPLES))
        assert fields == two_digits(v, se).split() + two_digits(v / d_k, se / d_k).split()
    xs = gauss_projected_dot_products(16, SAMPLES, 32, SEED)  # d_model 32, d_k 16: as many
    v = float(sum(Fraction(x) ** 2 for x in xs) / SAMPLES)  # pairs as each d_k above
    se = math.sqrt(Fraction(2 * 16 * 16 + 6 * 16, SAMPLES))
    assert f"   Var(q . k) at d_k = 16: {two_digits(v, se)}" in section(GOLDEN, 1)


def test_the_projection_line_rounds_to_its_own_standard_error(capsys):
    # --samples 2: 2 projected draws, standard error sqrt(608 / 2) = 17.4, so no decimals
    lines = run(["--seed", "1", "--samples", "2", "--trials", "2", "--dk", "16"], capsys)
    xs = gauss_projected_dot_products(16, 2, 32, 1)
    v = float(sum(Fraction(x) ** 2 for x in xs) / 2)
    assert f"   Var(q . k) at d_k = 16: {v:.0f} +- 17\n" in lines
    assert two_digits(v, math.sqrt(304)) == f"{v:.0f} +- 17"


def two_digits(v, se):
    """'v +- se' with se rounded to two significant digits and v to the same decimal place,
    from decimal: se's exponent once rounded to two digits (0.0996 -> 0.10: two places)."""
    with localcontext() as ctx:
        ctx.prec = 2
        exponent = (+Decimal(se)).adjusted()  # unary plus rounds to the context's 2 digits
    places = max(0, 1 - exponent)
    return f"{v:.{places}f} +- {se:.{places}f}"


def test_the_two_digit_rule_of_this_file_and_of_format_estimate_agree():
    cases = [(1026.2, 45.9), (0.94412, 0.04869), (2.5, 0.0996), (2.5, 0.0994), (7.0, 99.7),
             (0.1244, 0.0089), (3.98, 0.28), (5.0, 9.96), (5.0, 1e-7)]
    for v, se in cases:
        assert " +- ".join(stats.format_estimate(v, se)) == two_digits(v, se)
    assert two_digits(2.5, 0.0996) == "2.50 +- 0.10"  # se rounds up to a new power of ten
    assert two_digits(7.0, 99.7) == "7 +- 100"


def test_section_2_is_d_k_c_squared_exactly():
    with localcontext() as ctx:
        ctx.prec = 50
        for d_k, fields in table_rows(GOLDEN, 2).items():
            exact = [d_k, 1, Fraction(1, d_k), d_k / Decimal(d_k).ln() ** 2]
            assert fields == [f"{float(v):.4g}" for v in exact]


def test_section_3_is_the_mean_saturation_of_the_rows(oracle_rows):
    lines = section(GOLDEN, 3)
    assert lines[0] == f"3. Saturation over m = {KEYS} keys, {TRIALS} rows per d_k"
    worst = [max(statistics.stdev(oracle_rows[d_k, name][t]) / math.sqrt(TRIALS)
                 for d_k in DKS for name in ("1", "1/sqrt(d_k)")) for t in range(3)]
    assert lines[2] == "   means; standard errors up to {:.2g}, {:.2g} and {:.2g}, column by " \
                       "column".format(*worst)
    assert lines[3] == (f"   uniform weights give max p = {1 / KEYS:.4f} and entropy ln {KEYS} "
                        f"= {math.log(KEYS):.3f}")
    for d_k, fields in table_rows(GOLDEN, 3).items():
        want = [f"{math.fsum(column) / TRIALS:.3f}" for name in ("1", "1/sqrt(d_k)")
                for column in oracle_rows[d_k, name][:3]]
        assert fields == want[:3] + ["|"] + want[3:]


@pytest.mark.parametrize("number, column", [(4, 3), (5, 4)], ids=["||dL/dS||", "||dL/dQ||"])
def test_sections_4_and_5_are_the_medians_with_their_intervals(oracle_rows, number, column):
    l, _ = exact_interval(TRIALS, 0.95)  # [x_(l), x_(n+1-l)]
    for d_k, fields in table_rows(GOLDEN, number).items():
        want = []
        for name in ("1", "1/sqrt(d_k)"):
            xs = sorted(oracle_rows[d_k, name][column])
            want += [f"{statistics.median(xs):.2g}", f"[{xs[l - 1]:.2g},",
                     f"{xs[TRIALS - l]:.2g}]"]
        assert fields == want


ARMS = ("1", "1/sqrt(d_k)")


def inclusive_quantile(xs, percent):
    """The percent-th quantile, linear between order statistics: the point at position
    (n - 1) percent / 100 of the sorted data, counting from 0, in exact Fractions."""
    xs = sorted(map(Fraction, xs))
    h = Fraction((len(xs) - 1) * percent, 100)
    low = math.floor(h)
    if low == len(xs) - 1:
        return xs[low]
    return xs[low] + (h - low) * (xs[low + 1] - xs[low])


def top_share(xs, percent):
    """The share of sum(xs) that the ceil(n percent / 100) largest carry, exactly."""
    ranked = sorted(map(Fraction, xs), reverse=True)
    return sum(ranked[:math.ceil(Fraction(len(xs) * percent, 100))]) / sum(ranked)


def test_the_independent_quantile_and_share_are_right_on_small_cases():
    assert inclusive_quantile([3, 1, 2], 50) == 2 and inclusive_quantile([1, 2], 50) == 1.5
    assert inclusive_quantile([0, 10], 99) == Fraction(99, 10)
    assert inclusive_quantile(range(1, 102), 10) == 11
    assert top_share([1, 1, 2], 1) == Fraction(1, 2)  # one row of three: the largest
    assert top_share(range(1, 101), 10) == Fraction(sum(range(91, 101)), 5050)


def test_the_spread_section_is_recomputed_from_the_rows(oracle_rows):
    # ||dL/dS|| (column 3) and ||dL/dQ|| (column 4) of the same rows as sections 4 and 5,
    # from the definitions (the row oracle), unscaled and scaled side by side: the 10%, 90%
    # and 99% quantiles, each with its order-statistic interval from the binomial in
    # Fractions (oracle.quantile_ranks); the top 1% and 10% of rows' shares with their
    # standard errors (oracle.top_share_error); the means with theirs
    lines = section(GOLDEN, "The gradient over all the rows")
    text = "\n".join(lines)
    assert "typical (median) row's gradient vanishes" in text
    assert "mean of ||dL/dS|| falls too" in " ".join(text.split())  # the claims are checked
    assert "mean of ||dL/dQ|| does not fall" in " ".join(text.split())  # by test_claims_report
    for label, column in (("||dL/dS||", 3), ("||dL/dQ||", 4)):
        block = lines[lines.index(f"   {label}") + 1:]
        columns = {name: [oracle_rows[d_k, name][column] for d_k in DKS] for name in ARMS}
        tables = []
        for p in (10, 90, 99):
            l, u, _ = quantile_ranks(TRIALS, Fraction(p, 100), 0.95)
            tables.append((f"{p}% [95% interval]", {name: [
                f"{float(inclusive_quantile(xs, p)):.2g} [{sorted(xs)[l - 1]:.2g}, "
                f"{sorted(xs)[u - 1]:.2g}]" for xs in columns[name]] for name in ARMS}))
        for t in (1, 10):
            tables.append((f"top {t}% share (%)", {name: [two_digits(
                *(float(100 * v) for v in top_share_error(xs, t))) for xs in columns[name]]
                for name in ARMS}))
        tables.append(("mean", {name: [two_digits(statistics.fmean(xs), statistics.stdev(xs)
                                                  / math.sqrt(TRIALS)) for xs in columns[name]]
                                for name in ARMS}))
        for head, cells in tables:
            assert block[0] == f"    d_k   {f'{head}, c = 1':<30}{head}, c = 1/sqrt(d_k)"
            for k, d_k in enumerate(DKS):
                assert block[1 + k] == f"{d_k:>7}   {cells['1'][k]:<30}{cells[ARMS[1]][k]}"
            block = block[1 + len(DKS):]


def test_section_6_pictures_are_softmax_and_its_jacobian_diagonal():
    lines = section(GOLDEN, 6)
    for logits in ([2, 1, 0, -1], [20, 10, 0, -10]):
        p = decimal_softmax([float(v) for v in logits])
        at = lines.index(f"   softmax({logits})" + ("" if logits[0] == 2 else
                                                      ": the same logits times 10"))
        bars = [line.split() for line in lines[at + 1:at + 5]]
        assert [fields[-1] for fields in bars] == [f"{float(v):.4g}" for v in p]
        assert [len(fields[1]) - 1 for fields in bars] == \
            [round(40 * float(v)) for v in p]  # "|####": 40 columns for weight 1
        diagonal = ", ".join(f"{float(v * (1 - v)):.3g}" for v in p)
        assert lines[at + 5] == f"   Jacobian diagonal p_i (1 - p_i): [{diagonal}]"
    variances = {d_k: float(sum(Fraction(x) ** 2 for x in gauss_dot_products(
        d_k, SAMPLES, SEED + d_k)) / SAMPLES) for d_k in DKS}
    bars = [line.split() for line in lines if line.split()[0].startswith("d_k=")]
    top = max(variances.values())  # the first picture's scale; the second runs from 0 to 2
    assert [len(fields[1]) - 1 for fields in bars] == [
        round(40 * variances[d] / top) for d in DKS] + [round(20 * variances[d] / d) for d in DKS]
    assert {len(fields) for fields in bars} == {2}  # no value: section 1 gives them


# ----------------------------------------------------------- the data behind the report

@pytest.fixture(scope="module")
def small_report():
    return report(SEED, SAMPLES, TRIALS, KEYS, DKS)


def test_the_report_is_the_public_functions_on_seed_plus_d_k(small_report):
    r = small_report
    assert (r.seed, r.samples, r.trials, r.keys, r.dks) == (SEED, SAMPLES, TRIALS, KEYS, DKS)
    for d_k in DKS:
        xs = sample_dot_products(d_k, SAMPLES, seed=SEED + d_k)
        assert r.variance[d_k] == (math.fsum(x * x for x in xs) / SAMPLES,
                                   variance_standard_error(d_k, SAMPLES))
        for name in ("1", "1/sqrt(d_k)"):
            options = dict(m=KEYS, trials=TRIALS, seed=SEED + d_k)
            assert r.saturation[d_k, name] == stats.saturation_stats(d_k, name, **options)
            assert r.gradients[d_k, name] == stats.gradient_stats(d_k, name, **options)
            assert r.spread[d_k, name] == stats.gradient_spread(d_k, name, **options)
    xs = sample_projected_dot_products(16, SAMPLES, d_model=32, seed=SEED)
    assert r.projection == (32, 16, math.fsum(x * x for x in xs) / SAMPLES,
                            variance_standard_error(16, SAMPLES))
    for seed in (0, 2 ** 64 - 1):  # the smallest and the largest seed taken
        tiny = report(seed, samples=3, trials=2, dks=(16,))
        assert tiny.seed == seed
        assert tiny.projection[3] == variance_standard_error(16, 3)  # as many pairs as samples


def test_the_report_is_reproducible_and_follows_the_seed(small_report):
    assert report(SEED, SAMPLES, TRIALS, KEYS, DKS) == small_report
    other = report(SEED + 1, SAMPLES, TRIALS, KEYS, DKS)
    assert other.variance != small_report.variance
    assert other.saturation != small_report.saturation


def test_the_report_defaults_are_the_documented_ones():
    # read from the signature: the default run itself is the slow test below
    defaults = {name: p.default for name, p in inspect.signature(report).parameters.items()}
    assert defaults == {"seed": 0, "samples": 1000, "trials": 2000, "keys": 16,
                        "dks": (16, 64, 128, 512, 1024)}


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(keys=1), ValueError, "report: keys must be at least 2, not 1"),
    (dict(trials=1), ValueError, "report: trials must be at least 2, not 1"),
    (dict(samples=0), ValueError, "report: samples must be at least 1, not 0"),
    (dict(dks=(16, 1)), ValueError, "report: d_k must be at least 2"),
    (dict(dks=()), ValueError, "report: dks is empty"),
    (dict(dks=16), TypeError, "report: dks must be a list"),
    (dict(seed=True), TypeError, "report: seed must be an int, not True"),
    (dict(seed=1.5), TypeError, "report: seed must be an int, not 1.5"),
    (dict(seed=-1), ValueError, "report: seed must be at least 0, not -1"),
    (dict(seed=2 ** 64), ValueError, "report: seed must be at most 2^64 - 1, not "
                                     "18446744073709551616"),
    (dict(dks=(16, 64, 16)), ValueError, "report: dks = [16, 64, 16] repeats a d_k"),
], ids=["one key", "one row", "no samples", "d_k = 1", "no d_k", "a bare d_k", "a bool seed",
        "a float seed", "a negative seed", "a seed of 2^64",
        "a repeated d_k"])
def test_report_checks_its_arguments(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        report(**dict(dict(samples=3, trials=2, dks=(16,)), **kwargs))


# ------------------------------------------------------------------ width, versions

def test_every_line_fits_in_79_columns_at_the_default_d_k(capsys):
    out = run(["--samples", "4", "--trials", "2", "--keys", "1000"], capsys)
    assert max(len(line) for line in out.split("\n")) <= 79
    assert "   1024 " in out  # the widest d_k of the defaults


@pytest.mark.slow
def test_the_default_report_fits_in_79_columns_and_prints_the_default_numbers(
        capsys, default_report):
    lines = run([], capsys).split("\n")
    assert max(map(len, lines)) <= 79
    assert lines[:4:3] == ["The sqrt(d_k) of softmax(Q K^T / sqrt(d_k)) V, in numbers", "Seed 0."]
    v, se = default_report.variance[1024]
    assert f"   1024      {two_digits(v, se)} " in "\n".join(lines)  # 1026 +- 46
    rows = {int(f[0]): f[1:] for f in (line.split() for line in section(lines, 3))
            if f and f[0].isdigit()}
    assert list(rows) == [16, 64, 128, 512, 1024]
    for d_k, fields in rows.items():
        cells = [default_report.saturation[d_k, name] for name in ("1", "1/sqrt(d_k)")]
        want = [f"{getattr(s, f)[0]:.3f}" for s in cells for f in stats.Saturation._fields]
        assert fields == want[:3] + ["|"] + want[3:]
    # the mean ||dL/dQ|| unscaled at d_k = 1024 that the docs quote, in the spread section
    v, se = default_report.gradients[1024, "1"].query_grad_mean
    assert two_digits(v, se) == "3.98 +- 0.28"
    spread = section(lines, "The gradient over all the rows")
    block = spread[spread.index("   ||dL/dQ||"):]
    means = block[block.index("    d_k   mean, c = 1                   mean, c = "
                              "1/sqrt(d_k)"):]
    assert means[5].startswith("   1024   3.98 +- 0.28 ")


def script(*args, python=sys.executable, **kwargs):
    return subprocess.run([python, os.path.join(ROOT, "stats.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("version", PYTHONS)
def test_the_output_is_the_same_on_python_3_9_and_3_13(version):
    if not os.path.exists(PYTHONS[version]):
        pytest.skip(f"Python {version} is not installed at {PYTHONS[version]}")
    here, there = script(*SMALL), script(*SMALL, python=PYTHONS[version])
    assert (here.returncode, here.stderr) == (there.returncode, there.stderr) == (0, "")
    assert there.stdout == here.stdout == "\n".join(GOLDEN)


# ------------------------------------------------------------------ the command line

@pytest.mark.parametrize("argv, message", [
    (["--samples", "x"], "argument --samples: invalid int value: 'x'"),
    (["--seed", "1.5"], "argument --seed: invalid int value: '1.5'"),
    (["--trials", "2e3"], "argument --trials: invalid int value: '2e3'"),
    (["--keys", "1"], "--keys must be at least 2, not 1"),
    (["--keys", "-3"], "--keys must be at least 2, not -3"),
    (["--trials", "1"], "--trials must be at least 2, not 1"),
    (["--samples", "0"], "--samples must be at least 1, not 0"),
    (["--seed", "-1"], "--seed must be from 0 to 2**64 - 1, not -1"),
    (["--dk", "16,1"], "--dk: each d_k must be at least 2, not 1"),
    (["--dk", "16,x"], "--dk: each d_k must be a whole number, not 'x'"),
    (["--dk", ""], "--dk: each d_k must be a whole number, not ''"),
    (["--samples", "100000"], "--samples, --trials, --keys and --dk ask for about 1.7e+08 "
                              "draws; keep them under 1e+08, about a minute"),
    (["--dk", "99999999999999999999"], "ask for about 1.0e+23 draws"),
    (["--trials", "10000000"], "ask for about 8.0e+08 draws"),
    (["--bogus"], "unrecognized arguments: --bogus"),
], ids=["samples not an int", "seed not an int", "trials not an int", "one key",
        "negative keys", "one row", "no samples", "a negative seed", "d_k = 1",
        "a d_k not an int", "no d_k",
        "too many samples", "a huge d_k", "too many rows", "an unknown option"])
def test_a_bad_option_is_one_line_on_stderr_and_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        stats.main(argv)
    assert exit.value.code == 2
    out, err = capsys.readouterr()
    # one line that names the flag typed, not the parameter of the function it sets
    assert out == "" and err.count("\n") == 1 and err.startswith("python3 stats.py: ")
    assert message in err and err.endswith(" (see python3 stats.py --help)\n"), err


def test_each_option_s_smallest_and_largest_values_are_taken(capsys):
    # the ends of each range: seed 0 and 2^64 - 1, one sample, two rows of two keys, d_k 2
    for seed in ("0", str(2 ** 64 - 1)):
        assert "6. Pictures" in run(["--seed", seed, "--samples", "1", "--trials", "2",
                                     "--keys", "2", "--dk", "2"], capsys)
    with pytest.raises(SystemExit):
        stats.main(["--seed", str(2 ** 64), "--samples", "1", "--trials", "2", "--dk", "2"])
    assert "--seed must be from 0 to 2**64 - 1, not 18446744073709551616" in \
        capsys.readouterr().err


def test_ctrl_c_is_one_line_and_status_130(monkeypatch, capsys):
    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(stats, "report", interrupted)
    assert stats.main(SMALL) == 130
    assert capsys.readouterr() == ("", "python3 stats.py: interrupted\n")


def test_a_bad_option_prints_no_traceback_from_the_script():
    done = script("--keys", "1")
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr == \
        "python3 stats.py: --keys must be at least 2, not 1 (see python3 stats.py --help)\n"


def test_the_work_bound_counts_samples_and_rows_and_is_inclusive(monkeypatch, capsys):
    # samples x sum(d_k) + trials x keys x len(d_k): 3 x 2 + 2 x 2 x 1 = 10 here
    argv = ["--samples", "3", "--trials", "2", "--keys", "2", "--dk", "2"]
    monkeypatch.setattr(stats, "WORK", 10)
    assert "6. Pictures" in run(argv, capsys)  # exactly at the bound: runs
    monkeypatch.setattr(stats, "WORK", 9)
    with pytest.raises(SystemExit):
        stats.main(argv)
    assert "ask for about 1.0e+01 draws; keep them under 9e+00" in \
        capsys.readouterr().err


def test_the_work_bound_is_a_hundred_million_draws(capsys):
    # the defaults ask for 1000 x (16 + 64 + 128 + 512 + 1024) + 2000 x 16 x 5 = 1,904,000;
    # 57247 samples would ask for 99,998,768 (about a minute), one more for 100,000,512
    assert stats.WORK == 10 ** 8
    with pytest.raises(SystemExit):
        stats.main(["--samples", "57248"])
    assert "about 1.0e+08 draws; keep them under 1e+08, about a minute" in \
        capsys.readouterr().err


def test_help_lists_every_option_with_its_default(capsys):
    with pytest.raises(SystemExit) as exit:
        stats.main(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    for option, default in (("--seed", "0"), ("--samples", "1000"), ("--trials", "2000"),
                            ("--keys", "16"), ("--dk", "16,64,128,512,1024")):
        assert re.search(re.escape(option) + r"[\s\S]*?\(default " + re.escape(default) + r"\)",
                         out), option
    assert "%%" not in out and "3.9 to 3.13" in " ".join(out.split())


def test_closing_the_pipe_early_is_quiet():
    # the reader has gone before the report is printed: the write fails with EPIPE, and
    # the script leaves with status 1 and nothing on stderr
    child = subprocess.Popen([sys.executable, os.path.join(ROOT, "stats.py"), *SMALL], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # long before the child has computed anything
    err = child.stderr.read()
    assert child.wait(timeout=120) == 1
    assert err == b""


def test_head_minus_one_in_a_shell_prints_one_line_and_no_traceback():
    shell = subprocess.run(f"{sys.executable} stats.py {' '.join(SMALL)} | head -1", shell=True,
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert shell.stdout == GOLDEN[0] + "\n"
    assert shell.stderr == ""


# ------------------------------------------------------------------ found by these tests

def test_a_repeated_d_k_is_refused(capsys):
    argv = ["--samples", "40", "--trials", "2", "--dk", "16,16,64"]
    with pytest.raises(SystemExit) as exit:
        run(argv, capsys)
    assert exit.value.code == 2
    assert capsys.readouterr().err == ("python3 stats.py: --dk 16,16,64 repeats a d_k; give "
                                       "each once (see python3 stats.py --help)\n")


def test_a_seed_beyond_2_to_the_64_is_refused(capsys):
    argv = ["--seed", str(10 ** 20), "--samples", "4", "--trials", "2", "--dk", "16"]
    with pytest.raises(SystemExit) as exit:
        run(argv, capsys)
    assert exit.value.code == 2
    assert capsys.readouterr().err == (
        f"python3 stats.py: --seed must be from 0 to 2**64 - 1, not {10 ** 20} (see "
        "python3 stats.py --help)\n")


# ------------------------------------------------ found by mutation testing (tools/mutate.py)

@pytest.mark.parametrize("bad", ["x", "1.5", "1e3"], ids=["a word", "a float", "an exponent"])
def test_a_d_k_that_is_not_a_whole_number_is_named_in_the_error(bad, capsys):
    # the message names the option and the rule, not int()'s "invalid literal for int()"
    with pytest.raises(SystemExit):
        stats.main(["--samples", "4", "--trials", "2", "--dk", f"16,{bad}"])
    assert capsys.readouterr().err == (f"python3 stats.py: --dk: each d_k must be a whole "
                                       f"number, not '{bad}' (see python3 stats.py --help)\n")


def test_closing_the_pipe_early_is_quiet_when_stdout_is_block_buffered():
    # As a reader's shell runs it: without PYTHONUNBUFFERED (which some CI and IDEs set, and
    # which makes every print reach the pipe at once), the report would wait in stdout's
    # buffer and fail only in the flush at exit, with "Exception ignored ... BrokenPipeError"
    # and status 120.  flush=True makes the print itself fail, inside main, and pointing
    # stdout at devnull leaves that exit-time flush nothing to fail on.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    child = subprocess.Popen([sys.executable, os.path.join(ROOT, "stats.py"), *SMALL], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    child.stdout.close()  # long before the child has computed anything
    err = child.stderr.read()
    assert (child.wait(timeout=120), err) == (1, b"")
