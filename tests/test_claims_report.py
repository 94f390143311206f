"""The claims about the report's numbers at initialisation, on whichever page they are
made (the main job's fixed text, README.md, docs/interview.md), each against the numbers of
the default report (a stats.Report, read field by field, not through the tables or the
formatted text), rows drawn here from their definition, or exact arithmetic.  A direction
between random numbers counts beyond claims.Z standard errors of the difference, or where
two 95% intervals do not overlap (tests/claims.py).
"""

import math
import random
import statistics
from fractions import Fraction

import stats
from tests.claims import REPORT, Z, apart, claim, falling, level, rising, within
from tests.helpers import assert_close

README, INTERVIEW = "README.md", "docs/interview.md"
UNSCALED, SCALED = "1", "1/sqrt(d_k)"
BEYOND = 4000  # rows per d_k past the report's: enough to tell d_k^(-1/2) from d_k^(-3/4)


def column(r, arm, field):
    """One statistic of the report's gradients (medians or (mean, se)) over its d_k."""
    return [getattr(r.gradients[d, arm], field) for d in r.dks]


def shares(r, arm, field, top):
    """The top `top`% of rows' share of the summed norms, (share, se), over the d_k."""
    at = stats.TOP_PERCENTS.index(top)
    return [getattr(r.spread[d, arm], f"{field}_top_shares")[at] for d in r.dks]


# ------------------------------------------------------------------ section 1

@claim(REPORT, "1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)")
@claim(README, "Dividing by sqrt(d_k) brings the variance back to 1, the same at every d_k.")
@claim(INTERVIEW, "Multiplying by 1/sqrt(d_k) brings the variance back to 1 for every d_k: "
                  "softmax sees logits of the same spread whatever the head width.")
@claim(INTERVIEW, "Var(q · k) = d_k holds. In this setting the report measures {projection}")
@claim(REPORT, "simulated Var(q . k): grows like d_k")
@claim(REPORT, "simulated Var(q . k / sqrt(d_k)): level at 1")
def test_the_simulated_variance_is_d_k_and_one_after_scaling(default_report):
    # E[(q . k)^2] = d_k exactly for N(0, 1) components; the estimate's standard error is
    # printed beside it, sqrt((2 d_k^2 + 6 d_k) / n), so within Z of them
    for d_k, (v, se) in default_report.variance.items():
        assert abs(v - d_k) <= Z * se and abs(v / d_k - 1) <= Z * se / d_k, d_k
    d_model, d_k, v, se = default_report.projection
    assert abs(v - d_k) <= Z * se  # with q = LN(x) W_Q, k = LN(x) W_K as well


@claim(REPORT, "fresh (q, k) pairs per d_k; +- one standard error")
def test_every_variance_of_section_1_is_over_as_many_pairs(default_report):
    # the projection line too: its standard error is that of `samples` pairs
    r = default_report
    assert r.samples == 1000
    assert_close(r.projection[3], math.sqrt((2 * 16 ** 2 + 6 * 16) / r.samples), rel=1e-15)
    for d_k, (_, se) in r.variance.items():
        assert_close(se, math.sqrt((2 * d_k ** 2 + 6 * d_k) / r.samples), rel=1e-15)


# ------------------------------------------------------------------ section 2

@claim(REPORT, "Only 1/sqrt(d_k) keeps it at 1 for every d_k.")
def test_only_one_over_sqrt_d_k_keeps_the_variance_at_one(default_report):
    # Var(c q . k) = d_k c^2, exactly: c^2 is 1, 1/d_k, 1/d_k^2 or 1/ln(d_k)^2
    squares = {"1": lambda d: Fraction(1), "1/sqrt(d_k)": lambda d: Fraction(1, d),
               "1/d_k": lambda d: Fraction(1, d * d)}
    for name, c2 in squares.items():
        at_one = [d * c2(d) == 1 for d in default_report.dks]
        assert all(at_one) if name == "1/sqrt(d_k)" else not any(at_one), name
    assert all(d / math.log(d) ** 2 > 2 for d in default_report.dks)  # 1/ln(d_k): above 2
    assert sorted(stats.SCALE_CHOICES) == sorted(list(squares) + ["1/ln(d_k)"])


