"""A chat turn's steps are logged with their status and duration, as `agent run`'s are."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

ACTION = ('Thought: I need to compute.\nAction:\n```\n'
          '{"action": "Calculator", "action_input": "300 * 0.25"}\n```\n')


def test_chat_turn_steps_have_status_and_duration(mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update({"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t",
                "AGENT_DB": str(db)})
    mock_server.add_reply(ACTION)
    mock_server.add_reply("Final Answer: seventy-five")
    done = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/alpha",
                           "--session", "timed"], input="What is 25% of 300?\n",
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "seventy-five" in done.stdout
    con = sqlite3.connect(db)
    try:
        steps = list(con.execute("SELECT tool, status, duration FROM run_steps"))
    finally:
        con.close()
    assert len(steps) == 1
    tool, status, duration = steps[0]
    assert (tool, status) == ("Calculator", "ok") and duration is not None and duration >= 0
