"""Regenerate every figure and every generated number of the documentation.

    python3 docs/build.py            # write docs/figures/*.svg, docs/whiteboard.md, and the
                                     # generated blocks of README.md and docs/*.md
    python3 docs/build.py --check    # write nothing; exit 1 if any of them is out of date

Numbers in the Markdown files sit between markers that this script owns, so they are
never typed by hand:

    <!--v:NAME-->0.8105<!--/v-->               one value, inline
    <!--begin:NAME--> ... <!--end:NAME-->      a block (a table), on lines of its own

The figures and the numbers come from one computation (`compute(Settings())`), with the
same seeds and sizes as the report `python3 stats.py`, so the report, the figures and the
prose agree.  Files are written through a temporary file and renamed.
"""

import argparse  # --check, --figures-dir
import json  # docs/figures/data.json
import math  # sqrt, fsum
import os  # paths
import re  # the markers
import statistics  # NormalDist, for the coverage of a range
import sys  # path, exit, stderr
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _path in (ROOT, HERE):
    if _path not in sys.path:  # run as a script: find the library and the docs' modules
        sys.path.append(_path)

import attention  # noqa: E402
import stats  # noqa: E402
import worked_examples  # noqa: E402
from figures import Axis, Series, plot, write_atomic  # noqa: E402
from softmax import log_softmax, softmax  # noqa: E402
from worked_examples import spread_table, worked_examples_table  # noqa: E402

MARKDOWN = ["README.md", "docs/README.md", "docs/derivations.md", "docs/equations.md",
            "docs/documents.md",
            "docs/worked-examples.md", "docs/interview.md", "docs/numerics.md",
            "docs/pytorch-jax.md", "docs/glossary.md"]  # files with generated parts
VALUE = re.compile(r"<!--v:([\w.-]+)-->(.*?)<!--/v-->")
BLOCK = re.compile(r"(<!--begin:([\w.-]+)-->\n)(.*?)(<!--end:\2-->)", re.S)


class Settings(NamedTuple):
    """The sizes of the computation: the defaults are those of `python3 stats.py`."""
    seed: int = 0
    samples: int = 1000  # (q, k) pairs per d_k for the variance
    trials: int = 60  # attention rows per d_k for saturation and gradients
    keys: int = 16  # m, keys per row
    dks: Tuple[int, ...] = (16, 64, 128, 512, 1024)
    d_as: Tuple[int, ...] = (16, 64, 256, 1024)  # additive attention's hidden widths


SCALINGS = ("none", "1/sqrt(d_k)")  # unscaled, scaled
ADDITIVE_D = 64  # the width of q and k for additive attention's score variance


class Data(NamedTuple):
    """Every computed number; stored as docs/figures/data.json by the build."""
    settings: Settings
    variance: Dict[int, Tuple[float, float]]  # d_k -> (mean of (q.k)^2, standard error)
    saturation: Dict[Tuple[int, str], stats.Saturation]  # (d_k, scaling) -> the means
    gradients: Dict[Tuple[int, str], stats.GradientNorms]
    additive: Dict[int, Tuple[float, float]]  # d_a -> Var(e) and its standard error, w_v ~ N(0, 1)
    learning: Optional[object]  # experiments.learning.learning_curves(), when it exists

    def to_json(self) -> str:
        """Return the data as JSON text (floats as repr: exact, and the same every time)."""
        return json.dumps({
            "settings": self.settings._asdict(),
            "variance": {str(k): list(v) for k, v in self.variance.items()},
            "saturation": {f"{k} {n}": list(v) for (k, n), v in self.saturation.items()},
            "gradients": {f"{k} {n}": list(v) for (k, n), v in self.gradients.items()},
            "additive": {str(k): list(v) for k, v in self.additive.items()},
            "learning": self.learning}, indent=1, sort_keys=True) + "\n"

    @staticmethod
    def from_json(text: str) -> "Data":
        """Return the Data that to_json wrote."""
        raw = json.loads(text)
        def pair(key: str) -> Tuple[int, str]:  # "64 none" -> (64, "none")
            d_k, scaling = key.split(" ", 1)
            return int(d_k), scaling

        settings = raw["settings"]
        return Data(Settings(**{**settings, "dks": tuple(settings["dks"]),
                                "d_as": tuple(settings["d_as"])}),
                    {int(k): tuple(v) for k, v in raw["variance"].items()},
                    {pair(k): stats.Saturation(*v) for k, v in raw["saturation"].items()},
                    {pair(k): stats.GradientNorms(*v) for k, v in raw["gradients"].items()},
                    {int(k): tuple(v) for k, v in raw["additive"].items()}, raw["learning"])


