"""A `custom/` model on a local server with `structured_actions: auto` streams the answer token
by token under the action schema (llama.cpp streams with a grammar): `agent serve` and
`agent chat` both ask with `stream: true` and the schema, and a served stream arrives in
pieces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from openai_clients import client

ANSWER = "The capital of France is Paris, a city on the Seine."
BLOB = json.dumps({"action": "Final Answer", "action_input": ANSWER})


def completions(mock_server: Any) -> list[dict[str, Any]]:
    return [r.body for r in mock_server.requests if r.path.endswith("/chat/completions")]


def test_a_served_custom_model_streams_under_the_schema(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply(f"```json\n{BLOB}\n```")
    served = serve("-m", "custom/local-model", "--base-url", mock_server.base_url,
                   "--agent", "chat-zero-shot-react-description")
    stream = client(served).chat.completions.create(
        model="agent", stream=True, messages=[{"role": "user", "content": "Capital of France?"}])
    pieces = [c.choices[0].delta.content for c in stream
              if c.choices and c.choices[0].delta.content]
    assert "".join(pieces).strip() == ANSWER
    assert len(pieces) > 1  # token by token, not the whole answer at the end
    [body] = completions(mock_server)
    assert body.get("stream") is True and "response_format" in body


def test_a_chat_turn_with_a_custom_model_streams_under_the_schema(
        mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(f"```json\n{BLOB}\n```")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["AGENT_DB"] = str(tmp_path / "a.db")
    done = subprocess.run(
        [sys.executable, "-m", "agentcli", "chat", "-m", "custom/local-model", "--base-url",
         mock_server.base_url, "--agent", "chat-zero-shot-react-description"],
        input="Capital of France?\n", capture_output=True, text=True, env=env, timeout=120,
        cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    [body] = completions(mock_server)
    assert body.get("stream") is True and "response_format" in body