@claim(REPORT, "1/d_k (muP's choice) keeps the mean logit O(1) at a fixed correlation rho "
               "between q and k, where E[q . k] = rho d_k")
def test_one_over_d_k_keeps_the_mean_logit_at_rho_whatever_d_k():
    # k_i = rho q_i + sqrt(1 - rho^2) z_i: E[q_i k_i] = rho E[q_i^2] + 0 = rho, and the d_k
    # terms add: E[q . k] = rho d_k, so c E[q . k] = rho under c = 1/d_k, for every d_k
    for rho in (Fraction(1, 10), Fraction(1, 2), Fraction(1)):
        for d_k in (16, 1024, 2 ** 20):
            mean = d_k * rho * 1  # d_k terms of E[q_i k_i] = rho
            assert Fraction(1, d_k) * mean == rho
            assert stats.correlated_dot_product_moments(d_k, rho).mean == mean


# ------------------------------------------------------------------ sections 4, 5

@claim(REPORT, "Unscaled, the typical gradient collapses as d_k grows.")
@claim(REPORT, "Unscaled, the typical (median) row's gradient vanishes as d_k grows")
@claim(README, "and in the typical (median) row the gradient reaching Q and K vanishes as d_k "
               "grows;")
@claim(INTERVIEW, "Vanishing, in the typical (median) row.")
@claim(INTERVIEW, "unscaled, a typical row passes less and less as d_k grows.")
def test_unscaled_the_median_gradients_fall_at_every_step_of_d_k(default_report):
    for field in ("score_grad", "query_grad"):
        medians = column(default_report, UNSCALED, field)
        assert falling(medians), field  # each interval below the one before


@claim(REPORT, "so at small d_k dQ can look larger unscaled even though dS has already "
               "fallen.")
@claim(INTERVIEW, "That looks like the argument failing at the paper's own d_k, but the "
                  "gradient reaching the logits has already fallen")
def test_at_d_k_16_and_64_dq_is_larger_unscaled_while_ds_is_smaller(default_report):
    r = default_report
    for d_k in (16, 64):
        dS = [r.gradients[d_k, arm].score_grad for arm in (UNSCALED, SCALED)]
        dQ = [r.gradients[d_k, arm].query_grad for arm in (UNSCALED, SCALED)]
        assert dS[0].high < dS[1].low and dQ[0].low > dQ[1].high, d_k
    # and from d_k = 128 on, dQ is smaller unscaled too
    assert all(r.gradients[d, UNSCALED].query_grad.high < r.gradients[d, SCALED].query_grad.low
               for d in r.dks if d >= 128)


# ------------------------------------------------------------------ the spread

@claim(REPORT, "and the sum over the rows gathers in ever fewer of them.")
@claim(README, "So the batch gradient of an unscaled model is lopsided, not small")
@claim(INTERVIEW, "But the batch gradient of an unscaled model is not small everywhere; it is "
                  "lopsided.")
def test_unscaled_the_top_tenth_of_rows_carries_more_at_every_step(default_report):
    for field in ("score", "query"):
        assert rising(shares(default_report, UNSCALED, field, 10)), field


@claim(REPORT, "The mean of ||dL/dS|| falls too, more slowly, like d_k^(-1/2) from d_k = "
               "1024 on;")
@claim(README, "Unscaled, the mean of ‖dL/dS‖ still falls as d_k grows, more slowly than its "
               "median,")
@claim(INTERVIEW, "The mean over the rows falls more slowly, or not at all")
@claim(INTERVIEW, "The mean over rows loses much less, since the few unsaturated rows carry "
                  "it")
