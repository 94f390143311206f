"""The sweep of the logit-scale study, and its statistics (stability_model.py trains).

Every run is one arm, optimizer, d_k, seed and rate 2^k (k an octave), trained for STEPS
steps at that constant rate and judged on its held-out questions.  The runs are
independent, so a process pool (`jobs`) changes how long a sweep takes, never what it
finds: the records come back in the order they were planned.  Then, per arm and d_k,
each seed's best rate, collapse edge, band and LR sensitivity, and their medians over the
seeds with the order-statistic interval of stats.median_interval.

Public API (`__all__`):
    Plan, PUBLISHED, PAPER_RANGE, BAND, octaves(plan), paper_window(plan)   the sweeps
    Spec, specs(plan), record(spec)                     one run, as a record
    Stopped, run_all(fn, items, jobs, progress, weights)   fn over items in a pool, in order
    measure(plan, jobs, progress), dumps(records), load(path)   the records of a sweep
    seed_statistics(runs, window), SeedStatistics        best, edge, band, LR sensitivity
    by_seed(runs, windows), summaries(...), paired_counts(...)   over the seeds

>>> seed_statistics([{"octave": k, "final_loss": l, "initial_loss": 2.0, "collapsed": c}
...                  for k, l, c in [(0, 0.5, False), (1, 0.25, False), (2, 3.0, True),
...                                  (3, 3.0, True)]])
SeedStatistics(best=1, edge=2, band=0, band_censored=False, lr_sensitivity=(0.9375,))

Arguments are not checked here (stability.py's command line checks what a user types).

python3 experiments/stability.py --help runs the experiment.
"""

import json  # the records
import math  # fsum, inf, ldexp
import multiprocessing  # the pool of --jobs, started by "spawn" on every platform
import os  # the paths of the stored records
import signal  # the pool's workers leave Ctrl-C to the main process
import sys  # sys.path, when run as a script
import time  # the estimate of the time left
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments.learning_measure import paired, sign_test, summarise
from experiments.learning_model import BATCH, BETA, D_MODEL, HELD_OUT, ITEMS
from experiments.stability_model import (ARMS, BOUND, DEFAULT_ARMS, EPS_NORM, EVERY, EXTRA_ARMS,
                                         STEPS, train)

__all__ = ["D_KS", "SEEDS", "Plan", "PUBLISHED", "HERE", "PAPER_RANGE", "BAND", "REFERENCE",
           "octaves", "paper_window", "Spec", "specs", "record", "Stopped", "run_all",
           "measure", "dumps", "load", "SeedStatistics", "seed_statistics", "by_seed",
           "summaries", "paired_counts", "edge_offsets"]

Progress = Optional[Callable[[str], None]]

D_KS = (16, 64, 256)
SEEDS = tuple(range(100, 110))  # the held-out seeds: nothing is chosen on them
PAPER_RANGE = (3e-4, 3e-1)  # Wortsman et al. (2023), Section 2.2: AdamW rates, 7 points
BAND = 0.1  # the band: final loss within this many nats of the best
REFERENCE = "1/sqrt(d_k)"  # every arm is compared with the paper's scale, seed by seed
HERE = os.path.dirname(os.path.abspath(__file__))


class Plan(NamedTuple):
    """What one sweep runs: every arm x d_k x seed x rate 2^k, low <= k <= high."""
    optimizer: str
    arms: Tuple[str, ...]
    d_ks: Tuple[int, ...]
    seeds: Tuple[int, ...]
    low: int  # the lowest octave: rate 2^low
    high: int  # the highest octave
    steps: int = STEPS


PUBLISHED = {  # the committed records and their plans
    "stability.json": Plan("adam", DEFAULT_ARMS, D_KS, SEEDS, -10, 2),
    "stability_all.json": Plan("adam", EXTRA_ARMS, D_KS, SEEDS, -10, 2),
    "stability_sgd.json": Plan("sgd", DEFAULT_ARMS, D_KS, SEEDS, -2, 10)}


