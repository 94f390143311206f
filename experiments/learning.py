"""What each logit scale does while a small attention model learns: the command line.

    python3 experiments/learning.py -h

trains one bilinear attention model (learning_model.py) on associative recall with the
scales c = 1/sqrt(d_k) and 1/d_k (with 1/ln(d_k) and 1 too under --scales all), each at
its own tuned rate (learning_measure.py), and prints the tables (learning_tables.py).
docs/experiments.md is the study: what is measured, the results, and their conditions.

Public API (`__all__`), for scripts/build.py and the tests:
    docs_data()                  every table of the docs, from the committed records
    markdown_values(data)        the inline numbers of the docs, by marker name
    markdown_blocks(data)        the generated Markdown tables, by marker name
    main(argv)                   the command line; returns the exit status
"""

import argparse  # the command line
import json  # the records written by --publish and --json
import os  # the paths of the stored files; os.times, the CPU time of the pool's workers
import sys  # sys.path when run as a script; stdout, stderr
import time  # the wall time
from typing import Dict, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments import learning_tables as tables
from experiments.learning_measure import (D_KS, FINDINGS, HELD_OUT_SEEDS, LATE, LONG,
                                          PERTURBATIONS, PUBLISHED, RATES_FILE, RESULTS_FILE,
                                          TUNING_SEEDS, Plan, arm_key, default_arms, load,
                                          measure, sweep)
from experiments.learning_model import BACKWARDS, OPTIMIZERS, READOUTS, SCALES, TARGET

__all__ = ["docs_data", "markdown_values", "markdown_blocks", "main"]

DEFAULT_SCALES = ("1/sqrt(d_k)", "1/d_k")  # the two cheap arms: --scales all adds two
PROG = "python3 experiments/learning.py"
FRESH_SEEDS = 1000  # the most seeds a command takes from another --first-seed


# ------------------------------------------------------------------ the docs' data

def docs_data() -> dict:
    """Return every table the docs need, from the committed records (results.json) and
    rates (tuned_rates.json), without training: the build takes seconds.

    >>> data = docs_data()
    >>> len(data["table"]) == len(OPTIMIZERS) * len(SCALES) * len(D_KS)
    True
    """
    results, rates = load(RESULTS_FILE), load(RATES_FILE)
    arms = rates["arms"]
    for r in results["runs"]:
        if arms[arm_key((r["optimizer"], "fixed", r["scale"], r["d_k"]))]["lr"] != r["lr"]:
            raise ValueError("docs_data: results.json was made with other rates than "
                             "tuned_rates.json; run `python3 experiments/learning.py --publish`")
    data = tables.tables(results)
    data["sweep"] = tables.sweep_summary(rates)
    data["findings"] = {name: _finding(load(path)) for name, path in FINDINGS.items()}
    return data


def _finding(results: dict) -> dict:
    """The tables the docs show of a finding's records: its settings, the pointer control
    and the per-question intervention."""
    data = tables.tables(results)
    return {key: data[key] for key in ("settings", "pointer", "per_question")}


def markdown_values(data: dict) -> Dict[str, str]:
    """Return the inline numbers of the prose, by marker name (learning.*)."""
    return tables.values(data)


def markdown_blocks(data: dict) -> Dict[str, str]:
    """Return the generated Markdown tables, by marker name (learning-*)."""
    return tables.blocks(data)


