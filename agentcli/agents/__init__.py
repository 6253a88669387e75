"""Agent types, their registry, and ``initialize_agent``."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from enum import Enum
from typing import Any

from agentcli.errors import ConfigError
from agentcli.models.base import BaseChatModel
from agentcli.tools.base import Tool


class AgentType(str, Enum):
    """The agent types, named as LangChain names them."""

    ZERO_SHOT_REACT_DESCRIPTION = "zero-shot-react-description"
    CHAT_ZERO_SHOT_REACT_DESCRIPTION = "chat-zero-shot-react-description"
    STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION = "structured-chat-zero-shot-react-description"
    CONVERSATIONAL_REACT_DESCRIPTION = "conversational-react-description"
    CHAT_CONVERSATIONAL_REACT_DESCRIPTION = "chat-conversational-react-description"
    TOOL_CALLING = "tool-calling"
    SELF_ASK_WITH_SEARCH = "self-ask-with-search"


_AGENTS: dict[str, str] = {
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
}
DEFAULT_AGENT = AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION.value


def register_agent(name: str, target: str) -> None:
    """Register an agent class by import path ``module:Class`` (loaded lazily)."""
    _AGENTS[name] = target


def agent_names() -> list[str]:
    """Every registered agent type name."""
    return list(_AGENTS)


def agent_class(name: str | AgentType) -> Any:
    """The agent class for a type name; unknown names raise a ConfigError with suggestions."""
    key = name.value if isinstance(name, AgentType) else str(name)
    target = _AGENTS.get(key)
    if target is None:
        close = difflib.get_close_matches(key, list(_AGENTS), n=1, cutoff=0.4)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ConfigError(f"unknown agent type {key!r}{hint} (see `agent agents list`)")
    from importlib import import_module

    module, cls = target.split(":")
    return getattr(import_module(module), cls)


def initialize_agent(
    tools: Sequence[Tool],
    llm: BaseChatModel,
    agent: str | AgentType = DEFAULT_AGENT,
    *,
    agent_kwargs: dict[str, Any] | None = None,
    **executor_options: Any,
) -> Any:
    """Build an AgentExecutor for ``agent`` over ``tools`` and ``llm``."""
    from agentcli.executor import AgentExecutor

    agent_obj = agent_class(agent)(llm, tools, **(agent_kwargs or {}))
    return AgentExecutor(agent_obj, tools, **executor_options)


__all__ = ["DEFAULT_AGENT", "AgentType", "agent_class", "agent_names", "initialize_agent"]
