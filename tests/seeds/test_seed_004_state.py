"""Seed 004's program (typed state, a tool reading the injected state and returning a
Command), as the seed writes it: only the import lines are changed."""

from __future__ import annotations

# -- the seed's imports, changed to agentcli's (every name the seed imports) ---------------
import builtins
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from agentcli.compat import (
    AgentState,
    AIMessage,
    BaseChatModel,
    BaseMessage,
    BaseTool,
    CallbackManagerForLLMRun,
    ChatGeneration,
    ChatResult,
    Command,
    InjectedState,
    LanguageModelInput,
    OmitFromInput,
    OmitFromOutput,
    Runnable,
    ToolCall,
    ToolMessage,
    create_agent,
)


def override(fn: Any) -> Any:  # typing.override is Python 3.12+
    return fn


# -- the seed's program, as written ------------------------------------------------------
requests: list[int] = []


class ModelSimulator(BaseChatModel):
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        requests.append(1)
        if[message for message in messages if isinstance(message, ToolMessage)]:
             generation = ChatGeneration(message=AIMessage(""))
             return ChatResult(generations=[generation], llm_output={})

        tool_call: ToolCall = {
                "name": "fake_tool",
                "args": {},
                "id": "tool_call_001",
            }
        generation = ChatGeneration(message=AIMessage(content="", tool_calls=[tool_call]))
        return ChatResult(generations=[generation], llm_output={})

    @property
    def _llm_type(self) -> str:
        return "model-simulator"

    @override
    def bind_tools(
        self,
        tools: Sequence[builtins.dict[str, Any] | type | Callable | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self


class ExtendedAgentState(AgentState):
    foo: Annotated[str,OmitFromOutput]
    bar: Annotated[str,OmitFromOutput]
    baz: Annotated[str,OmitFromInput]
    qux: Annotated[str,OmitFromInput]


def fake_tool(state:Annotated[dict, InjectedState]) -> Command:
    """A fake tool"""

    tool_call_id = state["messages"][-1].tool_calls[0]["id"]
    return Command(
        update={
            "messages":[ToolMessage("", tool_call_id=tool_call_id)],
            "baz": state.get("foo", "N/A"),
            "qux": state.get("bar", "N/A"),
            },
    )


def test_seed_004_runs_as_written() -> None:
    agent = create_agent(
        model= ModelSimulator(),
        tools=[fake_tool],
        state_schema=ExtendedAgentState,
    )

    result = agent.invoke(input= {"foo": "Hello", "bar":"World"}) # type: ignore
    assert result["baz"] == "Hello"
    assert result["qux"]== "World"
    assert len(requests) == 2  # the tool call, then the empty reply that ends the run
    # the run's messages as LangGraph returns them: the tool call, its result, and
    # the final (empty) AI message
    roles = [(m.role, m.content) for m in result["messages"]]
    assert roles == [("assistant", ""), ("tool", ""), ("assistant", "")]
    assert isinstance(result["messages"][-1], AIMessage)
    json.dumps({k: v for k, v in result.items() if k != "messages"})
