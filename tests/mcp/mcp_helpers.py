"""Helpers shared by the MCP tests: run the real `agent` entry point."""

from __future__ import annotations

import os
import subprocess
import sys


def agent(*args: str, env: dict[str, str] | None = None, timeout: float = 120
          ) -> subprocess.CompletedProcess[str]:
    """Run the real ``agent`` entry point with stdout piped."""
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout,
                          stdin=subprocess.DEVNULL)
