"""The logit-scale study's page against its records: every statistic rebuilt by code of
its own, and every sentence that states a direction, a comparison or a bound.

The records are the committed experiments/stability*.json.  The statistics here are
written again from their definitions on docs/stability.md, with plain loops, the stdlib
statistics module, exact Fractions and math.comb, and never call stability_measure's; a
table is checked by rebuilding its cells.  A claim quotes its sentence as it stands on the
page, with each generated value replaced by {its name} and the whitespace normalised, and
recomputes it from the records.  Where a sentence compares two medians, the test compares
their intervals, so that the claim holds with the uncertainty the page prints beside it;
where it counts seeds, it counts them exactly.
"""

import json
import math
import os
import re
import statistics
from fractions import Fraction

import pytest

from experiments import stability as ST
from experiments import stability_tables as SX

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "stability.md")
BAND = 0.1
PAPER = (3e-4, 3e-1)


@pytest.fixture(scope="module")
def records():
    out = {}
    for name, path in ST.RECORDS.items():
        with open(path, encoding="utf-8") as f:
            out[name] = json.load(f)
    return out


@pytest.fixture(scope="module")
def runs(records):
    return [r for rec in records.values() for r in rec["runs"]]


@pytest.fixture(scope="module")
def data():
    return ST.docs_data()


@pytest.fixture(scope="module")
def blocks(data):
    return ST.markdown_blocks(data)


# ------------------------------------------------------------------ independent statistics

def is_collapsed(run):
    return run["final_accuracy"] is None or run["final_accuracy"] < 0.5


def loss_of(run):
    return math.inf if run["final_loss"] is None else run["final_loss"]


def groups(runs):
    """{(optimizer, arm, d_k): {seed: [runs, lowest rate first]}}"""
    out = {}
    for r in runs:
        key = (r["optimizer"], r["arm"], r["d_k"])
        out.setdefault(key, {}).setdefault(r["seed"], []).append(r)
    for by_seed in out.values():
        for seed in by_seed:
            by_seed[seed] = sorted(by_seed[seed], key=lambda r: r["octave"])
    return out


def best_of(rs):
    best = rs[0]
    for r in rs[1:]:
        if loss_of(r) < loss_of(best):  # a tie keeps the smaller rate, met first
            best = r
    return best["octave"]


def edge_of(rs):
    edge = None
    k = len(rs) - 1
    while k >= 0 and is_collapsed(rs[k]):
        edge = rs[k]["octave"]
        k -= 1
    return edge


def band_of(rs):
    i = [r["octave"] for r in rs].index(best_of(rs))
    top = loss_of(rs[i])
    low = high = i
    while low - 1 >= 0 and loss_of(rs[low - 1]) - top <= BAND:
        low -= 1
    while high + 1 < len(rs) and loss_of(rs[high + 1]) - top <= BAND:
        high += 1
    return rs[high]["octave"] - rs[low]["octave"], low == 0 or high == len(rs) - 1


def lr_sensitivity_of(rs, window=None):
    """In exact Fractions: mean of min(l, l_0) - l* over the window's rates."""
    inside = [r for r in rs if window is None or window[0] <= r["octave"] <= window[1]]
    finite = [Fraction(r["final_loss"]) for r in inside if r["final_loss"] is not None]
    if not finite:
        return None
    star = min(finite)
    clipped = [Fraction(r["initial_loss"]) if r["final_loss"] is None else
               min(Fraction(r["final_loss"]), Fraction(r["initial_loss"])) for r in inside]
    return float(sum(c - star for c in clipped) / len(clipped))


def paper_window(optimizer, octaves):
    if optimizer != "adam":
        return None
    inside = [k for k in octaves if PAPER[0] <= 2.0 ** k <= PAPER[1]]
    return inside[0], inside[-1]


def order_interval(values):
    """median and [x_(l), x_(n+1-l)]: l the largest with P(l <= B <= n - l) >= 0.95,
    B ~ Binomial(n, 1/2); None ranks above every number."""
    ranked = sorted(math.inf if v is None else v for v in values)
    n = len(ranked)
    covering = [k for k in range(1, n // 2 + 1)
                if Fraction(sum(math.comb(n, b) for b in range(k, n - k + 1)), 2 ** n)
                >= Fraction(95, 100)]
    l = max(covering, default=1)
    median = statistics.median(ranked)
    as_none = [None if v == math.inf else v for v in (median, ranked[l - 1], ranked[n - l])]
    return tuple(as_none)


def sign_p(a, b):
    n, k = a + b, min(a, b)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tail))


def compare(reference, other):
    """higher, lower, tied, both None (None ranks above every number)"""
    counts = [0, 0, 0, 0]
    for r, o in zip(reference, other):
        if r is None and o is None:
            counts[3] += 1
        elif o is None or (r is not None and o > r):
            counts[0] += 1
        elif r is None or o < r:
            counts[1] += 1
        else:
            counts[2] += 1
    return counts


# ------------------------------------------------------------------ cells, as printed

def octave_cell(values, high):
    def text(v):
        return f">{high}" if v is None else f"{v:g}"
    m, lo, hi = order_interval(values)
    return f"{text(m)} [{text(lo)}, {text(hi)}]"


