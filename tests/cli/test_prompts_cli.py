"""`-s/--system`, `--prompt FILE` / `prompt_file:` and `agent prompts show`, end to end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.agents import agent_class, prompts
from agentcli.cli.app import app

runner = CliRunner()
CHAT = "chat-zero-shot-react-description"
REACT = "zero-shot-react-description"


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("COLUMNS", raising=False)
    yield


def agent(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def run(server: Any, *args: str) -> Any:
    server.add_reply("Final Answer: 75")
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    return agent("run", "What is 25% of 300?", "-m", "openai/m", "-q", *args, env=env)


def test_system_is_added_to_the_chat_system_prompt(mock_server: Any) -> None:
    result = run(mock_server, "-s", "Answer in French.")
    assert result.exit_code == 0, result.stderr
    messages = mock_server.requests[0].body["messages"]
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].endswith("\n\nAnswer in French.")
    assert "You may use these tools" in messages[0]["content"]  # the template is kept


def test_system_leads_the_one_message_of_a_text_react_prompt(mock_server: Any) -> None:
    result = run(mock_server, "-a", REACT, "--system", "Be brief.")
    assert result.exit_code == 0, result.stderr
    [message] = mock_server.requests[0].body["messages"]
    assert message["content"].startswith("Be brief.\n\n")
    assert "Question: What is 25% of 300?" in message["content"]


def test_prompt_file_replaces_the_template(mock_server: Any, tmp_path: Path) -> None:
    path = tmp_path / "mine.txt"
    path.write_text("MY PROMPT. Tools: {tool_names}\n{tools}\nReply with a JSON blob.")
    result = run(mock_server, "--prompt", str(path))
    assert result.exit_code == 0, result.stderr
    system = mock_server.requests[0].body["messages"][0]["content"]
    assert system.startswith("MY PROMPT. Tools: Calculator\nCalculator: ")
    assert "You may use these tools" not in system


def test_prompt_file_from_yaml(mock_server: Any, tmp_path: Path) -> None:
    path = tmp_path / "react.txt"
    path.write_text("Tools {tools} ({tool_names}). Q: {input}\n{agent_scratchpad}")
    config = tmp_path / "agent.yaml"
    config.write_text(f"agent: {REACT}\nprompt_file: {path}\n")
    result = run(mock_server, "--config", str(config))
    assert result.exit_code == 0, result.stderr
    content = mock_server.requests[0].body["messages"][0]["content"]
    assert content.startswith("Tools Calculator: ") and "Q: What is 25% of 300?" in content


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Tools: {tools}\n", "missing {tool_names}"),
        ("{tools} {tool_names} {question}\n", "unknown {question}"),
    ],
)
def test_bad_prompt_file_one_line_exit_2(mock_server: Any, tmp_path: Path, text: str,
                                         message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    result = run(mock_server, "--prompt", str(path))
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert message in err and str(path) in err and CHAT in err
    assert "this type uses exactly: {tool_names}, {tools}" in err
    assert mock_server.requests == []


def test_missing_prompt_file_exit_2(mock_server: Any, tmp_path: Path) -> None:
    result = run(mock_server, "--prompt", str(tmp_path / "nope.txt"))
    assert result.exit_code == 2
    assert "prompt file" in result.stderr and "does not exist" in result.stderr


@pytest.mark.parametrize("flags", [["--prompt", "/dev/zero"], ["-c", "/dev/zero"],
                                   ["--schema", "/dev/zero"], ["--state-file", "/dev/zero"]])
def test_a_device_named_as_a_file_is_refused_unread(mock_server: Any, flags: list[str]) -> None:
    result = run(mock_server, *flags)
    assert result.exit_code == 2
    assert "/dev/zero is not a regular file" in result.stderr
    assert "Traceback" not in result.stderr and mock_server.requests == []


def test_an_oversized_prompt_file_is_refused(mock_server: Any, tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.write_text("{tools} {tool_names} " + "x" * (1024 * 1024 + 10))
    result = run(mock_server, "--prompt", str(path))
    assert result.exit_code == 2
    assert "is larger than 1024 KiB" in result.stderr


def test_prompts_show_builtin_and_override(tmp_path: Path) -> None:
    result = agent("prompts", "show", REACT)
    assert result.exit_code == 0
    assert result.stdout == prompts.load("react")
    assert "built-in (react.txt)" in result.stderr
    assert "{agent_scratchpad}, {input}, {tool_names}, {tools}" in result.stderr
    path = tmp_path / "mine.txt"
    path.write_text("Hello {tools} {tool_names}\x1b[31m\n")
    result = agent("prompts", "show", CHAT, "--prompt", str(path))
    assert result.exit_code == 0
    assert result.stdout == "Hello {tools} {tool_names}\\x1b[31m\n"  # no raw escape
    assert str(path) in result.stderr


def test_prompts_show_unknown_type_exit_2() -> None:
    result = agent("prompts", "show", "chat-zero-shot")
    assert result.exit_code == 2
    assert "unknown agent type" in result.stderr


def test_required_variables_per_type() -> None:
    def required_variables(agent_type: str) -> set[str]:
        return prompts.required_variables(agent_class(agent_type))

    assert required_variables(REACT) == {"tools", "tool_names", "input",
                                                 "agent_scratchpad"}
    assert required_variables(CHAT) == {"tools", "tool_names"}
    assert required_variables("self-ask-with-search") == {"input", "agent_scratchpad"}
    assert required_variables("tool-calling") == set()
    assert prompts.variables('{"action": "x"} {tools}') == {"tools"}
