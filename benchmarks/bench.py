"""Print every speed and memory figure of the project as ratios measured in one run.

    python3 benchmarks/bench.py                 # full run: minutes, most of them for memory
    python3 benchmarks/bench.py --quick         # a smoke run of seconds (small sizes)
    python3 benchmarks/bench.py --only forward,backward   # some sections only
    python3 benchmarks/bench.py --markdown      # also the figures as a Markdown table
    python3 benchmarks/bench.py --profile       # also cProfile's top costs
    python3 benchmarks/bench.py --save F.json   # keep the figures in a file
    python3 benchmarks/bench.py --table A.json B.json   # one Markdown table, a column per file

Sections (n = m = 128, d_k = d_v = 64 unless said):
forward:   scaled_dot_product_attention against a lean unvalidated core of the same
           algorithm (the same dot product, math.fsum over the products; max-shifted
           softmax; fsum denominator: the same bits), against the textbook triple loop,
           and, on 3.12+, against the lean core with math.sumprod: what the one
           version-independent dot product costs.
backward:  attention_backward against a lean, equally accurate core (dS by the
           cancellation-free formula, its sum by fsum) and a textbook triple loop.
streaming: streaming_attention (block 64) against the two-pass forward and the triple loop.
memory:    peak memory (tracemalloc) of streaming against two-pass at n = m = 2048, d = 16.
main:      CPU time of `python3 stats.py` at its defaults (user + sys of the child),
           and in process its sampling and row parts.
learning:  CPU time of `python3 experiments/learning.py` at its defaults, and of
           `--scales all` with --jobs 1 and 2.
dots:      the share of `--scales all`'s runs (2 seeds) spent in the exact dot products.
steps:     the CPU time of a training run of the experiment at d_k = 1024 over d_k = 256.

How times are taken: the candidates of one comparison run in interleaved rounds (the
order reversed every other round), with gc disabled while timing; each time is CPU time
(time.process_time, so a shared machine's other processes count less), the best of the
rounds; each ratio is the MEDIAN over rounds of the ratio within a round.
The cores here are benchmark yardsticks, not validated code: they trust their input.
"""

import argparse  # --quick, --markdown, --save, --table
import cProfile  # --profile: where the library's time goes
import gc  # switched off while timing, as timeit does
import json  # --save / --table
import math  # sqrt, exp, fsum, sumprod
import operator  # mul, the products of the dot product
import os  # paths
import platform  # interpreter version
import pstats  # --profile
import random  # seeded inputs
import resource  # CPU time of the stats.py child
import statistics  # median of the paired ratios
import subprocess  # python3 stats.py as a child
import sys  # executable, path, version
import time  # process_time
import tracemalloc  # peak memory

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import attention  # the module under test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

stats = None  # imported by the main-job section only, so the others run if stats.py breaks

HAS_SUMPROD = hasattr(math, "sumprod")

# ------------------------------------------------------------------- the lean cores

# The same inner loop as the library: one dot product per (row, row) pair, math.fsum over
# the rounded products (one rounding of their exact sum: the same bits on every Python).
def dots(u, rows):
    return [math.fsum(map(operator.mul, u, r)) for r in rows]


def sumprod_dots(u, rows):  # 3.12+: faster, but its rounding is the interpreter's
    return [math.sumprod(u, r) for r in rows]


def transpose(A):
    return [list(column) for column in zip(*A)]


def matmul(A, B):
    B_columns = transpose(B)
    return [dots(row, B_columns) for row in A]


def lean_weights(Q, K, scale, dot_rows=dots):
    """P = row softmax of scale * Q K^T: max subtracted, denominator by fsum."""
    P = []
    for q in Q:
        s = [scale * x for x in dot_rows(q, K)]
        top = max(s)
        e = [math.exp(x - top) for x in s]
        total = math.fsum(e)
        P.append([x / total for x in e])
    return P


def lean_forward(Q, K, V):
    P = lean_weights(Q, K, 1.0 / math.sqrt(len(Q[0])))
    return matmul(P, V)