def test_unscaled_the_mean_of_ds_falls_more_slowly_than_its_median(default_report):
    means = column(default_report, UNSCALED, "score_grad_mean")
    medians = column(default_report, UNSCALED, "score_grad")
    assert falling(means)
    assert means[0][0] / means[-1][0] < medians[0].median / medians[-1].median


@claim(REPORT, "like d_k^(-1/2) from d_k = 1024 on")
@claim(README, "and like d_k^(-1/2) from d_k = 1024 on;")
@claim(INTERVIEW, "Unscaled, the mean ‖dL/dS‖ falls only like d_k^(-1/2) from d_k = 1024 on")
@claim(INTERVIEW, "Averaged over the rows, the gradient reaching the logits vanishes too, but "
                  "only like d_k^(-1/2) from d_k = 1024 on")
def test_from_d_k_1024_on_the_mean_of_ds_times_sqrt_d_k_is_level():
    # beyond the report's d_k, rows drawn as the report draws them (seed d_k): the mean of
    # ||dL/dS|| sqrt(d_k) at d_k = 1024 to 262144 does not change beyond Z standard errors,
    # while a fall like d_k^-1 would divide it by 16 over that range
    scaled = []
    for d_k in (1024, 4096, 16384, 65536, 262144):
        mean, se = stats.gradient_stats(d_k, UNSCALED, trials=BEYOND, seed=d_k).score_grad_mean
        scaled.append((mean * math.sqrt(d_k), se * math.sqrt(d_k)))
    assert level(scaled)
    assert apart(*scaled[-1], scaled[0][0] / 4, 0.0) > Z  # not d_k^-1 (nor d_k^-0.75)


@claim(REPORT, "the mean of ||dL/dQ|| does not fall, since dQ = c dS K gains a factor "
               "||k|| ~ sqrt(d_k) unscaled.")
@claim(README, "the mean of ‖dL/dQ‖ = ‖c dS K‖ does not fall, since each key brings a factor "
               "‖k‖ ~ sqrt(d_k) that c = 1 leaves in place.")
@claim(README, "Unscaled, from d_k = 16 to 1024, ‖dL/dQ‖'s median collapses while its mean "
               "does not fall;")
@claim(INTERVIEW, "and the mean ‖dL/dQ‖, which gains a factor ‖k‖ ~ sqrt(d_k), does not fall")
@claim(INTERVIEW, "the mean gradient reaching Q does not vanish at all, since dQ = c dS K "
                  "gains a factor ‖k‖ ~ sqrt(d_k) unscaled.")
def test_unscaled_the_mean_of_dq_falls_at_no_step_of_d_k(default_report):
    means = column(default_report, UNSCALED, "query_grad_mean")
    for i, earlier in enumerate(means):
        for later in means[i + 1:]:
            assert apart(*later, *earlier) > -Z, (earlier, later)


# ------------------------------------------------------------------ the title

@claim(REPORT, "Simulated numbers carry a standard error or an interval.")
def test_every_simulated_number_printed_carries_its_error(default_report):
    # the rows of each table, by section: 1, the spread: +- se; 4, 5 and the spread's
    # quantiles: [interval]; 2 is exact (d_k c^2); 3 states a bound on its standard errors
    sections, name = {}, None
    for line in stats.format_report(default_report).splitlines():
        if line[:2] in ("1.", "2.", "3.", "4.", "5.", "6.") or line.startswith("The gradient"):
            name = line.split()[0]
        fields = line.split()
        if fields and fields[0].isdigit():
            sections.setdefault(name, []).append(line)
    assert sorted(sections) == ["1.", "2.", "3.", "4.", "5.", "The"]
    for name in ("1.", "4.", "5.", "The"):
        assert all("+-" in line or "[" in line for line in sections[name]), name
    worst = [max(getattr(s, f)[1] for s in default_report.saturation.values())
             for f in stats.Saturation._fields]
    assert ("   means; standard errors up to {:.2g}, {:.2g} and {:.2g}, column by "
            "column".format(*worst)) in stats.format_report(default_report).splitlines()