# ------------------------------------------------------------------- the command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Train W_Q, W_K of one attention model on associative recall with each "
                    "logit scale at its own tuned rate; print steps to 90% held-out accuracy "
                    "(median [interval] over seeds), the seeds paired against 1/sqrt(d_k) "
                    "and the model at initialisation. With SGD and scales that include "
                    "1/sqrt(d_k) and 1 (for example --scales all), also the pointer-loss "
                    "control. docs/experiments.md explains every table.")
    p.add_argument("--scales", metavar="NAME[,NAME...]|all",
                   help=f"the scales, from {', '.join(SCALES)}; or all (default: "
                        f"{','.join(DEFAULT_SCALES)}; all for --sweep)")
    p.add_argument("--optimizer", choices=OPTIMIZERS + ("both",), default="both")
    p.add_argument("--seeds", type=int, default=len(HELD_OUT_SEEDS),
                   help="how many seeds, from --first-seed (default %(default)s: the held-out "
                        "seeds; at most that many from 100)")
    p.add_argument("--dk", type=int, nargs="+", default=list(D_KS), metavar="D_K",
                   help="the d_k values (default %(default)s)")
    p.add_argument("--readout", choices=READOUTS, default="fixed",
                   help="fixed: cross-entropy of beta P V; pointer: -log p_j* (the control)")
    p.add_argument("--rates", default=RATES_FILE, metavar="PATH",
                   help="the tuned rates to read, or with --sweep to write (default: the "
                        "committed experiments/tuned_rates.json)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the steps table's runs to PATH, one record per run")
    _add_findings(p)
    _add_measurements(p)
    _add_commands(p)
    return p


def _add_measurements(p: argparse.ArgumentParser) -> None:
    """The options that add measurements to the steps table."""
    p.add_argument("--transfer", action="store_true",
                   help="also run each arm at the rate tuned at the smallest d_k, and SGD "
                        "with 1/d_k at muP's rule (that rate times d_k / smallest d_k)")
    p.add_argument("--logits", action="store_true",
                   help=f"also measure the logits at the first {TARGET:.0%}% and after step "
                        f"{LATE} (runs go on to step {LATE}); with --transfer, at the first "
                        f"{TARGET:.0%}% at the carried rate too")
    p.add_argument("--perturb", type=int, default=0, metavar="K",
                   help="also run with the initial weights times 1 + k 2^-52, k = 1..K (K <= 7)")
    p.add_argument("--long", action="store_true",
                   help=f"also run every miss again with a cap of {LONG} steps")
    p.add_argument("--summation", action="store_true",
                   help="also run every arm with the model's sums taken left to right")
    p.add_argument("--per-question", action="store_true",
                   help="also train with Adam on per-question normalised gradients "
                        "(scales 1/sqrt(d_k) and 1)")


def _add_findings(p: argparse.ArgumentParser) -> None:
    """The options of the findings measured beside the published tables."""
    p.add_argument("--first-seed", type=int, default=HELD_OUT_SEEDS[0], metavar="S",
                   help="the first seed (default %(default)s); another start gives fresh seeds, "
                        "never used for tuning or the published tables")
    p.add_argument("--backward", choices=BACKWARDS, default="library",
                   help="softmax's backward pass: the library's softmax_backward, or the "
                        "textbook p * (g - <p, g>) (tune its rates with --sweep --rates PATH)")
    p.add_argument("--records", metavar="PATH",
                   help="also write every record of the command to PATH, in the form of "
                        "experiments/results.json")


def _check_findings(parser: argparse.ArgumentParser, args) -> None:
    """The rule of --first-seed and --seeds beyond the held-out seeds."""
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    if set(seeds) & set(TUNING_SEEDS):
        parser.error(f"--first-seed: the seeds {tables.seed_range(seeds)} include the tuning "
                     f"seeds {tables.seed_range(TUNING_SEEDS)}")


def _add_commands(p: argparse.ArgumentParser) -> None:
    """--sweep and --publish, which write the committed files, and --jobs."""
    p.add_argument("--sweep", action="store_true",
                   help="redo the rate search on seeds 0-4 for the chosen scales, optimizers "
                        "and d_k, and write it to --rates")
    p.add_argument("--publish", action="store_true",
                   help="everything, for all scales and both optimizers at the default d_k "
                        "and seeds; overwrite experiments/results.json, which the docs are "
                        "built from")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="run N training runs at a time, in N processes (the output is the "
                        "same for every N; default %(default)s)")


def _scales(parser: argparse.ArgumentParser, text: Optional[str], sweep: bool) -> Tuple[str, ...]:
    if text is None:
        return SCALES if sweep else DEFAULT_SCALES
    names = SCALES if text == "all" else tuple(dict.fromkeys(text.split(",")))
    unknown = [n for n in names if n not in SCALES]
    if unknown:
        parser.error(f"--scales: unknown {', '.join(map(repr, unknown))}; choose from "
                     f"{', '.join(SCALES)}, or all (quote the names in a shell)")
    return tuple(s for s in SCALES if s in names)  # in the paper's order