# -------------------------------------------------------------- the computation

def _variance(d_k: int, s: Settings) -> Tuple[float, float]:
    draws = stats.sample_dot_products(d_k, s.samples, seed=s.seed + d_k)  # as the report
    second_moment = math.fsum(x * x for x in draws) / s.samples  # the mean 0 is known
    return second_moment, stats.variance_standard_error(d_k, s.samples)


def _arm(d_k: int, scaled: bool) -> str:
    return f"{d_k} {'scaled' if scaled else 'unscaled'}"  # a JSON key: "64 unscaled"


LEARNING = dict(seeds=(100, 101, 102), steps=100)  # median of three held-out seeds


def _learning() -> Optional[Dict[str, List[float]]]:
    """Return {"<d_k> scaled|unscaled": held-out accuracy after t = 0, 1, ... steps}.

    From experiments/learning.py's learning_curves() (issue 8); None until it is there.
    """
    try:
        sys.path.append(os.path.join(ROOT, "experiments"))
        import learning
        curves = learning.learning_curves(**LEARNING)
        diagnostics = {(d_k, scaled): learning.initial_diagnostics(d_k, scaled)
                       for d_k, scaled in curves}
    except (ImportError, AttributeError, OSError, ValueError) as error:  # not landed yet
        print(f"docs/build.py: no learning curves yet ({error}); figure (e) skipped",
              file=sys.stderr)
        return None
    return {"d_model": learning.D_MODEL,
            "curves": {_arm(*key): list(accuracy) for key, accuracy in sorted(curves.items())},
            "diagnostics": {_arm(*key): dict(value._asdict())
                            for key, value in sorted(diagnostics.items())}}


def compute(s: Settings = Settings(), *, with_learning: bool = True) -> Data:
    """Return every number the figures and the prose use, from one set of seeds."""
    pairs = [(d_k, name) for d_k in s.dks for name in SCALINGS]
    options = dict(m=s.keys, trials=s.trials)
    return Data(
        s, {d_k: _variance(d_k, s) for d_k in s.dks},
        {(d, n): stats.saturation_stats(d, n, seed=s.seed + d, **options) for d, n in pairs},
        {(d, n): stats.gradient_stats(d, n, seed=s.seed + d, **options) for d, n in pairs},
        {d_a: tuple(stats.additive_score_variance(d_a, s.samples, d=ADDITIVE_D, seed=s.seed + d_a))
         for d_a in s.d_as},
        _learning() if with_learning else None)


# ------------------------------------------------------------------ the figures

MODERATE = [2.0, 1.0, 0.0, -1.0]  # the causal-chain document's moderate logits


def figure_variance(data: Data) -> str:
    """(a) Var(q.k) and Var(q.k / sqrt(d_k)) against d_k, log-log, +- one standard error."""
    dks = list(data.settings.dks)
    v, se = zip(*(data.variance[d] for d in dks))
    return plot(
        f"Variance of the score ({data.settings.samples} pairs per d_k)",
        Axis("d_k (log scale)", log=True, ticks=dks), Axis("variance (log scale)", log=True),
        [Series("Var(q·k), simulated", dks, list(v), list(se), style=0),
         Series("d_k (theory)", dks, [float(d) for d in dks], style=5),
         Series("Var(q·k/√d_k), simulated", dks, [a / d for a, d in zip(v, dks)],
                [e / d for e, d in zip(se, dks)], style=1),
         Series("1 (theory)", dks, [1.0] * len(dks), style=4)])


