"""MCP client: servers' tools, resources and prompts over stdio, Streamable HTTP and SSE.

Public API (cheap to import; the ``mcp`` SDK loads only when a server is started)::

    server_configs(settings_or_mapping) -> dict[str, ServerConfig]   # parse only, no I/O

A server's tools as agentcli Tools (listing, loading, danger) are :mod:`agentcli.tools.mcp`.

Modules: ``config`` (settings), ``cache`` (tool lists, data dir), ``transports`` (stdio, HTTP,
SSE), ``connection`` (one live session), ``pool`` (sessions by config, parallel start),
``results`` (observations), ``text`` (one-line safe messages).
"""

from __future__ import annotations

from agentcli.mcp.cache import ToolInfo
from agentcli.mcp.config import ServerConfig, server_configs

__all__ = ["ServerConfig", "ToolInfo", "server_configs"]
