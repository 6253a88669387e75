"""``chat-zero-shot-react-description``: the chat agent with a JSON-blob action format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from agentcli.agents.base import JsonBlobAgent, work_as_turns
from agentcli.schema import AgentStep, Message, system


class ChatAgent(JsonBlobAgent):
    """Tools listed in the system message; one fenced JSON action per turn."""

    agent_type: ClassVar[str] = "chat-zero-shot-react-description"
    main_template: ClassVar[str | None] = "chat_system"
    summary: ClassVar[str] = "Chat ReAct with a JSON action blob; the default for chat models."

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """System prompt, then the question and the work so far as alternating turns."""
        return [system(self.system_prompt),
                *work_as_turns(steps, self.question(inputs), final=final)]
