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


_AGENTS: dict[str, str] = {
    AgentType.ZERO_SHOT_REACT_DESCRIPTION.value: "agentcli.agents.react:ReActAgent",
    AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION.value: "agentcli.agents.chat:ChatAgent",
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
        raise ConfigError(
            f"unknown agent type {key!r}{hint} (choose from: {', '.join(_AGENTS)})"
        )
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
