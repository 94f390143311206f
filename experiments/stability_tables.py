"""The tables of the logit-scale study: from its records (stability_measure.measure) to
medians with intervals, paired counts and sign tests, then to text and Markdown.

The sentences around these tables live in docs/stability.md, docs/interview.md and
README.md; this file gives them numbers (`values`, through <!--v:NAME--> markers) and
tables (`blocks`, through <!--begin:NAME--> markers), and prints the same tables as text
(`report`).

Public API (`__all__`):
    tables(records, timing)      every table, from the records of one or more sweeps
    report(data)                 the printed report, as lines
    blocks(data), values(data)   the Markdown blocks and inline values of the pages
    NAMES, SLUGS                 the arms' printed names and marker names
    octave_text(k), edge_text(k), rate_text(k)   how a rate prints

>>> octave_text(-2.5), edge_text(None, 2), rate_text(-3)
('-2.5', '>2', '2^-3')

python3 experiments/stability.py --help runs the experiment.
"""

import math  # log2, log10, fsum
from decimal import ROUND_CEILING, Decimal  # a bound rounded up
import statistics  # median over the seeds of the per-step logits (of the figure)
from typing import Dict, List, Optional, Sequence, Tuple
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments.learning_measure import Summary, summarise
from experiments import learning_tables  # fmt, the tables' layout, seed_range: as learning's
from experiments.stability_measure import (BAND, PAPER_RANGE, REFERENCE, Plan, SeedStatistics,
                                           by_seed, edge_offsets, paired_counts, paper_window,
                                           summaries)
from experiments.learning_model import BETA, ITEMS
from experiments.stability_model import ARMS, DEFAULT_ARMS, EXTRA_ARMS

__all__ = ["tables", "report", "blocks", "values", "NAMES", "SLUGS", "octave_text",
           "edge_text", "rate_text", "FIGURE_D_K"]

Row = dict
NAMES = {"1/sqrt(d_k)": "1/sqrt(d_k)", "1/d_k": "1/d_k", "qk-norm": "QK-norm",
         "cap-50": "soft-cap 50", "1": "unscaled", "qk-norm-g1": "QK-norm, g = 1",
         "cap-10": "soft-cap 10"}
SLUGS = {"1/sqrt(d_k)": "sqrt", "1/d_k": "inv", "qk-norm": "qknorm", "cap-50": "cap50",
         "1": "one", "qk-norm-g1": "qknorm-g1", "cap-10": "cap10"}  # marker names
OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}
FIGURE_D_K = 64  # the logit-growth figure's d_k


# ------------------------------------------------------------------ how numbers print

def octave_text(k: float) -> str:
    """An octave (log2 of a rate) as printed: '-3', '-2.5'."""
    return f"{k:g}"


def rate_text(k: int) -> str:
    """A rate 2^k as printed in prose: '2^-3'."""
    return f"2^{k}"


def edge_text(k: Optional[float], high: int) -> str:
    """An edge's octave, or '>high' for beyond the grid (None)."""
    return f">{high}" if k is None else octave_text(k)


def _octaves_cell(s: Summary, high: Optional[int] = None) -> str:
    """median [low, high] of octaves; None (beyond the grid) as '>high'."""
    return (f"{edge_text(s.median, high)} [{edge_text(s.low, high)}, "
            f"{edge_text(s.high, high)}]")


def _gap_cell(s: Summary) -> str:
    """Octaves from the best rate to the edge; '-' where the median seed has no edge, and
    for an end of the interval that falls on such a seed."""
    if s.median is None:
        return "-"
    high = "-" if s.high is None else octave_text(s.high)
    return f"{octave_text(s.median)} [{octave_text(s.low)}, {high}]"


def _sig_cell(s: Summary, digits: int) -> str:
    """median [low, high], each to `digits` significant digits: for values that span
    decades, where a common number of decimals would not do."""
    if s.median is None or s.low is None or s.high is None:
        return "-"
    return " ".join([f"{s.median:.{digits}g}", f"[{s.low:.{digits}g},", f"{s.high:.{digits}g}]"])


def _percent_cell(s: Summary) -> str:
    """A median [interval] of shares, in percent."""
    if s.median is None:
        return "-"
    if s.high == s.low:
        return f"{100 * s.median:.0f}% [{100 * s.low:.0f}%, {100 * s.high:.0f}%]"
    return learning_tables.fmt(s.median, s.low, s.high, percent=True)


