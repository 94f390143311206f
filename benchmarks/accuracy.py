"""Print the worst floating-point errors of softmax.py against 50-digit decimal.

    python3 benchmarks/accuracy.py [--vectors 200]

Needs no pytest.  The bounds are the ones oracles/bounds.py states and
tests/test_softmax.py asserts:
    softmax:     |p_i - p_i*| / p_i* <= (|x_i - m| + E_p|x - m| + 6) U
    log_softmax: |log p_i - log p_i*| <= (|x_i - m| + |log p_i*| + 2 log1p(s) + (s/(1+s))(M + 3)) U
with U = 2^-53.  "ratio" is the worst error divided by its bound (at most 1 passes).
"""

import argparse  # --vectors
import os  # paths
import sys  # path

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from oracles.bounds import HOSTILE, log_softmax_error_ratios, random_logits, softmax_error_ratios
from oracles.exact import U, decimal_log_softmax, decimal_softmax
from softmax import log_softmax, softmax

MOST = 30000  # random vectors: about a minute (2 ms each on the project's machine)


def worst_relative_error(computed, exact):
    """Largest |a - b| / |b| in units of U over entries with a normal, finite, non-zero b."""
    worst = 0.0
    for a, b in zip(computed, exact):
        if b is not None and 2.0 ** -1022 < abs(float(b)) < 1e308:
            worst = max(worst, abs(a - float(b)) / abs(float(b)) / U)
    return worst


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv=None):
    """Print the worst ratio to each bound and the worst relative error; return 0."""
    parser = _Parser(prog="python3 benchmarks/accuracy.py", description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=200, help="random vectors (default 200)")
    args = parser.parse_args(argv)
    if not 0 <= args.vectors <= MOST:
        parser.error(f"--vectors must be from 0 to {MOST} (about a minute), not {args.vectors}")
    try:
        _print_errors(HOSTILE + [random_logits(seed) for seed in range(args.vectors)])
    except KeyboardInterrupt:
        print("python3 benchmarks/accuracy.py: interrupted", file=sys.stderr)
        return 130
    return 0


def _print_errors(vectors):
    print(f"{len(HOSTILE)} hostile and {len(vectors) - len(HOSTILE)} random vectors")
    for name, ratios, f, exact in (
            ("softmax:    ", softmax_error_ratios, softmax, decimal_softmax),
            ("log_softmax:", log_softmax_error_ratios, log_softmax, decimal_log_softmax)):
        ratio = max(max(ratios(x)) for x in vectors)
        relative = max(worst_relative_error(f(x), exact(x)) for x in vectors)
        print(f"  {name} worst ratio to bound {ratio:.3f}, worst relative error {relative:.1f} U")


if __name__ == "__main__":
    sys.exit(main())
