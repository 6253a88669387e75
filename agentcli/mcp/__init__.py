"""MCP client: servers' tools, resources and prompts over stdio, Streamable HTTP and SSE.

Public API (cheap to import; the ``mcp`` SDK loads only when a server is started)::

    server_configs(settings_or_mapping) -> dict[str, ServerConfig]   # parse only, no I/O
    list_tools(name, conf, *, refresh=False) -> list[ToolInfo]        # cached per config hash
    load_server_tools(name, conf, only=None, *, roots=()) -> list[Tool]  # starts only that server
    tool_danger(conf, info) -> (dangerous, reason)

Modules: ``config`` (settings), ``cache`` (tool lists, data dir), ``transports`` (stdio, HTTP,
SSE), ``connection`` (one live session), ``pool`` (sessions by name, parallel start), ``tools``
(Tool objects, danger), ``results`` (observations), ``text`` (one-line safe messages).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.mcp.cache import ToolInfo
from agentcli.mcp.config import ServerConfig, server_configs

if TYPE_CHECKING:
    from agentcli.tools.base import Tool

__all__ = ["ServerConfig", "ToolInfo", "list_tools", "load_server_tools", "server_configs",
           "tool_danger"]


def list_tools(name: str, conf: ServerConfig, *, refresh: bool = False) -> list[ToolInfo]:
    """The server's tools, from the cache unless ``refresh`` (see :mod:`agentcli.mcp.tools`)."""
    from agentcli.mcp import tools

    return tools.list_tools(name, conf, refresh=refresh)


def load_server_tools(name: str, conf: ServerConfig, only: set[str] | None = None,
                      *, roots: Any = ()) -> list[Tool]:
    """Start server ``name`` only and build its tools (``only``: bare tool names)."""
    from agentcli.mcp import tools

    return tools.load_server_tools(name, conf, only, roots=roots)


def tool_danger(conf: ServerConfig, info: ToolInfo) -> tuple[bool, str]:
    """Whether a server tool is dangerous and why (config overrides win over annotations)."""
    from agentcli.mcp import tools

    return tools.tool_danger(conf, info)
