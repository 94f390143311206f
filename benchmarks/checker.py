"""Print the wall time of the checker's random battery in every mode, on a right plain-Python
answer (the base readers of tests/readers), against its budget of 10 s.

    python3 benchmarks/checker.py [--cases 200] [--repeat 3] [--modes attention,softmax,...]

Each run is `python3 interview/check.py FILE [--MODE] --cases N`, as a reader would type it;
the battery's time is the wall time from the line of the last named case to the battery's
own line (its cases drawn, called twice each, judged; nothing to shrink on a right answer),
and the run's time is the whole command's.  The best and the median of the repeats are
printed, then the load average, which a shared machine's figures depend on.
"""

import argparse  # the command line
import os  # paths, the load average
import signal  # Ctrl-C ends the run with one line
import statistics  # the median
import subprocess  # the checker, as a reader runs it
import sys  # the interpreter, stderr
import time  # wall time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "interview", "check.py")
READERS = os.path.join(ROOT, "tests", "readers")
BUDGET = 10.0  # seconds of wall time for the whole battery of one mode (issue 30)
RIGHT = {  # mode -> the right plain-Python reader it is measured on, and its flag
    "attention": ("reader_lists.py", []),
    "softmax": ("reader_lists.py:softmax", ["--softmax"]),
    "backward": ("reader_backward.py", ["--backward"]),
    "online": ("reader_online.py", ["--online"]),
    "mha": ("reader_mha.py", ["--mha"]),
}

__all__ = ["time_run", "main"]


def time_run(mode: str, cases: int) -> tuple:
    """(the battery's wall time, the whole run's) of one run of the checker, in seconds;
    RuntimeError when the run does not end with the battery agreeing."""
    spec, flags = RIGHT[mode]
    command = [sys.executable, CHECK, os.path.join(READERS, spec), *flags, "--cases",
               str(cases)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, cwd=ROOT)
    named = battery = None
    try:
        for line in process.stdout:
            now = time.perf_counter()
            if line.startswith("random battery"):
                battery = now
                said = line.strip()
            elif battery is None:
                named = now
        status = process.wait()
    finally:  # Ctrl-C: the checker stops too, and is waited for
        process.kill()
        process.wait()
        process.stdout.close()
    whole = time.perf_counter() - start
    if status != 0 or battery is None or not said.endswith(f"{cases} cases agree"):
        raise RuntimeError(f"{mode}: the run did not agree (exit status {status})")
    return battery - named, whole


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _stop(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    parser = _Parser(prog="python3 benchmarks/checker.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200, help="the battery's cases "
                        "(default 200, the checker's own)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each mode (default 3)")
    parser.add_argument("--modes", default=",".join(RIGHT), help="of " + ",".join(RIGHT))
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    if not set(modes) <= set(RIGHT):
        parser.error(f"--modes: {', '.join(sorted(set(modes) - set(RIGHT)))} is not one of "
                     f"{', '.join(RIGHT)}")
    if args.cases < 1:
        parser.error(f"--cases must be at least 1, not {args.cases}")
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    signal.signal(signal.SIGTERM, _stop)
    done = []
    try:
        print(f"the checker's battery, {args.cases} cases, seed 1, runs of each mode: "
              f"{args.repeat}; load average {os.getloadavg()[0]:.1f} at the start")
        print(f"{'mode':<10} {'battery: best':>14} {'median':>8} {'whole run: best':>16} "
              f"{'budget':>8}")
        for mode in modes:
            runs = [time_run(mode, args.cases) for _ in range(args.repeat)]
            battery = [b for b, _ in runs]
            best = min(battery)
            print(f"{mode:<10} {best:>12.2f} s {statistics.median(battery):>6.2f} s "
                  f"{min(w for _, w in runs):>14.2f} s {'met' if best <= BUDGET else 'MISSED':>8}")
            done.append(mode)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    except KeyboardInterrupt:
        print(f"benchmarks/checker.py: stopped after {len(done)} of {len(modes)} modes",
              file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"benchmarks/checker.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