def lean_forward_sumprod(Q, K, V):
    P = lean_weights(Q, K, 1.0 / math.sqrt(len(Q[0])), sumprod_dots)
    V_columns = transpose(V)
    return [sumprod_dots(row, V_columns) for row in P]


def lean_score_gradient_row(p, g):
    """dS_i = p_i ((g_i - g_k) + sum_{j != k} p_j (g_k - g_j)), k = argmax p: no cancellation.

    The j = k term of the fsum is p_k * 0.0 = 0.0 exactly, so it is left in.
    """
    g_k = g[p.index(max(p))]
    c = math.fsum([p_j * (g_k - g_j) for p_j, g_j in zip(p, g)])
    return [p_j * ((g_j - g_k) + c) for p_j, g_j in zip(p, g)]


def lean_backward(Q, K, V, dO):
    """(dQ, dK, dV) of softmax(scale Q K^T) V; no P V product (the backward never uses it)."""
    scale = 1.0 / math.sqrt(len(Q[0]))
    P = lean_weights(Q, K, scale)
    dV = matmul(transpose(P), dO)  # P^T dO: m x d_v
    dP = [dots(g, V) for g in dO]  # dO V^T: n x m
    dS = [lean_score_gradient_row(p, g) for p, g in zip(P, dP)]
    dQ = [[scale * x for x in row] for row in matmul(dS, K)]
    dK = [[scale * x for x in row] for row in matmul(transpose(dS), Q)]
    return dQ, dK, dV


# --------------------------------------------------------------- the textbook loops

def textbook_weights(Q, K, scale):
    P = []
    for q in Q:
        s = []
        for k in K:
            acc = 0.0
            for t in range(len(q)):
                acc += q[t] * k[t]
            s.append(acc * scale)
        top = max(s)
        e = [math.exp(x - top) for x in s]
        total = sum(e)
        P.append([x / total for x in e])
    return P


def textbook_matmul(A, B):
    """(A B)[i][j] = sum_t A[i][t] B[t][j], every sum written out by hand."""
    C = []
    for i in range(len(A)):
        row = []
        for j in range(len(B[0])):
            acc = 0.0
            for t in range(len(B)):
                acc += A[i][t] * B[t][j]
            row.append(acc)
        C.append(row)
    return C


def textbook_forward(Q, K, V):
    """The triple loop of a first course, as the project's first benchmark wrote it (the
    yardstick the speed targets were set against): every sum written out by hand."""
    d_k = len(Q[0])
    output = []
    for q in Q:
        scores = []
        for k in K:
            s = 0.0
            for t in range(d_k):
                s += q[t] * k[t]
            scores.append(s / math.sqrt(d_k))
        top = max(scores)
        e = [math.exp(s - top) for s in scores]
        total = sum(e)
        row = []
        for c in range(len(V[0])):
            acc = 0.0
            for j in range(len(V)):
                acc += e[j] / total * V[j][c]
            row.append(acc)
        output.append(row)
    return output


def textbook_transpose(A):
    return [[A[i][j] for i in range(len(A))] for j in range(len(A[0]))]


def textbook_backward(Q, K, V, dO):
    scale = 1.0 / math.sqrt(len(Q[0]))
    P = textbook_weights(Q, K, scale)
    dV = textbook_matmul(textbook_transpose(P), dO)
    dP = textbook_matmul(dO, textbook_transpose(V))
    dS = []
    for i in range(len(P)):
        mean_g = 0.0
        for j in range(len(P[i])):
            mean_g += P[i][j] * dP[i][j]
        dS.append([P[i][j] * (dP[i][j] - mean_g) for j in range(len(P[i]))])
    dQ = [[scale * x for x in row] for row in textbook_matmul(dS, K)]
    dK = [[scale * x for x in row] for row in textbook_matmul(textbook_transpose(dS), Q)]
    return dQ, dK, dV


# ---------------------------------------------------------------------- measuring

