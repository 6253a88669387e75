"""``python_repl``: Python code in a persistent subprocess (state kept for the run)."""

from __future__ import annotations

import atexit
import json
import queue
import secrets
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
from agentcli.tools.shell import kill_group

DESCRIPTION = (
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
    return Tool("python_repl", DESCRIPTION, func=session.run)
