"""The two conversational agent types: chat history from memory in the prompt.

* ``conversational-react-description`` (text): ``Thought: Do I need to use a tool? Yes`` then
  ``Action:`` / ``Action Input:``, or ``Thought: Do I need to use a tool? No`` then
  ``AI: <reply>``. :class:`ConversationalOutputParser` reads it (and everything the ReAct
  parser reads, so ``Final Answer:`` works too).
* ``chat-conversational-react-description`` (chat): history as messages, one fenced JSON
  blob per turn, the reply as the ``"Final Answer"`` action; tool results come back as
  user messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

from agentcli.agents.base import (
    JsonBlobAgent,
    TextAgent,
    chat_history,
    final_instruction,
    history_text,
    require_single_input,
)
from agentcli.agents.parsers import ReActOutputParser, labelled_answer
from agentcli.agents.prompts import render
from agentcli.errors import OutputParserError
from agentcli.schema import AgentAction, AgentFinish, AgentStep, Message, assistant, system, user

# "AI:" (or "**AI:**") at the start of a line; the reply runs to a "Human:" turn, if any.
_AI_LABEL = re.compile(r"(?m)^[ \t>*_]{0,4}AI[*_]{0,2}[ \t]*[:：][*_]{0,2}[ \t]*")
_ACTION_LABEL = re.compile(r"(?mi)^[ \t>*_#]{0,4}action(?:[ \t]*\d{1,3})?[*_]{0,2}[ \t]*[:：]")
_NEXT_TURN = re.compile(r"(?m)^[ \t]*(?:Human|User|New input)[ \t]*:")
_NO_TOOL = re.compile(r"(?i)do i need to use a tool\??\s*no\b")


class ConversationalOutputParser(ReActOutputParser):
    """``AI: <reply>`` finishes; otherwise the text ReAct rules apply."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """Parse one reply of the conversational text format."""
        ai = _AI_LABEL.search(text)
        action = _ACTION_LABEL.search(text)
        reply = labelled_answer(text, ai, action, _NEXT_TURN)
        if reply is not None:
            return reply
        try:
            return super().parse(text)
        except OutputParserError as err:
            no_tool = _NO_TOOL.search(text)
            answer = re.sub(r"^[\s.,:;!-]+", "", text[no_tool.end():]) if no_tool else ""
            if answer.strip() and ai is None and action is None:
                # "Do I need to use a tool? No" followed by the reply without its label.
                return AgentFinish({"output": answer.strip()}, text)
            raise OutputParserError(
                str(err), llm_output=text,
                observation="Invalid format. To use a tool write 'Thought: Do I need to use a "
                "tool? Yes' then 'Action:' and 'Action Input:' lines; to reply write 'Thought: "
                "Do I need to use a tool? No' then 'AI: <your reply>'.",
            ) from None


class ConversationalAgent(TextAgent):
    """Text ReAct for multi-turn chat: history in the prompt, ``AI:`` for the reply."""

    agent_type: ClassVar[str] = "conversational-react-description"
    main_template: ClassVar[str | None] = "conversational"
    prompt_options: ClassVar[Literal["text", "chat"]] = "text"
    summary: ClassVar[str] = (
        "Multi-turn text ReAct with chat history in the prompt; replies with 'AI:' and uses "
        "tools only when needed. For plain completion models in a chat."
    )
    uses_memory: ClassVar[bool] = True
    stop: ClassVar[tuple[str, ...]] = ("\nObservation:", "\nHuman:")

    def setup(self) -> None:
        """The parser and the template with the tools filled in."""
        require_single_input(self.agent_type, self.tools)
        self.parser = ConversationalOutputParser()
        self.template = render(
            self.with_instructions(self.text("conversational").rstrip("\n"), before=True),
            **self.tool_values("(no tools)"))

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """One prompt: the tools, the earlier conversation, the input and the work so far."""
        pad = "".join(
            f"{s.action.log.rstrip()}\nObservation: {s.observation}\n" for s in steps
        )
        if final:
            pad += "Thought: Do I need to use a tool? No. " + final_instruction().replace(
                "Final Answer:", "AI:"
            ) + "\n"
        pad += "Thought:"
        history = history_text(chat_history(inputs)) or "(none yet)"
        return [user(render(self.template, input=str(inputs["input"]),
                            chat_history=history, agent_scratchpad=pad))]


class ChatConversationalAgent(JsonBlobAgent):
    """Chat ReAct for multi-turn chat: history as messages, JSON blobs, "Final Answer" action."""

    agent_type: ClassVar[str] = "chat-conversational-react-description"
    main_template: ClassVar[str | None] = "chat_conversational_system"
    summary: ClassVar[str] = (
        "Multi-turn chat agent: history as messages, one JSON action blob per turn, the reply "
        'as the "Final Answer" action. For chat models in a conversation.'
    )
    uses_memory: ClassVar[bool] = True
    no_tools: ClassVar[str] = "(no tools)"

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """System, history, the input, then each step as the reply and the tool's response."""
        messages = [system(self.system_prompt), *chat_history(inputs),
                    user(self.question(inputs))]
        for step in steps:
            messages += [assistant(step.action.log),
                         user(self.prompt("tool_response", observation=step.observation))]
        if final:
            messages.append(user(final_instruction()))
        return messages
