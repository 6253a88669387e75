"""Shared helpers for agent-type tests: scripted replies per type and a model on the mock server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentcli.models.openai_compat import OpenAICompatModel

ACTION_BLOB = (
    'Thought: add them\nAction:\n```json\n{"action": "Calculator", "action_input": "2+2"}\n```'
)
FINAL_BLOB = '```json\n{"action": "Final Answer", "action_input": "4"}\n```'

# Per agent type: a reply that calls Calculator with "2+2", a final answer "4", and garbage.
SCRIPTS: dict[str, dict[str, Any]] = {
    "zero-shot-react-description": {
        "action": {"text": "Thought: add them\nAction: Calculator\nAction Input: 2+2"},
        "final": {"text": "Thought: I know it\nFinal Answer: 4"},
    },
    "chat-zero-shot-react-description": {
        "action": {"text": ACTION_BLOB},
        "final": {"text": "Thought: done\nFinal Answer: 4"},
    },
    "structured-chat-zero-shot-react-description": {
        "action": {"text": ACTION_BLOB},
        "final": {"text": FINAL_BLOB},
    },
    "conversational-react-description": {
        "action": {"text": "Thought: Do I need to use a tool? Yes\nAction: Calculator\n"
                           "Action Input: 2+2"},
        "final": {"text": "Thought: Do I need to use a tool? No\nAI: 4"},
    },
    "chat-conversational-react-description": {
        "action": {"text": ACTION_BLOB},
        "final": {"text": FINAL_BLOB},
    },
    "tool-calling": {
        "action": {"text": "", "tool_calls": [
            {"name": "Calculator", "arguments": {"input": "2+2"}, "id": "call_a"}]},
        "final": {"text": "4"},
    },
    "self-ask-with-search": {
        "action": {"text": " Yes.\nFollow up: 2+2"},
        "final": {"text": "So the final answer is: 4"},
    },
}
GARBAGE: dict[str, dict[str, Any]] = {
    name: {"text": "" if name == "tool-calling" else "Hmm, let me think about that some more."}
    for name in SCRIPTS
}
TYPES = list(SCRIPTS)


def queue(server: Any, *replies: dict[str, Any]) -> None:
    """Queue reply specs (``{"text", "tool_calls"?}``) on the mock server."""
    for reply in replies:
        server.add_reply(reply.get("text"), tool_calls=reply.get("tool_calls"),
                         delay=reply.get("delay", 0.0))


@pytest.fixture
def llm(mock_server: Any) -> Iterator[OpenAICompatModel]:
    """A real OpenAI-compatible model pointed at the mock server."""
    model = OpenAICompatModel("mock", base_url=mock_server.base_url, api_key="sk-test",
                              max_retries=0)
    try:
        yield model
    finally:
        model.close()
