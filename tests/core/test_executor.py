"""The executor loop on a scripted agent: every option of SPEC §6 that is synchronous."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from agentcli.callbacks import BaseCallbackHandler
from agentcli.errors import OutputParserError
from agentcli.executor import (
    FORCE_STOP_MESSAGE,
    AgentExecutor,
    Approval,
    allow_all,
    truncate_middle,
)
from agentcli.schema import AgentAction, AgentFinish
from agentcli.tools.base import Tool
from tests.support.scripted import ScriptedAgent, silent_model


def echo() -> Tool:
    return Tool("echo", "Echo the input.", func=lambda s: f"echo:{s}")


def act(tool: str = "echo", tool_input: Any = "x") -> AgentAction:
    return AgentAction(tool, tool_input, f"Thought: use {tool}\nAction: {tool}")


def finish(text: str = "done") -> AgentFinish:
    return AgentFinish({"output": text}, f"Final Answer: {text}")


def run(decisions: list[Any], tools: list[Tool] | None = None, **options: Any) -> Any:
    tools = tools if tools is not None else [echo()]
    agent = ScriptedAgent(decisions, tools)
    options.setdefault("return_intermediate_steps", True)
    executor = AgentExecutor(agent, tools, llm=silent_model(), **options)
    return executor.invoke("question"), agent


def test_action_then_finish() -> None:
    result, agent = run([act(tool_input="hi"), finish("42")])
    assert result.output == "42"
    assert result.stop_reason == "finished"
    assert [s.observation for s in result.steps] == ["echo:hi"]
    assert agent.seen[1][0].observation == "echo:hi"


def test_max_iterations_force() -> None:
    result, agent = run([], max_iterations=3)
    assert result.output == FORCE_STOP_MESSAGE
    assert result.stop_reason == "max_iterations"
    assert len(result.steps) == 3
    assert agent.final_calls == 0


def test_max_iterations_generate_asks_once_more() -> None:
    result, agent = run([], max_iterations=2, early_stopping_method="generate")
    assert result.output == "generated after 2 steps"
    assert result.stop_reason == "max_iterations"
    assert agent.final_calls == 1


def test_max_execution_time() -> None:
    slow = Tool("echo", "slow", func=lambda s: time.sleep(0.06) or "slow")
    result, _ = run([], tools=[slow], max_iterations=None, max_execution_time=0.15)
    assert result.stop_reason == "max_execution_time"
    assert 1 <= len(result.steps) <= 4


def test_bad_early_stopping_method() -> None:
    with pytest.raises(ValueError, match="'force', 'generate' or 'auto'"):
        AgentExecutor(ScriptedAgent([], []), [], early_stopping_method="maybe")  # type: ignore[arg-type]


def test_parsing_error_false_raises() -> None:
    with pytest.raises(OutputParserError):
        run([OutputParserError("bad", llm_output="garbage")], handle_parsing_errors=False)


def test_parsing_error_true_sends_error_back() -> None:
    err = OutputParserError("bad", llm_output="garbage", observation="Use the format!")
    result, agent = run([err, finish()], handle_parsing_errors=True)
    assert result.output == "done"
    assert result.steps[0].action.tool == "_Exception"
    assert result.steps[0].observation == "Use the format!"
    assert result.steps[0].action.log == "garbage"
    assert agent.seen[1][0].observation == "Use the format!"


def test_parsing_error_string() -> None:
    err = OutputParserError("bad", llm_output="garbage")
    result, _ = run([err, finish()], handle_parsing_errors="Check your output")
    assert result.steps[0].observation == "Check your output"


def test_parsing_error_callable() -> None:
    err = OutputParserError("bad thing", llm_output="garbage")
    result, _ = run([err, finish()], handle_parsing_errors=lambda e: f"mapped: {e}")
    assert result.steps[0].observation == "mapped: bad thing"


def test_parsing_errors_count_as_iterations() -> None:
    errs = [OutputParserError("bad", llm_output=f"x{i}") for i in range(5)]
    result, _ = run(errs, handle_parsing_errors=True, max_iterations=3)
    assert result.stop_reason == "max_iterations"
    assert len(result.steps) == 3


def test_a_return_direct_tools_long_error_stays_an_error() -> None:
    """The observation cap shortens the error's text; the outcome is still an error, so it is
    shown to the model, never returned as the run's answer."""

    def boom(s: str) -> str:
        raise RuntimeError("disk on fire " * 2_000)

    direct = Tool("lookup", "direct", func=boom, return_direct=True)
    result, _ = run([act("lookup"), finish("recovered")], tools=[direct],
                    max_observation_chars=200)
    assert result.stop_reason == "finished" and result.output == "recovered"
    observation = result.steps[0].observation
    assert observation.startswith("Error: disk on fire") and "characters cut" in observation