def octaves(plan: Plan) -> List[int]:
    """Return the octaves k of the plan's rates 2^k, lowest first."""
    return list(range(plan.low, plan.high + 1))


def paper_window(plan: Plan) -> Optional[Tuple[int, int]]:
    """Return the octaves of the plan's grid whose rates 2^k lie in PAPER_RANGE, as (low,
    high); None under SGD (the paper's range is one of AdamW's rates) or if none does.

    >>> paper_window(PUBLISHED["stability.json"])  # 2^-10 = 0.00098 ... 2^-2 = 0.25
    (-10, -2)
    """
    inside = [k for k in octaves(plan) if PAPER_RANGE[0] <= 2.0 ** k <= PAPER_RANGE[1]]
    if plan.optimizer != "adam" or not inside:
        return None
    return inside[0], inside[-1]


# ------------------------------------------------------------------ one run

class Spec(NamedTuple):
    """One run: train(arm, d_k, seed, optimizer, 2^octave, steps)."""
    optimizer: str
    arm: str
    d_k: int
    seed: int
    octave: int
    steps: int = STEPS


def specs(plan: Plan) -> List[Spec]:
    """Return every run of the plan, in the order of its records."""
    return [Spec(plan.optimizer, arm, d_k, seed, k, plan.steps) for arm in plan.arms
            for d_k in plan.d_ks for seed in plan.seeds for k in octaves(plan)]


def _three_digits(x: float):
    """x to 3 significant digits, an int when whole: the per-step series stay small."""
    y = float(f"{x:.3g}")
    return int(y) if y.is_integer() else y


def record(spec: Spec) -> dict:
    """Return the record of one run (docs/stability.md lists its fields)."""
    run = train(spec.arm, spec.d_k, spec.seed, spec.optimizer, math.ldexp(1.0, spec.octave),
                spec.steps)
    final = run.final
    return {"optimizer": spec.optimizer, "arm": spec.arm, "d_k": spec.d_k, "seed": spec.seed,
            "octave": spec.octave, "lr": math.ldexp(1.0, spec.octave),
            "initial_loss": run.initial.loss,
            "final_loss": None if final is None else final.loss,
            "final_accuracy": None if final is None else final.accuracy,
            "final_entropy": None if final is None else final.entropy,
            "collapsed": run.collapsed,
            "above_initial": final is None or final.loss > run.initial.loss,
            "non_finite": run.non_finite,
            "max_logit": max(run.largest),
            "max_logit_before_cap": run.largest_raw if ARMS[spec.arm].cap else None,
            "max_gain": run.largest_gain,
            "held_out_loss": run.losses,
            "largest": [_three_digits(x) for x in run.largest]}


# ------------------------------------------------------------------ the pool

class Stopped(Exception):
    """Ctrl-C during a sweep: how far it got."""
    def __init__(self, done: int, total: int):
        super().__init__(f"{done} of {total} runs done")
        self.done, self.total = done, total


