"""The tables and numbers that the pages quote from the report and the library.

    python3 scripts/report_tables.py     # every table and number, as the pages show them

Everything random here comes from one stats.Report (the one `python3 stats.py` prints at
its defaults) and one additive-attention simulation per d_a; the rest is exact or
deterministic.  The sentences around these numbers are in the pages.

Public names:

    ADDITIVE_D_AS, ADDITIVE_D, COST, CORRELATED, WHICH_SCALE, LENGTHS, REPORT_HEAD
                                       the cases the tables show
    additive(report)                   {d_a: stats.ScoreVariance} for the additive table
    values(report, additive)           {name: text} of the numbers quoted inline
    blocks(report, additive, printed)  {name: Markdown table} of the tables
    main(argv)                         the command line: every table and number

>>> values_of = values(stats.report(samples=10, trials=4, dks=(16, 1024)), {})
>>> values_of["length.16"], values_of["length.level.16"], values_of["length.level.last"]
('0.908', '0.516', '0.500')
"""

import argparse  # the command line
import math  # log, sqrt
import os  # the library's folder, when run as a script
import sys  # path
from typing import Dict, List, Optional, Sequence

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import attention
from scripts import scales
import stats
from softmax import log_softmax, softmax
from scripts.tables import estimate, table

__all__ = ["ADDITIVE_D_AS", "ADDITIVE_D", "COST", "CORRELATED", "WHICH_SCALE", "LENGTHS",
           "REPORT_HEAD", "additive", "values", "blocks", "main"]

ARMS = {"1": "unscaled", "1/sqrt(d_k)": "scaled"}  # the report's two arms
C_1, C_SQRT, C_D = "c = 1", "c = 1/√d_k", "c = 1/d_k"  # the scales, as the tables label them
ADDITIVE_D_AS = (16, 64, 256, 1024)  # additive attention's hidden widths
ADDITIVE_D = 64  # the width of q and k there
COST = (128, 64)  # n = m, and d_k = d_a = d_v, of the cost comparison
CORRELATED = ((16, 64, 256, 1024), (0.0, 0.1, 0.3, 0.5))  # d_k and rho of the table
WHICH_SCALE = (  # (d_model, heads, divide_by, where, inputs): bugs seen in public code
    (512, 8, "d_k", "logits", "layer_norm"), (512, 8, "d_k", "q", "layer_norm"),
    (512, 8, "d_k", "q and k", "layer_norm"), (512, 8, "d_k", "W_Q init", "layer_norm"),
    (512, 8, "none", "logits", "layer_norm"), (512, 8, "d_model", "logits", "layer_norm"),
    (512, 8, "d_k", "twice", "layer_norm"), (512, 8, "d_k", "logits", "E sqrt(d_model) + PE"),
    (512, 8, "d_k", "logits", "E + PE"))
LENGTHS = (16, 256, 4096, 65536)  # numbers of keys n; the first is n_0, the reference
GAP = 5.0  # the winner's lead in the length table
REPORT_HEAD = 15  # lines of `python3 stats.py` shown in the README: through section 1's table
ONE_PASS_ROWS = (-740.0, -744.0)  # the largest logit of the rows [x, x - 1] the slip gets wrong


def additive(r: stats.Report) -> Dict[int, stats.ScoreVariance]:
    """Var(e) of additive attention with w_v ~ N(0, 1), r.samples scores per d_a."""
    return {d_a: stats.additive_score_variance(d_a, r.samples, d=ADDITIVE_D, seed=r.seed + d_a)
            for d_a in ADDITIVE_D_AS}


# ------------------------------------------------------------------ the numbers

def values(r: stats.Report, additive_var: Dict[int, stats.ScoreVariance]) -> Dict[str, str]:
    """Return every inline number the pages take from the report and the library."""
    out = {}
    for d in r.dks:
        v, se = r.variance[d]
        out.update({f"var.{d}": estimate(v, se), f"var.scaled.{d}": estimate(v / d, se / d)})
        for name, arm in ARMS.items():
            g = r.gradients[d, name]
            out.update({
                f"maxp.{arm}.{d}": estimate(*r.saturation[d, name].max_weight),
                f"dS.{arm}.{d}": stats.format_interval(g.score_grad),
                f"dQ.{arm}.{d}": stats.format_interval(g.query_grad),
                f"dS.mean.{arm}.{d}": estimate(*g.score_grad_mean),
                f"dQ.mean.{arm}.{d}": estimate(*g.query_grad_mean)})
            for t, share in zip(stats.TOP_PERCENTS, r.spread[d, name].query_top_shares):
                out[f"dQ.top{t}.{arm}.{d}"] = _percent(*share)
    d_model, d_k, v, se = r.projection
    out.update({
        "projection": f"{estimate(v, se)} at d_model = {d_model}, d_k = {d_k}",
        "logsoftmax.100.p1": f"{log_softmax([100.0, 1.0, 1.0, 1.0])[0]:.4g}",
        "self.64": f"{stats.correlated_logits(64, 1, '1/sqrt(d_k)', 16)[2]:.3f}"})
    out.update(_length_values())
    out.update(_one_pass_values())
    return out


