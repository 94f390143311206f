"""The child process of interview/check.py: it loads the candidate's file and answers calls.

runner.py starts it as `python3 -u -B serve.py COMMANDS REPLIES PARENT`: two pipe descriptors
and the checker's process id.  It is never imported by the checker, and it imports nothing
of the project, so the candidate's code finds no reference answer in its process.

The protocol is data only, one JSON object per line each way (NaN and inf allowed):

    -> {"op": "load", "path": ..., "names": [...], "arrays": bool}
    <- {"op": "loaded", "name": ..., "params": [[name, kind, has_default], ...] or null}
       {"op": "usage", "error": ...}       the file cannot be checked (exit status 2)
       {"op": "failed", "error": ...}      loading raised: the candidate's error
    -> {"op": "call", "id": k, "args": [...], "kwargs": {...}, "names": [...]}
    <- {"id": k, "kind": "returned", "value": ..., "mutated": [...]}
       {"id": k, "kind": "raised", "types": [...], "refusal": bool, "arithmetic": bool,
        "error": ..., "mutated": [...]}
       {"id": k, "kind": "unreadable", "error": ...}
    <- {"op": "internal", "error": ...}    this file's own error, not the candidate's

A refusal is an instance of the builtin ValueError, "arithmetic" of the builtin
ArithmeticError, both tested here with isinstance: a class of the candidate's that is only
named ValueError is neither.  The candidate's prints go to stdout and stderr, which the
checker quarantines.  The child exits when the command pipe closes, and kills its process
group when its parent dies.

Public API (`__all__`): main.

python3 interview/check.py --help runs the checker, which starts this child.
"""

import importlib.util  # load the candidate's file as a module of its own
import inspect  # the parameters of the candidate's function
import json  # the protocol
import os  # the pipes, the parent's pid, the process group
import signal  # unblock what the checker blocked while starting this process
import sys  # sys.path, sys.modules
import threading  # the watch on the parent
import time  # the watch's period
import traceback  # the line of the candidate's file that raised
import warnings  # the candidate's warnings are silenced: the checks report their effect
from typing import Callable, NamedTuple, Optional

BLOCKED = ("softmax", "attention", "stats")  # the project's modules: the reference
MAX_REPLY = 1 << 20  # bytes; runner.py refuses a longer line too
MAX_DEPTH = 8  # nesting of an answer
HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = (str, bytes, bytearray)  # float() reads these too, but they are not numbers

__all__ = ["main"]


class _NoReference:
    """A meta path finder: `import attention` (softmax, stats) finds only the candidate's
    own file of that name, never the project's."""

    def __init__(self, own: str):
        self.own = own

    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED and not os.path.isfile(os.path.join(self.own, name + ".py")):
            raise ImportError(f"import {name}: the project's module, that the checker judges "
                              "against, is not for your code", name=name)
        return None


class _Loaded(NamedTuple):
    """The candidate's function, where its file lives, and NumPy when --arrays asks for it."""
    f: Callable
    own: str  # the candidate's directory: its frames are the ones a traceback line names
    np: object  # the numpy module, or None: arguments stay lists


def main() -> None:
    if len(sys.argv) != 4 or not all(a.isdigit() for a in sys.argv[1:]):  # run by hand
        print(__doc__)
        return
    commands, replies, parent = (int(a) for a in sys.argv[1:4])
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _watch(parent)
    warnings.simplefilter("ignore")
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    reader = os.fdopen(commands, "rb")
    loaded = None
    while True:
        line = reader.readline(MAX_REPLY + 1)
        if not line.endswith(b"\n"):  # the checker is done, or it sent too much
            os._exit(0)
        try:
            message = json.loads(line)
            if message["op"] == "load":
                reply, loaded = _load(message)
            else:
                reply = _answer(loaded, message)
        except Exception as e:  # a bug of this file's: the candidate's errors are caught below
            _send(replies, {"op": "internal", "error": _internal(e)})
            os._exit(1)
        _send(replies, reply)


def _watch(parent: int) -> None:
    """Kill this process group (the candidate's own children too) when the parent dies."""
    def run():
        while os.getppid() == parent:
            time.sleep(0.1)
        try:
            os.killpg(0, signal.SIGKILL)
        finally:
            os._exit(1)
    threading.Thread(target=run, daemon=True).start()


def _send(fd: int, reply: dict) -> None:
    data = json.dumps(reply).encode()
    if len(data) > MAX_REPLY:
        fields = {"id": reply.get("id"), "kind": "unreadable", "error": "reply over 1 MiB"}
        data = json.dumps(fields).encode()
    data += b"\n"
    while data:
        data = data[os.write(fd, data):]


# ------------------------------------------------------------------- loading the file

def _load(message: dict) -> tuple:
    """(the reply, _Loaded or None)."""
    np = None
    if message["arrays"]:
        try:
            import numpy as np
        except BaseException:  # whatever NumPy's import raises
            return {"op": "usage", "error": "--arrays needs NumPy"}, None
    path = message["path"]
    own, file = os.path.dirname(path), os.path.basename(path)
    unreadable = _compiles(path)
    if unreadable:  # the file itself: it cannot be checked
        return {"op": "usage", "error": unreadable}, None
    sys.path.insert(0, own)  # as `python3 FILE.py` would: its neighbours first
    sys.meta_path.insert(0, _NoReference(own))
    sys.argv[:] = [path]
    try:
        module = _module(path)
        found = [name for name in message["names"] if hasattr(module, name)]
        f = getattr(module, found[0]) if found else None
    except BaseException as e:  # the candidate's error, SystemExit and KeyboardInterrupt too,
        return {"op": "failed", "error": _text(e, own)}, None  # a sibling's SyntaxError too
    if not found:
        listed = " or ".join(message["names"])
        return {"op": "usage", "error": f"{file} defines no {listed}; name the function: "
                                        f"{file}:NAME"}, None
    if not callable(f):
        return {"op": "usage", "error": f"{file}: {found[0]} is a {type(f).__name__}, "
                                        "not a function"}, None
    return {"op": "loaded", "name": found[0], "params": _parameters(f)}, _Loaded(f, own, np)


