"""Print what PyTorch and JAX do in the cases docs/pytorch-jax.md records, dtype by dtype.

    python3 scripts/check_frameworks.py

Needs torch and/or jax, which this project does not depend on: run it in a throwaway
virtual environment (for example `python3 -m venv /tmp/fw && /tmp/fw/bin/pip install torch
jax jaxlib` and `/tmp/fw/bin/python scripts/check_frameworks.py`).  A library that is not
installed is skipped.  Everything runs on the CPU, in float64, float32, float16 and
bfloat16, and each low-precision result is printed beside what lowprecision/emulation.py's
emulation computes for the same case ("emulation: ..."), so a disagreement shows.

The first lines of each library's report are the float64 checks of the API table
(is_causal with a mask, causal alignment, nn.MultiheadAttention's mask polarity).  In
float16 and bfloat16, jax.nn.softmax runs eagerly and compiled with jax.jit, and the rows on
which the two differ are counted.

Public names: check_torch(), check_jax(), outcome(p, keep).
"""

import argparse  # --help
import datetime  # the date of the check, for the record
import functools  # partial: round_to in one dtype
import math  # inf, isnan
import os  # the library's folder, when run as a script
import platform  # the Python version, for the record
import sys  # path
from typing import List, Sequence

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from lowprecision import emulation
from scripts.lowprecision_tables import KEEP, NONE, SCORES
from softmax import softmax

__all__ = ["check_torch", "check_jax", "outcome"]

FILLS = (-math.inf, -1e9, -1000.0)
DTYPES = ("float64", "float32", "float16", "bfloat16")


def outcome(p: Sequence[float], keep: Sequence[bool]) -> str:
    """Name a row of weights by the float64 answer it is nearest to, as low-precision.md
    does: NaN, zeros, uniform, as if unmasked, as if the masked keys were absent."""
    if any(math.isnan(v) for v in p):
        return "NaN"
    if all(v == 0.0 for v in p):
        return "zeros"
    references = {"as if unmasked": softmax(SCORES), "uniform": [1 / len(p)] * len(p)}
    if any(keep):
        kept = iter(softmax([s for s, k in zip(SCORES, keep) if k]))
        references["as if absent"] = [next(kept) if k else 0.0 for k in keep]
    gap, name = min((max(abs(a - b) for a, b in zip(p, ref)), name)
                    for name, ref in references.items())
    return name if gap < 0.1 else f"none of them (nearest: {name})"


def _emulated(keep: List[bool], fill: float, dtype: str, how: str) -> str:
    if dtype == "float64":
        return ""
    p = emulation.softmax_in(emulation.mask_scores(SCORES, keep, fill, dtype, how), dtype)
    return f"   (emulation: {outcome(p, keep)})"


def _header(name: str, version: str) -> None:
    print(f"{name} {version}, Python {platform.python_version()}, checked "
          f"{datetime.date.today().isoformat()}, on the CPU")


def _accepted(label: str, call, refusal) -> None:
    """Print whether call() is accepted, or the first line of the refusal it raises."""
    try:
        call()
        print(f"  {label}: accepted")
    except refusal as error:
        print(f"  {label} raises:", str(error).splitlines()[0])


def _causal_weights(rows) -> None:
    """Print the weights of is_causal with 2 queries and 4 keys, to three places."""
    print("  is_causal, 2 queries x 4 keys, weights:",
          [[round(float(w), 3) for w in row] for row in rows])


