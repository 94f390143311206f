"""Print the worst floating-point errors of softmax.py against 50-digit decimal.

    python3 benchmarks/accuracy.py [--vectors 200]

Needs no pytest.  The bounds are the ones tests/bounds.py states and
tests/test_softmax.py asserts:
    softmax:     |p_i - p_i*| / p_i* <= (|x_i - m| + E_p|x - m| + 6) U
    log_softmax: |log p_i - log p_i*| <= (|x_i - m| + |log p_i*| + 2 log1p(s) + (s/(1+s))(M + 3)) U
with U = 2^-53.  "ratio" is the worst error divided by its bound (at most 1 passes).
"""

import argparse  # --vectors
import os  # paths
import sys  # path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests")]

from oracle import U, decimal_log_softmax, decimal_softmax  # noqa: E402
from softmax import log_softmax, softmax  # noqa: E402
from bounds import HOSTILE, log_softmax_error_ratios, random_logits, softmax_error_ratios  # noqa: E402


def worst_relative_error(computed, exact):
    """Largest |a - b| / |b| in units of U over entries with a normal, finite, non-zero b."""
    worst = 0.0
    for a, b in zip(computed, exact):
        if b is not None and 2.0 ** -1022 < abs(float(b)) < 1e308:
            worst = max(worst, abs(a - float(b)) / abs(float(b)) / U)
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=200, help="random vectors (default 200)")
    args = parser.parse_args(argv)
    vectors = HOSTILE + [random_logits(seed) for seed in range(args.vectors)]
    print(f"{len(HOSTILE)} hostile and {args.vectors} random vectors")
    print(f"  softmax:     worst ratio to bound {max(max(softmax_error_ratios(x)) for x in vectors):.3f}, "
          f"worst relative error {max(worst_relative_error(softmax(x), decimal_softmax(x)) for x in vectors):.1f} U")
    print(f"  log_softmax: worst ratio to bound {max(max(log_softmax_error_ratios(x)) for x in vectors):.3f}, "
          f"worst relative error "
          f"{max(worst_relative_error(log_softmax(x), decimal_log_softmax(x)) for x in vectors):.1f} U")


if __name__ == "__main__":
    main()
