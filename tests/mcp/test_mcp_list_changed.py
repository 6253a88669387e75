"""``tools/list_changed`` under stress and with a dangerous newcomer: a server flooding the
notification has its tool list read once before the next model request, never once per
notification; a new dangerous tool that is not allowed is held back (said in the trace) while
the safe new tool is offered; a result with text and structuredContent reaches the model once.
Real SDK server over stdio, the real ``agent`` command, the mock model server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.mcp_helpers import agent, offered, stdio_config
from tests.mcp.mcp_helpers import model_env as env

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parent / "mcp_noisy_server.py"
FLOOD = 5_000


def config(tmp_path: Path) -> str:
    return stdio_config(tmp_path, "noisy", SERVER)


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_flood_of_list_changed_is_a_bounded_number_of_refreshes(
        mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(tool_calls=[{"name": "noisy__flood", "arguments": {"n": FLOOD}}])
    mock_server.add_reply(tool_calls=[{"name": "noisy__lists", "arguments": {}}])
    mock_server.add_reply("done")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", config(tmp_path),
                 "-t", "noisy", env=env(mock_server), timeout=300)
    assert proc.returncode == 0, proc.stderr
    said = tool_texts(mock_server.requests[-1].body)
    assert said[0] == f"sent {FLOOD}"
    found = re.fullmatch(r"tools/list asked (\d+) times", said[1])
    assert found is not None, said
    # one at start-up, one before the next model request: not one per notification
    assert int(found.group(1)) == 2, said[1]


def test_a_new_dangerous_tool_is_held_back_and_the_safe_one_offered(
        mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(tool_calls=[{"name": "noisy__unlock", "arguments": {}}])
    mock_server.add_reply(tool_calls=[{"name": "noisy__secret", "arguments": {"word": "x"}}])
    mock_server.add_reply("The secret is 42.")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", config(tmp_path),
                 "-t", "noisy", env=env(mock_server))
    assert proc.returncode == 0, proc.stderr
    first, second, third = (r.body for r in mock_server.requests)
    assert "noisy__secret" not in offered(first)
    assert "noisy__secret" in offered(second) and "noisy__wipe" not in offered(second)
    assert tool_texts(third)[-1] == "the secret of x is 42"
    trace = " ".join(proc.stderr.split())
    assert "Held back a new tool 'noisy.wipe' (from MCP server 'noisy') is dangerous" in trace
    assert "--allow noisy.wipe" in trace
    assert "The tools changed (new: noisy.secret)" in trace


def test_a_result_with_text_and_structured_content_reaches_the_model_once(
        mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(tool_calls=[{"name": "noisy__colours", "arguments": {}}])
    mock_server.add_reply("red and green")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", config(tmp_path),
                 "-t", "noisy.colours", env=env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert tool_texts(mock_server.requests[-1].body) == ["red\ngreen"]