def check_torch() -> None:
    """Fills, fully masked rows, exp overflow without the shift, F.scaled_dot_product_attention
    and nn.MultiheadAttention on a fully masked row, by dtype; bfloat16 conversion."""
    import torch
    import torch.nn.functional as F
    _header("torch", torch.__version__)
    _torch_api(torch, F)
    x = 1 + 2 ** -8 + 2 ** -30
    print(f"  {x!r} float64 -> bfloat16:",
          torch.tensor(x, dtype=torch.float64).to(torch.bfloat16).item(),
          f"(emulation: {emulation.round_to(x, 'bfloat16')})")
    for name in DTYPES:
        dt = getattr(torch, name)
        print(f" {name}")
        print("  -1e9 stored:", torch.tensor(-1e9, dtype=dt).item())
        _accepted("masked_fill(-1e9)", lambda: torch.zeros(2, dtype=dt).masked_fill(
            torch.tensor([True, False]), -1e9), RuntimeError)
        scores = torch.tensor(SCORES, dtype=torch.float64).to(dt)
        for keep, row in ((KEEP, "keeps keys"), (NONE, "fully masked")):
            allowed = torch.tensor(keep)
            for fill in FILLS:
                added = scores + torch.where(allowed, 0.0, fill).to(dt)  # the fill stored in dt
                p = torch.softmax(added, -1).double().tolist()
                print(f"  {row:12} {fill:<6g} added:        {outcome(p, keep):22}"
                      f"{_emulated(keep, fill, name, 'add')}".rstrip())
                try:
                    p = torch.softmax(scores.masked_fill(~allowed, fill), -1).double().tolist()
                    said = outcome(p, keep)
                except RuntimeError:
                    said = "RuntimeError (the fill overflows)"
                print(f"  {row:12} {fill:<6g} masked_fill:  {said:22}"
                      f"{_emulated(keep, fill, name, 'fill')}".rstrip())
        t = emulation.exp_threshold(name)
        big = torch.tensor([t.stored, emulation.round_to(t.overflow_from, name)],
                           dtype=torch.float64).to(dt)  # the last finite exp, the next number
        print(f"  exp({big.tolist()}):", torch.exp(big).tolist())
        row = torch.tensor([10.0, 11.0, 12.0], dtype=dt)
        print("  unshifted softmax of [10, 11, 12]:",
              (torch.exp(row) / torch.exp(row).sum()).double().tolist(),
              f"(emulation: {emulation.softmax_in([10.0, 11.0, 12.0], name, shift=False)})")
        print("  torch.softmax of [10, 11, 12]:", torch.softmax(row, -1).double().tolist())
        if name in ("float16", "bfloat16"):
            _rounded_once(lambda x: torch.softmax(x, -1), lambda x: x.double(),
                          lambda x: torch.tensor(x, dtype=torch.float64).to(dt),
                          lambda p: p.to(dt), torch.exp, "torch.softmax", name)
        _torch_attention(torch, F, dt)


def _rounded_once(fn, wide, make, narrow, exp, said: str, dtype: str, rows: int = 2000) -> None:
    """On `rows` random rows: how often fn (a softmax in a narrow dtype) equals the float64
    softmax rounded once to that dtype; how often a softmax written out of the dtype's own
    operations differs from that; and how often, and by how many ulps at most, fn differs
    from the emulation's softmax_in."""
    import random
    rng, once, per_op, emulated, ulps, reciprocal = random.Random(0), 0, 0, 0, 0.0, 0
    for _ in range(rows):
        x = make([rng.gauss(0.0, 3.0) for _ in range(rng.randint(2, 12))])
        e = exp(wide(x) - wide(x).max())
        want = narrow(e / e.sum())
        e_narrow = exp(x - x.max())
        got = fn(x)
        once += bool((got == want).all())
        per_op += bool((e_narrow / e_narrow.sum() != want).any())
        ours = emulation.softmax_in([float(v) for v in x.tolist()], dtype)
        gaps = [abs(a - b) / (emulation.next_up(b, dtype) - b)
                for a, b in zip([float(v) for v in got.tolist()], ours)]
        emulated += max(gaps) > 0
        ulps = max([ulps] + gaps)
        reciprocal += [float(v) for v in got.tolist()] != _times_reciprocal(x.tolist(), dtype)
    print(f"  {said}, {rows} random rows, how many:")
    print(f"    equal the float64 softmax rounded once: {once}")
    print(f"    differ from a softmax of the dtype's operations: {per_op}")
    print(f"    differ from the emulation's softmax_in: {emulated} (by {ulps:g} ulp at most)")
    print(f"    differ from the emulation with e_i * (1/Z): {reciprocal}")


def _times_reciprocal(x: List[float], dtype: str) -> List[float]:
    """The emulation's softmax with p_i = e_i * (1/Z), each step rounded to dtype, instead
    of e_i / Z: what XLA makes of the division."""
    r = functools.partial(emulation.round_to, fmt=dtype)
    m = max(x)
    e = [r(math.exp(r(v - m))) for v in x]
    inverse = r(1 / r(math.fsum(e)))
    return [r(v * inverse) for v in e]


