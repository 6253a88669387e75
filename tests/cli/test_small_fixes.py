"""Newcomer fixes: the offline demo's wordings, chat --memory none, which type chat uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, stdin: str = "") -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("question", ["What is the 25% of 300?", "what is 25% of 300"])
def test_demo_answers_the_seed_wordings(question: str) -> None:
    proc = cli("run", "-q", question)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "75\n"
    assert "Offline demo" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [["What's 25% of 300?"], ["What is 25 % of 300?"], ["What is 30% of 300?"],
     ["-s", "Be brief.", "What is 25% of 300?"], ["-o", "seed", "1", "What is 25% of 300?"]],
)
def test_anything_else_without_a_model_is_one_clear_line(args: list[str]) -> None:
    proc = cli("run", "-q", *args)
    assert proc.returncode == 2
    err = " ".join(proc.stderr.split())
    assert err.startswith("error: no model configured: set AGENT_MODEL")
    assert "cassette" not in err and "Traceback" not in err


def test_chat_memory_none_reports_none(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Final Answer: hi", "Final Answer: again"]))
    proc = cli("chat", "--memory", "none", "-m", f"fake:{script}", "--db",
               str(tmp_path / "a.db"), stdin="hello\n/memory\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert "memory none: the model sees no earlier turns" in out
    assert "buffer memory" not in out and "does not read memory" not in out


def test_agents_list_and_default_yaml_agree_on_chat() -> None:
    from agentcli.config import CHAT_AGENT, Settings

    rows = json.loads(cli("agents", "list", "--json").stdout)
    default_for = {r["name"]: r["default_for"] for r in rows}
    assert default_for[CHAT_AGENT] == ["chat"]
    assert default_for["chat-zero-shot-react-description"] == ["run", "batch"]
    data = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    assert data["agent"] is None and Settings().agent is None  # unset: each command's default
    assert CHAT_AGENT in (REPO / "configs" / "default.yaml").read_text()


def test_self_ask_tool_in_the_config_does_not_break_other_agent_types(
    mock_server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("self_ask_tool: Calculator\n")
    mock_server.add_reply("Final Answer: fine")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-t")
    proc = subprocess.run([sys.executable, "-m", "agentcli", "run", "q", "-m", "openai/any",
                           "-c", str(config), "--db", str(tmp_path / "a.db")],
                          capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "fine"
