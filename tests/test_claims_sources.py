"""The claims about the literature, the source documents and other libraries: each names its
source and place (`source`), since no test here can recompute a paper or run PyTorch and JAX,
which are not dependencies; where a behaviour can be run, scripts/check_frameworks.py runs
it, in a virtual environment of its own.  Facts of the literature are those checked in
/work/notes/literature.md (item numbers there), or are marked as not rechecked.  The claims
of the pages that another piece of work owns are registered here with `owned`, so that a
reworded sentence still fails until its owner's test takes it over.  Python's own behaviour,
which the installed interpreters can show, is run.
"""

import os
import subprocess

import pytest

from tests.claims import claim, owned, source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README, INTERVIEW, DERIVATIONS = "README.md", "docs/interview.md", "docs/derivations.md"
LOW, FRAMEWORKS, NUMERICS = "docs/low-precision.md", "docs/pytorch-jax.md", "docs/numerics.md"
WORKED, EQUATIONS = "docs/worked-examples.md", "docs/equations.md"

VASWANI = ("Vaswani et al. 2017, Section 3.2.1: \"additive attention outperforms dot product "
           "attention without scaling for larger values of d_k [3]\" right before \"We "
           "suspect ...\", [3] = Britz et al. 2017; footnote 4 (literature.md item 6)")
TABLE_3 = ("Vaswani et al. 2017, Table 3 row (B); not rechecked in literature.md")
MUP = ("Yang et al. 2022, Tensor Programs V, Section 4, Definition 4.1 and its footnote 8 "
       "(literature.md item 5)")
SSMAX = ("Nakanishi 2025, arXiv:2501.19399: the scaling parameter s (Figure 1); learned, one per "
         "layer and head, in secondary summaries only, the paper's Section 2 not read "
         "(literature.md item 7, partly confirmed)")
PRS = ("pytorch/pytorch#133882, whose description calls it take 3 of #131863, force-merged "
       "2024-08-19; #131060 \"Add a private _safe_softmax\" the oldest of the same stack "
       "(literature.md item 8)")
TORCH = ("scripts/check_frameworks.py, check_torch: PyTorch 2.13.0, CPU, run 2026-11-25 "
         "(pytorch-jax.md records it)")
JAX = ("scripts/check_frameworks.py, check_jax: JAX 0.10.2, CPU, run 2026-11-26, and its "
       "softmax rows eagerly and under jax.jit on 2026-11-28")
TORCH_DOCS = "PyTorch's documentation (torch.nn.attention.bias); not run here"
DOCUMENT = "the source document \"{}\", {} (/work/shared/documents, not in the repository)"
UNCHECKED = "{}; not rechecked in literature.md"

# ------------------------------------------------------------------ the paper, muP, SSMax

source(INTERVIEW, "The paper trains no unscaled model of its own: Section 3.2.1 cites Britz et "
                  "al. (2017) for additive attention beating dot-product attention without "
                  "scaling at large d_k, then states its suspicion that saturation is the "
                  "cause, and footnote 4 gives the variance argument.", VASWANI)
source(INTERVIEW, "The paper cites Britz et al. (2017) for additive attention beating unscaled "
                  "dot-product attention at large d_k, and suspects saturation as the cause; it "
                  "does not test that suspicion.", VASWANI)
source(INTERVIEW, "Table 3 row (B) varies d_k (16 and 32, against the base model's 64) with the "
                  "1/sqrt(d_k) kept on in every row (and d_v left at 64): it is not a "
                  "scaled-against-unscaled ablation.", TABLE_3)
source(EQUATIONS, "reports perplexity and BLEU for d_k = 16 and 32 (against the base model's "
                  "64, with d_v left at 64) and the scale kept on in every row.", TABLE_3)
source(INTERVIEW, "muP (Yang et al., \"Tensor Programs V\", 2022) prescribes 1/d_k for the "
                  "model that training makes, not for the one it starts from", MUP)
source(DERIVATIONS, "That is muP's argument for 1/d_k in attention (Yang et al., \"Tensor "
                    "Programs V\", 2022): in the limit of wide models trained with their "
                    "prescribed learning rates, the correlation that training builds makes q · "
                    "k grow like d_k.", MUP)
source(INTERVIEW, "where s is a learned scalar, one per layer and head as summaries of the paper "
                  "describe it", SSMAX)
source(DERIVATIONS, "where s is a learned scalar, one per layer and head as summaries of the "
                    "paper describe it", SSMAX)
source(DERIVATIONS, "\"Attention Is All You Need\" multiplies the embeddings by sqrt(d_model) "
                    "(Section 3.4) and gives no reason",
       UNCHECKED.format("Vaswani et al. 2017, Section 3.4"))