def figure_saturation(data: Data) -> str:
    """(b) largest weight and entropy against d_k, scaled against unscaled."""
    dks = list(data.settings.dks)
    sat = data.saturation
    return plot(
        f"Softmax saturation over m = {data.settings.keys} keys",
        Axis("d_k (log scale)", log=True, ticks=dks),
        Axis("largest weight; entropy (nats)", ticks=[0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
        [Series("max weight, unscaled", dks, [sat[d, "none"].max_weight for d in dks], style=2),
         Series("max weight, scaled", dks, [sat[d, SCALINGS[1]].max_weight for d in dks], style=0),
         Series("entropy, unscaled", dks, [sat[d, "none"].entropy for d in dks], style=3),
         Series("entropy, scaled", dks, [sat[d, SCALINGS[1]].entropy for d in dks], style=1)])


def _figure_gradient(data: Data, what: str, title: str) -> str:
    dks = list(data.settings.dks)
    g = data.gradients
    series = []
    arms = (("none", "median"), (SCALINGS[1], "median"), ("none", "mean"), (SCALINGS[1], "mean"))
    for style, (name, statistic) in enumerate(arms):
        field = f"{what}_grad_median" if statistic == "median" else f"{what}_grad"
        label = f"{statistic}, {'unscaled' if name == 'none' else 'scaled'}"
        series.append(Series(label, dks, [getattr(g[d, name], field) for d in dks],
                             style=(2, 0, 3, 1)[style]))
    return plot(title, Axis("d_k (log scale)", log=True, ticks=dks),
                Axis("gradient norm (log scale)", log=True), series)


def figure_gradient_logits(data: Data) -> str:
    """(c) median and mean ||dL/dS|| (the logits) against d_k."""
    return _figure_gradient(data, "score", "Gradient reaching the logits, ||dL/dS||")


def figure_gradient_queries(data: Data) -> str:
    """(c) median and mean ||dL/dQ|| against d_k."""
    return _figure_gradient(data, "query", "Gradient reaching the queries, ||dL/dQ||")


def figure_softmax(data: Data) -> str:
    """(d) softmax([2, 1, 0, -1]) against softmax of the same logits times 10."""
    i = [1.0, 2.0, 3.0, 4.0]
    return plot("The same logits, ten times larger",
                Axis("index i of the logit", ticks=i), Axis("softmax weight p_i"),
                [Series("softmax([2, 1, 0, -1])", i, softmax(MODERATE), style=0),
                 Series("softmax([20, 10, 0, -10])", i, softmax([10 * v for v in MODERATE]),
                        style=2)])


LEARNING_EVERY = 5  # plot every 5th step: the curves are smooth, the markers stay apart
LEARNING_COLOURS = ("#000000", "#0072B2", "#D55E00", "#009E73")
LEARNING_MARKERS = ("circle", "square", "triangle", "diamond")


def figure_learning(data: Data) -> Optional[str]:
    """(e) held-out accuracy against step, scaled (solid) against unscaled (dashed)."""
    if data.learning is None:
        return None
    curves = data.learning["curves"]
    d_ks = sorted({int(key.split()[0]) for key in curves})
    series = []
    for n, d_k in enumerate(d_ks):
        for arm, dash in (("scaled", ""), ("unscaled", "7 4")):
            accuracy = curves[f"{d_k} {arm}"]
            steps = list(range(0, len(accuracy), LEARNING_EVERY))
            style = (LEARNING_COLOURS[n % 4], dash, LEARNING_MARKERS[n % 4])
            series.append(Series(f"d_k = {d_k}, {arm}", [float(t) for t in steps],
                                 [accuracy[t] for t in steps], style=style))
    return plot("Held-out accuracy while learning (SGD)", Axis("training step"),
                Axis("held-out accuracy", ticks=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), series)


FIGURES: Dict[str, Callable[[Data], Optional[str]]] = {
    "variance.svg": figure_variance, "saturation.svg": figure_saturation,
    "gradient-logits.svg": figure_gradient_logits,
    "gradient-queries.svg": figure_gradient_queries,
    "softmax.svg": figure_softmax, "learning.svg": figure_learning}


# ------------------------------------------------------- the generated numbers

def _r(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def _scaled_theory(d_k: int, scale_name: str) -> float:
    c = stats.scale_factor(scale_name, d_k)
    return stats.scaled_variance(stats.dot_product_variance(d_k), c)


def values(data: Data) -> Dict[str, str]:
    """Return every inline number of the prose, by name, formatted as it is printed."""
    d = data.settings.dks
    sat, g = data.saturation, data.gradients
    small, large = d[0], d[-1]
    out = {"dk.small": str(small), "dk.large": str(large), "samples": str(data.settings.samples),
           "trials": str(data.settings.trials), "keys": str(data.settings.keys),
           "seed": str(data.settings.seed)}
    for k in d:
        v, se = data.variance[k]
        u, s = sat[k, "none"], sat[k, SCALINGS[1]]
        gu, gs = g[k, "none"], g[k, SCALINGS[1]]
        out.update({
            f"var.{k}": f"{v:.1f}", f"var.se.{k}": f"{se:.1f}", f"var.scaled.{k}": f"{v / k:.3f}",
            f"var.scaled.se.{k}": f"{se / k:.3f}",
            f"maxp.none.{k}": f"{u.max_weight:.4f}", f"maxp.scaled.{k}": f"{s.max_weight:.4f}",
            f"entropy.none.{k}": f"{u.entropy:.2f}", f"entropy.scaled.{k}": f"{s.entropy:.2f}",
            f"jac.none.{k}": f"{u.jacobian_norm:.4f}", f"jac.scaled.{k}": f"{s.jacobian_norm:.4f}",
            f"dS.median.none.{k}": _r(gu.score_grad_median, 2),
            f"dS.median.scaled.{k}": _r(gs.score_grad_median, 2),
            f"dQ.median.none.{k}": _r(gu.query_grad_median, 2),
            f"dQ.median.scaled.{k}": _r(gs.query_grad_median, 2),
            f"dS.mean.none.{k}": _r(gu.score_grad, 2), f"dQ.mean.none.{k}": _r(gu.query_grad, 2),
            f"dQ.mean.scaled.{k}": _r(gs.query_grad, 2)})
    scaled = [sat[k, SCALINGS[1]] for k in d]
    out.update({
        "maxp.scaled.min": f"{min(s.max_weight for s in scaled):.4f}",
        "maxp.scaled.max": f"{max(s.max_weight for s in scaled):.4f}",
        "entropy.scaled.min": f"{min(s.entropy for s in scaled):.2f}",
        "entropy.scaled.max": f"{max(s.entropy for s in scaled):.2f}",
        "jac.scaled.min": f"{min(s.jacobian_norm for s in scaled):.4f}",
        "jac.scaled.max": f"{max(s.jacobian_norm for s in scaled):.4f}",
        "ln.keys": f"{math.log(data.settings.keys):.2f}",
        "softmax.moderate.p1": f"{softmax(MODERATE)[0]:.4f}",
        "softmax.times10.p1": f"{softmax([10 * v for v in MODERATE])[0]:.5f}",
        "scale.1/d_k.large": f"{_scaled_theory(large, '1/d_k'):.2g}",
        "scale.1/ln.large": f"{_scaled_theory(large, '1/ln(d_k)'):.1f}",
    })
    out.update(extra_values())
    out.update(_additive_values(data))
    out["learning.d_model"] = "pending" if data.learning is None else str(data.learning["d_model"])
    return out


def _examples(document: str) -> List[worked_examples.QuotedExample]:
    return [ex for ex in worked_examples.DOCUMENT_EXAMPLES if ex.document == document]


def _probabilities(logits: Sequence[float]) -> str:
    # as the worked-examples table prints them: 1 - gap near 1, else 4 significant digits
    gaps = [-math.expm1(lp) for lp in log_softmax(logits)]
    return "[" + ", ".join(f"1 - {g:.3g}" if g < 1e-3 else f"{p:.4g}"
                           for p, g in zip(softmax(logits), gaps)) + "]"


def _example_values() -> Dict[str, str]:
    first, second = _examples("Section 3.2.1 explained")[:2]
    chain = {ex.logits: ex for ex in _examples("causal chain")}
    ten_zero, moderate = (chain[tuple(x)] for x in ([10.0, 0.0], MODERATE))
    quoted = [float(q) for q in first.quoted_p]
    derivative = worked_examples.first_derivative(second.logits)
    general = next(r for r in worked_examples.DOCUMENT_SPREADS
                   if r.document == "general variance" and r.quoted_range is not None)
    k = general.quoted_range / math.sqrt(general.d_k)
    outside = 2 * statistics.NormalDist().cdf(-k)  # P(|Z| > k)
    return {
        "ex.s321.1.p": _probabilities(first.logits), "e": f"{math.e:.4g}",
        "ex.s321.1.quoted.ratio23": f"{quoted[1] / quoted[2]:.4g}",
        "ex.s321.1.derivative": f"{worked_examples.first_derivative(first.logits):.4g}",
        "ex.s321.2.p1": f"{softmax(second.logits)[0]:.4g}",
        "ex.s321.2.derivative": f"{derivative:.4g}",
        "ex.s321.2.derivative.ratio": f"{derivative / float(second.quoted_derivative):.0f}",
        "ex.chain.10.p": _probabilities(ten_zero.logits),
        "ex.chain.moderate.p": _probabilities(moderate.logits),
        "range.general.512": f"{k:.2f}",
        "range.general.512.once-in": f"{float(f'{1 / outside:.2g}'):,.0f}"}


COST = (128, 64)  # n = m, and d_k = d_a = d_v, of the cost comparison


def _cost_values() -> Dict[str, str]:
    n, d = COST
    dot = attention.dot_product_attention_cost(n, n, d, d)
    additive = attention.additive_attention_cost(n, n, d, d)
    return {"cost.n": str(n), "cost.d": str(d), "cost.dot": f"{dot.multiply_adds:,}",
            "cost.additive": f"{additive.multiply_adds:,}",
            "cost.additive.tanh": f"{additive.tanhs:,}"}


def _additive_values(data: Data) -> Dict[str, str]:
    """Var of additive attention's score against d_a: w_v ~ N(0, 1), and N(0, 1/d_a).

    stats.additive_score_variance uses the same draws for every sigma_w, so the fan-in
    variance is Var(c e) = c^2 Var(e) with c = 1/sqrt(d_a), and its standard error too.
    """
    d_as = list(data.settings.d_as)
    ends = f"for d_a = {', '.join(str(d) for d in d_as[:-1])} and {d_as[-1]}"
    unit = [f"{v:.3g} ± {e:.2g}" for v, e in (data.additive[d] for d in d_as)]
    fan_in = [f"{v / d:.2f} ± {e / d:.2f}" for d, (v, e) in zip(d_as, (data.additive[d]
                                                                      for d in d_as))]
    return {"additive.d": str(ADDITIVE_D), "additive.variance.unit": f"{', '.join(unit)} {ends}",
            "additive.variance.fan-in": f"{', '.join(fan_in)} {ends}"}


def extra_values() -> Dict[str, str]:
    """Numbers that need no simulation: the documents' examples, costs, log1p."""
    big = [100.0, 1.0, 1.0, 1.0]  # the general-variance document's example
    return {"logsoftmax.100.p1": f"{log_softmax(big)[0]:.4g}",
            "log.softmax.100.p1": f"{math.log(softmax(big)[0]):g}",
            **_example_values(), **_cost_values()}


def blocks(data: Data) -> Dict[str, str]:
    """Return every generated block (Markdown tables), by name."""
    return {"worked-examples": "\n".join(worked_examples_table()),
            "spreads": "\n".join(spread_table()),
            "report-table": "\n".join(_report_table(data)),
            "documents": "\n".join(_documents_table()),
            "learning-table": "\n".join(_learning_table(data)),
            "learning-diagnostics": "\n".join(_diagnostics_table(data))}


def _diagnostics_table(data: Data) -> List[str]:
    """The training model at initialisation, per d_k and arm (experiments/learning.py)."""
    if data.learning is None:  # HOOK: filled once issue 8's experiment is there
        return ["*(pending: `experiments/learning.py` has not landed)*"]
    rows = data.learning["diagnostics"]
    d_ks = sorted({int(key.split()[0]) for key in rows})
    lines = ["| d_k | arm | std of the logits | largest weight | median \\|dL/dS\\| "
             "| gradient share of the top 10% of examples |", "|---|---|---|---|---|---|"]
    for d_k in d_ks:
        for arm in ("scaled", "unscaled"):
            r = rows[f"{d_k} {arm}"]
            lines.append(f"| {d_k} | {arm} | {r['logit_std']:.2f} | {r['largest_weight']:.3f} "
                         f"| {_r(r['median_gradient'], 2)} | {r['tail_share']:.0%} |")
    return lines


def _first_at(accuracy: Sequence[float], target: float = 0.9) -> str:
    return next((str(t) for t, a in enumerate(accuracy) if a >= target), "never")


def _learning_table(data: Data) -> List[str]:
    """Steps until the median held-out accuracy first reaches 90%, per d_k and arm."""
    if data.learning is None:  # HOOK: filled by `python3 docs/build.py` once issue 8 lands
        return ["*(pending: the training experiment, `experiments/learning.py`, has not "
                "landed; `python3 docs/build.py` fills this in when it has)*"]
    curves = data.learning["curves"]
    d_ks = sorted({int(key.split()[0]) for key in curves})
    seeds = ", ".join(str(seed) for seed in LEARNING["seeds"])
    return ["| d_k | steps to 90%, scaled | steps to 90%, unscaled |", "|---|---|---|"] + [
        f"| {d_k} | {_first_at(curves[f'{d_k} scaled'])} "
        f"| {_first_at(curves[f'{d_k} unscaled'])} |" for d_k in d_ks] + [
        "", f"SGD, each arm at its own tuned rate; median held-out accuracy over seeds "
        f"{seeds}, at most {LEARNING['steps']} steps."]


def _documents_table() -> List[str]:
    return ["| title | what it covers |", "|---|---|"] + [
        f"| {title} | {doc.covers} |" for title, doc in worked_examples.DOCUMENTS.items()]


def _report_table(data: Data) -> List[str]:
    lines = ["| d_k | Var(q·k) | Var(q·k/√d_k) | max weight, unscaled / scaled "
             "| median ‖dL/dS‖, unscaled / scaled | median ‖dL/dQ‖, unscaled / scaled |",
             "|---|---|---|---|---|---|"]
    for k in data.settings.dks:
        v, se = data.variance[k]
        u, s = data.saturation[k, "none"], data.saturation[k, SCALINGS[1]]
        gu, gs = data.gradients[k, "none"], data.gradients[k, SCALINGS[1]]
        lines.append(f"| {k} | {v:.1f} ± {se:.1f} | {v / k:.3f} ± {se / k:.3f} "
                     f"| {u.max_weight:.4f} / {s.max_weight:.4f} "
                     f"| {_r(gu.score_grad_median, 2)} / {_r(gs.score_grad_median, 2)} "
                     f"| {_r(gu.query_grad_median, 2)} / {_r(gs.query_grad_median, 2)} |")
    return lines


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


def whiteboard_markdown() -> str:
    """Return docs/whiteboard.md: each function of docs/whiteboard.py in a code block."""
    import ast  # the functions' spans in the source
    source = open(os.path.join(HERE, "whiteboard.py"), encoding="utf-8").read()
    lines = source.splitlines()
    tree = ast.parse(source)
    intro = ast.get_docstring(tree).split("\n\n", 1)[1]  # without the title line
    out = ["# Whiteboard versions", "",
           "<!-- generated by `python3 docs/build.py` from docs/whiteboard.py: edit that -->", "",
           intro, "", "```python", "import math", "import random", "```", ""]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            start = node.lineno - 1 - len(node.decorator_list)
            out += [f"## `{node.name}`", "", ast.get_docstring(node), "", "```python",
                    *lines[start:node.end_lineno], "```", ""]
    return "\n".join(out)


def outputs(data: Data, figures_dir: str) -> Dict[str, str]:
    """Return {path: text} for every file the build owns (absolute paths)."""
    files = {os.path.join(figures_dir, "data.json"): data.to_json()}
    for name, draw in FIGURES.items():
        svg = draw(data)
        if svg is not None:
            files[os.path.join(figures_dir, name)] = svg
    files[os.path.join(HERE, "whiteboard.md")] = whiteboard_markdown()
    inline, generated = values(data), blocks(data)
    for relative in MARKDOWN:
        path = os.path.join(ROOT, relative)
        if os.path.exists(path):
            text = open(path, encoding="utf-8").read()
            files[path] = render(text, inline, generated, relative)
    return files


def _stale(files: Dict[str, str]) -> List[str]:
    stale = []
    for path, text in files.items():
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            stale.append(os.path.relpath(path, ROOT))
    return stale


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Write (or with --check, compare) every generated file; return the exit status."""
    parser = argparse.ArgumentParser(prog="python3 docs/build.py", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a generated file is out of date")
    parser.add_argument("--figures-dir", default=os.path.join(HERE, "figures"),
                        help="where the SVG figures go (default docs/figures)")
    args = parser.parse_args(argv)
    figures_dir = os.path.abspath(args.figures_dir)
    if not args.check and not os.path.isdir(figures_dir):
        parser.error(f"--figures-dir {args.figures_dir!r} is not an existing directory")
    data = compute()
    files = outputs(data, figures_dir)
    if args.check:
        stale = _stale(files)
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path, text in files.items():
        try:
            write_atomic(path, text)
        except OSError as error:
            print(f"docs/build.py: cannot write {path}: {error.strerror or error}",
                  file=sys.stderr)
            return 1
    print(f"wrote {len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
