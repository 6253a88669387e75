"""MCP servers as a tool source: which servers are configured, their last known tool lists
(cached per server config in the data dir, see :mod:`agentcli.mcp.cache`), and starting one
server only when one of its tools is used. A thin adapter over :mod:`agentcli.mcp`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.tools.base import Tool


@dataclass(frozen=True)
class MCPToolInfo:
    """What we remember of one MCP tool without its server running."""

    name: str  # without the server prefix
    description: str = ""
    dangerous: bool = False
    danger_reason: str = ""
    schema: dict[str, Any] | None = None


def _parsed(server: str, conf: Any) -> Any:
    """The parsed config for ``conf`` (a raw mapping is parsed on the way)."""
    from agentcli.mcp import server_configs as parse

    return parse({server: conf})[server] if isinstance(conf, Mapping) else conf


def close_servers() -> None:
    """Close every MCP server this process started (tests; the client also does it at exit)."""
    from agentcli.mcp.pool import close_all

    close_all()


def server_configs(settings: Any) -> dict[str, Any]:
    """The configured MCP servers by name: parsed and checked, nothing started."""
    from agentcli.paths import MCP_PROJECT_FILE

    if settings is None or not (isinstance(settings, Mapping)
                                or getattr(settings, "mcp_servers", None)
                                or (Path.cwd() / MCP_PROJECT_FILE).is_file()):
        return {}  # none configured: the MCP client is not even imported
    from agentcli.mcp import server_configs as parse

    return dict(parse(settings))


def _info(conf: Any, info: Any) -> MCPToolInfo:
    from agentcli.mcp import tool_danger

    dangerous, reason = tool_danger(conf, info)
    return MCPToolInfo(info.name, info.description or "", dangerous, reason,
                       dict(info.input_schema or {}) or None)


def cached_tools(server: str, conf: Any) -> list[MCPToolInfo] | None:
    """The tool list seen the last time this server (with this config) ran; None if never."""
    from agentcli.mcp.cache import cached_tools as cached

    conf = _parsed(server, conf)
    found = cached(conf)
    return None if found is None else [_info(conf, i) for i in found]


def cached_tool(server: str, conf: Any, name: str) -> Tool | None:
    """Tool ``name`` of ``server`` as the model would see it, built from the cached list
    without starting the server (for display: it has no connection to call)."""
    from agentcli.mcp.cache import cached_tools as cached
    from agentcli.mcp.tools import make_tool

    conf = _parsed(server, conf)
    info = next((i for i in cached(conf) or [] if i.name == name), None)
    return None if info is None else make_tool(conf, None, info)


def server_roots(tool_settings: Mapping[str, Any]) -> list[Path]:
    """The roots declared to a server: the file tools' root (else the current directory)."""
    from agentcli.errors import ToolLoadError
    from agentcli.tools.sandbox import tool_root

    try:
        return [Path(tool_root(dict(tool_settings)))]
    except ToolLoadError:
        return [Path.cwd()]


def load_server_tools(
    server: str, conf: Any, only: set[str] | None, tool_settings: Mapping[str, Any] | None = None
) -> list[Tool]:
    """Start (once per process) the server ``server`` and build its tools (``only`` these
    short names when given). Other servers are not started."""
    from agentcli.mcp import load_server_tools as load

    return list(load(server, _parsed(server, conf), only, roots=server_roots(tool_settings or {})))


def refresh_tools(server: str, conf: Any) -> list[MCPToolInfo]:
    """Start the server, list its tools and update the cache."""
    from agentcli.mcp import list_tools

    conf = _parsed(server, conf)
    return [_info(conf, i) for i in list_tools(server, conf, refresh=True)]
