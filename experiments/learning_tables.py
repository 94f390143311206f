"""The tables of the training miniature: from its records (learning_measure.measure) to
medians with intervals, paired counts and sign tests, then to text and Markdown.

The sentences around these tables live in docs/experiments.md, docs/interview.md and
README.md; this file gives them numbers (`values`, through <!--v:NAME--> markers) and
tables (`blocks`, through <!--begin:NAME--> markers), and prints the same tables as text
(`report`).

Public API (`__all__`):
    tables(results)              every table, from the records of one command
    sweep_summary(rates)         the grids of a stored sweep, and which were widened
    row_of(table, optimizer, scale, d_k)    one arm's row of the steps table
    report(data)                 the printed report, as lines
    blocks(data), values(data)   the Markdown blocks and inline values of the docs
    markdown_table(header, rows), text_table(header, rows)   one table, as lines
    fmt(median, low, high), fmt_rate(lr), steps_text(v), seed_range(seeds)   how numbers print
    NAMES, SLUGS                 the optimizers' printed names; the scales' marker names

>>> fmt(8.49, 4.89, 18.5)
'8 [4, 19]'

python3 experiments/learning.py --help runs the experiment.
"""

import math  # floor, log10, inf
import statistics  # median: the least a median over misses can be
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal  # interval ends rounded outward
from typing import Dict, List, Optional, Sequence, Tuple
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments.learning_measure import (POINTER_SCALES, LATE, LONG, MISS, Logits, Diagnostics,
                                          coverage_text, paired, rate, sign_test, summarise)
from experiments.learning_model import MAX_STEPS, OPTIMIZERS, PER_QUESTION, SCALES, TARGET
from stats import median_interval, scale_factor

__all__ = ["tables", "sweep_summary", "row_of", "report", "blocks", "values", "markdown_table",
           "text_table", "fmt", "fmt_rate", "steps_text", "seed_range", "NAMES", "SLUGS"]

Row = dict
NAMES = {"sgd": "SGD", "adam": "Adam", PER_QUESTION: "Adam, per question"}
SLUGS = {"1/sqrt(d_k)": "sqrt", "1/d_k": "inv", "1/ln(d_k)": "ln", "1": "one"}  # marker names
REFERENCE = SCALES[0]  # every scale is compared with the paper's, seed by seed


# ------------------------------------------------------------------ the numbers

