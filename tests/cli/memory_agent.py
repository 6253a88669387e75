"""A test-only agent type that reads ``inputs["chat_history"]`` (the memory contract).

The real conversational agent types come with issue 4; until then this stands in for them in
the chat tests and the docs/chat.md transcript. ``table()`` is the built-in table with it added as
``test-memory-chat``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from agentcli import agents
from agentcli.agents.chat import ChatAgent
from agentcli.schema import AgentStep, Message

NAME = "test-memory-chat"


class MemoryChatAgent(ChatAgent):
    """The chat agent with the conversation history between its system prompt and question."""

    agent_type: ClassVar[str] = NAME
    summary: ClassVar[str] = "Test only: chat ReAct that reads chat_history."
    uses_memory: ClassVar[bool] = True

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], *, final: bool = False
    ) -> list[Message]:
        messages = super().build_messages(steps, inputs, final=final)
        return [messages[0], *inputs.get("chat_history", []), *messages[1:]]


def table() -> Mapping[str, str]:
    """The built-in table with this type's line added."""
    return MappingProxyType({**agents.BUILTIN_AGENTS, NAME: "memory_agent:MemoryChatAgent"})


def register() -> None:
    """Use :func:`table` in this process (the pty-driven chat's child process)."""
    agents.BUILTIN_AGENTS = table()
