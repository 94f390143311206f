"""The rate search and the measurements of the training miniature (learning_model.py).

Every arm (optimizer, readout, scale, d_k) trains at its own rate, chosen by a grid search
on the tuning seeds (`sweep`, stored in tuned_rates.json) and judged on the held-out seeds
(`measure`, stored in results.json).  Each training run is one independent unit of work,
so a process pool (`jobs`) changes how long a command takes, never what it finds: the
records come back in the order they were planned.

Public API (`__all__`):
    run_all(fn, items, jobs, progress, label, weights)   fn over items, in order, in a pool
    Interrupted                 Ctrl-C during run_all, saying how far it had got
    rate(k), arm_key(arm), guess(optimizer, scale, d_k), total_steps(arm, lr, seeds, bound,
    backward), default_arms(d_ks, scales, optimizers), sweep(arms, seeds, jobs, progress,
    backward), SWEEP_RULE
    load(path), tuned_rate(optimizer, scale, d_k, readout, rates)   the stored rates
    RATES_FILE, RESULTS_FILE, FINDINGS      the committed records
    Spec, outcome(spec), steps_to_target(optimizer, scale, d_k, lr, seeds, ...)   runs
    Logits, logits(task, params, c), Diagnostics, seed_diagnostics(seed, d_k, scale, readout,
    backward)
    Plan, PUBLISHED, measure(plan, jobs, progress)      every run of one command, as records
    Summary, summarise(values), paired(reference, other), sign_test(counts)   statistics
    coverage(n), coverage_text(ns)      the exact coverage of a median's interval over n seeds

>>> [r["steps"] for r in steps_to_target("sgd", "1/sqrt(d_k)", 16, 1.0, [100, 101])]
[6, 8]

Arguments are not checked here (learning.py's command line checks what a user types).

python3 experiments/learning.py --help runs the experiment.
"""

import json  # the stored rates
import math  # sqrt, log2, ldexp, inf, comb
import multiprocessing  # the process pool of --jobs
import os  # the paths of the stored files
import random  # the shuffled order of the runs (for the estimate of the time left)
import signal  # a worker of the pool leaves Ctrl-C to the command
import statistics  # median (of ints, or of two middle values: the same on every Python)
import time  # the estimate of the time left
from fractions import Fraction  # the sign test's exact binomial tail
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from attention import dot, matmul, transpose
from experiments.learning_model import (BATCH, BETA, D_MODEL, HELD_OUT, ITEMS, MAX_STEPS,
                                        PER_QUESTION, READOUTS, SCALES, TARGET, Task,
                                        initial_weights, logit_matrix_transposed, logit_table,
                                        make_task, model, question_gradient, question_scores,
                                        train)
from stats import median_interval, scale_factor, variance

__all__ = ["D_KS", "TUNING_SEEDS", "HELD_OUT_SEEDS", "POINTER_SCALES", "LATE", "LONG",
           "PERTURBATIONS", "MISS", "SWEEP_RULE", "RATES_FILE", "RESULTS_FILE", "FINDINGS",
           "run_all", "Interrupted", "rate", "arm_key", "guess", "total_steps", "default_arms",
           "sweep", "load", "tuned_rate", "Spec", "outcome", "steps_to_target", "Logits", "logits",
           "Diagnostics", "seed_diagnostics", "Plan", "PUBLISHED", "measure", "Summary",
           "summarise", "paired", "sign_test", "coverage", "coverage_text"]

Params = Tuple[List[List[float]], List[List[float]]]
Arm = Tuple[str, str, str, int]  # (optimizer, readout, scale, d_k)
Progress = Optional[Callable[[str], None]]

D_KS = (16, 64, 256)
TUNING_SEEDS = (0, 1, 2, 3, 4)  # the rates are chosen on these seeds only
HELD_OUT_SEEDS = tuple(range(100, 110))  # and judged on these
POINTER_SCALES = ("1/sqrt(d_k)", "1")  # the controls compare the paper's scale and none
LATE = 100  # the fixed late step at which the logits are measured a second time
LONG = 1000  # the longer cap at which the misses of the steps table are run again
PERTURBATIONS = tuple(range(1, 8))  # k of the initial-weight factors 1 + k 2^-52
HERE = os.path.dirname(os.path.abspath(__file__))
RATES_FILE = os.path.join(HERE, "tuned_rates.json")  # committed: made by --sweep
RESULTS_FILE = os.path.join(HERE, "results.json")  # committed: made by --publish
FINDINGS = {  # committed records beside the published tables, each made by a command that
    # docs/experiments.md names (--records PATH), on the fresh seeds 200-239
    "pointer": os.path.join(HERE, "fresh_pointer.json"),  # the pointer control
    "library": os.path.join(HERE, "fresh_backward_library.json"),  # per-question Adam, d_k 256
    "textbook": os.path.join(HERE, "fresh_backward_textbook.json"),  # the same, --backward
}


