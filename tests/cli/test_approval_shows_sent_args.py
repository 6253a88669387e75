"""The approval panel shows a dangerous call's arguments as they will be sent: a model that
writes ``{"URL": ...}`` for ``requests_get`` is asked about ``GET <that url>``, and the call
approved is the call that runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pty_session import PtySession

URL = "http://127.0.0.1:9/shown-before-approval"


def _script(mock_server: Any) -> None:
    blob = json.dumps({"action": "requests_get", "action_input": {"URL": URL}})
    mock_server.add_reply(f"Thought: fetch it\nAction:\n```json\n{blob}\n```")
    mock_server.add_reply("Final Answer: fetched or not, done")


def _env(mock_server: Any, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1", AGENT_DB=str(tmp_path / "a.db"))
    return env


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_the_panel_shows_the_url_the_request_will_use(mock_server: Any, tmp_path: Path) -> None:
    _script(mock_server)
    session = PtySession(
        [sys.executable, "-m", "agentcli", "run", "fetch the page", "-m", "openai/any",
         "-t", "requests_get", "--allow", "requests_get"],
        env=_env(mock_server, tmp_path), cwd=str(tmp_path), cols=160)
    try:
        at = session.expect(r"requests_get wants to run")
        shown = session.expect(r"Allow\?", after=at)
        assert f"GET {URL}" in session.text[at:shown]
        session.send("n\r")
        session.expect(r"done", after=shown)
        assert session.proc.wait(timeout=30) == 0
    finally:
        session.close()


def test_the_approved_arguments_are_the_ones_that_run(mock_server: Any, tmp_path: Path) -> None:
    _script(mock_server)
    trace = tmp_path / "t.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "fetch the page", "-m", "openai/any",
         "-t", "requests_get", "--allow", "requests_get", "--yes", "--trace", str(trace)],
        env=_env(mock_server, tmp_path), capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    [approval] = [e for e in events if e.get("kind") == "approval"]
    [started] = [e for e in events if e["event"] == "tool_start"]
    assert approval["tool_input"] == started["tool_input"] == {"url": URL}


def test_a_text_tool_is_approved_as_it_will_run(mock_server: Any, tmp_path: Path) -> None:
    """JSON text inside JSON text is unwrapped before the question, not after the yes."""
    inner = json.dumps({"input": "echo unwrapped-before-approval"})
    blob = json.dumps({"action": "terminal", "action_input": {"command": inner}})
    mock_server.add_reply(f"Thought: run it\nAction:\n```json\n{blob}\n```")
    mock_server.add_reply("Final Answer: ran it")
    trace = tmp_path / "t.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "run it", "-m", "openai/any",
         "-t", "terminal", "--allow", "terminal", "--yes", "--trace", str(trace)],
        env=_env(mock_server, tmp_path), capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    [approval] = [e for e in events if e.get("kind") == "approval"]
    [ended] = [e for e in events if e["event"] == "tool_end"]
    assert approval["tool_input"] == "echo unwrapped-before-approval"
    assert ended["observation"].strip() == "unwrapped-before-approval"