# ------------------------------------------------------------------ README, interview

@claim(README, "Unscaled, the logits spread like sqrt(d_k) and softmax saturates towards "
               "one-hot as d_k grows;")
@claim(README, "Unscaled, the logits spread like sqrt(d_k), softmax saturates, its Jacobian "
               "shrinks,")
@claim(README, "its Jacobian diag(p) - p p^T shrinks, and with it the gradient that the typical "
               "row passes to Q and K.")
@claim(INTERVIEW, "and softmax heads for one-hot. In the typical row its Jacobian diag(p) - p "
                  "p^T heads for zero, and so does the gradient that passes through it to the "
                  "logits, and from them to Q and K.")
def test_unscaled_softmax_saturates_and_its_jacobian_shrinks_at_every_step(default_report):
    r = default_report
    saturation = [r.saturation[d, UNSCALED] for d in r.dks]
    assert rising([s.max_weight for s in saturation])  # towards 1
    assert falling([s.entropy for s in saturation]) and falling(
        [s.jacobian_norm for s in saturation])  # towards one-hot: H and ||J||_F towards 0
    for field in ("score_grad", "query_grad"):  # the medians, in
        assert falling(column(r, UNSCALED, field)), field  # test_unscaled_the_median_...


@claim(README, "dividing by sqrt(d_k) undoes each link.")
def test_scaled_no_link_moves_with_d_k(default_report):
    # no link moves towards saturation as d_k grows: the largest weight rises nowhere, the
    # entropy and ||J||_F fall nowhere (beyond Z standard errors), the medians fall nowhere
    r = default_report
    for field, sign in (("max_weight", -1), ("entropy", 1), ("jacobian_norm", 1)):
        cells = [getattr(r.saturation[d, SCALED], field) for d in r.dks]
        assert all(sign * apart(*later, *earlier) > -Z for i, earlier in enumerate(cells)
                   for later in cells[i + 1:]), field
    for field in ("score_grad", "query_grad"):
        medians = column(r, SCALED, field)
        assert not any(later.high < earlier.low for i, earlier in enumerate(medians)
                       for later in medians[i + 1:]), field


def spread_quantile(r, d_k, p):
    """The p% quantile of ||dL/dQ|| unscaled at d_k, with its 95% interval."""
    return r.spread[d_k, UNSCALED].query_quantiles[stats.PERCENTILES.index(p)]


@claim(README, "its 99% quantile grows at least to d_k = 512,")
def test_unscaled_the_99_percent_quantile_of_dq_grows_to_512(default_report):
    assert rising([spread_quantile(default_report, d, 99) for d in (16, 64, 128, 512)])


@claim(README, "and its 90% quantile stops growing by d_k = 512 and collapses beyond 1024, as "
               "the median did")
def test_unscaled_the_90_percent_quantile_of_dq_stops_then_collapses(default_report):
    r = default_report
    q = {d: spread_quantile(r, d, 90) for d in r.dks}
    assert q[16].high < q[512].low  # it grew
    assert not q[512].high < q[1024].low  # and no further
    beyond = [q[1024]] + [  # rows drawn as the report draws them (seed d_k), past its d_k
        stats.gradient_spread(d, UNSCALED, trials=r.trials, seed=d).query_quantiles[
            stats.PERCENTILES.index(90)] for d in (4096, 16384, 65536)]
    assert falling(beyond)


