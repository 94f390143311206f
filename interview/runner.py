"""Run the candidate's function in a child process that honest mistakes cannot turn into a
hang, a crash of the checker, a forged line of its report or a process left behind.

What it withstands, and what it does not (docs/checker.md says the same):
- code written by the person who runs it, with honest mistakes: crashes, hangs, prints,
  forks, threads left running, exceptions of any kind, mutation of arguments,
  nondeterminism;
- not code written to attack the checker.  Such code could still fool it: it can write
  into the checker's memory through /proc, signal or trace its parent, leave its process
  group (setsid) to outlive the run, or read the library's files and compute the right
  answers with them.  It is a judge for honest code, not a sandbox.

    child = Child(path, names, arrays=False, time_limit=3.0)   loads the file (LoadError if not)
    child.info                                   {"name": ..., "params": [...] or None}
    child.call(args, kwargs, labels) -> Reply    one call, within the time limit
    child.close()                                kills the child's process group

The child is serve.py in a process of its own (plain subprocess, not a daemon, so the
candidate's own process pool works), in a session and process group of its own.  Its
replies are JSON lines on a pipe, read without blocking under select with one deadline for
the whole line and a cap on its length, and every field is checked here: a reply is data,
never code, and every text in it (an exception's name and message) is shown with its
control characters escaped.  Its stdout and stderr go to a third pipe, kept apart
(Reply.output).  A call that runs past the limit, or a child that dies, costs that call;
the next call loads the file again.  The first call after the file loads has FIRST_FACTOR
limits, for a heavy import inside it (JAX's).  An error of serve.py's own is the checker's
(InternalError), never the candidate's.

Public API (`__all__`): Child, Reply, LoadError, InternalError, printable.

python3 interview/check.py --help runs the checker.
"""

import json  # the protocol
import os  # pipes, process groups
import select  # waiting on the pipes with a deadline
import signal  # SIGKILL for the group; SIGINT and SIGTERM held while the child starts
import subprocess  # the child process
import sys  # the interpreter that runs the child
import time  # deadlines
from typing import List, NamedTuple, Optional

SERVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve.py")
MAX_REPLY = 1 << 20  # bytes in one reply line
MAX_DEPTH = 8  # nesting of an answer
OUTPUT_KEPT = 4096  # bytes of the candidate's prints kept per call
LOAD_FACTOR = 5  # loading the file (NumPy's or PyTorch's import) may take this many limits
FIRST_FACTOR = 20  # the first call (an import inside it: JAX's) may take this many: 60 s
GRACE = 1.0  # seconds a child that closed its reply pipe has to exit before it is killed

__all__ = ["Child", "Reply", "LoadError", "InternalError", "printable"]


class Reply(NamedTuple):
    """What one call did: kind is "returned", "raised", "unreadable" (the child could not read
    the answer as numbers), "timeout", "died" or "broken" (a reply that is not one)."""
    kind: str
    value: object = None  # the answer: nested lists of floats, None, dicts of them
    types: tuple = ()  # raised: the names of the exception's classes, its own first
    error: str = ""  # raised: the exception in one line; otherwise what went wrong
    refusal: bool = False  # raised: an instance of the builtin ValueError
    arithmetic: bool = False  # raised: an instance of the builtin ArithmeticError
    mutated: tuple = ()  # the arguments the call changed, by the names the checker gave
    output: tuple = ()  # the candidate's printed lines, made printable


class LoadError(Exception):
    """The file did not load: usage is True when it cannot be checked at all (no such
    function, a syntax error), False when loading raised or ran past the limit."""

    def __init__(self, message: str, usage: bool):
        super().__init__(message)
        self.usage = usage


class InternalError(Exception):
    """serve.py failed on its own, not on the candidate's code: a bug of the checker's."""


