"""Prompt snapshots: a change to a prompt must be deliberate (update the snapshot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agents.chat import ChatAgent
from agentcli.agents.react import ReActAgent
from agentcli.models.fake import FakeChatModel
from agentcli.schema import AgentAction, AgentStep
from agentcli.tools import load_tools

SNAPSHOTS = Path(__file__).resolve().parents[1] / "data" / "snapshots"


def render(agent_cls: type) -> str:
    llm = FakeChatModel([])
    agent = agent_cls(llm, load_tools(["llm-math"], llm=llm))
    step = AgentStep(AgentAction("Calculator", "2+2", "Thought: add\nAction: Calculator"), "4")
    messages = agent.build_messages([step], {"input": "What is 2+2?"})
    return "\n---\n".join(f"[{m.role}]\n{m.content}" for m in messages) + "\n"


@pytest.mark.parametrize("agent_cls", [ChatAgent, ReActAgent])
def test_prompt_snapshot(agent_cls: type) -> None:
    path = SNAPSHOTS / f"{agent_cls.agent_type}.txt"
    text = render(agent_cls)
    if not path.exists():  # first run writes the snapshot; commit it
        path.write_text(text)
    assert text == path.read_text(), f"prompt changed: delete {path} to accept the new one"
