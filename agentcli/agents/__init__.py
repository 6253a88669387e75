"""Agent types, their registry, and ``initialize_agent``."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.tools.base import Tool

if TYPE_CHECKING:
    from agentcli.agents.base import Agent
    from agentcli.executor import AgentExecutor
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


def agent_class(name: str | AgentType) -> type[Agent]:
    """The agent class for a type name; unknown names raise a ConfigError with suggestions."""
    key = name.value if isinstance(name, AgentType) else str(name)
    target = _AGENTS.get(key)
    if target is None:
        close = difflib.get_close_matches(key, list(_AGENTS), n=1, cutoff=0.4)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ConfigError(f"unknown agent type {key!r}{hint} (see `agent agents list`)")
    from importlib import import_module

    module, cls = target.split(":")
    found: type[Agent] = getattr(import_module(module), cls)
    return found


def build_agent(
    agent: str | AgentType, tools: Sequence[Tool], llm: BaseChatModel | None = None,
    **agent_kwargs: Any,
) -> Agent:
    """An agent of type ``agent`` over ``tools``; refuses a model it cannot work with."""
    cls = agent_class(agent)
    if cls.native_tools and llm is not None and not getattr(llm, "supports_tools", True):
        raise ConfigError(
            f"the model {llm.name!r} does not support native tool calling; use a text "
            "agent type such as --agent chat-zero-shot-react-description"
        )
    from agentcli.agents.prompt_parts import take_parts

    options = dict(agent_kwargs)
    parts = take_parts(cls.agent_type, options)
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


def initialize_agent(
    tools: Sequence[Tool],
    llm: BaseChatModel,
    agent: str | AgentType | None = None,
    callback_manager: Any = None,
    agent_path: str | Path | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    *,
    verbose: bool = False,
    **executor_options: Any,
) -> AgentExecutor:
    """Build an AgentExecutor for ``agent`` over ``tools`` and ``llm``.

    ``verbose=True`` prints the trace to stderr, as the seed's example does; ``agent_path``
    builds the agent a file from ``executor.save_agent`` describes (instead of ``agent``).
    """
    import inspect

    from agentcli.executor import AgentExecutor

    accepted = set(inspect.signature(AgentExecutor).parameters) - {
        "agent", "tools", "llm", "verbose", "callback_manager"}
    unknown = sorted(set(executor_options) - accepted)
    if unknown:
        raise TypeError(f"initialize_agent got unknown argument(s) {unknown}; it takes tools, "
                        "llm, agent, callback_manager, agent_path, agent_kwargs, verbose and: "
                        + ", ".join(sorted(accepted)))
    kwargs = dict(agent_kwargs or {})
    if agent_path is not None:
        if agent is not None:
            raise TypeError("initialize_agent takes agent or agent_path, not both")
        from agentcli.agents.saved import load_agent_file

        agent, saved = load_agent_file(agent_path)
        kwargs = saved | kwargs
    agent_obj = build_agent(agent or DEFAULT_AGENT, tools, llm, **kwargs)
    return AgentExecutor(agent_obj, tools, llm=llm, verbose=verbose,
                         callback_manager=callback_manager, **executor_options)


def create_react_agent(llm: BaseChatModel, tools: Sequence[Tool], prompt: Any, *,
                       tools_renderer: Callable[[list[Tool]], str] | None = None,
                       **unknown: Any) -> Agent:
    """A zero-shot ReAct agent over ``tools`` whose prompt is ``prompt`` (a template object
    with ``.template``, or the text), bound to ``llm``: ``AgentExecutor(agent=..., tools=...)``
    runs it. The template must use exactly {tools}, {tool_names}, {input} and
    {agent_scratchpad} (a ConfigError names what is missing); ``tools_renderer`` writes the
    {tools} text (else one ``name: description`` line per tool)."""
    from agentcli.agents.prompts import check_template, template_name

    if unknown:
        raise TypeError(f"create_react_agent got unknown argument(s) {sorted(unknown)}; "
                        "accepted: llm, tools, prompt, tools_renderer")
    kind = AgentType.ZERO_SHOT_REACT_DESCRIPTION.value
    text = str(getattr(prompt, "template", prompt))
    check_template(kind, text, "given to create_react_agent")
    if tools_renderer is not None:
        text = text.replace("{tools}", tools_renderer(list(tools)))
    built = build_agent(kind, tools, llm, templates={template_name(kind): text})
    built.runnable = True  # type: ignore[attr-defined]  # logs as LangChain's runnable agents
    return built


__all__ = [
    "DEFAULT_AGENT",
    "AgentType",
    "agent_class",
    "agent_names",
    "build_agent",
    "create_react_agent",
    "initialize_agent",
]
