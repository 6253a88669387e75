"""LangChain's prompt objects: ``hub.pull``, ``ChatPromptTemplate``, and the message-log
action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from agentcli.agents.prompts import load, variables
from agentcli.agents.template import PromptTemplate, fill
from agentcli.agents.tool_calling import ToolCallAction
from agentcli.errors import ConfigError
from agentcli.schema import AgentAction, Message


class _Logged(type):
    """A native tool call's action (which has its ``message_log``) is one too."""

    def __instancecheck__(cls, obj: object) -> bool:
        return type.__instancecheck__(cls, obj) or isinstance(obj, ToolCallAction)


@dataclass(frozen=True)
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


@dataclass
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
