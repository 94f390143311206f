"""The documentation is right: pasted code, figures and quoted numbers match the library.

- scripts/whiteboard.py: each standalone version against the library on seeded random
  inputs, and the line limits a whiteboard allows; docs/whiteboard.md generated from the
  modules' own cores;
- docs/figures/*.svg: parsed with xml.etree, every plotted point equal to the number in
  docs/figures/data.json; (slow) every generated file equal to what the build writes now;
- README.md and docs/*.md: stale or unknown markers detected, at most one generated value
  per sentence, every named function, test, link and anchor real;
- the build's command line: bad options refused, a failed write leaves the old file.
"""

import ast
import doctest
import json
import math
import os
import random
import re
import xml.etree.ElementTree as ET
from decimal import ROUND_HALF_EVEN, Decimal

import pytest

import attention
import softmax
import stats
from scripts import build, figures, report_tables, tables, whiteboard
from tests.helpers import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FIGURES_DIR = os.path.join(DOCS, "figures")
SVG = "{http://www.w3.org/2000/svg}"
CLOSE = 1e-12  # the whiteboard versions round differently from the library, not more


def random_matrix(rng, rows, cols):
    return [[rng.gauss(0.0, 1.0) for _ in range(cols)] for _ in range(rows)]


def markdown(relative):
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------- whiteboard

@pytest.mark.parametrize("seed", range(5), ids=lambda s: f"seed {s}")
def test_whiteboard_softmax_family_equals_the_library(seed):
    rng = random.Random(seed)
    x = [rng.gauss(0.0, rng.choice([0.5, 3.0, 30.0])) for _ in range(rng.randint(2, 9))]
    assert_close(whiteboard.softmax(x), softmax.softmax(x), abs=CLOSE, rel=CLOSE)
    assert_close(whiteboard.log_softmax(x), softmax.log_softmax(x), abs=CLOSE, rel=CLOSE)
    assert_close(whiteboard.softmax_jacobian(x), softmax.softmax_jacobian(x), abs=CLOSE)


@pytest.mark.parametrize("seed", range(5), ids=lambda s: f"seed {s}")
def test_whiteboard_attention_forward_backward_and_streaming_equal_the_library(seed):
    rng = random.Random(100 + seed)
    n, m, d_k, d_v = rng.randint(1, 4), rng.randint(1, 6), rng.randint(1, 8), rng.randint(1, 3)
    Q, K = random_matrix(rng, n, d_k), random_matrix(rng, m, d_k)
    V, dO = random_matrix(rng, m, d_v), random_matrix(rng, n, d_v)
    for scale in (None, 1.0):  # scaled, and unscaled
        want = attention.scaled_dot_product_attention(Q, K, V, scale=scale)
        assert_close(whiteboard.attention(Q, K, V, scale), want, abs=CLOSE, rel=CLOSE)
        assert_close(whiteboard.streaming_attention(Q, K, V, scale), want, abs=CLOSE, rel=CLOSE)
        grads = attention.attention_backward(Q, K, V, dO, scale=scale)
        for got, expected in zip(whiteboard.attention_backward(Q, K, V, dO, scale), grads):
            assert_close(got, expected, abs=CLOSE, rel=CLOSE)


@pytest.mark.parametrize("n, m", [(3, 3), (2, 5), (1, 4)], ids=["n = m", "n < m", "decoding"])
def test_whiteboard_causal_attention_is_the_bottom_right_causal_mask(n, m):
    rng = random.Random(n * 10 + m)
    Q, K, V = random_matrix(rng, n, 4), random_matrix(rng, m, 4), random_matrix(rng, m, 2)
    want = attention.scaled_dot_product_attention(
        Q, K, V, attention.causal_mask(n, m, align="bottom-right"))
    assert_close(whiteboard.causal_attention_bottom_right(Q, K, V), want, abs=CLOSE, rel=CLOSE)


@pytest.mark.parametrize("d_k, n, seed", [(4, 50, 0), (16, 40, 3)], ids=["d_k 4", "d_k 16"])
def test_whiteboard_simulation_equals_the_library_samples(d_k, n, seed):
    samples = stats.sample_dot_products(d_k, n, seed=seed)
    assert_close(whiteboard.simulate_dot_variance(d_k, n, seed),
                 math.fsum(x * x for x in samples) / n, rel=CLOSE)