NUMBER = re.compile(r"^(-?[\d.e+-]+) \[(-?[\d.e+-]+), (-?[\d.e+-]+)\]$")


def assert_number_cell(cell, values):
    """A printed 'median [low, high]' rounds the independent median to its last decimal,
    and its ends outward (within one unit of that decimal)."""
    m, lo, hi = order_interval(values)
    printed = NUMBER.match(cell)
    assert printed, cell
    pm, plo, phi = (float(x) for x in printed.groups())
    decimals = [len(x.split(".")[1]) if "." in x and "e" not in x else None
                for x in printed.groups()]
    if None in decimals:  # two significant digits, no width: each within 5% of its value
        for p, v in ((pm, m), (plo, lo), (phi, hi)):
            assert abs(p - v) <= 0.05 * abs(v) + 1e-300, (cell, v)
        return
    unit = 10.0 ** -max(decimals)
    assert abs(pm - m) <= unit / 2 + 1e-12, (cell, m)
    assert plo <= lo + 1e-12 and lo - plo < unit + 1e-12, (cell, lo)
    assert phi >= hi - 1e-12 and phi - hi < unit + 1e-12, (cell, hi)


def table_rows(block):
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in block.splitlines()[2:]]


def per_seed(runs, optimizer, arm, d_k):
    return groups(runs)[optimizer, arm, d_k]


# ------------------------------------------------------------------ the records

def test_every_flag_of_every_run_follows_from_its_numbers(runs):
    for r in runs:
        assert r["collapsed"] == is_collapsed(r), r["arm"]
        assert r["above_initial"] == (r["final_loss"] is None or
                                      r["final_loss"] > r["initial_loss"])
        assert r["non_finite"] == (r["final_loss"] is None)
        assert r["lr"] == 2.0 ** r["octave"]
        assert r["max_logit"] >= max(r["largest"]) * (1 - 0.005)  # 3 digits round by <= 0.5%
        assert len(r["largest"]) == (200 if not r["non_finite"] else len(r["largest"]))


def test_every_sweep_runs_every_rate_of_its_grid_for_every_arm_d_k_and_seed(records):
    for rec in records.values():
        s = rec["settings"]
        keys = [(r["arm"], r["d_k"], r["seed"], r["octave"]) for r in rec["runs"]]
        want = [(a, d, seed, k) for a in s["arms"] for d in s["d_ks"] for seed in s["seeds"]
                for k in range(s["octaves"][0], s["octaves"][1] + 1)]
        assert keys == want


# ------------------------------------------------------------------ the tables, rebuilt

@pytest.mark.parametrize("block, optimizer", [("stability-table", "adam"),
                                              ("stability-all-table", "adam"),
                                              ("stability-sgd-table", "sgd")])
def test_the_main_tables_are_the_statistics_rebuilt_from_the_records(blocks, runs, records,
                                                                     block, optimizer):
    by_name = {v: k for k, v in SX.NAMES.items()}
    rows = table_rows(blocks[block])
    assert rows
    for row in rows:
        arm, d_k = by_name[row[0]], int(row[1])
        seeds = per_seed(runs, optimizer, arm, d_k)
        octaves = [r["octave"] for r in next(iter(seeds.values()))]
        high = octaves[-1]
        assert row[2] == octave_cell([best_of(rs) for rs in seeds.values()], high)
        edges = [edge_of(rs) for rs in seeds.values()]
        assert row[3] == octave_cell(edges, high)
        gaps = [None if e is None else e - best_of(rs) for e, rs in zip(edges, seeds.values())]
        m, lo, hi = order_interval(gaps)
        assert row[4] == ("-" if m is None else
                          f"{m:g} [{lo:g}, {'-' if hi is None else format(hi, 'g')}]")
        bands = [band_of(rs) for rs in seeds.values()]
        censored = sum(c for _, c in bands)
        assert row[5] == octave_cell([b for b, _ in bands], high) + (
            f" ({censored} at an end)" if censored else "")
        assert_number_cell(row[6], [lr_sensitivity_of(rs) for rs in seeds.values()])
        window = paper_window(optimizer, octaves)
        if window is None:
            assert row[7] == "-"
        else:
            assert_number_cell(row[7], [lr_sensitivity_of(rs, window) for rs in seeds.values()])


@pytest.mark.parametrize("block, optimizer", [("stability-paired", "adam"),
                                              ("stability-all-paired", "adam"),
                                              ("stability-sgd-paired", "sgd")])