source(DERIVATIONS, "its reference implementation, tensor2tensor, draws the embedding table from "
                    "N(0, 1/d_model)",
       UNCHECKED.format("tensor2tensor/layers/modalities.py, SymbolModality"))
source(INTERVIEW, "its reference implementation, tensor2tensor, draws them N(0, 1/d_model), so "
                  "the product has variance 1.",
       UNCHECKED.format("tensor2tensor/layers/modalities.py, SymbolModality"))
source(INTERVIEW, "FlashAttention (Dao et al., 2022) adds IO-aware tiling and recomputation to "
                  "it", UNCHECKED.format("Dao et al. 2022, the abstract"))
source(INTERVIEW, "as PyTorch's `causal_lower_right(n, m)` and FlashAttention from 2.1 on do",
       UNCHECKED.format(f"{TORCH_DOCS}; FlashAttention's README, its 2.1 change"))
source(LOW, "public reports of float16 scores overflowing this way include "
            "stanford-crfm/mistral#66 and philipturner/metal-flash-attention#8, answered by "
            "scaling before the product or by computing it in float32.",
       UNCHECKED.format("the two issues named"))

# ------------------------------------------------------------------ the source documents

source(WORKED, "**Formal proof**: its attention formula, at the top, is softmax(QK / sqrt(d_k)) "
               "V, without the transpose (the general-variance document writes Q K^T).",
       DOCUMENT.format("formal proof", "its opening formula; \"general variance\" writes QK^T "
                       "in its first section and in 3.2"))
source(WORKED, "It then quotes the body text of Section 3.2.1, not footnote 4, as ending \"we "
               "scale the dot products by sqrt(d_k)\", where the paper's factor is 1/sqrt(d_k); "
               "its quotation of footnote 4, which follows, is right.",
       DOCUMENT.format("formal proof", "its first quotation, \"We suspect ...\", then "
                       "\"To illustrate ...\""))
source(WORKED, "The same document's comparison table repeats \"~0.0003\" for d_k = 64 "
               "unscaled.", DOCUMENT.format("Section 3.2.1 explained", "its comparison table"))

# ------------------------------------------------------------------ PyTorch and JAX

source(INTERVIEW, "PyTorch's `F.scaled_dot_product_attention` returns zeros for that row on "
                  "the CPU", TORCH)
source(INTERVIEW, "it returned NaN until August 2024, when pytorch/pytorch#131863 made it call "
                  "`_safe_softmax`, landed as #133882, \"take 3\" of #131863, whose first "
                  "landing did not apply cleanly; #131060, which adds `_safe_softmax` itself, is "
                  "the first pull request of the same stack", PRS)
source(FRAMEWORKS, "is true of `F.scaled_dot_product_attention` on the CPU since August 2024, "
                   "when pytorch/pytorch#131863 made it call `_safe_softmax`, which returns zeros "
                   "for a row of -inf; it landed as #133882, \"take 3\" of #131863, whose first "
                   "landing did not apply cleanly, and #131060, which adds `_safe_softmax` "
                   "itself, is the first pull request of the same stack.", PRS)
source(INTERVIEW, "its `nn.MultiheadAttention` returns NaN with the default "
                  "`need_weights=True`.", TORCH)
source(INTERVIEW, "JAX's `jax.nn.dot_product_attention` with a bool mask returns the mean of V "
                  "(uniform weights), and with a -inf bias NaN.", JAX)
source(INTERVIEW, "PyTorch's `F.scaled_dot_product_attention` returns zeros on the CPU, JAX's "
                  "`jax.nn.dot_product_attention` the mean of V, this project raises", TORCH)
source(INTERVIEW, "In `torch.nn.MultiheadAttention` (`attn_mask` and `key_padding_mask`), True "
                  "means \"masked\".", TORCH)
source(INTERVIEW, "(PyTorch's `masked_fill(-1e9)` on a float16 tensor raises instead)", TORCH)
source(INTERVIEW, "keep the softmax's arithmetic in float32, as `torch.softmax` (CPU) and "
                  "`jax.nn.dot_product_attention` do.", f"{TORCH}; {JAX}")
source(INTERVIEW, "Top-left: query i sees keys j <= i, as PyTorch's `is_causal=True`", TORCH)
source(LOW, "which is what PyTorch and JAX gave on the value checked in "
            "[pytorch-jax.md](pytorch-jax.md).", f"{TORCH}; {JAX}")
