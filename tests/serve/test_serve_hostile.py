"""`agent serve` under hostile requests (issue 38), through the real command on a loopback
port: a request whose answer is checked against a catastrophic pattern, or whose model sends
the Calculator's bomb, never holds up another client's request; the CLI cannot make a session
in the served namespace, where a client's `X-Agent-Session` would read it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from openai_clients import client

from agentcli.store import Store

SCHEMA = {"type": "object", "required": ["code"],
          "properties": {"code": {"type": "string", "pattern": "(a|aa)+$"}}}


def _asked(body: dict[str, Any], question: str) -> bool:
    return any(m.get("role") == "user" and m.get("content") == question
               for m in body["messages"])


def test_a_pattern_bomb_does_not_hold_up_another_client(serve: Any, mock_server: Any) -> None:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if _asked(body, "bomb"):  # each answer of this run takes the pattern's time limit
            code = "a" * (60 + len(body["messages"])) + "!"  # never the same: no stall stop
            return {"text": "Final Answer: " + json.dumps({"code": code})}
        return {"text": "Final Answer: The other client's answer."}

    mock_server.set_responder(respond)
    served = serve("--max-iterations", "8")
    bombed: list[Any] = []

    def ask_bomb() -> None:
        try:
            bombed.append(client(served).chat.completions.create(
                model="agent", messages=[{"role": "user", "content": "bomb"}],
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "Code", "schema": SCHEMA}}))
        except Exception as exc:  # seen by the assertions below, not lost in the thread
            bombed.append(exc)

    first = threading.Thread(target=ask_bomb, daemon=True)
    first.start()
    while not any(_asked(r.body, "bomb") for r in mock_server.requests):
        assert first.is_alive()
        time.sleep(0.02)
    # The bombed run is now checking its answers (8 of them, each up to the time limit).
    other = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "other"}])
    assert other.choices[0].message.content == "The other client's answer."
    assert first.is_alive() and not bombed  # answered while the bomb was still being checked
    first.join(600)  # each check is 1 s of CPU: long on a busy machine
    [reply] = bombed
    assert reply.choices[0].finish_reason == "length"  # no valid answer within its limits
    told = json.dumps([r.body["messages"] for r in mock_server.requests
                       if _asked(r.body, "bomb")])
    assert "took over 1 s to check" in told


def test_a_calculator_bomb_is_answered_with_the_too_large_line(serve: Any,
                                                               mock_server: Any) -> None:
    bomb = "((-1) % ((-1) % 10**300) ** 10000) ** 10000"
    mock_server.add_reply(tool_calls=[{"name": "Calculator", "arguments": {"input": bomb}}])
    mock_server.add_reply("Too large to compute.")
    served = serve("--agent", "tool-calling")
    reply = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "compute it"}])
    assert reply.choices[0].message.content == "Too large to compute."
    [said] = [m["content"] for m in mock_server.requests[-1].body["messages"]
              if m["role"] == "tool"]
    assert "is too large" in said and "digits" not in said


@pytest.mark.parametrize("argv", [
    ["chat", "--session", "served:notes"], ["chat", "-s", "Served:notes"],
    ["run", "--thread", "served:notes", "hi"],
])
def test_the_cli_cannot_name_a_session_in_the_served_namespace(
        argv: list[str], mock_server: Any, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x",
           "AGENT_DB": str(tmp_path / "a.db")}
    done = subprocess.run([sys.executable, "-m", "agentcli", *argv, "-m", "openai/x"],
                          input="my secret notes\n", capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "session names starting with 'served:' belong to `agent serve`'s clients" \
        in done.stderr
    assert not mock_server.requests  # nothing was asked, so nothing was saved under that name
    if (tmp_path / "a.db").exists():
        store = Store(tmp_path / "a.db")
        try:
            assert not [s for s in store.sessions() if s.name.lower().startswith("served:")]
        finally:
            store.close()


def test_a_slash_session_in_the_served_namespace_keeps_the_session_in_use(
        mock_server: Any, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x",
           "AGENT_DB": str(tmp_path / "a.db")}
    done = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/x",
                           "--session", "work"], input="/session served:notes\n/sessions\n",
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "belong to `agent serve`'s clients" in out
    assert "* work" in out and "served:" not in out.split("/sessions", 1)[1]