def test_the_paired_tables_are_the_seeds_compared_and_sign_tested_again(blocks, runs, block,
                                                                        optimizer):
    by_name = {v: k for k, v in SX.NAMES.items()}
    for row in table_rows(blocks[block]):
        arm, d_k = by_name[row[0]], int(row[1])
        ref, other = (per_seed(runs, optimizer, a, d_k) for a in ("1/sqrt(d_k)", arm))
        seeds = sorted(set(ref) & set(other))
        higher, lower, tied, both = compare([edge_of(ref[s]) for s in seeds],
                                            [edge_of(other[s]) for s in seeds])
        assert row[2] == f"{higher}-{lower}-{tied}" + (f" (+{both} both beyond)" if both else "")
        assert float(row[3]) == pytest.approx(sign_p(higher, lower), abs=0.006)
        wider, narrower, tied, _ = compare([band_of(ref[s])[0] for s in seeds],
                                           [band_of(other[s])[0] for s in seeds])
        assert row[4] == f"{wider}-{narrower}-{tied}"
        assert float(row[5]) == pytest.approx(sign_p(wider, narrower), abs=0.006)
        octaves = [r["octave"] for r in ref[seeds[0]]]
        windows = [None] + ([paper_window(optimizer, octaves)] if optimizer == "adam" else [])
        for i, window in enumerate(windows):
            up, down, tie, _ = compare([lr_sensitivity_of(ref[s], window) for s in seeds],
                                       [lr_sensitivity_of(other[s], window) for s in seeds])
            assert row[6 + 2 * i] == f"{down}-{up}-{tie}"
            assert float(row[7 + 2 * i]) == pytest.approx(sign_p(up, down), abs=0.006)
        if optimizer != "adam":
            assert row[8:] == ["-", "-"]


@pytest.mark.parametrize("block, optimizer, divisor", [("stability-offset", "adam", 4),
                                                       ("stability-sgd-offset", "sgd", 2)])
def test_the_offset_of_1_over_d_k_s_edge_is_rebuilt_beside_its_guide(blocks, runs, block,
                                                                    optimizer, divisor):
    for row in table_rows(blocks[block]):
        d_k = int(row[0])
        ref, inv = (per_seed(runs, optimizer, a, d_k) for a in ("1/sqrt(d_k)", "1/d_k"))
        offsets = [edge_of(inv[s]) - edge_of(ref[s]) for s in sorted(ref)
                   if edge_of(inv[s]) is not None and edge_of(ref[s]) is not None]
        assert row[2] == f"{len(offsets)} of {len(ref)}"
        if offsets:
            assert row[1] == octave_cell(offsets, None)
        assert float(row[3]) == math.log2(d_k) / divisor


# ------------------------------------------------------------------ the figures

def svg_series(svg):
    """{label: [(x, y, low, high)]} from the data- attributes of a figure's points."""
    import xml.etree.ElementTree as ET
    out = {}
    root = ET.fromstring(svg)
    for group in (g for g in root.iter("{http://www.w3.org/2000/svg}g")
                  if g.get("class") == "series"):
        points = [(float(p.get("data-x")), float(p.get("data-y")),
                   p.get("data-low"), p.get("data-high"))
                  for p in group if p.get("class") == "point"]
        out.setdefault(group.get("data-label"), []).append(points)
    return out


def test_the_loss_figure_plots_each_arm_s_median_loss_and_interval_per_rate(data, runs):
    from scripts import build
    svg = build.figure_stability_loss(build.Data(None, None, None, None, data))
    series = svg_series(svg)
    by_name = {v: k for k, v in SX.NAMES.items()}
    panels = 0
    for d_k, (points,) in zip(D_KS, zip(series.pop("l_0 of 1/sqrt(d_k)"))):
        l_0 = statistics.median(rs[0]["initial_loss"]
                                for rs in per_seed(runs, "adam", "1/sqrt(d_k)", d_k).values())
        assert {y for _, y, _, _ in points} == {l_0}
    for label, per_panel in series.items():
        arm = by_name[label]
        for d_k, points in zip((16, 64, 256), per_panel):  # the panels, top to bottom
            seeds = per_seed(runs, "adam", arm, d_k)
            for x, y, low, high in points:
                losses = [r["final_loss"] for rs in seeds.values() for r in rs
                          if r["octave"] == x]
                m, lo, hi = order_interval(losses)
                assert (y, float(low), float(high)) == (m, lo, hi), (arm, d_k, x)
            assert [p[0] for p in points] == list(range(-10, 3))
            panels += 1
    assert panels == 4 * 3


def test_the_logit_figure_plots_the_median_largest_logit_at_four_rates_around_the_edge(
        data, runs):
    from scripts import build
    svg = build.figure_stability_logits(build.Data(None, None, None, None, data))
    seeds = per_seed(runs, "adam", "1/sqrt(d_k)", SX.FIGURE_D_K)
    edge = statistics.median(edge_of(rs) for rs in seeds.values())
    rates = []
    for label, (points,) in svg_series(svg).items():
        k = int(label.split("^")[1])
        rates.append(k)
        for x, y, _, _ in points:
            t = int(x) - 1
            at_k = [next(r for r in rs if r["octave"] == k) for rs in seeds.values()]
            assert y == statistics.median(float(r["largest"][t]) for r in at_k), (k, x)
        assert [int(p[0]) for p in points][:3] == [1, 5, 10] and points[-1][0] == 200
    assert rates == list(range(math.floor(edge) - 2, math.floor(edge) + 2))


# ------------------------------------------------------------------ the sentences

def page_text(path=PAGE):
    """A page with each generated value replaced by {its name}, bold marks dropped and the
    whitespace normalised."""
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("**", "")
    return " ".join(re.sub(r"<!--v:([\w.-]+)-->.*?<!--/v-->", r"{\1}", text, flags=re.S).split())