def _eta(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _quiet_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C


def _indexed(fn: Callable, index: int, item) -> Tuple[int, object]:
    return index, fn(item)


class _Call(NamedTuple):
    """fn(item) tagged with the item's index: picklable, so that a spawned worker can run
    it."""
    fn: Callable

    def __call__(self, pair):
        return _indexed(self.fn, *pair)


def run_all(fn: Callable, items: Sequence, jobs: int = 1, progress: Progress = None,
            weights: Optional[Sequence[float]] = None) -> list:
    """Return [fn(item) for item in items], computed by `jobs` processes (1: this one),
    the heaviest items first; each result is stored at its item's index, so the list is
    the same for every jobs.  progress hears how many are done and an estimate of the time
    left (the elapsed time times the weight left over the weight done).  Ctrl-C raises
    Stopped with the count done."""
    weights = [1.0] * len(items) if weights is None else list(weights)
    order = sorted(range(len(items)), key=lambda i: -weights[i])
    results: list = [None] * len(items)
    total, state = math.fsum(weights), {"done": 0, "weight": 0.0, "start": time.monotonic()}

    def finished(index: int, value) -> None:
        results[index] = value
        state["done"] += 1
        state["weight"] += weights[index]
        if progress:
            elapsed = time.monotonic() - state["start"]
            left = elapsed * (total - state["weight"]) / state["weight"]
            progress(f"{state['done']} of {len(items)} runs done, about {_eta(left)} left")
    pool = None
    try:
        if jobs == 1:
            for i in order:
                finished(i, fn(items[i]))
            return results
        pool = multiprocessing.get_context("spawn").Pool(jobs, _quiet_worker)
        for i, value in pool.imap_unordered(_Call(fn), [(i, items[i]) for i in order]):
            finished(i, value)
        return results
    except KeyboardInterrupt:
        raise Stopped(state["done"], len(items)) from None
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def _weight(spec: Spec) -> float:
    """The expected cost of a run, in ms per step as measured (stability_model.py)."""
    norm = ARMS[spec.arm].norm is not None
    return (3.7 + 0.077 * spec.d_k) if norm else (1.2 + 0.042 * spec.d_k)


def _settings(plan: Plan) -> dict:
    return {"optimizer": plan.optimizer, "arms": list(plan.arms), "d_ks": list(plan.d_ks),
            "seeds": list(plan.seeds), "octaves": [plan.low, plan.high], "steps": plan.steps,
            "batch": BATCH, "held_out": HELD_OUT, "d_model": D_MODEL, "items": ITEMS,
            "beta": BETA, "eps_norm": EPS_NORM, "bound": BOUND, "held_out_loss_every": EVERY,
            "collapsed": "held-out accuracy below 0.5",
            "largest": "max |s| over each step's batch, 3 significant digits"}


def measure(plan: Plan, jobs: int = 1, progress: Progress = None) -> dict:
    """Return the records of every run of the plan: {"settings", "runs"}, the same for
    every jobs."""
    planned = specs(plan)
    runs = run_all(record, planned, jobs, progress, [_weight(s) for s in planned])
    return {"settings": _settings(plan), "runs": runs}


def dumps(records: dict) -> str:
    """Return the records as JSON text, one run per line (the file stays diffable)."""
    runs = ",\n".join("  " + json.dumps(run, separators=(",", ":")) for run in records["runs"])
    return ('{\n "settings": ' + json.dumps(records["settings"]) + ',\n "runs": [\n'
            + runs + "\n ]\n}\n")


def load(path: str) -> dict:
    """Return the records stored at path."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ------------------------------------------------------------------ statistics

class SeedStatistics(NamedTuple):
    """One arm, d_k and seed over the rates of a sweep (octaves k, rate 2^k)."""
    best: int  # the octave of the lowest final loss (ties: the smaller rate)
    edge: Optional[int]  # the lowest octave from which every higher one collapsed; None:
    #                      beyond the grid (the highest rate did not collapse)
    band: int  # octaves spanned by the unbroken run of rates around the best within BAND
    band_censored: bool  # the band reaches an end of the grid: it may be wider
    lr_sensitivity: Tuple[Optional[float], ...]  # one per window asked for


def _loss(run: dict) -> float:
    return math.inf if run["final_loss"] is None else run["final_loss"]


def _lr_sensitivity(runs: Sequence[dict]) -> Optional[float]:
    """E over the window's rates of min(l, l_0) - l*, l* = min over the window of l (a
    non-finite run: l_0 in the mean, left out of l*); None if every run is non-finite."""
    best = min(_loss(r) for r in runs)
    if best == math.inf:
        return None
    return math.fsum(min(_loss(r), r["initial_loss"]) - best for r in runs) / len(runs)


def seed_statistics(runs: Sequence[dict],
                    windows: Sequence[Optional[Tuple[int, int]]] = (None,)) -> SeedStatistics:
    """Return the SeedStatistics of one seed's runs (every octave of a grid): windows are
    (low, high) octaves for the LR sensitivity, None for the whole grid."""
    runs = sorted(runs, key=lambda r: r["octave"])
    losses = [_loss(r) for r in runs]
    i = min(range(len(runs)), key=lambda j: (losses[j], runs[j]["octave"]))
    lo = hi = i
    while lo > 0 and losses[lo - 1] - losses[i] <= BAND:
        lo -= 1
    while hi < len(runs) - 1 and losses[hi + 1] - losses[i] <= BAND:
        hi += 1
    edge = None
    for r in reversed(runs):
        if not r["collapsed"]:
            break
        edge = r["octave"]
    sensitivity = tuple(_lr_sensitivity([r for r in runs if w is None or
                                         w[0] <= r["octave"] <= w[1]]) for w in windows)
    return SeedStatistics(runs[i]["octave"], edge, runs[hi]["octave"] - runs[lo]["octave"],
                          lo == 0 or hi == len(runs) - 1, sensitivity)


def by_seed(runs: Sequence[dict], windows: Sequence[Optional[Tuple[int, int]]] = (None,)
            ) -> Dict[Tuple[str, str, int], Dict[int, SeedStatistics]]:
    """Return {(optimizer, arm, d_k): {seed: SeedStatistics}}, in the order of the runs."""
    groups: Dict[tuple, Dict[int, List[dict]]] = {}
    for r in runs:
        groups.setdefault((r["optimizer"], r["arm"], r["d_k"]), {}).setdefault(
            r["seed"], []).append(r)
    return {key: {seed: seed_statistics(rs, windows) for seed, rs in seeds.items()}
            for key, seeds in groups.items()}


def summaries(stats: Dict[int, SeedStatistics]) -> dict:
    """Return the medians over the seeds, each a learning_measure.Summary (None, beyond
    the grid or non-finite, ranks above every number): best, edge, band, edge - best, and
    each window's LR sensitivity; and how many bands are censored."""
    seeds = list(stats.values())
    gap = [None if s.edge is None else s.edge - s.best for s in seeds]
    return {"best": summarise([s.best for s in seeds]),
            "edge": summarise([s.edge for s in seeds]),
            "band": summarise([s.band for s in seeds]),
            "censored": sum(s.band_censored for s in seeds),
            "edge_above_best": summarise(gap),
            "lr_sensitivity": [summarise([s.lr_sensitivity[w] for s in seeds])
                               for w in range(len(seeds[0].lr_sensitivity))]}


def paired_counts(reference: Dict[int, SeedStatistics], other: Dict[int, SeedStatistics],
                  field: str, window: int = 0) -> dict:
    """Return, seed by seed, how often `other`'s edge (field "edge"), band ("band") or LR
    sensitivity in a window ("lr") is higher than the reference's, lower, tied, or both
    beyond the grid, with the two-sided sign test's p over the pairs that differ
    (learning_measure.paired and sign_test)."""
    def value(s: SeedStatistics):
        return s.edge if field == "edge" else s.band if field == "band" else \
            s.lr_sensitivity[window]
    seeds = [seed for seed in reference if seed in other]
    counts = paired([value(reference[s]) for s in seeds], [value(other[s]) for s in seeds])
    return {"higher": counts["slower"], "lower": counts["faster"], "tied": counts["tied"],
            "both beyond": counts["both missed"], "p": sign_test(counts)}


def edge_offsets(reference: Dict[int, SeedStatistics], other: Dict[int, SeedStatistics]
                 ) -> List[Optional[int]]:
    """Return, seed by seed, other's edge minus the reference's in octaves (None where
    either is beyond the grid)."""
    return [None if reference[s].edge is None or other[s].edge is None
            else other[s].edge - reference[s].edge for s in reference if s in other]


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
