"""How to call the candidate's function: which of its parameters take the mask, the causal
flag, the scale and the block size, read from its signature.

    plan(info, labels, block=False) -> Plan     CallError when it cannot be called as the mode
                                                needs (NAME(Q, K, V), NAME(x), ...)
    arguments(plan, case, conventions)          (args, kwargs), or None when the function
                                                takes no parameter for what the case passes

The spellings taken (PyTorch's, FlashAttention's, JAX's and this project's), by keyword:
    mask        mask, attn_mask, attention_mask      True = may attend (see --mask-true-blocks)
    causal      is_causal, causal
    scale       scale, softmax_scale
    block_size  block_size, block, chunk_size, tile_size, Bc, B_c  (else the next positional)
    dropout     dropout_p, dropout                   0.0 when it has no default

python3 interview/check.py --help runs the checker.
"""

from typing import List, NamedTuple, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from interview.judge import Case, Conventions

SPELLINGS = {
    "mask": ("mask", "attn_mask", "attention_mask"),
    "causal": ("is_causal", "causal"),
    "scale": ("scale", "softmax_scale"),
    "block_size": ("block_size", "block", "chunk_size", "tile_size", "Bc", "B_c"),
    "dropout": ("dropout_p", "dropout"),  # 0.0 when required, so that the output is the same
}
POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")


class CallError(Exception):
    """The function cannot be called as the mode needs: a usage error."""


class Plan(NamedTuple):
    name: str  # the function's name in the file
    labels: tuple  # the positional arguments passed, by the names the report uses
    keywords: dict  # option ("mask", "causal", ...) -> the parameter's name
    required: tuple  # the options whose parameter has no default: always passed
    unexercised: tuple  # parameters whose names suggest a mask or a causal flag, not passed
    block_positional: bool = False  # the block size goes after the positional arguments


def plan(info: dict, labels: tuple, block: bool = False) -> Plan:
    """The Plan for a loaded function: info is runner.Child.info."""
    name, params = info["name"], info["params"]
    if params is None:  # no signature (a builtin): positional arguments only
        return Plan(name, labels, {}, (), (), block)
    calls = f"{name}({', '.join(p[0] for p in params)})"
    positional = [p for p in params if p[1] in POSITIONAL]
    spread = any(p[1] == "VAR_POSITIONAL" for p in params)
    block_positional = block and not _named(params, "block_size") and (
        spread or _unspelled(positional[len(labels):len(labels) + 1]))
    if block and not block_positional and not _named(params, "block_size"):
        raise CallError(f"{calls} takes no block size: name a parameter block_size")
    wanted = len(labels) + block_positional
    if len(positional) < wanted and not spread:
        raise CallError(f"{calls} cannot be called as {name}({', '.join(labels)})")
    rest = [p for p in params if p not in positional[:wanted] and not p[1].startswith("VAR_")]
    keywords = {option: _named(rest, option) for option in SPELLINGS if _named(rest, option)}
    used = set(keywords.values())
    missing = [p[0] for p in rest if not p[2] and p[0] not in used]
    if missing:
        raise CallError(f"{name}: parameter {missing[0]} has no default, and the checker "
                        f"passes only {', '.join(labels)} and the options of docs/checker.md")
    unexercised = tuple(p[0] for p in rest if p[0] not in used and (
        "mask" in p[0].lower() or "causal" in p[0].lower()))
    required = tuple(o for o, n in keywords.items() if not next(p[2] for p in rest if p[0] == n))
    return Plan(name, labels, keywords, required, unexercised, block_positional)


def _unspelled(params: list) -> bool:
    """There is a parameter, and its name is none of the options' spellings."""
    return bool(params) and not any(params[0][0] in names for names in SPELLINGS.values())


def _named(params: list, option: str) -> Optional[str]:
    """The first parameter spelled as option, if it can be passed by keyword."""
    return next((p[0] for p in params if p[0] in SPELLINGS[option]
                 and p[1] != "POSITIONAL_ONLY"), None)


def arguments(plan: Plan, case: Case, conventions: Conventions) -> Optional[tuple]:
    """(args, kwargs) for the case; None when the function has no parameter for it."""
    needs = [o for o, given in (("mask", case.mask is not None), ("causal", case.causal),
                                ("scale", case.scale is not None)) if given]
    if any(option not in plan.keywords for option in needs):
        return None
    args, kwargs, spelled = list(case.args), {}, plan.keywords
    mask = case.mask
    if mask is None and "mask" in plan.required:
        mask = _everywhere(case)
    if mask is not None:
        kwargs[spelled["mask"]] = _flip(mask, conventions.true_blocks)
    if "causal" in spelled:
        kwargs[spelled["causal"]] = case.causal
    if case.scale is not None or "scale" in plan.required:
        kwargs[spelled["scale"]] = case.scale if case.scale is not None else _default(case)
    if "dropout" in plan.required:  # a default is left alone: it may be a module, not p
        kwargs[spelled["dropout"]] = 0.0
    if case.block_size is not None:
        if plan.block_positional:
            args.append(case.block_size)
        else:
            kwargs[spelled["block_size"]] = case.block_size
    return args, kwargs


def needs(plan: Plan, case: Case) -> str:
    """The option the function lacks for the case ("mask", "causal", "scale")."""
    for option, given in (("mask", case.mask), ("causal", case.causal), ("scale", case.scale)):
        if given is not None and given is not False and option not in plan.keywords:
            return option
    return ""


def _flip(mask: list, true_blocks: bool) -> list:
    """The mask in the candidate's polarity: True = may attend, or True = blocked."""
    if isinstance(mask, bool):
        return mask != true_blocks
    return [_flip(row, true_blocks) for row in mask]


def _everywhere(case: Case) -> List:
    """A mask that blocks nothing, for a function that requires one."""
    part = case.parts[0] if case.parts else case
    n, m = len(part.args[0]), len(part.args[1])
    mask = [[True] * m for _ in range(n)]
    return [mask, mask] if case.parts else mask


def _default(case: Case) -> float:
    part = case.parts[0] if case.parts else case
    return len(part.args[1][0]) ** -0.5


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
