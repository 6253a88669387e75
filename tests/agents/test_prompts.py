"""Prompt snapshots: the first request of every agent type, rendered with fixed tools.

Run with ``UPDATE_SNAPSHOTS=1`` to rewrite ``tests/agents/snapshots/`` after a deliberate
prompt change, then review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentcli.agents import agent_class, agent_names
from agentcli.agents.tool_calling import ToolCallAction
from agentcli.schema import AgentAction, AgentStep, ChatResult, Message, assistant, user
from agentcli.tools.base import Tool

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


def _render(agent_type: str) -> str:
    tools = [Tool("search", "Search the web for current events.", func=lambda q: q)]
    agent = agent_class(agent_type)(tools)
    question = "Why are there tides?"
    if agent_type == "tool-calling":
        action: AgentAction = ToolCallAction("search", {"input": "tides"}, "",
                                             tool_call_id="call_1", turn="t1")
    else:
        action = AgentAction("search", "tides", "Thought: look\nAction: search\n"
                             "Action Input: tides")
    step = AgentStep(action, "the moon")
    turn = agent.turn_messages(ChatResult(action.log), [action])
    state = {"input": question, "chat_history": [user("Hi"), assistant("Hello!")],
             "intermediate_steps": [step],
             "messages": [user(question), *turn,
                          Message("tool", "the moon", tool_call_id="call_1", name="search")]}
    request = agent.request(state)
    parts = [f"stop: {json.dumps(list(request.stop) or None)}",
             f"tools: {json.dumps([t['function']['name'] for t in request.tools or []])}"]
    for message in request.messages:
        extra = "".join(f" call {c.id} {c.name}({c.arguments})" for c in message.tool_calls)
        if message.tool_call_id:
            extra += f" for {message.tool_call_id}"
        parts.append(f"--- {message.role}{extra}\n{message.content}")
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize("agent_type", agent_names())
def test_prompt_snapshot(agent_type: str) -> None:
    path = SNAPSHOTS / f"{agent_type}.txt"
    text = _render(agent_type)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    # A missing snapshot is a failure, not a free pass: a new agent type must commit one.
    assert path.exists(), f"no snapshot {path.name}; run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8")


_OPTIONAL = ("needs no tool", "no tool is needed", "need no tool", "needs no search",
             "if no tool is needed")


@pytest.mark.parametrize("agent_type", agent_names())
def test_every_prompt_says_tools_are_optional(agent_type: str) -> None:
    """Issue 31 item 4: a question that needs no tool is answered directly."""
    text = _render(agent_type).lower()
    assert any(words in text for words in _OPTIONAL), agent_type


@pytest.mark.parametrize("name", ["chat_system_compact", "react_compact",
                                  "structured_chat_system_compact",
                                  "chat_conversational_system_compact"])
def test_every_compact_prompt_says_tools_are_optional(name: str) -> None:
    from agentcli.agents.prompts import load

    text = load(name).lower()
    assert any(words in text for words in _OPTIONAL), name
