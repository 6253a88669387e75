"""``terminal``: run a shell command in the tool root with a timeout and a scrubbed env."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path

from agentcli import deadline
from agentcli.errors import DeadlineExceeded, ToolInputError
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import cap_output, float_setting, int_setting, scrubbed_env, tool_root

DESCRIPTION = (
    "Run shell commands on this machine (POSIX sh). Input should be a valid shell command; "
    "the output (stdout and stderr) is returned."
)


def run_command(command: str, cwd: Path, timeout: float, max_output: int) -> str:
    """Run ``command`` through /bin/sh -c; return exit status and combined output."""
    if not command.strip():
        raise ToolInputError("terminal needs a command")
    code, out, _ = run_bounded(["/bin/sh", "-c", command], cwd=cwd, timeout=timeout,
                               what="command", merge_stderr=True)
    text = cap_output(out.decode("utf-8", "replace"), max_output)
    return text if code == 0 else f"[exit status {code}]\n{text}"


def run_bounded(
    argv: list[str], *, cwd: Path, timeout: float, what: str, merge_stderr: bool = False
) -> tuple[int, bytes, bytes]:
    """Run ``argv`` in its own session for at most ``timeout`` or the run's time left.

    On expiry the whole process group is killed; :class:`DeadlineExceeded` says the run
    deadline was the limit, :class:`ToolInputError` that the tool's own timeout was.
    """
    limit = deadline.bound(timeout)
    proc = subprocess.Popen(
        argv, cwd=cwd, env=scrubbed_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        if deadline.expired():
            raise DeadlineExceeded(
                f"the {what} was killed (with its children) at the run's time limit"
            ) from None
        raise ToolInputError(
            f"{what} timed out after {timeout:g}s and was killed (with its children)"
        ) from None
    return proc.returncode, out or b"", err or b""


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
    return Tool("terminal", DESCRIPTION,
                func=lambda cmd: run_command(cmd, cwd, timeout, max_output))