class Child:
    """The candidate's function in serve.py, started on demand after a time-out or a death."""

    def __init__(self, path: str, names: tuple, arrays: bool, time_limit: float):
        self.load = {"op": "load", "path": os.path.abspath(path), "names": list(names),
                     "arrays": arrays}
        self.time_limit, self.process, self.calls = time_limit, None, 0
        try:
            self.info = self._start()
        except BaseException:  # Ctrl-C while it loads: no child left behind
            self.close()
            raise

    def call(self, args: list, kwargs: dict, labels: List[str]) -> Reply:
        """Reply to NAME(*args, **kwargs); labels name the positional arguments."""
        if self.process is None:
            try:
                self._start()
            except LoadError as e:
                return Reply("died", error=f"reload failed: {e}")
        limit = self.time_limit * (FIRST_FACTOR if self.calls == 0 else 1)
        self.calls += 1
        message = {"op": "call", "id": self.calls, "args": args, "kwargs": kwargs,
                   "names": labels}
        line = self._exchange(message, limit)
        if isinstance(line, Reply):
            return line
        reply = _reply(line, self.calls, self._lines(), set(labels) | set(kwargs))
        return reply if isinstance(reply, Reply) else self._stop("broken", reply)

    def close(self) -> None:
        """Kill the child's process group (the candidate's own processes too), then reap."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:  # the group is gone already
            pass
        self.status = self.process.wait()
        for fd in (self.commands, self.replies, self.prints):
            os.close(fd)
        self.process = None

    # ------------------------------------------------------------------ the process

    def _start(self) -> dict:
        self._spawn()
        line = self._exchange(self.load, LOAD_FACTOR * self.time_limit)
        if isinstance(line, Reply):
            raise LoadError(line.error, usage=False)
        info = _loaded(line)
        if info is None or info.get("op") != "loaded":
            self.close()
            usage = info is not None and info["op"] == "usage"
            raise LoadError(printable(info["error"]) if info else "broken reply", usage=usage)
        self.output = self._lines()
        return info

    def _spawn(self) -> None:
        commands, self.commands = os.pipe()
        self.replies, replies = os.pipe()
        self.prints, prints = os.pipe()
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:  # a Ctrl-C now is delivered below, once self.process exists to be killed
            self.process = subprocess.Popen(
                [sys.executable, "-u", "-B", SERVE, str(commands), str(replies), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=prints, stderr=prints,
                pass_fds=(commands, replies), start_new_session=True)
        finally:
            for fd in (commands, replies, prints):
                os.close(fd)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        for fd in (self.commands, self.replies, self.prints):
            os.set_blocking(fd, False)
        self.kept, self.open = bytearray(), [self.replies, self.prints]

    def _exchange(self, message: dict, limit: float):
        """Send message and return the reply line (bytes), or a Reply saying why not; one
        deadline covers the sending and the whole reply."""
        deadline = time.monotonic() + limit
        self.kept = bytearray()
        data, line = json.dumps(message).encode() + b"\n", bytearray()
        while data or b"\n" not in line:
            left = deadline - time.monotonic()
            if left <= 0:
                return self._stop("timeout", f"still running after {limit:g} s")
            writing = [self.commands] if data else []
            readable, writable, _ = select.select(self.open, writing, [], left)
            try:
                if writable:
                    data = data[os.write(self.commands, data):]
            except BrokenPipeError:
                return self._stop("died", "")
            if self.prints in readable:
                self._keep(os.read(self.prints, 65536))
            if self.replies in readable:
                chunk = os.read(self.replies, 65536)
                if not chunk:
                    return self._stop("died", "")
                line += chunk
            if len(line) > MAX_REPLY + 1:
                return self._stop("broken", "reply over 1 MiB")
        line, rest = bytes(line).split(b"\n", 1)
        return self._stop("broken", "more than one reply") if rest else line

    def _stop(self, kind: str, error: str) -> Reply:
        """Kill the child after a call that went wrong; the next call loads the file again.
        A child that closed its reply pipe gets GRACE seconds to exit first, so that a signal
        the checker sends is never reported as the candidate's death."""
        output = self._lines()
        gone = False
        if kind == "died":
            try:
                self.process.wait(GRACE)
                gone = True
            except subprocess.TimeoutExpired:  # alive, its pipe closed: the checker kills it
                pass
        self.close()
        if kind == "died":
            code = self.status
            error = ("closed its reply pipe; killed by the checker" if not gone else
                     f"exit status {code}" if code >= 0 else f"killed by signal {-code}")
        return Reply(kind, error=error, output=output)

    def _keep(self, chunk: bytes) -> None:
        if not chunk:
            self.open.remove(self.prints)
        self.kept += chunk[:max(0, OUTPUT_KEPT - len(self.kept))]

    def _lines(self) -> tuple:
        """The candidate's prints since the call began, line by line, made printable."""
        while self.prints in self.open and select.select([self.prints], [], [], 0)[0]:
            self._keep(os.read(self.prints, 65536))
        text = self.kept.decode("utf-8", "replace")
        return tuple("".join(c if c.isprintable() else "?" for c in line)
                     for line in text.splitlines())


