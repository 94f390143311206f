"""Regenerate every figure and every generated number of the pages.

    python3 scripts/build.py            # rewrite what changed: docs/figures/*, and the marked
                                        # numbers and tables of README.md and docs/*.md
    python3 scripts/build.py --check    # write nothing; exit 1 if any of them is out of date

Numbers in the Markdown files sit between markers that this script owns, so they are
never typed by hand:

    <!--v:NAME-->0.8105<!--/v-->               one value, inline
    <!--begin:NAME--> ... <!--end:NAME-->      a block (a table), on lines of its own

The random numbers come from one computation, `stats.report()`, the same call and
defaults as `python3 stats.py`, and its text from the same `stats.format_report`, so the
report, the figures and the pages cannot disagree; then the additive-attention
simulation, the low-precision emulation (scripts/lowprecision_tables.py), and the
training study's committed records (experiments/results.json).  Each step prints its
name and time on stderr.  Only files whose text changed are written, each through a
temporary file renamed into place.
"""

import argparse  # --check, --figures-dir
import ast  # the cores' source, for whiteboard.md
import contextlib  # step(), a context manager
import json  # docs/figures/data.json
import os  # paths
import re  # the markers
import sys  # exit, stderr, path
import time  # the steps' times
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import stats
from experiments import learning, learning_measure, learning_model, learning_tables, stability
from experiments import stability_tables
from scripts import compensated, lowprecision_tables, report_tables, worked_examples
from scripts.figures import Axis, Series, cannot_write, plot, write_atomic
from softmax import softmax

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MARKDOWN = ["README.md", "docs/README.md", "docs/derivations.md", "docs/equations.md",
            "docs/documents.md", "docs/worked-examples.md", "docs/interview.md",
            "docs/numerics.md", "docs/pytorch-jax.md", "docs/glossary.md",
            "docs/low-precision.md", "docs/experiments.md", "docs/whiteboard.md",
            "docs/checker.md",
            "docs/stability.md"]  # the pages the build renders, and test_docs checks
VALUE = re.compile(r"<!--v:([\w.-]+)-->(.*?)<!--/v-->")
BLOCK = re.compile(r"(<!--begin:([\w.-]+)-->\n)(.*?)(<!--end:\2-->)", re.S)
ARMS = report_tables.ARMS  # the report's two arms: "1" unscaled, "1/sqrt(d_k)" scaled


class Data(NamedTuple):
    """Every computed number the pages use, each computed once."""
    report: stats.Report  # the report of python3 stats.py, at its defaults
    printed: List[str]  # what python3 stats.py prints for it
    additive: Dict[int, stats.ScoreVariance]  # d_a -> Var(e) with w_v ~ N(0, 1)
    learning: dict  # the training study's tables, from its committed records
    stability: Optional[dict] = None  # the logit-scale study's tables, from its records


def printed_report(r: stats.Report) -> List[str]:
    """The lines `python3 stats.py` prints for r, its defaults' report."""
    return stats.format_report(r).splitlines()


@contextlib.contextmanager
def step(name: str, quiet: bool = False) -> Iterator[None]:
    """Print the step's name on stderr, then its CPU time when it is done."""
    if not quiet:
        print(f"  {name} ...", end="", file=sys.stderr, flush=True)
    start = time.process_time()
    yield
    if not quiet:
        print(f" {time.process_time() - start:.1f} s", file=sys.stderr, flush=True)


def compute(report: Optional[stats.Report] = None, quiet: bool = True) -> Data:
    """Return every number of the figures and the pages, from one set of seeds; report,
    if given, must be stats.report() (the tests pass the one they computed already)."""
    with step("the report", quiet):
        r = stats.report() if report is None else report
        printed = printed_report(r)
    with step("additive attention", quiet):
        additive = report_tables.additive(r)
    with step("the training study's records", quiet):
        records = learning.docs_data()
    with step("the logit-scale study's records", quiet):
        stable = stability.docs_data()
    return Data(r, printed, additive, records, stable)


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
        "spread": {f"{d} {name}": [list(v) for v in s] for (d, name), s in r.spread.items()},
        "additive": {str(d): list(v) for d, v in data.additive.items()},
        "learning": data.learning,
        "stability": {key: data.stability[key] for key in ("curves", "growth")}},
        indent=1, sort_keys=True) + "\n"


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
    for field, label, styles in (("max_weight", "max weight", (2, 0)),
                                 ("entropy", "entropy", (3, 1))):
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


