"""The claims of docs/derivations.md section 10, "Intervals and shares": the interval of a
quantile from the binomial count below it, summed exactly in integers, and the standard
error of the share the top rows carry.  Each is recomputed here in exact arithmetic
(math.comb, Fractions, every rank tried), or is registered with the test of
tests/test_stats.py that checks it; the one statement about random draws is checked by a
seeded simulation with a margin of Z standard errors.  The other sections' claims are in
tests/test_claims_docs.py and tests/test_claims_report.py.
"""

import math
import random
import statistics
from fractions import Fraction

import stats
from oracles.exact import quantile_ranks
from tests.claims import Z, apart, claim, covered, within

DERIVATIONS = "docs/derivations.md"
STATS = "test_stats.py::"


def binomial_below(n, p):
    """[P(B < k) for k = 0..n+1], B ~ Binomial(n, p), in Fractions from math.comb."""
    pmf = [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]
    return [sum(pmf[:k]) for k in range(n + 2)]


# ------------------------------------------------------------------ a quantile's interval

for start, test in (
        ("so [x_(l), x_(u)] holds xi_p with probability P(l <= B <= u - 1), whatever F is.",
         "test_the_coverage_is_the_chance_over_every_pattern_of_draws_below_the_quantile"),
        ("With e = (1 - coverage) / 2, l is the largest rank with P(B < l) <= e and u the "
         "smallest with P(B >= u) <= e; each tail then misses by at most e.",
         "test_the_quantile_interval_is_the_binomial_one_by_its_definition"),
        ("At p = 1/2 these are the ranks of the median's interval (`median_interval`, which "
         "counts from the middle outwards).",
         "test_the_quantile_interval_at_one_half_is_the_median_interval"),
        ("Nothing is rounded on the way, so the ranks are those of the definition (the oracle "
         "of the tests tries every rank, in Fractions).",
         "test_the_quantile_interval_is_the_binomial_one_by_its_definition"),
        ("A float p is taken as the decimal it prints as: 0.1 is 1/10, not the binary float "
         "3602879701896397 / 2^55 just above it, so that p = i/m falls on the cut points of "
         "`statistics.quantiles`.",
         "test_a_float_p_is_the_decimal_it_prints_as"),
        ("The sum stops once the upper tail is within e, after about n p + z sqrt(n p (1 - p)) "
         "terms, z the normal quantile of 1 - e (just under 2 at 95% coverage",
         "test_the_cost_figures_of_derivations_section_10"),
        ("For n = 60,000 and p = 1/10: about 6,000 + 2 sqrt(5,400), under 6,150 terms, on "
         "integers of at most 60,000 x 4 = 240,000 bits (10 < 2^4).",
         "test_the_cost_figures_of_derivations_section_10"),
        ("0.3333333333333333 is 3333333333333333 / 10^16, and its b^n has 16 n log2(10) bits, "
         "where Fraction(1, 3)'s has n log2(3).",
         "test_the_cost_figures_of_derivations_section_10"),
        ("For X exponential with mean 1, xi = ln(1/s) and T = s (1 + ln(1/s)), a check the "
         "tests use.",
         "test_the_exponential_share_and_its_error_are_the_asymptotic_ones")):
    covered(DERIVATIONS, start, STATS + test)


@claim(DERIVATIONS, "When n is too small for that, an end stays at the data's end: l stays 1 "
                    "when even P(B < 1) = (1 - p)^n exceeds e, and u stays n when even "
                    "P(B >= n) = p^n does.")
@claim(DERIVATIONS, "That tail then misses by more than e, and the coverage reported, P(l <= B "
                    "<= u - 1), is the interval's own, which can be less than asked (0.40 for "
                    "n = 5 and p = 1/10) or not (0.97 for n = 9 and p = 1/3, where only l "
                    "stays).")
def test_a_small_n_keeps_an_end_at_the_data_s_end_and_reports_its_own_coverage():
    e, levels = Fraction(1, 40), [Fraction(1, 100), Fraction(1, 10), Fraction(1, 3),
                                  Fraction(1, 2), Fraction(9, 10)]
    for n in range(1, 50):
        for p in levels:
            below = binomial_below(n, p)
            l, u, covered = stats._order_ranks(n, p, Fraction(95, 100))
            low_stays, high_stays = (1 - p) ** n > e, p ** n > e
            assert (l == 1) >= low_stays and (u == n) >= high_stays, (n, p)
            assert below[1] > e if low_stays else below[l] <= e, (n, p)  # misses by more
            assert 1 - below[n] > e if high_stays else 1 - below[u] <= e, (n, p)
            assert covered == float(below[u] - below[l]), (n, p)  # its own coverage
    for n, p, l, u, shown in ((5, Fraction(1, 10), 1, 3, "0.40"), (9, Fraction(1, 3), 1, 7,
                                                                     "0.97")):
        below = binomial_below(n, p)
        assert stats._order_ranks(n, p, Fraction(95, 100))[:2] == (l, u)
        assert (1 - p) ** n > e >= p ** n  # only l stays
        assert round(below[u] - below[l], 2) == Fraction(shown)
    assert Fraction("0.40") < Fraction(95, 100) < Fraction("0.97")