def random_matrix(rows, cols, rng):
    return [[rng.gauss(0.0, 1.0) for _ in range(cols)] for _ in range(rows)]


def interleaved(candidates, rounds):
    """Return {name: [CPU seconds per round]}, running the candidates round-robin."""
    times = {name: [] for name, _ in candidates}
    gc.collect()
    gc.disable()  # a collection landing in one candidate's run is noise, not speed
    try:
        for r in range(rounds):
            for name, thunk in (candidates if r % 2 == 0 else candidates[::-1]):
                start = time.process_time()
                thunk()
                times[name].append(time.process_time() - start)
    finally:
        gc.enable()
    return times


def paired_ratio(times, a, b):
    """Median over rounds of time(a) / time(b) within the same round."""
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def peak_memory(fn, *args, **kwargs):
    """Peak bytes allocated while fn runs (tracemalloc; the inputs already exist)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def relative_difference(A, B):
    """max |a - b| / max |b| over the entries of two matrices (0.0 when identical)."""
    worst = max(abs(a - b) for ra, rb in zip(A, B) for a, b in zip(ra, rb))
    return worst / max(abs(b) for rb in B for b in rb)


def child_cpu(args):
    """CPU seconds (user + sys) of one child process `python args...`, run from the repo."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable] + args, cwd=ROOT, check=True,  # its output is not ours
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def child_times(args):
    """(CPU s, wall s) of one child process; the CPU time counts the pool workers it
    waited for."""
    start = time.monotonic()
    cpu = child_cpu(args)
    return cpu, time.monotonic() - start


def _last_words(error: subprocess.CalledProcessError) -> str:
    """The exit status and the last line the child wrote on stderr."""
    said = (error.stderr or b"").decode(errors="replace").strip().splitlines()
    return f"exit status {error.returncode}" + (f": {said[-1]}" if said else "")


def cpu_of(thunk):
    start = time.process_time()
    thunk()
    return time.process_time() - start


# ------------------------------------------------------------------------ figures

class Figures:
    """The figures of one run, printed as they come and kept for --markdown and --save."""

    def __init__(self, judge):
        self.judge = judge  # False on --quick: the targets are for the full sizes only
        self.rows = []  # dicts: section, key, label, value, text, target, ok
        self.title = ""
        self.failures = []  # sections that could not run (a module mid-refactor)

    def section(self, title):
        self.title = title
        self.started = time.perf_counter()
        print(f"\n{title}\n{'-' * len(title)}", flush=True)

    def took(self):
        """Print the wall time of the section just finished (to plan a rerun, not a figure)."""
        print(f"  (section took {time.perf_counter() - self.started:.0f} s wall)", flush=True)

    def add(self, key, label, value, fmt, target=None, ok=None):
        target, ok = (target, ok) if self.judge else (None, None)
        text = format(value, fmt)
        verdict = "" if ok is None else ("  ok" if ok else "  MISSED")
        aim = f"  (target {target}{verdict.rstrip()})" if target else ""
        print(f"  {label:<52} {text:>10}{aim}", flush=True)
        self.rows.append(dict(section=self.title, key=key, label=label, value=value, text=text,
                              target=target, ok=ok))

    def note(self, text):
        print(f"  {text}", flush=True)

    def failed(self, text):
        """Report a section that could not run; the run then exits with status 1."""
        self.failures.append(text)
        self.note(text)


