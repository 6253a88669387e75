"""``zero-shot-react-description``: the text ReAct agent (Thought / Action / Action Input)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from agentcli.agents.base import (
    TextAgent,
    final_instruction,
    require_single_input,
    scratchpad,
)
from agentcli.agents.parsers import ReActOutputParser
from agentcli.agents.prompt_style import tool_lines
from agentcli.agents.prompts import render
from agentcli.schema import AgentStep, ContentText, Message, media_parts, user
from agentcli.tools.base import Tool


class ReActAgent(TextAgent):
    """Text ReAct for completion-style prompting; one user message holds the whole prompt."""

    agent_type: ClassVar[str] = "zero-shot-react-description"
    main_template: ClassVar[str | None] = "react"
    prompt_options: ClassVar[Literal["text", "chat"]] = "text"
    summary: ClassVar[str] = "Text ReAct (Thought/Action/Action Input); any model, any size."
    stop: ClassVar[tuple[str, ...]] = ("\nObservation:", "\n\tObservation:")

    def __init__(self, tools: Sequence[Tool], **kw: Any) -> None:
        super().__init__(tools, **kw)
        require_single_input(self.agent_type, self.tools)
        self.parser = ReActOutputParser()
        self.template = self.with_instructions(self.prompt(
            "react", tools=tool_lines(self.tools), tool_names=", ".join(self.allowed_tools),
        ), before=True)

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, Any], *, final: bool = False
    ) -> list[Message]:
        """The ReAct prompt with the scratchpad after the last ``Thought:``."""
        pad = scratchpad(steps, starts_after_thought=True)
        if final:
            pad += " " + final_instruction()
        prompt = render(self.template, input=str(inputs["input"]), agent_scratchpad=pad)
        return [user(ContentText(prompt, media_parts(inputs["input"])))]  # with attachments