def _compiles(path: str) -> str:
    """"" when the file compiles; else "FILE:LINE: SyntaxError: message"."""
    file = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"{file}:{e.lineno}: {type(e).__name__}: {e.msg}"
    except (ValueError, OSError) as e:  # a null byte (before 3.12), or an unreadable file
        return f"{file}: {type(e).__name__}: {e}"
    return ""


def _module(path: str):
    """The candidate's file as a module, named after the file where it can be (so that a
    process pool's workers and the candidate's own modules find it by that name)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "__candidate__"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _parameters(f: Callable) -> Optional[list]:
    """[[name, kind, has a default], ...], or None for a builtin without a signature."""
    try:
        parameters = inspect.signature(f).parameters.values()
    except BaseException:  # no signature, or a __signature__ of the candidate's that raises
        return None
    return [[p.name, p.kind.name, p.default is not p.empty] for p in parameters]


# ------------------------------------------------------------------- answering a call

def _answer(loaded: _Loaded, message: dict) -> dict:
    """Call the function on the message's arguments; the reply says what it returned or
    raised, and which arguments it changed."""
    reply = {"id": message["id"]}
    args = [_build(a, loaded.np) for a in message["args"]]
    kwargs = {k: _build(v, loaded.np) for k, v in message["kwargs"].items()}
    given = dict(zip(message["names"], args), **kwargs)
    before = {k: _snapshot(v) for k, v in given.items()}
    try:
        value = loaded.f(*args, **kwargs)
    except BaseException as e:  # SystemExit and KeyboardInterrupt are answers too
        reply.update(kind="raised", types=_types(e), refusal=isinstance(e, ValueError),
                     arithmetic=isinstance(e, ArithmeticError), error=_text(e, loaded.own))
    else:
        try:
            reply.update(kind="returned", value=_plain(value))
        except BaseException as e:  # whatever reading it raises
            return dict(reply, kind="unreadable", error=_text(e, ""))
    reply["mutated"] = [k for k, v in given.items() if _snapshot(v) != before[k]]
    return reply


def _build(x, np):
    """The argument as the candidate receives it: lists, or NumPy arrays with --arrays."""
    if np is not None and isinstance(x, list):
        return np.array(x)  # float64 for numbers, bool for a mask
    return x


def _plain(x, depth: int = 0):
    """x as JSON data: nested lists of floats (None and a dict of them allowed), read through
    .tolist() where there is one (NumPy, PyTorch)."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deep")
    if hasattr(x, "tolist") and not isinstance(x, (list, tuple, dict)):
        x = x.tolist()
    if x is None:
        return None
    if isinstance(x, dict):
        return {str(k): _plain(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v, depth + 1) for v in x]
    if isinstance(x, TEXT):
        raise TypeError(f"returned a {type(x).__name__}, not numbers")
    try:  # a float, an int, a bool, Decimal, Fraction, a NumPy scalar
        return float(x)
    except (TypeError, ValueError):
        raise TypeError(f"returned a {type(x).__name__}, not numbers") from None


def _snapshot(x, depth: int = 0):
    """x's value with the type of every part, so that a bool turned into an int, or a list
    into a tuple, is a change: (type name, value) pairs, an array's dtype included."""
    try:
        if depth > MAX_DEPTH:
            return "deep"
        kind = type(x).__name__
        if hasattr(x, "tolist") and not isinstance(x, (list, tuple, dict)):
            return kind, str(getattr(x, "dtype", "")), _snapshot(x.tolist(), depth + 1)
        if isinstance(x, (list, tuple)):
            return kind, tuple(_snapshot(v, depth + 1) for v in x)
        return kind, repr(x)  # repr: NaN equals NaN, and -0.0 is not 0.0
    except BaseException:  # an argument that cannot be read counts as changed
        return None


def _types(e: BaseException) -> list:
    return [c.__name__ for c in type(e).__mro__]


def _internal(e: Exception) -> str:
    """This file's own error in one line: its type, message and line."""
    frames = traceback.extract_tb(e.__traceback__)
    where = f" at serve.py:{frames[-1].lineno}" if frames else ""
    return f"{type(e).__name__}{where}: {' '.join(str(e).split())}"[:200]


def _text(e: BaseException, own: str) -> str:
    """"TypeError at file.py:12: message" in one line of at most 120 characters: the last
    line of the candidate's files in the traceback; the type's name alone when str(e) fails."""
    try:
        frames = [fr for fr in traceback.extract_tb(e.__traceback__)
                  if own and os.path.dirname(fr.filename) == own]
        last = frames[-1] if frames else None
        where = f" at {os.path.basename(last.filename)}:{last.lineno}" if last else ""
    except BaseException:  # a traceback that cannot be read
        where = ""
    try:
        message = " ".join(str(e).split())
    except BaseException:  # an exception whose __str__ raises
        message = ""
    text = type(e).__name__ + where + (f": {message}" if message else "")
    return text if len(text) <= 120 else text[:117] + "..."


if __name__ == "__main__":
    main()
