"""Issue 41's items, each as LangChain documents it (and as the seeds write it, where a seed
has the code). Imports: ``agentcli.compat`` stands for ``langchain``, ``langchain_core``,
``langchain_community``; models are reached over HTTP on the mock server or are the fake
chat model."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentcli.compat import AgentType, BaseCallbackHandler, ChatTongyi, Tool, initialize_agent
from agentcli.models.fake import FakeChatModel

REACT = AgentType.ZERO_SHOT_REACT_DESCRIPTION


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def echo_tool() -> Tool:
    return Tool(name="echo", func=lambda text: f"echo: {text}", description="Repeats its input.")


@pytest.fixture
def tongyi(mock_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    monkeypatch.setenv("DASHSCOPE_BASE_URL", mock_server.base_url)
    return mock_server


# -- item 2: run, __call__, return_only_outputs ---------------------------------------------
def test_run_and_call_as_langchain_documents_them(tongyi: Any) -> None:
    for reply in ("Action: echo\nAction Input: hi", "Final Answer: one", "Final Answer: two",
                  "Final Answer: three", "Final Answer: four"):
        tongyi.add_reply(reply)
    executor = initialize_agent([echo_tool()], ChatTongyi(temperature=0), REACT)
    assert executor.run("What is 2 + 2?") == "one"  # the answer text
    assert executor.run(input="again?") == "two"
    assert executor({"input": "q3"}) == {"input": "q3", "output": "three"}
    assert executor({"input": "q4"}, return_only_outputs=True) == {"output": "four"}
    assert len(tongyi.requests) == 5  # one request per model turn, none more
    with pytest.raises(ValueError, match="one question"):
        executor.run("a", input="b")
    steps = initialize_agent([], ChatTongyi(), REACT, return_intermediate_steps=True)
    with pytest.raises(ValueError, match=r"exactly one output key.*invoke"):
        steps.run("q")


def test_seed_002_sequential_chain_calls_a_chain_for_its_outputs() -> None:
    """Seed 002's SequentialChain loop feeds each chain's outputs to the next one."""
    executor = initialize_agent([], FakeChatModel(["Final Answer: 42"]), REACT)
    known_values = {"input": "the question"}
    # -- the seed's loop body, as written --------------------------------------------------
    chain = executor
    outputs = chain(known_values, return_only_outputs=True)
    known_values.update(outputs)
    assert known_values == {"input": "the question", "output": "42"}


# -- item 4: a parse error is LangChain's _Exception step; a forced stop's empty line --------
class Hooks(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_agent_action(self, action: Any, **kw: Any) -> None:
        self.seen.append(("action", (action.tool, action.tool_input, action.log)))

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
        self.seen.append(("tool_start", (serialized["name"], input_str)))

    def on_tool_end(self, output: str, **kw: Any) -> None:
        self.seen.append(("tool_end", output))

    def on_text(self, text: str, **kw: Any) -> None:
        self.seen.append(("text", text))


GREEN, END = "\x1b[32;1m\x1b[1;3m", "\x1b[0m"


def test_a_parse_error_is_an_exception_step_for_handlers_and_verbose(
        tongyi: Any, capsys: pytest.CaptureFixture[str]) -> None:
    tongyi.add_reply("Let me think about 25% of 300.")  # neither an action nor an answer
    tongyi.add_reply("Final Answer: 75")
    hooks = Hooks()
    executor = initialize_agent([echo_tool()], ChatTongyi(temperature=0),
                                AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION,
                                handle_parsing_errors=True, verbose=True, callbacks=[hooks])
    result = executor.invoke({"input": "What is the 25% of 300?"},)
    assert result["output"] == "75" and len(tongyi.requests) == 2
    told = tongyi.requests[1].body["messages"][-1]["content"]  # what the model was told
    (kind, (tool, told_input, log)), start, end = hooks.seen
    assert (kind, tool, log) == ("action", "_Exception", "Let me think about 25% of 300.")
    assert told_input in told and told_input
    assert start == ("tool_start", ("_Exception", told_input))
    assert end == ("tool_end", told_input)  # and no on_text
    out = capsys.readouterr().out
    assert out == ("\n\n\x1b[1m> Entering new AgentExecutor chain...\x1b[0m\n"
                   f"{GREEN}Let me think about 25% of 300.{END}\nObservation: {told_input}"
                   f"\nThought:{GREEN}Final Answer: 75{END}\n\n\x1b[1m> Finished chain.\x1b[0m\n")


def test_a_forced_stop_prints_an_empty_line_as_langchain_does(
        capsys: pytest.CaptureFixture[str]) -> None:
    llm = FakeChatModel(["Action: echo\nAction Input: hi"])
    executor = initialize_agent([echo_tool()], llm, REACT, max_iterations=1, verbose=True,
                                early_stopping_method="force")
    assert executor.run("q") == "Agent stopped due to iteration limit or time limit."
    out = capsys.readouterr().out
    assert out.endswith(f"\nObservation: \x1b[36;1m\x1b[1;3mecho: hi{END}\nThought:"
                        f"{GREEN}{END}\n\n\x1b[1m> Finished chain.\x1b[0m\n")
    assert "stopped" not in out