def _check(parser: argparse.ArgumentParser, args) -> None:
    """The values argparse cannot check by type alone, each with its own message."""
    if not 1 <= args.seeds <= (len(HELD_OUT_SEEDS) if args.first_seed == HELD_OUT_SEEDS[0]
                               else FRESH_SEEDS):
        parser.error(f"--seeds takes 1 to {len(HELD_OUT_SEEDS)} (the held-out seeds), or to "
                     f"{FRESH_SEEDS} with another --first-seed")
    if min(args.dk) < 2:
        parser.error("--dk values must be at least 2 (1/ln(d_k) needs ln d_k > 0)")
    if not 0 <= args.perturb <= len(PERTURBATIONS):
        parser.error(f"--perturb takes 0 to {len(PERTURBATIONS)}")
    if args.jobs < 1:
        parser.error("--jobs takes 1 or more")
    defaults = (tuple(dict.fromkeys(args.dk)), args.seeds, args.readout,
                os.path.abspath(args.rates), args.optimizer, args.first_seed, args.backward)
    if args.publish and (defaults != (D_KS, len(HELD_OUT_SEEDS), "fixed", RATES_FILE, "both",
                                      HELD_OUT_SEEDS[0], "library")
                         or args.scales not in (None, "all") or args.sweep):
        parser.error("--publish runs the committed settings only: all scales, both "
                     "optimizers, and the default --dk, --seeds, --first-seed, --readout, "
                     "--backward and --rates")
    _check_files(parser, args)


def _check_files(parser: argparse.ArgumentParser, args) -> None:
    """Every file the command will write can be written, and the rates it reads are a rates
    file: checked before the runs, which would otherwise be lost."""
    writes = [("--json", args.json), ("--records", args.records),
              ("--publish", RESULTS_FILE if args.publish else None),
              ("--rates", args.rates if args.sweep else None)]
    for flag, path in writes:
        why = None if path is None else _cannot_write(path)
        if why:
            parser.error(f"{flag}: cannot write {path}: {why}")
    if not args.sweep or os.path.exists(args.rates):  # a sweep adds its arms to the file
        why = _not_rates(args.rates)
        if why:
            parser.error(f"--rates: cannot read tuned rates from {args.rates}: {why}")


def _cannot_write(path: str) -> Optional[str]:
    """Why a file cannot be written at path, or None if it can."""
    if not path:
        return "the path is empty"
    folder = os.path.dirname(path) or os.curdir
    if os.path.isdir(path):
        return "it is a folder"
    if not os.path.exists(folder):
        return f"there is no folder {folder}"
    if not os.path.isdir(folder):
        return f"{folder} is not a folder"
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        return "permission denied"
    return None


def _not_rates(path: str) -> Optional[str]:
    """Why path holds no tuned rates, or None if it does."""
    try:
        stored = load(path)
    except OSError as error:
        return error.strerror or str(error)
    except ValueError as error:  # json.JSONDecodeError, or text that is not UTF-8
        return f"not JSON ({error})"
    if not isinstance(stored, dict) or not isinstance(stored.get("arms"), dict):
        return 'no "arms" in it (--sweep writes a rates file)'
    return None


def _plan(parser: argparse.ArgumentParser, args) -> Plan:
    """The measurements of the command, or a usage error."""
    _check(parser, args)
    _check_findings(parser, args)
    if args.publish:
        return PUBLISHED
    optimizers = OPTIMIZERS if args.optimizer == "both" else (args.optimizer,)
    seeds = tuple(range(args.first_seed, args.first_seed + args.seeds))
    return Plan(_scales(parser, args.scales, args.sweep), optimizers,
                tuple(dict.fromkeys(args.dk)), seeds, args.readout,
                args.rates, args.transfer, args.logits, args.perturb, args.long,
                args.summation, args.per_question, backward=args.backward)


