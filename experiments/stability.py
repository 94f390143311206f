"""The logit scale during training: the command line.

    python3 experiments/stability.py -h

trains the recall model of learning_model.py with each logit function of
stability_model.py (1/sqrt(d_k), 1/d_k, QK-norm, soft-cap C = 50; --arms all adds
unscaled, QK-norm with its gains fixed at 1, soft-cap C = 10) at constant rates 2^k, one
per octave, for 200 steps each (stability_measure.py), and prints per arm and d_k the
best rate, the collapse edge, the band of good rates and Wortsman et al.'s LR sensitivity,
with the arms compared seed by seed (stability_tables.py).  docs/stability.md is the study.

Public API (`__all__`), for scripts/build.py and the tests:
    RECORDS, TIMING              the committed records' paths, and their measured times
    docs_data()                  every table of the page, from the committed records
    markdown_values(data)        the inline numbers of the pages, by marker name
    markdown_blocks(data)        the generated Markdown tables, by marker name
    main(argv)                   the command line; returns the exit status
"""

import argparse  # the command line
import json  # the timing file
import os  # paths; os.times, the CPU time of the pool's workers
import sys  # sys.path when run as a script; stdout, stderr
import time  # the wall time; the date of a publish
from typing import Dict, List, Optional, Sequence

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments import stability_tables as tables
from experiments.stability_measure import (D_KS, HERE, PUBLISHED, SEEDS, Plan, Stopped, dumps,
                                           load, measure)
from experiments.stability_model import ARMS, DEFAULT_ARMS, EXTRA_ARMS

__all__ = ["RECORDS", "TIMING", "docs_data", "markdown_values", "markdown_blocks", "main"]

RECORDS = {name: os.path.join(HERE, name) for name in PUBLISHED}
TIMING = os.path.join(HERE, "stability_timing.json")  # each publish's measured time
DEFAULT_RATES = {"adam": (-8, 2), "sgd": (0, 10)}  # the default run's octaves: 11 rates
DEFAULT_SEEDS = 3
LIMIT_OCTAVE = 20  # rates from 2^-20 to 2^20
PROG = "python3 experiments/stability.py"


# ------------------------------------------------------------------ the docs' data

def docs_data() -> dict:
    """Return every table the page needs, from the committed records, without training.

    >>> sorted(docs_data()["plans"])
    ['adam', 'adam-all', 'sgd']
    """
    loaded = {name: load(path) for name, path in RECORDS.items()}
    timing = load(TIMING) if os.path.exists(TIMING) else {}
    return tables.tables({"adam": loaded["stability.json"],
                          "adam-all": loaded["stability_all.json"],
                          "sgd": loaded["stability_sgd.json"]}, timing)


def markdown_values(data: dict) -> Dict[str, str]:
    """Return the inline numbers of the pages, by marker name (stability.*)."""
    return tables.values(data)


def markdown_blocks(data: dict) -> Dict[str, str]:
    """Return the generated Markdown tables, by marker name (stability-*)."""
    return tables.blocks(data)


# ------------------------------------------------------------------- the command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Train W_Q, W_K of one attention model on associative recall with each "
                    "logit function at constant rates 2^k, one per octave, 200 steps each; "
                    "print per arm and d_k the best rate, the collapse edge, the band of "
                    "good rates and the LR sensitivity (median [interval] over seeds), and "
                    "each arm against 1/sqrt(d_k) seed by seed. docs/stability.md explains "
                    "every table.")
    p.add_argument("--arms", default="default", metavar="default|all|NAME[,NAME...]",
                   help=f"the arms: default ({', '.join(DEFAULT_ARMS)}), all (adds "
                        f"{', '.join(EXTRA_ARMS)}), or names from these")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    p.add_argument("--dk", type=int, nargs="+", metavar="D_K",
                   help="the d_k values (default 16; --publish: 16 64 256)")
    p.add_argument("--seeds", type=int, metavar="N",
                   help=f"how many held-out seeds, from 100 (default {DEFAULT_SEEDS}; "
                        f"--publish: {len(SEEDS)})")
    p.add_argument("--rates", type=int, nargs=2, metavar=("LOW", "HIGH"),
                   help="the octaves: rates 2^LOW ... 2^HIGH (default -8 2 with Adam, 0 10 "
                        "with SGD; --publish: -10 2 with Adam, -2 10 with SGD)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the records of every run to PATH")
    p.add_argument("--publish", action="store_true",
                   help="run the committed plan and overwrite its records: "
                        "experiments/stability.json (Adam, the default arms), with --arms "
                        "all experiments/stability_all.json (the three arms it adds), with "
                        "--optimizer sgd experiments/stability_sgd.json")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="run N training runs at a time, in N processes (the output is the "
                        "same for every N; default %(default)s)")
    return p


