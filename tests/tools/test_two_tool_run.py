"""`agent run --tools wikipedia,llm-math` end to end: mock model + local wiki server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcli.cli.app import app


def blob(tool: str, tool_input: str) -> str:
    return (f"Thought: use {tool}\nAction:\n```json\n"
            f'{{"action": "{tool}", "action_input": "{tool_input}"}}\n```\n')


def test_two_tool_question(mock_server: Any, wiki_server: Any, tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(f"tool_settings:\n  wikipedia_base_url: {wiki_server.url}/w/api.php\n")
    mock_server.add_reply(blob("wikipedia", "Eiffel Tower"))
    mock_server.add_reply(blob("Calculator", "330 * 2"))
    mock_server.add_reply("Two towers would be 660 metres.\nFinal Answer: 660 metres")
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = CliRunner().invoke(
        app,
        ["run", "How tall are two Eiffel Towers stacked?", "-m", "openai/any",
         "--tools", "wikipedia,llm-math", "--config", str(config)],
        env=env,
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "660 metres"
    assert len(mock_server.requests) == 3
    third = json.dumps(mock_server.requests[2].body["messages"])
    assert "330 metres tall" in third and "Answer: 660" in third
    assert any("srsearch" in str(r) for r in wiki_server.requests)