source(LOW, "PyTorch accumulates float16 and bfloat16 reductions in float32 and rounds the "
            "result, and NumPy does the same for float16 (NumPy has no bfloat16)",
       UNCHECKED.format("PyTorch's and NumPy's reduction kernels") + "; NumPy's float16 sums "
       "against the emulation: tests/test_lowprecision.py::test_the_emulation_matches_numpy")
source(LOW, "`jax.nn.softmax` comes closest: in float16 it multiplies e_i by the rounded "
            "reciprocal of Z instead of dividing", JAX)
source(LOW, "In bfloat16, called eagerly, it matched every row; compiled with `jax.jit`, it gave "
            "92 of the 2,000 rows differently from its eager calls, by up to 2 ulps, and so "
            "differed from `softmax_in` there (its float16 rows came out as they did eagerly).",
       JAX)
source(LOW, "`torch.softmax` (on the CPU) and JAX's `dot_product_attention` keep their "
            "arithmetic in float32 and round only the result", f"{TORCH}; {JAX}")
source(LOW, "(PyTorch refuses `masked_fill(-1e9)` on a float16 tensor instead;", TORCH)
source(FRAMEWORKS, "Every low-precision outcome below (NaN, uniform, as if unmasked, ...) agreed "
                   "with the emulation; the weights themselves can differ in the last bit or "
                   "two", f"{TORCH}; {JAX}")
source(FRAMEWORKS, "Checked in float64: `is_causal=True` with an explicit mask, as quoted above; "
                   "a 2 x 4 causal problem, whose first query attends only to key 0 in both "
                   "libraries (top-left); and `nn.MultiheadAttention(3, 1)` with `attn_mask` True "
                   "on one key, whose weight on that key came out 0.", f"{TORCH}; {JAX}")
source(FRAMEWORKS, "Even in float64, JAX's `dot_product_attention` gives the mean of V, because "
                   "it casts the logits to float32 for its softmax.", JAX)
source(FRAMEWORKS, "A row that keeps at least one key came out as if the masked keys were absent "
                   "with every fill (-inf, -1e9, -1000), added or written over, in every dtype "
                   "and in both libraries, except where PyTorch refuses the fill",
       f"{TORCH}; {JAX}")
source(FRAMEWORKS, "`torch.softmax` returned the float64 softmax rounded once to the dtype in "
                   "1998 rows in float16 and in 2000 in bfloat16: its arithmetic is float32 "
                   "inside.", TORCH)
source(FRAMEWORKS, "Called eagerly, `jax.nn.softmax` differed from the emulation's `softmax_in` "
                   "in 1,230 of the 2,000 float16 rows, each time by 1 ulp, and in none of the "
                   "bfloat16 rows.", JAX)
source(FRAMEWORKS, "its float16 rows came out as they did eagerly, but 92 of the 2,000 bfloat16 "
                   "rows changed, by up to 2 ulps, and differed from `softmax_in` there.", JAX)
source(FRAMEWORKS, "the emulation's steps with p_i = e_i × (1/Z) matched all 2,000 float16 rows "
                   "(and missed 1,122 of the bfloat16 ones, where JAX divides).", JAX)
for row, where in (
        ("| `F.scaled_dot_product_attention`, bool mask | zeros | zeros | zeros | zeros |", TORCH),
        ("| `F.scaled_dot_product_attention`, float mask of -inf | zeros | zeros | zeros | "
         "zeros |", TORCH),
        ("| `F.scaled_dot_product_attention`, float mask of -1e9 | as if unmasked | mean of V | "
         "zeros (the mask became -inf) | mean of V |", TORCH),
        ("| `nn.MultiheadAttention`, default `need_weights=True` | **NaN** | **NaN** | **NaN** "
         "| **NaN** |", TORCH),
        ("| `nn.MultiheadAttention`, `need_weights=False` | zeros | zeros | zeros | zeros |",
         TORCH),
        ("| `torch.softmax`, scores + (-1e9) | as if unmasked | uniform | NaN (-1e9 became "
         "-inf) | uniform |", TORCH),
        ("| `torch.softmax`, `masked_fill(-1e9)` | uniform | uniform | `RuntimeError` | "
         "uniform |", TORCH),
        ("| `torch.softmax`, -inf added or filled | NaN | NaN | NaN | NaN |", TORCH),
        ("| `jax.nn.dot_product_attention`, bool mask | mean of V | mean of V | mean of V | "
         "mean of V |", JAX),
        ("| `jax.nn.dot_product_attention`, `bias` of -inf | NaN | NaN | NaN | NaN |", JAX),
        ("| `jax.nn.dot_product_attention`, `bias` of -1e9 | mean of V (its softmax runs in "
         "float32) | mean of V | NaN (-1e9 became -inf) | mean of V |", JAX),
        ("| `jax.nn.softmax`, scores + (-1e9) | as if unmasked | uniform | NaN | uniform |", JAX),
        ("| `jax.nn.softmax`, -1e9 written over (`jnp.where`) | uniform | uniform | NaN | "
         "uniform |", JAX),
        ("| `is_causal` together with `mask`: both apply (AND) | raises `RuntimeError` "
         "(\"Explicit attn_mask should not be set when is_causal=True\"): pass one combined "
         "`attn_mask` | accepted: both apply |", f"{TORCH}; {JAX}"),
        ("| a query row with nothing to attend to: `ValueError` naming the row | on the CPU, "
         "**zeros** for that row (bool or -inf float mask, every dtype checked); see the table "
         "below for `nn.MultiheadAttention` | bool `mask`: the **mean of V** over all keys; "
         "`bias` of -inf: **NaN** |", f"{TORCH}; {JAX}"),
        ("| `torch.softmax` of [10, 11, 12] | fine | fine | fine (float32 inside, below) | "
         "fine |", TORCH),
        ("| float64 1 + 2^-8 + 2^-30 converted to bfloat16 | | | | 1.0 in both libraries: "
         "through float32, as the emulation does |", f"{TORCH}; {JAX}")):
    source(FRAMEWORKS, row, where)