def near_tie_rows(d_k, rows, seed, gap=1.0):
    """||dL/dS|| of unscaled attention rows whose two largest logits lie within `gap`, and
    the share of such rows: q, 16 keys, 8-wide values and the upstream gradient G with
    independent N(0, 1) entries, drawn here by rotation (q . k_j = |q| z_j, G . v_j =
    |G| z'_j) with the standard library's gammavariate and gauss."""
    rng, norms, count = random.Random(seed), [], 0
    for _ in range(rows):
        q_norm, g_norm = math.sqrt(rng.gammavariate(d_k / 2, 2)), math.sqrt(
            rng.gammavariate(4, 2))
        s = [q_norm * rng.gauss(0, 1) for _ in range(16)]
        g = [g_norm * rng.gauss(0, 1) for _ in range(16)]
        top, second = sorted(s)[-1], sorted(s)[-2]
        if top - second < gap:
            count += 1
            p = [math.exp(v - top) for v in s]
            p = [v / math.fsum(p) for v in p]
            inner = math.fsum(a * b for a, b in zip(p, g))
            norms.append(math.sqrt(math.fsum((a * (b - inner)) ** 2 for a, b in zip(p, g))))
    return norms, count / rows


@claim(README, "Not every row saturates. In the few rows whose two largest logits nearly tie, "
               "softmax passes an O(1) gradient, and the mean over the rows feels them.")
@claim(INTERVIEW, "a few rows whose two largest logits nearly tie are not saturated and pass "
                  "an O(1) gradient.")
def test_rows_whose_top_two_logits_nearly_tie_pass_a_gradient_that_does_not_fall(
        default_report):
    # rows within one unit of a tie: their mean ||dL/dS|| at d_k = 1024 is that at d_k = 64,
    # within Z standard errors (O(1)), while there are ever fewer of them
    rows, cells, shares = 6000, [], []
    for d_k in (64, 1024):
        norms, share = near_tie_rows(d_k, rows, seed=d_k)
        cells.append((statistics.fmean(norms), statistics.stdev(norms) / math.sqrt(len(norms))))
        shares.append((share, math.sqrt(share * (1 - share) / rows)))  # a binomial share
    assert within(*cells[0], *cells[1])  # their gradient does not fall with d_k: O(1)
    assert apart(*shares[0], *shares[1]) > Z  # but they are fewer
    # and the mean over all the rows lies above the median's interval (report, d_k = 1024)
    g = default_report.gradients[1024, UNSCALED]
    assert g.score_grad_mean[0] - Z * g.score_grad_mean[1] > g.score_grad.high


@claim(INTERVIEW, "the largest wins by a margin that grows with d_k")
def test_the_largest_logit_s_lead_over_the_second_grows_with_d_k():
    # unscaled logits q . k_j = |q| z_j over 16 keys: the lead of the largest over the second
    # is |q| times that of 16 normals, so it grows like sqrt(d_k); means +- standard errors
    leads = []
    for d_k in (16, 64, 256, 1024):
        rng = random.Random(d_k)
        xs = []
        for _ in range(2000):
            q_norm = math.sqrt(rng.gammavariate(d_k / 2, 2))
            z = sorted(rng.gauss(0, 1) for _ in range(16))
            xs.append(q_norm * (z[-1] - z[-2]))
        leads.append((statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))))
    assert rising(leads)


@claim(INTERVIEW, "The mean ‖dL/dQ‖ unscaled is even larger than scaled")
@claim(README, "So the batch gradient of an unscaled model is lopsided, not small")
def test_at_d_k_1024_the_mean_dq_is_larger_unscaled(default_report):
    g = [default_report.gradients[1024, arm].query_grad_mean for arm in (UNSCALED, SCALED)]
    assert apart(*g[0], *g[1]) > Z


@claim(INTERVIEW, "As d_k grows, dS falls much faster than sqrt(d_k) grows")
def test_the_median_ds_times_sqrt_d_k_falls_from_d_k_64(default_report):
    # median ||dL/dS|| sqrt(d_k): its interval, scaled by sqrt(d_k), below the one before
    r = default_report
    cells = [(d, r.gradients[d, UNSCALED].score_grad) for d in r.dks if d >= 64]
    assert all(b.high * math.sqrt(e) < a.low * math.sqrt(d)
               for (d, a), (e, b) in zip(cells, cells[1:]))
