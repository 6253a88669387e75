"""Typed run state: schemas, injected tool parameters, Command updates, create_agent."""

from __future__ import annotations

import operator
import threading
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, Required

import pytest

from agentcli import (
    AgentState,
    Command,
    InjectedState,
    InjectedToolCallId,
    OmitFromInput,
    OmitFromOutput,
    create_agent,
    tool,
)
from agentcli.errors import ConfigError
from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatResult, Message, ToolCall
from agentcli.state import StateError


class CopyState(AgentState):
    """Seed 004's shape: two input-only fields, two output-only fields."""

    foo: Annotated[str, OmitFromOutput]
    bar: Annotated[str, OmitFromOutput]
    baz: Annotated[str, OmitFromInput]
    qux: Annotated[str, OmitFromInput]


@tool
def copy_inputs(state: Annotated[dict, InjectedState]) -> Command:  # type: ignore[type-arg]
    """Copy foo and bar into baz and qux."""
    call_id = state["messages"][-1].tool_calls[0].id
    return Command(update={
        "messages": [Message("tool", "", tool_call_id=call_id)],
        "baz": state.get("foo", "N/A"),
        "qux": state.get("bar", "N/A"),
    })


def simulator(messages: list[Message]) -> ChatResult:
    """Calls copy_inputs first; once a tool message is back, it is done."""
    if any(m.role == "tool" for m in messages):
        return ChatResult("Done.")
    return ChatResult("", tool_calls=(ToolCall("call_001", "copy_inputs", "{}"),))


def test_seed_example_copies_input_fields_to_output_fields() -> None:
    agent = create_agent(FakeChatModel(simulator), [copy_inputs], state_schema=CopyState)
    out = agent.invoke({"foo": "Hello", "bar": "World"})
    assert out["baz"] == "Hello"
    assert out["qux"] == "World"
    assert "foo" not in out and "bar" not in out and "jump_to" not in out
    assert [m.role for m in out["messages"]] == ["assistant", "tool", "assistant"]


def test_injected_parameters_are_hidden_from_the_model() -> None:
    assert copy_inputs.args_schema == {"type": "object", "properties": {}, "required": []}

    @tool
    def greet(name: str, who: Annotated[str, InjectedState("foo")],
              call: Annotated[str, InjectedToolCallId], mark: str = "!") -> str:
        """Greet someone."""
        return f"{who} {name}{mark} ({call})"

    assert greet.args_schema is not None
    assert list(greet.args_schema["properties"]) == ["name", "mark"]
    model = FakeChatModel([
        ChatResult("", tool_calls=(ToolCall("c7", "greet", '{"name": "Ann"}'),)), "ok"])
    agent = create_agent(model, [greet], state_schema=CopyState, return_intermediate_steps=True)
    result = agent.executor.invoke({"foo": "Hi"})
    assert result.steps[0].observation == "Hi Ann! (c7)"
    sent = model.requests[0].tools or []
    assert set(sent[0]["function"]["parameters"]["properties"]) == {"name", "mark"}


def test_output_only_field_refused_as_input() -> None:
    agent = create_agent(FakeChatModel(simulator), [copy_inputs], state_schema=CopyState)
    with pytest.raises(StateError, match="'baz' is output only"):
        agent.invoke({"foo": "Hello", "baz": "x"})


def test_unknown_field_and_wrong_type_refused() -> None:
    agent = create_agent(FakeChatModel(simulator), [copy_inputs], state_schema=CopyState)
    with pytest.raises(StateError, match="'fooo' is not in the state schema; did you mean 'foo'"):
        agent.invoke({"fooo": "Hello"})
    with pytest.raises(StateError, match="'foo' must be str, got int"):
        agent.invoke({"foo": 3})


def test_injecting_a_missing_field_is_a_config_error() -> None:
    @tool
    def needs(q: str, value: Annotated[str, InjectedState("missing")]) -> str:
        """Needs a field."""
        return value

    with pytest.raises(ConfigError, match="injects state field 'missing'"):
        create_agent(FakeChatModel([]), [needs], state_schema=CopyState)


def test_command_updating_an_undeclared_field_fails_clearly() -> None:
    @tool
    def rogue(q: str) -> Command:
        """Writes a field nobody declared."""
        return Command(update={"nope": 1})

    model = FakeChatModel([ChatResult("", tool_calls=(ToolCall("c1", "rogue", '{"q": "x"}'),))])
    agent = create_agent(model, [rogue])
    with pytest.raises(StateError, match="'nope' is not in the state schema"):
        agent.invoke({"input": "go"})