# ------------------------------------------------------------------ the runner

def _eta(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during run_all; str() says how far it had got: "37 of 120 runs"."""


def run_all(fn: Callable, items: Sequence, jobs: int = 1, progress: Progress = None,
            label: str = "runs", weights: Optional[Sequence[float]] = None) -> list:
    """Return [fn(item) for item in items], computed by `jobs` processes (1: this one).

    Each result is stored at its item's index, so the list is the same for every jobs.
    progress, if given, hears after each item how many are done and an estimate of the
    time left: the elapsed time times the weight left over the weight done (weights: each
    item's expected cost; equal by default).  Ctrl-C raises Interrupted.
    """
    weights = [1.0] * len(items) if weights is None else list(weights)
    results: list = [None] * len(items)
    start, done, done_weight, total = time.monotonic(), 0, 0.0, math.fsum(weights)

    def finished(index: int, value) -> None:
        nonlocal done, done_weight
        results[index], done, done_weight = value, done + 1, done_weight + weights[index]
        if progress:
            left = (time.monotonic() - start) * (total - done_weight) / done_weight
            progress(f"{label}: {done} of {len(items)} done, about {_eta(left)} left")
    try:
        if jobs == 1:
            for index, item in enumerate(items):
                finished(index, fn(item))
        else:
            _pooled(fn, items, jobs, finished)
    except KeyboardInterrupt:
        raise Interrupted(f"{done} of {len(items)} {label}") from None
    return results


def _pooled(fn: Callable, items: Sequence, jobs: int, finished: Callable) -> None:
    """Call finished(index, fn(item)) for every item as `jobs` processes return them.

    The workers are started by "spawn", each a fresh interpreter: a fork of this process,
    which may hold threads, could deadlock (Python 3.12 warns of it).  They ignore Ctrl-C
    from their first instruction (an ignored signal stays ignored in a new program, and
    Python then installs no handler of its own), although the terminal sends it to them
    too: the command alone stops, ends them, and says how far it had got.
    """
    tasks = [(index, fn, item) for index, item in enumerate(items)]
    held = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pool = multiprocessing.get_context("spawn").Pool(jobs)
    finally:
        signal.signal(signal.SIGINT, held)
    try:
        for index, value in pool.imap_unordered(_indexed, tasks):
            finished(index, value)
    finally:  # all done, an error, or an interrupt: end the workers, with any run under way
        pool.terminate()
        pool.join()


def _indexed(task: tuple) -> tuple:
    """(index, fn(item)) of one task (index, fn, item), in a worker."""
    index, fn, item = task
    return index, fn(item)


# ------------------------------------------------------------------ the rate search

def rate(k: int) -> float:
    """Return 2^(k/2), exact and the same on every machine: a power of two, or one times
    sqrt(2).

    >>> [rate(k) for k in (-2, 0, 1)]
    [0.5, 1.0, 1.4142135623730951]
    """
    return math.ldexp(math.sqrt(2.0) if k % 2 else 1.0, (k - k % 2) // 2)


MISS = MAX_STEPS + 1  # what a miss counts in a tuning total
WINDOW = 6  # a grid starts 6 half-octaves either side of its guess: 13 rates, 64x wide
WIDEN = 4  # when the best rate sits at an end, 4 more rates are added on that side
GUESS = {"sgd": 0, "adam": -10, PER_QUESTION: -10}  # 2^(k/2) for 1/sqrt(d_k)
# Half-octaves of rate per octave of c / c' that carry 1/sqrt(d_k)'s guess to another scale:
# the identity's lr c / c' under SGD and lr sqrt(c / c') under Adam (equivalent_run).  The
# per-question arms keep 1/sqrt(d_k)'s guess at every scale: the identity's guess fell far
# below the unscaled arm's best rates (docs/experiments.md, "Learning rates").
CARRY = {"sgd": 2, "adam": 1, PER_QUESTION: 0}
SWEEP_RULE = {  # stored with the rates; docs/experiments.md ("Learning rates") says it in words
    "ladder": "2^(k/2)", "guess, 1/sqrt(d_k)": {o: rate(k) for o, k in GUESS.items()},
    "guess carried by": "equivalent_run", "half-octaves per octave of c/c'": CARRY,
    "rates either side": WINDOW, "widen by": WIDEN,
    "a miss counts": MISS, "a tie goes to": "the smaller rate", "seeds": "tuning only"}


def arm_key(arm: Arm) -> str:
    """Return the arm's key in tuned_rates.json, "optimizer readout scale d_k"."""
    return " ".join(map(str, arm))


def guess(optimizer: str, scale: str, d_k: int) -> int:
    """Return the ladder index k (rate 2^(k/2)) that the identity carries 1/sqrt(d_k)'s
    guess to (CARRY half-octaves per octave of c / c'): the centre of the arm's first grid.

    >>> guess("sgd", "1/d_k", 64), guess("adam", "1/d_k", 64), guess(PER_QUESTION, "1", 64)
    (6, -7, -10)
    """
    ratio = scale_factor("1/sqrt(d_k)", d_k) / scale_factor(scale, d_k)  # c / c'
    return GUESS[optimizer] + round(math.log2(ratio) * CARRY[optimizer])


def total_steps(arm: Arm, lr: float, seeds: Sequence[int], bound: float,
                backward: str = "library") -> Optional[int]:
    """Return the sum over seeds of the steps to TARGET at rate lr (a miss counts MISS), or
    None once it exceeds bound: the score of one rate in the grid search (backward: the
    softmax backward of the runs, learning_model.BACKWARDS)."""
    optimizer, readout, scale, d_k = arm
    total = 0
    for seed in seeds:
        cap = int(min(MAX_STEPS, bound - total))  # needing more cannot keep within bound
        steps = train(seed, d_k, scale=scale, optimizer=optimizer, lr=lr, readout=readout,
                      max_steps=cap, backward=backward).steps_to_target
        total += MISS if steps is None else steps
        if total > bound:
            return None
    return total


def _tune(arm: Arm, seeds: Sequence[int], backward: str = "library") -> dict:
    """Score every rate of the arm's grid (guess first, then outwards: an early good total
    cuts the others short), widening the grid while the winner sits at an end."""
    centre = guess(arm[0], arm[2], arm[3])
    low, high, totals, best = centre - WINDOW, centre + WINDOW, {}, (math.inf, 0)
    todo = sorted(range(low, high + 1), key=lambda k: (abs(k - centre), k))
    while todo:
        for k in todo:
            total = total_steps(arm, rate(k), seeds, best[0], backward)
            totals[k] = total
            if total is not None and (total, k) < best:
                best = (total, k)
        todo = (list(range(low - 1, low - WIDEN - 1, -1)) if best[1] == low else
                list(range(high + 1, high + WIDEN + 1)) if best[1] == high else [])
        low, high = min([low] + todo), max([high] + todo)
    return {"lr": rate(best[1]), "total_steps": best[0],
            "grid": [rate(k) for k in range(low, high + 1)],
            "totals": {repr(rate(k)): (t if t is not None else f">{best[0]}")
                       for k, t in sorted(totals.items())}}


def default_arms(d_ks: Sequence[int] = D_KS, scales: Sequence[str] = SCALES,
                 optimizers: Sequence[str] = ("sgd", "adam")) -> List[Arm]:
    """Return every arm of the study: (optimizer, readout, scale, d_k) for each readout,
    optimizer, scale and d_k, then the intervention's (PER_QUESTION, fixed, scale, d_k)
    for the POINTER_SCALES when Adam is among the optimizers."""
    arms = [(o, r, s, d_k) for r in READOUTS for o in optimizers for s in scales for d_k in d_ks]
    return arms + [(PER_QUESTION, "fixed", s, d_k) for s in scales for d_k in d_ks
                   if s in POINTER_SCALES and "adam" in optimizers]


def _sweep_unit(unit: Tuple[Arm, Tuple[int, ...], str]) -> dict:
    return _tune(*unit)


def _arm_weight(arm: Arm, stored: dict) -> float:
    """The expected cost of tuning an arm: the steps of its stored tuning, or of a grid of
    misses, times a cost per step that grows with d_k."""
    totals = stored.get(arm_key(arm), {}).get("totals", {})
    steps = sum(int(str(t).lstrip(">")) for t in totals.values()) or 13 * MISS
    return steps * (arm[3] + 50.0)


def sweep(arms: Sequence[Arm], seeds: Sequence[int] = TUNING_SEEDS, jobs: int = 1,
          progress: Progress = None, backward: str = "library") -> dict:
    """Return the rate search: per arm, argmin over its grid of the total steps to TARGET.

    total(lr) = sum over the tuning seeds of the steps to TARGET held-out accuracy, a miss
    counting MAX_STEPS + 1; every rate of the grid is scored, and the grid widened until
    the winner is inside it (SWEEP_RULE).  Returns {"rule", "seeds", "batch", "max_steps",
    "target", "arms": {"optimizer readout scale d_k": {"lr", "total_steps", "grid",
    "totals"}}}, and "backward" when it is not the library's.  The arms run in parallel
    with jobs > 1, the longest first.

    >>> arm = sweep([("sgd", "pointer", "1/sqrt(d_k)", 16)], seeds=[0])["arms"]
    >>> arm["sgd pointer 1/sqrt(d_k) 16"]["lr"], arm["sgd pointer 1/sqrt(d_k) 16"]["total_steps"]
    (1.0, 5)
    """
    stored = load(RATES_FILE).get("arms", {}) if os.path.exists(RATES_FILE) else {}
    weights = [_arm_weight(arm, stored) for arm in arms]
    order = sorted(range(len(arms)), key=lambda i: -weights[i])  # longest first: balanced
    units = [(arms[i], tuple(seeds), backward) for i in order]
    tuned = run_all(_sweep_unit, units, jobs, progress, "arms", [weights[i] for i in order])
    by_arm = {arm_key(arms[i]): result for i, result in zip(order, tuned)}
    return {"rule": SWEEP_RULE, "seeds": list(seeds), "batch": BATCH, "max_steps": MAX_STEPS,
            "target": TARGET, **_backward_setting(backward),
            "arms": {arm_key(arm): by_arm[arm_key(arm)] for arm in arms}}


def _backward_setting(backward: str) -> dict:
    """{"backward": name} for a stored file made with the textbook backward, else {}: the
    committed files, made with the library's, stay as they were."""
    return {} if backward == "library" else {"backward": backward}


def load(path: str) -> dict:
    """Return the JSON stored at path."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def tuned_rate(optimizer: str, scale: str, d_k: int, readout: str = "fixed",
               rates: str = RATES_FILE) -> float:
    """Return the learning rate the stored sweep chose for one arm (see sweep()).

    >>> tuned_rate("sgd", "1/d_k", 256)
    45.254833995939045
    """
    key = arm_key((optimizer, readout, scale, d_k))
    arms = load(rates)["arms"] if os.path.exists(rates) else {}
    if key not in arms:
        raise ValueError(f"no tuned rate for {key!r} in {rates}; tune it with "
                         f"`python3 experiments/learning.py --sweep --dk {d_k} --rates PATH`")
    return float(arms[key]["lr"])


# ------------------------------------------------------------------------- the runs

class Logits(NamedTuple):
    """The logits of the trained model: medians over a seed's held-out questions."""
    matched: float  # q . k_{j*}, the raw logit of the key the query names
    scaled: float  # c q . k_{j*}: what softmax sees
    spread: float  # standard deviation of the other m - 1 scaled logits
    cos: float  # cos(q, k_{j*})


def logits(task: Task, params: Params, c: float) -> Logits:
    """Return the Logits of weights params on the held-out questions of task: q = x_q W_Q,
    k = x W_K, through attention.matmul (not the training loop's products)."""
    W_Q, W_K = params
    q = matmul(task.queries, W_Q)  # one row per id: 8 x d_k
    k = matmul([x for row in task.keys for x in row], W_K)  # one row per token: 64 x d_k
    table = matmul(q, transpose(k))
    norm_q, norm_k = [math.sqrt(dot(v, v)) for v in q], [math.sqrt(dot(v, v)) for v in k]
    matched, spread, cos = [], [], []
    for e in task.held_out:
        a, tokens = e.ids[e.j_star], [ITEMS * a_j + b_j for a_j, b_j in zip(e.ids, e.payloads)]
        star = tokens[e.j_star]
        matched.append(table[a][star])
        spread.append(c * math.sqrt(variance([table[a][t] for t in tokens if t != star])))
        cos.append(table[a][star] / (norm_q[a] * norm_k[star]))
    m = statistics.median(matched)
    return Logits(m, c * m, statistics.median(spread), statistics.median(cos))


class Spec(NamedTuple):
    """One training run: train(seed, d_k, ...) with these arguments."""
    optimizer: str
    scale: str
    d_k: int
    seed: int
    lr: float
    readout: str = "fixed"
    init_factor: float = 1.0
    max_steps: int = MAX_STEPS
    late: int = 0  # go on to this step, and measure the logits there too (0: no)
    summation: str = "fsum"
    logits: bool = False  # measure the logits at the first TARGET (and at `late`)
    backward: str = "library"  # softmax's backward pass (learning_model.BACKWARDS)


def outcome(spec: Spec) -> Tuple[Optional[int], Optional[Logits], Optional[Logits]]:
    """Return (steps to TARGET, Logits there, Logits after step spec.late) of one run; the
    Logits are None unless spec.logits, and where the run has no such step."""
    run = train(spec.seed, spec.d_k, scale=spec.scale, optimizer=spec.optimizer, lr=spec.lr,
                readout=spec.readout, init_factor=spec.init_factor, max_steps=spec.max_steps,
                late=spec.late, summation=spec.summation, backward=spec.backward)
    if not spec.logits:
        return run.steps_to_target, None, None
    task, c = make_task(spec.seed), scale_factor(spec.scale, spec.d_k)
    at_late = run.at_late if spec.late else None
    return (run.steps_to_target, *(None if params is None else logits(task, params, c)
                                   for params in (run.at_target, at_late)))


def _record(spec: Spec, steps: Optional[int]) -> dict:
    """One run, in the issue's schema (steps None: not within the cap)."""
    return {"optimizer": spec.optimizer, "scale": spec.scale, "d_k": spec.d_k,
            "seed": spec.seed, "lr": spec.lr, "steps": steps}


def steps_to_target(optimizer: str, scale: str, d_k: int, lr: float,
                    seeds: Sequence[int] = HELD_OUT_SEEDS, *, readout: str = "fixed",
                    init_factor: float = 1.0, max_steps: int = MAX_STEPS) -> List[dict]:
    """Return one record per seed, {"optimizer", "scale", "d_k", "seed", "lr", "steps"}, with
    steps = min{t : held-out accuracy after t steps >= TARGET}, or None if t > max_steps."""
    specs = [Spec(optimizer, scale, d_k, seed, lr, readout, init_factor, max_steps)
             for seed in seeds]
    return [_record(spec, outcome(spec)[0]) for spec in specs]


class Diagnostics(NamedTuple):
    """The model at its initial weights, over one seed's held-out questions."""
    logit_std: float  # standard deviation of the logits S
    largest_weight: float  # median over the questions of max_j p_j
    gradient: float  # median of |dL/dS|, the gradient reaching the logits
    tail_share: float  # share of sum_i |G_i| carried by the 10% of questions with most


def seed_diagnostics(seed: int, d_k: int, scale: str, readout: str = "fixed",
                     backward: str = "library") -> Diagnostics:
    """Return the Diagnostics of one seed: logit_std = std of S = c x_q M X^T;
    largest_weight = median max_j p_j; gradient = median |dL/dS| under the readout's loss;
    tail_share = (sum of the largest 10% of |G_i|) / sum_i |G_i|, G_i = dL/dM of question i
    (0.1 if all were equal).

    >>> d = seed_diagnostics(100, 64, "1/sqrt(d_k)")
    >>> round(d.logit_std, 2), round(d.gradient, 2)
    (1.1, 0.83)
    """
    task, arm = make_task(seed), model(scale, d_k, readout, backward=backward)
    table = logit_table(task, logit_matrix_transposed(initial_weights(seed, d_k)))
    S_all, largest, gradients, G = [], [], [], []
    for e in task.held_out:
        _, dS, S, P = question_gradient(question_scores(table, e), e, arm)
        S_all.extend(S)
        largest.append(max(P))
        gradients.append(math.sqrt(dot(dS, dS)))
        dS_X = matmul([dS], e.X)[0]  # |G_i| = c |x_q| |dS X|: G_i = c x_q^T (dS X) has rank 1
        G.append(arm.c * math.sqrt(dot(e.x_q, e.x_q) * dot(dS_X, dS_X)))
    top = sorted(G, reverse=True)[:len(G) // 10]
    return Diagnostics(math.sqrt(variance(S_all)), statistics.median(largest),
                       statistics.median(gradients), math.fsum(top) / math.fsum(G))


# ------------------------------------------------------------------ the measurements

class Plan(NamedTuple):
    """What one command measures."""
    scales: Tuple[str, ...]
    optimizers: Tuple[str, ...]
    d_ks: Tuple[int, ...]
    seeds: Tuple[int, ...]
    readout: str = "fixed"
    rates: str = RATES_FILE
    transfer: bool = False  # each arm at d_k[0]'s rate, and muP's SGD rule for 1/d_k
    logits: bool = False  # the logits at the first TARGET and after step LATE
    perturb: int = 0  # how many of PERTURBATIONS
    long: bool = False  # every miss again with the cap LONG
    summation: bool = False  # every run again with left-to-right sums
    per_question: bool = False  # the intervention: Adam on per-question unit gradients
    max_steps: int = MAX_STEPS  # the cap of every run but the long ones
    late: int = LATE  # the step of the second measurement of the logits
    backward: str = "library"  # softmax's backward pass in every run (--backward)


PUBLISHED = Plan(SCALES, ("sgd", "adam"), D_KS, HELD_OUT_SEEDS, "fixed", RATES_FILE, True,
                 True, len(PERTURBATIONS), True, True, True)  # what results.json holds


def _pointer(plan: Plan) -> bool:
    """The pointer-loss control runs with the fixed readout, SGD and both POINTER_SCALES."""
    return (plan.readout == "fixed" and "sgd" in plan.optimizers
            and all(s in plan.scales for s in POINTER_SCALES))


def _arms(plan: Plan) -> List[Tuple[str, str, int]]:
    return [(o, s, d_k) for o in plan.optimizers for s in plan.scales for d_k in plan.d_ks]


def _rates(plan: Plan) -> Dict[tuple, float]:
    """Every tuned rate the plan needs, read before any training (a missing one fails
    first).  Keys: (optimizer, scale, d_k), and ("pointer", scale, d_k)."""
    rates = {arm: tuned_rate(*arm, plan.readout, plan.rates) for arm in _arms(plan)}
    for s, d_k in [(s, d_k) for s in POINTER_SCALES for d_k in plan.d_ks]:
        if _pointer(plan):
            rates["pointer", s, d_k] = tuned_rate("sgd", s, d_k, "pointer", plan.rates)
        if plan.per_question and s in plan.scales:
            rates[PER_QUESTION, s, d_k] = tuned_rate(PER_QUESTION, s, d_k, "fixed", plan.rates)
    return rates


def _specs(plan: Plan, rates: Dict[tuple, float]) -> Dict[str, List[Spec]]:
    """Every run of the plan but the long ones, by the results.json list it goes to."""
    arms, seeds, late = _arms(plan), plan.seeds, plan.late if plan.logits else 0
    first = plan.d_ks[0]
    cap = plan.max_steps
    out = {"runs": [Spec(o, s, d, seed, rates[o, s, d], plan.readout, max_steps=cap, late=late,
                         logits=plan.logits) for o, s, d in arms for seed in seeds]}
    out["pointer"] = [Spec("sgd", s, d, seed, rates["pointer", s, d], "pointer", max_steps=cap)
                      for s in POINTER_SCALES for d in plan.d_ks for seed in seeds
                      if _pointer(plan)]
    out["transfer"] = [Spec(o, s, d, seed, rates[o, s, first], plan.readout, max_steps=cap,
                            logits=plan.logits) for o, s, d in arms for seed in seeds
                       if plan.transfer and d != first]
    out["mup"] = [Spec(o, s, d, seed, rates[o, s, first] * d / first, plan.readout, max_steps=cap)
                  for o, s, d in arms for seed in seeds
                  if plan.transfer and d != first and (o, s) == ("sgd", "1/d_k")]
    for k in PERTURBATIONS[:plan.perturb]:
        out[f"perturbed {k}"] = [Spec(o, s, d, seed, rates[o, s, d], plan.readout,
                                      init_factor=1 + k * 2.0 ** -52, max_steps=cap)
                                 for o, s, d in arms for seed in seeds]
    out["naive"] = [Spec(o, s, d, seed, rates[o, s, d], plan.readout, max_steps=cap,
                         summation="naive")
                    for o, s, d in arms for seed in seeds if plan.summation]
    out["per_question"] = [Spec(PER_QUESTION, s, d, seed, rates[PER_QUESTION, s, d],
                                max_steps=cap)
                           for s in plan.scales for d in plan.d_ks for seed in seeds
                           if (PER_QUESTION, s, d) in rates]
    return {kind: [spec._replace(backward=plan.backward) for spec in kind_specs]
            for kind, kind_specs in out.items()}


def _diagnostics_unit(unit: Tuple[str, int, int, str, str]) -> Diagnostics:
    scale, d_k, seed, readout, backward = unit
    return seed_diagnostics(seed, d_k, scale, readout, backward)


def _unit(unit):
    """One item of work: a Spec to train, or the diagnostics of (scale, d_k, seed, readout,
    backward)."""
    return outcome(unit) if isinstance(unit, Spec) else _diagnostics_unit(unit)


def _logit_records(spec: Spec, result) -> List[dict]:
    steps, at_target, at_late = result
    return [{"optimizer": spec.optimizer, "scale": spec.scale, "d_k": spec.d_k,
             "seed": spec.seed, "at": at, "step": step, **values._asdict()}
            for at, step, values in (("target", steps, at_target), ("late", spec.late, at_late))
            if values is not None]


def _settings(plan: Plan) -> dict:
    return {"d_model": D_MODEL, "items": ITEMS, "beta": BETA, "batch": BATCH,
            "held_out": HELD_OUT, "target": TARGET, "max_steps": plan.max_steps,
            "seeds": list(plan.seeds), "tuning_seeds": list(TUNING_SEEDS),
            "readout": plan.readout, "d_ks": list(plan.d_ks), "late": plan.late, "long": LONG,
            **_backward_setting(plan.backward)}


def measure(plan: Plan, jobs: int = 1, progress: Progress = None) -> dict:
    """Return every run of the plan as records (the lists of results.json), run by `jobs`
    processes in a fixed shuffled order (so that the estimate of the time left is fair);
    the records are the same for every jobs.  The misses of the main runs are run again
    with the cap LONG afterwards, if plan.long."""
    rates = _rates(plan)
    specs = _specs(plan, rates)
    units = [(kind, spec) for kind, kind_specs in specs.items() for spec in kind_specs]
    units += [("diagnostics", (s, d, seed, plan.readout, plan.backward)) for s in plan.scales
              for d in plan.d_ks for seed in plan.seeds]
    order = list(range(len(units)))
    random.Random("learning:order").shuffle(order)
    done = run_all(_unit, [units[i][1] for i in order], jobs, progress, "runs")
    results = dict(zip(order, done))
    out = {"settings": _settings(plan), "runs": [], "logits": [], "diagnostics": [],
           "pointer": [], "transfer": [], "transfer_logits": [], "mup": [], "perturbed": {},
           "naive": [], "per_question": [], "long": []}
    for i, (kind, spec) in enumerate(units):
        _file(out, kind, spec, results[i])
    misses = [Spec(r["optimizer"], r["scale"], r["d_k"], r["seed"], r["lr"], plan.readout,
                   max_steps=LONG, backward=plan.backward)
              for r in out["runs"] if r["steps"] is None and plan.long]
    long = run_all(outcome, misses, jobs, progress, "long runs")
    out["long"] = [_record(spec, result[0]) for spec, result in zip(misses, long)]
    return out


def _file(out: dict, kind: str, spec, result) -> None:
    """Put one result into its list of out."""
    if kind == "diagnostics":
        out["diagnostics"].append(dict(zip(("scale", "d_k", "seed"), spec[:3]),
                                       **result._asdict()))
    elif kind.startswith("perturbed"):
        out["perturbed"].setdefault(kind.split()[1], []).append(_record(spec, result[0]))
    else:
        out[kind].append(_record(spec, result[0]))
        logit_list = {"runs": "logits", "transfer": "transfer_logits"}.get(kind)
        if logit_list:
            out[logit_list] += _logit_records(spec, result)


# ------------------------------------------------------------------------ statistics

class Summary(NamedTuple):
    """A median over seeds with its order-statistic interval; None marks a miss."""
    median: Optional[float]  # None: the median falls on a miss (beyond the cap)
    low: Optional[float]  # the interval of stats.median_interval: its ends are order
    high: Optional[float]  # statistics (None: that end is a miss)
    coverage: float  # P(the interval holds the true median) for continuous data, this n
    misses: int
    n: int


def summarise(values: Sequence[Optional[float]]) -> Summary:
    """Return the median of values and the distribution-free interval of
    stats.median_interval, with None (a miss) ranked above every number.

    >>> summarise([5, 6, 6, 7, 8, 9, 9, 10, None, None])
    Summary(median=8.5, low=6.0, high=None, coverage=0.9785, misses=2, n=10)
    """
    ranked = [math.inf if v is None else float(v) for v in values]
    top = max([v for v in ranked if v < math.inf], default=0.0) + 1.0  # above every number
    m = median_interval([top if v == math.inf else v for v in ranked])
    median = statistics.median(ranked)  # inf when a middle value is a miss
    return Summary(None if median == math.inf else median, None if m.low == top else m.low,
                   None if m.high == top else m.high, m.coverage, ranked.count(math.inf),
                   len(ranked))


def paired(reference: Sequence[Optional[int]], other: Sequence[Optional[int]]) -> Dict[str, int]:
    """Return, seed by seed, how often `other` is slower than `reference`, faster, tied, or
    both missed (which decides nothing).

    >>> paired([None, 5, None, 4, 7], [None, None, 3, 4, 9])
    {'slower': 2, 'faster': 1, 'tied': 1, 'both missed': 1}
    """
    counts = {"slower": 0, "faster": 0, "tied": 0, "both missed": 0}
    for r, o in zip(reference, other):
        if r is None and o is None:
            counts["both missed"] += 1
        elif o is None or (r is not None and o > r):
            counts["slower"] += 1
        elif r is None or o < r:
            counts["faster"] += 1
        else:
            counts["tied"] += 1
    return counts


def sign_test(counts: Dict[str, int]) -> float:
    """Return the two-sided sign test's p-value of paired counts: 2 P(B <= min(slower,
    faster)), B ~ Binomial(slower + faster, 1/2), at most 1 (ties and double misses set
    aside).

    >>> round(sign_test({"slower": 10, "faster": 0}), 6), sign_test({"slower": 3, "faster": 3})
    (0.001953, 1.0)
    """
    n, k = counts["slower"] + counts["faster"], min(counts["slower"], counts["faster"])
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tail))


def coverage(n: int) -> Fraction:
    """Return P(l <= B <= n - l), B ~ Binomial(n, 1/2), exactly: the probability that the
    interval of stats.median_interval over n values, [x_(l), x_(n+1-l)], holds the median
    of a continuous distribution (ties, as among step counts, can only raise it).

    >>> coverage(10), coverage(5)
    (Fraction(501, 512), Fraction(15, 16))
    """
    l = int(median_interval([float(i) for i in range(n)]).low) + 1  # x_(l) is the value l - 1
    return Fraction(sum(math.comb(n, i) for i in range(l, n - l + 1)), 2 ** n)


def _percent_floor(p: Fraction) -> str:
    """p as a percent with two decimals, rounded down: a lower bound is never rounded up."""
    hundredths = math.floor(p * 10000)
    return f"{hundredths // 100}.{hundredths % 100:02d}%"


def coverage_text(ns: Sequence[int]) -> str:
    """Return the coverage of each number of seeds in ns, the most seeds first.

    >>> coverage_text([10, 9, 10, 5])
    '97.85% over 10 seeds, 96.09% over 9, 93.75% over 5'
    """
    counts = sorted(set(ns), reverse=True)
    return ", ".join(f"{_percent_floor(coverage(n))} over {n}" + (" seeds" if i == 0 else "")
                     for i, n in enumerate(counts))


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
