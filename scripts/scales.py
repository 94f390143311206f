"""Two questions about scale that the variance argument leaves to the code: which sqrt,
and where (a head's d_k or the model's width, on the logits or elsewhere, once or twice);
and what the number of keys n does, which no choice of d_k can answer.

    python3 scripts/scales.py --d-model 512 --heads 8 --divide-by d_model
    python3 scripts/scales.py --lengths 16,256,4096 --gap 5

Public names:

    LogitVariance, logit_variance(d_model, heads, ...)   Var(logit) at initialisation, exactly,
                                                         and what went wrong
    PLACES, INPUTS                                       where the scale goes; what goes in
    LengthRow, length_axis(lengths, gap, base)           the winner's weight against n
    steady_gap(base)                                     the gap from which ln n scaling
                                                         never lowers the winner's weight

docs/interview.md quotes both (which sqrt, where; what d_k and n control), and
docs/derivations.md sections 8 and 9 derive them.

>>> logit_variance(512, 8, divide_by="none").verdict
'd_k: no scale'
"""

import argparse  # the command line
import math  # exp, log, log1p
import os  # the library's folder, when run as a script
import sys  # path, exit
from fractions import Fraction  # exact variances
from typing import List, NamedTuple, Optional, Sequence, Tuple

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from softmax import LIMIT, as_int, as_list, as_real

__all__ = ["LogitVariance", "logit_variance", "PLACES", "INPUTS", "LengthRow", "length_axis",
           "steady_gap"]

MAX_EXACT = 2 ** 53  # every int up to it is exactly a float: the largest n taken


# ------------------------------------------------------------------ which sqrt, where

class LogitVariance(NamedTuple):
    variance: Fraction  # Var(logit) at initialisation, exactly
    verdict: str  # "1: right", or what went wrong


PLACES = ("logits", "q", "q and k", "W_Q init", "framework scale", "twice")
INPUTS = ("layer_norm", "E sqrt(d_model) + PE", "E + PE")


def logit_variance(d_model: int, heads: int, *, d_k: Optional[int] = None,
                   divide_by: str = "d_k", where: str = "logits",
                   inputs: str = "layer_norm") -> LogitVariance:
    """Return Var(S) = d_k c^2 v^2 at initialisation, exactly, and a verdict naming the
    mistakes, for a head of width d_k (d_model / heads unless given) whose code divides by
    sqrt(divide_by) ("d_k", "d_model" or "none") at the place `where` (derivations.md
    section 8).  c is the total factor; v the mean square of the inputs' components, which
    with W_Q, W_K of N(0, 1/d_model) entries is the variance of q's and k's components.
    where: "logits", "q", "q and k" (d^-1/4 on each), "W_Q init" (variance 1/(d_model d)),
    "framework scale" (passed as scale=, replacing the default), "twice" (by hand, then a
    framework's own 1/sqrt(d_k)).  inputs: "layer_norm" (v = 1), "E sqrt(d_model) + PE"
    (embeddings N(0, 1/d_model) scaled up, plus sinusoidal positions of mean square 1/2:
    v = 3/2), "E + PE" (v = 1/d_model + 1/2).  The verdict reads "<Var(S)>: <diagnosis>",
    Var(S) as 1, d_k, 1/d_k or 1/heads where it is one of them, else to 3 digits.

    >>> logit_variance(512, 8), logit_variance(512, 8, divide_by="d_model").verdict
    (LogitVariance(variance=Fraction(1, 1), verdict='1: right'), '1/heads: divided by d_model')
    """
    fn = "logit_variance"
    d_model, heads = as_int(fn, d_model, "d_model"), as_int(fn, heads, "heads")
    for what, value, allowed in (("divide_by", divide_by, ("d_k", "d_model", "none")),
                                 ("where", where, PLACES), ("inputs", inputs, INPUTS)):
        if not (isinstance(value, str) and value in allowed):
            kind = ValueError if isinstance(value, str) else TypeError
            raise kind(f"{fn}: {what} must be one of {allowed}, not {value!r}")
    if d_k is None and d_model % heads:
        raise ValueError(f"{fn}: heads = {heads} does not divide d_model = {d_model}; give d_k")
    d_k = d_model // heads if d_k is None else as_int(fn, d_k, "d_k")
    c2 = {"d_k": Fraction(1, d_k), "d_model": Fraction(1, d_model), "none": 1}[divide_by]
    c2 = c2 * Fraction(1, d_k) if where == "twice" else c2  # the framework's own 1/sqrt(d_k)
    v = {"layer_norm": 1, "E sqrt(d_model) + PE": Fraction(3, 2),
         "E + PE": Fraction(1, d_model) + Fraction(1, 2)}[inputs]
    variance = d_k * c2 * v * v
    scale = [] if d_k * c2 == 1 else ["no scale" if c2 == 1 else "scaled twice"
                                      if where == "twice" else "divided by d_model"]
    problems = scale + ([] if v == 1 else [f"inputs of mean square {v}"])
    named = [(1, "1"), (d_k, "d_k"), (Fraction(1, d_k), "1/d_k"), (Fraction(1, heads), "1/heads")]
    head = next((name for value, name in named if value == variance and v == 1),
                f"{float(variance):.3g}")
    return LogitVariance(variance, f"{head}: {' and '.join(problems) or 'right'}")


