"""``agent chat`` remembers how a session was set up: a resumed session comes back with the
agent type and tools that ``/agent`` and ``/tools`` gave it; a session left without a single
turn is not kept. Runs the real entry point with piped input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def agent(*args: str, server: Any, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, input=stdin, timeout=120)


def test_a_resumed_session_keeps_its_agent_and_tools(mock_server: Any, tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    mock_server.add_reply("Final Answer: hello")
    first = agent("chat", "-m", "openai/any", "--db", db, "--session", "s1", server=mock_server,
                  stdin="/agent zero-shot-react-description\n/tools add sleep\nhi\n")
    assert first.returncode == 0, first.stderr
    again = agent("chat", "-m", "openai/any", "--db", db, "--session", "s1",
                  server=mock_server, stdin="/agent\n/tools\n")
    assert again.returncode == 0, again.stderr
    out = " ".join(again.stdout.split())
    assert "restored this session's agent zero-shot-react-description and tools" in out
    assert "agent type: zero-shot-react-description" in out
    listed = again.stdout.split("you> /tools")[1]
    assert "sleep" in listed
    flagged = agent("chat", "-m", "openai/any", "--db", db, "--session", "s1", "-a",
                    "chat-conversational-react-description", server=mock_server,
                    stdin="/agent\n")
    assert "agent type: chat-conversational-react-description" in flagged.stdout  # flag wins


def test_a_session_without_turns_is_not_kept(mock_server: Any, tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    mock_server.add_reply("Final Answer: kept")
    agent("chat", "-m", "openai/any", "--db", db, "--session", "kept", server=mock_server,
          stdin="hi\n")
    agent("chat", "-m", "openai/any", "--db", db, "--session", "empty", server=mock_server,
          stdin="/tools\n")
    listed = agent("sessions", "list", "--db", db, server=mock_server)
    assert listed.returncode == 0, listed.stderr
    assert "kept" in listed.stdout and "empty" not in listed.stdout
