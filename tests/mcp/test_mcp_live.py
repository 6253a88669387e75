"""MCP sessions stay live (issue 21): a server that changes its tools mid-run
(``tools/list_changed``) has the new tools offered to the running agent at the next model
request, without the session-only tool entering the disk cache; a long call's progress
notifications show in the trace. Real SDK server over stdio, the real ``agent`` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.mcp_helpers import agent, offered, stdio_config
from tests.mcp.mcp_helpers import model_env as env

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_dynamic_server.py"


def config(tmp_path: Path) -> str:
    return stdio_config(tmp_path, "dyn", SERVER)


def test_a_tool_added_mid_run_is_offered_and_works(mock_server: Any, tmp_path: Path) -> None:
    cfg = config(tmp_path)
    mock_server.add_reply(tool_calls=[{"name": "dyn__unlock", "arguments": {}}])
    mock_server.add_reply(tool_calls=[{"name": "dyn__secret", "arguments": {"word": "x"}}])
    mock_server.add_reply("The secret is 42.")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", cfg, "-t", "dyn",
                 env=env(mock_server))
    assert proc.returncode == 0, proc.stderr
    first, second, third = (r.body for r in mock_server.requests)
    assert "dyn__secret" not in offered(first)
    assert "dyn__secret" in offered(second)  # the running agent got the new list
    tool_texts = [m["content"] for m in third["messages"] if m["role"] == "tool"]
    assert tool_texts[-1] == "the secret of x is 42"
    assert "The tools changed (new: dyn.secret)" in " ".join(proc.stderr.split())
    listed = agent("tools", "list", "--json", "-c", cfg)
    names = [row["name"] for row in json.loads(listed.stdout)]
    assert "dyn.unlock" in names and "dyn.secret" not in names  # not in the disk cache


def test_progress_of_a_long_call_shows_in_the_trace(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(tool_calls=[{"name": "dyn__slow", "arguments": {}}])
    mock_server.add_reply("done")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", config(tmp_path),
                 "-t", "dyn.slow", env=env(mock_server))
    assert proc.returncode == 0, proc.stderr
    trace = " ".join(proc.stderr.split())
    assert "dyn.slow: step 1 of 3 (1/3)" in trace and "dyn.slow: step 3 of 3 (3/3)" in trace


def test_resource_templates_are_listed_and_read(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    listed = agent("mcp", "resources", "dyn", "-c", cfg, "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["uri"]: r["name"] for r in json.loads(listed.stdout)}
    assert rows["notes://index"] == "index" and rows["notes://{topic}"] == "notes (template)"
    read = agent("mcp", "read", "dyn", "notes://cats", "-c", cfg)
    assert read.returncode == 0 and read.stdout.strip() == "notes on cats"