def _arms(parser: argparse.ArgumentParser, text: str) -> tuple:
    if text in ("default", "all"):
        return DEFAULT_ARMS if text == "default" else DEFAULT_ARMS + EXTRA_ARMS
    names = tuple(dict.fromkeys(text.split(",")))
    unknown = [n for n in names if n not in ARMS]
    if unknown:
        parser.error(f"--arms: unknown {', '.join(map(repr, unknown))}; choose from "
                     f"{', '.join(ARMS)}, default or all")
    return tuple(a for a in ARMS if a in names)  # in the page's order


def _published(parser: argparse.ArgumentParser, args) -> str:
    """The name of the record --publish writes, or a usage error."""
    if (args.dk, args.seeds, args.rates) != (None, None, None):
        parser.error("--publish runs the committed plan: leave out --dk, --seeds and --rates")
    if args.arms not in ("default", "all"):
        parser.error("--publish takes --arms default or all")
    if args.arms == "all" and args.optimizer == "sgd":
        parser.error("--publish --arms all is Adam's record; SGD's has the default arms")
    return ("stability_all.json" if args.arms == "all" else
            "stability_sgd.json" if args.optimizer == "sgd" else "stability.json")


def _plan(parser: argparse.ArgumentParser, args) -> Plan:
    """The sweep of the command, or a usage error (each rule with its own message)."""
    if args.jobs < 1:
        parser.error("--jobs takes 1 or more")
    if args.seeds is not None and not 1 <= args.seeds <= len(SEEDS):
        parser.error(f"--seeds takes 1 to {len(SEEDS)}")
    if args.dk is not None and min(args.dk) < 1:
        parser.error("--dk values must be at least 1")
    if args.rates is not None and not -LIMIT_OCTAVE <= args.rates[0] <= args.rates[1] \
            <= LIMIT_OCTAVE:
        parser.error(f"--rates takes LOW <= HIGH, both from -{LIMIT_OCTAVE} to {LIMIT_OCTAVE}")
    arms = _arms(parser, args.arms)
    if args.publish:
        return PUBLISHED[_published(parser, args)]
    low, high = args.rates or DEFAULT_RATES[args.optimizer]
    return Plan(args.optimizer, arms, tuple(dict.fromkeys(args.dk or (D_KS[0],))),
                SEEDS[:args.seeds or DEFAULT_SEEDS], low, high)


def _writable(parser: argparse.ArgumentParser, path: str) -> None:
    """Refuse an output path before any work: a folder, or a folder that does not exist."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        parser.error(f"--json: cannot write {path} (it must be a file in an existing, "
                     "writable folder)")


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


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _record_time(name: str, plan: Plan, jobs: int, cpu: float, wall: float,
                 load_average: List[float]) -> None:
    """Keep the measured time of the publish that wrote `name` in TIMING."""
    timing = load(TIMING) if os.path.exists(TIMING) else {}
    timing[name] = {"cpu_seconds": round(cpu, 1), "wall_seconds": round(wall, 1),
                    "jobs": jobs, "runs": len(plan.arms) * len(plan.d_ks) * len(plan.seeds)
                    * (plan.high - plan.low + 1), "python": sys.version.split()[0],
                    "load_average": [round(v, 2) for v in load_average],
                    "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}
    _write(TIMING, json.dumps(timing, indent=1, sort_keys=True) + "\n")


def _load_average() -> List[float]:
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else []


def _run(args, plan: Plan, name: Optional[str]) -> List[str]:
    """Run the sweep, write what the command asks for, return the report."""
    if name:
        sys.stderr.write(f"--publish: will overwrite experiments/{name} (committed in the "
                         "repository)\n")
    start, wall, load_start = os.times(), time.monotonic(), _load_average()
    records = measure(plan, args.jobs, _progress_printer())
    end = os.times()  # the pool's workers have ended: their CPU time is counted
    cpu, wall = sum(end[:4]) - sum(start[:4]), time.monotonic() - wall
    _clear_progress()
    if name:
        _write(RECORDS[name], dumps(records))
        _record_time(name, plan, args.jobs, cpu, wall, load_start[:1] + _load_average()[:1])
    if args.json:
        _write(args.json, dumps(records))
    sys.stderr.write(f"CPU time {cpu:.1f} s, wall {wall:.1f} s, jobs {args.jobs} "
                     f"(Python {sys.version.split()[0]})\n")
    joined = {"run": records}
    if name == "stability_all.json":  # its reference, 1/sqrt(d_k), is stability.json's
        joined["adam"] = load(RECORDS["stability.json"])
    return tables.report(tables.tables(joined, {}))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the experiment from the command line; return 0 (see
    `python3 experiments/stability.py -h`; a usage error exits with 2, Ctrl-C with 130)."""
    parser = _parser()
    args = parser.parse_args(argv)
    plan = _plan(parser, args)
    name = _published(parser, args) if args.publish else None
    if args.json:
        _writable(parser, args.json)
    try:
        print("\n".join(_run(args, plan, name)))
    except Stopped as stopped:
        _clear_progress()
        sys.stderr.write(f"{PROG}: interrupted after {stopped.done} of {stopped.total} "
                         "runs; nothing written\n")
        return 130
    except KeyboardInterrupt:
        _clear_progress()
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