def _groups(records: Sequence[dict], keys: Tuple[str, ...] = ("optimizer", "scale", "d_k")
            ) -> Dict[tuple, List[dict]]:
    """Records by key, in the order they were run."""
    groups: Dict[tuple, List[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return groups


def _steps(records: Sequence[dict]) -> List[Optional[int]]:
    return [r["steps"] for r in records]


def _rank(v: Optional[float]) -> float:
    return math.inf if v is None else v


def _at_least(steps: Sequence[Optional[int]]) -> float:
    """The least the median can be: each miss counted as MISS, the fewest steps it stands
    for.  It is the median itself when neither middle value is a miss, and MISS when both
    are."""
    return statistics.median([MISS if v is None else v for v in steps])


def _hull(low: Optional[float], high: Optional[float],
          medians: Sequence[Optional[float]]) -> List[Optional[float]]:
    """The published interval: the hull of the order-statistic interval over seeds and of
    the medians under the perturbations of the initial weights (None: a miss)."""
    ranked = [_rank(v) for v in [low, high, *medians]]
    return [None if v == math.inf else v for v in (min(ranked), max(ranked))]


def _arm_row(arm: tuple, records: List[dict], perturbed: List[dict], naive: dict) -> Row:
    """One arm of the steps table, with its rounding and its other order of summation."""
    s = summarise(_steps(records))
    again = [_steps(p[arm]) for p in perturbed]
    medians = [summarise(steps).median for steps in again]
    per_seed = list(zip(_steps(records), *again))
    row = {"optimizer": arm[0], "scale": arm[1], "d_k": arm[2], "lr": records[0]["lr"],
           "steps": _steps(records), **s._asdict(), "at_least": _at_least(_steps(records)),
           "perturbed_medians": medians,
           "perturbed_at_least": [_at_least(steps) for steps in again],
           "perturbed_misses": sum(steps.count(None) for steps in again),
           "perturbed_runs": sum(map(len, again)),
           "seeds_changed": sum(len(set(steps)) > 1 for steps in per_seed) if again else None,
           "runs_moved": [_moved(steps, _steps(records)) for steps in again],
           "published": _hull(s.low, s.high, medians)}
    if arm in naive:
        steps = _steps(naive[arm])
        row["naive"] = {**summarise(steps)._asdict(), "steps": steps, "seeds_changed": sum(
            a != b for a, b in zip(steps, row["steps"]))}
    return row


FAR = 10  # steps: a perturbed run that moves this far (or across the cap) moves far


def _moved(steps: Sequence[Optional[int]], reference: Sequence[Optional[int]]) -> List[int]:
    """[how many runs differ from the reference's, how many of them by FAR steps or more or
    across the cap], seed by seed."""
    moved = [(a, b) for a, b in zip(steps, reference) if a != b]
    return [len(moved), sum(None in pair or abs(pair[0] - pair[1]) >= FAR for pair in moved)]


def tables(results: dict) -> dict:
    """Return every table of the report and the docs, from the records of measure()."""
    perturbed = [_groups(records) for _, records in sorted(results["perturbed"].items())]
    naive = _groups(results.get("naive", []))
    table = [_arm_row(arm, records, perturbed, naive)
             for arm, records in _groups(results["runs"]).items()]
    return {"settings": results["settings"], "table": table, "paired": _paired_table(table),
            "diagnostics": _diagnostics_table(results), "pointer": _pointer_table(results),
            "transfer": _transfer_table(results, table),
            "logits": _logits_table(results["logits"]),
            "fixed_logits": _logits_table(_fixed_rate_logits(results)),
            "per_question": _per_question_table(results, table), "long": _long_table(results)}


def sweep_summary(rates: dict) -> Row:
    """Return how many grids a stored sweep (tuned_rates.json) holds, the keys of those
    widened beyond their first 2 x (rates either side) + 1 rates, and, for each arm of the
    intervention, the top of the grid the identity would have given it (Adam's carry)."""
    rule = rates["rule"]
    first = 2 * rule["rates either side"] + 1
    tops = {}
    for key in rates["arms"]:
        optimizer, _, scale, d_k = key.split(" ")
        if optimizer == PER_QUESTION:
            ratio = scale_factor("1/sqrt(d_k)", int(d_k)) / scale_factor(scale, int(d_k))
            k = round(2 * math.log2(rule["guess, 1/sqrt(d_k)"][optimizer])) + round(
                math.log2(ratio) * rule["half-octaves per octave of c/c'"]["adam"])
            tops[key] = rate(k + rule["rates either side"])
    return {"grids": len(rates["arms"]), "identity_tops": tops,
            "widened": [key for key, arm in rates["arms"].items() if len(arm["grid"]) > first]}


def row_of(table: Sequence[Row], optimizer: str, scale: str, d_k: int) -> Optional[Row]:
    """Return the row of one arm, or None."""
    return next((r for r in table if (r["optimizer"], r["scale"], r["d_k"]) ==
                 (optimizer, scale, d_k)), None)


def _counts(reference: Sequence[Optional[int]], other: Sequence[Optional[int]]) -> dict:
    counts = paired(reference, other)
    return {**counts, "p": sign_test(counts)}


def _paired_table(table: Sequence[Row]) -> List[Row]:
    """Each scale against 1/sqrt(d_k), seed by seed, at each arm's own rate."""
    out = []
    for r in table:
        reference = row_of(table, r["optimizer"], REFERENCE, r["d_k"])
        if reference is not None and r["scale"] != REFERENCE:
            out.append({"optimizer": r["optimizer"], "scale": r["scale"], "d_k": r["d_k"],
                        **_counts(reference["steps"], r["steps"])})
    return out


def _median(values: Sequence[float]) -> List[float]:
    m = median_interval(values)
    return [m.median, m.low, m.high]


def _diagnostics_table(results: dict) -> List[Row]:
    groups = _groups(results["diagnostics"], ("scale", "d_k"))
    order = sorted(groups, key=lambda key: (key[1], SCALES.index(key[0])))
    return [{"readout": results["settings"]["readout"], "scale": s, "d_k": d_k,
             "n": len(groups[s, d_k]),
             **{f: _median([r[f] for r in groups[s, d_k]]) for f in Diagnostics._fields}}
            for s, d_k in order]


def _ratio(scaled: Sequence[Optional[int]], unscaled: Sequence[Optional[int]]) -> dict:
    """unscaled / scaled steps, seed by seed (a miss of the unscaled arm ranks above all)."""
    ratios = [None if u is None else u / s for s, u in zip(scaled, unscaled) if s is not None]
    return summarise(ratios)._asdict()


def _versus(groups: dict, optimizer: str, d_k: int) -> dict:
    """The unscaled arm against 1/sqrt(d_k): the ratio of steps and the paired counts."""
    scaled, unscaled = (_steps(groups[optimizer, s, d_k]) for s in POINTER_SCALES)
    return {"ratio": _ratio(scaled, unscaled), **_counts(scaled, unscaled)}


def _pointer_table(results: dict) -> List[Row]:
    fixed, pointer = _groups(results["runs"]), _groups(results["pointer"])
    return [{"d_k": d_k, "fixed": _versus(fixed, "sgd", d_k),
             "pointer": _versus(pointer, "sgd", d_k)}
            for d_k in results["settings"]["d_ks"] if results["pointer"]]


def _summary(records: Sequence[dict]) -> Row:
    s = summarise(_steps(records))
    return {"lr": records[0]["lr"], "median": s.median, "low": s.low, "high": s.high,
            "misses": s.misses, "n": s.n, "at_least": _at_least(_steps(records)),
            "steps": _steps(records)}


def _transfer_table(results: dict, table: Sequence[Row]) -> List[Row]:
    """Each arm at its tuned rate, at the smallest d_k's rate carried unchanged, and (SGD,
    1/d_k) at muP's rule, that rate times d_k / d_k[0]."""
    mup, out = _groups(results.get("mup", [])), []
    for arm, records in _groups(results["transfer"]).items():
        out.append({"optimizer": arm[0], "scale": arm[1], "d_k": arm[2],
                    "tuned": _summary([r for r in results["runs"] if (
                        r["optimizer"], r["scale"], r["d_k"]) == arm]),
                    "carried": _summary(records),
                    "mup": _summary(mup[arm]) if arm in mup else None})
    return out


def _fixed_rate_logits(results: dict) -> List[dict]:
    """The logits at the first TARGET at one rate for every d_k, the smallest d_k's: its
    own runs there, the transfer runs elsewhere."""
    first = results["settings"]["d_ks"][0]
    return [r for r in results["logits"] if r["d_k"] == first and r["at"] == "target"
            and results.get("transfer_logits")] + results.get("transfer_logits", [])


def _logits_table(records: Sequence[dict]) -> List[Row]:
    groups = _groups(records, ("optimizer", "scale", "d_k", "at"))
    order = sorted(groups, key=lambda k: (OPTIMIZERS.index(k[0]), SCALES.index(k[1]), k[2],
                                          k[3] == "late"))
    return [{"optimizer": o, "scale": s, "d_k": d_k, "at": at, "n": len(groups[o, s, d_k, at]),
             **{f: _median([r[f] for r in groups[o, s, d_k, at]]) for f in Logits._fields}}
            for o, s, d_k, at in order]


def _per_question_table(results: dict, table: Sequence[Row]) -> List[Row]:
    """The intervention beside plain Adam: steps, and unscaled / scaled seed by seed."""
    groups, runs, out = _groups(results.get("per_question", [])), _groups(results["runs"]), []
    for (o, s, d_k), records in groups.items():
        row = {"scale": s, "d_k": d_k, "intervention": _summary(records),
               "adam": _summary(runs["adam", s, d_k])}
        if s == POINTER_SCALES[1] and (o, POINTER_SCALES[0], d_k) in groups:
            row["ratio"], row["adam_ratio"] = _versus(groups, o, d_k), _versus(runs, "adam", d_k)
        out.append(row)
    return out


def _long_table(results: dict) -> List[Row]:
    """The misses re-run with the cap LONG, with the same seed's perturbed runs (cap
    MAX_STEPS) beside them."""
    perturbed = [_groups(records) for _, records in sorted(results["perturbed"].items())]
    return [{"optimizer": arm[0], "scale": arm[1], "d_k": arm[2], "seeds": [
        r["seed"] for r in records], "steps": _steps(records), "perturbed": [
        [next(r["steps"] for r in p[arm] if r["seed"] == seed) for p in perturbed]
        for seed in (r["seed"] for r in records)]}
        for arm, records in _groups(results["long"]).items()]


# ------------------------------------------------------------------ how numbers print

def steps_text(v: Optional[float], cap: int = MAX_STEPS) -> str:
    """Return steps as printed: '7', '7.5', or '>300' for a miss.

    >>> steps_text(7.0), steps_text(7.5), steps_text(None)
    ('7', '7.5', '>300')
    """
    return f">{cap}" if v is None else f"{v:g}"


def _median_text(median: Optional[float], at_least: float) -> str:
    """A median as printed: '7.5'; '>300' when both middle values are misses; '≥251.5'
    when one is, since a miss stands for at least MISS steps."""
    if median is None and at_least < MISS:
        return f"≥{at_least:g}"
    return steps_text(median)


def _decimals(values: Sequence[Optional[float]]) -> int:
    """The decimals the interval's width supports (its first digit, or first two below 3),
    and, for positive values, enough to show the smallest one."""
    finite = [abs(v) for v in values if v is not None]
    width = values[2] - values[1] if None not in values else 0.0
    digit = math.floor(math.log10(width)) if width > 0 else 0
    positive = all(v is None or v > 0 for v in values)
    return max([0, -digit + (width < 3 * 10.0 ** digit) if width > 0 else
                1 - math.floor(math.log10(max(finite)))]
               + [-math.floor(math.log10(v)) for v in finite if positive and v < 1])


def _rounded(v: Optional[float], decimals: int, rounding: Optional[str], unit: str) -> str:
    if v is None:
        return "inf"
    if rounding is None:
        text = f"{v:.{decimals}f}"
    else:  # from the shortest repr, so that 0.7 is not taken for 0.69999...
        text = str(Decimal(repr(v)).quantize(Decimal(1).scaleb(-decimals), rounding=rounding))
    return (text[1:] if text.startswith("-") and float(text) == 0 else text) + unit


def fmt(median: float, low: Optional[float], high: Optional[float],
        percent: bool = False) -> str:
    """Return 'median [low, high]' with the decimals the interval supports, the median
    rounded to nearest and the ends outward (None: a miss, 'inf').

    >>> fmt(8.49, 4.89, 18.5), fmt(0.2, 0.1, None), fmt(0.5, 0.25, 0.75, percent=True)
    ('8 [4, 19]', '0.20 [0.10, inf]', '50% [25%, 75%]')
    """
    k, unit = (100.0, "%") if percent else (1.0, "")
    values = [None if v is None else v * k for v in (median, low, high)]
    decimals = _decimals(values)
    return (f"{_rounded(values[0], decimals, None, unit)} "
            f"[{_rounded(values[1], decimals, ROUND_FLOOR, unit)}, "
            f"{_rounded(values[2], decimals, ROUND_CEILING, unit)}]")


def _cell(row: Row) -> str:
    """median [published interval], * marking a rounding-sensitive arm."""
    low, high = row["published"]
    return (f"{_median_text(row['median'], row['at_least'])} [{steps_text(low)}, "
            f"{steps_text(high)}]" + ("*" if row["seeds_changed"] else ""))


def _steps_cell(s: Optional[Row]) -> str:
    if s is None:
        return "-"
    return (f"{_median_text(s['median'], s['at_least'])} [{steps_text(s['low'])}, "
            f"{steps_text(s['high'])}]")


def _rate_cell(s: Optional[Row]) -> str:
    return "-" if s is None else f"{fmt_rate(s['lr'])}: {_steps_cell(s)}"


def seed_range(seeds: Sequence[int]) -> str:
    """Return '100-109' for a run of seeds, else the seeds listed."""
    contiguous = list(seeds) == list(range(seeds[0], seeds[0] + len(seeds)))
    return f"{seeds[0]}-{seeds[-1]}" if contiguous and len(seeds) > 1 else ", ".join(
        map(str, seeds))


def fmt_rate(lr: float) -> str:
    """Return a learning rate to four significant digits."""
    return f"{lr:.4g}"


def _p(p: float) -> str:
    return f"{p:.2g}" if p < 0.01 else f"{p:.2f}"


def _at(at: str) -> str:
    return f"first {TARGET:.0%}" if at == "target" else f"step {LATE}"


def _long_steps(steps: Sequence[Optional[int]]) -> List[str]:
    return [steps_text(s, LONG) for s in steps]


# ------------------------------------------------------------------ the rows of each table

def _steps_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    d_ks = data["settings"]["d_ks"]
    rows = [[NAMES[o], s] + [_cell(row_of(data["table"], o, s, d)) for d in d_ks]
            for o in OPTIMIZERS for s in SCALES
            if all(row_of(data["table"], o, s, d) for d in d_ks)]
    return ["optimizer", "scale"] + [f"d_k = {d}" for d in d_ks], rows


def _arm_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    return (["optimizer", "scale", "d_k", "lr", "median [interval]", "per seed"],
            [[NAMES[r["optimizer"]], r["scale"], str(r["d_k"]), fmt_rate(r["lr"]), _cell(r),
              " ".join(map(steps_text, r["steps"]))] for r in data["table"]])


def _full_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    k = len(data["table"][0]["perturbed_medians"]) if data["table"] else 0
    header = ["optimizer", "scale", "d_k", "rate", "median", "over seeds", f"median, k = 0..{k}",
              "seeds changed", f"misses, k = 1..{k}", "published", "left-to-right sums"]
    rows = []
    for r in data["table"]:
        naive = r.get("naive")
        medians = zip([r["median"]] + r["perturbed_medians"],
                      [r["at_least"]] + r["perturbed_at_least"])
        rows.append([NAMES[r["optimizer"]], r["scale"], str(r["d_k"]), fmt_rate(r["lr"]),
                     _median_text(r["median"], r["at_least"]), f"[{steps_text(r['low'])}, "
                     f"{steps_text(r['high'])}]", " ".join(_median_text(*m) for m in medians),
                     "-" if r["seeds_changed"] is None else f"{r['seeds_changed']} of {r['n']}",
                     f"{r['perturbed_misses']} of {r['perturbed_runs']}",
                     _cell(r).rstrip("*"), "-" if naive is None else
                     f"{steps_text(naive['median'])}, {naive['seeds_changed']} changed"])
    return header, rows


def _paired_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    return (["optimizer", "scale", "d_k", "slower", "faster", "tied", "both missed",
             "sign test p"],
            [[NAMES[p["optimizer"]], p["scale"], str(p["d_k"])] + _count_cells(p)
             for p in data["paired"]])


def _diagnostics_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    return (["d_k", "scale", "std of S", "median max p_j", "median ‖dL/dS‖",
             "‖dL/dM‖, top 10%"],
            [[str(r["d_k"]), r["scale"], fmt(*r["logit_std"]), fmt(*r["largest_weight"]),
              fmt(*r["gradient"]), fmt(*r["tail_share"], percent=True)]
             for r in data["diagnostics"]])


def _ratio_text(ratio: Row) -> str:
    return fmt(ratio["median"], ratio["low"], ratio["high"])


def _pointer_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    header = ["d_k", "readout", "ratio of steps", "slower", "faster", "tied",
              "both missed", "sign test p"]
    return header, [[str(p["d_k"]), readout, _ratio_text(p[readout]["ratio"])]
                    + _count_cells(p[readout]) for p in data["pointer"]
                    for readout in ("fixed", "pointer")]


def _count_cells(counts: Row) -> List[str]:
    return [str(counts[k]) for k in ("slower", "faster", "tied", "both missed")] + [
        _p(counts["p"])]


def _transfer_rows(data: dict, scales: Sequence[str] = SCALES
                   ) -> Tuple[List[str], List[List[str]]]:
    d_k0 = data["settings"]["d_ks"][0]
    header = ["optimizer", "scale", "d_k", "tuned here", f"d_k = {d_k0}'s, unchanged",
              "muP's rule"]
    rows = [[NAMES[t["optimizer"]], t["scale"], str(t["d_k"]), _rate_cell(t["tuned"]),
             _rate_cell(t["carried"]), _rate_cell(_mup(t))]
            for t in data["transfer"] if t["scale"] in scales]
    return header, rows


def _mup(t: Row) -> Optional[Row]:
    """muP's rate for W_Q and W_K, input weights here: SGD d_k[0]'s times d_k / d_k[0]
    (measured, t["mup"]); Adam d_k[0]'s unchanged (the carried runs)."""
    if t["scale"] != "1/d_k":
        return None
    return t["mup"] if t["optimizer"] == "sgd" else t["carried"]


def _logits_rows(rows: Sequence[Row]) -> Tuple[List[str], List[List[str]]]:
    header = ["optimizer", "scale", "d_k", "at", "seeds", "q · k*", "c q · k*",
              "std of the others", "cos(q, k*)"]
    return header, [[NAMES[r["optimizer"]], r["scale"], str(r["d_k"]), _at(r["at"]),
                     str(r["n"])] + [fmt(*r[f]) for f in Logits._fields] for r in rows]


def _per_question_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    header = ["scale", "d_k", "Adam: rate, steps", "per question: rate, steps",
              "unscaled / scaled, Adam", "unscaled / scaled, per question"]
    return header, [[r["scale"], str(r["d_k"]), _rate_cell(r["adam"]),
                     _rate_cell(r["intervention"]),
                     _ratio_text(r["adam_ratio"]["ratio"]) if "ratio" in r else "-",
                     _ratio_text(r["ratio"]["ratio"]) if "ratio" in r else "-"]
                    for r in data["per_question"]]


def _missed_cell(s: Row) -> str:
    return f"{_rate_cell(s)}, {s['misses']} of {s['n']} missed"


def _backward_rows(findings: dict) -> Tuple[List[str], List[List[str]]]:
    """Plain and per-question Adam on the fresh seeds, with each backward pass."""
    header = ["backward", "scale", "d_k", "Adam: rate, steps", "per question: rate, steps"]
    return header, [[name, r["scale"], str(r["d_k"]), _missed_cell(r["adam"]),
                     _missed_cell(r["intervention"])]
                    for name in ("library", "textbook")
                    for r in findings[name]["per_question"]]


def _long_rows(data: dict) -> Tuple[List[str], List[List[str]]]:
    header = ["optimizer", "scale", "d_k", "seed", f"steps, cap {LONG}",
              f"k = 1..7, cap {MAX_STEPS}"]
    return header, [[NAMES[r["optimizer"]], r["scale"], str(r["d_k"]), str(seed),
                     _long_steps([steps])[0], " ".join(map(steps_text, perturbed))]
                    for r in data["long"]
                    for seed, steps, perturbed in zip(r["seeds"], r["steps"], r["perturbed"])]


# ------------------------------------------------------------------ text and Markdown

def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    """Return the lines of a Markdown table.

    >>> markdown_table(["a", "b"], [["1", "2"]])
    ['| a | b |', '|---|---|', '| 1 | 2 |']
    """
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(row) + " |" for row in rows]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    """Return the lines of a text table: columns padded to their widest entry, two spaces
    apart."""
    widths = [max(len(c) for c in column) for column in zip(header, *rows)]
    return ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
            for line in [list(header)] + [list(r) for r in rows]]