def says(sentence):
    """The sentence stands on the page as quoted (whitespace normalised)."""
    assert " ".join(sentence.split()) in page_text(), sentence


@pytest.fixture(scope="module")
def printed(data):
    return ST.markdown_values(data)


DEFAULT = ("1/sqrt(d_k)", "1/d_k", "qk-norm", "cap-50")
FREE = ("1/sqrt(d_k)", "1/d_k", "qk-norm")  # the arms whose logits are not capped
D_KS = (16, 64, 256)


def medians(values):
    return order_interval(values)


def joined(values, text=lambda v: f"{v:g}"):
    return ", ".join(text(v) for v in values)


def short(v):
    """Two significant digits, as the page prints them in prose ('910', '2400', '1.1e6')."""
    digits = f"{v:.2g}"
    if "e" in digits and int(digits.split("e")[1]) >= 4:
        return f"{digits.split('e')[0]}e{int(digits.split('e')[1])}"
    return f"{float(digits):g}"


def span(values, text):
    low, high = text(min(values)), text(max(values))
    return low if low == high else f"{low} to {high}"


def band_runs(rs):
    """The runs of a seed's band."""
    i = [r["octave"] for r in rs].index(best_of(rs))
    top, low, high = loss_of(rs[i]), i, i
    while low - 1 >= 0 and loss_of(rs[low - 1]) - top <= BAND:
        low -= 1
    while high + 1 < len(rs) and loss_of(rs[high + 1]) - top <= BAND:
        high += 1
    return rs[low:high + 1]


def at(rs, octave):
    return next(r for r in rs if r["octave"] == octave)


def test_every_arm_has_a_band_several_octaves_wide_where_the_task_is_solved(runs, printed):
    says("Every arm has a band of good rates several octaves wide: the median band is at "
         "least four octaves for every arm and d_k.")
    for arm in DEFAULT:
        for d_k in D_KS:
            seeds = per_seed(runs, "adam", arm, d_k)
            assert medians([band_of(rs)[0] for rs in seeds.values()])[0] >= 4, (arm, d_k)
            assert all(r["final_accuracy"] >= 0.9 for rs in seeds.values()
                       for r in band_runs(rs)), (arm, d_k)
    says("Under 1/sqrt(d_k) it spans {stability.band.sqrt} octaves at d_k = 16, 64 and 256.")
    assert printed["stability.band.sqrt"] == joined(
        medians([band_of(rs)[0] for rs in per_seed(runs, "adam", "1/sqrt(d_k)", d).values()])[0]
        for d in D_KS)


def test_the_best_runs_reach_the_floor_of_the_readout_one_hot_on_the_right_key(runs, printed):
    says("On the plateau attention ends one-hot on the right key: the lowest final loss of "
         "every arm and d_k has a median of {stability.best-loss.range} nats.")
    says("That is the floor of the fixed readout, the loss of z = 5 e_t, ln(1 + 7 e^-5) = "
         "{stability.floor}: the band is where the task is solved.")
    floor = math.log(1 + 7 * math.exp(-5))
    assert printed["stability.floor"] == f"{floor:.4f}"
    best_losses = []
    for arm in DEFAULT:
        for d_k in D_KS:
            seeds = per_seed(runs, "adam", arm, d_k).values()
            best = [at(rs, best_of(rs)) for rs in seeds]
            m = medians([r["final_loss"] for r in best])[0]
            best_losses.append(m)
            assert abs(m - floor) < 5e-4, (arm, d_k)
            assert medians([r["final_accuracy"] for r in best])[0] == 1.0
            assert medians([r["final_entropy"] for r in best])[0] < 0.01  # one-hot
    assert printed["stability.best-loss.range"] == span(best_losses, lambda v: f"{v:.4f}")


def test_every_arm_collapses_two_to_three_octaves_above_its_best_rate(runs, printed):
    says("Above the band every arm collapses within a few octaves. The median distance from "
         "a seed's best rate to its edge is {stability.gap.range} octaves for every arm and d_k.")
    gaps = []
    for arm in DEFAULT:
        for d_k in D_KS:
            seeds = per_seed(runs, "adam", arm, d_k).values()
            m = medians([edge_of(rs) - best_of(rs) for rs in seeds])[0]
            gaps.append(m)
    assert 2 <= min(gaps) and max(gaps) <= 3
    assert printed["stability.gap.range"] == span(gaps, lambda v: f"{v:g}")


