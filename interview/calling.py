"""How to call the candidate's function: which of its parameters take the mask, the causal
flag, the scale and the block size, read from its signature.

    plan(info, labels, block=False) -> Plan     CallError when it cannot be called as the mode
                                                needs (NAME(Q, K, V), NAME(x), ...)
    arguments(plan, case, conventions)          (args, kwargs), or None when the function
                                                takes no parameter for what the case passes
    needs(plan, case)                           the option the function lacks for the case
    takes(plan)                                 the options it can be passed

The spellings taken (PyTorch's, FlashAttention's, JAX's and this project's):
    mask        mask, attn_mask, attention_mask      True = may attend (see --mask-true-blocks)
    causal      is_causal, causal
    scale       scale, softmax_scale
    block_size  block_size, block, chunk_size, tile_size, Bc, B_c  (else the next positional)
    dropout     dropout_p, dropout                   0.0 when it has no default

An option goes by keyword, or by position when its parameter is positional-only (before
a `/`): then it always gets the value the case implies (a mask that blocks nothing, False,
the default scale), since a later one can only be passed after it.

Public API (`__all__`): plan, arguments, needs, takes, Plan, CallError, SPELLINGS.

python3 interview/check.py --help runs the checker.
"""

from typing import List, NamedTuple, Optional
import os  # the library's folder, when run as a script
import sys  # sys.path, when run as a script

if __name__ == "__main__":  # run as a program: import the project from its root
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from interview.judge import Case, Conventions

__all__ = ["plan", "arguments", "needs", "takes", "Plan", "CallError", "SPELLINGS"]

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
    keywords: dict  # option ("mask", "causal", ...) -> the parameter's name, passed by keyword
    required: tuple  # the options whose parameter has no default: always passed
    unexercised: tuple  # parameters whose names suggest a mask or a causal flag, not passed
    positional: tuple = ()  # (option, the parameter's name) passed by position, in order


def plan(info: dict, labels: tuple, block: bool = False) -> Plan:
    """The Plan for a loaded function: info is runner.Child.info."""
    name, params = info["name"], info["params"]
    if params is None:  # no signature (a builtin): positional arguments only
        return Plan(name, labels, {}, (), (), (("block_size", "block_size"),) * block)
    calls = f"{name}({', '.join(p[0] for p in params)})"
    positional = [p for p in params if p[1] in POSITIONAL]
    spread = any(p[1] == "VAR_POSITIONAL" for p in params)
    if len(positional) < len(labels) and not spread:
        raise CallError(f"{calls} cannot be called as {name}({', '.join(labels)})")
    rest = [p for p in params if p not in positional[:len(labels)] and
            not p[1].startswith("VAR_")]
    by_position = _by_position(rest, block, spread)
    passed = {p for _, p in by_position}
    keywords = {option: _named(rest, option) for option in SPELLINGS
                if option not in dict(by_position) and _named(rest, option)}
    if block and "block_size" not in dict(by_position) and "block_size" not in keywords:
        raise CallError(f"{calls} takes no block size: name a parameter block_size")
    used = set(keywords.values()) | passed
    missing = [p[0] for p in rest if not p[2] and p[0] not in used]
    if missing:
        raise CallError(f"{name}: parameter {missing[0]} has no default, and the checker "
                        f"passes only {', '.join(labels)} and the options of docs/checker.md")
    unexercised = tuple(p[0] for p in rest if p[0] not in used and (
        "mask" in p[0].lower() or "causal" in p[0].lower()))
    defaults = {p[0]: p[2] for p in rest}  # *args has none: it is required
    required = tuple(o for o, n in list(keywords.items()) + list(by_position)
                     if not defaults.get(n, False))
    return Plan(name, labels, keywords, required, unexercised, by_position)


def _by_position(rest: list, block: bool, spread: bool) -> tuple:
    """((option, parameter), ...) passed by position after the labels: the positional-only
    parameters spelled as options, up to the first that is not; in the one-pass mode, the
    block size where no parameter is spelled block_size (the next positional parameter, or
    *args)."""
    found = []
    for p in rest:
        option = _option(p[0])
        if p[1] != "POSITIONAL_ONLY" or option is None:
            break
        found.append((option, p[0]))
    if not block or any(o == "block_size" for o, _ in found) or _named(rest, "block_size"):
        return tuple(found)
    after = [p for p in rest if p[1] in POSITIONAL][len(found):len(found) + 1]
    if after and _option(after[0][0]) is None:  # the next positional parameter, unspelled
        return tuple(found) + (("block_size", after[0][0]),)
    return tuple(found) + ((("block_size", "*args"),) if spread and not after else ())


def _option(parameter: str) -> Optional[str]:
    """The option a parameter's name spells, or None."""
    return next((o for o, names in SPELLINGS.items() if parameter in names), None)


def _named(params: list, option: str) -> Optional[str]:
    """The first parameter spelled as option, if it can be passed by keyword."""
    return next((p[0] for p in params if p[0] in SPELLINGS[option]
                 and p[1] != "POSITIONAL_ONLY"), None)


def takes(plan: Plan) -> set:
    """The options the function can be passed, by keyword or by position."""
    return set(plan.keywords) | {option for option, _ in plan.positional}


def arguments(plan: Plan, case: Case, conventions: Conventions) -> Optional[tuple]:
    """(args, kwargs) for the case; None when the function has no parameter for it."""
    if needs(plan, case):
        return None
    given = {"mask": case.mask is not None, "causal": True, "scale": case.scale is not None,
             "dropout": False, "block_size": case.block_size is not None}  # by keyword
    args = list(case.args) + [_value(option, case, conventions)
                              for option, _ in plan.positional]
    kwargs = {parameter: _value(option, case, conventions)
              for option, parameter in plan.keywords.items()
              if given[option] or option in plan.required}
    return args, kwargs


def _value(option: str, case: Case, conventions: Conventions):
    """What the case passes for an option: its own, else what it implies (a mask that blocks
    nothing, the default scale, no dropout)."""
    if option == "mask":
        mask = case.mask if case.mask is not None else _everywhere(case)
        return _flip(mask, conventions.true_blocks)
    if option == "scale":
        return case.scale if case.scale is not None else _default(case)
    return {"causal": case.causal, "dropout": 0.0, "block_size": case.block_size}[option]


def needs(plan: Plan, case: Case) -> str:
    """The option the function lacks for the case ("mask", "causal", "scale"), or ""."""
    for option, given in (("mask", case.mask), ("causal", case.causal), ("scale", case.scale)):
        if given is not None and given is not False and option not in takes(plan):
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
