"""Build a model, tools and an executor from settings (shared by run, chat and batch)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agents import DEFAULT_AGENT, agent_class
from agentcli.agents.action_schema import schema_for_agent
from agentcli.agents.prompt_style import resolve_style
from agentcli.agents.prompts import user_templates
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.config import Settings
from agentcli.create import initialize_agent
from agentcli.errors import AgentCliError, ConfigError
from agentcli.events import notify
from agentcli.executor import deny_all
from agentcli.models import get_model
from agentcli.models.base import BaseChatModel
from agentcli.models.media import forward_media
from agentcli.models.options import effective_options
from agentcli.models.presets import PRESETS
from agentcli.pricing import load_prices, price_of
from agentcli.tools.custom import module_state_schema
from agentcli.tools.resolve import load_configured_tools

if TYPE_CHECKING:
    from agentcli.executor import AgentExecutor
    from agentcli.middleware import Approver
    from agentcli.pricing import PriceTable
    from agentcli.state import StateSchema
    from agentcli.tools.base import Tool


def build_model(
    settings: Settings, env: Mapping[str, str], *, record: str | Path | None = None
) -> BaseChatModel:
    """The configured model (``settings.model`` must be set)."""
    if not settings.model:
        raise ConfigError("no model configured")
    sent = effective_options(settings.temperature, settings.model_options)
    body = {k: v for k, v in sent.items() if k != "temperature"}
    options: dict[str, Any] = {
        "temperature": sent["temperature"],
        "options": body,
        "timeout": settings.read_timeout,  # between bytes; request_timeout bounds the whole
        "request_timeout": settings.request_timeout,
        "max_retries": int(settings.retry.get("attempts", settings.max_retries)),
        "on_retry": _report_retry,
        # local-models (issue 14): how a JSON Schema is sent, and the reply cap of local servers
        "structured_actions": settings.structured_actions,
        "local_max_tokens": settings.local_max_tokens,
    }
    options.update({k: settings.retry[k] for k in ("backoff_base", "backoff_max")
                    if k in settings.retry})
    model = get_model(settings.model, env=env, base_url=settings.base_url_for(settings.model),
                      record=record, **options)
    if settings.fallback_models:
        from agentcli.models.fallback import FallbackChatModel

        # a spare talks to the configured base URL if it is for the spare's provider
        spares = [get_model(name, env=env, **options, base_url=settings.base_url_for(name))
                  for name in settings.fallback_models]
        model = FallbackChatModel([model, *spares])
    if settings.cache:
        from agentcli.cache import CachedChatModel, default_cache_path

        path = Path(settings.cache_path).expanduser() if settings.cache_path else (
            default_cache_path(env))
        model = CachedChatModel(model, path, params=sent)
    return model


def _report_retry(info: dict[str, object]) -> None:
    """Make a provider retry visible to the run's callbacks (trace, metrics)."""
    notify("retry", f"retry {info['attempt']} of {info['model']} in {info['delay']:g}s: "
           f"{info['error']}", **info)


def check_budget(settings: Settings, model_name: str) -> PriceTable:
    """The run's price table; a cost budget needs a price for the model, said before the run."""
    table = load_prices(settings.prices)
    if settings.max_cost is not None and price_of(model_name, table) is None:
        raise ConfigError(
            f"--max-cost needs a price for {model_name}, which the price table does not list; "
            "add it to a YAML file given as `prices:` in the config "
            "(provider: {model: {input: USD, output: USD}} per 1M tokens)"
        )
    return table


def build_executor(
    settings: Settings,
    llm: BaseChatModel,
    *,
    approver: Approver | None = None,
    callbacks: Iterable[BaseCallbackHandler] = (),
    tool_extras: Mapping[str, Any] | None = None,
    warnings: list[str] | None = None,
) -> AgentExecutor:
    """Load the tools (named, module, YAML, MCP) and wrap the agent in an AgentExecutor.

    ``tool_extras`` are runtime objects for tools, e.g. the CLI's ``human_input`` function;
    ``warnings`` receives what loading went on without (a broken plugin, a server that did
    not start), for the caller to say.
    """
    prices = check_budget(settings, llm.name)
    cls = agent_class(settings.agent or DEFAULT_AGENT)
    templates = user_templates(cls, settings.prompt_file)
    tools = load_configured_tools(settings, llm, tool_extras, warnings=warnings)
    provider = (settings.model or "").partition("/")[0]
    takes_search = "self_ask_tool" in inspect.signature(cls).parameters  # self-ask only
    # A structured answer (``--schema``, ``response_format``) is an input of each run
    # (``executor.stream(..., response_format=...)``), not part of the executor.
    given: dict[str, Any] = {  # None: not passed (agent types differ in what they take)
        "templates": templates or None,
        "self_ask_tool": (settings.self_ask_tool or None) if takes_search else None,
        "system_extra": settings.system or None,
        # only tool messages carry media
        "tool_media": forward_media(settings.tool_media, llm.name) if cls.native_tools else None,
        # each JSON-blob request carries it (local servers constrain to it)
        "action_schema": schema_for_agent(cls, tools, settings.structured_actions),
        "prompt_style": resolve_style(
            settings.prompt_style, llm.name, compact_below_b=settings.compact_below_b,
            local=provider in PRESETS and PRESETS[provider].local),  # ollama, llamacpp...
    }
    agent_kwargs = {k: v for k, v in given.items() if v is not None}
    return initialize_agent(
        tools,
        llm,
        settings.agent or DEFAULT_AGENT,
        agent_kwargs=agent_kwargs,
        stream_tokens=settings.stream,
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
        prices=prices,
        stall_limit=settings.stall_limit,
        state_schema=state_schema(settings),
        tool_refresh=live_tools(settings, llm, tool_extras) if any(
            t.source == "MCP" for t in tools) else None,
    )


def live_tools(settings: Settings, llm: BaseChatModel, tool_extras: Mapping[str, Any] | None
               ) -> Callable[[], list[Tool] | None]:
    """The run's tools again, through the same loading path, when an MCP server's tool list
    changed (``tools/list_changed``); None while nothing changed. A new dangerous tool not
    allowed is held back (the rest of the new list is offered) and a notice says why; a list
    that cannot load at all keeps the old one and says why."""
    from agentcli.mcp.pool import settle, tools_version  # a run with MCP tools only

    seen = [tools_version()]

    def refresh() -> list[Tool] | None:
        now = tools_version()
        if now == seen[0]:
            return None
        seen[0] = now
        settle()

        held: list[str] = []
        warned: list[str] = []
        try:
            tools = load_configured_tools(settings, llm, tool_extras, held=held, warnings=warned)
        except AgentCliError as err:
            notify("tools_changed", f"The tools changed, but the new list did not load: {err}")
            return None
        for line in [*(f"Held back a new {refusal}" for refusal in held), *warned]:
            notify("tools_changed", line)
        return tools

    return refresh


def state_schema(settings: Settings) -> StateSchema:
    """The run's state schema: a --tools-module's ``state_schema`` plus YAML ``state:``."""
    from agentcli.state import StateSchema, fields_from_yaml

    schema = StateSchema.of(module_state_schema(settings.tools_module or ()))
    if settings.state:
        schema = schema.extend(fields_from_yaml(settings.state, "config `state`"))
    return schema