def bench_forward(out, n, d, rounds, rng):
    Q, K, V = (random_matrix(n, d, rng) for _ in range(3))
    ours = attention.scaled_dot_product_attention
    out.section(f"1. forward, n = m = {n}, d_k = d_v = {d} ({rounds} rounds)")
    out.add("fwd.lean_agree", "lean core vs ours: max |diff| / max |entry|",
            relative_difference(lean_forward(Q, K, V), ours(Q, K, V)), ".1e")
    candidates = [("ours", lambda: ours(Q, K, V)), ("lean", lambda: lean_forward(Q, K, V)),
                  ("textbook", lambda: textbook_forward(Q, K, V))]
    if HAS_SUMPROD:
        candidates.append(("sumprod", lambda: lean_forward_sumprod(Q, K, V)))
    t = interleaved(candidates, rounds)
    for name, _ in candidates:
        out.add(f"fwd.{name}_ms", f"{name}: best time (ms)", min(t[name]) * 1e3, ".1f")
    out.add("fwd.ours_over_lean", "ours / lean", paired_ratio(t, "ours", "lean"), ".2f",
            "<= 1.15", paired_ratio(t, "ours", "lean") <= 1.15)
    out.add("fwd.textbook_over_ours", "textbook / ours", paired_ratio(t, "textbook", "ours"),
            ".2f")
    if HAS_SUMPROD:
        out.add("fwd.lean_over_sumprod", "lean (fsum) / lean (sumprod)",  # README: why
                paired_ratio(t, "lean", "sumprod"), ".2f")


def bench_backward(out, n, d, rounds, rng):
    Q, K, V, dO = (random_matrix(n, d, rng) for _ in range(4))
    ours = attention.attention_backward
    out.section(f"2. backward, n = m = {n}, d_k = d_v = {d} ({rounds} rounds)")
    grads, lean = ours(Q, K, V, dO), lean_backward(Q, K, V, dO)
    for name, a, b in zip(("dQ", "dK", "dV"), lean, grads):
        out.add(f"bwd.lean_agree_{name}", f"lean core vs ours, {name}: max |diff| / max |entry|",
                relative_difference(a, b), ".1e")
    t = interleaved([("ours", lambda: ours(Q, K, V, dO)),
                     ("lean", lambda: lean_backward(Q, K, V, dO)),
                     ("textbook", lambda: textbook_backward(Q, K, V, dO))], rounds)
    for name in ("ours", "lean", "textbook"):
        out.add(f"bwd.{name}_ms", f"{name}: best time (ms)", min(t[name]) * 1e3, ".1f")
    ratio = paired_ratio(t, "ours", "lean")
    out.add("bwd.ours_over_lean", "ours / lean", ratio, ".2f", "<= 1.15", ratio <= 1.15)
    out.add("bwd.textbook_over_ours", "textbook / ours", paired_ratio(t, "textbook", "ours"),
            ".2f")


def bench_streaming(out, n, d, rounds, rng):
    Q, K, V = (random_matrix(n, d, rng) for _ in range(3))
    stream, two_pass = attention.streaming_attention, attention.scaled_dot_product_attention
    out.section(f"3. streaming (block 64), n = m = {n}, d_k = d_v = {d} ({rounds} rounds)")
    t = interleaved([("stream", lambda: stream(Q, K, V, block_size=64)),
                     ("two_pass", lambda: two_pass(Q, K, V)),
                     ("textbook", lambda: textbook_forward(Q, K, V))], rounds)
    out.add("stream.ms", "streaming: best time (ms)", min(t["stream"]) * 1e3, ".1f")
    out.add("stream.over_two_pass", "streaming / two-pass",
            paired_ratio(t, "stream", "two_pass"), ".2f")
    out.add("stream.textbook_over_stream", "textbook / streaming",
            paired_ratio(t, "textbook", "stream"), ".2f")


def bench_memory(out, n, d, rng):
    Q, K, V = (random_matrix(n, d, rng) for _ in range(3))
    out.section(f"3b. peak memory (tracemalloc), n = m = {n}, d_k = d_v = {d}")
    one = peak_memory(attention.streaming_attention, Q, K, V, block_size=64)
    two = peak_memory(attention.scaled_dot_product_attention, Q, K, V)
    out.add("mem.two_pass_mib", "two-pass: peak (MiB)", two / 2**20, ".1f")
    out.add("mem.stream_mib", "streaming (block 64): peak (MiB)", one / 2**20, ".2f")
    out.add("mem.stream_over_two_pass", "streaming / two-pass, peak memory", one / two, ".4f",
            "<= 0.1", one / two <= 0.1)