source(FRAMEWORKS, "`nn.MultiheadAttention` returns NaN with its default `need_weights=True`, "
                   "where it computes the weights with its own softmax, and zeros only with "
                   "`need_weights=False`, where it calls `F.scaled_dot_product_attention`.",
       TORCH)
source(FRAMEWORKS, "`jax.nn.softmax` did so in only 80 (float16) and 95 (bfloat16) rows; a "
                   "softmax written out of JAX's own operations in the dtype differed from the "
                   "once-rounded one in 1920 and 1905 rows.", JAX)
source(FRAMEWORKS, "`jax.nn.dot_product_attention` casts its logits to float32 before its "
                   "softmax (its source says so, and the -1e9 row above shows it even in "
                   "float64).", JAX)
source(LOW, "That is the softmax a reader writes out of the format's own operations; no "
            "framework computes exactly this.", f"{TORCH}; {JAX}")
source(LOW, "NaN, inf, uniform rows and absorbed scores come out the same, because they happen "
            "in the stored inputs.", f"{TORCH}; {JAX}")

# ------------------------------------------------------------------ measured figures

BENCH = "benchmarks/README.md, {} (python3 benchmarks/bench.py)"
source(DERIVATIONS, "No row of m scores is ever held (Rabe and Staats, \"Self-attention does not "
                    "need O(n^2) memory\", 2021).",
       BENCH.format("streaming / two-pass, peak memory 0.0404 at n = m = 2048"))
source(NUMERICS, "The price is speed: on 3.12+ the benchmark prints what `math.sumprod` would "
                 "save.", BENCH.format("lean (fsum) / lean (sumprod), 4.43 on 3.12.1"))
source(DERIVATIONS, "FlashAttention (Dao et al., 2022) builds on the same merge and adds IO-aware "
                    "tiling, so that blocks stay in fast on-chip memory, and recomputation in the "
                    "backward pass.", UNCHECKED.format("Dao et al. 2022, the abstract"))

# ------------------------------------------------------------------ CPython

source(NUMERICS, "CPython's `statistics` used the same correction up to 3.9, and sums exactly "
                 "in rationals from 3.10 on.",
       "CPython's Lib/statistics.py, `_ss`: 3.9.18 subtracts (sum of the deviations)^2 / n, "
       "3.10.13 sums exact ratios in Fractions (read in ~/.pyenv on 2026-11-28)")
source(DERIVATIONS, "CPython's `statistics` module used the same correction up to Python 3.9; "
                    "from 3.10 on it sums exactly, in rationals",
       "CPython's Lib/statistics.py, `_ss`: 3.9.18 subtracts (sum of the deviations)^2 / n, "
       "3.10.13 sums exact ratios in Fractions (read in ~/.pyenv on 2026-11-28)")


@pytest.mark.slow
@claim(NUMERICS, "`sum()` changed how it adds floats in 3.12, and `math.sumprod` exists from "
                 "3.12 on and accumulates the products in extended precision; with either, the "
                 "published numbers would differ between versions.")