def test_at_the_edge_the_logits_reach_thousands_and_attention_is_one_hot_on_a_wrong_key(
        runs, printed):
    says("Under the two scales and QK-norm, the largest logit of a training batch goes from "
         "tens at the best rate to thousands at the edge.")
    says("Its median at the edge is {stability.logit-edge.range} across those arms and d_k, "
         "and below 100 at the best rate.")
    says("Over all their collapsed runs it is {stability.collapsed.range}.")
    says("Attention there is one-hot: the median entropy at the edge is at most "
         "{stability.entropy-edge.max} nats for each of those arms and d_k")
    says("Above the edge its median is {stability.accuracy-above.range}, near chance (1/8, "
         "12.5%).")
    at_edge, collapsed, entropies, above = [], [], [], []
    for arm in FREE:
        for d_k in D_KS:
            seeds = per_seed(runs, "adam", arm, d_k).values()
            best = medians([at(rs, best_of(rs))["max_logit"] for rs in seeds])[0]
            edge = medians([at(rs, edge_of(rs))["max_logit"] for rs in seeds])[0]
            assert 10 <= best < 100 and edge >= 1000, (arm, d_k)
            at_edge.append(edge)
            collapsed += [r["max_logit"] for rs in seeds for r in rs if is_collapsed(r)]
            entropies.append(medians([at(rs, edge_of(rs))["final_entropy"] for rs in seeds])[0])
            up = medians([statistics.median(r["final_accuracy"] for r in rs
                                            if r["octave"] > edge_of(rs)) for rs in seeds])[0]
            assert abs(up - 0.125) <= 0.1, (arm, d_k)
            above.append(up)
    assert printed["stability.logit-edge.range"] == span(at_edge, short)
    assert printed["stability.collapsed.range"] == span(collapsed, short)
    assert max(entropies) <= float(printed["stability.entropy-edge.max"]) < 0.01
    assert printed["stability.accuracy-above.range"] == span(above, lambda v: f"{100 * v:.0f}%")


def test_the_paper_s_scale_ends_above_l_0_from_its_edge_up(runs, printed):
    says("Under 1/sqrt(d_k), the final loss ends above l_0 in {stability.above.sqrt} runs from "
         "the edge up.")
    up = [r for d_k in D_KS for rs in per_seed(runs, "adam", "1/sqrt(d_k)", d_k).values()
          for r in rs if r["octave"] >= edge_of(rs)]
    ended = sum(r["final_loss"] > r["initial_loss"] for r in up)
    assert printed["stability.above.sqrt"] == f"{ended} of {len(up)}"
    assert ended >= 0.95 * len(up)


def test_just_below_the_edge_the_logits_keep_growing_and_the_loss_climbs_back(runs, printed):
    says("One octave below its edge, the largest logit of 1/sqrt(d_k) still grows through the "
         "second half of the run: from step 100 to step 200 it grows by a median factor of "
         "{stability.growth.sqrt} at d_k = 16, 64, 256.")
    says("The held-out loss climbs back more than 0.1 nat above the lowest it reached in its "
         "run in {stability.climbed.sqrt} of those runs.")
    factors, climbed = [], 0
    for d_k in D_KS:
        below = [at(rs, edge_of(rs) - 1) for rs in per_seed(runs, "adam", "1/sqrt(d_k)",
                                                             d_k).values()]
        m, lo, _ = medians([r["largest"][199] / r["largest"][99] for r in below])
        assert lo > 1, d_k  # the interval of the median factor lies above 1
        factors.append(m)
        climbed += sum(r["held_out_loss"][-1] - min(r["held_out_loss"]) > 0.1 for r in below)
    assert printed["stability.growth.sqrt"] == joined(factors, lambda v: f"{v:.2g}")
    assert printed["stability.climbed.sqrt"] == f"{climbed} of 30" and climbed > 15


def test_the_figure_s_logits_grow_through_the_run_faster_at_higher_rates(runs):
    says("At each of them the median largest logit grows through the whole run, by more than "
         "a fifth over its last 50 steps, and after the first step it is larger the higher the "
         "rate.")
    seeds = per_seed(runs, "adam", "1/sqrt(d_k)", SX.FIGURE_D_K).values()
    edge = math.floor(statistics.median(edge_of(rs) for rs in seeds))
    curves = [[statistics.median(float(at(rs, k)["largest"][t]) for rs in seeds)
               for t in range(200)] for k in range(edge - 2, edge + 2)]
    for curve in curves:
        assert curve[199] > 1.2 * curve[149] and curve[149] > curve[99] > curve[49]
    for t in range(1, 200):
        assert [c[t] for c in curves] == sorted(c[t] for c in curves), t


def edge_differences(runs, arm, d_k, optimizer="adam"):
    ref, other = (per_seed(runs, optimizer, a, d_k) for a in ("1/sqrt(d_k)", arm))
    return [edge_of(other[s]) - edge_of(ref[s]) for s in sorted(ref)]


def paired_count(runs, arm, what, optimizer="adam"):
    """Summed over the d_k: (how many seeds have arm's value above 1/sqrt(d_k)'s, below,
    and how many pairs there are), for what = edge, band or lr (grid)."""
    value = {"edge": edge_of, "band": lambda rs: band_of(rs)[0], "lr": lr_sensitivity_of}[what]
    up = down = total = 0
    for d_k in D_KS:
        ref, other = (per_seed(runs, optimizer, a, d_k) for a in ("1/sqrt(d_k)", arm))
        higher, lower, _, _ = compare([value(ref[s]) for s in sorted(ref)],
                                      [value(other[s]) for s in sorted(ref)])
        up, down, total = up + higher, down + lower, total + len(ref)
    return up, down, total