def _number_cell(s: Summary) -> str:
    """median [low, high] with the decimals the interval supports; '-' if undefined."""
    if s.median is None or s.low is None or s.high is None:
        return "-"
    if s.high == s.low:  # no width to read the decimals from: two significant digits
        return f"{s.median:.2g} [{s.low:.2g}, {s.high:.2g}]"
    return learning_tables.fmt(s.median, s.low, s.high)


def _p(p: float) -> str:
    return f"{p:.2g}" if p < 0.01 else f"{p:.2f}"


def _counts(c: Row, first: str, second: str) -> str:
    """'8-1-1' (first-second-tied), with '+2 both beyond' where both edges are beyond."""
    text = f"{c[first]}-{c[second]}-{c['tied']}"
    return text + (f" (+{c['both beyond']} both beyond)" if c["both beyond"] else "")


# ------------------------------------------------------------------ the numbers

def _plan(settings: dict) -> Plan:
    return Plan(settings["optimizer"], tuple(settings["arms"]), tuple(settings["d_ks"]),
                tuple(settings["seeds"]), settings["octaves"][0], settings["octaves"][1],
                settings["steps"])


def _at(runs: Sequence[dict], octave: Optional[int]) -> Optional[dict]:
    return next((r for r in runs if r["octave"] == octave), None)


def _median(values: Sequence[Optional[float]]) -> Summary:
    """summarise, or an empty Summary for no values (no seed has an edge, say)."""
    return summarise(list(values)) if values else Summary(None, None, None, 0.0, 0, 0)


def _per_seed(runs_by_seed: Dict[int, List[dict]], stats: Dict[int, SeedStatistics],
              offset: int) -> List[dict]:
    """Each seed's run `offset` octaves from its edge (the seeds with an edge and such a
    rate)."""
    found = [_at(runs_by_seed[s], st.edge + offset) for s, st in stats.items()
             if st.edge is not None]
    return [r for r in found if r is not None]


def _above_edge(runs_by_seed: Dict[int, List[dict]], stats: Dict[int, SeedStatistics],
                field: str) -> Summary:
    """Each seed's median `field` over its runs above the edge, then the median over seeds."""
    def value(r: dict) -> float:  # a non-finite run answers nothing right
        return 0.0 if r[field] is None else r[field]
    values = [statistics.median(value(r) for r in runs_by_seed[s] if r["octave"] > st.edge)
              for s, st in stats.items()
              if st.edge is not None and any(r["octave"] > st.edge for r in runs_by_seed[s])]
    return _median(values)


def _edge_row(runs_by_seed: Dict[int, List[dict]], stats: Dict[int, SeedStatistics]) -> Row:
    """What happens at the best rate, at the collapse edge and above it."""
    best = [_at(runs_by_seed[s], st.best) for s, st in stats.items()]
    edge = _per_seed(runs_by_seed, stats, 0)
    up = [r for s, st in stats.items() if st.edge is not None
          for r in runs_by_seed[s] if r["octave"] >= st.edge]
    collapsed = [r["max_logit"] for rs in runs_by_seed.values() for r in rs if r["collapsed"]]
    row = {"seeds_with_edge": len(edge),
           "best_loss": _median([r["final_loss"] for r in best]),
           "initial_loss": _median([runs[0]["initial_loss"] for runs in runs_by_seed.values()]),
           "max_logit_best": _median([r["max_logit"] for r in best]),
           "max_logit_edge": _median([r["max_logit"] for r in edge]),
           "collapsed_logits": [min(collapsed), max(collapsed)] if collapsed else None,
           "accuracy_edge": _median([r["final_accuracy"] for r in edge]),
           "accuracy_above": _above_edge(runs_by_seed, stats, "final_accuracy"),
           "entropy_edge": _median([r["final_entropy"] for r in edge]),
           "above": [sum(r["above_initial"] for r in up), len(up)],
           "lrs_share": _median(_collapsed_shares(runs_by_seed, stats))}
    for field, name in (("max_gain", "gain"), ("max_logit_before_cap", "before_cap")):
        if best[0][field] is not None:
            row[f"{name}_best"] = _median([r[field] for r in best])
            row[f"{name}_edge"] = _median([r[field] for r in edge])
    return {**row, **_below_row(_per_seed(runs_by_seed, stats, -1))}