def _function_lines(name):
    """The code lines of a whiteboard function's body: no docstring, blank or comment lines."""
    source = markdown("scripts/whiteboard.py")
    node = next(f for f in ast.parse(source).body
                if isinstance(f, ast.FunctionDef) and f.name == name)
    body = node.body[1:] if ast.get_docstring(node) else node.body
    lines = source.splitlines()[body[0].lineno - 1:node.end_lineno]
    return [line for line in lines if line.strip() and not line.strip().startswith("#")]


@pytest.mark.parametrize("name, limit", [("softmax", 5), ("attention", 8),
                                         ("attention_backward", 15)])
def test_whiteboard_versions_fit_on_a_whiteboard(name, limit):
    assert len(_function_lines(name)) <= limit


def test_whiteboard_needs_only_math_and_random():
    tree = ast.parse(markdown("scripts/whiteboard.py"))
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    assert imported == {"math", "random"}


def test_whiteboard_markdown_shows_the_modules_own_cores_and_the_standalone_versions():
    text = markdown("docs/whiteboard.md")
    assert build.whiteboard_cores() in text and build.whiteboard_standalone() in text
    for path, names in [(f"{module}.py", names) for module, names in build.CORES.items()] + [
            ("scripts/whiteboard.py", [n.name for n in ast.parse(markdown(
                "scripts/whiteboard.py")).body if isinstance(n, ast.FunctionDef)])]:
        source = markdown(path)
        for name in names:  # each function copied as it is, so the page cannot drift
            node = next(f for f in ast.parse(source).body
                        if isinstance(f, ast.FunctionDef) and f.name == name)
            lines = source.splitlines()[node.lineno - 1:node.end_lineno]
            assert "\n".join(lines) in text, f"{path}: {name}"
    assert "1 / math.sqrt(d_k)" in text


def test_a_core_the_build_cannot_find_is_named(monkeypatch):
    monkeypatch.setitem(build.CORES, "softmax", build.CORES["softmax"] + ["_gone"])
    with pytest.raises(KeyError, match=r"softmax.py has no function \['_gone'\]"):
        build.whiteboard_cores()


# ---------------------------------------------------------------- figures

def _points(name):
    """{series label: [(x, y, (low, high) of its error bar, or None)]} of a committed
    figure."""
    tree = ET.parse(os.path.join(FIGURES_DIR, name))
    series = {}
    for group in tree.getroot().iter(f"{SVG}g"):
        points = [(float(p.get("data-x")), float(p.get("data-y")),
                   None if p.get("data-low") is None
                   else (float(p.get("data-low")), float(p.get("data-high"))))
                  for p in group if p.get("class") == "point"]
        if points:
            series[group.get("data-label")] = points
    return series