def test_qk_norm_moves_the_edge_up_widens_the_band_and_its_gains_grow(runs, printed):
    says("QK-norm moves the edge up by two to three octaves (the medians of the seeds' "
         "differences).")
    says("Its edge is higher than 1/sqrt(d_k)'s on {stability.edge-higher.qknorm} seed pairs "
         "over the three d_k.")
    says("Its band is wider on {stability.band-wider.qknorm}.")
    says("Its LR sensitivity is lower on {stability.lrs-lower.qknorm}.")
    for d_k in D_KS:
        assert 2 <= statistics.median(edge_differences(runs, "qk-norm", d_k)) <= 3
    up, _, total = paired_count(runs, "qk-norm", "edge")
    assert printed["stability.edge-higher.qknorm"] == f"{up} of {total}" and up >= 0.9 * total
    up, _, total = paired_count(runs, "qk-norm", "band")
    assert printed["stability.band-wider.qknorm"] == f"{up} of {total}" and up >= 0.9 * total
    _, down, total = paired_count(runs, "qk-norm", "lr")
    assert printed["stability.lrs-lower.qknorm"] == f"{down} of {total}" and down >= 0.9 * total
    says("It does not stop the logits from growing; its learned gains let them grow.")
    says("The largest gain has a median of {stability.gain.best.qknorm} at the best rate")
    says("At the edge it has a median of {stability.gain.edge.qknorm}.")
    best_gains, edge_gains = [], []
    for d_k in D_KS:
        seeds = per_seed(runs, "adam", "qk-norm", d_k).values()
        best = medians([at(rs, best_of(rs))["max_gain"] for rs in seeds])
        edge = medians([at(rs, edge_of(rs))["max_gain"] for rs in seeds])
        assert edge[1] > best[2], d_k  # the intervals apart: the gains grow
        assert medians([at(rs, edge_of(rs))["max_logit"] for rs in seeds])[0] >= 1000
        best_gains.append(best[0])
        edge_gains.append(edge[0])
    assert printed["stability.gain.best.qknorm"] == joined(best_gains, short)
    assert printed["stability.gain.edge.qknorm"] == joined(edge_gains, short)
    says("at the edge QK-norm's logits reach thousands as the scaled arms' do")


def test_qk_norm_s_logits_stay_under_the_ceiling_its_gains_set(runs):
    # |s| < max|g_Q| max|g_K| sqrt(d_k) <= g^2 sqrt(d_k), g the largest gain of the run;
    # the float logits may pass the exact bound by rounding only: a relative 1e-12
    says("Since |s| < max|g_Q| max|g_K| sqrt(d_k)")
    for r in runs:
        if r["arm"] == "qk-norm":
            assert r["max_logit"] <= r["max_gain"] ** 2 * math.sqrt(r["d_k"]) * (1 + 1e-12)
        if r["arm"] == "qk-norm-g1":
            assert r["max_logit"] <= math.sqrt(r["d_k"])


def test_the_soft_cap_holds_its_logits_ties_them_and_keeps_the_loss_below_l_0(runs, printed):
    says("Soft-cap 50 moves the edge up by one to two octaves.")
    says("Its edge is higher on {stability.edge-higher.cap50} seed pairs.")
    says("Its band is wider on {stability.band-wider.cap50}.")
    says("Its logits never pass 50, but the logits before the cap do.")
    says("At the edge their largest has a median of {stability.before-cap.edge.cap50}.")
    for d_k in D_KS:
        assert 1 <= statistics.median(edge_differences(runs, "cap-50", d_k)) <= 2
    up, _, total = paired_count(runs, "cap-50", "edge")
    assert printed["stability.edge-higher.cap50"] == f"{up} of {total}" and up >= 0.9 * total
    up, _, total = paired_count(runs, "cap-50", "band")
    assert printed["stability.band-wider.cap50"] == f"{up} of {total}" and up >= 0.9 * total
    caps = [r for r in runs if r["arm"] == "cap-50"]
    assert all(r["max_logit"] <= 50.0 for r in caps)
    assert max(r["max_logit_before_cap"] for r in caps) > 50.0
    before = [medians([at(rs, edge_of(rs))["max_logit_before_cap"]
                       for rs in per_seed(runs, "adam", "cap-50", d).values()])[0] for d in D_KS]
    assert printed["stability.before-cap.edge.cap50"] == joined(before, short)
    says("From the edge up, the keys that reach the cap tie: the median entropy at the edge "
         "stays between 0.5 and 1.5 nats, and the median accuracy above the edge is 0, since a "
         "tie is not an answer.")
    says("Yet such a run rarely ends above l_0: {stability.above.cap50} runs from the edge up "
         "do, because attention split over a few tied keys costs less loss than attention on "
         "one wrong key: in every seed the median final loss of those runs is below l_0, and "
         "below that of 1/sqrt(d_k)'s runs from its edge up.")
    ended = total = 0
    for d_k in D_KS:
        seeds = per_seed(runs, "adam", "cap-50", d_k).values()
        assert 0.5 <= medians([at(rs, edge_of(rs))["final_entropy"] for rs in seeds])[0] <= 1.5
        assert medians([statistics.median(r["final_accuracy"] for r in rs
                                          if r["octave"] > edge_of(rs)) for rs in seeds])[0] == 0
        up = [r for rs in seeds for r in rs if r["octave"] >= edge_of(rs)]
        ended += sum(r["final_loss"] > r["initial_loss"] for r in up)
        total += len(up)
        scaled = per_seed(runs, "adam", "1/sqrt(d_k)", d_k)
        for seed, rs in per_seed(runs, "adam", "cap-50", d_k).items():
            capped = statistics.median(r["final_loss"] for r in rs if r["octave"] >= edge_of(rs))
            other = scaled[seed]
            assert capped < rs[0]["initial_loss"], (d_k, seed)
            assert capped < statistics.median(r["final_loss"] for r in other
                                              if r["octave"] >= edge_of(other)), (d_k, seed)
    assert printed["stability.above.cap50"] == f"{ended} of {total}" and ended < 0.25 * total
    says("So the cap's LR sensitivity is lower than 1/sqrt(d_k)'s on every seed at every d_k, "
         "although above its edge the median run answers no question right: LR sensitivity "
         "reads the loss, not the answers.")
    _, down, total = paired_count(runs, "cap-50", "lr")
    assert down == total
    says("One octave below its edge the largest logit sits at the cap, within 0.2% of 50 from "
         "step 100 to step 200.")
    for d_k in D_KS:
        for rs in per_seed(runs, "adam", "cap-50", d_k).values():
            assert min(at(rs, edge_of(rs) - 1)["largest"][99:]) >= 49.9


