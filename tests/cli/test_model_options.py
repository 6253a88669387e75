"""`-o/--option`, `model_options:`, `--base-url` and aliases, through the real `agent` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app

FINAL = "Final Answer: 75"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def agent(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def openai_env(server: Any) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}


def test_options_are_sent_in_every_request_and_shown(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Action:\n```json\n{\"action\": \"Calculator\", "
                          "\"action_input\": \"300 * 0.25\"}\n```")
    mock_server.add_reply(FINAL)
    config = tmp_path / "agent.yaml"
    config.write_text("model_options:\n  top_p: 0.5\n  seed: 1\n  extra:\n    user: ada\n")
    db = tmp_path / "agent.db"
    result = agent("run", "What is 25% of 300?", "-m", "openai/m", "--config", str(config),
                   "-o", "temperature", "0.7", "-o", "seed", "42",
                   "-o", "extra.enable_thinking", "false", "--json",
                   env=openai_env(mock_server) | {"AGENT_DB": str(db)})
    assert result.exit_code == 0, result.stderr
    assert len(mock_server.requests) == 2
    for request in mock_server.requests:
        body = request.body
        assert body["temperature"] == 0.7 and body["top_p"] == 0.5 and body["seed"] == 42
        assert body["enable_thinking"] is False and body["user"] == "ada"
    shown = json.loads(result.stdout)["model_options"]
    assert shown == {"temperature": 0.7, "top_p": 0.5, "seed": 42, "user": "ada",
                     "enable_thinking": False}
    from agentcli.store import Store

    store = Store(db)
    try:
        assert store.runs()[0]["meta"]["options"] == shown
    finally:
        store.close()


def test_default_request_keeps_only_temperature(mock_server: Any) -> None:
    mock_server.add_reply(FINAL)
    result = agent("run", "hi", "-m", "openai/m", "-q", env=openai_env(mock_server))
    assert result.exit_code == 0, result.stderr
    body = mock_server.requests[0].body
    assert body["temperature"] == 0.0 and "top_p" not in body and "seed" not in body


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "temprature", "1"], "unknown model option 'temprature' (did you mean "
                                    "'temperature'?)"),
        (["-o", "temperature", "hot"], "'temperature' must be a number from 0 to 2, got 'hot'"),
        (["-o", "top_p", "1.5"], "'top_p' must be a number from 0 to 1"),
        (["-o", "extra.temperature", "99"], "'temperature' must be a number from 0 to 2, got 99"),
        (["-o", "max_tokens", "0"], "'max_tokens' must be a positive integer"),
        (["-o", "seed", "1.5"], "'seed' must be an integer"),
        (["-o", "presence_penalty", "-3"], "'presence_penalty' must be a number from -2 to 2"),
        (["-o", "extra.messages", "[]"], "'messages' is set by agentcli"),
        (["-m", "q"], "unknown model alias 'q'"),
    ],
)
def test_bad_options_one_line_exit_2(mock_server: Any, args: list[str], message: str) -> None:
    result = agent("run", "hi", *(args if "-m" in args else ["-m", "openai/m", *args]),
                   env=openai_env(mock_server))
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert message in err, err
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert mock_server.requests == []


def test_bad_option_in_yaml_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("model_options: {temperature: warm}\n")
    result = agent("run", "hi", "-m", "openai/m", "--config", str(config))
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert str(config) in err and "'temperature' must be a number from 0 to 2" in err


def test_base_url_flag_reaches_a_custom_endpoint(mock_server: Any) -> None:
    mock_server.add_reply(FINAL)
    result = agent("run", "hi", "-m", "custom/my-model", "--base-url", mock_server.base_url,
                   "-q")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "75"
    assert mock_server.requests[0].body["model"] == "my-model"


def test_alias_from_the_user_config(mock_server: Any, tmp_path: Path) -> None:
    from agentcli.paths import user_config_file

    path = user_config_file()
    path.parent.mkdir(parents=True)
    path.write_text("aliases:\n  q: openai/qwen-test\n")
    mock_server.add_reply(FINAL)
    project = tmp_path / "project.yaml"
    project.write_text("max_iterations: 3\n")  # the user config still applies under --config
    result = agent("run", "hi", "-m", "q", "--config", str(project), "--json",
                   env=openai_env(mock_server))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["model"] == "openai/qwen-test"
    assert mock_server.requests[0].body["model"] == "qwen-test"


def test_batch_and_chat_take_the_same_model_flags(mock_server: Any, tmp_path: Path) -> None:
    questions = tmp_path / "in.jsonl"
    questions.write_text(json.dumps({"id": 1, "input": "hi"}) + "\n")
    mock_server.add_reply(FINAL)
    result = agent("batch", str(questions), "--out", str(tmp_path / "out.jsonl"),
                   "-m", "custom/b", "--base-url", mock_server.base_url,
                   "--option", "seed", "7", "-s", "Be brief.")
    assert result.exit_code == 0, result.stderr
    body = mock_server.requests[0].body
    assert body["seed"] == 7 and body["model"] == "b"
    assert body["messages"][0]["content"].endswith("\n\nBe brief.")
    mock_server.add_reply(FINAL)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run(  # the REPL reads a real pipe here, as a user's shell gives it
        [sys.executable, "-m", "agentcli", "chat", "-m", "custom/c", "--base-url",
         mock_server.base_url, "-o", "top_p", "0.25", "--system", "Be kind.", "--db",
         str(tmp_path / "c.db")], input="hello\n", capture_output=True, text=True, env=env,
        timeout=60)
    assert proc.returncode == 0, proc.stderr
    body = mock_server.requests[-1].body
    assert body["top_p"] == 0.25 and body["model"] == "c"
    assert body["messages"][0]["content"].endswith("\n\nBe kind.")
    from agentcli.store import Store

    store = Store(tmp_path / "c.db")
    try:
        assert store.runs()[0]["meta"]["options"] == {"temperature": 0.0, "top_p": 0.25}
    finally:
        store.close()


def test_a_custom_fallback_model_uses_the_configured_base_url(
    mock_server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("fallback_models: [custom/spare]\n")
    mock_server.add_fault("status", status=503, times=4)  # the main model keeps failing
    mock_server.add_reply("Final Answer: from the spare")
    result = agent("run", "q", "-m", "custom/main", "--base-url", mock_server.base_url,
                   "-c", str(config), "-q")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "from the spare"
    assert mock_server.requests[-1].body["model"] == "spare"