# The main job's defaults, as `python3 stats.py` runs them (see stats.report).
MAIN_DKS, MAIN_SAMPLES, MAIN_TRIALS, MAIN_KEYS = (16, 64, 128, 512, 1024), 1000, 2000, 16


def sampling_part(dks, samples, seed=0):
    """Section 1's draws (one seed per d_k, as the report does) and its projection line's."""
    for d_k in dks:
        stats.sample_dot_products(d_k, samples, seed=seed + d_k)
    stats.sample_projected_dot_products(16, samples, d_model=32, seed=seed)


def rows_part(dks, m, trials, seed=0):
    """Sections 3-4: saturation and gradients of the rows, unscaled and scaled (each
    public function draws its own rows, so this is a little more than the report does)."""
    for d_k in dks:
        for scale_name in ("1", "1/sqrt(d_k)"):
            stats.saturation_stats(d_k, scale_name, m=m, trials=trials, seed=seed + d_k)
            stats.gradient_stats(d_k, scale_name, m=m, trials=trials, seed=seed + d_k)


def bench_main_job(out, quick, repeat, rng=None):  # rng: unused, as every section gets one
    global stats
    import stats  # noqa: F811  (see the note where stats is first bound)
    if quick:  # a small report: the same code paths, a fraction of the work
        dks, samples, trials = (16, 64), 40, 4
        args = ["stats.py", "--dk", "16,64", "--samples", str(samples),
                "--trials", str(trials)]
    else:
        dks, samples, trials, args = MAIN_DKS, MAIN_SAMPLES, MAIN_TRIALS, ["stats.py"]
    out.section(f"4. the main job: python3 stats.py {' '.join(args[1:])}".rstrip()
                + f" (best of {repeat})")
    try:
        startup = min(child_cpu(["-c", "import stats"]) for _ in range(repeat))
        whole = min(child_cpu(args) for _ in range(repeat))
    except subprocess.CalledProcessError as error:
        out.failed(f"python3 stats.py failed: {_last_words(error)}")
        return
    out.add("main.cpu_s", "python3 stats.py: CPU s (user + sys, child)", whole, ".2f",
            None if quick else "<= 2.5 on 3.11",
            None if quick or sys.version_info[:2] != (3, 11) else whole <= 2.5)
    out.add("main.startup_s", "  of which start-up (python -c 'import stats')", startup, ".2f")
    try:
        sampling = min(cpu_of(lambda: sampling_part(dks, samples)) for _ in range(repeat))
        rows = min(cpu_of(lambda: rows_part(dks, MAIN_KEYS, trials)) for _ in range(repeat))
    except (AttributeError, TypeError) as error:  # stats.py mid-refactor: say so, go on
        out.failed(f"in-process parts skipped: {type(error).__name__}: {error}")
        return
    out.add("main.sampling_s", "sampling part (section 1) in process: CPU s", sampling,
            ".2f")
    out.add("main.sampling_share", "  share of the main job", sampling / whole, ".0%")
    out.add("main.rows_s", "rows part (sections 3, 4) in process: CPU s", rows, ".2f")