def test_return_direct() -> None:
    direct = Tool("lookup", "direct", func=lambda s: "the value", return_direct=True)
    result, agent = run([act("lookup"), finish("never")], tools=[direct])
    assert result.output == "the value"
    assert result.stop_reason == "return_direct"
    assert len(agent.seen) == 1


def test_unknown_tool_lists_valid_names() -> None:
    result, _ = run([act("ecoh"), finish()])
    obs = result.steps[0].observation
    assert "ecoh is not a valid tool" in obs
    assert "[echo]" in obs
    assert "Did you mean echo?" in obs


def test_tool_error_becomes_observation() -> None:
    def boom(s: str) -> str:
        raise RuntimeError("disk on fire")

    result, _ = run([act("boom"), finish()], tools=[Tool("boom", "fails", func=boom)])
    assert result.steps[0].observation == "Error: disk on fire"
    assert result.output == "done"


def test_tool_configured_to_raise() -> None:
    def boom(s: str) -> str:
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        run([act("boom")], tools=[Tool("boom", "fails", func=boom, raise_errors=True)])


def test_observation_cap_keeps_head_and_tail() -> None:
    big = Tool("big", "big", func=lambda s: "H" * 5000 + "T" * 5000)
    result, _ = run([act("big"), finish()], tools=[big], max_observation_chars=1000)
    obs = result.steps[0].observation
    assert obs.startswith("H" * 100) and obs.endswith("T" * 100)
    assert "[... 9,000 characters cut ...]" in obs
    assert len(obs) < 1100


def test_truncate_middle_leaves_short_text() -> None:
    assert truncate_middle("short", 100) == "short"
    assert truncate_middle("x" * 50, None) == "x" * 50


def test_trim_intermediate_steps_int() -> None:
    result, agent = run([act(tool_input="1"), act(tool_input="2"), act(tool_input="3"), finish()],
                        trim_intermediate_steps=2)
    assert [len(s) for s in agent.seen] == [0, 1, 2, 2]
    assert len(result.steps) == 3  # the result keeps every step


def test_trim_intermediate_steps_callable() -> None:
    _, agent = run([act(), act(), finish()], trim_intermediate_steps=lambda s: s[:1])
    assert [len(s) for s in agent.seen] == [0, 1, 1]


def test_intermediate_steps_hidden_unless_asked() -> None:
    result, _ = run([act(), finish()], return_intermediate_steps=False)
    assert result.steps == ()


def test_multi_action_runs_all_in_order() -> None:
    all_started = threading.Barrier(3, timeout=20)  # passes only if all three run at once
    order: list[str] = []

    def slow(s: str) -> str:
        order.append(f"start {s}")
        all_started.wait()
        return f"slow:{s}"

    tools = [Tool("slow", "slow", func=slow)]
    result, _ = run([[act("slow", "a"), act("slow", "b"), act("slow", "c")], finish()],
                    tools=tools)
    assert [s.observation for s in result.steps] == ["slow:a", "slow:b", "slow:c"]
    assert sorted(order) == ["start a", "start b", "start c"]


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_agent_action(self, action: AgentAction, **kw: Any) -> None:
        self.events.append(f"action:{action.tool}")

    def on_tool_start(self, tool: str, tool_input: Any, **kw: Any) -> None:
        self.events.append(f"start:{tool}")

    def on_tool_end(self, observation: str, **kw: Any) -> None:
        self.events.append(f"end:{observation}")

    def on_agent_finish(self, finish: AgentFinish, **kw: Any) -> None:
        self.events.append(f"finish:{finish.output}")

    def on_text(self, text: str, **kw: Any) -> None:
        self.events.append(f"text:{kw.get('kind')}")


class Broken(BaseCallbackHandler):
    def on_agent_action(self, action: AgentAction, **kw: Any) -> None:
        raise RuntimeError("handler bug")


def test_callbacks_in_order_and_failing_handler_isolated() -> None:
    rec = Recorder()
    agent = ScriptedAgent([act(tool_input="1"), finish("ok")], [echo()])
    result = AgentExecutor(agent, llm=silent_model(), callbacks=[Broken(), rec]).invoke("q")
    assert result.output == "ok"
    assert rec.events == ["action:echo", "start:echo", "end:echo:1", "finish:ok"]


