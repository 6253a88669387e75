"""``terminal``: run a shell command in the tool root with a timeout and a scrubbed env."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from agentcli.errors import ToolInputError
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
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command], cwd=cwd, env=scrubbed_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise ToolInputError(
            f"command timed out after {timeout:g}s and was killed (with its children)"
        ) from None
    text = cap_output(out.decode("utf-8", "replace"), max_output)
    return text if proc.returncode == 0 else f"[exit status {proc.returncode}]\n{text}"


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a process started with ``start_new_session`` and everything it spawned."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


def _factory(**settings: Any) -> Tool:
    cwd = tool_root(settings, "terminal_cwd")
    timeout = float_setting(settings, "terminal_timeout", 30.0)
    max_output = int_setting(settings, "terminal_max_output", 20_000)
    return Tool("terminal", DESCRIPTION,
                func=lambda cmd: run_command(cmd, cwd, timeout, max_output))
