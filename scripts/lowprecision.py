"""Each low-precision format's limits, or the softmax of your logits in each format.

    python3 scripts/lowprecision.py                  # each format's limits
    python3 scripts/lowprecision.py 10 11 12         # softmax of these logits in each format
    python3 scripts/lowprecision.py 10 11 12 --no-shift --format float16

The formats (float16, bfloat16, float32, float64) are emulated with struct by
lowprecision/emulation.py, whose docstring states the one rounding rule; docs/low-precision.md
is the reader's page.
"""

import argparse  # the command line
import math  # inf, the logits' one bound
import os  # the project's root, when run as a program
import sys  # exit
from typing import List, Optional, Sequence

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from lowprecision.emulation import (FORMATS, exp_threshold, exp_underflow, largest_finite,
                                    significant_bits, smallest_positive, softmax_in)

__all__ = ["main"]


def _limits(formats: Sequence[str]) -> List[str]:
    """One line per format: its bits, range, and where exp overflows and underflows."""
    lines = [f"{'format':<10}{'bits':>5}{'largest':>14}{'smallest':>11}"
             f"{'exp is inf above':>18}{'exp is 0 below':>16}"]
    for fmt in formats:
        lines.append(f"{fmt:<10}{significant_bits(fmt):>5}{largest_finite(fmt):>14.5g}"
                     f"{smallest_positive(fmt):>11.3g}{exp_threshold(fmt).real:>18.6f}"
                     f"{exp_underflow(fmt):>16.6f}")
    return lines


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print each format's limits, or the softmax of the logits given, in each format."""
    parser = _Parser(prog="python3 scripts/lowprecision.py",
                     description=__doc__.split("\n\n")[0])
    parser.add_argument("x", nargs="*", type=float, metavar="LOGIT",
                        help="logits whose softmax to compute in each format, finite or -inf; "
                             "put -- before them if one starts with -inf or -1e: -- -inf 0")
    parser.add_argument("--format", choices=FORMATS, action="append", dest="formats",
                        help="this format only (repeat for more); default: all four")
    parser.add_argument("--no-shift", action="store_true",
                        help="do not subtract the max first (exp may overflow)")
    args = parser.parse_args(argv)
    bad = [v for v in args.x if v != v or v == math.inf]  # NaN is not equal to itself
    if bad:
        parser.error(f"every LOGIT must be finite or -inf, not {bad[0]!r}")
    formats = args.formats or FORMATS
    try:
        print("\n".join(_limits(formats)) if not args.x else "\n".join(
            f"{fmt:<10}{softmax_in(args.x, fmt, shift=not args.no_shift)}" for fmt in formats))
    except KeyboardInterrupt:
        print("python3 scripts/lowprecision.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