def test_1_over_d_k_moves_the_edge_up_by_about_the_guide_with_a_band_no_wider(runs, printed):
    says("1/d_k moves the edge up as well, on {stability.edge-higher.inv} seed pairs, by about "
         "log2(d_k)/4 octaves (next table), and collapses the same way past it.")
    up, _, total = paired_count(runs, "1/d_k", "edge")
    assert printed["stability.edge-higher.inv"] == f"{up} of {total}" and up >= 0.9 * total
    for d_k in D_KS:
        seeds = per_seed(runs, "adam", "1/d_k", d_k).values()
        assert medians([at(rs, edge_of(rs))["final_entropy"] for rs in seeds])[0] < 0.01
        assert all(r["final_loss"] > r["initial_loss"] for rs in seeds for r in rs
                   if r["octave"] >= edge_of(rs))
    says("Its band is no wider than 1/sqrt(d_k)'s: it is wider on {stability.band-wider.inv} "
         "seed pairs.")
    up, down, total = paired_count(runs, "1/d_k", "band")
    assert printed["stability.band-wider.inv"] == f"{up} of {total}" and up < down


def test_the_offset_of_1_over_d_k_s_edge_holds_the_guide_in_its_interval(runs, printed):
    says("The medians of the measured offsets are {stability.offset} octaves at d_k = 16, 64 "
         "and 256, and the guide lies inside each interval.")
    offsets = []
    for d_k in D_KS:
        m, lo, hi = medians(edge_differences(runs, "1/d_k", d_k))
        assert lo <= math.log2(d_k) / 4 <= hi, d_k
        offsets.append(m)
    assert printed["stability.offset"] == joined(offsets)
    assert printed["stability.guide"] == joined(math.log2(d) / 4 for d in D_KS)


def test_lr_sensitivity_comes_mostly_from_the_collapses_and_depends_on_its_window(
        runs, printed):
    says("Most of it comes from the collapsed runs: over the whole grid, the runs from the "
         "edge up make a median of {stability.lrs-share.sqrt} of 1/sqrt(d_k)'s.")
    shares = []
    for d_k in D_KS:
        per = []
        for rs in per_seed(runs, "adam", "1/sqrt(d_k)", d_k).values():
            star = min(r["final_loss"] for r in rs)
            terms = [(r["octave"] >= edge_of(rs), min(r["final_loss"], r["initial_loss"]) - star)
                     for r in rs]
            per.append(math.fsum(t for up, t in terms if up) / math.fsum(t for _, t in terms))
        shares.append(medians(per)[0])
    assert min(shares) > 0.5
    assert printed["stability.lrs-share.sqrt"] == joined(shares, lambda v: f"{100 * v:.0f}%")
    says("On this grid the paper's range ends at 2^-2, at most one octave above any arm's "
         "median edge, and leaves most collapsed runs out.")
    assert paper_window("adam", list(range(-10, 3))) == (-10, -2)
    for arm in DEFAULT:
        for d_k in D_KS:
            seeds = per_seed(runs, "adam", arm, d_k).values()
            assert statistics.median(edge_of(rs) for rs in seeds) >= -3
            collapsed = [r for rs in seeds for r in rs if is_collapsed(r)]
            assert sum(r["octave"] <= -2 for r in collapsed) < len(collapsed) / 2
    says("In both windows every other arm's LR sensitivity is lower than 1/sqrt(d_k)'s on at "
         "least 8 of the 10 seeds at every d_k (the paired table).")
    for arm in DEFAULT[1:]:
        for d_k in D_KS:
            ref, other = (per_seed(runs, "adam", a, d_k) for a in ("1/sqrt(d_k)", arm))
            for window in (None, (-10, -2)):
                lower = sum(lr_sensitivity_of(other[s], window) < lr_sensitivity_of(ref[s], window)
                            for s in ref)
                assert lower >= 8, (arm, d_k, window)
    for name, arm in (("stability.lrs.sqrt", "1/sqrt(d_k)"),):
        assert printed[name] == joined(
            (medians([lr_sensitivity_of(rs) for rs in per_seed(runs, "adam", arm, d).values()])[0]
             for d in D_KS), lambda v: f"{v:.2f}")


