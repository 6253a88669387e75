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
