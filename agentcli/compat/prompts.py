"""LangChain's prompt objects: ``hub.pull``, ``ChatPromptTemplate`` (``.partial``),
``AgentScratchPadChatPromptTemplate``, the message-log action, and the chat agent in
LangChain's prompt shape (:class:`LangChainChatAgent`): its work so far is text in the human
message, each step its reply, ``observation_prefix`` and the result, then ``llm_prefix``
(the CLI's chat agent sends the work as alternating turns instead)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar

from agentcli.agents.base import final_instruction
from agentcli.agents.chat import ChatAgent
from agentcli.agents.prompts import load, render, variables
from agentcli.agents.template import PromptTemplate, fill
from agentcli.agents.tool_calling import ToolCallAction
from agentcli.errors import ConfigError
from agentcli.records import record
from agentcli.schema import AgentAction, AgentStep, Message, system, user

# what leads the work so far in the human message (our wording of LangChain's sentence)
PREVIOUS_WORK = ("This is the work you did so far (the user sees none of it, only your final "
                 "answer):")


def scratchpad(steps: Sequence[tuple[AgentAction, object]], observation_prefix: str,
               llm_prefix: str) -> str:
    """The steps as LangChain's chat prompts replay them: each reply, the prefixed result,
    then ``llm_prefix``, after :data:`PREVIOUS_WORK` (nothing before the first step)."""
    work = "".join(f"{action.log}\n{observation_prefix}{seen}\n{llm_prefix}"
                   for action, seen in steps)
    return f"{PREVIOUS_WORK}\n{work}" if work else ""


class LangChainChatAgent(ChatAgent):
    """``chat-zero-shot-react-description`` in LangChain's prompt shape: the system prompt,
    then one human message, ``human_message`` (``{input}\n\n{agent_scratchpad}``) with the
    work so far as text ending ``Thought:``."""

    observation_prefix: ClassVar[str] = "Observation: "
    llm_prefix: ClassVar[str] = "Thought:"
    pad_in_human_message: ClassVar[bool] = True  # {agent_scratchpad} may sit anywhere in it

    def build_messages(self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *,
                       final: bool = False) -> list[Message]:
        """System prompt, then the question with the work so far."""
        pad = scratchpad([(s.action, s.observation) for s in steps], self.observation_prefix,
                         self.llm_prefix)
        template = self.templates.get("human_message", "{input}\n\n{agent_scratchpad}")
        human = render(template, input=str(inputs.get("input", "")), agent_scratchpad=pad)
        if final:
            human = f"{human}\n\n{final_instruction()}"
        return [system(self.system_prompt), user(human)]


class _Logged(type):
    """A native tool call's action (which has its ``message_log``) is one too."""

    def __instancecheck__(cls, obj: object) -> bool:
        return type.__instancecheck__(cls, obj) or isinstance(obj, ToolCallAction)


@record
class AgentActionMessageLog(AgentAction, metaclass=_Logged):
    """An action with the messages that produced it (LangChain's name); ``message_log``. The
    tool-calling agent's actions are instances (``isinstance``) with their message."""

    message_log: tuple[Message, ...] = ()


class hub:
    """``hub.pull(NAME)`` for the well-known agent prompts, from the package (no network)."""

    PROMPTS: ClassVar[dict[str, str]] = {
        "hwchase17/react": "react",
        "hwchase17/react-chat": "conversational",
        "hwchase17/structured-chat-agent": "structured_chat_system",
        "hwchase17/self-ask-with-search": "self_ask",
    }

    @staticmethod
    def pull(name: str) -> PromptTemplate:
        """Our own wording of the prompt ``name`` (same variables); others are refused."""
        base = hub.PROMPTS.get(name.split(":")[0])
        if base is None:
            raise ConfigError(f"no prompt {name!r} here (nothing is fetched from a network "
                              f"hub); known: {', '.join(hub.PROMPTS)}; or use "
                              "PromptTemplate.from_template(TEXT)")
        return PromptTemplate.from_template(load(base))


_ROLES = {"system": "system", "human": "user", "user": "user", "ai": "assistant",
          "assistant": "assistant"}


@record(frozen=False)
class ChatPromptTemplate:
    """A prompt of several messages, ``(role, template)`` each (``system``, ``human``, ``ai``).

    ``format_messages(**values)`` gives the messages; ``template`` is their text joined, so
    ``create_react_agent`` takes one too (its variables must then be the ReAct ones).
    """

    messages: list[tuple[str, str]]
    input_variables: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for role, _ in self.messages:
            if role not in _ROLES:
                raise ValueError(f"unknown message role {role!r}; use one of "
                                 + ", ".join(_ROLES))
        if not self.input_variables:
            self.input_variables = sorted({v for _, t in self.messages for v in variables(t)})

    @classmethod
    def from_messages(cls, messages: Sequence[tuple[str, str] | Message]) -> ChatPromptTemplate:
        """From ``[("system", "..."), ("human", "{input}")]`` (or messages)."""
        pairs = [(m.role if m.role != "user" else "human", m.content)
                 if isinstance(m, Message) else (str(m[0]), str(m[1])) for m in messages]
        return cls(pairs)

    @classmethod
    def from_template(cls, template: str) -> ChatPromptTemplate:
        """One human message."""
        return cls([("human", template)])

    @property
    def template(self) -> str:
        """The messages' templates, joined."""
        return "\n\n".join(t for _, t in self.messages)

    def format_messages(self, **values: object) -> list[Message]:
        """The messages with each variable filled; a missing one is a KeyError naming it."""
        return [Message(_ROLES[role], fill(text, self.input_variables, values))  # type: ignore[arg-type]
                for role, text in self.messages]

    def invoke(self, values: Mapping[str, object], config: object = None) -> list[Message]:
        """``format_messages`` as a runnable step."""
        return self.format_messages(**values)

    def partial(self, **values: object) -> ChatPromptTemplate:
        """This prompt with some variables filled now (LangChain's ``partial``)."""
        filled = {k: str(v) for k, v in values.items()}
        return type(self)([(role, render(text, **filled)) for role, text in self.messages],
                          [v for v in self.input_variables if v not in values])


class AgentScratchPadChatPromptTemplate(ChatPromptTemplate):
    """A chat prompt whose ``{agent_scratchpad}`` is made from ``intermediate_steps``
    (``format_messages(input=..., intermediate_steps=[(action, observation), ...])``)."""

    def format_messages(self, **values: Any) -> list[Message]:
        """The messages, the steps rendered as the work so far."""
        steps = values.pop("intermediate_steps", None) or []
        values["agent_scratchpad"] = scratchpad(steps, "Observation: ", "Thought: ")
        return super().format_messages(**values)
