"""``tool-calling``: native calls over HTTP, parallel turns, text-call repair, clear errors."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from agentcli.agents import build_agent
from agentcli.agents.tool_calling import ToolCallingAgent, text_tool_calls
from agentcli.create import initialize_agent
from agentcli.errors import ConfigError, ProviderError
from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatResult, ToolCall
from agentcli.tools import tool
from agentcli.tools.base import Tool


def slow_lookup(log: list[tuple[str, str]], together: int = 1) -> Tool:
    """With ``together=2``, two calls can only both finish if they run at the same time: each
    waits at a barrier for the other (run one after the other, the first would time out)."""
    lock = threading.Lock()
    both_started = threading.Barrier(together, timeout=20)

    @tool
    def lookup(city: str, unit: str = "C") -> str:
        """Look up the temperature of a city."""
        with lock:
            log.append(("start", city))
        both_started.wait()
        with lock:
            log.append(("end", city))
        return f"{city}: 20{unit}"

    return lookup


def test_parallel_calls_run_concurrently_and_return_in_call_order(
    llm: Any, mock_server: Any
) -> None:
    log: list[tuple[str, str]] = []
    mock_server.add_reply("", tool_calls=[
        {"name": "lookup", "arguments": {"city": "Oslo"}, "id": "call_1"},
        {"name": "lookup", "arguments": {"city": "Rome", "unit": "F"}, "id": "call_2"},
    ])
    mock_server.add_reply("Oslo 20C, Rome 20F.")
    executor = initialize_agent([slow_lookup(log, together=2)], llm, "tool-calling",
                                return_intermediate_steps=True)
    result = executor.invoke("Weather in Oslo and Rome?")
    assert [kind for kind, _ in log] == ["start", "start", "end", "end"]  # they overlapped
    assert result.output == "Oslo 20C, Rome 20F."
    assert [s.observation for s in result.steps] == ["Oslo: 20C", "Rome: 20F"]
    first, second = (r.body for r in mock_server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup"]
    assert set(first["tools"][0]["function"]["parameters"]["properties"]) == {"city", "unit"}
    turn = second["messages"][-3:]
    assert turn[0]["role"] == "assistant"
    assert [c["id"] for c in turn[0]["tool_calls"]] == ["call_1", "call_2"]
    assert json.loads(turn[0]["tool_calls"][1]["function"]["arguments"]) == {
        "city": "Rome", "unit": "F"}
    assert [(m["role"], m["tool_call_id"], m["content"]) for m in turn[1:]] == [
        ("tool", "call_1", "Oslo: 20C"), ("tool", "call_2", "Rome: 20F")]
    assert result.usage.total_tokens > 0 and result.model_calls == 2


def test_turns_stay_grouped_across_iterations(llm: Any, mock_server: Any) -> None:
    mock_server.add_reply("", tool_calls=[{"name": "lookup", "arguments": {"city": "A"}}])
    mock_server.add_reply("", tool_calls=[{"name": "lookup", "arguments": {"city": "B"}}])
    mock_server.add_reply("done")
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling")
    assert executor.invoke("go").output == "done"
    roles = [m["role"] for m in mock_server.requests[2].body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]


def test_streamed_tool_calls_are_reassembled(llm: Any, mock_server: Any) -> None:
    mock_server.add_reply("", tool_calls=[
        {"name": "lookup", "arguments": {"city": "Oslo"}, "id": "c1"},
        {"name": "lookup", "arguments": {"city": "Rome"}, "id": "c2"},
    ])
    mock_server.add_reply("ok")
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling",
                                stream_tokens=True, return_intermediate_steps=True)
    result = executor.invoke("go")
    assert [s.action.tool_input for s in result.steps] == [{"city": "Oslo"}, {"city": "Rome"}]
    assert mock_server.requests[0].body["stream"] is True


@pytest.mark.parametrize("text", [
    '{"name": "lookup", "arguments": {"city": "Oslo"}}',
    '```json\n{"name": "lookup", "parameters": {"city": "Oslo"}}\n```',
    '<tool_call>\n{"name": "lookup", "arguments": {"city": "Oslo"}}\n</tool_call>',
    '{"tool_calls": [{"type": "function", "function": {"name": "lookup", '
    '"arguments": "{\\"city\\": \\"Oslo\\"}"}}]}',
    '{"function": {"name": "lookup", "arguments": {"city": "Oslo"}}}',
    'I will call the tool.\n{"tool": "lookup", "tool_input": {"city": "Oslo"}}',
    "[{'name': 'lookup', 'arguments': {'city': 'Oslo'},}]",
])
def test_tool_call_written_as_text_is_run_and_counted(
    text: str, llm: Any, mock_server: Any
) -> None:
    mock_server.add_reply(text)
    mock_server.add_reply("20C in Oslo")
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling",
                                return_intermediate_steps=True)
    result = executor.invoke("Weather in Oslo?")
    assert result.output == "20C in Oslo"
    assert [s.observation for s in result.steps] == ["Oslo: 20C"]
    assert result.stats["tool_call_repairs"] == 1
    assert result.to_dict()["stats"]["tool_call_repairs"] == 1


def test_json_answer_that_names_no_tool_is_an_answer() -> None:
    assert text_tool_calls('{"name": "Ada", "arguments": "none"}', {"lookup"}) == []
    llm = FakeChatModel(['Here is the data: {"name": "Ada", "age": 36}'])
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling")
    result = executor.invoke("who?")
    assert result.output.startswith("Here is the data")
    assert result.stats["tool_call_repairs"] == 0


def test_broken_native_arguments_are_repaired() -> None:
    llm = FakeChatModel([
        ChatResult("", (ToolCall("c1", "lookup", "{'city': 'Oslo',"),)),
        "fine",
    ])
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling",
                                return_intermediate_steps=True)
    result = executor.invoke("go")
    assert result.steps[0].observation == "Oslo: 20C"
    assert result.stats["tool_call_repairs"] == 1


def test_unusable_arguments_become_a_parse_error_the_model_sees() -> None:
    llm = FakeChatModel([ChatResult("", (ToolCall("c1", "lookup", "city is Oslo"),)), "sorry"])
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling",
                                handle_parsing_errors=True)
    assert executor.invoke("go").output == "sorry"
    assert "not valid JSON" in llm.requests[1].messages[-1].content


def test_single_input_tool_gets_its_string() -> None:
    echo = Tool("echo", "Echo the input.", func=lambda s: f"echo:{s}")
    llm = FakeChatModel([ChatResult("", (ToolCall("c1", "echo", '{"input": "hi"}'),)), "ok"])
    executor = initialize_agent([echo], llm, "tool-calling", return_intermediate_steps=True)
    assert executor.invoke("go").steps[0].observation == "echo:hi"
    assert llm.requests[0].tools is not None
    assert llm.requests[0].tools[0]["function"]["parameters"]["required"] == ["input"]


def test_model_without_tool_support_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="chat-zero-shot-react-description"):
        build_agent("tool-calling", [slow_lookup([])], FakeChatModel([], supports_tools=False))


def test_server_refusing_tools_suggests_a_text_agent(llm: Any, mock_server: Any) -> None:
    mock_server.add_fault("status", status=400,
                          message="this model does not support tools")
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling")
    with pytest.raises(ProviderError, match="use a text agent type") as info:
        executor.invoke("go")
    assert info.value.status == 400


def test_chat_history_is_sent_as_messages() -> None:
    from agentcli.schema import assistant, user

    llm = FakeChatModel(["Your name is Ada."])
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling")
    history = [user("My name is Ada."), assistant("Nice to meet you, Ada.")]
    result = executor.invoke({"input": "What is my name?", "chat_history": history})
    assert result.output == "Your name is Ada."
    sent = [(m.role, m.content) for m in llm.requests[0].messages[1:]]
    assert sent == [("user", "My name is Ada."), ("assistant", "Nice to meet you, Ada."),
                    ("user", "What is my name?")]
    assert ToolCallingAgent.uses_memory


def test_parallel_calls_overlap_under_ainvoke(llm: Any, mock_server: Any) -> None:
    import asyncio

    log: list[tuple[str, str]] = []
    mock_server.add_reply("", tool_calls=[
        {"name": "lookup", "arguments": {"city": "Oslo"}, "id": "a"},
        {"name": "lookup", "arguments": {"city": "Rome"}, "id": "b"},
    ])
    mock_server.add_reply("both done")
    executor = initialize_agent([slow_lookup(log, together=2)], llm, "tool-calling")
    result = asyncio.run(executor.ainvoke("go"))
    assert result.output == "both done"
    assert [kind for kind, _ in log] == ["start", "start", "end", "end"]  # they overlapped
    observations = [m["content"] for m in mock_server.requests[1].body["messages"][-2:]]
    assert observations == ["Oslo: 20C", "Rome: 20C"]
    tool_ids = [m.get("tool_call_id") for m in mock_server.requests[1].body["messages"][-2:]]
    assert tool_ids == ["a", "b"]


def test_several_tool_call_blocks_in_text_are_several_calls() -> None:
    text = ('<tool_call>\n{"name": "lookup", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "lookup", "arguments": {"city": "Rome"}}\n</tool_call>')
    llm = FakeChatModel([text, "both"])
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling",
                                return_intermediate_steps=True)
    result = executor.invoke("go")
    assert [s.observation for s in result.steps] == ["Oslo: 20C", "Rome: 20C"]
    assert result.stats["tool_call_repairs"] == 2
    assert [c.name for c in llm.requests[1].messages[2].tool_calls] == ["lookup", "lookup"]


def test_forced_answer_when_the_server_still_sends_calls() -> None:
    """Issue 31: calls in the answer-now reply are no answer, and no canned sentence stands
    in for one: the run ends at its limit without an answer."""
    from agentcli.outcome import exit_code, real_answer

    call = ChatResult("", (ToolCall("c1", "lookup", '{"city": "Oslo"}'),))
    llm = FakeChatModel([call, call])
    executor = initialize_agent([slow_lookup([])], llm, "tool-calling", max_iterations=1,
                                early_stopping_method="generate")
    result = executor.invoke("go")
    assert "tools instead of answering" not in result.output
    assert result.stop_reason == "max_iterations" and real_answer(result) is None
    assert exit_code(result) == 3
    assert llm.requests[-1].tools is None


def test_cli_renders_a_parallel_turn_from_the_stream(mock_server: Any) -> None:
    from typer.testing import CliRunner

    from agentcli.cli.app import app

    mock_server.add_reply("", tool_calls=[
        {"name": "Calculator", "arguments": {"input": "2+2"}, "id": "a"},
        {"name": "Calculator", "arguments": {"input": "3*3"}, "id": "b"},
    ])
    mock_server.add_reply("4 and 9")
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = CliRunner().invoke(app, ["run", "2+2 and 3*3?", "-m", "openai/any", "--agent",
                                      "tool-calling"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    lines = [line.split(":")[0] for line in result.stderr.splitlines()]
    assert lines == ["Action", "Action", "Observation", "Observation", "Final Answer"]
    assert "Answer: 4" in result.stderr and "Answer: 9" in result.stderr
    assert result.stdout.strip() == "4 and 9"


def test_an_unknown_function_is_answered_with_the_function_names_to_use() -> None:
    unlock = Tool("dyn.unlock", "Unlocks.", func=lambda s: "open")
    llm = FakeChatModel([ChatResult("", (ToolCall("c1", "dyn__unlokc", "{}"),)), "done"])
    result = initialize_agent([unlock], llm, "tool-calling",
                              return_intermediate_steps=True).invoke("q")
    observation = result.steps[0].observation
    assert "try one of [dyn__unlock]" in observation and "Did you mean dyn__unlock?" in observation


def test_explain_names_the_fix_for_each_kind_of_400() -> None:
    plain = ToolCallingAgent([])
    media = ToolCallingAgent([], tool_media=True)
    refused_media = ProviderError("image_url is not supported", provider="p", status=400)
    refused_tools = ProviderError("'tools' is not supported", provider="p", status=400)
    down = ProviderError("tools are down", provider="p", status=503)
    hint = media.explain(refused_media)
    assert "tool_media: off" in str(hint) and (hint.status, hint.provider) == (400, "p")
    assert "use a text agent type" in str(plain.explain(refused_tools))
    assert plain.explain(refused_media) is refused_media  # no media sent: not our hint
    assert plain.explain(down) is down
