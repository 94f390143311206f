"""Regenerate every figure and every generated number of the documentation.

    python3 scripts/build.py            # write docs/figures/*.svg, docs/whiteboard.md, and the
                                     # generated parts of README.md and docs/*.md
    python3 scripts/build.py --check    # write nothing; exit 1 if any of them is out of date

Numbers in the Markdown files sit between markers that this script owns, so they are
never typed by hand:

    <!--v:NAME-->0.8105<!--/v-->               one value, inline
    <!--begin:NAME--> ... <!--end:NAME-->      a block (a table), on lines of its own

Everything comes from one computation, `stats.report()`, the same call and defaults as
`python3 stats.py`, so the report, the figures and the prose cannot disagree; the training
experiment's tables come from its committed records (experiments/results.json, made by
the command in docs/experiments.md); low precision from scripts/lowprecision.py.  Files
are written through a temporary file and renamed.  The whole build takes seconds.
"""

import argparse  # --check, --figures-dir
import ast  # the cores' source, for whiteboard.md
import contextlib  # the report's lines, as `python3 stats.py` prints them
import io  # the same
import json  # docs/figures/data.json
import math  # log, sqrt
import os  # paths
import re  # the markers
import sys  # path, exit, stderr
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _path in (ROOT, HERE, os.path.join(ROOT, "experiments")):  # run as a script: find the
    if _path not in sys.path:  # library, the docs' modules and the experiment
        sys.path.append(_path)

import attention  # noqa: E402
import compensated  # noqa: E402
import learning  # noqa: E402
import lowprecision  # noqa: E402
import scales  # noqa: E402
import stats  # noqa: E402
import worked_examples  # noqa: E402
from figures import Axis, Series, plot, write_atomic  # noqa: E402
from softmax import log_softmax, softmax  # noqa: E402

MARKDOWN = ["README.md", "docs/README.md", "docs/derivations.md", "docs/equations.md",
            "docs/documents.md", "docs/worked-examples.md", "docs/interview.md",
            "docs/numerics.md", "docs/pytorch-jax.md", "docs/glossary.md",
            "docs/low-precision.md", "docs/experiments.md"]  # files with generated parts
VALUE = re.compile(r"<!--v:([\w.-]+)-->(.*?)<!--/v-->")
BLOCK = re.compile(r"(<!--begin:([\w.-]+)-->\n)(.*?)(<!--end:\2-->)", re.S)
ARMS = {"1": "unscaled", "1/sqrt(d_k)": "scaled"}  # the report's two arms
D_AS = (16, 64, 256, 1024)  # additive attention's hidden widths
ADDITIVE_D = 64  # the width of q and k there
REPORT_HEAD = 15  # lines of `python3 stats.py` shown in the README: through section 1's table


class Data(NamedTuple):
    """Every computed number the docs use."""
    report: stats.Report  # the report of python3 stats.py, at its defaults
    report_lines: List[str]  # what python3 stats.py prints
    additive: Dict[int, stats.ScoreVariance]  # d_a -> Var(e) with w_v ~ N(0, 1)
    learning: dict  # the training experiment's tables, from its committed records


def compute(report: Optional[stats.Report] = None) -> Data:
    """Return every number of the figures and the prose, from one set of seeds; report,
    if given, must be stats.report() (the tests pass the one they computed already)."""
    r = stats.report() if report is None else report
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # the same defaults, so the same numbers
        stats.main([])
    additive = {d_a: stats.additive_score_variance(d_a, r.samples, d=ADDITIVE_D, seed=r.seed + d_a)
                for d_a in D_AS}
    return Data(r, printed.getvalue().splitlines(), additive, learning.docs_data())


def to_json(data: Data) -> str:
    """docs/figures/data.json: the numbers behind the figures (floats as repr: exact)."""
    r = data.report
    return json.dumps({
        "settings": {"seed": r.seed, "samples": r.samples, "trials": r.trials, "keys": r.keys,
                     "dks": list(r.dks)},
        "variance": {str(d): list(v) for d, v in r.variance.items()},
        "projection": list(r.projection),
        "saturation": {f"{d} {name}": [list(v) for v in s]
                       for (d, name), s in r.saturation.items()},
        "gradients": {f"{d} {name}": [list(v) for v in g]
                      for (d, name), g in r.gradients.items()},
        "additive": {str(d): list(v) for d, v in data.additive.items()},
        "learning": data.learning}, indent=1, sort_keys=True) + "\n"


# ------------------------------------------------------------------ the figures

