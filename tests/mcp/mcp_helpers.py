"""Helpers shared by the MCP tests: run the real `agent` entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.zygote import server_command


def agent(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``agent`` entry point with stdout piped (in ``cwd``, if given)."""
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=cwd)


def stdio_config(tmp_path: Path, name: str, script: Path) -> str:
    """A config file with one trusted stdio server ``name`` running ``script``."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"mcp_servers": {name: {
        **server_command(str(script)), "trusted": True}}}))
    return str(path)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is dead, awaiting its reaper)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return not stat.parent.parent.is_dir()  # no /proc: kill(0) said it runs


def model_env(server: Any) -> dict[str, str]:
    """The environment that points ``-m openai/...`` at the mock model server."""
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x"}


def offered(body: dict[str, Any]) -> list[str]:
    """The tool names a model request offered."""
    return [t["function"]["name"] for t in body.get("tools") or []]