@pytest.fixture(scope="module")
def committed():
    with open(os.path.join(FIGURES_DIR, "data.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_variance_figure_plots_the_committed_variances(committed):
    series = _points("variance.svg")
    dks = committed["settings"]["dks"]
    assert [(x, y) for x, y, _ in series["Var(q·k), simulated"]] == [
        (d, committed["variance"][str(d)][0]) for d in dks]
    assert [(x, y) for x, y, _ in series["d_k (theory)"]] == [(d, d) for d in dks]


def test_the_saturation_and_gradient_figures_plot_the_committed_statistics(committed):
    dks = committed["settings"]["dks"]
    for (name, arm) in build.ARMS.items():
        cells = [committed["saturation"][f"{d} {name}"] for d in dks]
        assert [y for _, y, _ in _points("saturation.svg")[f"max weight, {arm}"]] == [
            c[0][0] for c in cells]
        for figure, index in (("gradient-logits.svg", 0), ("gradient-queries.svg", 1)):
            medians = [committed["gradients"][f"{d} {name}"][index][0] for d in dks]
            assert [y for _, y, _ in _points(figure)[f"median, {arm}"]] == medians


def test_the_spread_figure_plots_the_committed_quantiles_means_and_median(committed):
    dks = committed["settings"]["dks"]
    series = _points("gradient-spread.svg")
    unscaled = [committed["spread"][f"{d} 1"] for d in dks]  # GradientSpread, as lists
    for p in (99, 90):
        quantiles = [s[1][stats.PERCENTILES.index(p)] for s in unscaled]  # query_quantiles
        assert series[f"{p}% quantile, unscaled"] == [  # a Quantile: value, low, high, coverage
            (d, value, (low, high)) for d, (value, low, high, _) in zip(dks, quantiles)]
    for name, arm in build.ARMS.items():
        means = [committed["gradients"][f"{d} {name}"][3] for d in dks]  # query_grad_mean
        assert series[f"mean, {arm}"] == [(d, m, (m - se, m + se)) for d, (m, se) in
                                          zip(dks, means)]
    medians = [committed["gradients"][f"{d} 1"][1] for d in dks]  # query_grad: a Median
    assert series["median, unscaled"] == [(d, m, (low, high)) for d, (m, low, high, _) in
                                          zip(dks, medians)]
    assert set(series) == {"99% quantile, unscaled", "90% quantile, unscaled",
                           "mean, unscaled", "mean, scaled", "median, unscaled"}


def test_the_softmax_figure_plots_softmax_of_the_logits_and_ten_times_them():
    series = _points("softmax.svg")
    assert [y for _, y, _ in series["softmax([2, 1, 0, -1])"]] == softmax.softmax([2, 1, 0, -1])
    assert [y for _, y, _ in series["softmax([20, 10, 0, -10])"]] == softmax.softmax(
        [20, 10, 0, -10])


def test_plotted_positions_follow_the_values_on_a_log_axis():
    svg = figures.plot("t", figures.Axis("x", log=True), figures.Axis("y", log=True),
                       [figures.Series("s", [1.0, 10.0, 100.0], [2.0, 20.0, 200.0])])
    circles = [c for c in ET.fromstring(svg).iter(f"{SVG}circle") if c.get("data-x")]
    cx = [float(c.get("cx")) for c in circles]
    cy = [float(c.get("cy")) for c in circles]
    # equal ratios are equal steps on a log axis; y grows upwards, so cy falls
    assert abs((cx[1] - cx[0]) - (cx[2] - cx[1])) <= 0.02 and cx[0] < cx[1]
    assert abs((cy[0] - cy[1]) - (cy[1] - cy[2])) <= 0.02 and cy[0] > cy[1]


@pytest.mark.slow
def test_every_generated_file_is_what_the_build_writes_now(default_report):
    # the same comparison as `python3 scripts/build.py --check`, on the session's report
    stale = build.stale(build.outputs(build.compute(default_report), FIGURES_DIR))
    assert not stale, f"out of date, run python3 scripts/build.py: {stale}"


# ---------------------------------------------------------------- the markers

def test_a_stale_or_unknown_marker_is_detected():
    text = "a <!--v:x-->1<!--/v--> and\n<!--begin:t-->\nold\n<!--end:t-->\n"
    assert build.render(text, {"x": "2"}, {"t": "new"}, "f") == (
        "a <!--v:x-->2<!--/v--> and\n<!--begin:t-->\nnew\n<!--end:t-->\n")
    with pytest.raises(KeyError, match="f: unknown generated value 'y'"):
        build.render("<!--v:y-->1<!--/v-->", {}, {}, "f")
    with pytest.raises(KeyError, match="f: unknown generated block 'u'"):
        build.render("<!--begin:u-->\n<!--end:u-->", {}, {}, "f")


def _sentences(text):
    """The prose of a Markdown file, split into sentences (code blocks and tables left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<!--begin:([\w.-]+)-->.*?<!--end:\1-->", "", text, flags=re.S)
    prose = " ".join(line for line in text.splitlines() if not line.startswith("|"))
    return re.split(r"(?<=[.?!])\s+(?=[A-Z`(\[])|\s+- (?=\*\*)|#+ ", prose)


@pytest.mark.parametrize("relative", build.MARKDOWN)
def test_no_sentence_carries_more_than_one_generated_value(relative):
    # a reader of the raw Markdown, in a terminal, sees every marker
    crowded = [s for s in _sentences(markdown(relative)) if s.count("<!--v:") > 1]
    assert not crowded, crowded


def test_the_readme_has_no_inline_values_only_generated_blocks():
    assert "<!--v:" not in markdown("README.md")


# ---------------------------------------------------------------- references

def _referenced(pattern):
    found = set()
    for relative in build.MARKDOWN:
        found |= set(re.findall(pattern, markdown(relative)))
    return sorted(found)


@pytest.mark.parametrize("module, name",
                         _referenced(r"`(softmax|attention|stats)\.(?!py`)(\w+)`"))
def test_every_function_the_docs_name_exists(module, name):
    assert hasattr({"softmax": softmax, "attention": attention, "stats": stats}[module], name)


@pytest.mark.parametrize("file, name", _referenced(r"`(test_\w+)::(test_\w+)`"))
def test_every_test_the_docs_name_exists(file, name):
    with open(os.path.join(ROOT, "tests", f"{file}.py"), encoding="utf-8") as f:
        assert f"def {name}(" in f.read()


def test_the_readme_example_prints_what_it_shows():
    result = doctest.testfile(os.path.join(ROOT, "README.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0


def test_the_readme_is_a_front_page_with_the_two_commands():
    text = markdown("README.md")
    # a front page: 180 lines before the Files table grew, 190 before the gradient's spread,
    # 210 before the training paragraph named its conditions (d_model fixed, --scales all),
    # 215 before the answer in five lines and the three ways in came first, 250 before the
    # test command said why --clear and how long the tests take, 255 before the section on
    # the logit scale during training
    assert len(text.splitlines()) <= 285
    # --clear: run again with another python3, the command tests that one, not the last
    test_command = ("python3 -m venv --clear .venv && .venv/bin/python -m pip install -q "
                    "pytest && .venv/bin/python -m pytest")
    # both commands in one code block, the tests exactly as .ci/run runs them
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    assert block.startswith("python3 stats.py ") and f"\n{test_command}\n" in block
    assert f"\n{test_command}\n" in markdown(".ci/run")
    assert "python3-venv" in text and "https://arxiv.org/abs/1706.03762" in text
    for name in build.FIGURES:  # every figure drawn is shown
        assert f"docs/figures/{name}" in text


def _github_anchor(heading):
    # GitHub's rule: lower case, drop punctuation (keep letters, digits, _ and -),
    # spaces to hyphens
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("relative",
                         build.MARKDOWN + ["scripts/README.md", "benchmarks/README.md"])
def test_every_relative_link_and_anchor_in_the_markdown_resolves(relative):
    path = os.path.join(ROOT, relative)
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown(relative)):
        if "://" in target:
            continue
        file, _, anchor = target.partition("#")
        linked = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        assert os.path.exists(linked), f"{relative}: broken link {target}"
        if anchor:
            with open(linked, encoding="utf-8") as f:
                headings = re.findall(r"^#+ (.+)$", f.read(), re.M)
            assert anchor in {_github_anchor(h) for h in headings}, (relative, target)


def test_the_numbers_written_in_the_prose_are_what_the_code_gives():
    # stated outside the generated markers in docs/numerics.md and docs/derivations.md
    assert f"{softmax.LIMIT:.3g}" == "1.61e+60"
    assert 1.0 + 2.0 ** -53 == 1.0 and f"{2.0 ** -53:.2g}" == "1.1e-16"  # half an ulp of 1
    assert f"{math.ulp(1e9):.3g}" == "1.19e-07"  # float64's spacing near 1e9
    # the length axis: gap 5 against n_0 = 16, as report_tables.GAP and LENGTHS[0] have it
    assert f"here 5 against ln 16 = {math.log(16):.2f}" in markdown("docs/interview.md")
    assert f"so a = {5 / math.log(16):.1f}" in markdown("docs/derivations.md")


def test_the_one_pass_numbers_of_the_build_are_the_slip_recomputed_from_decimal():
    # report_tables' values for the interview's one-pass slip, against tests/test_claims_docs'
    # own zero-started recurrence and 50-digit softmax
    from tests.test_claims_docs import worst
    got = report_tables.values(stats.report(samples=4, trials=2, dks=(16,)), {})
    assert {k: v for k, v in got.items() if k.startswith("onepass.")} == {
        "onepass.normal": "-708", "onepass.zero": "-745",
        "onepass.740": f"{100 * worst([-740.0, -741.0]):.2g}%",
        "onepass.744": f"{100 * worst([-744.0, -745.0]):.2g}%"}
    from tests.test_claims_docs import zero_started
    for x in ([1.0, 3.0, -2.0], [5.0, 0.5], [-740.0, -741.0], [-3.0, 2.0, 7.0]):
        assert report_tables._zero_started(x) == zero_started(x)  # the slip itself, any row
    assert math.exp(-708.0) > 2.0 ** -1022 > math.exp(-709.0)  # the last normal exp
    assert math.exp(-745.0) > 0.0 == math.exp(-746.0)  # the last exp above 0


# ---------------------------------------------------------------- the table helper

def test_a_table_has_a_header_a_rule_and_a_line_per_row_with_pipes_escaped():
    assert tables.table(["a", "b"], [[1, "x|y"], [2.5, ""]]).splitlines() == [
        "| a | b |", "|---|---|", "| 1 | x\\|y |", "| 2.5 |  |"]
    with pytest.raises(ValueError, match="table: row 1 has 1 cells, the header 2"):
        tables.table(["a", "b"], [[1, 2], [3]])


@pytest.mark.parametrize("value, se, want", [
    (1026.24, 45.9, "1026 ± 46"), (15.114, 0.7801, "15.11 ± 0.78"),
    (0.84693, 0.004118, "0.8469 ± 0.0041"), (3.98231, 0.2801, "3.98 ± 0.28"),
    (123456.0, 1234.0, "123456 ± 1234"), (0.5, 0.099, "0.500 ± 0.099"),
    (2.5, 0.0996, "2.50 ± 0.10"), (5.0, 9.96, "5 ± 10")],
    ids=["tens", "tenths", "thousandths", "hundredths", "above 100", "just below 0.1",
         "rounds up to 0.10", "rounds up to 10"])
def test_an_estimate_shows_two_significant_digits_of_its_error_and_the_value_to_that_place(
        value, se, want):
    # the rule, from Decimal: se rounded to two significant digits (half to even, on its
    # exact binary value, as format() rounds), then the place of its second digit
    exact = Decimal(se)
    two = exact.quantize(Decimal(1).scaleb(exact.adjusted() - 1), ROUND_HALF_EVEN)
    places = max(0, 1 - two.adjusted())
    assert want == f"{value:.{places}f} ± {se:.{places}f}"
    assert tables.estimate(value, se) == want == " ± ".join(stats.format_estimate(value, se))


# ---------------------------------------------------------------- the command

def test_bad_options_are_refused_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build.main(["--no-such-option"])
    assert exit_info.value.code == 2
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("x")
    with pytest.raises(SystemExit):
        build.main(["--figures-dir", str(not_a_directory)])
    assert "is not an existing directory" in capsys.readouterr().err


def test_the_build_writes_only_what_changed_and_says_so(tmp_path, monkeypatch, capsys):
    same, changed = tmp_path / "same.md", tmp_path / "changed.md"
    same.write_text("kept\n")
    changed.write_text("old\n")
    files = {str(same): "kept\n", str(changed): "new\n"}
    monkeypatch.setattr(build, "compute", lambda quiet: None)
    monkeypatch.setattr(build, "outputs", lambda data, figures_dir, quiet: files)
    assert build.main(["--check"]) == 1 and changed.read_text() == "old\n"
    assert "2 files, 1 out of date" in capsys.readouterr().err
    before = same.stat().st_mtime_ns
    assert build.main([]) == 0 and changed.read_text() == "new\n"
    assert same.stat().st_mtime_ns == before  # not rewritten
    assert "2 files, 1 written, 1 unchanged" in capsys.readouterr().err
    assert build.main([]) == 0
    assert "2 files, 0 written, 2 unchanged" in capsys.readouterr().err
    assert build.main(["--check"]) == 0


def test_each_step_of_the_build_says_its_name_and_time(capsys):
    with build.step("a step"):
        pass
    with build.step("a quiet step", quiet=True):
        pass
    assert re.fullmatch(r"  a step \.\.\. \d+\.\d s\n", capsys.readouterr().err)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "figure.svg"
    target.write_text("old")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        figures.write_atomic(str(target), "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["figure.svg"]
    with pytest.raises(OSError):  # a directory that does not exist
        figures.write_atomic(str(tmp_path / "missing" / "f.svg"), "x")
