"""``self-ask-with-search``: follow-up questions, each answered by one search tool.

The model writes ``Follow up: <question>``; the executor runs the one tool and the answer
comes back as ``Intermediate answer: <observation>``; ``So the final answer is: <answer>``
ends the run. The tool is the one named by ``self_ask_tool`` or the only tool provided.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from agentcli.agents.base import TextAgent, final_instruction
from agentcli.agents.parsers import labelled_answer
from agentcli.agents.prompts import render
from agentcli.errors import ConfigError, OutputParserError
from agentcli.schema import AgentAction, AgentFinish, AgentStep, Message, user
from agentcli.tools.base import Tool

_FINAL = re.compile(
    r"(?im)^[ \t*_]*(?:so the final answer is|final answer)[*_]{0,2}[ \t]*[:：][*_]{0,2}[ \t]*"
)
_FOLLOW_UP = re.compile(
    r"(?im)^[ \t*_]*follow[ \t-]?up(?:[ \t]*question)?[*_]{0,2}[ \t]*[:：][*_]{0,2}"
)
_NEXT_BLOCK = re.compile(r"(?im)^[ \t*_]*(?:follow[ \t-]?up|question|intermediate answer)\b")
_FORMAT = (
    "Write either 'Follow up: <one simple question>' on its own line, or "
    "'So the final answer is: <answer>'."
)


class SelfAskOutputParser:
    """Reads ``Follow up:`` (an action for ``tool``) or ``So the final answer is:``."""

    def __init__(self, tool: str) -> None:
        self.tool = tool

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """The first of: a final answer, the last follow-up question."""
        final = _FINAL.search(text)
        follow = list(_FOLLOW_UP.finditer(text))
        answer = labelled_answer(text, final, follow[0] if follow else None, _NEXT_BLOCK)
        if answer is not None:
            return answer
        if follow:
            question = text[follow[-1].end():].strip().splitlines()
            if question and question[0].strip():
                return AgentAction(self.tool, question[0].strip(), text)
        raise OutputParserError(
            "The reply has neither a follow-up question nor a final answer.",
            llm_output=text, observation="Could not read your reply. " + _FORMAT,
        )


class SelfAskAgent(TextAgent):
    """Decomposes a question into follow-ups answered by one search tool."""

    agent_type: ClassVar[str] = "self-ask-with-search"
    main_template: ClassVar[str | None] = "self_ask"
    prompt_options: ClassVar[Literal["text", "chat"]] = "text"
    summary: ClassVar[str] = (
        "Self-ask: splits a question into follow-up questions answered by one search tool. "
        "For multi-hop factual questions."
    )
    accepts: ClassVar[str] = "exactly one search tool (self_ask_tool or the only tool)"
    stop: ClassVar[tuple[str, ...]] = ("\nIntermediate answer:",)

    def __init__(
        self, tools: Sequence[Tool], *, self_ask_tool: str | None = None, **kw: Any,
    ) -> None:
        listed = ", ".join(t.name for t in tools) or "none"
        if self_ask_tool:  # the one search tool: the one named, else the only tool
            tools = [t for t in tools if t.name == self_ask_tool][:1]
            if not tools:
                raise ConfigError(f"self_ask_tool names {self_ask_tool!r}, which is not among "
                                  f"the loaded tools ({listed}); add it to tools")
        elif len(tools) != 1:
            raise ConfigError(f"self-ask-with-search needs exactly one search tool, got "
                              f"{len(tools)} ({listed}); load one tool or set self_ask_tool "
                              "in the config")
        super().__init__(tools, **kw)
        self.parser = SelfAskOutputParser(tools[0].name)

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """The few-shot prompt with each follow-up and its intermediate answer replayed."""
        pad = "".join(
            f"{' ' if i == 0 else ''}{s.action.log.strip()}\nIntermediate answer: "
            f"{s.observation.strip()}\n"
            for i, s in enumerate(steps)
        )
        if final:
            pad += final_instruction().replace("Final Answer:", "So the final answer is:")
        template = self.with_instructions(self.text("self_ask").rstrip("\n"), before=True)
        return [user(render(template, input=str(inputs["input"]), agent_scratchpad=pad))]