def test_dangerous_tool_denied_by_default_and_reported() -> None:
    ran: list[str] = []
    rm = Tool("rm", "delete", func=lambda s: ran.append(s) or "deleted", dangerous=True)
    rec = Recorder()
    agent = ScriptedAgent([act("rm", "/"), finish()], [rm])
    result = AgentExecutor(agent, llm=silent_model(), return_intermediate_steps=True,
                           callbacks=[rec]).invoke("q")
    assert ran == []
    assert result.steps[0].observation.startswith("Denied:")
    assert "text:approval" in rec.events


def test_approver_can_edit_input() -> None:
    ran: list[str] = []
    rm = Tool("rm", "delete", func=lambda s: ran.append(s) or "ok", dangerous=True)
    agent = ScriptedAgent([act("rm", "/"), finish()], [rm])
    edit = lambda tool, value: Approval(True, "edited", tool_input="/tmp/x")  # noqa: E731
    AgentExecutor(agent, llm=silent_model(), approver=edit).invoke("q")
    assert ran == ["/tmp/x"]
    agent = ScriptedAgent([act("rm", "/y"), finish()], [rm])
    AgentExecutor(agent, llm=silent_model(), approver=allow_all).invoke("q")
    assert ran == ["/tmp/x", "/y"]


def test_keyboard_interrupt_keeps_steps() -> None:
    def interrupt(s: str) -> str:
        raise KeyboardInterrupt

    tools = [echo(), Tool("stop", "ctrl-c", func=interrupt)]
    result, _ = run([act(), act("stop"), finish()], tools=tools)
    assert result.stop_reason == "interrupted"
    assert [s.observation for s in result.steps] == ["echo:x"]


def test_stream_yields_events_in_order() -> None:
    agent = ScriptedAgent([act(tool_input="1"), finish("ok")], [echo()])
    kinds = [e.kind for e in AgentExecutor(agent, llm=silent_model()).stream("q")]
    assert kinds == ["start", "model_start", "model_end", "action", "tool_start", "observation",
                     "model_start", "model_end", "finish", "end"]


def test_ainvoke_matches_invoke() -> None:
    agent = ScriptedAgent([act(tool_input="1"), finish("ok")], [echo()])
    executor = AgentExecutor(agent, llm=silent_model(), return_intermediate_steps=True)
    result = asyncio.run(executor.ainvoke("q"))
    assert result.output == "ok"
    assert result.steps[0].observation == "echo:1"


def test_batch_keeps_order_with_bounded_concurrency() -> None:
    class PerInput(ScriptedAgent):
        def decide(self, result: Any) -> Any:
            return finish(f"answer to {result.text}")  # the model echoes the question

    from agentcli.models.fake import FakeChatModel

    echo_model = FakeChatModel(lambda messages: messages[-1].content)
    executor = AgentExecutor(PerInput([], [echo()]), llm=echo_model)
    results = executor.batch([f"q{i}" for i in range(10)], concurrency=3)
    assert [r.output for r in results] == [f"answer to q{i}" for i in range(10)]  # type: ignore[union-attr]


def test_a_plain_tool_may_run_its_own_event_loop() -> None:
    """User tools are plain functions; one that calls asyncio.run (or prompts with
    prompt_toolkit) works on the async core as it did on a sync one, alone or in a batch."""

    async def fetch(s: str) -> str:
        await asyncio.sleep(0)
        return f"fetched {s}"

    tool = Tool("fetch", "Fetch.", func=lambda s: asyncio.run(fetch(s)))
    result, _ = run([act("fetch", "a"), finish()], tools=[tool])
    assert result.steps[0].observation == "fetched a"
    agent = ScriptedAgent([act("fetch", "b"), finish()], [tool])
    executor = AgentExecutor(agent, [tool], llm=silent_model(), return_intermediate_steps=True)
    [batched] = executor.batch(["q"])
    assert not isinstance(batched, BaseException)
    assert batched.steps[0].observation == "fetched b"


def test_a_run_is_freed_without_the_garbage_collector() -> None:
    """The run's info holds its emitter; that must not make a run <-> info cycle, which
    only the collector's passes would free (a batch makes one run per item)."""
    import gc
    import weakref

    from agentcli.create import initialize_agent
    from agentcli.models.fake import FakeChatModel

    executor = initialize_agent([], FakeChatModel(["Final Answer: ok"]))
    gc.disable()
    try:
        run = executor.start("q")
        assert run.info.emit is run.emit
        gone = weakref.ref(run)
        del run
        assert gone() is None
    finally:
        gc.enable()
