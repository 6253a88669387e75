"""`agent run` end to end: the seed example over real HTTP, output modes, exit codes."""

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

SEED_ACTION = (
    "Thought: I need to calculate 25% of 300. I can use the Calculator tool for this.\n"
    "Action:\n```\n{\n  \"action\": \"Calculator\",\n  \"action_input\": \"300 * 0.25\"\n}\n```\n"
)
SEED_FINAL = "The calculation shows that 25% of 300 is 75. \n\nFinal Answer: 75"
runner = CliRunner()


def agent(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Any:
    return runner.invoke(app, list(args), env=env, input=stdin, catch_exceptions=False)


def openai_env(server: Any) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-secret-123"}


def test_seed_example_subprocess_two_requests_and_coloured_trace(mock_server: Any) -> None:
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply(SEED_FINAL)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(openai_env(mock_server), FORCE_COLOR="1", TERM="xterm-256color")
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "What is 25% of 300?", "--model", "openai/any"],
        capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert "75" in proc.stdout
    assert len(mock_server.requests) == 2
    trace = proc.stderr
    for part in ("Thought:", "Action:", "Calculator", "Observation:", "Answer: 75.0"):
        assert part in trace
    assert "\x1b[" in trace  # coloured
    assert "Traceback" not in trace
    # the work comes back as alternating turns: the model's action, then what it observed
    *_, said, seen = mock_server.requests[1].body["messages"]
    assert said["role"] == "assistant" and "Calculator" in said["content"]
    assert seen == {"role": "user", "content": "Observation: Answer: 75.0"}
    assert mock_server.requests[0].body["stop"] == ["Observation:"]
    assert "sk-test-secret-123" not in proc.stdout + proc.stderr


def test_quiet_prints_only_the_answer(mock_server: Any) -> None:
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply(SEED_FINAL)
    result = agent("run", "What is 25% of 300?", "-m", "openai/any", "--quiet",
                   env=openai_env(mock_server))
    assert result.exit_code == 0
    assert result.stdout == "75\n"
    assert result.stderr == ""


def test_json_output(mock_server: Any) -> None:
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply(SEED_FINAL)
    result = agent("run", "What is 25% of 300?", "-m", "openai/any", "--json",
                   env=openai_env(mock_server))
    data = json.loads(result.stdout)
    assert data["answer"] == "75"
    assert data["stop_reason"] == "finished"
    assert data["steps"][0]["tool"] == "Calculator"
    assert data["steps"][0]["observation"] == "Answer: 75.0"
    assert data["usage"]["model_calls"] == 2
    assert data["usage"]["total_tokens"] > 0


