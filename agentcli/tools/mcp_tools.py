"""MCP servers as tool specs for a caller's own list (``load_tools(specs=...)``): thin
wrappers over :mod:`agentcli.mcp`.

Each server's tools become ``server.tool`` plus a group ``server``. Lists come from the
cache when this config was seen before, so registering starts nothing; a tool's factory starts
only its own server. Servers without a cached list start in parallel; one that fails becomes a
warning line and a ``server`` entry whose loading reports the failure, and the rest keep working.
"""

from __future__ import annotations

from typing import Any

from agentcli.errors import ToolLoadError
from agentcli.mcp.cache import ToolInfo, cached_tools
from agentcli.mcp.config import INSTALL_HINT, ServerConfig, check_servers, server_configs
from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.mcp_source import server_roots
from agentcli.tools.registry import ToolSpec

__all__ = ["INSTALL_HINT", "check_servers", "connect", "register_mcp_servers"]


def connect(name: str, conf: dict[str, Any] | ServerConfig) -> tuple[Any, list[ToolInfo]]:
    """Start (once per process) server ``name``; return its connection and its tool list."""
    from agentcli.mcp.pool import get_connection

    parsed = conf if isinstance(conf, ServerConfig) else server_configs({name: conf})[name]
    conn = get_connection(parsed)
    return conn, conn.tools


def _register_server(conf: ServerConfig, infos: list[ToolInfo], into: list[ToolSpec]
                     ) -> list[str]:
    from agentcli.mcp.tools import RESOURCE_TOOL, tool_danger

    names, any_danger = [], False
    extra = [] if any(i.name == RESOURCE_TOOL for i in infos) else [RESOURCE_TOOL]
    for tool_name in [i.name for i in infos] + extra:
        info = next((i for i in infos if i.name == tool_name), None)
        dangerous, reason = tool_danger(conf, info) if info else (False, "")
        any_danger = any_danger or dangerous

        def factory(llm: Any = None, _n: str = tool_name, **settings: Any) -> list[Tool]:
            from agentcli.mcp.tools import load_server_tools

            return load_server_tools(conf.name, conf, {_n}, roots=server_roots(settings))

        summary = (info.description if info else f"Read a resource of {conf.name} by URI")
        into.append(ToolSpec(f"{conf.name}.{tool_name}", factory, summary.split("\n")[0],
                             needs=ToolNeeds(extra="mcp"), dangerous=dangerous,
                             danger_reason=reason, source="MCP"))
        if info is not None or conf.resources:
            names.append(f"{conf.name}.{tool_name}")
    into.append(ToolSpec(conf.name, None, f"Group: every tool of MCP server {conf.name}",
                         members=tuple(names), dangerous=any_danger,
                         danger_reason="some of its tools are dangerous" if any_danger else "",
                         source="MCP"))
    return names


def _register_failure(conf: ServerConfig, err: ToolLoadError, into: list[ToolSpec]) -> None:
    def factory(llm: Any = None, **_: Any) -> Tool:
        raise err

    into.append(ToolSpec(conf.name, factory, f"MCP server {conf.name} (failed to start)",
                         needs=ToolNeeds(extra="mcp"), source="MCP"))


def register_mcp_servers(servers: dict[str, dict[str, Any]], into: list[ToolSpec], *,
                         start: bool = True, warnings: list[str] | None = None) -> list[str]:
    """Put every server's tool specs (source MCP) in ``into``, the caller's own list (for
    ``load_tools(specs=...)``); return the tool names.

    Cached lists are used as they are; the other servers start in parallel when ``start``;
    ``warnings`` receives a line per server that did not start.
    """
    confs = server_configs(servers)
    names: list[str] = []
    missing = {}
    for name, conf in confs.items():
        cached = cached_tools(conf)
        if cached is None:
            missing[name] = conf
        else:
            names += _register_server(conf, cached, into)
    if missing and start:
        from agentcli.mcp.pool import start_many

        for name, result in start_many(missing).items():
            if isinstance(result, ToolLoadError):
                if warnings is not None:
                    warnings.append(str(result))
                _register_failure(missing[name], result, into)
            else:
                names += _register_server(missing[name], result, into)
    return names