def figure_gradient_spread(data: Data) -> str:
    """||dL/dQ|| over the rows against d_k: unscaled, its 99% and 90% quantiles and its median,
    each with its 95% interval, and its mean +- one standard error; scaled, its mean."""
    r = data.report
    dks = list(r.dks)
    unscaled, scaled = ARMS  # "1", "1/sqrt(d_k)"
    series = []
    for p, style in ((99, 5), (90, 1)):
        at = stats.PERCENTILES.index(p)
        quantiles = [r.spread[d, unscaled].query_quantiles[at] for d in dks]
        series.append(Series(f"{p}% quantile, {ARMS[unscaled]}", dks,
                             [q.value for q in quantiles], [(q.low, q.high) for q in quantiles],
                             style=style))
    for name, style in ((unscaled, 3), (scaled, 0)):
        means = [r.gradients[d, name].query_grad_mean for d in dks]
        series.append(Series(f"mean, {ARMS[name]}", dks, [m for m, _ in means],
                             [se for _, se in means], style=style))
    medians = [r.gradients[d, unscaled].query_grad for d in dks]
    series.append(Series(f"median, {ARMS[unscaled]}", dks, [m.median for m in medians],
                         [(m.low, m.high) for m in medians], style=2))
    return plot(f"Gradient reaching the queries, ‖dL/dQ‖, over {r.trials} rows per d_k",
                Axis("d_k (log scale)", log=True, ticks=dks),
                Axis("gradient norm (log scale)", log=True), series)


MODERATE = [2.0, 1.0, 0.0, -1.0]  # the causal-chain document's moderate logits


def figure_softmax(data: Data) -> str:
    """softmax([2, 1, 0, -1]) against softmax of the same logits times 10."""
    i = [1.0, 2.0, 3.0, 4.0]
    return plot("The same logits, ten times larger",
                Axis("index i of the logit", ticks=i), Axis("softmax weight p_i"),
                [Series("softmax([2, 1, 0, -1])", i, softmax(MODERATE), style=0),
                 Series("softmax([20, 10, 0, -10])", i, softmax([10 * v for v in MODERATE]),
                        style=2)])


LEARNING_COLOURS = {"1/sqrt(d_k)": ("#000000", "circle"), "1/d_k": ("#0072B2", "square"),
                    "1/ln(d_k)": ("#009E73", "diamond"),
                    "1": ("#D55E00", "triangle")}  # Okabe-Ito
LEARNING_DASHES = {"sgd": "", "adam": "6 3"}


def figure_learning(data: Data) -> str:
    """Median steps to 90% held-out accuracy against d_k, one line per scale and optimizer,
    with the published intervals as bars (a miss drawn at MAX_STEPS + 1)."""
    def y(v):
        return float(learning_measure.MISS) if v is None else float(v)

    series = []
    for scale in learning_model.SCALES:
        colour, marker = LEARNING_COLOURS[scale]
        for optimizer in learning_model.OPTIMIZERS:
            rows = [r for r in data.learning["table"]
                    if (r["scale"], r["optimizer"]) == (scale, optimizer)]
            series.append(Series(f"{scale}, {learning_tables.NAMES[optimizer]}",
                                 [float(r["d_k"]) for r in rows], [y(r["median"]) for r in rows],
                                 [tuple(y(v) for v in r["published"]) for r in rows],
                                 style=(colour, LEARNING_DASHES[optimizer], marker)))
    d_ks = data.learning["settings"]["d_ks"]
    return plot(f"Steps to {learning_model.TARGET:.0%} held-out accuracy, tuned rates",
                Axis("d_k (log scale)", log=True, ticks=[float(d) for d in d_ks]),
                Axis(f"median steps, {len(data.learning['settings']['seeds'])} seeds (log scale; "
                     f"{learning_measure.MISS} = missed)", log=True), series)


STABILITY_STYLES = {"1/sqrt(d_k)": ("#000000", "", "circle"),
                    "1/d_k": ("#0072B2", "7 4", "square"),
                    "qk-norm": ("#009E73", "9 3 2 3", "diamond"),
                    "cap-50": ("#D55E00", "2 3", "triangle")}  # Okabe-Ito


def _stacked(panels: Sequence[str]) -> str:
    """One SVG of plot() panels stacked top to bottom (each a nested <svg>)."""
    opening = '<svg xmlns="http://www.w3.org/2000/svg" '
    heights = [int(re.search(r'height="(\d+)"', panel).group(1)) for panel in panels]
    width = int(re.search(r'width="(\d+)"', panels[0]).group(1))
    body, y = [], 0
    for panel, height in zip(panels, heights):
        body.append(panel.replace(opening, f'<svg x="0" y="{y}" ', 1).rstrip("\n"))
        y += height
    return "\n".join([f'{opening}width="{width}" height="{y}" viewBox="0 0 {width} {y}">',
                      f'<rect width="{width}" height="{y}" fill="white"/>', *body, "</svg>", ""])


