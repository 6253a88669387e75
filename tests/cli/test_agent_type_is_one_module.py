"""A new agent type is one module and one line in the built-in table (a read-only table: the
test swaps in the table with that line added): ``--prompt``, ``agent prompts show`` and
structured actions read its facts (template, JSON blob) from the class, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli import agents
from agentcli.cli.app import app

MODULE = '''
from agentcli.agents.base import TextAgent
from agentcli.agents.parsers import JsonBlobOutputParser
from agentcli.schema import system, user

class Blob(TextAgent):
    agent_type = "blob"
    summary = "Answers with one JSON blob."
    main_template = "blob"
    json_blob = True
    stop = ("Observation:",)
    prompts = {"blob": "BLOB PROMPT. Tools:\\n{tools}\\nOne JSON blob, please."}

    def __init__(self, tools, **kw):
        super().__init__(tools, **kw)
        self.parser = JsonBlobOutputParser()

    def build_messages(self, steps, inputs, *, final=False):
        tools = "\\n".join(f"{t.name}: {t.description}" for t in self.tools)
        return [system(self.prompt("blob", tools=tools)), user(str(inputs["input"]))]
'''
ANSWER = '```\n{"action": "Final Answer", "action_input": "75"}\n```'


@pytest.fixture(autouse=True)
def _blob_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "blob_agent.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(agents, "BUILTIN_AGENTS", MappingProxyType({
        **agents.BUILTIN_AGENTS,
        "blob": "blob_agent:Blob",  # the one line
    }))


def agent(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


def test_prompts_show_prints_the_prompt_on_the_class() -> None:
    result = agent("prompts", "show", "blob")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("BLOB PROMPT. Tools:\n{tools}")
    assert "variables: {tools}" in result.stderr
    assert "Traceback" not in result.stderr


def test_prompt_file_is_checked_against_the_class_prompt(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("MINE. {tools}\n")
    bad.write_text("MINE, no tools. {input}\n")
    shown = agent("prompts", "show", "blob", "--prompt", str(good))
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout == "MINE. {tools}\n"
    refused = agent("prompts", "show", "blob", "--prompt", str(bad))
    assert refused.exit_code == 2
    assert "missing {tools}; unknown {input}" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_a_run_uses_the_prompt_file_and_a_structured_action_schema(
    mock_server: Any, tmp_path: Path
) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("MY BLOB PROMPT over {tools}\n")
    mock_server.add_reply(ANSWER)
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test"}
    result = agent("run", "What is 25% of 300?", "-m", "openai/m", "-q", "-a", "blob",
                   "--prompt", str(mine), "--structured-actions", "on", env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "75"
    body = mock_server.requests[0].body
    assert body["messages"][0]["content"].startswith("MY BLOB PROMPT over Calculator: ")
    schema = json.dumps(body["response_format"])
    assert "Calculator" in schema and "Final Answer" in schema  # the action blob's schema
