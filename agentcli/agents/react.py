"""``zero-shot-react-description``: the text ReAct agent (Thought / Action / Action Input)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

from agentcli.agents.base import (
    TextAgent,
    final_instruction,
    require_single_input,
    scratchpad,
)
from agentcli.agents.parsers import ReActOutputParser
from agentcli.agents.prompts import render
from agentcli.schema import AgentStep, ContentText, Message, media_parts, user


class ReActAgent(TextAgent):
    """Text ReAct for completion-style prompting; one user message holds the whole prompt."""

    agent_type: ClassVar[str] = "zero-shot-react-description"
    main_template: ClassVar[str | None] = "react"
    prompt_options: ClassVar[Literal["text", "chat"]] = "text"
    summary: ClassVar[str] = "Text ReAct (Thought/Action/Action Input); any model, any size."
    stop: ClassVar[tuple[str, ...]] = ("\nObservation:", "\n\tObservation:")

    def setup(self) -> None:
        """The parser and the template with the tools filled in."""
        require_single_input(self.agent_type, self.tools)
        self.parser = ReActOutputParser()
        self.template = self.with_instructions(self.prompt("react", **self.tool_values()),
                                               before=True)

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """The ReAct prompt with the scratchpad after the last ``Thought:``."""
        pad = scratchpad(steps, starts_after_thought=True)
        if final:
            pad += " " + final_instruction()
        prompt = render(self.template, input=str(inputs["input"]), agent_scratchpad=pad)
        return [user(ContentText(prompt, media_parts(inputs["input"])))]  # with attachments
