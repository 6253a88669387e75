"""Build a model, tools and an executor from settings (shared by run, chat and batch)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.models.base import BaseChatModel


def build_model(
    settings: Settings, env: Mapping[str, str], *, record: str | Path | None = None
) -> BaseChatModel:
    """The configured model (``settings.model`` must be set)."""
    from agentcli.models import get_model

    if not settings.model:
        raise ConfigError("no model configured")
    return get_model(
        settings.model,
        env=env,
        base_url=settings.base_url,
        record=record,
        temperature=settings.temperature,
        timeout=settings.request_timeout,
        max_retries=settings.max_retries,
    )


def build_executor(
    settings: Settings,
    llm: BaseChatModel,
    *,
    approver: Any = None,
    callbacks: Iterable[BaseCallbackHandler] = (),
) -> Any:
    """Load the tools by name and wrap the agent in an AgentExecutor."""
    from agentcli.agents import DEFAULT_AGENT, initialize_agent
    from agentcli.executor import deny_all
    from agentcli.tools import load_tools

    tools = load_tools(
        settings.tools, llm=llm, allow_dangerous_tools=settings.allow_dangerous_tools,
        allow=settings.allow, **settings.tool_settings,
    )
    return initialize_agent(
        tools,
        llm,
        settings.agent or DEFAULT_AGENT,
        agent_kwargs={"stream": settings.stream, "self_ask_tool": settings.self_ask_tool},
        max_iterations=settings.max_iterations,
        max_execution_time=settings.max_execution_time,
        early_stopping_method=settings.early_stopping_method,
        handle_parsing_errors=settings.handle_parsing_errors,
        return_intermediate_steps=True,
        max_observation_chars=settings.max_observation_chars,
        approver=approver or deny_all,
        callbacks=callbacks,
    )