def test_sum_and_sumprod_round_differently_from_3_12_on():
    # each installed interpreter: ten 0.1s (an exact sum rounds to 1.0, a left-to-right one
    # to 0.9999999999999999) and sumprod of [1e16, 1, -1e16] by ones (exactly 1)
    probe = ("import math; print(sum([0.1] * 10) == 1.0, hasattr(math, 'sumprod') and "
             "math.sumprod([1e16, 1.0, -1e16], [1.0, 1.0, 1.0]) == 1.0)")
    seen = {}
    for version in ("3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"):
        python = os.path.expanduser(f"~/.pyenv/versions/{version}/bin/python3")
        if os.path.exists(python):
            out = subprocess.run([python, "-c", probe], capture_output=True, text=True,
                                 timeout=60).stdout.split()
            seen[version] = out
    if not seen:
        pytest.skip("no Python under ~/.pyenv/versions")
    for version, out in seen.items():
        new = tuple(map(int, version.split(".")[:2])) >= (3, 12)
        assert out == ([str(new)] * 2), version


# ------------------------------------------------------------------ owned elsewhere

TRAINING = ("the training study's claims tests (tests/test_learning_claims.py checks several "
            "through docs_data)")
CHECKER = "the checker's work (docs/checker.md, interview/check.py)"
for page, quote, owner in (
        (README, "Run the checker on your own code ([how it works](docs/checker.md)): it names "
                 "each mistake and links its answer", CHECKER),
        (INTERVIEW, "1/d_k trains, at its own learning rate.", TRAINING),
        (INTERVIEW, "so attention starts nearly uniform.", TRAINING),
        (INTERVIEW, "That does not starve the gradient", TRAINING),
        (INTERVIEW, "The trained model does not hold the correlation fixed, and what it does "
                    "depends on the rate.", TRAINING),
        (INTERVIEW, "Under Adam, at the re-tuned rate, 1/d_k's falls as d_k grows", TRAINING),
        (INTERVIEW, "the picture for 1/sqrt(d_k) is muP's: its scaled logit grows with d_k",
         TRAINING),
        (INTERVIEW, "So under Adam a trained logit that does not grow with d_k is a property of "
                    "the re-tuned rate, not of the scale alone (under SGD at one fixed rate it "
                    "does not grow either;", TRAINING),
        (INTERVIEW, "One global rate, tuned at d_k = 16 and used unchanged, carries over for "
                    "1/d_k under Adam and for 1/sqrt(d_k) under SGD.", TRAINING),
        (INTERVIEW, "carries 1/d_k's rate over under both optimizers.", TRAINING),
        (INTERVIEW, "One global rate keeps the first fixed for 1/sqrt(d_k) and the second for "
                    "1/d_k; muP's SGD rule, lr growing like d_k, keeps the first fixed for 1/d_k.",
         TRAINING),
        (INTERVIEW, "bit-identical where a is a power of two; otherwise equal up to the rounding "
                    "that training amplifies, within 1e-12 at a quarter of the tuned rate)",
         TRAINING),
        (INTERVIEW, "At its own rate, unscaled is still slower here (the table above).",
         TRAINING),
        (INTERVIEW, "It starts saturated", TRAINING),
        (INTERVIEW, "moves some seeds' steps, often by tens", TRAINING),
        (INTERVIEW, "the 10% of questions with the largest gradient carry about half of it at "
                    "d_k = 256 unscaled (table below), and unscaled Adam is still the slowest "
                    "arm.", TRAINING),
        (INTERVIEW, "most of the slowdown goes, not all of it.", TRAINING),
        (INTERVIEW, "The checker names a precision when your answer's error is the size of the "
                    "same computation's error in that format", CHECKER),
        (INTERVIEW, "the checker reports the constant your answer implies", CHECKER),
        (INTERVIEW, "`interview/check.py` detects a function written in the other convention "
                    "and says so", CHECKER),
        (DERIVATIONS, "hardly moves with d_k under either scale: under 1/d_k the query aligns "
                      "with its key about equally at every d_k, while under 1/sqrt(d_k) the "
                      "alignment falls as d_k grows.", TRAINING),
        (DERIVATIONS, "Under Adam at the re-tuned rate, 1/d_k's scaled logit falls as d_k "
                      "grows.", TRAINING),
        (DERIVATIONS, "under 1/sqrt(d_k) the alignment stays about the same and the scaled logit "
                      "grows with d_k.", TRAINING),
        (DERIVATIONS, "that does not stop it from learning, as the training experiment "
                      "measures", TRAINING),
        (DERIVATIONS, "so it changes the effective learning rate (the training experiment's "
                      "identity makes this exact).", TRAINING),
        ("docs/whiteboard.md", "passes their arithmetic and flags what they leave out on "
                               "purpose: shape checks, and a row whose every logit is -inf.",
         CHECKER)):
    owned(page, quote, owner)