SECTIONS = [  # (title, rows, shown when): the printed report, in order
    ("steps to 90%", _arm_rows, "table"),
    ("rounding and summation", _full_rows, "checked"),
    ("paired seeds", _paired_rows, "paired"),
    ("at initialisation", _diagnostics_rows, "diagnostics"),
    ("pointer-loss control", _pointer_rows, "pointer"),
    ("rate transfer", _transfer_rows, "transfer"),
    ("logits, re-tuned rates", lambda d: _logits_rows(d["logits"]), "logits"),
    ("logits, one rate", lambda d: _logits_rows(d["fixed_logits"]), "fixed_logits"),
    ("per-question Adam", _per_question_rows, "per_question"),
    ("misses run again", _long_rows, "long"),
]


def report(data: dict) -> List[str]:
    """Return the printed report: a line of settings, then every table that has rows
    (docs/experiments.md says what each one is)."""
    s = data["settings"]
    lines = [f"d_model {s['d_model']}, m {s['items']}, batch {s['batch']}, beta {s['beta']:g}, "
             f"{s['readout']} readout; seeds {seed_range(s['seeds'])}; cap {s['max_steps']}; "
             "median [interval]"]
    checked = data["table"] and (data["table"][0]["seeds_changed"] is not None
                                 or "naive" in data["table"][0])
    for title, rows, key in SECTIONS:
        if data.get(key, checked):
            lines += ["", f"== {title}"] + text_table(*rows(data))
    return lines