def _torch_api(torch, F) -> None:
    """is_causal with a mask, causal alignment, MultiheadAttention's mask (float64)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, n, 3, generator=g, dtype=torch.float64) for n in (2, 4, 4))
    mask = torch.tensor([[[True, True, False, False], [True, False, False, False]]])
    _accepted("is_causal with attn_mask", lambda: F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, is_causal=True), RuntimeError)
    eye = torch.eye(4, dtype=torch.float64).unsqueeze(0)
    weights = F.scaled_dot_product_attention(q, k, eye, is_causal=True)  # V = I: P itself
    _causal_weights(weights[0].tolist())
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(3, 1, batch_first=True, dtype=torch.float64)
    x = torch.randn(1, 2, 3, dtype=torch.float64)
    _, w = mha(x, x, x, attn_mask=torch.tensor([[False, True], [False, True]]))
    print("  MultiheadAttention, attn_mask True on key 1, weights:",
          [[round(a, 4) for a in row] for row in w[0].tolist()])


def _torch_attention(torch, F, dt) -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, n, 4, generator=g, dtype=torch.float64).to(dt) for n in (2, 3, 3))
    mask = torch.tensor([[[True, False, True], [False, False, False]]])  # row 1: nothing
    out = {"bool mask": F.scaled_dot_product_attention(q, k, v, attn_mask=mask)}
    for fill in (-math.inf, -1e9):
        bias = torch.where(mask, 0.0, fill).to(dt)
        out[f"float mask {fill:g}"] = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    mean_v = v[0].double().mean(0)
    unmasked = F.scaled_dot_product_attention(q, k, v)[0, 1].double()
    for said, o in out.items():
        row = o[0, 1].double()
        kind = ("NaN" if row.isnan().any() else "zeros" if (row == 0).all() else
                "mean of V" if (row - mean_v).abs().max() < 1e-2 else
                "as if unmasked" if (row - unmasked).abs().max() < 1e-2 else "other")
        print(f"  F.scaled_dot_product_attention, fully masked row, {said}: {kind}")
    mha = torch.nn.MultiheadAttention(4, 1, batch_first=True, dtype=dt)
    x = torch.randn(1, 2, 4, generator=g, dtype=torch.float64).to(dt)
    blocked = torch.tensor([[False, False], [True, True]])  # True = blocked here
    for need_weights in (True, False):
        o, _ = mha(x, x, x, attn_mask=blocked, need_weights=need_weights)
        row = o[0, 1]
        kind = "NaN" if row.isnan().any() else "zeros" if (row == 0).all() else "other"
        print(f"  nn.MultiheadAttention, fully masked row, need_weights={need_weights}: {kind}")


def check_jax() -> None:
    """Fills and fully masked rows with jax.nn.softmax, exp overflow, and
    jax.nn.dot_product_attention on a fully masked row, by dtype."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    _header("jax", jax.__version__)
    keys = jax.random.split(jax.random.PRNGKey(1), 3)
    q, k, v = (jax.random.normal(key, (1, n, 1, 4), jnp.float64) for key, n in
               zip(keys, (2, 4, 4)))
    mask = jnp.asarray([[True, True, False, False], [True, False, False, False]])[None, None]
    _accepted("mask with is_causal", lambda: jax.nn.dot_product_attention(
        q, k, v, mask=mask, is_causal=True), ValueError)
    eye = jnp.eye(4, dtype=jnp.float64)[None, :, None, :]  # V = I: the weights themselves
    _causal_weights(jax.nn.dot_product_attention(q, k, eye, is_causal=True)[0, :, 0])
    x = 1 + 2 ** -8 + 2 ** -30
    print(f"  {x!r} float64 -> bfloat16:", float(jnp.asarray(x, jnp.float64).astype(jnp.bfloat16)),
          f"(emulation: {emulation.round_to(x, 'bfloat16')})")
    for name in DTYPES:
        dt = getattr(jnp, name)
        print(f" {name}")
        print("  -1e9 stored:", float(jnp.asarray(-1e9, jnp.float64).astype(dt)))
        scores = jnp.asarray(SCORES, jnp.float64).astype(dt)
        for keep, row in ((KEEP, "keeps keys"), (NONE, "fully masked")):
            allowed = jnp.asarray(keep)
            for fill in FILLS:
                f = jnp.asarray(fill, jnp.float64).astype(dt)
                for how, logits in (("add", scores + jnp.where(allowed, jnp.zeros((), dt), f)),
                                    ("fill", jnp.where(allowed, scores, f))):
                    p = [float(v) for v in jax.nn.softmax(logits)]
                    said = "added:       " if how == "add" else "written over:"
                    print(f"  {row:12} {fill:<6g} {said} {outcome(p, keep):22}"
                          f"{_emulated(keep, fill, name, how)}".rstrip())
        t = emulation.exp_threshold(name)
        big = jnp.asarray([t.stored, emulation.round_to(t.overflow_from, name)]).astype(dt)
        print(f"  exp({[float(b) for b in big]}):", [float(e) for e in jnp.exp(big)])
        row = jnp.asarray([10.0, 11.0, 12.0]).astype(dt)
        print("  unshifted softmax of [10, 11, 12]:",
              [float(v) for v in jnp.exp(row) / jnp.exp(row).sum()])
        if name in ("float16", "bfloat16"):
            for said, fn in (("jax.nn.softmax", jax.nn.softmax),
                             ("jax.jit(jax.nn.softmax)", jax.jit(jax.nn.softmax))):
                _rounded_once(fn, lambda x: x.astype(jnp.float64),
                              lambda x: jnp.asarray(x, jnp.float64).astype(dt),
                              lambda p: p.astype(dt), jnp.exp, said, name)
            _eager_against_jit(jax, jnp, dt)
        _jax_attention(jax, jnp, dt)