def _progress_printer():
    """Print progress to stderr: one line redrawn on a terminal, else a line every 10 s."""
    start, tty, last = time.monotonic(), sys.stderr.isatty(), [0.0]

    def progress(message: str) -> None:
        now = time.monotonic() - start
        if tty:
            sys.stderr.write(f"\r[{now:6.0f} s] {message[:90]:90}")
        elif now - last[0] >= 10.0:
            sys.stderr.write(f"[{now:6.0f} s] {message}\n")
            last[0] = now
        sys.stderr.flush()
    return progress


def _clear_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r{' ' * 100}\r")


def _write_json(path: str, value, sort_keys: bool = False) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1, sort_keys=sort_keys)
            f.write("\n")
    except OSError as error:  # checked before the runs: a disk full, a folder gone since
        sys.exit(f"{PROG}: cannot write {path}: {error.strerror or error}")


def _announce(path: str, what: str) -> None:
    """Say which file a command will write, before it runs."""
    committed = os.path.abspath(path) in (RATES_FILE, RESULTS_FILE)
    name = os.path.relpath(os.path.abspath(path)) if committed else path
    sys.stderr.write(f"{what}: will overwrite {name}"
                     + (" (committed in the repository)\n" if committed else "\n"))


def _sweep(parser: argparse.ArgumentParser, args, plan: Plan, progress) -> None:
    """The rate search of the command line, written to --rates (never partly to the
    committed file: a private file gathers its sweeps instead)."""
    arms = default_arms(plan.d_ks, plan.scales, plan.optimizers)
    committed = os.path.abspath(args.rates) == RATES_FILE
    if committed and arms != default_arms():
        parser.error("a partial sweep would replace the committed rates file; write it "
                     "elsewhere with --rates PATH (then run with --rates PATH)")
    _announce(args.rates, "--sweep")
    result = sweep(arms, TUNING_SEEDS, args.jobs, progress, args.backward)
    if not committed and os.path.exists(args.rates):
        result["arms"] = {**load(args.rates).get("arms", {}), **result["arms"]}
    _write_json(args.rates, result, sort_keys=True)
    _clear_progress()
    rows = [[key, tables.fmt_rate(arm["lr"]), str(arm["total_steps"])]
            for key, arm in result["arms"].items()]
    print("\n".join(tables.text_table(["arm", "lr", "total steps"], rows)))


def _experiment(parser: argparse.ArgumentParser, args, plan: Plan, progress) -> None:
    """Run the measurements of the command, write what it asks for, print the report."""
    if args.publish:
        _announce(RESULTS_FILE, "--publish")
    try:
        results = measure(plan, args.jobs, progress)
    except ValueError as error:  # a rate that was never tuned
        parser.error(str(error))
    if args.publish:
        _write_json(RESULTS_FILE, results)
    if args.json is not None:
        _write_json(args.json, results["runs"])
    if args.records:
        _write_json(args.records, results)
    _clear_progress()
    print("\n".join(tables.report(tables.tables(results))))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the experiment from the command line; return 0 (see
    `python3 experiments/learning.py -h`; a usage error exits with 2, Ctrl-C with 130)."""
    try:
        _run(argv)
    except KeyboardInterrupt as stop:  # Interrupted, from the runs, says how far they got
        _clear_progress()
        how_far = f" after {stop}" if str(stop) else ""
        sys.stderr.write(f"{PROG}: interrupted{how_far}\n")
        return 130
    return 0


def _run(argv: Optional[Sequence[str]]) -> None:
    """The command: the options checked, the work done, its time on stderr."""
    parser = _parser()
    args = parser.parse_args(argv)
    plan = _plan(parser, args)
    start, wall = os.times(), time.monotonic()
    if args.sweep:
        _sweep(parser, args, plan, _progress_printer())
    else:
        _experiment(parser, args, plan, _progress_printer())
    end = os.times()  # the pool's workers have ended: their CPU time is counted
    cpu = sum(end[:4]) - sum(start[:4])  # user and system, this process and its children
    sys.stderr.write(f"CPU time {cpu:.1f} s, wall {time.monotonic() - wall:.1f} s, "
                     f"jobs {args.jobs} (Python {sys.version.split()[0]})\n")


if __name__ == "__main__":
    sys.exit(main())