# ------------------------------------------------------------------ README and interview

README = os.path.join(ROOT, "README.md")
INTERVIEW = os.path.join(ROOT, "docs", "interview.md")


def says_in(path, sentence):
    assert " ".join(sentence.split()) in page_text(path), (path, sentence)


def test_the_readme_section_says_what_the_page_measures(runs):
    says_in(README, "Every arm solves the task over a band of rates several octaves wide; two "
                    "to three octaves above its best rate it collapses.")
    says_in(README, "Under the two scales and QK-norm the largest logit then reaches thousands, "
                    "attention goes one-hot on a wrong key and the loss ends above its initial "
                    "value.")
    says_in(README, "QK-norm and the cap move that edge up and lower Wortsman et al.'s LR "
                    "sensitivity, but QK-norm's learned gains let the logits grow again, and "
                    "under the cap the logits tie at 50: the task fails while the loss stays "
                    "low.")
    says_in(README, "1/d_k moves the edge by about log2(d_k)/4 octaves, as the identity between "
                    "scales suggests.")
    for arm in DEFAULT:  # bands and edges: as on the page
        for d_k in D_KS:
            seeds = per_seed(runs, "adam", arm, d_k).values()
            assert medians([band_of(rs)[0] for rs in seeds])[0] >= 4
            assert 2 <= medians([edge_of(rs) - best_of(rs) for rs in seeds])[0] <= 3
    for arm in FREE:
        up = [r for d_k in D_KS for rs in per_seed(runs, "adam", arm, d_k).values()
              for r in rs if r["octave"] >= edge_of(rs)]
        assert sum(r["final_loss"] > r["initial_loss"] for r in up) >= 0.95 * len(up), arm
    for arm in ("qk-norm", "cap-50"):
        assert paired_count(runs, arm, "edge")[0] >= 27
        assert paired_count(runs, arm, "lr")[1] >= 27
    for d_k in D_KS:
        m, lo, hi = medians(edge_differences(runs, "1/d_k", d_k))
        assert lo <= math.log2(d_k) / 4 <= hi


def test_the_interview_answers_quote_the_page_s_numbers_and_hold(runs, printed):
    for sentence in (
            "QK-norm with learned gains moves that edge up by two to three octaves: its edge is "
            "higher on {stability.edge-higher.qknorm} seed pairs over d_k = 16, 64 and 256.",
            "Its LR sensitivity is lower on {stability.lrs-lower.qknorm}.",
            "But the gains are weights too: at its own edge the largest gain has a median of "
            "{stability.gain.edge.qknorm}, the ceiling |s| < max|g_Q| max|g_K| sqrt(d_k) rises "
            "with them, and the logits reach thousands again.",
            "at its best rate the cap arm's largest logit has a median of "
            "{stability.logit-best.cap50} at d_k = 16, 64, 256.",
            "The cap moves the edge up by one to two octaves: higher on "
            "{stability.edge-higher.cap50} seed pairs.",
            "Above the edge the keys that reach the cap tie, and the median run answers no "
            "held-out question right.",
            "Its LR sensitivity is nonetheless lower than 1/sqrt(d_k)'s on every seed, because a "
            "tie costs less loss than a confident wrong key, and LR sensitivity reads the loss.",
            "Only {stability.above.cap50} of its runs from the edge up end above their initial "
            "loss.",
            "The medians of the offsets are {stability.offset} octaves at d_k = 16, 64 and 256: "
            "log2(d_k)/4,",
            "Its band of good rates is no wider than 1/sqrt(d_k)'s: wider on "
            "{stability.band-wider.inv} seed pairs, and past its edge it collapses the same "
            "way, with logits in the thousands.",
            "It has fewer collapsed runs than 1/sqrt(d_k) on {stability.fewer-collapsed.inv} "
            "seeds: LR sensitivity depends on where the window sits."):
        says_in(INTERVIEW, sentence)
    assert printed["stability.e-50"] == f"{math.exp(-50):.1g}"
    caps = [medians([at(rs, best_of(rs))["max_logit"]
                     for rs in per_seed(runs, "adam", "cap-50", d).values()])[0] for d in D_KS]
    assert printed["stability.logit-best.cap50"] == joined(caps, short)
    assert all(40 <= c <= 50 for c in caps)  # "approach 50"
    fewer = 0
    for d_k in D_KS:
        ref, inv = (per_seed(runs, "adam", a, d_k) for a in ("1/sqrt(d_k)", "1/d_k"))
        fewer += sum(sum(map(is_collapsed, inv[s])) < sum(map(is_collapsed, ref[s])) for s in ref)
        seeds = inv.values()
        assert medians([at(rs, edge_of(rs))["max_logit"] for rs in seeds])[0] >= 1000
    assert printed["stability.fewer-collapsed.inv"] == f"{fewer} of 30" and fewer >= 27
    _, down, _ = paired_count(runs, "1/d_k", "lr")
    assert printed["stability.lrs-lower.inv"] == f"{down} of 30"
