"""`agent serve` under hostile requests (issue 38), through the real command on a loopback
port: a request whose answer is checked against a catastrophic pattern, or whose model sends
the Calculator's bomb, never holds up another client's request."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from openai_clients import client

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
        bombed.append(client(served).chat.completions.create(
            model="agent", messages=[{"role": "user", "content": "bomb"}],
            response_format={"type": "json_schema",
                             "json_schema": {"name": "Code", "schema": SCHEMA}}))

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
    first.join(120)
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