def figure_variance(data: Data) -> str:
    """Var(q.k) and Var(q.k / sqrt(d_k)) against d_k, log-log, +- one standard error."""
    r = data.report
    dks = list(r.dks)
    v, se = zip(*(r.variance[d] for d in dks))
    return plot(f"Variance of the score at initialisation ({r.samples} pairs per d_k)",
                Axis("d_k (log scale)", log=True, ticks=dks),
                Axis("variance (log scale)", log=True),
                [Series("Var(q·k), simulated", dks, list(v), list(se), style=0),
                 Series("d_k (theory)", dks, [float(d) for d in dks], style=5),
                 Series("Var(q·k/√d_k), simulated", dks, [a / d for a, d in zip(v, dks)],
                        [e / d for e, d in zip(se, dks)], style=1),
                 Series("1 (theory)", dks, [1.0] * len(dks), style=4)])


def figure_saturation(data: Data) -> str:
    """The mean largest weight and entropy against d_k, +- one standard error."""
    r = data.report
    dks = list(r.dks)
    series = []
    for field, label, styles in (("max_weight", "max weight", (2, 0)), ("entropy", "entropy",
                                                                         (3, 1))):
        for (name, arm), style in zip(ARMS.items(), styles):
            cells = [getattr(r.saturation[d, name], field) for d in dks]
            series.append(Series(f"{label}, {arm}", dks, [c[0] for c in cells],
                                 [c[1] for c in cells], style=style))
    return plot(f"Softmax saturation over m = {r.keys} keys, at initialisation",
                Axis("d_k (log scale)", log=True, ticks=dks),
                Axis("largest weight; entropy (nats)", ticks=[0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
                series)


def _figure_gradient(data: Data, field: str, title: str) -> str:
    r = data.report
    dks = list(r.dks)
    series = []
    for (name, arm), style in zip(ARMS.items(), (2, 0)):
        medians = [getattr(r.gradients[d, name], field) for d in dks]
        series.append(Series(f"median, {arm}", dks, [m.median for m in medians],
                             [(m.low, m.high) for m in medians], style=style))
    return plot(title, Axis("d_k (log scale)", log=True, ticks=dks),
                Axis("gradient norm (log scale)", log=True), series)


def figure_gradient_logits(data: Data) -> str:
    """Median ||dL/dS|| against d_k with its 95% interval."""
    return _figure_gradient(data, "score_grad", "Gradient reaching the logits, ||dL/dS||")


def figure_gradient_queries(data: Data) -> str:
    """Median ||dL/dQ|| against d_k with its 95% interval."""
    return _figure_gradient(data, "query_grad", "Gradient reaching the queries, ||dL/dQ||")


MODERATE = [2.0, 1.0, 0.0, -1.0]  # the causal-chain document's moderate logits


def figure_softmax(data: Data) -> str:
    """softmax([2, 1, 0, -1]) against softmax of the same logits times 10."""
    i = [1.0, 2.0, 3.0, 4.0]
    return plot("The same logits, ten times larger",
                Axis("index i of the logit", ticks=i), Axis("softmax weight p_i"),
                [Series("softmax([2, 1, 0, -1])", i, softmax(MODERATE), style=0),
                 Series("softmax([20, 10, 0, -10])", i, softmax([10 * v for v in MODERATE]),
                        style=2)])


def figure_learning(data: Data) -> str:
    """Median steps to 90% against d_k for the four scales, with their intervals."""
    return learning.figure(data.learning)


FIGURES: Dict[str, Callable[[Data], str]] = {
    "variance.svg": figure_variance, "saturation.svg": figure_saturation,
    "gradient-logits.svg": figure_gradient_logits,
    "gradient-queries.svg": figure_gradient_queries, "softmax.svg": figure_softmax,
    "learning.svg": figure_learning}


# ------------------------------------------------------- the generated numbers

def _pm(v: float, se: float) -> str:
    """v ± se, se to two significant digits and v to the same decimal place, as the report."""
    places = max(0, 1 - math.floor(math.log10(se)))
    return f"{v:.{places}f} ± {se:.{places}f}"


def _interval(m: stats.Median) -> str:
    return f"{m.median:.2g} [{m.low:.2g}, {m.high:.2g}]"


def values(data: Data) -> Dict[str, str]:
    """Return every inline number of the prose, by name, formatted as it is printed."""
    r = data.report
    large = r.dks[-1]
    out = {"seed": str(r.seed), "samples": str(r.samples), "trials": str(r.trials),
           "keys": str(r.keys), "dk.large": str(large)}
    for d in r.dks:
        v, se = r.variance[d]
        u, s = (r.saturation[d, name] for name in ARMS)
        gu, gs = (r.gradients[d, name] for name in ARMS)
        out.update({
            f"var.{d}": _pm(v, se), f"var.scaled.{d}": _pm(v / d, se / d),
            f"maxp.unscaled.{d}": _pm(*u.max_weight), f"maxp.scaled.{d}": _pm(*s.max_weight),
            f"jac.unscaled.{d}": _pm(*u.jacobian_norm),
            f"dS.unscaled.{d}": _interval(gu.score_grad),
            f"dS.scaled.{d}": _interval(gs.score_grad),
            f"dQ.unscaled.{d}": _interval(gu.query_grad),
            f"dQ.scaled.{d}": _interval(gs.query_grad),
            f"dQ.mean.unscaled.{d}": _pm(*gu.query_grad_mean)})
    d_model, d_k, v, se = r.projection
    out.update({
        "projection": f"{_pm(v, se)} at d_model = {d_model}, d_k = {d_k}",
        "softmax.moderate.p1": f"{softmax(MODERATE)[0]:.4f}",
        "softmax.times10.p1": f"{softmax([10 * v for v in MODERATE])[0]:.5f}",
        "scale.1/d_k.large": f"{large * stats.scale_factor('1/d_k', large) ** 2:.2g}",
        "scale.1/ln.large": f"{large * stats.scale_factor('1/ln(d_k)', large) ** 2:.1f}",
        "logsoftmax.100.p1": f"{log_softmax([100.0, 1.0, 1.0, 1.0])[0]:.4g}",
        "length.16": f"{scales.length_axis((16,))[0].weight:.3f}",
        "length.65536": f"{scales.length_axis((65536,))[0].weight:.4f}",
        "self.64": f"{stats.correlated_logits(64, 1, '1/sqrt(d_k)', 16)[2]:.3f}",
        "additive.d": str(ADDITIVE_D)})
    out.update(worked_examples.markdown_values())
    out.update(lowprecision.markdown_values())
    out.update(learning.markdown_values(data.learning))
    return out


COST = (128, 64)  # n = m, and d_k = d_a = d_v, of the cost comparison


def cost_table() -> List[str]:
    """The arithmetic of one forward pass of each kind of attention, at COST."""
    n, d = COST
    lines = [f"| n = m = {n}, d_k = d_a = d_v = {d} | multiply-adds | exp | tanh |",
             "|---|---|---|---|"]
    for name, cost in (("dot-product", attention.dot_product_attention_cost(n, n, d, d)),
                       ("additive", attention.additive_attention_cost(n, n, d, d))):
        lines.append(f"| {name} | {cost.multiply_adds:,} | {cost.exps:,} | {cost.tanhs:,} |")
    return lines


def blocks(data: Data) -> Dict[str, str]:
    """Return every generated block, by name."""
    out = {"worked-examples": worked_examples_block(), "spreads": "\n".join(
               worked_examples.spread_table()),
           "documents": "\n".join(["| title | what it covers |", "|---|---|"] + [
               f"| {title} | {doc.covers} |"
               for title, doc in worked_examples.DOCUMENTS.items()]),
           "report-head": "\n".join(["```"] + data.report_lines[:REPORT_HEAD] + ["...", "```"]),
           "argument-table": "\n".join(argument_table(data.report)),
           "scales-table": "\n".join(scales_table(data.report.dks)),
           "correlated-table": "\n".join(correlated_table()),
           "which-scale-table": "\n".join(which_scale_table()),
           "length-table": "\n".join(length_table()),
           "cost-table": "\n".join(cost_table()),
           "additive-table": "\n".join(additive_table(data))}
    out.update(compensated.markdown_blocks())
    out.update(lowprecision.markdown_blocks())
    out.update(learning.markdown_blocks(data.learning))
    return out


def worked_examples_block() -> str:
    return "\n".join(worked_examples.worked_examples_table())


def argument_table(r: stats.Report) -> List[str]:
    """Two tables per d_k: the variance (+- one standard error) and the largest weight (mean
    +- standard error); then the median gradients [95% interval], unscaled and scaled."""
    lines = ["| d_k | Var(q·k) | Var(q·k/√d_k) | largest weight, c = 1 "
             "| largest weight, c = 1/√d_k |", "|---|---|---|---|---|"]
    for d in r.dks:
        v, se = r.variance[d]
        u, s = (r.saturation[d, name] for name in ARMS)
        lines.append(f"| {d} | {_pm(v, se)} | {_pm(v / d, se / d)} "
                     f"| {_pm(*u.max_weight)} | {_pm(*s.max_weight)} |")
    lines += ["", "| d_k | ‖dL/dS‖, c = 1 | ‖dL/dS‖, c = 1/√d_k | ‖dL/dQ‖, c = 1 "
              "| ‖dL/dQ‖, c = 1/√d_k |", "|---|---|---|---|---|"]
    for d in r.dks:
        gu, gs = (r.gradients[d, name] for name in ARMS)
        lines.append(f"| {d} | {_interval(gu.score_grad)} | {_interval(gs.score_grad)} "
                     f"| {_interval(gu.query_grad)} | {_interval(gs.query_grad)} |")
    return lines


def scales_table(dks: Sequence[int]) -> List[str]:
    """Var(c q . k) = d_k c^2 at initialisation for each scale choice."""
    return ["| d_k | " + " | ".join(f"c = {name}" for name in stats.SCALE_CHOICES) + " |",
            "|---|" + "---|" * len(stats.SCALE_CHOICES)] + [
        f"| {d} | " + " | ".join(f"{d * stats.scale_factor(name, d) ** 2:.4g}"
                                 for name in stats.SCALE_CHOICES) + " |" for d in dks]


CORRELATED = ((16, 64, 256, 1024), (0.0, 0.1, 0.3, 0.5))  # d_k and rho of the table


def correlated_table() -> List[str]:
    """The matched key's logit (mean, std) and its typical weight over 16 keys, for
    correlated q and k, under 1/sqrt(d_k) and under 1/d_k."""
    dks, rhos = CORRELATED
    lines = ["| rho | d_k | mean logit, c = 1/√d_k | std | weight | mean logit, c = 1/d_k "
             "| std | weight |", "|---|---|---|---|---|---|---|---|"]
    for rho in rhos:
        for d in dks:
            cells = [stats.correlated_logits(d, rho, name) for name in ("1/sqrt(d_k)", "1/d_k")]
            lines.append(f"| {rho:g} | {d} | " + " | ".join(
                f"{mu:.3g} | {std:.3g} | {w:.3f}" for mu, std, w in cells) + " |")
    return lines


WHICH_SCALE = (  # (d_model, heads, divide_by, where, inputs): bugs seen in public code
    (512, 8, "d_k", "logits", "layer_norm"), (512, 8, "d_k", "q", "layer_norm"),
    (512, 8, "d_k", "q and k", "layer_norm"), (512, 8, "d_k", "W_Q init", "layer_norm"),
    (512, 8, "none", "logits", "layer_norm"), (512, 8, "d_model", "logits", "layer_norm"),
    (512, 8, "d_k", "twice", "layer_norm"), (512, 8, "d_k", "logits", "E sqrt(d_model) + PE"),
    (512, 8, "d_k", "logits", "E + PE"))


def which_scale_table() -> List[str]:
    """logit_variance for the scale placements and bugs of WHICH_SCALE."""
    lines = ["| d_model | heads | divides by | where | inputs | Var(logit) at init | verdict |",
             "|---|---|---|---|---|---|---|"]
    for d_model, heads, divide_by, where, inputs in WHICH_SCALE:
        lv = scales.logit_variance(d_model, heads, divide_by=divide_by, where=where,
                                   inputs=inputs)
        divisor = "-" if divide_by == "none" else f"sqrt({divide_by})"
        lines.append(f"| {d_model} | {heads} | {divisor} | {where} | {inputs} "
                     f"| {lv.variance} | {lv.verdict} |")
    return lines


def length_table() -> List[str]:
    """The winner's weight and the entropy against the number of keys, gap 5."""
    lines = ["| keys n | winner's weight | entropy (nats) | ln n | winner's weight, ln n scaling "
             "| entropy, ln n scaling |", "|---|---|---|---|---|---|"]
    for row in scales.length_axis((16, 256, 4096, 65536)):
        lines.append(f"| {row.n:,} | {row.weight:.4g} | {row.entropy:.3f} | "
                     f"{math.log(row.n):.3f} | {row.weight_scaled:.4g} | "
                     f"{row.entropy_scaled:.3f} |")
    return lines


def additive_table(data: Data) -> List[str]:
    """Var(e) of additive attention against d_a: w_v ~ N(0, 1), and N(0, 1/d_a).

    additive_score_variance uses the same draws for every sigma_w, so the fan-in variance
    is Var(e) / d_a, and so is its standard error.
    """
    lines = ["| d_a | Var(e), w_v ~ N(0, 1) | Var(e), w_v ~ N(0, 1/d_a) |", "|---|---|---|"]
    for d_a, (v, se) in data.additive.items():
        lines.append(f"| {d_a} | {_pm(v, se)} | {_pm(v / d_a, se / d_a)} |")
    return lines


# ------------------------------------------------------------- the whiteboard

CORES = {  # module -> the functions that are its mathematics, in the order of the derivation
    "softmax": ["softmax", "_log_normaliser", "_jacobian", "_backward", "_rescale", "_merge"],
    "attention": ["_dots", "_default_scale", "_logits", "_attention", "_score_gradient",
                  "_backward", "_streamed"],
    "stats": ["_centred", "_variance", "_product_variance", "_moments", "_entropy",
              "_jacobian_norm"]}


def _functions(path: str) -> Dict[str, str]:
    """{name: source} for every top-level function of a Python file."""
    source = open(path, encoding="utf-8").read()
    lines = source.splitlines()
    return {node.name: "\n".join(lines[node.lineno - 1:node.end_lineno])
            for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


def whiteboard_markdown() -> str:
    """Return docs/whiteboard.md: the library's cores, then the standalone versions."""
    tree = ast.parse(open(os.path.join(HERE, "whiteboard.py"), encoding="utf-8").read())
    out = ["# Whiteboard versions", "",
           "<!-- generated by `python3 scripts/build.py` from the modules and from "
           "scripts/whiteboard.py: edit those -->", "",
           "## The library's cores", "",
           "Each module opens with its mathematics, in the order of the derivation, and checks",
           "its input at the public functions further down. These are those cores, copied from",
           "the source as it is; read them beside [derivations.md](derivations.md).", ""]
    for module, names in CORES.items():
        functions = _functions(os.path.join(ROOT, f"{module}.py"))
        out += [f"### {module}.py", "", "```python"]
        out += ["\n\n".join(functions[name] for name in names), "```", ""]
    out += ["## Standalone versions, to paste into notes", "",
            ast.get_docstring(tree).split("\n\n", 1)[1], "", "```python", "import math",
            "import random", "```", ""]
    functions = _functions(os.path.join(HERE, "whiteboard.py"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out += [f"### `{node.name}`", "", ast.get_docstring(node), "", "```python",
                    functions[node.name], "```", ""]
    return "\n".join(out)


# ------------------------------------------------------------- the Markdown

def render(text: str, inline: Dict[str, str], generated: Dict[str, str], where: str) -> str:
    """Return text with every marked value and block replaced by its generated form."""
    def value(match):
        if match.group(1) not in inline:
            raise KeyError(f"{where}: unknown generated value {match.group(1)!r}")
        return f"<!--v:{match.group(1)}-->{inline[match.group(1)]}<!--/v-->"

    def block(match):
        if match.group(2) not in generated:
            raise KeyError(f"{where}: unknown generated block {match.group(2)!r}")
        return f"{match.group(1)}{generated[match.group(2)]}\n{match.group(4)}"

    return VALUE.sub(value, BLOCK.sub(block, text))


def outputs(data: Data, figures_dir: str) -> Dict[str, str]:
    """Return {path: text} for every file the build owns (absolute paths)."""
    files = {os.path.join(figures_dir, "data.json"): to_json(data)}
    for name, draw in FIGURES.items():
        files[os.path.join(figures_dir, name)] = draw(data)
    files[os.path.join(ROOT, "docs", "whiteboard.md")] = whiteboard_markdown()
    inline, generated = values(data), blocks(data)
    for relative in MARKDOWN:
        path = os.path.join(ROOT, relative)
        text = open(path, encoding="utf-8").read()
        files[path] = render(text, inline, generated, relative)
    return files


def stale(files: Dict[str, str]) -> List[str]:
    return [os.path.relpath(path, ROOT) for path, text in files.items()
            if not os.path.exists(path) or open(path, encoding="utf-8").read() != text]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Write (or with --check, compare) every generated file; return the exit status."""
    parser = argparse.ArgumentParser(prog="python3 scripts/build.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a generated file is out of date")
    parser.add_argument("--figures-dir", default=os.path.join(ROOT, "docs", "figures"),
                        help="where the SVG figures go (default docs/figures)")
    args = parser.parse_args(argv)
    figures_dir = os.path.abspath(args.figures_dir)
    if not args.check and not os.path.isdir(figures_dir):
        parser.error(f"--figures-dir {args.figures_dir!r} is not an existing directory")
    files = outputs(compute(), figures_dir)
    if args.check:
        out_of_date = stale(files)
        for path in out_of_date:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if out_of_date else 0
    for path, text in files.items():
        try:
            write_atomic(path, text)
        except OSError as error:
            print(f"scripts/build.py: cannot write {path}: {error.strerror or error}",
                  file=sys.stderr)
            return 1
    print(f"wrote {len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