def blocks(data: dict) -> Dict[str, str]:
    """Return the generated Markdown tables, by marker name."""
    tables = {"learning-table": _steps_rows(data), "learning-full": _full_rows(data),
              "learning-paired": _paired_rows(data),
              "learning-diagnostics": _diagnostics_rows(data),
              "learning-pointer": _pointer_rows(data), "learning-transfer": _transfer_rows(data),
              "learning-transfer-short": _transfer_rows(data, POINTER_SCALES[:1] + ("1/d_k",)),
              "learning-logits": _logits_rows(data["logits"]),
              "learning-fixed-logits": _logits_rows(data["fixed_logits"]),
              "learning-per-question": _per_question_rows(data),
              "learning-long": _long_rows(data),
              "learning-fresh-pointer": _pointer_rows(data["findings"]["pointer"]),
              "learning-backward": _backward_rows(data["findings"])}
    return {name: "\n".join(markdown_table(*rows)) for name, rows in tables.items()}


def _joined(cells: Sequence[str]) -> str:
    return ", ".join(cells)


def _arm_values(data: dict) -> Dict[str, str]:
    """learning.steps.OPTIMIZER.SCALE.D_K (a cell of the steps table) and
    learning.lr.OPTIMIZER.SCALE (the tuned rates, every d_k joined)."""
    out = {}
    for r in data["table"]:
        out[f"learning.steps.{r['optimizer']}.{SLUGS[r['scale']]}.{r['d_k']}"] = _cell(r)
    for (o, s), rows in _groups(data["table"], ("optimizer", "scale")).items():
        out[f"learning.lr.{o}.{SLUGS[s]}"] = _joined([fmt_rate(r["lr"]) for r in rows])
    return out