def _collapsed_shares(runs_by_seed: Dict[int, List[dict]], stats: Dict[int, SeedStatistics]
                      ) -> List[float]:
    """Per seed with an edge: the share of its LR sensitivity over the whole grid that the
    runs from the edge up make, sum of min(l, l_0) - l* over them / over every rate."""
    shares = []
    for seed, st in stats.items():
        runs = runs_by_seed[seed]
        finite = [r["final_loss"] for r in runs if r["final_loss"] is not None]
        if st.edge is None or not finite:
            continue
        terms = [(r["octave"] >= st.edge, (r["initial_loss"] if r["final_loss"] is None else
                  min(r["final_loss"], r["initial_loss"])) - min(finite)) for r in runs]
        total = math.fsum(t for _, t in terms)
        if total > 0.0:
            shares.append(math.fsum(t for up, t in terms if up) / total)
    return shares


def _below_row(below: List[dict]) -> Row:
    """One octave below the edge: how much the largest logit grows from step 100 to step
    200, and how far the held-out loss climbs back from the lowest of its run."""
    row = {"below": len(below)}
    if below:
        row["growth_below"] = _median([r["largest"][-1] / r["largest"][len(r["largest"]) // 2 - 1]
                                       for r in below])
        row["climb_below"] = _median([r["held_out_loss"][-1] - min(r["held_out_loss"])
                                      for r in below])
        row["climbed_below"] = sum(r["held_out_loss"][-1] - min(r["held_out_loss"]) > BAND
                                   for r in below)
    return row


def _curve(runs: Sequence[dict], octaves: Sequence[int]) -> List[Row]:
    """Final held-out loss against the rate: median [interval] over the seeds per octave
    (a non-finite run ranks above every loss)."""
    out = []
    for k in octaves:
        s = _median([r["final_loss"] for r in runs if r["octave"] == k])
        out.append({"octave": k, "median": s.median, "low": s.low, "high": s.high})
    return out


def _growth(runs: Sequence[dict], octaves: Sequence[int]) -> List[Row]:
    """The largest |s| of each step's batch: median over the seeds, per rate."""
    out = []
    for k in octaves:
        series = [r["largest"] for r in runs if r["octave"] == k]
        steps = min(len(s) for s in series)
        out.append({"octave": k, "median": [statistics.median(float(s[t]) for s in series)
                                            for t in range(steps)]})
    return out


def _summary_row(key: tuple, stats: Dict[int, SeedStatistics], plan: Plan,
                 runs_by_seed: Dict[int, List[dict]]) -> Row:
    optimizer, arm, d_k = key
    return {"optimizer": optimizer, "arm": arm, "d_k": d_k, "low": plan.low, "high": plan.high,
            "edges": [st.edge for st in stats.values()],
            "collapsed_runs": {seed: sum(r["collapsed"] for r in runs)
                               for seed, runs in sorted(runs_by_seed.items())},
            **summaries(stats), **_edge_row(runs_by_seed, stats)}


def tables(records: Dict[str, dict], timing: dict) -> dict:
    """Return every table of the page from records {name: the records of one sweep}
    (names: "adam", "adam-all", "sgd", or any for the command line's own sweep) and the
    measured times of the committed records."""
    plans = {name: _plan(rec["settings"]) for name, rec in records.items()}
    runs = [r for rec in records.values() for r in rec["runs"]]
    groups: Dict[tuple, Dict[int, List[dict]]] = {}
    for r in runs:
        groups.setdefault((r["optimizer"], r["arm"], r["d_k"]), {}).setdefault(
            r["seed"], []).append(r)
    plan_of = {(p.optimizer, arm): p for p in plans.values() for arm in p.arms}
    rows, stats = [], {}
    for key, by in groups.items():
        plan = plan_of[key[0], key[1]]
        window = paper_window(plan)
        stats[key] = by_seed([r for rs in by.values() for r in rs],
                             (None,) if window is None else (None, window))[key]
        rows.append(_summary_row(key, stats[key], plan, by))
    order = {arm: i for i, arm in enumerate(ARMS)}
    rows.sort(key=lambda r: (r["optimizer"] != "adam", order[r["arm"]], r["d_k"]))
    return {"plans": {name: p._asdict() for name, p in plans.items()},
            "seeds": learning_tables.seed_range(next(iter(plans.values())).seeds),
            "timing": timing, "rows": rows,
            "paired": _paired_rows(stats),
            "offsets": _offset_rows(stats),
            "curves": [{"optimizer": o, "arm": a, "d_k": d,
                        "initial_loss": statistics.median(rs[0]["initial_loss"]
                                                          for rs in groups[o, a, d].values()),
                        "points": _curve([r for rs in groups[o, a, d].values() for r in rs],
                                         _octaves(plan_of[o, a]))}
                       for (o, a, d) in groups],
            "growth": _growth_rows(groups, stats)}


def _octaves(plan: Plan) -> List[int]:
    return list(range(plan.low, plan.high + 1))


def _paired_rows(stats: Dict[tuple, Dict[int, SeedStatistics]]) -> List[Row]:
    """Each arm against REFERENCE at the same optimizer and d_k, seed by seed."""
    out = []
    for (o, a, d), st in stats.items():
        reference = stats.get((o, REFERENCE, d))
        if a == REFERENCE or reference is None:
            continue
        windows = len(st[next(iter(st))].lr_sensitivity)
        out.append({"optimizer": o, "arm": a, "d_k": d,
                    "edge": paired_counts(reference, st, "edge"),
                    "band": paired_counts(reference, st, "band"),
                    "lr_sensitivity": [paired_counts(reference, st, "lr", w)
                                       for w in range(windows)
                                       if st[next(iter(st))].lr_sensitivity[w] is not None]})
    order = {arm: i for i, arm in enumerate(ARMS)}
    return sorted(out, key=lambda r: (r["optimizer"] != "adam", order[r["arm"]], r["d_k"]))


GUIDED = {"1/d_k": 1, "1": -1}  # the arms whose scale is 1/sqrt(d_k)'s times d_k^(-/+1/2)


def _offset_rows(stats: Dict[tuple, Dict[int, SeedStatistics]]) -> List[Row]:
    """1/d_k's and unscaled's edge minus 1/sqrt(d_k)'s, seed by seed, beside the identity's
    guide: +-log2(d_k)/4 octaves under Adam, +-log2(d_k)/2 under SGD."""
    out = []
    for (o, a, d), st in stats.items():
        if a not in GUIDED or (o, REFERENCE, d) not in stats:
            continue
        offsets = edge_offsets(stats[o, REFERENCE, d], st)
        defined = [v for v in offsets if v is not None]
        out.append({"optimizer": o, "arm": a, "d_k": d, "offsets": offsets,
                    "summary": _median(defined) if defined else None,
                    "defined": len(defined), "n": len(offsets),
                    "guide": GUIDED[a] * math.log2(d) / (4 if o == "adam" else 2)})
    return sorted(out, key=lambda r: (r["optimizer"] != "adam", r["arm"] != "1/d_k", r["d_k"]))


def _growth_rows(groups: dict, stats: dict) -> List[Row]:
    """The figure of logit growth: 1/sqrt(d_k) under Adam at FIGURE_D_K, at the four rates
    from two octaves below its median edge to one above."""
    key = ("adam", REFERENCE, FIGURE_D_K)
    if key not in stats:
        return []
    edge = summarise([s.edge for s in stats[key].values()]).median
    if edge is None:
        return []
    k = math.floor(edge)
    runs = [r for rs in groups[key].values() for r in rs]
    present = {r["octave"] for r in runs}
    return _growth(runs, [o for o in range(k - 2, k + 2) if o in present])


# ------------------------------------------------------------------ the tables

def _main_rows(data: dict, optimizer: str, arms: Sequence[str],
               d_ks: Optional[Sequence[int]] = None) -> Tuple[List[str], List[List[str]]]:
    header = ["arm", "d_k", "best rate, log2", "collapse edge, log2", "edge - best",
              "band, octaves", "LR sensitivity, grid", "LR sensitivity, paper's range"]
    rows = []
    for r in data["rows"]:
        if r["optimizer"] != optimizer or r["arm"] not in arms or \
                d_ks is not None and r["d_k"] not in d_ks:
            continue
        lrs = r["lr_sensitivity"]
        rows.append([NAMES[r["arm"]], str(r["d_k"]), _octaves_cell(r["best"]),
                     _octaves_cell(r["edge"], r["high"]),
                     _gap_cell(r["edge_above_best"]),
                     _octaves_cell(r["band"]) + (f" ({r['censored']} at an end)"
                                                 if r["censored"] else ""),
                     _number_cell(lrs[0]),
                     _number_cell(lrs[1]) if len(lrs) > 1 else "-"])
    return header, rows


def _edge_rows(data: dict, optimizer: str, arms: Sequence[str]
               ) -> Tuple[List[str], List[List[str]]]:
    header = ["arm", "d_k", "seeds with an edge", "largest logit, best rate",
              "largest logit, edge", "collapsed runs: largest logit", "entropy, edge",
              "accuracy, edge", "accuracy, above the edge", "from the edge up: ended above l_0"]
    rows = []
    for r in data["rows"]:
        if r["optimizer"] != optimizer or r["arm"] not in arms:
            continue
        edge = r["seeds_with_edge"] > 0
        extremes = r["collapsed_logits"]
        rows.append([NAMES[r["arm"]], str(r["d_k"]), str(r["seeds_with_edge"]),
                     _sig_cell(r["max_logit_best"], 3),
                     _sig_cell(r["max_logit_edge"], 3),
                     f"{extremes[0]:.3g} to {extremes[1]:.3g}" if extremes else "-",
                     _sig_cell(r["entropy_edge"], 2), _percent_cell(r["accuracy_edge"]),
                     _percent_cell(r["accuracy_above"]),
                     f"{r['above'][0]} of {r['above'][1]}" if edge else "-"])
    return header, rows


def _below_rows(data: dict, optimizer: str, arms: Sequence[str]
                ) -> Tuple[List[str], List[List[str]]]:
    header = ["arm", "d_k", "seeds", "largest logit, step 200 over step 100",
              "final held-out loss minus the run's lowest", "more than 0.1 nat"]
    rows = []
    for r in data["rows"]:
        if r["optimizer"] != optimizer or r["arm"] not in arms or not r["below"]:
            continue
        rows.append([NAMES[r["arm"]], str(r["d_k"]), str(r["below"]),
                     _sig_cell(r["growth_below"], 2), _sig_cell(r["climb_below"], 2),
                     f"{r['climbed_below']} of {r['below']}"])
    return header, rows


def _behind_rows(data: dict, optimizer: str, arms: Sequence[str]
                 ) -> Tuple[List[str], List[List[str]]]:
    header = ["arm", "d_k", "what", "at the best rate", "at the edge"]
    rows = []
    for r in data["rows"]:
        if r["optimizer"] != optimizer or r["arm"] not in arms:
            continue
        for name, what in (("gain", "largest gain"),
                           ("before_cap", "largest logit before the cap")):
            if f"{name}_best" in r:
                rows.append([NAMES[r["arm"]], str(r["d_k"]), what,
                             _sig_cell(r[f"{name}_best"], 3),
                             _sig_cell(r[f"{name}_edge"], 3)])
    return header, rows


def _paired_table(data: dict, optimizer: str, arms: Sequence[str] = tuple(ARMS)
                  ) -> Tuple[List[str], List[List[str]]]:
    header = ["arm", "d_k", "edge higher-lower-tied", "sign test p",
              "band wider-narrower-tied", "p", "LR sensitivity lower-higher-tied, grid", "p",
              "paper's range", "p"]
    rows = []
    for r in data["paired"]:
        if r["optimizer"] != optimizer or r["arm"] not in arms:
            continue
        cells = [NAMES[r["arm"]], str(r["d_k"]), _counts(r["edge"], "higher", "lower"),
                 _p(r["edge"]["p"]), _counts(r["band"], "higher", "lower"), _p(r["band"]["p"])]
        for c in r["lr_sensitivity"]:
            cells += [_counts(c, "lower", "higher"), _p(c["p"])]
        rows.append(cells + ["-", "-"] * (2 - len(r["lr_sensitivity"])))
    return header, rows


def _offset_table(data: dict, optimizer: str, arm: str = "1/d_k"
                  ) -> Tuple[List[str], List[List[str]]]:
    divisor = 4 if optimizer == "adam" else 2
    sign = "" if GUIDED[arm] > 0 else "-"
    header = ["d_k", f"{NAMES[arm]}'s edge - 1/sqrt(d_k)'s, octaves", "seeds with both edges",
              f"guide: {sign}log2(d_k) / {divisor}"]
    rows = [[str(r["d_k"]), "-" if r["summary"] is None else _octaves_cell(r["summary"]),
             f"{r['defined']} of {r['n']}", f"{r['guide']:g}"]
            for r in data["offsets"] if (r["optimizer"], r["arm"]) == (optimizer, arm)]
    return header, rows


SECTIONS = [  # (title, rows): the printed report, for each optimizer present
    ("per arm and d_k: median [interval] over the seeds", _main_rows),
    ("at the best rate and at the collapse edge", _edge_rows),
    ("one octave below the edge", _below_rows),
    ("behind the norm and the cap", _behind_rows),
]


def report(data: dict) -> List[str]:
    """Return the printed report: every table, as text."""
    out = []
    optimizers = [o for o in ("adam", "sgd") if any(r["optimizer"] == o for r in data["rows"])]
    for optimizer in optimizers:
        name = OPTIMIZER_NAMES[optimizer]
        for title, rows in SECTIONS:
            header, body = rows(data, optimizer, tuple(ARMS))
            if body:
                out += [f"== {name}: {title}", *learning_tables.text_table(header, body), ""]
        for title, table in (("each arm against 1/sqrt(d_k), seed by seed", _paired_table),
                             ("1/d_k's edge against the identity's guide", _offset_table),
                             ("unscaled's edge against the identity's guide",
                              lambda d, o: _offset_table(d, o, "1"))):
            header, body = table(data, optimizer)
            if body:
                out += [f"== {name}: {title}", *learning_tables.text_table(header, body), ""]
    return out[:-1]


# ------------------------------------------------------------------ the page

def blocks(data: dict) -> Dict[str, str]:
    """Return the generated Markdown tables of the pages, by marker name (stability-*)."""
    made = {"stability-table": _main_rows(data, "adam", DEFAULT_ARMS),
            "stability-readme": _main_rows(data, "adam", DEFAULT_ARMS, (FIGURE_D_K,)),
            "stability-edge": _edge_rows(data, "adam", DEFAULT_ARMS),
            "stability-below": _below_rows(data, "adam", DEFAULT_ARMS),
            "stability-behind": _behind_rows(data, "adam", DEFAULT_ARMS),
            "stability-paired": _paired_table(data, "adam", DEFAULT_ARMS),
            "stability-all-paired": _paired_table(data, "adam", EXTRA_ARMS),
            "stability-offset": _offset_table(data, "adam"),
            "stability-all-table": _main_rows(data, "adam", (REFERENCE,) + EXTRA_ARMS),
            "stability-all-edge": _edge_rows(data, "adam", EXTRA_ARMS),
            "stability-all-offset": _offset_table(data, "adam", "1"),
            "stability-sgd-table": _main_rows(data, "sgd", DEFAULT_ARMS),
            "stability-sgd-edge": _edge_rows(data, "sgd", DEFAULT_ARMS),
            "stability-sgd-paired": _paired_table(data, "sgd"),
            "stability-sgd-offset": _offset_table(data, "sgd")}
    return {name: "\n".join(learning_tables.markdown_table(*table))
            for name, table in made.items()}


def _joined(cells: Sequence[str]) -> str:
    return ", ".join(cells)


def _short(v: float) -> str:
    """Two significant digits, in prose: '910', '2400', '1.1e6'."""
    mantissa, _, exponent = f"{v:.2g}".partition("e")
    if not exponent or int(exponent) < 4:
        return f"{float(f'{v:.2g}'):g}"
    return f"{mantissa}e{int(exponent)}"


def _up(v: float) -> str:
    """v rounded up to one significant digit: a bound that holds ('at most 0.003')."""
    unit = Decimal(1).scaleb(math.floor(math.log10(v)))
    return str(Decimal(repr(v)).quantize(unit, rounding=ROUND_CEILING))


def _median_text(s: Summary) -> str:
    """A median as its table cell prints it (the decimals its interval supports)."""
    return _number_cell(s).split(" [")[0]


def _span(values: Sequence[float], text) -> str:
    """'low to high' of some values, each printed by text (one value: itself; none: -)."""
    if not values:
        return "-"
    low, high = text(min(values)), text(max(values))
    return low if low == high else f"{low} to {high}"


def _rows_of(data: dict, optimizer: str, arm: str) -> List[Row]:
    return [r for r in data["rows"] if (r["optimizer"], r["arm"]) == (optimizer, arm)]


def _summed(rows: Sequence[Row], field: str, first: str) -> str:
    """'29 of 30': a count over the d_k of the paired rows, out of the seeds compared."""
    def counts(r: Row) -> Row:
        return r[field][0] if field == "lr_sensitivity" else r[field]
    count = sum(counts(r)[first] for r in rows)
    total = sum(sum(v for k, v in counts(r).items() if k != "p") for r in rows)
    return f"{count} of {total}"


def _fewer(data: dict, optimizer: str, arm: str) -> str:
    """'28 of 30': the seeds on which the arm has fewer collapsed runs than REFERENCE."""
    fewer = total = 0
    for r in _rows_of(data, optimizer, arm):
        reference = next(x for x in _rows_of(data, optimizer, REFERENCE) if x["d_k"] == r["d_k"])
        seeds = [s for s in r["collapsed_runs"] if s in reference["collapsed_runs"]]
        fewer += sum(r["collapsed_runs"][s] < reference["collapsed_runs"][s] for s in seeds)
        total += len(seeds)
    return f"{fewer} of {total}"


def _arm_values(data: dict, optimizer: str, prefix: str) -> Dict[str, str]:
    """Per arm: its medians at each d_k (best, edge, band, LR sensitivity, ...)."""
    out = {}
    for arm, slug in SLUGS.items():
        rows = _rows_of(data, optimizer, arm)
        if not rows:
            continue
        high = rows[0]["high"]
        for field in ("best", "edge", "band"):
            out[f"{prefix}{field}.{slug}"] = _joined(edge_text(r[field].median, high)
                                                     for r in rows)
        out[f"{prefix}lrs.{slug}"] = _joined(_median_text(r["lr_sensitivity"][0]) for r in rows)
        if len(rows[0]["lr_sensitivity"]) > 1:
            out[f"{prefix}lrs-paper.{slug}"] = _joined(_median_text(r["lr_sensitivity"][1])
                                                       for r in rows)
        if rows[0]["lrs_share"].median is not None:
            out[f"{prefix}lrs-share.{slug}"] = _joined(f"{100 * r['lrs_share'].median:.0f}%"
                                                       for r in rows)
        out[f"{prefix}logit-best.{slug}"] = _joined(_short(r["max_logit_best"].median)
                                                    for r in rows)
        out[f"{prefix}lowest.{slug}"] = _joined(f"{r['best_loss'].median:.4f}" for r in rows)
        out[f"{prefix}l0.{slug}"] = _joined(f"{r['initial_loss'].median:.2f}" for r in rows)
        collapsed = [n for r in rows for n in r["collapsed_runs"].values()]
        out[f"{prefix}collapsed-runs.{slug}"] = (
            f"{sum(collapsed)} of {len(collapsed) * (high - rows[0]['low'] + 1)}")
        up = [r["above"] for r in rows]
        out[f"{prefix}above.{slug}"] = f"{sum(a for a, _ in up)} of {sum(n for _, n in up)}"
        if all(r["below"] for r in rows):
            out[f"{prefix}growth.{slug}"] = _joined(f"{r['growth_below'].median:.2g}"
                                                    for r in rows)
            out[f"{prefix}climbed.{slug}"] = (f"{sum(r['climbed_below'] for r in rows)} of "
                                              f"{sum(r['below'] for r in rows)}")
        for name in ("gain", "before_cap"):
            if f"{name}_edge" in rows[0]:
                out[f"{prefix}{name.replace('_', '-')}.best.{slug}"] = _joined(
                    _short(r[name + "_best"].median) for r in rows)
                out[f"{prefix}{name.replace('_', '-')}.edge.{slug}"] = _joined(
                    _short(r[name + "_edge"].median) for r in rows)
    return out


def _paired_values(data: dict, optimizer: str, prefix: str) -> Dict[str, str]:
    out = {}
    for arm, slug in SLUGS.items():
        rows = [r for r in data["paired"] if (r["optimizer"], r["arm"]) == (optimizer, arm)]
        if rows:
            out[f"{prefix}edge-higher.{slug}"] = _summed(rows, "edge", "higher")
            out[f"{prefix}edge-lower.{slug}"] = _summed(rows, "edge", "lower")
            out[f"{prefix}band-wider.{slug}"] = _summed(rows, "band", "higher")
            out[f"{prefix}band-narrower.{slug}"] = _summed(rows, "band", "lower")
            out[f"{prefix}fewer-collapsed.{slug}"] = _fewer(data, optimizer, arm)
            out[f"{prefix}lrs-lower.{slug}"] = _summed(rows, "lr_sensitivity", "lower")
            out[f"{prefix}lrs-higher.{slug}"] = _summed(rows, "lr_sensitivity", "higher")
    for arm, suffix in (("1/d_k", ""), ("1", ".one")):
        offsets = [r for r in data["offsets"] if (r["optimizer"], r["arm"]) == (optimizer, arm)]
        if offsets and all(r["summary"] is not None for r in offsets):
            out[f"{prefix}offset{suffix}"] = _joined(octave_text(r["summary"].median)
                                                     for r in offsets)
            out[f"{prefix}guide{suffix}"] = _joined(f"{r['guide']:g}" for r in offsets)
    return out


def _range_values(data: dict, optimizer: str, arms: Sequence[str], prefix: str
                  ) -> Dict[str, str]:
    """Ranges over the arms that do not cap (their logits can grow) and over all."""
    rows = [r for r in data["rows"] if r["optimizer"] == optimizer and r["arm"] in arms]
    if not rows:
        return {}
    free = [r for r in rows if ARMS[r["arm"]].cap is None and r["seeds_with_edge"]]
    edges = [e for r in rows for e in r["edges"]]
    inside = sum(e is not None and e > r["low"] for r in rows for e in r["edges"])
    out = {f"{prefix}edges-inside": f"{inside} of {len(edges)}",
           f"{prefix}gap.range": _span([r["edge_above_best"].median for r in rows
                                        if r["edge_above_best"].median is not None],
                                       octave_text),
           f"{prefix}best-loss.range": _span([r["best_loss"].median for r in rows],
                                             lambda v: f"{v:.4f}")}
    if free:
        out.update({
            f"{prefix}logit-best.range": _span([r["max_logit_best"].median for r in free],
                                               _short),
            f"{prefix}logit-edge.range": _span([r["max_logit_edge"].median for r in free],
                                               _short),
            f"{prefix}collapsed.range": _span([v for r in free for v in r["collapsed_logits"]],
                                              _short),
            f"{prefix}entropy-edge.max": _up(max(r["entropy_edge"].median for r in free)),
            f"{prefix}accuracy-above.range": _span([r["accuracy_above"].median for r in free],
                                                   lambda v: f"{100 * v:.0f}%")})
    return out


def values(data: dict) -> Dict[str, str]:
    """Return the inline numbers of the pages, by marker name (stability.*)."""
    out = {"stability.seeds": data["seeds"],
           "stability.paper-range": f"{PAPER_RANGE[0]:g} to {PAPER_RANGE[1]:g}",
           "stability.floor": f"{math.log1p((ITEMS - 1) * math.exp(-BETA)):.4f}",
           "stability.e-50": f"{math.exp(-50):.1g}"}
    for optimizer, prefix in (("adam", "stability."), ("sgd", "stability.sgd.")):
        out.update(_arm_values(data, optimizer, prefix))  # each: nothing without its rows
        out.update(_paired_values(data, optimizer, prefix))
        out.update(_range_values(data, optimizer, DEFAULT_ARMS, prefix))
    out.update(_range_values(data, "adam", EXTRA_ARMS, "stability.all."))
    for name, timing in sorted(data["timing"].items()):
        slug = name.split(".")[0].replace("_", "-")
        out[f"{slug}.time"] = (f"{timing['wall_seconds'] / 60:.0f} min of wall time and "
                               f"{timing['cpu_seconds'] / 60:.0f} min of CPU time with "
                               f"--jobs {timing['jobs']} on {timing['cpus']} cores "
                               f"(load average {timing['load_average'][0]:g} at the start, "
                               f"{timing['load_average'][-1]:g} at the end; Python "
                               f"{timing['python']}, {timing['date']})")
        out[f"{slug}.free"] = f"{timing['cpu_seconds'] / timing['jobs'] / 60:.0f} min"
    return out


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
