"""Metrics, trace, prices, budgets, cache and fallback on the fake model (no HTTP)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.cache import CachedChatModel
from agentcli.callbacks.metrics import MetricsHandler, percentile
from agentcli.callbacks.trace import TraceHandler
from agentcli.create import initialize_agent
from agentcli.errors import ConfigError, ModelOutputError, ProviderError
from agentcli.models.fake import FakeChatModel
from agentcli.models.fallback import FallbackChatModel
from agentcli.pricing import cost_of, load_prices, price_of
from agentcli.redact import redact, secret_values
from agentcli.schema import ChatResult, Usage
from agentcli.tools import load_tools

ACTION = ('Thought: compute\nAction:\n```\n{"action": "Calculator", "action_input": "2*3"}\n```\n')
FINAL = "Final Answer: 6"


def executor(llm: Any, **options: Any) -> Any:
    tools = load_tools(["llm-math"], llm=llm)
    return initialize_agent(tools, llm, return_intermediate_steps=True, **options)


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0], 95) == 1.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile(list(range(101)), 95) == 95


def test_prices_match_exact_prefix_and_wildcard_and_unknown_is_none() -> None:
    assert price_of("openai/gpt-4o-mini") == price_of("openai/gpt-4o-mini-2024-07-18")
    assert price_of("openai/gpt-4o-mini") != price_of("openai/gpt-4o")
    assert cost_of("ollama/qwen2.5", Usage(1000, 1000)) == 0.0
    assert cost_of("openai/unknown-model", Usage(10, 10)) is None
    assert cost_of("fake", Usage(10, 10)) is None
    cost = cost_of("openai/gpt-4o-mini", Usage(1_000_000, 1_000_000))
    assert cost == pytest.approx(0.75)


def test_user_price_file_layers_and_bad_file_names_itself(tmp_path: Path) -> None:
    good = tmp_path / "p.yaml"
    good.write_text("fake: {m: {input: 1, output: 2}}\n")
    table = load_prices(str(good))
    assert price_of("fake/m", table) is not None and "openai" in table
    bad = tmp_path / "bad.yaml"
    bad.write_text("fake: {m: {input: cheap}}\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml"):
        load_prices(str(bad))


def test_metrics_counts_calls_tokens_tools_and_unknown_cost() -> None:
    llm = FakeChatModel([ACTION, FINAL], name="fake")
    metrics = MetricsHandler()
    result = executor(llm).invoke("2*3?", callbacks=[metrics])
    assert result.output == "6"
    s = metrics.summary()
    assert s["model_calls"] == 2 and s["tool_calls"] == 1
    assert s["prompt_tokens"] == result.usage.prompt_tokens > 0
    assert s["latency_p50"] is not None and s["latency_p95"] >= s["latency_p50"]
    assert s["cost_usd"] is None and s["unpriced_models"] == ["fake"]
    rows = dict(metrics.rows())
    assert rows["cost"].startswith("?") and rows["model calls"] == "2"


def test_metrics_prices_known_model() -> None:
    llm = FakeChatModel([FINAL], name="openai/gpt-4o-mini")
    metrics = MetricsHandler()
    executor(llm).invoke("q", callbacks=[metrics])
    assert metrics.summary()["cost_usd"] > 0


def test_trace_writes_every_event_with_ids_and_redacts(tmp_path: Path) -> None:
    secret = "super-secret-value-42"
    llm = FakeChatModel([ACTION, f"Final Answer: key is {secret} sk-abcdefghijkl"], name="fake")
    path = tmp_path / "trace.jsonl"
    trace = TraceHandler(path, env={"MY_API_KEY": secret, "HOME": "/home/x"})
    executor(llm).invoke("q Bearer abcdefghij", callbacks=[trace])
    trace.close()
    text = path.read_text()
    assert secret not in text and "sk-abcdefghijkl" not in text and "abcdefghij" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    events = [r["event"] for r in lines]
    for name in ("chain_start", "llm_start", "llm_end", "agent_action", "tool_start",
                 "tool_end", "agent_finish", "chain_end"):
        assert name in events
    assert all(r["ts"] > 0 and r["run_id"] for r in lines)
    tool_start = next(r for r in lines if r["event"] == "tool_start")
    assert tool_start["tool"] == "Calculator" and tool_start["tool_input"] == "2*3"


def test_redact_patterns() -> None:
    found = secret_values({"A_TOKEN": "abcdef", "B_SECRET": "x", "PATH": "/usr/bin"})
    assert "abcdef" in found and "x" not in found and "/usr/bin" not in found
    assert redact("auth: Bearer abc.def-123 ok", {}) == "auth: Bearer *** ok"
    assert redact("key sk-proj-123456789", {}) == "key ***"


def test_token_budget_stops_like_iteration_limit() -> None:
    llm = FakeChatModel([ACTION] * 5, name="fake")
    result = executor(llm, max_tokens=1).invoke("q")
    assert result.stop_reason == "budget"
    assert result.model_calls == 1
    assert "iteration limit" in result.output


def test_cost_budget_with_generate_asks_for_a_final_answer() -> None:
    llm = FakeChatModel([ACTION, "Final Answer: partial"], name="openai/gpt-4o")
    result = executor(llm, max_cost=1e-9, early_stopping_method="generate").invoke("q")
    assert result.stop_reason == "budget"
    assert result.output == "partial"


def test_cost_budget_needs_a_price() -> None:
    from agentcli.config import Settings
    from agentcli.runtime import check_budget

    with pytest.raises(ConfigError, match="needs a price"):
        check_budget(Settings(max_cost=0.1), "fake")
    check_budget(Settings(max_cost=0.1), "openai/gpt-4o")


def test_cache_hits_skip_the_model_and_carry_zero_usage(tmp_path: Path) -> None:
    llm = FakeChatModel([ACTION, FINAL], name="fake")
    cached = CachedChatModel(llm, tmp_path / "c.sqlite")
    first = executor(cached).invoke("q")
    metrics = MetricsHandler()
    again = CachedChatModel(FakeChatModel([], name="fake"), tmp_path / "c.sqlite")
    second = executor(again).invoke("q", callbacks=[metrics])
    assert first.output == second.output == "6"
    assert metrics.summary()["cache_hits"] == 2 and second.usage.total_tokens == 0
    inner = FakeChatModel([FINAL], name="fake")
    other = CachedChatModel(inner, tmp_path / "c.sqlite")
    assert executor(other).invoke("another question").output == "6"  # a miss
    assert len(inner.requests) == 1
    cached.close()
    again.close()
    other.close()


def test_fallback_switches_on_server_errors_and_reports_it() -> None:
    broken = FakeChatModel([ProviderError("boom 503", provider="x", status=503)], name="a/x")
    spare = FakeChatModel([FINAL], name="b/y")
    buf = io.StringIO()
    trace = TraceHandler(buf, env={})
    metrics = MetricsHandler()
    result = executor(FallbackChatModel([broken, spare])).invoke("q", callbacks=[trace, metrics])
    assert result.output == "6"
    fallback = [json.loads(x) for x in buf.getvalue().splitlines() if '"fallback"' in x]
    assert fallback and fallback[0]["to"] == "b/y" and fallback[0]["status"] == 503
    assert metrics.summary()["fallbacks"] == 1


def test_fallback_does_not_hide_auth_errors_and_raises_the_last() -> None:
    auth = FakeChatModel([ProviderError("401", provider="x", status=401)], name="a/x")
    with pytest.raises(ProviderError, match="401"):
        FallbackChatModel([auth, FakeChatModel([FINAL])]).generate([])
    bad = FakeChatModel([ModelOutputError("no choices", provider="x", status=200)])
    last = FakeChatModel([ProviderError("down", provider="y")])
    with pytest.raises(ProviderError, match="down"):
        FallbackChatModel([bad, last]).generate([])


def test_cache_async_roundtrip(tmp_path: Path) -> None:
    cached = CachedChatModel(FakeChatModel([ChatResult("hi", usage=Usage(3, 1))]), tmp_path / "a")
    assert asyncio.run(cached.agenerate([])).usage == Usage(3, 1)
    again = asyncio.run(cached.agenerate([]))
    assert again.text == "hi" and again.usage == Usage()  # a hit: it cost nothing
    cached.close()


def test_fallback_reports_the_primarys_endpoint_and_options() -> None:
    """What a trace reads from ModelStart: where the primary sends and what it adds."""
    from agentcli.events import model_start
    from agentcli.models.presets import create_model
    from agentcli.schema import ChatRequest

    primary = create_model("vllm/m", env={"VLLM_BASE_URL": "http://127.0.0.1:9/v1"},
                           temperature=0.5)
    start = model_start(ChatRequest.of([], None, None),
                        FallbackChatModel([primary, FakeChatModel([FINAL])]))
    assert start.server == "http://127.0.0.1:9/v1"
    assert start.options["temperature"] == 0.5 and start.options["max_tokens"] > 0  # local
