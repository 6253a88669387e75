"""One record per run: `agent run`, `agent chat` and `agent serve` log the same row, with the
cost of the run's own usage; local presets (llamacpp too) are priced at zero for --max-cost."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentcli.pricing import price_of
from agentcli.schema import Usage

USAGE = {"prompt_tokens": 1200, "completion_tokens": 300}


def logged(db: Path) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(question, session, meta) of every logged run."""
    con = sqlite3.connect(db)
    try:
        rows = list(con.execute("SELECT question, session, meta FROM runs ORDER BY id"))
    finally:
        con.close()
    return [(q, s, json.loads(m or "{}")) for q, s, m in rows]


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(AGENT_DB=str(tmp_path / "log.db"), **more)
    return env


def test_a_chat_turn_logs_its_cost(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: the sky is blue", usage=USAGE)
    env = _env(tmp_path, OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-t")
    done = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/gpt-4o-mini",
                           "--session", "costs"], input="What colour is the sky?\n",
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the sky is blue" in done.stdout
    [(question, session, meta)] = logged(tmp_path / "log.db")
    price = price_of("openai/gpt-4o-mini")
    assert price is not None
    assert (question, session) == ("What colour is the sky?", "costs")
    assert meta["cost"] == price.cost(Usage(**USAGE)) and meta["cost"] > 0
    assert meta["model_calls"] == 1


def test_max_cost_works_with_a_llamacpp_model(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: local answers are free", usage=USAGE)
    env = _env(tmp_path, LLAMACPP_BASE_URL=mock_server.base_url)
    done = subprocess.run([sys.executable, "-m", "agentcli", "run", "-m", "llamacpp/qwen",
                           "--max-cost", "0.01", "Is a local model free?"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "local answers are free" in done.stdout
    [(_, _, meta)] = logged(tmp_path / "log.db")
    assert meta["cost"] == 0.0
