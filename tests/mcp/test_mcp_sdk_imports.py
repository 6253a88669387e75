"""A run that starts an MCP server imports the SDK's client pieces only (issue 40 item 4); the
``mcp`` package as published is still there for code that asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_helpers import model_env, stdio_config

ECHO = Path(__file__).parents[1] / "tools" / "fixtures" / "mcp_echo_server.py"
NOT_FOR_A_CLIENT = ("mcp.server", "mcp.cli", "mcp.client.client", "mcp.client.session_group")


def needless(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".")
                                            for n in NOT_FOR_A_CLIENT))


def test_a_run_with_one_stdio_server_imports_only_the_client_side(
        tmp_path: Path, mock_server: Any) -> None:
    mock_server.add_reply('Action:\n```\n{"action": "ev.echo", "action_input": {"text": "hi"}}'
                          '\n```\n')
    mock_server.add_reply("Final Answer: done")
    config = stdio_config(tmp_path, "ev", ECHO)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentcli", "run", "say hi", "-c", config,
         "--tools", "ev.echo", "-m", "openai/gpt-4o-mini"], capture_output=True, text=True,
        env={**os.environ, **model_env(mock_server)}, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "done"
    assert "echo: hi" in json.dumps(mock_server.requests[-1].body)  # the server answered
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
               if line.startswith("import time:")}
    assert "mcp.client.session" in modules
    assert needless(modules) == []


def test_the_published_package_is_there_for_code_that_asks() -> None:
    code = """
import sys
from agentcli.mcp.sdk import require_sdk
require_sdk()
import mcp.client.session
before = any(m.startswith("mcp.server") for m in sys.modules)
import mcp
from mcp import ClientSession, types
from mcp.client import streamable_http
assert ClientSession is mcp.client.session.ClientSession and types is mcp.types
print(before, any(m.startswith("mcp.server") for m in sys.modules), hasattr(mcp, "stdio_server"))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert proc.stdout.split() == ["False", "True", "True"]