# ------------------------------------------------------------------ the length axis

class LengthRow(NamedTuple):
    n: int  # keys
    weight: float  # the winner's softmax weight, logits [gap, 0, ..., 0]
    entropy: float  # H(p), nats
    weight_scaled: float  # the same with every logit times ln(n) / ln(base)
    entropy_scaled: float


def _winner(g: float, n: int) -> Tuple[float, float]:
    """(p_1, H) for softmax([g, 0, ..., 0]) over n keys, from r = (n - 1) e^-g:
    p_1 = 1 / (1 + r) and H = -p_1 log p_1 - (1 - p_1) log((1 - p_1) / (n - 1)), with
    log p_1 = -log1p(r), 1 - p_1 = r / (1 + r) and log(1 - p_1) = log r - log1p(r): nothing
    cancels when the winner takes almost all."""
    r = (n - 1) * math.exp(-g)
    if r == 0.0:  # e^-g underflowed: one-hot
        return 1.0, 0.0
    p, rest = 1 / (1 + r), r / (1 + r)
    return p, max(0.0, p * math.log1p(r) - rest * (math.log(r) - math.log1p(r) - math.log(n - 1)))


def length_axis(lengths: Sequence[int] = (16, 256, 4096, 65536), gap: float = 5.0,
                base: int = 16) -> List[LengthRow]:
    """Return, for each number of keys n, the winner's weight e^g / (e^g + n - 1) and the
    entropy when one logit is g above n - 1 equal ones, then the same with every logit
    times ln(n) / ln(base) (scalable softmax; Su's entropy-invariant scale).  Scaled, the
    weight n^a / (n^a + n - 1), a = g / ln(base), tends to 1 as n grows when gap > ln(base),
    to 1/2 at gap = ln(base) (falling all the way), and to 0 below (derivations.md
    section 9).

    >>> [round(r.weight, 4) for r in length_axis((16, 65536))]
    [0.9082, 0.0023]
    """
    fn = "length_axis"
    lengths = [as_int(fn, n, "n", 2, MAX_EXACT) for n in as_list(fn, lengths, "lengths")]
    gap, base = as_real(fn, gap, "gap"), as_int(fn, base, "base", minimum=2)
    if gap < 0:
        raise ValueError(f"{fn}: gap is {gap!r}; the winner's lead must be at least 0")
    return [LengthRow(n, *_winner(gap, n), *_winner(gap * math.log(n) / math.log(base), n))
            for n in lengths]


