"""A served request is logged like `agent run`'s: one row, with the cost of its usage."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from openai_clients import client

from agentcli.pricing import price_of
from agentcli.schema import Usage

USAGE = {"prompt_tokens": 2000, "completion_tokens": 100}


def test_a_served_request_logs_its_cost(serve: Any, mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Paris is the capital of France.", usage=USAGE)
    served = serve("--agent", "tool-calling", "-m", "openai/gpt-4o")
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "Capital of France?"}])
    assert done.choices[0].message.content == "Paris is the capital of France."
    assert served.stop() == 0  # the row is written before the answer goes; stopped to read it
    con = sqlite3.connect(tmp_path / "serve.db")
    try:
        rows = list(con.execute("SELECT question, prompt_tokens, meta FROM runs"))
    finally:
        con.close()
    [(question, prompt_tokens, meta)] = [(q, p, json.loads(m)) for q, p, m in rows]
    price = price_of("openai/gpt-4o")
    assert price is not None
    assert (question, prompt_tokens) == ("Capital of France?", USAGE["prompt_tokens"])
    assert meta["cost"] == price.cost(Usage(**USAGE)) and meta["cost"] > 0
    assert meta["served_as"] and meta["model_calls"] == 1
