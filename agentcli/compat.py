"""LangChain-shaped names, so a program written against LangChain runs with its imports changed.

``AIMessage``, ``HumanMessage``, ``SystemMessage`` and ``ToolMessage`` build agentcli
:class:`~agentcli.schema.Message` objects (and ``isinstance`` checks them by role); a message's
``tool_calls`` read like LangChain's dicts (``call["id"]``, ``call["name"]``, ``call["args"]``).
``BaseChatModel`` here is a model written LangChain's way: override ``_generate(messages,
stop=None, run_manager=None, **kwargs)`` and return ``ChatResult(generations=[ChatGeneration(
message=AIMessage(...))])``; ``bind_tools`` returns the model itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from agentcli.create import create_react_agent
from agentcli.models.base import BaseChatModel as _Model
from agentcli.models.base import TokenSink
from agentcli.schema import AgentAction, Message, Role
from agentcli.schema import ChatResult as _Result
from agentcli.schema import ToolCall as _Call

__all__ = [
    "AIMessage",
    "AgentActionMessageLog",
    "BaseChatModel",
    "BaseMessage",
    "ChatGeneration",
    "ChatOpenAI",
    "ChatResult",
    "ChatTongyi",
    "HumanMessage",
    "OpenAI",
    "PromptTemplate",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "create_react_agent",
    "hub",
]


class ToolCall(TypedDict, total=False):
    """A tool call as LangChain writes it."""

    name: str
    args: dict[str, Any]
    id: str


class _ByRole(type):
    role: Role | None = None

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Message) and (cls.role is None or obj.role == cls.role)


class BaseMessage(metaclass=_ByRole):
    """Any message (``isinstance(m, BaseMessage)`` is true for every agentcli message)."""


class AIMessage(metaclass=_ByRole):
    """An assistant message, optionally with tool calls (LangChain dicts)."""

    role = "assistant"

    def __new__(  # type: ignore[misc]
        cls, content: str = "", *, tool_calls: Sequence[ToolCall] = (), **_: Any
    ) -> Message:
        calls = tuple(_Call(str(c.get("id") or f"call_{n}"), str(c.get("name") or ""),
                            json.dumps(c.get("args") or {}, ensure_ascii=False))
                      for n, c in enumerate(tool_calls))
        return Message("assistant", content, tool_calls=calls)


class HumanMessage(metaclass=_ByRole):
    """A user message."""

    role = "user"

    def __new__(cls, content: str = "", **_: Any) -> Message:  # type: ignore[misc]
        return Message("user", content)


class SystemMessage(metaclass=_ByRole):
    """A system message."""

    role = "system"

    def __new__(cls, content: str = "", **_: Any) -> Message:  # type: ignore[misc]
        return Message("system", content)


class ToolMessage(metaclass=_ByRole):
    """A tool result answering the call ``tool_call_id``."""

    role = "tool"

    def __new__(  # type: ignore[misc]
        cls, content: str = "", *, tool_call_id: str, name: str | None = None, **_: Any
    ) -> Message:
        return Message("tool", content, tool_call_id=tool_call_id, name=name)


@dataclass
class ChatGeneration:
    """One generation: the model's message."""

    message: Message


@dataclass
class ChatResult:
    """What a LangChain-style ``_generate`` returns."""

    generations: list[ChatGeneration]
    llm_output: dict[str, Any] | None = field(default=None)


class BaseChatModel(_Model):
    """A model written LangChain's way: implement ``_generate`` (and ``_llm_type``)."""

    def __init__(self, **_: Any) -> None:
        self.name = getattr(self, "_llm_type", None) or type(self).__name__

    def _generate(self, messages: list[Message], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        raise NotImplementedError(f"{type(self).__name__} must implement _generate")

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> BaseChatModel:
        """The tools reach the model with each request; binding returns the model itself."""
        return self

    def generate(self, messages: Sequence[Message], *, stop: Sequence[str] | None = None,
                 tools: Sequence[dict[str, Any]] | None = None,
                 on_token: TokenSink | None = None, **params: Any) -> _Result:
        """One request through ``_generate``."""
        params.pop("response_schema", None)
        out = self._generate(list(messages), stop=list(stop) if stop else None, **params)
        message = out.generations[0].message if out.generations else Message("assistant", "")
        if on_token is not None and message.content:
            on_token(message.content)
        return _Result(message.content, message.tool_calls, "stop")


def ChatTongyi(*, temperature: float | None = None, model: str = "qwen-turbo",
               **options: Any) -> _Model:
    """Qwen through DashScope's OpenAI-compatible mode (``DASHSCOPE_API_KEY``), like
    LangChain's ``ChatTongyi``."""
    return _chat_model(f"dashscope/{model}", temperature, options)


def ChatOpenAI(*, temperature: float | None = None, model: str = "gpt-4o-mini",
               **options: Any) -> _Model:
    """An OpenAI chat model (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)."""
    return _chat_model(f"openai/{model}", temperature, options)


def _chat_model(spec: str, temperature: float | None, options: dict[str, Any]) -> _Model:
    from agentcli.models import get_model

    unknown = sorted(set(options) - {"api_key", "base_url"})
    if unknown:
        raise TypeError(f"unknown option(s) {unknown}; accepted: temperature, model, api_key, "
                        "base_url")
    return get_model(spec, temperature=temperature, **options)


def OpenAI(*, temperature: float | None = None, model: str = "gpt-4o-mini",
           **options: Any) -> _Model:
    """LangChain's ``OpenAI()``; agentcli speaks the chat API only, so this is a chat model."""
    return _chat_model(f"openai/{model}", temperature, options)


@dataclass(frozen=True)
class AgentActionMessageLog(AgentAction):
    """An action with the messages that produced it (LangChain's name); ``message_log``."""

    message_log: tuple[Message, ...] = ()


@dataclass
class PromptTemplate:
    """A prompt with ``{name}`` variables, as ``create_react_agent`` takes it."""

    template: str
    input_variables: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from agentcli.agents.prompts import variables

        if not self.input_variables:
            self.input_variables = sorted(variables(self.template))

    @classmethod
    def from_template(cls, template: str) -> PromptTemplate:
        """A template whose variables are the ``{name}`` placeholders in it."""
        return cls(template)

    def format(self, **values: Any) -> str:
        """The text with each variable filled; a missing one is a KeyError naming it."""
        from agentcli.agents.prompts import render

        missing = sorted(set(self.input_variables) - set(values))
        if missing:
            raise KeyError(f"missing prompt variable(s) {missing}")
        return render(self.template, **{k: str(v) for k, v in values.items()})


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
        from agentcli.agents.prompts import load
        from agentcli.errors import ConfigError

        base = hub.PROMPTS.get(name.split(":")[0])
        if base is None:
            raise ConfigError(f"no prompt {name!r} here (nothing is fetched from a network "
                              f"hub); known: {', '.join(hub.PROMPTS)}; or use "
                              "PromptTemplate.from_template(TEXT)")
        return PromptTemplate.from_template(load(base))
