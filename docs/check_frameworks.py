"""Print what PyTorch and JAX do in the cases docs/pytorch-jax.md describes.

    python3 docs/check_frameworks.py

Needs torch and/or jax, which this project does not depend on: run it in a throwaway
virtual environment (for example `python3 -m venv /tmp/fw && /tmp/fw/bin/pip install
torch jax` and `/tmp/fw/bin/python docs/check_frameworks.py`).  A library that is not
installed is skipped.  Everything runs in float64 on the CPU.
"""

import platform  # the Python version, for the record


def check_torch() -> None:
    """Fully masked row, is_causal with a mask, causal alignment, MultiheadAttention's mask."""
    import torch
    import torch.nn.functional as F
    torch.set_default_dtype(torch.float64)
    print(f"torch {torch.__version__}, Python {platform.python_version()}")
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(1, 2, 3, generator=g), torch.randn(1, 4, 3, generator=g), \
        torch.randn(1, 4, 2, generator=g)
    mask = torch.tensor([[[True, True, False, False], [False, False, False, False]]])
    print("  fully masked row, bool mask:     ",
          F.scaled_dot_product_attention(q, k, v, attn_mask=mask)[0, 1].tolist())
    bias = torch.zeros(1, 2, 4).masked_fill(~mask, float("-inf"))
    print("  fully masked row, float -inf mask:",
          F.scaled_dot_product_attention(q, k, v, attn_mask=bias)[0, 1].tolist())
    reference = torch.softmax(q @ k.transpose(-2, -1) / 3 ** 0.5 + bias, dim=-1) @ v
    print("  the documentation's reference code:", reference[0, 1].tolist())
    try:
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
        print("  is_causal with attn_mask: accepted")
    except RuntimeError as error:
        print("  is_causal with attn_mask raises:", str(error).splitlines()[0])
    weights = F.scaled_dot_product_attention(q, k, torch.eye(4).unsqueeze(0), is_causal=True)
    print("  is_causal, 2 queries x 4 keys, weights:",
          [[round(w, 3) for w in row] for row in weights[0].tolist()])
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(3, 1, batch_first=True)
    x = torch.randn(1, 2, 3)
    _, w = mha(x, x, x, attn_mask=torch.tensor([[False, True], [False, True]]))
    print("  MultiheadAttention, attn_mask True on key 1, weights:",
          [[round(a, 4) for a in row] for row in w[0].tolist()])


def check_jax() -> None:
    """Fully masked row with a bool mask and with a -inf bias; mask with is_causal."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    print(f"jax {jax.__version__}, Python {platform.python_version()}")
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    q, k, v = (jax.random.normal(key, shape) for key, shape in
               zip(keys, [(1, 2, 1, 4), (1, 4, 1, 4), (1, 4, 1, 4)]))  # (B, T, N, H)
    mask = jnp.array([[True, True, False, False], [False, False, False, False]])[None, None]
    out = jax.nn.dot_product_attention(q, k, v, mask=mask)
    print("  fully masked row, bool mask:", out[0, 1, 0].tolist())
    print("  the mean of V:              ", v[0, :, 0].mean(0).tolist())
    bias = jnp.where(mask, 0.0, -jnp.inf)
    print("  fully masked row, -inf bias:",
          jax.nn.dot_product_attention(q, k, v, bias=bias)[0, 1, 0].tolist())
    try:
        jax.nn.dot_product_attention(q, k, v, mask=mask, is_causal=True)
        print("  mask with is_causal: accepted")
    except ValueError as error:
        print("  mask with is_causal raises:", error)


if __name__ == "__main__":
    for check in (check_torch, check_jax):
        try:
            check()
        except ImportError as error:
            print(f"{check.__name__}: skipped ({error})")