def test_question_from_stdin(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: four")
    result = agent("run", "-", "-m", "openai/any", "-q", env=openai_env(mock_server),
                   stdin="What is 2+2?\n")
    assert result.stdout == "four\n"
    assert "What is 2+2?" in mock_server.requests[0].body["messages"][-1]["content"]


def test_iteration_limit_exit_code(mock_server: Any) -> None:
    for _ in range(3):
        mock_server.add_reply(SEED_ACTION)
    result = agent("run", "loop forever", "-m", "openai/any", "--max-iterations", "2",
                   "--early-stopping", "force", env=openai_env(mock_server))
    assert result.exit_code == 3
    assert result.stdout == ""  # a limit stop has no answer to print
    assert "Stopped: the agent used all its steps (--max-iterations) without reaching an answer." \
        in " ".join(result.stderr.split())
    assert len(mock_server.requests) == 2


def test_early_stopping_generate(mock_server: Any) -> None:
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply("Final Answer: 75 (from what I have)")
    result = agent("run", "q", "-m", "openai/any", "--max-iterations", "1",
                   "--early-stopping", "generate", "-q", env=openai_env(mock_server))
    assert result.exit_code == 3
    assert result.stdout == "75 (from what I have)\n"
    assert "Do not use any more tools" in mock_server.requests[1].body["messages"][-1]["content"]


def test_provider_error_is_one_line_exit_4(mock_server: Any) -> None:
    mock_server.add_fault("status", status=401)
    result = agent("run", "q", "-m", "openai/any", env=openai_env(mock_server))
    assert result.exit_code == 4
    assert result.stderr.startswith("error: ")
    assert "401" in result.stderr
    assert "Traceback" not in result.stderr
    assert "sk-test-secret-123" not in result.stderr
    assert len(mock_server.requests) == 1


def test_debug_shows_traceback(mock_server: Any) -> None:
    mock_server.add_fault("status", status=401)
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "--debug", "run", "q", "-m", "openai/any"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, **openai_env(mock_server)},
    )
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tools", "llm_math"], "did you mean llm-math"),
        (["--agent", "chat-zero-shot"], "unknown agent type"),
        (["--early-stopping", "later"], "must be one of auto, force, generate"),
        (["--model", "nosuch/model"], "unknown provider"),
        (["--config", "missing.yaml"], "does not exist"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = agent("run", "What is 25% of 300?", *args, env={"OPENAI_API_KEY": "sk-x"})
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_empty_question_exit_2() -> None:
    result = agent("run", "  ")
    assert result.exit_code == 2
    assert "question is empty" in result.stderr


def test_offline_demo_replays_seed() -> None:
    result = agent("run", "What is 25% of 300?")
    assert result.exit_code == 0
    assert result.stdout.strip() == "75"
    assert "Offline demo" in result.stderr
    assert "AGENT_MODEL" in result.stderr


def test_other_question_without_model_says_what_to_set() -> None:
    result = agent("run", "What is the capital of France?")
    assert result.exit_code == 2
    assert "no model configured" in result.stderr and "AGENT_MODEL" in result.stderr
    assert result.stderr.count("\n") == 1


def test_local_ollama_is_used_when_found(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: hello from ollama")
    env = {"OLLAMA_BASE_URL": mock_server.base_url}
    result = agent("run", "hi", env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "hello from ollama"
    assert "local Ollama model" in result.stderr
    assert mock_server.requests[-1].path.endswith("/chat/completions")


def test_record_then_replay(mock_server: Any, tmp_path: Path) -> None:
    cassette = tmp_path / "run.json"
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply(SEED_FINAL)
    first = agent("run", "What is 25% of 300?", "-m", "openai/any", "-q", "--record",
                  str(cassette), env=openai_env(mock_server))
    assert first.stdout == "75\n"
    assert len(json.loads(cassette.read_text())["interactions"]) == 2
    assert "sk-test-secret-123" not in cassette.read_text()
    again = agent("run", "What is 25% of 300?", "-m", f"replay:{cassette}", "-q")
    assert again.stdout == "75\n"
    assert len(mock_server.requests) == 2  # the replay sent nothing
    miss = agent("run", "Another question", "-m", f"replay:{cassette}")
    assert miss.exit_code == 4
    assert "no recorded answer" in miss.stderr


def test_bundled_demo_cassette_matches_current_prompts(tmp_path: Path) -> None:
    from agentcli.demo import demo_cassette, record_demo_cassette

    fresh = tmp_path / "demo.json"
    result = record_demo_cassette(fresh)
    assert result.output == "75"
    bundled = json.loads(demo_cassette().read_text())
    assert json.loads(fresh.read_text()) == bundled, (
        "prompts changed: regenerate with python -c 'from pathlib import Path; "
        "from agentcli.demo import record_demo_cassette, demo_cassette; "
        "record_demo_cassette(demo_cassette())'"
    )


def test_tools_list_table_and_json() -> None:
    table = agent("tools", "list")
    assert table.exit_code == 0
    assert "llm-math" in table.stdout and "needs LLM" in table.stdout
    rows = json.loads(agent("tools", "list", "--json").stdout)
    calc = next(r for r in rows if r["name"] == "llm-math")
    assert calc["needs_llm"] is True and calc["dangerous"] is False


def test_agents_list_and_version() -> None:
    rows = json.loads(agent("agents", "list", "--json").stdout)
    names = {r["name"] for r in rows}
    assert {"zero-shot-react-description", "chat-zero-shot-react-description"} <= names
    assert agent("--version").stdout.startswith("agentcli ")


def test_react_agent_over_http(mock_server: Any) -> None:
    mock_server.add_reply("Thought: compute\nAction: Calculator\nAction Input: 2 * 21\n")
    mock_server.add_reply("Thought: done\nFinal Answer: 42")
    result = agent("run", "What is 2 times 21?", "-m", "openai/any", "-a",
                   "zero-shot-react-description", "-q", env=openai_env(mock_server))
    assert result.stdout == "42\n"
    body = mock_server.requests[1].body
    assert body["stop"] == ["\nObservation:", "\n\tObservation:"]
    assert "Observation: Answer: 42\nThought:" in body["messages"][0]["content"]