def steady_gap(base: int) -> float:
    """Return ln(base) base / (base - 1): with ln n scaling, the winner's weight over n >= base
    keys never falls below its weight at base exactly when gap >= this.  (With a = gap / ln
    base the weight is 1 / (1 + (n - 1) n^-a), and (n - 1) n^-a falls for all n >= base
    exactly when a (base - 1) >= base.)  Just above ln(base) the weight dips, then recovers.

    >>> round(steady_gap(16), 4), round(math.log(16), 4)
    (2.9574, 2.7726)
    """
    base = as_int("steady_gap", base, "base", minimum=2)
    return math.log(base) * base / (base - 1)


# ------------------------------------------------------------------ the command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print Var(logit) and its verdict for one configuration, and the length axis."""
    parser = _Parser(prog="python3 scripts/scales.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--d-model", type=int, default=512, help="model width (default 512)")
    parser.add_argument("--heads", type=int, default=8, help="heads (default 8)")
    parser.add_argument("--divide-by", default="d_k", choices=("d_k", "d_model", "none"),
                        help="the sqrt in the code's scale (default d_k)")
    parser.add_argument("--where", default="logits", choices=PLACES,
                        help="where the code applies it (default logits)")
    parser.add_argument("--inputs", default="layer_norm", choices=INPUTS,
                        help="what the projections read (default layer_norm)")
    parser.add_argument("--lengths", default="16,256,4096,65536",
                        help="numbers of keys n, comma-separated (default 16,256,4096,65536)")
    parser.add_argument("--gap", type=float, default=5.0,
                        help="the winner's lead over the other logits (default 5)")
    parser.add_argument("--base", type=int, default=16,
                        help="n_0, where ln n scaling equals the plain softmax (default 16)")
    args = parser.parse_args(argv)
    lengths = _options(parser, args)
    try:
        lv = logit_variance(args.d_model, args.heads, divide_by=args.divide_by,
                            where=args.where, inputs=args.inputs)
        rows = length_axis(lengths, args.gap, args.base)
        print(f"Var(logit) at initialisation: {lv.variance} ({lv.verdict})")
        print(f"{'keys n':>10}{'weight':>11}{'entropy':>10}{'scaled':>11}{'entropy':>10}")
        for r in rows:
            print(f"{r.n:>10,}{r.weight:>11.4g}{r.entropy:>10.3f}{r.weight_scaled:>11.4g}"
                  f"{r.entropy_scaled:>10.3f}")
    except KeyboardInterrupt:
        print("python3 scripts/scales.py: interrupted", file=sys.stderr)
        return 130
    return 0


def _options(parser: argparse.ArgumentParser, args) -> List[int]:
    """The n of --lengths, once every option is checked in the name of its flag."""
    for flag, value, least in (("--d-model", args.d_model, 1), ("--heads", args.heads, 1),
                               ("--base", args.base, 2)):
        if not least <= value <= MAX_EXACT:
            parser.error(f"{flag} must be from {least} to 2**53, not {value}")
    if args.d_model % args.heads:
        parser.error(f"--heads {args.heads} does not divide --d-model {args.d_model}: a head "
                     f"has d_k = d_model / heads")
    if not 0 <= args.gap <= LIMIT:  # NaN fails both comparisons
        parser.error(f"--gap must be from 0 to {LIMIT:.3g}, not {args.gap!r}")
    return [_length(parser, part) for part in args.lengths.split(",")]


def _length(parser: argparse.ArgumentParser, part: str) -> int:
    """One n of --lengths: a whole number from 2 to 2^53."""
    try:
        n = int(part)
    except ValueError:
        parser.error(f"--lengths: each n must be a whole number, not {part!r}")
    if not 2 <= n <= MAX_EXACT:
        parser.error(f"--lengths: each n must be from 2 to 2**53, not {n}")
    return n


if __name__ == "__main__":
    sys.exit(main())