def bench_learning(out, quick, repeat, rng=None):  # rng: unused, as every section gets one
    args = ["experiments/learning.py"] + (["--dk", "16", "--seeds", "1"] if quick else [])
    out.section(f"5. the training experiment: python3 {' '.join(args)} (best of {repeat})")
    try:
        whole = min(child_cpu(args) for _ in range(repeat))
    except subprocess.CalledProcessError as error:
        out.failed(f"python3 experiments/learning.py failed: {_last_words(error)}")
        return
    out.add("learning.cpu_s", "python3 experiments/learning.py: CPU s (child)", whole, ".1f",
            None if quick else "<= 20", None if quick else whole <= 20.0)
    every = ["experiments/learning.py", "--scales", "all"]
    every += ["--dk", "16", "--seeds", "2"] if quick else []
    out.note(f"python3 {' '.join(every)}, --jobs 1 then --jobs 2 (one run each):")
    try:
        one_cpu, one_wall = child_times(every + ["--jobs", "1"])
        two_cpu, two_wall = child_times(every + ["--jobs", "2"])
    except subprocess.CalledProcessError as error:
        out.failed(f"python3 {' '.join(every)} failed: {_last_words(error)}")
        return
    out.add("learning.all_cpu_s", "--jobs 1: CPU s (child)", one_cpu, ".1f",
            None if quick else "<= 60", None if quick else one_cpu <= 60.0)
    out.add("learning.all_wall_1", "--jobs 1: wall s", one_wall, ".1f")
    out.add("learning.all_cpu_2", "--jobs 2: CPU s (child and its workers)", two_cpu, ".1f")
    out.add("learning.all_wall_2", "--jobs 2: wall s", two_wall, ".1f")
    two_cores = (os.cpu_count() or 1) >= 2
    out.add("learning.jobs_speedup", "wall of --jobs 1 / wall of --jobs 2", one_wall / two_wall,
            ".2f", None if quick or not two_cores else ">= 1.7 on 2 cores",
            None if quick or not two_cores else one_wall / two_wall >= 1.7)


def bench_dots(out, d_ks, seeds, rng=None):  # rng: unused, as every section gets one
    """Time learning_model.dots, the exact dot products, around each of its calls in the
    runs of `--scales all` (the first `seeds` seeds), in this process: the share of the
    experiment spent in the sums that keep its output the same bytes on every Python."""
    from experiments import learning_measure, learning_model
    spent = [0.0]
    exact = learning_model.dots

    def timed(A, B):
        start = time.process_time()
        product = exact(A, B)
        spent[0] += time.process_time() - start
        return product

    plan = learning_measure.Plan(learning_model.SCALES, learning_model.OPTIMIZERS, d_ks,
                                 learning_measure.HELD_OUT_SEEDS[:seeds])
    out.section(f"6. where the experiment's time goes: the runs of --scales all --seeds {seeds} "
                f"--dk {' '.join(map(str, d_ks))}, in process")
    learning_model.dots = timed  # model() looks the name up when a run starts
    try:
        whole = cpu_of(lambda: learning_measure.measure(plan))
    finally:
        learning_model.dots = exact
    out.add("dots.cpu_s", "CPU s of the runs", whole, ".1f")
    out.add("dots.share", "share in learning_model.dots (math.fsum products)", spent[0] / whole,
            ".0%")


def bench_steps(out, d_ks, rounds, steps, rng=None):  # rng: unused, as every section gets one
    """Time training runs of `steps` steps (seed 100, 1/sqrt(d_k), stop_at_target False) at
    the two d_k, interleaved, under SGD and Adam: what a larger d_k costs the experiment."""
    from experiments import learning_model
    small, large = d_ks
    out.section(f"7. a training run of {steps} steps at d_k = {large} against d_k = {small} "
                f"({rounds} rounds)")
    for optimizer, lr in (("sgd", 1.0), ("adam", 0.03125)):
        candidates = [(d_k, lambda d_k=d_k: learning_model.train(
            100, d_k, scale="1/sqrt(d_k)", optimizer=optimizer, lr=lr, max_steps=steps,
            stop_at_target=False)) for d_k in d_ks]
        times = interleaved(candidates, rounds)
        ratios = sorted(x / y for x, y in zip(times[large], times[small]))
        out.add(f"steps.{optimizer}", f"{optimizer}: time at d_k = {large} / at d_k = {small}",
                paired_ratio(times, large, small), ".2f")
        out.note(f"{optimizer}: the rounds' ratios run from {ratios[0]:.2f} to {ratios[-1]:.2f}; "
                 f"best times {min(times[small]):.2f} s and {min(times[large]):.2f} s")


def profile(n, d, rng, top=12):
    """Print the top own-time costs of one forward and one backward call."""
    Q, K, V, dO = (random_matrix(n, d, rng) for _ in range(4))
    for title, call in (("scaled_dot_product_attention",
                         lambda: attention.scaled_dot_product_attention(Q, K, V)),
                        ("attention_backward",
                         lambda: attention.attention_backward(Q, K, V, dO))):
        profiler = cProfile.Profile()
        profiler.runcall(call)
        print(f"\nprofile of {title} at n = m = {n}, d = {d} (tottime = own time)")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


