"""Print speed and memory figures for attention.py (figures, not a test).

    python3 benchmarks/bench_attention.py            # full run, about a minute
    python3 benchmarks/bench_attention.py --quick    # smaller sizes, a few seconds

1. scaled_dot_product_attention at n = m = 128, d_k = d_v = 64 against a
   textbook triple loop (and NumPy, when it is installed), same interpreter.
2. Peak memory (tracemalloc) of streaming_attention against
   scaled_dot_product_attention at n = m = 2048, d = 16.
3. How the time grows with n and with d.
"""

import argparse  # --quick
import gc  # switched off while timing, as timeit does
import math  # exp, sqrt
import os  # the repo root on sys.path
import platform  # the interpreter's version, printed with the figures
import random  # seeded inputs
import sys  # path
import time  # perf_counter
import tracemalloc  # peak memory

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from attention import scaled_dot_product_attention, streaming_attention  # noqa: E402


def random_matrix(rows, cols, rng):
    return [[rng.gauss(0.0, 1.0) for _ in range(cols)] for _ in range(rows)]


def textbook_attention(Q, K, V):
    """The triple loop of a first course: every sum written out by hand."""
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


def best_time(fn, *args, repeat=7, **kwargs):
    """Return the best of `repeat` wall-clock timings of fn(*args, **kwargs), in seconds."""
    times = []
    gc.collect()
    gc.disable()  # as timeit does: a collection landing in one run is noise, not speed
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            fn(*args, **kwargs)
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return min(times)


def peak_memory(fn, *args, **kwargs):
    """Return the peak bytes allocated while fn runs (tracemalloc)."""
    tracemalloc.start()
    fn(*args, **kwargs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def speed_against_textbook(n, d, rng):
    Q, K, V = (random_matrix(n, d, rng) for _ in range(3))
    ours = best_time(scaled_dot_product_attention, Q, K, V)
    textbook = best_time(textbook_attention, Q, K, V)
    print(f"speed at n = m = {n}, d_k = d_v = {d}")
    print(f"  scaled_dot_product_attention  {ours * 1e3:9.1f} ms")
    print(f"  textbook triple loop          {textbook * 1e3:9.1f} ms   "
          f"ratio textbook / ours = {textbook / ours:.2f}x")
    try:
        import numpy as np  # optional, for information only
    except ImportError:
        print("  numpy                          not installed")
        return
    Qa, Ka, Va = np.array(Q), np.array(K), np.array(V)

    def numpy_attention():
        S = Qa @ Ka.T / math.sqrt(d)
        P = np.exp(S - S.max(axis=1, keepdims=True))
        return (P / P.sum(axis=1, keepdims=True)) @ Va

    fast = best_time(numpy_attention, repeat=20)
    print(f"  numpy                         {fast * 1e3:9.3f} ms   "
          f"ratio ours / numpy = {ours / fast:.0f}x")


def memory_streaming(n, d, rng):
    Q, K, V = (random_matrix(n, d, rng) for _ in range(3))
    two_pass = peak_memory(scaled_dot_product_attention, Q, K, V)
    one_pass = peak_memory(streaming_attention, Q, K, V, block_size=64)
    print(f"peak memory at n = m = {n}, d = {d} (tracemalloc)")
    print(f"  scaled_dot_product_attention  {two_pass / 2**20:9.1f} MiB")
    print(f"  streaming_attention (B = 64)  {one_pass / 2**20:9.1f} MiB   "
          f"ratio streaming / two-pass = {one_pass / two_pass:.3f}")


def growth(sizes, dims, rng):
    print("time of scaled_dot_product_attention (ms), n = m down, d = d_k = d_v across")
    print("  n \\ d " + "".join(f"{d:>9}" for d in dims))
    for n in sizes:
        cells = []
        for d in dims:
            Q, K, V = (random_matrix(n, d, rng) for _ in range(3))
            cells.append(best_time(scaled_dot_product_attention, Q, K, V) * 1e3)
        print(f"  {n:>5} " + "".join(f"{c:9.1f}" for c in cells))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, a few seconds")
    args = parser.parse_args(argv)
    rng = random.Random(0)
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"math.sumprod: {'yes' if hasattr(math, 'sumprod') else 'no (sum(map(mul)) fallback)'}")
    speed_against_textbook(64 if args.quick else 128, 64, rng)
    memory_streaming(256 if args.quick else 2048, 16, rng)
    growth([32, 64, 128] if args.quick else [64, 128, 256], [16, 64, 256] if not args.quick else [16, 64], rng)


if __name__ == "__main__":
    main()