def _eager_against_jit(jax, jnp, dt, rows: int = 2000) -> None:
    """On the rows of _rounded_once (the same seed): how many rows jax.nn.softmax gives
    differently when called eagerly and under jax.jit, and by how many ulps at most.  XLA
    compiles the jitted softmax as one fused computation, which may keep its intermediates
    in another precision than the eager calls, one operation at a time."""
    import random
    rng, jitted, differ, ulps = random.Random(0), jax.jit(jax.nn.softmax), 0, 0.0
    dtype = jnp.dtype(dt).name
    for _ in range(rows):
        x = jnp.asarray([rng.gauss(0.0, 3.0) for _ in range(rng.randint(2, 12))],
                        jnp.float64).astype(dt)
        eager = [float(v) for v in jax.nn.softmax(x).tolist()]
        fused = [float(v) for v in jitted(x).tolist()]
        gaps = [abs(a - b) / (emulation.next_up(b, dtype) - b) for a, b in zip(fused, eager)]
        differ += max(gaps) > 0
        ulps = max([ulps] + gaps)
    print(f"  jax.nn.softmax eagerly against under jax.jit, {rows} random rows: "
          f"{differ} differ (by {ulps:g} ulp at most)")


def _jax_attention(jax, jnp, dt) -> None:
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    q, k, v = (jax.random.normal(key, (1, n, 1, 4), jnp.float64).astype(dt)
               for key, n in zip(keys, (2, 3, 3)))  # (B, T, N, H)
    mask = jnp.asarray([[True, False, True], [False, False, False]])[None, None]
    out = {"bool mask": jax.nn.dot_product_attention(q, k, v, mask=mask)}
    for fill in (-math.inf, -1e9):
        bias = jnp.where(mask, 0.0, fill).astype(dt)
        out[f"bias {fill:g}"] = jax.nn.dot_product_attention(q, k, v, bias=bias)
    mean_v = v[0, :, 0].astype(jnp.float64).mean(0)
    unmasked = jax.nn.dot_product_attention(q, k, v)[0, 1, 0].astype(jnp.float64)
    for said, o in out.items():
        row = o[0, 1, 0].astype(jnp.float64)
        kind = ("NaN" if jnp.isnan(row).any() else "zeros" if (row == 0).all() else
                "mean of V" if jnp.abs(row - mean_v).max() < 1e-2 else
                "as if unmasked" if jnp.abs(row - unmasked).max() < 1e-2 else "other")
        print(f"  jax.nn.dot_product_attention, fully masked row, {said}: {kind}")
    bias = jnp.where(mask, 0.0, -1e9).astype(dt)
    gap = jnp.abs(jax.nn.dot_product_attention(q, k, v, bias=bias)[0, 1, 0].astype(jnp.float64)
                  - mean_v).max()
    print(f"  ... its -1e9 row against the mean of V: largest difference {float(gap):.2g}")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error: one line, exit status 2
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv=None) -> int:
    """Run each library's checks; a library that is not installed is skipped, and said so."""
    _Parser(prog="python3 scripts/check_frameworks.py",
            description=__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        for check in (check_torch, check_jax):
            try:
                check()
            except ImportError as error:
                print(f"{check.__name__}: skipped ({error})")
    except KeyboardInterrupt:
        print("python3 scripts/check_frameworks.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
