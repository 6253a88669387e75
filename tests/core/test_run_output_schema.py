"""The output schema is an input of the run (issue 38) and one check covers every way a run
can end with an answer (issue 39): the library API (invoke, ainvoke, stream, batch,
create_agent) with a per-run ``response_format``; the answer-now reply, a ``return_direct``
tool's output."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentcli.agents.base import final_instruction
from agentcli.create import create_agent, initialize_agent
from agentcli.models.fake import FakeChatModel
from agentcli.schema import FORCE_STOP_MESSAGE, ChatResult, Message, ToolCall
from agentcli.tools import load_tools, tool

SCHEMA = {"type": "object", "properties": {"value": {"type": "number"}},
          "required": ["value"], "additionalProperties": False}
CALC = '{"action": "Calculator", "action_input": "70 + 5"}'
QUESTION = "What is seventy plus five?"


def _limit_then(reply: str) -> FakeChatModel:
    """A model that calls the Calculator, then answers ``reply`` when asked to answer now."""
    def respond(messages: list[Message]) -> str:
        return reply if final_instruction() in str(messages[-1].content) else CALC

    return FakeChatModel(respond)


def _executor(llm: FakeChatModel) -> Any:
    return initialize_agent(load_tools(["llm-math"], llm=llm), llm,
                            "chat-zero-shot-react-description", max_iterations=1,
                            early_stopping_method="generate")


def test_library_invoke_ainvoke_stream_batch_check_the_answer_now_reply() -> None:
    bad = _executor(_limit_then("75"))
    results = [bad.invoke(QUESTION, response_format=SCHEMA),
               asyncio.run(bad.ainvoke(QUESTION, response_format=SCHEMA)),
               [e for e in bad.stream(QUESTION, response_format=SCHEMA)][-1].result,
               *bad.batch([QUESTION], response_format=SCHEMA)]
    for result in results:
        assert not isinstance(result, BaseException)
        assert result.output == FORCE_STOP_MESSAGE  # not "75"
        assert "structured_response" not in result.state
    good = _executor(_limit_then('{"value": 75}'))
    result = good.invoke(QUESTION, response_format=SCHEMA)
    assert result.state["structured_response"] == {"value": 75}
    # the same executor, no schema for this run: the plain answer stands
    assert _executor(_limit_then("75")).invoke(QUESTION).output == "75"


def test_create_agent_checks_the_answer_now_reply_per_run() -> None:
    calls = ChatResult("", tool_calls=(ToolCall("c1", "double", '{"x": 2}'),))

    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    def respond(messages: list[Message]) -> ChatResult | str:
        return "4" if messages[-1].role == "user" and len(messages) > 2 else calls

    agent = create_agent(FakeChatModel(respond), [double], max_iterations=1,
                         early_stopping_method="generate")
    state = agent.invoke({"input": "double 2"}, response_format=SCHEMA)
    assert "structured_response" not in state
    state = agent.invoke({"input": "double 2"})  # the same agent without a schema
    assert state["messages"][-1].content == "4"


def test_a_return_direct_answer_is_checked_too() -> None:
    @tool(return_direct=True)
    def lookup(city: str) -> str:
        """The population of a city."""
        return "about two million"

    llm = FakeChatModel(['{"action": "lookup", "action_input": "Paris"}'] * 2)
    executor = initialize_agent([lookup], llm, "chat-zero-shot-react-description")
    result = executor.invoke("How many people live in Paris?", response_format=SCHEMA)
    assert result.stop_reason == "no_answer" and "structured_response" not in result.state
    assert result.output != "about two million"
    # the same executor without a schema: the tool's output is the answer
    assert executor.invoke("How many people live in Paris?").output == "about two million"


def test_an_answer_now_reply_through_the_answer_tool_is_checked() -> None:
    """A tool-calling model may answer the answer-now request through the answer tool it saw
    offered: that answer is read, then checked like any other."""
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    def model(answer: dict[str, Any]) -> FakeChatModel:
        call = ChatResult("", tool_calls=(ToolCall("c1", "double", '{"x": 2}'),))
        final = ChatResult("", tool_calls=(ToolCall("c2", "final_response",
                                                    json.dumps(answer)),))
        return FakeChatModel(lambda messages: final if len(messages) > 3 else call)

    for answer, expected in (({"value": 4}, {"value": 4}), ({"value": "four"}, None)):
        agent = create_agent(model(answer), [double], max_iterations=1,
                             early_stopping_method="generate")
        state = agent.invoke({"input": "double 2"}, response_format=SCHEMA)
        assert state.get("structured_response") == expected


def test_the_compat_executor_passes_the_runs_schema_through_call() -> None:
    from agentcli.agents import build_agent
    from agentcli.compat.executor import AgentExecutor as CompatExecutor

    seen: list[str] = []

    class Watched(CompatExecutor):
        def _call(self, inputs: dict[str, Any], run_manager: Any = None) -> dict[str, Any]:
            seen.append(str(inputs["input"]))
            return super()._call(inputs, run_manager)

    llm = _limit_then("75")
    tools = load_tools(["llm-math"], llm=llm)
    executor = Watched(build_agent("chat-zero-shot-react-description", tools, llm), tools,
                       llm=llm, max_iterations=1, early_stopping_method="generate")
    result = executor.invoke(QUESTION, response_format=SCHEMA)
    assert seen == [QUESTION] and result.output == FORCE_STOP_MESSAGE
