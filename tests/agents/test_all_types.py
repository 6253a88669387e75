"""Every agent type end to end against the mock server: CLI, parse errors, limits, async."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.agents import agent_class
from agentcli.cli.app import app
from agentcli.create import initialize_agent
from agentcli.errors import OutputParserError
from agentcli.executor import FORCE_STOP_MESSAGE, PARSE_ERROR_TOOL
from agentcli.tools import load_tools
from tests.agents.conftest import GARBAGE, SCRIPTS, TYPES, queue

runner = CliRunner()


def build(llm: Any, agent: str, **options: Any) -> Any:
    tools = load_tools(["llm-math"], llm=llm)
    return initialize_agent(tools, llm, agent, return_intermediate_steps=True, **options)


@pytest.mark.parametrize("agent", TYPES)
def test_cli_run_every_type(agent: str, mock_server: Any) -> None:
    queue(mock_server, SCRIPTS[agent]["action"], SCRIPTS[agent]["final"])
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = runner.invoke(app, ["run", "What is 2+2?", "-m", "openai/any", "--agent", agent,
                                 "--tools", "llm-math", "--json"], env=env,
                           catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answer"] == "4"
    assert data["limit"] is None
    assert [(s["tool"], s["observation"]) for s in data["steps"]] == [("Calculator", "Answer: 4")]
    assert data["usage"]["model_calls"] == 2 and data["usage"]["total_tokens"] > 0


@pytest.mark.parametrize("agent", TYPES)
def test_cli_trace_is_rendered_from_the_stream(agent: str, mock_server: Any) -> None:
    queue(mock_server, SCRIPTS[agent]["action"], SCRIPTS[agent]["final"])
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = runner.invoke(app, ["run", "What is 2+2?", "-m", "openai/any", "--agent", agent,
                                 "--tools", "llm-math"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    trace = result.stderr
    assert trace.index("Action: Calculator") < trace.index("Observation: Answer: 4")
    assert trace.index("Observation: Answer: 4") < trace.index("Final Answer")
    assert result.stdout.strip() == "4"


@pytest.mark.parametrize("agent", TYPES)
@pytest.mark.parametrize("mode", [True, "Reply in the format you were given.", "callable"])
def test_recovers_from_a_parse_error(agent: str, mode: Any, llm: Any, mock_server: Any) -> None:
    queue(mock_server, GARBAGE[agent], SCRIPTS[agent]["action"], SCRIPTS[agent]["final"])
    handler = (lambda err: f"custom: {type(err).__name__}") if mode == "callable" else mode
    result = build(llm, agent, handle_parsing_errors=handler).invoke("What is 2+2?")
    assert result.output == "4"
    first, second = result.steps
    assert first.action.tool == PARSE_ERROR_TOOL
    expected = {"callable": "custom: OutputParserError"}.get(mode, mode)
    if mode is not True:
        assert first.observation == expected
    assert second.observation == "Answer: 4"
    retry = json.dumps(mock_server.requests[1].body["messages"])
    assert json.dumps(first.observation)[1:-1] in retry  # the model was told


@pytest.mark.parametrize("agent", TYPES)
def test_parse_error_raises_when_not_handled(agent: str, llm: Any, mock_server: Any) -> None:
    queue(mock_server, GARBAGE[agent])
    with pytest.raises(OutputParserError):
        build(llm, agent, handle_parsing_errors=False).invoke("What is 2+2?")


@pytest.mark.parametrize("agent", TYPES)
def test_early_stopping_generate(agent: str, llm: Any, mock_server: Any) -> None:
    queue(mock_server, SCRIPTS[agent]["action"], SCRIPTS[agent]["final"])
    executor = build(llm, agent, max_iterations=1, early_stopping_method="generate")
    result = executor.invoke("What is 2+2?")
    assert result.stop_reason == "max_iterations"
    assert result.to_dict()["limit"] == "max_iterations"
    assert result.output == "4"
    last = mock_server.requests[-1].body
    assert "tools" not in last
    assert "Answer: 4" in json.dumps(last["messages"])


@pytest.mark.parametrize("agent", TYPES)
def test_early_stopping_force(agent: str, llm: Any, mock_server: Any) -> None:
    queue(mock_server, SCRIPTS[agent]["action"])
    result = build(llm, agent, max_iterations=1).invoke("What is 2+2?")
    assert (result.output, result.stop_reason) == (FORCE_STOP_MESSAGE, "max_iterations")
    assert len(mock_server.requests) == 1


STEP_KINDS = ("action", "observation", "finish", "end")


@pytest.mark.parametrize("agent", TYPES)
def test_ainvoke_and_astream(agent: str, llm: Any, mock_server: Any) -> None:
    queue(mock_server, SCRIPTS[agent]["action"], SCRIPTS[agent]["final"])
    executor = build(llm, agent)

    async def go() -> list[Any]:
        return [e async for e in executor.astream("What is 2+2?")]

    events = [e for e in asyncio.run(go()) if e.kind in STEP_KINDS]
    assert [e.kind for e in events] == ["action", "observation", "finish", "end"]
    assert events[-1].result.output == "4"


@pytest.mark.parametrize("agent", TYPES)
def test_stream_events_in_order(agent: str, llm: Any, mock_server: Any) -> None:
    queue(mock_server, SCRIPTS[agent]["action"], SCRIPTS[agent]["action"],
          SCRIPTS[agent]["final"])
    everything = list(build(llm, agent).stream("What is 2+2?"))
    assert [e.kind for e in everything if e.kind.startswith("model_")] == [
        "model_start", "model_end"] * 3
    events = [e for e in everything if e.kind in STEP_KINDS]
    assert [e.kind for e in events] == [
        "action", "observation", "action", "observation", "finish", "end"]
    assert events[1].step.observation == "Answer: 4"
    assert events[4].finish is not None and events[4].finish.output == "4"


@pytest.mark.parametrize("agent", TYPES)
def test_batch_bounded_concurrency(agent: str, llm: Any, mock_server: Any) -> None:
    mock_server.set_responder(lambda body: SCRIPTS[agent]["final"])
    results = build(llm, agent).batch(["a?", "b?", "c?"], concurrency=2)
    assert [getattr(r, "output", r) for r in results] == ["4", "4", "4"]


@pytest.mark.parametrize("agent", TYPES)
def test_every_type_is_listed_with_what_it_accepts(agent: str) -> None:
    cls = agent_class(agent)
    assert cls.agent_type == agent and cls.summary and cls.accepts
    result = runner.invoke(app, ["agents", "list", "--json"])
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows[agent]["accepts"] == cls.accepts