def _zero_started(x: Sequence[float]) -> List[float]:
    """softmax(x) in one pass with the interview's slip: the running max starts at 0, not
    -inf, so every exp is taken relative to max(0, max x)."""
    m, d = 0.0, 0.0
    for v in x:
        m_new = max(m, v)
        d, m = d * math.exp(m - m_new) + math.exp(v - m_new), m_new
    return [math.exp(v - m) / d for v in x]


def _one_pass_values() -> Dict[str, str]:
    """Where the slip's exps leave the normal floats, how far off its weights are below
    that (largest relative error against softmax), and where every exp is 0."""
    out = {"onepass.normal": f"{math.log(sys.float_info.min):.0f}",
           "onepass.zero": f"{-1075 * math.log(2.0):.0f}"}  # exp rounds to 0 below ln 2^-1075
    for top in ONE_PASS_ROWS:
        x = [top, top - 1.0]
        error = max(abs(a - b) / b for a, b in zip(_zero_started(x), softmax(x)))
        out[f"onepass.{-top:.0f}"] = f"{100 * error:.2g}%"
    return out


def _length_values() -> Dict[str, str]:
    """The winner's weight over n keys, and under ln n scaling at a gap of exactly ln n_0."""
    n_0, last = LENGTHS[0], LENGTHS[-1]
    plain = scales.length_axis((n_0, last), GAP, n_0)
    level = scales.length_axis((n_0, last), math.log(n_0), n_0)
    return {"length.16": f"{plain[0].weight:.3f}", "length.65536": f"{plain[1].weight:.4f}",
            "length.n0": str(n_0), "length.ln.n0": f"{math.log(n_0):.2f}",
            "length.level.16": f"{level[0].weight_scaled:.3f}",
            "length.level.last": f"{level[1].weight_scaled:.3f}",
            "length.steady": f"{scales.steady_gap(n_0):.2f}"}


# ------------------------------------------------------------------ the tables

def blocks(r: stats.Report, additive_var: Dict[int, stats.ScoreVariance],
           printed: Sequence[str]) -> Dict[str, str]:
    """Return every table the pages take from the report and the library, by name;
    printed is what `python3 stats.py` prints for r."""
    return {"report-head": "\n".join(["```"] + list(printed[:REPORT_HEAD]) + ["...", "```"]),
            "argument-table": _argument_tables(r), "gradient-spread-table": _spread_table(r),
            "scales-table": _scales_table(r.dks),
            "correlated-table": _correlated_table(), "which-scale-table": _which_scale_table(),
            "length-table": _length_table(), "cost-table": _cost_table(),
            "additive-table": _additive_table(additive_var)}


def _argument_tables(r: stats.Report) -> str:
    """The variance (+- one standard error) and the largest weight (mean +- standard error)
    per d_k; then the median gradients [95% interval], unscaled and scaled."""
    spread = []
    for d in r.dks:
        v, se = r.variance[d]
        u, s = (r.saturation[d, name] for name in ARMS)
        spread.append([d, estimate(v, se), estimate(v / d, se / d), estimate(*u.max_weight),
                       estimate(*s.max_weight)])
    gradients = []
    for d in r.dks:
        gu, gs = (r.gradients[d, name] for name in ARMS)
        gradients.append([d] + [stats.format_interval(m) for m in (
            gu.score_grad, gs.score_grad, gu.query_grad, gs.query_grad)])
    return "\n\n".join([
        table(["d_k", "Var(q·k)", "Var(q·k/√d_k)", f"largest weight, {C_1}",
               f"largest weight, {C_SQRT}"], spread),
        table(["d_k", f"‖dL/dS‖, {C_1}", f"‖dL/dS‖, {C_SQRT}", f"‖dL/dQ‖, {C_1}",
               f"‖dL/dQ‖, {C_SQRT}"], gradients)])


def _spread_table(r: stats.Report) -> str:
    """||dL/dQ|| over the rows: unscaled, its 90% quantile [95% interval], its mean (+- standard
    error) and the top 10% of rows' share of its sum (+- standard error); scaled, the mean and
    that share."""
    top, upper = stats.TOP_PERCENTS.index(10), stats.PERCENTILES.index(90)
    rows = []
    for d in r.dks:
        su, ss = (r.spread[d, name] for name in ARMS)
        gu, gs = (r.gradients[d, name] for name in ARMS)
        rows.append([d, stats.format_interval(su.query_quantiles[upper]),
                     estimate(*gu.query_grad_mean), _percent(*su.query_top_shares[top]),
                     estimate(*gs.query_grad_mean), _percent(*ss.query_top_shares[top])])
    share = "top 10% of rows' share"
    return table(["d_k", f"90% quantile [95% interval], {C_1}", f"mean, {C_1}",
                  f"{share}, {C_1}", f"mean, {C_SQRT}", f"{share}, {C_SQRT}"], rows)


