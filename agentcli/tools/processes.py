"""Tools that run what the model writes in a child process: ``terminal`` (a shell command)
and ``python_repl`` (Python in a persistent subprocess, state kept for the run). Each runs in
the tool root with a timeout, an output cap and a scrubbed environment; :func:`run_bounded`
is also how YAML command tools run their program."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from agentcli import deadline
from agentcli.errors import DeadlineExceeded, ToolInputError
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import cap_output, float_setting, int_setting, scrubbed_env, tool_root

SHELL_DESCRIPTION = (
    "Run shell commands on this machine (POSIX sh). Input should be a valid shell command; "
    "the output (stdout and stderr) is returned."
)


def run_bounded(argv: list[str], *, cwd: Path, timeout: float, what: str, max_output: int,
                trim: bool = False) -> str:
    """Run ``argv`` in its own session for at most ``timeout`` or the run's time left; its
    output (stdout and stderr, capped; ``trim``: without the last line end), after
    ``[exit status N]`` when it failed.

    On expiry the whole process group is killed; :class:`DeadlineExceeded` says the run
    deadline was the limit, :class:`ToolInputError` that the tool's own timeout was.
    """
    limit = deadline.bound(timeout)
    proc = subprocess.Popen(
        argv, cwd=cwd, env=scrubbed_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        if deadline.expired():
            raise DeadlineExceeded(
                f"the {what} was killed (with its children) at the run's time limit"
            ) from None
        raise ToolInputError(
            f"{what} timed out after {timeout:g}s and was killed (with its children)"
        ) from None
    text = (out or b"").decode("utf-8", "replace")
    if trim:  # `echo hi` prints "hi\n": the observation is "hi", as a shell's $(...) gives
        text = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    text = cap_output(text, max_output)
    return text if proc.returncode == 0 else f"[exit status {proc.returncode}]\n{text}"


def kill_group(proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """Kill a process started with ``start_new_session`` and everything it spawned."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


def terminal(settings: Mapping[str, object]) -> Tool:
    """The ``terminal`` tool: its directory, timeout and output cap from the settings."""
    cwd = tool_root(settings, "terminal_cwd")
    timeout = float_setting(settings, "terminal_timeout", 30.0)
    max_output = int_setting(settings, "terminal_max_output", 20_000)

    def run(command: str) -> str:
        if not command.strip():
            raise ToolInputError("terminal needs a command")
        return run_bounded(["/bin/sh", "-c", command], cwd=cwd, timeout=timeout,
                           what="command", max_output=max_output)

    return Tool("terminal", SHELL_DESCRIPTION, func=run)


PYTHON_DESCRIPTION = (
    "A Python shell. Use this to execute python commands. Input should be valid python code. "
    "Use print(...) to see a value; the value of a final expression is shown too. "
    "Variables persist between calls."
)
# The driver reads one JSON line per block, runs it in one namespace, and answers with a
# sentinel line followed by JSON, so stray writes to fd 1 cannot forge a reply.
_DRIVER = r"""
import ast, contextlib, io, json, sys, traceback
SENTINEL = sys.argv[1]
ns = {"__name__": "__main__"}
out = sys.stdout
for line in sys.stdin:
    code = json.loads(line)["code"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            tree = ast.parse(code, "<agent>", "exec")
            last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            if last is not None:
                tree.body = tree.body[:-1]
            exec(compile(tree, "<agent>", "exec"), ns)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<agent>", "eval"), ns)
                if value is not None:
                    print(repr(value))
        except BaseException:
            traceback.print_exc()
    out.write(SENTINEL + json.dumps({"out": buf.getvalue()}) + "\n")
    out.flush()
"""


class PythonSession:
    """One interpreter subprocess; a timeout kills it and the next call starts a fresh one."""

    def __init__(self, cwd: Path, timeout: float, max_output: int) -> None:
        self.cwd, self.timeout, self.max_output = cwd, timeout, max_output
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._sentinel = ""
        self._lock = threading.Lock()
        atexit.register(self.close)

    def _start(self) -> subprocess.Popen[str]:
        self._sentinel = "\x1eAGENTCLI-" + secrets.token_hex(8) + ":"
        proc = subprocess.Popen(
            [sys.executable, "-I", "-u", "-c", _DRIVER, self._sentinel], cwd=self.cwd,
            env=scrubbed_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, encoding="utf-8", start_new_session=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        self._proc, self._lines = proc, lines
        return proc

    def run(self, code: str) -> str:
        """Run a block; return its printed output (capped)."""
        code = _strip_fences(code)
        if not code.strip():
            raise ToolInputError("python_repl needs some code")
        with self._lock:
            proc = self._proc if self._proc and self._proc.poll() is None else self._start()
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"code": code}) + "\n")
            proc.stdin.flush()
            stray: list[str] = []
            # One end time for the whole block: output arriving line by line cannot extend it.
            ends = time.monotonic() + (deadline.bound(self.timeout) or 0.0)
            while True:
                try:
                    line = self._lines.get(timeout=max(0.0, ends - time.monotonic()))
                except queue.Empty:
                    self.close()
                    if deadline.expired():
                        raise DeadlineExceeded(
                            "python_repl was killed at the run's time limit"
                        ) from None
                    raise ToolInputError(
                        f"the code ran longer than {self.timeout:g}s; the interpreter was "
                        "killed and restarted, so earlier variables are gone"
                    ) from None
                if line is None:
                    self.close()
                    return cap_output("".join(stray) + "[the interpreter exited]", self.max_output)
                if line.startswith(self._sentinel):
                    text = "".join(stray) + json.loads(line[len(self._sentinel):])["out"]
                    return cap_output(text, self.max_output)
                stray.append(line)

    def close(self) -> None:
        """Stop the interpreter."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            kill_group(proc)


def _strip_fences(code: str) -> str:
    text = code.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text


def python_repl(settings: Mapping[str, object]) -> Tool:
    """The ``python_repl`` tool: one interpreter for the run."""
    session = PythonSession(
        tool_root(settings, "python_cwd"),
        float_setting(settings, "python_timeout", 30.0),
        int_setting(settings, "python_max_output", 20_000),
    )
    return Tool("python_repl", PYTHON_DESCRIPTION, func=session.run)
