"""`agent run --stats/--trace/--cache/--max-tokens` and retries/fallbacks over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcli.cli.app import app

ACTION = ('Thought: compute\nAction:\n```\n{"action": "Calculator", "action_input": "2*3"}\n```\n')
FINAL = "Final Answer: 6"
KEY = "sk-test-secret-123"
runner = CliRunner()


def agent(*args: str, env: dict[str, str]) -> Any:
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def env_for(server: Any) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY}


def fast_retries(tmp_path: Path, extra: str = "") -> str:
    path = tmp_path / "fast.yaml"
    path.write_text("retry: {attempts: 3, backoff_base: 0.001, backoff_max: 0.01}\n" + extra)
    return str(path)


def test_stats_table_and_trace_file_with_retry_visible(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_fault("status", status=429, retry_after=0)
    mock_server.add_reply(ACTION, usage={"prompt_tokens": 100, "completion_tokens": 20})
    mock_server.add_fault("reset")
    mock_server.add_reply(FINAL, usage={"prompt_tokens": 150, "completion_tokens": 5})
    trace = tmp_path / "t.jsonl"
    result = agent("run", "2*3?", "-m", "openai/gpt-4o-mini", "-c", fast_retries(tmp_path),
                   "--stats", "--trace", str(trace), "-q", env=env_for(mock_server))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "6\n"
    err = result.stderr
    for label in ("model calls", "tokens in", "250", "latency p50", "latency p95", "tool time",
                  "retries / fallbacks", "2 / 0", "cost", "$0.0000"):
        assert label in err, label
    text = trace.read_text()
    assert KEY not in text
    records = [json.loads(line) for line in text.splitlines()]
    retries = [r for r in records if r.get("kind") == "retry"]
    assert len(retries) == 2 and retries[0]["status"] == 429 and retries[0]["attempt"] == 1
    run_ids = {r["run_id"] for r in records if r["event"] == "chain_start"}
    assert len(run_ids) == 1 and all(r["run_id"] for r in records)


def test_fallback_model_from_config(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_fault("status", status=503, times=4)
    mock_server.add_reply(FINAL)
    config = fast_retries(tmp_path, "fallback_models: [openai/spare]\n")
    trace = tmp_path / "t.jsonl"
    result = agent("run", "q", "-m", "openai/main", "-c", config, "-q", "--trace", str(trace),
                   env=env_for(mock_server))
    assert result.exit_code == 0, result.stderr
    assert [r.body["model"] for r in mock_server.requests] == ["main"] * 4 + ["spare"]
    kinds = [json.loads(x).get("kind") for x in trace.read_text().splitlines()]
    assert kinds.count("retry") == 3 and kinds.count("fallback") == 1


def test_token_budget_exit_3(mock_server: Any) -> None:
    mock_server.add_reply(ACTION, usage={"prompt_tokens": 500, "completion_tokens": 20})
    result = agent("run", "q", "-m", "openai/any", "--max-tokens", "100",
                   env=env_for(mock_server))
    assert result.exit_code == 3
    assert "Stopped: the run reached its token or cost budget" in " ".join(result.stderr.split())
    assert len(mock_server.requests) == 1


def test_cost_budget_unknown_price_is_a_usage_error(mock_server: Any) -> None:
    result = agent("run", "q", "-m", "openai/no-such-model", "--max-cost", "0.01",
                   env=env_for(mock_server))
    assert result.exit_code == 2 and "needs a price" in result.stderr
    assert mock_server.requests == []


def test_cache_flag_answers_the_second_run_without_the_server(mock_server: Any,
                                                               tmp_path: Path) -> None:
    mock_server.add_reply(ACTION)
    mock_server.add_reply(FINAL)
    env = env_for(mock_server) | {"AGENT_CACHE_PATH": str(tmp_path / "cache.sqlite")}
    first = agent("run", "2*3?", "-m", "openai/any", "--cache", "-q", env=env)
    second = agent("run", "2*3?", "-m", "openai/any", "--cache", "-q", "--stats", env=env)
    assert first.stdout == second.stdout == "6\n"
    assert len(mock_server.requests) == 2
    assert "cache hits" in second.stderr


def test_a_parse_error_is_traced_as_langchains_exception_action(mock_server: Any,
                                                                 tmp_path: Path) -> None:
    mock_server.add_reply("I think the answer needs some thought.")  # neither action nor answer
    mock_server.add_reply(FINAL)
    trace = tmp_path / "t.jsonl"
    result = agent("run", "2*3?", "-m", "openai/any", "-q", "--agent",
                   "chat-zero-shot-react-description", "--trace", str(trace),
                   env=env_for(mock_server))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "6\n" and len(mock_server.requests) == 2
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    (action,) = [r for r in records if r["event"] == "agent_action"]
    told = mock_server.requests[1].body["messages"][-1]["content"]
    assert action["action"]["tool"] == "_Exception" and action["action"]["tool_input"] in told
    assert action["action"]["log"] == "I think the answer needs some thought."
    assert not [r for r in records if r["event"] == "text"]  # no longer an on_text line