class Notes(AgentState):
    notes: Annotated[list[str], operator.add]


def test_parallel_updates_merge_in_declared_order_not_finish_order() -> None:
    first_may_finish = threading.Event()

    @tool
    def note(text: str) -> Command:
        """Add a note."""
        if text == "first":
            assert first_may_finish.wait(10)  # finishes only after "second" has
        else:
            first_may_finish.set()
        return Command(update={"notes": [text]})

    model = FakeChatModel([
        ChatResult("", tool_calls=(ToolCall("a", "note", '{"text": "first"}'),
                                   ToolCall("b", "note", '{"text": "second"}'))),
        "done",
    ])
    out = create_agent(model, [note], state_schema=Notes).invoke({"input": "go", "notes": ["0"]})
    assert out["notes"] == ["0", "first", "second"]


@dataclass
class Weather:
    city: str
    celsius: float


def test_structured_response_through_the_final_tool_with_one_retry() -> None:
    model = FakeChatModel([
        ChatResult("", tool_calls=(ToolCall("r1", "final_response", '{"city": "Oslo"}'),)),
        ChatResult("", tool_calls=(ToolCall("r2", "final_response",
                                            '{"city": "Oslo", "celsius": 4.5}'),)),
    ])
    out = create_agent(model, [], response_format=Weather).invoke({"input": "Oslo?"})
    assert out["structured_response"] == Weather("Oslo", 4.5)
    retry = model.requests[1].messages[-1].content
    assert "does not match the required JSON Schema" in retry and "celsius" in retry


def test_structured_response_from_a_text_agent() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    model = FakeChatModel(['Final Answer: {"n": 75}'])
    agent = create_agent(model, [], response_format=schema,
                         agent_type="chat-zero-shot-react-description")
    assert agent.invoke("What is 25% of 300?")["structured_response"] == {"n": 75}
    assert "matches this JSON Schema" in model.requests[0].messages[0].content


def test_invalid_json_schema_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a valid JSON Schema"):
        create_agent(FakeChatModel([]), [], response_format={"type": "banana"})


def test_seed_state_through_async_and_batch() -> None:
    import asyncio

    agent = create_agent(FakeChatModel(simulator), [copy_inputs], state_schema=CopyState)
    out = asyncio.run(agent.ainvoke({"foo": "A", "bar": "B"}))
    assert (out["baz"], out["qux"]) == ("A", "B")
    many = agent.batch([{"foo": str(i), "bar": "x"} for i in range(4)], concurrency=2)
    assert [o["baz"] for o in many if isinstance(o, dict)] == ["0", "1", "2", "3"]


def test_state_update_event_is_emitted() -> None:
    agent = create_agent(FakeChatModel(simulator), [copy_inputs], state_schema=CopyState)
    updates = [e for e in agent.stream({"foo": "Hello", "bar": "World"})
               if e.kind == "state_update"]
    assert [u.update for u in updates] == [{"baz": "Hello", "qux": "World"}]  # type: ignore[union-attr]


def test_yaml_declared_fields() -> None:
    from agentcli.state import StateSchema, fields_from_yaml

    schema = StateSchema.of().extend(fields_from_yaml(
        {"topic": {"type": "str", "output": False}, "score": {"type": "int", "input": False}}))
    values = schema.accept({"topic": "tides"})
    assert schema.output({**values, "score": 3}) == {"score": 3}
    with pytest.raises(StateError, match="'score' is output only"):
        schema.accept({"score": 1})
    with pytest.raises(StateError, match="unknown keys"):
        fields_from_yaml({"x": {"kind": "str"}})


def test_inputs_are_not_mutated_across_runs() -> None:
    agent = create_agent(FakeChatModel(simulator), [copy_inputs], state_schema=CopyState)
    given: dict[str, Any] = {"foo": "Hello", "bar": "World"}
    agent.invoke(given)
    assert given == {"foo": "Hello", "bar": "World"}


class _Marked(AgentState):
    note: NotRequired[Annotated[str, OmitFromOutput]]
    count: Required[Annotated[int, operator.add]]
    either: NotRequired[int | None]


def test_required_and_not_required_fields_keep_their_type_and_marks() -> None:
    from agentcli.state import StateSchema

    fields = StateSchema.of(_Marked).fields
    assert fields["note"].type is str and fields["note"].omit_output
    assert fields["count"].type is int and fields["count"].reducer is operator.add
    assert fields["either"].type is int
    with pytest.raises(StateError, match="'count' must be int"):
        StateSchema.of(_Marked).accept({"count": "three"})
