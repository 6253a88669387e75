"""``chat-zero-shot-react-description``: the chat agent with a JSON-blob action format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agentcli.agents.base import TextAgent, require_single_input, work_as_turns
from agentcli.agents.parsers import JsonBlobOutputParser
from agentcli.agents.prompt_style import tool_lines
from agentcli.schema import AgentStep, Message, system
from agentcli.tools.base import Tool


class ChatAgent(TextAgent):
    """Tools listed in the system message; one fenced JSON action per turn."""

    agent_type: ClassVar[str] = "chat-zero-shot-react-description"
    main_template: ClassVar[str | None] = "chat_system"
    json_blob: ClassVar[bool] = True
    summary: ClassVar[str] = "Chat ReAct with a JSON action blob; the default for chat models."
    stop: ClassVar[tuple[str, ...]] = ("Observation:",)

    def __init__(self, tools: Sequence[Tool], **kw: Any) -> None:
        super().__init__(tools, **kw)
        require_single_input(self.agent_type, self.tools)
        self.parser = JsonBlobOutputParser()
        self.system_prompt = self.with_instructions(self.prompt(
            "chat_system",
            tools=tool_lines(self.tools),
            tool_names=", ".join(self.allowed_tools),
        ).strip())

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, Any], *, final: bool = False
    ) -> list[Message]:
        """System prompt, then the question and the work so far as alternating turns."""
        return [system(self.system_prompt),
                *work_as_turns(steps, self.question(inputs), final=final)]