def _percent(share: float, se: float) -> str:
    """A share of a sum in percent, +- its standard error, as `python3 stats.py` prints it."""
    return f"{estimate(100 * share, 100 * se)}%"


def _scales_table(dks: Sequence[int]) -> str:
    """Var(c q . k) = d_k c^2 at initialisation for each scale choice."""
    return table(["d_k"] + [f"c = {name}" for name in stats.SCALE_CHOICES],
                 [[d] + [f"{d * stats.scale_factor(name, d) ** 2:.4g}"
                         for name in stats.SCALE_CHOICES] for d in dks])


def _correlated_table() -> str:
    """The matched key's logit (mean, std) and its weight over 16 keys when every logit sits
    at its mean, for correlated q and k, under 1/sqrt(d_k) and under 1/d_k."""
    dks, rhos = CORRELATED
    rows = []
    for rho in rhos:
        for d in dks:
            cells = [stats.correlated_logits(d, rho, name) for name in ("1/sqrt(d_k)", "1/d_k")]
            rows.append([f"{rho:g}", d] + [text for mu, std, w in cells
                                           for text in (f"{mu:.3g}", f"{std:.3g}", f"{w:.3f}")])
    return table(["rho", "d_k", f"mean logit, {C_SQRT}", "std", "weight",
                  f"mean logit, {C_D}", "std", "weight"], rows)


def _which_scale_table() -> str:
    """logit_variance for the scale placements and bugs of WHICH_SCALE."""
    rows = []
    for d_model, heads, divide_by, where, inputs in WHICH_SCALE:
        lv = scales.logit_variance(d_model, heads, divide_by=divide_by, where=where,
                                   inputs=inputs)
        divisor = "-" if divide_by == "none" else f"sqrt({divide_by})"
        rows.append([d_model, heads, divisor, where, inputs, lv.variance, lv.verdict])
    return table(["d_model", "heads", "divides by", "where", "inputs", "Var(logit) at init",
                  "verdict"], rows)


def _length_table() -> str:
    """The winner's weight and the entropy against the number of keys, gap GAP."""
    rows = [[f"{row.n:,}", f"{row.weight:.4g}", f"{row.entropy:.3f}", f"{math.log(row.n):.3f}",
             f"{row.weight_scaled:.4g}", f"{row.entropy_scaled:.3f}"]
            for row in scales.length_axis(LENGTHS, GAP, LENGTHS[0])]
    return table(["keys n", "winner's weight", "entropy (nats)", "ln n",
                  "weight, ln n scaling", "entropy, ln n scaling"], rows)


def _cost_table() -> str:
    """The arithmetic of one forward pass of each kind of attention, at COST."""
    n, d = COST
    rows = []
    for name, cost in (("dot-product", attention.dot_product_attention_cost(n, n, d, d)),
                       ("additive", attention.additive_attention_cost(n, n, d, d))):
        rows.append([name, f"{cost.multiply_adds:,}", f"{cost.exps:,}", f"{cost.tanhs:,}"])
    return table([f"n = m = {n}, d_k = d_a = d_v = {d}", "multiply-adds", "exp", "tanh"], rows)


def _additive_table(additive_var: Dict[int, stats.ScoreVariance]) -> str:
    """Var(e) of additive attention against d_a: w_v ~ N(0, 1), and N(0, 1/d_a).

    additive_score_variance uses the same draws for every sigma_w, so the fan-in variance
    is Var(e) / d_a, and so is its standard error.
    """
    rows: List[list] = [[d_a, estimate(v, se), estimate(v / d_a, se / d_a)]
                        for d_a, (v, se) in additive_var.items()]
    return table(["d_a", "Var(e), w_v ~ N(0, 1)", "Var(e), w_v ~ N(0, 1/d_a)"], rows)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print every table and number, from the default report (seconds)."""
    _Parser(prog="python3 scripts/report_tables.py",
            description=__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        report = stats.report()
        variances = additive(report)
        printed = stats.format_report(report).splitlines()  # as python3 stats.py prints it
        for name, text in blocks(report, variances, printed).items():
            print(f"{name}:\n{text}\n")
        for name, text in values(report, variances).items():
            print(f"{name}: {text}")
    except KeyboardInterrupt:
        print("python3 scripts/report_tables.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
