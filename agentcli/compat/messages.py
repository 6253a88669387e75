"""LangChain's messages and the model written LangChain's way.

``AIMessage``, ``HumanMessage``, ``SystemMessage`` and ``ToolMessage`` build agentcli
:class:`~agentcli.schema.Message` objects (and ``isinstance`` checks them by role); a message's
``tool_calls`` read like LangChain's dicts (``call["id"]``, ``call["name"]``, ``call["args"]``).
``BaseChatModel`` here is a model written LangChain's way: override ``_generate(messages,
stop=None, run_manager=None, **kwargs)`` and return ``ChatResult(generations=[ChatGeneration(
message=AIMessage(...))])``; ``bind_tools`` returns the model itself.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from dataclasses import field
from typing import Any, TypedDict

from agentcli.compat.callbacks import CallbackManagerForLLMRun
from agentcli.models.base import BaseChatModel as _Model
from agentcli.models.base import TokenSink
from agentcli.records import record
from agentcli.schema import ChatResult as _Result
from agentcli.schema import Message, Role
from agentcli.schema import ToolCall as _Call


class ToolCall(TypedDict, total=False):
    """A tool call as LangChain writes it."""

    name: str
    args: dict[str, object]
    id: str


class _ByRole(type):
    """Calling a message class builds an agentcli :class:`Message` of its role; ``isinstance``
    checks the role."""

    role: Role | None = None

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Message) and (cls.role is None or obj.role == cls.role)

    def __call__(cls, content: str = "", *, tool_calls: Sequence[ToolCall] = (),
                 tool_call_id: str | None = None, name: str | None = None,
                 **_: object) -> Message:
        if cls.role is None:
            raise TypeError("BaseMessage is abstract: build an AIMessage, HumanMessage, "
                            "SystemMessage or ToolMessage")
        if cls.role == "tool" and tool_call_id is None:
            raise TypeError("ToolMessage needs tool_call_id= (the call it answers)")
        calls = tuple(_Call(str(c.get("id") or f"call_{n}"), str(c.get("name") or ""),
                            json.dumps(c.get("args") or {}, ensure_ascii=False))
                      for n, c in enumerate(tool_calls))
        if cls.role != "tool":  # only a tool result carries a call id and a name
            return Message(cls.role, content, tool_calls=calls)
        return Message("tool", content, tool_call_id=tool_call_id, name=name)


class BaseMessage(metaclass=_ByRole):
    """Any message (``isinstance(m, BaseMessage)`` is true for every agentcli message)."""


class AIMessage(metaclass=_ByRole):
    """An assistant message, optionally with tool calls (LangChain dicts)."""

    role = "assistant"


class HumanMessage(metaclass=_ByRole):
    """A user message."""

    role = "user"


class SystemMessage(metaclass=_ByRole):
    """A system message."""

    role = "system"


class ToolMessage(metaclass=_ByRole):
    """A tool result answering the call ``tool_call_id``."""

    role = "tool"


@record(frozen=False)
class ChatGeneration:
    """One generation: the model's message."""

    message: Message


@record(frozen=False)
class ChatResult:
    """What a LangChain-style ``_generate`` returns."""

    generations: list[ChatGeneration]
    llm_output: dict[str, object] | None = field(default=None)


class BaseChatModel(_Model):
    """A model written LangChain's way: implement ``_generate`` (and ``_llm_type``)."""

    def __init__(self, **_: object) -> None:
        self.name = getattr(self, "_llm_type", None) or type(self).__name__

    def _generate(self, messages: list[Message], stop: list[str] | None = None,
                  run_manager: object = None, **kwargs: object) -> ChatResult:
        raise NotImplementedError(f"{type(self).__name__} must implement _generate")

    def bind_tools(self, tools: Sequence[object], **kwargs: object) -> BaseChatModel:
        """The tools reach the model with each request; binding returns the model itself."""
        return self

    def generate(self, messages: Sequence[Message], *, stop: Sequence[str] | None = None,
                 tools: Sequence[dict[str, Any]] | None = None,
                 on_token: TokenSink | None = None, **params: object) -> _Result:
        """One request through ``_generate``."""
        params.pop("response_schema", None)
        manager = CallbackManagerForLLMRun(on_token)
        if "run_manager" in inspect.signature(self._generate).parameters:
            params["run_manager"] = manager
        out = self._generate(list(messages), stop=list(stop) if stop else None, **params)
        message = out.generations[0].message if out.generations else Message("assistant", "")
        if on_token is not None and message.content and not manager.streamed:
            on_token(message.content)  # the reply whole, as one token
        return _Result(message.content, message.tool_calls, "stop")