# ------------------------------------------------------------------------ output

def interpreter():
    return f"{platform.python_implementation()} {platform.python_version()}"


def machine():
    """CPU count and model, for the record (Linux: /proc/cpuinfo)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} x {model}"


def revision():
    """The commit of the modules measured, and whether they differ from it."""
    try:
        git = ["git", "-C", ROOT]
        commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        changed = subprocess.run(git + ["status", "--porcelain", "--", "softmax.py",
                                        "attention.py", "stats.py"],
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit + (" + uncommitted changes to the modules" if changed else "")


def load():
    """The 1-minute load average: above nproc, other processes shared the CPUs."""
    return f"{os.getloadavg()[0]:.1f}"


def markdown(runs):
    """One Markdown table: a row per figure, a column per run (dicts from --save)."""
    header = "| figure | target | " + " | ".join(r["python"] for r in runs) + " |"
    lines = [header, "|" + "---|" * (len(runs) + 2)]
    for field, name in (("date", "date"), ("revision", "modules at"), ("machine", "machine"),
                        ("load", "load average (1 min)")):
        lines.append(f"| {name} | | " + " | ".join(r.get(field, "") for r in runs) + " |")
    order, section = [], None
    for run in runs:  # a figure only some runs have (sumprod: 3.12+) goes after its neighbour
        previous = None
        for row in run["rows"]:
            if row["key"] not in order:
                order.insert(order.index(previous) + 1 if previous else 0, row["key"])
            previous = row["key"]
    for key in order:
        cells = [next((r for r in run["rows"] if r["key"] == key), None) for run in runs]
        first = next(c for c in cells if c)
        if first["section"] != section:
            section = first["section"]
            lines.append(f"| **{section}** |" + " |" * (len(runs) + 1))
        target = next((c["target"] for c in cells if c and c["target"]), "") or ""
        texts = ["" if c is None else c["text"] + (" (missed)" if c["ok"] is False else "")
                 for c in cells]
        cells = [first["label"].strip(), target] + texts
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


# name: (function, its arguments on --quick, its arguments on a full run)
SECTIONS = {
    "forward": (bench_forward, (24, 16, 3), (128, 64, 15)),
    "backward": (bench_backward, (24, 16, 3), (128, 64, 7)),
    "streaming": (bench_streaming, (24, 16, 3), (128, 64, 9)),
    "memory": (bench_memory, (192, 16), (2048, 16)),
    "main": (bench_main_job, (True, 1), (False, 3)),
    "learning": (bench_learning, (True, 1), (False, 1)),
    "dots": (bench_dots, ((16,), 1), ((16, 64, 256), 2)),
    "steps": (bench_steps, ((16, 64), 3, 5), ((256, 1024), 9, 20)),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser():
    parser = _Parser(prog="python3 benchmarks/bench.py", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--markdown", action="store_true",
                        help="also print the figures as a Markdown table")
    parser.add_argument("--save", metavar="FILE", help="write the figures as JSON")
    parser.add_argument("--table", metavar="FILE", nargs="+",
                        help="print one Markdown table from saved runs, then stop")
    parser.add_argument("--profile", action="store_true",
                        help="also print cProfile's top costs of a forward and a backward call")
    parser.add_argument("--only", type=lambda t: t.split(","), default=list(SECTIONS),
                        help="comma-separated sections to run, of " + ",".join(SECTIONS))
    return parser


def _saved_run(parser, path):
    """The run that --save wrote to path, or a usage error that says why it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
    except OSError as error:
        parser.error(f"--table: cannot read {path}: {error.strerror or error}")
    except ValueError as error:  # json.JSONDecodeError, or bytes that are not UTF-8
        parser.error(f"--table: {path} is not JSON ({error})")
    fields = {"key", "section", "label", "target", "text", "ok"}  # of each row: markdown()
    if not (isinstance(run, dict) and isinstance(run.get("python"), str)
            and isinstance(run.get("rows"), list)
            and all(isinstance(row, dict) and fields <= set(row) for row in run["rows"])):
        parser.error(f"--table: {path} is not a run saved by --save")
    return run