# -------------------------------------------------------------- checking each reply

def printable(text: str) -> str:
    r"""text with every character that is not printable escaped (a newline as \n, ESC as
    \x1b), so that the candidate's text can neither forge a line nor move the terminal.

    >>> printable("Value\nError\x1b[2J")
    'Value\\nError\\x1b[2J'
    """
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _loaded(line: bytes) -> Optional[dict]:
    """The load reply, if every field has its type; None otherwise.  InternalError when
    serve.py failed on its own."""
    data = _json(line)
    _internal(data)
    if not isinstance(data, dict) or data.get("op") not in ("loaded", "usage", "failed"):
        return None
    if data["op"] != "loaded":
        return data if isinstance(data.get("error"), str) else None
    params = data.get("params")
    good = params is None or isinstance(params, list) and all(
        isinstance(p, list) and len(p) == 3 and isinstance(p[0], str) and isinstance(p[1], str)
        and isinstance(p[2], bool) for p in params)
    return data if good and isinstance(data.get("name"), str) else None


def _internal(data) -> None:
    """Raise InternalError for serve.py's report of its own failure."""
    if isinstance(data, dict) and data.get("op") == "internal":
        raise InternalError(printable(str(data.get("error"))))


def _reply(line: bytes, call: int, output: tuple, sent: set):
    """The Reply a call's line gives, or why the line is not one (a str); sent holds the
    names of the arguments, the only ones that can have changed."""
    data = _json(line)
    _internal(data)
    if not isinstance(data, dict) or data.get("id") != call:
        return "reply to another call"
    kind, mutated = data.get("kind"), data.get("mutated", [])
    types, error = data.get("types"), data.get("error")
    if not _strings(mutated) or not set(mutated) <= sent:
        return "malformed reply"
    if kind == "returned" and _answer(data.get("value"), 0):
        return Reply(kind, _floats(data["value"]), mutated=tuple(mutated), output=output)
    flags = data.get("refusal"), data.get("arithmetic")
    if kind == "raised" and _strings(types) and types and isinstance(error, str) and all(
            isinstance(flag, bool) for flag in flags):
        return Reply(kind, types=tuple(map(printable, types)), error=printable(error),
                     refusal=flags[0], arithmetic=flags[1], mutated=tuple(mutated),
                     output=output)
    if kind == "unreadable" and isinstance(error, str):  # the child could not read the answer
        return Reply(kind, error=printable(error), output=output)
    return "malformed reply"


def _json(line: bytes):
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None


def _strings(x) -> bool:
    return isinstance(x, list) and all(isinstance(s, str) for s in x)


def _answer(x, depth: int) -> bool:
    """x is an answer: a number, None, or lists and dicts of answers, not too deep."""
    if depth > MAX_DEPTH:
        return False
    if x is None or isinstance(x, float):
        return True
    if isinstance(x, int) and not isinstance(x, bool):
        return abs(x) < 2 ** 1000  # float() of it cannot overflow
    if isinstance(x, list):
        return all(_answer(v, depth + 1) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, str) and _answer(v, depth + 1) for k, v in x.items())
    return False


def _floats(x):
    """The answer with every number a float."""
    if isinstance(x, list):
        return [_floats(v) for v in x]
    if isinstance(x, dict):
        return {k: _floats(v) for k, v in x.items()}
    return x if x is None else float(x)


if __name__ == "__main__":  # a module, not a program: what it is, and the program
    print(__doc__)