def figure_stability_loss(data: Data) -> str:
    """Final held-out loss against the rate under Adam, a panel per d_k, a line per arm,
    with the order-statistic interval over the seeds as bars."""
    curves = [c for c in data.stability["curves"]
              if c["optimizer"] == "adam" and c["arm"] in STABILITY_STYLES]
    panels = []
    for d_k in sorted({c["d_k"] for c in curves}):
        series = []
        for c in (c for c in curves if c["d_k"] == d_k):
            ks = [float(p["octave"]) for p in c["points"]]
            series.append(Series(stability_tables.NAMES[c["arm"]], ks,
                                 [p["median"] for p in c["points"]],
                                 [(p["low"], p["high"]) for p in c["points"]],
                                 style=STABILITY_STYLES[c["arm"]]))
        reference = next(c for c in curves if (c["d_k"], c["arm"]) == (d_k, "1/sqrt(d_k)"))
        series.append(Series("l_0 of 1/sqrt(d_k)", ks, [reference["initial_loss"]] * len(ks),
                             style=("#999999", "2 2", "plus")))
        panels.append(plot(f"Final held-out loss after 200 steps of Adam, d_k = {d_k}",
                           Axis("learning rate, log2", ticks=ks),
                           Axis("loss, median over the seeds (nats)",
                                ticks=[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), series, height=360))
    return _stacked(panels)


def figure_stability_logits(data: Data) -> str:
    """The largest |logit| of each training batch against the step, 1/sqrt(d_k) under Adam
    at d_k = stability_tables.FIGURE_D_K, at four rates around its collapse edge."""
    series = []
    for style, g in enumerate(data.stability["growth"]):
        steps = [t for t in range(len(g["median"])) if t == 0 or (t + 1) % 5 == 0]
        series.append(Series(f"rate {stability_tables.rate_text(g['octave'])}",
                             [float(t + 1) for t in steps], [g["median"][t] for t in steps],
                             style=style))
    return plot(f"Largest |logit| of each batch, 1/sqrt(d_k), d_k = "
                f"{stability_tables.FIGURE_D_K}, Adam",
                Axis("step", ticks=[1.0, 50.0, 100.0, 150.0, 200.0]),
                Axis("largest |s|, median over the seeds (log scale)", log=True), series)


FIGURES: Dict[str, Callable[[Data], str]] = {
    "variance.svg": figure_variance, "saturation.svg": figure_saturation,
    "gradient-logits.svg": figure_gradient_logits,
    "gradient-queries.svg": figure_gradient_queries,
    "gradient-spread.svg": figure_gradient_spread, "softmax.svg": figure_softmax,
    "learning.svg": figure_learning, "stability-loss.svg": figure_stability_loss}
PAGE_FIGURES: Dict[str, Callable[[Data], str]] = {  # shown on a page, not on the front page
    "stability-logits.svg": figure_stability_logits}


# ------------------------------------------------------------- the whiteboard

CORES = {  # module -> the functions that are its mathematics, in the order of the derivation
    "softmax": ["softmax", "_log_normaliser", "_jacobian", "_backward", "_rescale", "_merge"],
    "attention": ["_dots", "_default_scale", "_logits", "_attention", "_score_gradient",
                  "_backward", "_streamed"],
    "stats": ["_centred", "_variance", "_product_variance", "_moments", "_entropy",
              "_jacobian_norm"]}


def _functions(path: str) -> Dict[str, ast.FunctionDef]:
    """{name: node} for every top-level function of a Python file."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _source(path: str, node: ast.FunctionDef) -> str:
    with open(path, encoding="utf-8") as f:
        return "".join(f.readlines()[node.lineno - 1:node.end_lineno]).rstrip("\n")


def whiteboard_cores() -> str:
    """The library's cores, each module's copied from its source as it is."""
    out = []
    for module, names in CORES.items():
        path = os.path.join(ROOT, f"{module}.py")
        functions = _functions(path)
        missing = [name for name in names if name not in functions]
        if missing:
            raise KeyError(f"{module}.py has no function {missing} (build.CORES lists it)")
        out += [f"### {module}.py", "", "```python",
                "\n\n".join(_source(path, functions[name]) for name in names), "```", ""]
    return "\n".join(out[:-1])


def whiteboard_standalone() -> str:
    """Each function of scripts/whiteboard.py: its docstring, then its source."""
    path = os.path.join(HERE, "whiteboard.py")
    out = []
    for name, node in _functions(path).items():
        out += [f"### `{name}`", "", ast.get_docstring(node), "", "```python",
                _source(path, node), "```", ""]
    return "\n".join(out[:-1])


# ------------------------------------------------------------- the Markdown

def values(data: Data) -> Dict[str, str]:
    """Return every inline number of the pages, by name, formatted as it is printed."""
    out = report_tables.values(data.report, data.additive)
    out.update(worked_examples.markdown_values())
    out.update(compensated.markdown_values())
    out.update(lowprecision_tables.values())
    out.update(learning.markdown_values(data.learning))
    out.update(stability.markdown_values(data.stability))
    return out


def blocks(data: Data) -> Dict[str, str]:
    """Return every generated block, by name."""
    out = report_tables.blocks(data.report, data.additive, data.printed)
    out.update({"whiteboard-cores": whiteboard_cores(),
                "whiteboard-standalone": whiteboard_standalone()})
    out.update(worked_examples.markdown_blocks())
    out.update(compensated.markdown_blocks())
    out.update(lowprecision_tables.blocks())
    out.update(learning.markdown_blocks(data.learning))
    out.update(stability.markdown_blocks(data.stability))
    return out


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


def outputs(data: Data, figures_dir: str, quiet: bool = True) -> Dict[str, str]:
    """Return {path: text} for every file the build owns (absolute paths)."""
    files = {os.path.join(figures_dir, "data.json"): to_json(data)}
    with step("the figures", quiet):
        for name, draw in {**FIGURES, **PAGE_FIGURES}.items():
            files[os.path.join(figures_dir, name)] = draw(data)
    with step("the tables and numbers", quiet):
        inline, generated = values(data), blocks(data)
    for relative in MARKDOWN:
        path = os.path.join(ROOT, relative)
        with open(path, encoding="utf-8") as f:
            files[path] = render(f.read(), inline, generated, relative)
    return files


def _differs(path: str, text: str) -> bool:
    if not os.path.exists(path):
        return True
    with open(path, encoding="utf-8") as f:
        return f.read() != text


def stale(files: Dict[str, str]) -> List[str]:
    """The files whose text on disk differs from what the build makes (relative paths)."""
    return [os.path.relpath(path, ROOT) for path, text in files.items() if _differs(path, text)]


# ------------------------------------------------------------- the command

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Write (or with --check, compare) every generated file; return the exit status."""
    parser = _Parser(prog="python3 scripts/build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a generated file is out of date")
    parser.add_argument("--figures-dir", default=os.path.join(ROOT, "docs", "figures"),
                        help="where the SVG figures go (default docs/figures)")
    args = parser.parse_args(argv)
    figures_dir = os.path.abspath(args.figures_dir)
    if not args.check and not (args.figures_dir and os.path.isdir(figures_dir)):
        parser.error(f"--figures-dir {args.figures_dir!r} is not an existing directory")
    targets = [os.path.join(figures_dir, "data.json")] + [os.path.join(ROOT, page)
                                                          for page in MARKDOWN]
    for path in [] if args.check else targets:  # the figures go beside data.json
        why = cannot_write(path)
        if why:
            parser.error(f"cannot write {os.path.relpath(path)}: {why}")
    written: List[str] = []
    try:
        return _build(args.check, figures_dir, written)
    except KeyboardInterrupt:
        print(f"python3 scripts/build.py: interrupted after writing {len(written)} files",
              file=sys.stderr)
        return 130


def _build(check: bool, figures_dir: str, written: List[str]) -> int:
    """Compute every file, then write those that changed (appending each to written)."""
    print("scripts/build.py:", file=sys.stderr)
    files = outputs(compute(quiet=False), figures_dir, quiet=False)
    changed = [path for path, text in files.items() if _differs(path, text)]
    if check:
        for path in changed:
            print(f"out of date: {os.path.relpath(path, ROOT)}", file=sys.stderr)
        print(f"{len(files)} files, {len(changed)} out of date", file=sys.stderr)
        return 1 if changed else 0
    for path in changed:
        try:
            write_atomic(path, files[path])
        except OSError as error:
            sys.exit(f"scripts/build.py: cannot write {path}: {error.strerror or error}")
        written.append(path)
        print(f"wrote {os.path.relpath(path, ROOT)}", file=sys.stderr)
    print(f"{len(files)} files, {len(changed)} written, {len(files) - len(changed)} unchanged",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
