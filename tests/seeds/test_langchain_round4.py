"""Issue 41's items, each as LangChain documents it (and as the seeds write it, where a seed
has the code). Imports: ``agentcli.compat`` stands for ``langchain``, ``langchain_core``,
``langchain_community``; models are reached over HTTP on the mock server or are the fake
chat model."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentcli.compat import AgentType, ChatTongyi, Tool, initialize_agent
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
