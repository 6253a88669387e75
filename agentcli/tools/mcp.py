"""MCP servers as a tool source, and their tools as agentcli Tools.

Which servers are configured, their last known tool lists (cached per server config in the
data dir, :mod:`agentcli.mcp.cache`), starting one server only when one of its tools is
used; each server tool's danger from its annotations (the config overrides), calls routed to
the server's connection, and the optional ``SERVER.read_resource`` tool. The MCP client
itself (configs, transports, connections, pool) is :mod:`agentcli.mcp`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.mcp.cache import ToolInfo
from agentcli.mcp.cache import cached_tools as cached
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.config import server_configs as parse
from agentcli.records import record
from agentcli.tools.base import Tool, ToolNeeds

if TYPE_CHECKING:  # schema's ~90 dataclasses cost `agent tools list` ~5 ms (bench/trees.py)
    from agentcli.schema import ContentText

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


def known_danger(conf: ServerConfig, tool: str | None) -> str | None:
    """Why ``tool`` (None: some tool of the server) is certainly dangerous, told without
    starting the server (from the config or the cached list); None when it is not, or only
    the server's own list can tell. A server not marked ``trusted`` needs no list: its hints
    are not believed, so its tools are dangerous unless the config says otherwise."""
    infos = cached(conf)
    if infos is not None:
        named = [i for i in infos if tool is None or i.name == tool]
        if named or tool is None:
            return next((why for dangerous, why in (tool_danger(conf, i) for i in named)
                         if dangerous), None)
    marked = dict(conf.tool_danger)
    if tool is not None and (marked.get(tool) is not None or conf.dangerous is not None):
        dangerous, why = tool_danger(conf, ToolInfo(tool))
        return why if dangerous else None
    if tool is None and False in marked.values():
        return None  # some tool is marked safe: which ones the server has, only it can say
    if tool is None and conf.dangerous is not None:
        return tool_danger(conf, ToolInfo(""))[1] or None
    if conf.trusted:
        return None
    what = f"{conf.name}.{tool}" if tool is not None else f"every tool of {conf.name!r}"
    return (f"MCP server {conf.name!r} is not marked trusted, so {what} runs only with "
            f"approval whatever the server says of it; set dangerous: false or trusted: true "
            f"for {conf.name!r} in your config to run it without approval")


def list_tools(conf: ServerConfig, *, refresh: bool = False) -> list[ToolInfo]:
    """The server's tools: from the cache for this config, else (or on refresh) from the server."""
    if not refresh:
        found = cached(conf)
        if found is not None:
            return found
    from agentcli.mcp import pool

    return pool.refresh(conf) if refresh else pool.get_connection(conf).tools


def _call_budget(conf: ServerConfig) -> float:
    # the SDK times the call out first; reconnecting (all its attempts and waits) and sending
    # the call once more may come on top
    return conf.call_timeout * 2 + conf.reconnect_budget() + 15


def _tool(conf: ServerConfig, name: str, description: str, schema: dict[str, Any] | None,
          call: Callable[..., Coroutine[object, object, ContentText]],
          danger: tuple[bool, str] = (False, "")) -> Tool:
    from agentcli.mcp.connection import run_async, run_sync

    label = f"{conf.name}.{name}"

    def run(*args: object, **kw: object) -> ContentText:
        try:
            return run_sync(call(*args, **kw), _call_budget(conf))
        except TimeoutError:
            raise ToolInputError(f"{label} did not answer in time") from None

    async def arun(*args: object, **kw: object) -> ContentText:
        return await run_async(call(*args, **kw))

    return Tool(label, description, func=run, coroutine=arun, args_schema=schema,
                dangerous=danger[0], danger_reason=danger[1], needs=ToolNeeds(extra="mcp"),
                source="MCP")


def make_tool(conf: ServerConfig, conn: Any, info: ToolInfo) -> Tool:
    """One server tool, flagged dangerous per :func:`tool_danger`."""
    return _tool(conf, info.name, info.description or info.title or info.name,
                 info.input_schema, lambda **kw: conn.call(info.name, kw),
                 tool_danger(conf, info))


def resource_tool(conf: ServerConfig, conn: Any) -> Tool:
    """``SERVER.read_resource``: read-only, input is a resource URI."""
    schema = {"type": "object", "properties": {"uri": {"type": "string",
                                                       "description": "The resource URI."}},
              "required": ["uri"]}
    return _tool(conf, RESOURCE_TOOL, _RESOURCE_DOC.format(server=conf.name), schema,
                 lambda uri: conn.read_resource(uri))


def load_server_tools(
    name: str, conf: ServerConfig | Mapping[str, object], only: set[str] | None = None,
    *, roots: Iterable[Path] = (),
) -> list[Tool]:
    """Start server ``name`` (only it) and build its tools; ``only`` picks bare tool names.

    ``read_resource`` in ``only`` (or ``resources: true`` in the config) adds the resource tool.
    ``roots`` (default: the server's configured ``roots``) are declared to the server as the
    client's roots; with none, no roots are declared and the server keeps to what its own
    arguments gave it. Other servers are not started.
    """
    from agentcli.mcp.pool import get_connection

    parsed = parse({name: conf})[name] if isinstance(conf, Mapping) else conf
    conn = get_connection(parsed, roots)
    infos = {i.name: i for i in conn.tools}
    wanted = set(infos) if only is None else set(only)
    own_resource_tool = RESOURCE_TOOL in infos
    unknown = sorted(wanted - set(infos) - ({RESOURCE_TOOL} if not own_resource_tool else set()))
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(infos), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ToolLoadError(f"MCP server {name!r} has no tool {unknown[0]!r}{hint} "
                            f"(see `agent mcp tools {name}`)")
    tools = [make_tool(parsed, conn, infos[n]) for n in infos if n in wanted]
    if not own_resource_tool and (RESOURCE_TOOL in wanted if only is not None
                                  else parsed.resources):
        tools.append(resource_tool(parsed, conn))
    return tools


@record
class MCPToolInfo:
    """What we remember of one MCP tool without its server running."""

    name: str  # without the server prefix
    description: str = ""
    dangerous: bool = False
    danger_reason: str = ""
    schema: dict[str, Any] | None = None


def _info(conf: ServerConfig, info: ToolInfo) -> MCPToolInfo:
    dangerous, reason = tool_danger(conf, info)
    return MCPToolInfo(info.name, info.description or "", dangerous, reason,
                       dict(info.input_schema or {}) or None)


def cached_tools(conf: ServerConfig) -> list[MCPToolInfo] | None:
    """The tool list seen the last time this server (with this config) ran; None if never."""
    found = cached(conf)
    return None if found is None else [_info(conf, i) for i in found]


def cached_tool(conf: ServerConfig, name: str) -> Tool | None:
    """Tool ``name`` of the server as the model would see it, built from the cached list
    without starting the server (for display: it has no connection to call)."""
    info = next((i for i in cached(conf) or [] if i.name == name), None)
    return None if info is None else make_tool(conf, None, info)


def refresh_tools(conf: ServerConfig) -> list[MCPToolInfo]:
    """Start the server, list its tools and update the cache."""
    return [_info(conf, i) for i in list_tools(conf, refresh=True)]