def _logit_values(data: dict) -> Dict[str, str]:
    """learning.logit.OPTIMIZER.SCALE.AT.FIELD (rate re-tuned per d_k) and
    learning.fixed-logit.OPTIMIZER.SCALE.FIELD (one rate): every d_k, joined."""
    out: Dict[str, str] = {}
    for key, rows in (("logit", data["logits"]), ("fixed-logit", data["fixed_logits"])):
        for (o, s, at), group in _groups(rows, ("optimizer", "scale", "at")).items():
            name = f"learning.{key}.{o}.{SLUGS[s]}" + (f".{at}" if key == "logit" else "")
            for f in Logits._fields:
                out[f"{name}.{f}"] = _joined([fmt(*r[f]) for r in group])
    return out


def _diagnostic_values(data: dict) -> Dict[str, str]:
    return {f"learning.diag.{f}.{SLUGS[r['scale']]}.{r['d_k']}": fmt(
        *r[f], percent=f == "tail_share") for r in data["diagnostics"]
        for f in Diagnostics._fields}


def _paired_values(data: dict) -> Dict[str, str]:
    """learning.paired.OPTIMIZER.SCALE.D_K ("10 of 10 slower, 0 faster, 0 tied (sign test
    p = 0.002)") and learning.pointer.READOUT, summed over d_k without a p-value: the d_k
    share their seeds' tasks, so their pairs are not independent."""
    out = {f"learning.paired.{p['optimizer']}.{SLUGS[p['scale']]}.{p['d_k']}": _count_text(p)
           for p in data["paired"]}
    for readout, text in _pointer_totals(data).items():
        out[f"learning.pointer.{readout}"] = text
    return out


