"""Agent types and their registry (``initialize_agent`` is in :mod:`agentcli.create`).

:data:`BUILTIN_AGENTS` is a read-only table: a new type shipped with agentcli is one module and
one line there. Any other agent class is passed as itself wherever a type name goes
(``initialize_agent(tools, llm, MyAgent)``, ``build_agent(MyAgent, ...)``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from agentcli.agents.prompt_parts import take_parts
from agentcli.errors import ConfigError
from agentcli.tools.base import Tool

if TYPE_CHECKING:
    from agentcli.agents.base import Agent
    from agentcli.models.base import BaseChatModel


class AgentType(str, Enum):  # noqa: UP042 - str() stays "AgentType.NAME", as in LangChain
    """The agent types, named as LangChain names them."""

    ZERO_SHOT_REACT_DESCRIPTION = "zero-shot-react-description"
    CHAT_ZERO_SHOT_REACT_DESCRIPTION = "chat-zero-shot-react-description"
    STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION = "structured-chat-zero-shot-react-description"
    CONVERSATIONAL_REACT_DESCRIPTION = "conversational-react-description"
    CHAT_CONVERSATIONAL_REACT_DESCRIPTION = "chat-conversational-react-description"
    TOOL_CALLING = "tool-calling"
    SELF_ASK_WITH_SEARCH = "self-ask-with-search"


# type name -> "module:Class", imported on first use
BUILTIN_AGENTS: Mapping[str, str] = MappingProxyType({
    AgentType.ZERO_SHOT_REACT_DESCRIPTION.value: "agentcli.agents.react:ReActAgent",
    AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION.value: "agentcli.agents.chat:ChatAgent",
    AgentType.STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION.value:
        "agentcli.agents.structured_chat:StructuredChatAgent",
    AgentType.CONVERSATIONAL_REACT_DESCRIPTION.value:
        "agentcli.agents.conversational:ConversationalAgent",
    AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION.value:
        "agentcli.agents.conversational:ChatConversationalAgent",
    AgentType.TOOL_CALLING.value: "agentcli.agents.tool_calling:ToolCallingAgent",
    AgentType.SELF_ASK_WITH_SEARCH.value: "agentcli.agents.self_ask:SelfAskAgent",
})
DEFAULT_AGENT = AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION.value


def agent_names() -> list[str]:
    """Every built-in agent type name."""
    return list(BUILTIN_AGENTS)


def agent_class(name: str | AgentType | type[Agent]) -> type[Agent]:
    """The agent class for a type name (a class is its own); unknown names raise a
    ConfigError with suggestions."""
    if isinstance(name, type):
        return name
    key = name.value if isinstance(name, AgentType) else str(name)
    target = BUILTIN_AGENTS.get(key)
    if target is None:
        close = difflib.get_close_matches(key, list(BUILTIN_AGENTS), n=1, cutoff=0.4)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ConfigError(f"unknown agent type {key!r}{hint} (see `agent agents list`)")
    from importlib import import_module  # (pkgutil.resolve_name would import pkgutil too)

    module, _, cls = target.partition(":")
    found: type[Agent] = getattr(import_module(module), cls)
    return found


def build_agent(
    agent: str | AgentType | type[Agent], tools: Sequence[Tool], llm: BaseChatModel | None = None,
    **agent_kwargs: Any,
) -> Agent:
    """An agent of type ``agent`` over ``tools``; refuses a model it cannot work with."""
    cls = agent_class(agent)
    if cls.native_tools and llm is not None and not getattr(llm, "supports_tools", True):
        raise ConfigError(
            f"the model {llm.name!r} does not support native tool calling; use a text "
            "agent type such as --agent chat-zero-shot-react-description"
        )
    options = dict(agent_kwargs)
    parts = take_parts(cls, options)
    parser = parts.pop("output_parser", None)
    try:
        built: Agent = cls(tools, **options, **parts)
    except TypeError as err:
        raise ConfigError(f"agent type {cls.agent_type!r}: {err}") from None
    if parser is not None:
        built.parser = parser  # type: ignore[attr-defined]
    built.llm = llm  # AgentExecutor(agent=..., tools=...) runs it with this model
    built.rebuild = lambda fresh: build_agent(agent, fresh, llm, **agent_kwargs)  # type: ignore[attr-defined]
    return built


__all__ = [
    "BUILTIN_AGENTS",
    "DEFAULT_AGENT",
    "AgentType",
    "agent_class",
    "agent_names",
    "build_agent",
]