@claim(DERIVATIONS, "is an integer, and each term follows from the one before it:")
@claim(DERIVATIONS, "where the division is exact, since the result is an integer.")
def test_the_binomial_terms_are_integers_and_each_follows_from_the_last_by_an_exact_division():
    for n in (1, 2, 7, 30, 101):
        for p in (Fraction(1, 10), Fraction(1, 3), Fraction(2, 7), Fraction(1, 2),
                  Fraction(3333333333333333, 10 ** 16)):
            a, b = p.numerator, p.denominator
            term = (b - a) ** n  # b^n P(B = 0)
            for k in range(1, n + 1):
                exact = b ** n * math.comb(n, k) * p ** k * (1 - p) ** (n - k)
                assert exact.denominator == 1  # an integer
                step, rest = divmod(term * (n - k + 1) * a, k * (b - a))
                assert rest == 0 and step == exact, (n, p, k)  # the division is exact
                term = step


@claim(DERIVATIONS, "n - B is Binomial(n, 1 - p), and P(B < l) = P(n - B >= n + 1 - l), so the "
                    "lower tail of p at rank l is the upper tail of 1 - p at rank n + 1 - l. "
                    "If l' and u' are the ranks for 1 - p, then l = n + 1 - u' and u = n + 1 - "
                    "l'.")
def test_the_ranks_of_p_are_those_of_1_minus_p_mirrored():
    for n in (1, 2, 5, 10, 33, 60):
        for p in (Fraction(1, 100), Fraction(1, 10), Fraction(1, 3), Fraction(1, 2),
                  Fraction(7, 10)):
            below, mirrored = binomial_below(n, p), binomial_below(n, 1 - p)
            for l in range(1, n + 2):  # P(B < l) = P(B' >= n + 1 - l), B' = n - B
                assert below[l] == 1 - mirrored[n + 1 - l], (n, p, l)
            for coverage in (Fraction(1, 2), Fraction(95, 100), Fraction(99, 100)):
                l, u, _ = quantile_ranks(n, p, coverage)  # every rank tried
                l_, u_, _ = quantile_ranks(n, 1 - p, coverage)
                assert (l, u) == (n + 1 - u_, n + 1 - l_), (n, p, coverage)


# ------------------------------------------------------------------ the share of the top

@claim(DERIVATIONS, "Summed over the data, mu IF_T sums to 0, as an influence function must: "
                    "the top contributes n theta - k xi, the constant n s xi = k xi, and -T n "
                    "mu = -n theta.")
def test_mu_if_t_sums_to_zero_over_the_data_part_by_part():
    rng = random.Random(10)
    for n in (2, 3, 10, 101):
        for xs in ([rng.expovariate(1.0) for _ in range(n)], [1.0] * n,
                   [float(v % 4) + 1.0 for v in range(n)]):  # ties at the threshold too
            x = sorted(map(Fraction, xs), reverse=True)
            for t in (1, 10, 50):
                k = -(-n * t // 100)
                mu, theta = sum(x) / n, sum(x[:k]) / n
                T, xi, s = theta / mu, x[k], Fraction(k, n)
                top = sum(max(v - xi, 0) for v in x)
                assert top == n * theta - k * xi and n * s * xi == k * xi
                assert -T * n * mu == -n * theta
                assert sum(max(v - xi, 0) + xi * s - T * v for v in x) == 0, (n, t)


@claim(DERIVATIONS, "for exponential norms, which are memoryless, the excesses of the other k - "
                    "1 over x_[k] are independent exponentials, so the top's part of the "
                    "variance would come out (k - 1) / k of what it is.")
def test_the_top_s_excesses_over_its_own_smallest_lose_one_row_in_k():
    # Exp(1) draws, n = 100, top k = 10: the sum over the top of (x - x_[k+1])^2 has mean
    # E[sum of k squared Exp(1)] = 2k, and over x_[k], 2(k - 1): their mean difference is 2
    # (paired, per sample), each checked within Z standard errors of the R samples' mean
    rng, n, k, runs = random.Random(29), 100, 10, 3000
    outside, inside = [], []
    for _ in range(runs):
        x = sorted((rng.expovariate(1.0) for _ in range(n)), reverse=True)
        outside.append(math.fsum((v - x[k]) ** 2 for v in x[:k]))
        inside.append(math.fsum((v - x[k - 1]) ** 2 for v in x[:k]))
    difference = [a - b for a, b in zip(outside, inside)]

    def estimate(values):
        return statistics.fmean(values), statistics.stdev(values) / math.sqrt(runs)
    assert within(*estimate(outside), 2 * k, 0.0)
    assert within(*estimate(inside), 2 * (k - 1), 0.0)
    assert within(*estimate(difference), 2.0, 0.0)
    assert apart(*estimate(difference), 0.0, 0.0) > Z  # the lost row is resolved