def _count_text(counts: Row) -> str:
    """'8 of 10 slower, 0 faster, 2 tied', and the sign test's p where counts has one."""
    n = sum(counts[k] for k in ("slower", "faster", "tied", "both missed"))
    text = f"{counts['slower']} of {n} slower, {counts['faster']} faster, {counts['tied']} tied"
    text += f", {counts['both missed']} both missed" if counts["both missed"] else ""
    return text + (f" (sign test p = {_p(counts['p'])})" if "p" in counts else "")


def _pointer_totals(data: dict) -> Dict[str, str]:
    """The pointer control's pairs summed over d_k (no p-value: the d_k share their seeds'
    tasks, so their pairs are not independent), by readout."""
    out = {}
    for readout in ("fixed", "pointer"):
        rows = [p[readout] for p in data["pointer"]]
        out[readout] = _count_text({k: sum(c[k] for c in rows)
                                    for k in ("slower", "faster", "tied", "both missed")})
    return out


def _finding_values(data: dict) -> Dict[str, str]:
    """The findings beside the published tables: their fresh seeds, the pointer control's
    pairs on them, the per-question runs that miss with each backward pass, and the sweep's
    widened grids."""
    findings = data["findings"]
    out = {"learning.fresh.seeds": seed_range(findings["pointer"]["settings"]["seeds"])}
    for readout, text in _pointer_totals(findings["pointer"]).items():
        out[f"learning.fresh.pointer.{readout}"] = text
    for name in ("library", "textbook"):
        for r in findings[name]["per_question"]:
            s = r["intervention"]
            out[f"learning.backward.{name}.{SLUGS[r['scale']]}.{r['d_k']}"] = (
                f"{s['misses']} of {s['n']}")
    for library, textbook in zip(*(findings[name]["per_question"] for name in
                                   ("library", "textbook"))):  # seed by seed
        out[f"learning.backward.paired.{SLUGS[library['scale']]}.{library['d_k']}"] = (
            _count_text(_counts(library["intervention"]["steps"],
                                textbook["intervention"]["steps"])))
    widened = data["sweep"]["widened"]
    out["learning.sweep.widened"] = f"{len(widened)} of {data['sweep']['grids']}"
    for scale in POINTER_SCALES:
        rows = [r for r in data["per_question"] if r["scale"] == scale]
        out[f"learning.lr.{PER_QUESTION}.{SLUGS[scale]}"] = _joined(
            [fmt_rate(r["intervention"]["lr"]) for r in rows])
        out[f"learning.sweep.identity-tops.{SLUGS[scale]}"] = _joined(
            [fmt_rate(data["sweep"]["identity_tops"][f"{PER_QUESTION} fixed {scale} {r['d_k']}"])
             for r in rows])
    return out


