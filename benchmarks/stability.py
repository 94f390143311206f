"""Print the costs of the logit-scale study (experiments/stability.py) against its budgets.

    python3 benchmarks/stability.py              # the cost per step; the default run's CPU time
    python3 benchmarks/stability.py --publish    # also the published sweep, --jobs 2: ~30 min
    python3 benchmarks/stability.py --steps 20   # the cost per step from 20 steps per arm, d_k

Budgets (issue 31): `python3 experiments/stability.py` at its defaults within 90 s of CPU
time; `--publish` (Adam, the four default arms) within 30 min of wall time with --jobs 2
on 2 cores.  CPU time is the children's user + sys (resource.getrusage), which other
processes on a shared machine do not add to; wall time is printed with the load average
seen at the start and the end, because on a shared machine it is the load that sets it.
The cost per step is CPU time in this process (time.process_time), per arm and d_k.
--publish writes its records to a temporary file (never over the committed one) and says
whether they are the committed bytes.
"""

import argparse  # --publish, --steps
import os  # getloadavg, paths
import resource  # the CPU time of a child
import subprocess  # the experiment as a child process
import sys  # executable, path, version
import tempfile  # --publish's records
import time  # wall time; process_time per step

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments.stability_measure import D_KS, PUBLISHED
from experiments.stability_model import ARMS, train

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "experiments", "stability.py")
PROG = "python3 benchmarks/stability.py"
DEFAULT_BUDGET = 90.0  # s of CPU time
PUBLISH_BUDGET = 30 * 60.0  # s of wall time, --jobs 2 on 2 cores


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "n/a"


def _child(arguments) -> tuple:
    """Run the experiment as a child: (CPU s of the child and its workers, wall s, load at
    the start, load at the end)."""
    before, load = resource.getrusage(resource.RUSAGE_CHILDREN), _load()
    start = time.monotonic()
    subprocess.run([sys.executable, SCRIPT] + arguments, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, load, _load()


def _verdict(value: float, budget: float) -> str:
    return "within" if value <= budget else "MISSED"


def per_step(steps: int) -> None:
    """The CPU time of one training step, per arm and d_k (Adam at rate 2^-4)."""
    print(f"cost per step (CPU ms, {steps} steps each, Adam at 2^-4):")
    print("  arm           " + "".join(f"d_k = {d:<6}" for d in D_KS))
    for arm in ARMS:
        cells = []
        for d_k in D_KS:
            start = time.process_time()
            train(arm, d_k, 100, "adam", 2.0 ** -4, steps=steps, every=steps + 1)
            cells.append(f"{(time.process_time() - start) / steps * 1000:<12.2f}")
        print(f"  {arm:<14}" + "".join(cells))


def default_run() -> None:
    cpu, wall, start, end = _child([])
    print(f"python3 experiments/stability.py: CPU {cpu:.1f} s ({_verdict(cpu, DEFAULT_BUDGET)} "
          f"the budget of {DEFAULT_BUDGET:.0f} s), wall {wall:.1f} s, load average {start} at "
          f"the start, {end} at the end")


def publish_run() -> None:
    plan = PUBLISHED["stability.json"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "stability.json")
        cpu, wall, start, end = _child(
            ["--dk", *map(str, plan.d_ks), "--seeds", str(len(plan.seeds)), "--rates",
             str(plan.low), str(plan.high), "--jobs", "2", "--json", path])
        with open(path, "rb") as f, open(os.path.join(ROOT, "experiments", "stability.json"),
                                          "rb") as g:
            same = f.read() == g.read()
    print(f"the published sweep, --jobs 2: wall {wall / 60:.1f} min "
          f"({_verdict(wall, PUBLISH_BUDGET)} the budget of 30 min), CPU {cpu / 60:.1f} min, "
          f"load average {start} at the start, {end} at the end, on {os.cpu_count()} cores; "
          f"{'the committed bytes' if same else 'NOT the committed bytes'}")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv=None) -> int:
    """Print the figures; return 0 (a usage error exits with 2, Ctrl-C with 130)."""
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--publish", action="store_true",
                        help="also run the published sweep with --jobs 2 (about 30 min)")
    parser.add_argument("--steps", type=int, default=10, metavar="N",
                        help="steps per arm and d_k for the cost per step (default 10)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps takes 1 or more")
    try:
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
              f"{_load()}")
        per_step(args.steps)
        default_run()
        if args.publish:
            publish_run()
    except KeyboardInterrupt:  # the figures printed so far stand; the rest is not measured
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