def _cannot_write(path):
    """Why the file path cannot be written, or None if it can."""
    if not path:
        return "the path is empty"
    folder = os.path.dirname(path) or os.curdir
    if os.path.isdir(path):
        return "it is a folder"
    if not os.path.exists(folder):
        return f"there is no folder {folder}"
    if not os.path.isdir(folder):
        return f"{folder} is not a folder"
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        return "permission denied"
    return None


def run_sections(args, run):
    """Print the header, run the chosen sections, print the load; return the Figures.
    Ctrl-C raises KeyboardInterrupt("in section NAME, after K of N sections")."""
    print(f"{run['python']} ({sys.executable}); math.sumprod: "
          f"{'yes (compared in section 1)' if HAS_SUMPROD else 'no'}; {run['mode']}\n"
          f"{run['date']}; {run['machine']}; modules at {run['revision']}; "
          f"load average {run['load']}")
    started, out = time.perf_counter(), Figures(judge=not args.quick)
    chosen = [name for name in SECTIONS if name in args.only]
    for seed, name in enumerate(SECTIONS):  # a seed per section: --only changes no input
        if name in chosen:
            bench, quick_sizes, full_sizes = SECTIONS[name]
            try:
                bench(out, *(quick_sizes if args.quick else full_sizes), random.Random(seed))
            except ImportError as error:  # a module mid-refactor: say so, run the rest
                out.failed(f"section {name} skipped: {error}")
            except KeyboardInterrupt:
                raise KeyboardInterrupt(f"in section {name}, after {chosen.index(name)} of "
                                        f"{len(chosen)} sections") from None
            out.took()
    run["load"] += f" at the start, {load()} at the end"
    print(f"\nload average (1 min): {run['load']}; "
          f"the run took {time.perf_counter() - started:.0f} s wall")
    return out


def main(argv=None):
    """Run the command line; return 0, 1 if a figure missed its target or a section
    failed, 2 for a usage error, 130 on Ctrl-C."""
    parser = _parser()
    args = parser.parse_args(argv)
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown section(s) {sorted(unknown)}; choose from {list(SECTIONS)}")
    if args.table:
        print(markdown([_saved_run(parser, path) for path in args.table]))
        return 0
    why = None if args.save is None else _cannot_write(args.save)
    if why:
        parser.error(f"--save: cannot write {args.save}: {why}")
    try:
        return _bench(args)
    except KeyboardInterrupt as stop:
        print(f"python3 benchmarks/bench.py: interrupted {stop}".rstrip(), file=sys.stderr)
        return 130


def _bench(args):
    """Run the chosen sections; print, and save, the figures."""
    chosen = [name for name in SECTIONS if name in args.only]
    mode = f"{'quick' if args.quick else 'full'} run" + (
        "" if len(chosen) == len(SECTIONS) else f" of {', '.join(chosen)} only (--only)")
    run = dict(python=interpreter(), sumprod=HAS_SUMPROD, mode=mode, machine=machine(),
               date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), revision=revision(),
               load=load())
    out = run_sections(args, run)
    if args.profile:
        profile(24 if args.quick else 128, 16 if args.quick else 64, random.Random(9))
    run["rows"] = out.rows
    if args.markdown:
        print("\n" + markdown([run]))
    if args.save is not None:
        try:
            with open(args.save, "w") as f:
                json.dump(run, f, indent=1)
        except OSError as error:  # checked before the run: a disk full, a folder gone since
            print(f"python3 benchmarks/bench.py: cannot write {args.save}: "
                  f"{error.strerror or error}", file=sys.stderr)
            return 1
    return 1 if out.failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `bench.py | head` closed the pipe: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