def _rounding_values(data: dict) -> Dict[str, str]:
    """The perturbed runs that miss, the arms that change with the order of summation."""
    out = {}
    for name in ("all",) + OPTIMIZERS:
        rows = [r for r in data["table"] if name in ("all", r["optimizer"])]
        out[f"learning.perturbed-misses.{name}"] = (
            f"{sum(r['perturbed_misses'] for r in rows)} of "
            f"{sum(r['perturbed_runs'] for r in rows):,}")
    moved = [m for r in data["table"] for m in r["runs_moved"]]
    out["learning.perturbed.moved-far"] = (f"{sum(m[1] for m in moved)} of the "
                                           f"{sum(m[0] for m in moved)}")
    changed = [r for r in data["table"] if r["naive"]["seeds_changed"]]
    out["learning.naive.arms-changed"] = f"{len(changed)} of {len(data['table'])}"
    out["learning.naive.outside"] = str(sum(not _inside(r) for r in data["table"]))
    return out


def _inside(row: Row) -> bool:
    """Whether the median under left-to-right sums lies within the published interval."""
    low, high = row["published"]
    return _rank(low) <= _rank(row["naive"]["median"]) <= _rank(high)


def _other_values(data: dict) -> Dict[str, str]:
    """The intervention's cells and ratios; the long runs' counts."""
    out = {}
    for r in data["per_question"]:
        out[f"learning.per-question.{SLUGS[r['scale']]}.{r['d_k']}"] = _steps_cell(
            r["intervention"])
        if "ratio" in r:
            out[f"learning.per-question-ratio.{r['d_k']}"] = _ratio_text(r["ratio"]["ratio"])
            out[f"learning.adam-ratio.{r['d_k']}"] = _ratio_text(r["adam_ratio"]["ratio"])
    out["learning.long.missed"] = str(sum(len(r["steps"]) for r in data["long"]))
    out["learning.long.reached"] = str(sum(s is not None for r in data["long"]
                                           for s in r["steps"]))
    return out


def values(data: dict) -> Dict[str, str]:
    """Return the inline numbers of the docs, by marker name (learning.*), from the tables
    of the published records (docs_data): every arm, every record kind."""
    s = data["settings"]
    out = {"learning.seeds": seed_range(s["seeds"]),
           "learning.tuning-seeds": seed_range(s["tuning_seeds"]),
           "learning.coverage": coverage_text([r["n"] for r in data["table"]]),
           "learning.coverage.logits": coverage_text([r["n"] for r in data["logits"]]),
           "learning.coverage.fixed-logits": coverage_text(
               [r["n"] for r in data["fixed_logits"]])}
    for part in (_arm_values, _logit_values, _diagnostic_values, _paired_values,
                 _rounding_values, _other_values, _finding_values):
        out.update(part(data))
    return out


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
