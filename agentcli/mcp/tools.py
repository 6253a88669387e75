"""MCP tools as agentcli Tools: danger from annotations (the config overrides), calls routed
to the server's connection, and the optional ``SERVER.read_resource`` tool."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.mcp.cache import ToolInfo, cached_tools
from agentcli.mcp.config import ServerConfig
from agentcli.tools.base import Tool, ToolNeeds

RESOURCE_TOOL = "read_resource"  # SERVER.read_resource, offered beside the server's own tools
_RESOURCE_DOC = ("Read a resource of MCP server {server} by its URI and return its contents. "
                 "Input: the resource URI.")


def tool_danger(conf: ServerConfig, info: ToolInfo) -> tuple[bool, str]:
    """Whether a server's tool is dangerous, and why: config per tool > per server > hints."""
    label = f"{conf.name}.{info.name}"
    per_tool = dict(conf.tool_danger).get(info.name)
    if per_tool is not None:
        return per_tool, f"{label} is marked dangerous in your config" if per_tool else ""
    if conf.dangerous is not None:
        reason = f"MCP server {conf.name!r} is marked dangerous in your config"
        return conf.dangerous, reason if conf.dangerous else ""
    if info.read_only is True and info.destructive is not True:
        if conf.trusted:
            return False, ""
        return True, (f"its MCP server marks {label} read-only (readOnlyHint), a hint from an "
                      f"untrusted server; set dangerous: false or trusted: true for "
                      f"{conf.name!r} in your config to run it without approval")
    if info.destructive:
        return True, f"its MCP server marks {label} destructive (destructiveHint)"
    return True, f"its MCP server does not mark {label} read-only (no readOnlyHint)"


def list_tools(name: str, conf: ServerConfig, *, refresh: bool = False) -> list[ToolInfo]:
    """The server's tools: from the cache for this config, else (or on refresh) from the server."""
    if not refresh:
        cached = cached_tools(conf)
        if cached is not None:
            return cached
    from agentcli.mcp import pool

    return pool.refresh(conf) if refresh else pool.get_connection(conf).tools


def _call_budget(conf: ServerConfig) -> float:
    # the SDK times the call out first; reconnecting (all its attempts and waits) and sending
    # the call once more may come on top
    return conf.call_timeout * 2 + conf.reconnect_budget() + 15


def _tool(conf: ServerConfig, conn: Any, name: str, description: str,
          schema: dict[str, Any] | None, call: Any) -> Tool:
    from agentcli.mcp.connection import run_async, run_sync

    label = f"{conf.name}.{name}"

    def run(*args: Any, **kw: Any) -> Any:
        try:
            return run_sync(call(*args, **kw), _call_budget(conf))
        except TimeoutError:
            raise ToolInputError(f"{label} did not answer in time") from None

    async def arun(*args: Any, **kw: Any) -> Any:
        return await run_async(call(*args, **kw))

    return Tool(label, description, func=run, coroutine=arun, args_schema=schema,
                needs=ToolNeeds(extra="mcp"), source="MCP")


def make_tool(conf: ServerConfig, conn: Any, info: ToolInfo) -> Tool:
    """One server tool, flagged dangerous per :func:`tool_danger`."""
    dangerous, reason = tool_danger(conf, info)
    tool = _tool(conf, conn, info.name, info.description or info.title or info.name,
                 info.input_schema, lambda **kw: conn.call(info.name, kw))
    return replace(tool, dangerous=dangerous, danger_reason=reason)


def resource_tool(conf: ServerConfig, conn: Any) -> Tool:
    """``SERVER.read_resource``: read-only, input is a resource URI."""
    schema = {"type": "object", "properties": {"uri": {"type": "string",
                                                       "description": "The resource URI."}},
              "required": ["uri"]}
    return _tool(conf, conn, RESOURCE_TOOL, _RESOURCE_DOC.format(server=conf.name), schema,
                 lambda uri: conn.read_resource(uri))


def load_server_tools(
    name: str, conf: ServerConfig, only: set[str] | None = None,
    *, roots: Iterable[Path] = (),
) -> list[Tool]:
    """Start server ``name`` (only it) and build its tools; ``only`` picks bare tool names.

    ``read_resource`` in ``only`` (or ``resources: true`` in the config) adds the resource tool.
    ``roots`` are declared to the server as the client's roots (default: the current directory).
    """
    from agentcli.mcp.pool import get_connection

    conn = get_connection(conf, roots)
    infos = {i.name: i for i in conn.tools}
    wanted = set(infos) if only is None else set(only)
    own_resource_tool = RESOURCE_TOOL in infos
    unknown = sorted(wanted - set(infos) - ({RESOURCE_TOOL} if not own_resource_tool else set()))
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(infos), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ToolLoadError(f"MCP server {name!r} has no tool {unknown[0]!r}{hint} "
                            f"(see `agent mcp tools {name}`)")
    tools = [make_tool(conf, conn, infos[n]) for n in infos if n in wanted]
    if not own_resource_tool and (RESOURCE_TOOL in wanted if only is not None
                                  else conf.resources):
        tools.append(resource_tool(conf, conn))
    return tools
