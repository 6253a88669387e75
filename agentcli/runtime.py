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
    options: dict[str, Any] = {
        "temperature": settings.temperature,
        "timeout": settings.request_timeout,
        "max_retries": int(settings.retry.get("attempts", settings.max_retries)),
        "on_retry": _report_retry,
        # local-models (issue 14): how a JSON Schema is sent, and the reply cap of local servers
        "structured_actions": settings.structured_actions,
        "local_max_tokens": settings.local_max_tokens,
    }
    options.update({k: settings.retry[k] for k in ("backoff_base", "backoff_max")
                    if k in settings.retry})
    model = get_model(settings.model, env=env, base_url=settings.base_url, record=record,
                      **options)
    if settings.fallback_models:
        from agentcli.models.fallback import FallbackChatModel

        spares = [get_model(name, env=env, **options) for name in settings.fallback_models]
        model = FallbackChatModel([model, *spares])
    if settings.cache:
        from agentcli.cache import CachedChatModel, default_cache_path

        path = Path(settings.cache_path).expanduser() if settings.cache_path else (
            default_cache_path(env))
        model = CachedChatModel(model, path, params={"temperature": settings.temperature})
    return model


def _report_retry(info: dict[str, Any]) -> None:
    """Make a provider retry visible to the run's callbacks (trace, metrics)."""
    from agentcli.models.base import report

    report(f"retry {info['attempt']} of {info['model']} in {info['delay']:g}s: {info['error']}",
           kind="retry", **info)


def check_budget(settings: Settings, model_name: str) -> None:
    """A cost budget needs a price for the model; say so before the run, not after."""
    from agentcli.pricing import price_of, use_prices

    use_prices(settings.prices)
    if settings.max_cost is not None and price_of(model_name) is None:
        raise ConfigError(
            f"--max-cost needs a price for {model_name}, which the price table does not list; "
            "add it to a YAML file given as `prices:` in the config "
            "(provider: {model: {input: USD, output: USD}} per 1M tokens)"
        )


def build_executor(
    settings: Settings,
    llm: BaseChatModel,
    *,
    approver: Any = None,
    callbacks: Iterable[BaseCallbackHandler] = (),
    tool_extras: Mapping[str, Any] | None = None,
) -> Any:
    """Load the tools (named, module, YAML, MCP) and wrap the agent in an AgentExecutor.

    ``tool_extras`` are runtime objects for tools, e.g. the CLI's ``human_input`` function.
    """
    from agentcli.agents import DEFAULT_AGENT, initialize_agent
    from agentcli.executor import deny_all
    from agentcli.tools.custom import load_configured_tools

    check_budget(settings, llm.name)
    tools = load_configured_tools(settings, llm, tool_extras)
    # local-models (issue 14), interim until agents put the schema in their own requests:
    # the agent's model calls carry the action schema; the tools keep the plain model.
    from agentcli.agents.action_schema import schema_for_agent

    schema = schema_for_agent(settings.agent or DEFAULT_AGENT, tools, settings.structured_actions)
    agent_llm = llm
    if schema is not None:
        from agentcli.models.schema_default import WithResponseSchema

        agent_llm = WithResponseSchema(llm, schema)
    return initialize_agent(
        tools,
        agent_llm,
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
        max_tokens=settings.max_tokens,
        max_cost=settings.max_cost,
    )
