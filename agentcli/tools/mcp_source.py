"""MCP servers as a tool source: which servers are configured, their last known tool lists
(cached per server config in the data dir), and starting one server only when it is used.

This is a thin adapter over the MCP client. When the client package :mod:`agentcli.mcp` is
present, its ``server_configs`` / ``list_tools`` / ``load_server_tools`` and its cache are used;
otherwise the older ``agentcli.tools.mcp_tools.connect()`` API and the cache here are.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from agentcli.tools.base import Tool

_CACHE_VERSION = 1


@dataclass(frozen=True)
class MCPToolInfo:
    """What we remember of one MCP tool without its server running."""

    name: str  # without the server prefix
    description: str = ""
    dangerous: bool = False
    danger_reason: str = ""
    schema: dict[str, Any] | None = None


def _client() -> Any:
    from agentcli.tools import mcp_tools

    return mcp_tools


def _package() -> Any:
    """The MCP client package (cheap to import: no SDK), or None where it does not exist."""
    try:
        import agentcli.mcp as package  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return package if hasattr(package, "load_server_tools") else None


def _parsed(package: Any, server: str, conf: Any) -> Any:
    """The package's parsed config for ``conf`` (a raw mapping is parsed on the way)."""
    return package.server_configs({server: conf})[server] if isinstance(conf, Mapping) else conf


def close_servers() -> None:
    """Close every MCP server this process started (tests; the client also does it at exit)."""
    if _package() is not None:
        from agentcli.mcp.pool import close_all  # type: ignore[import-not-found,unused-ignore]

        close_all()
        return
    client = _client()
    client._close_all()


def server_configs(settings: Any) -> dict[str, Any]:
    """The configured MCP servers by name: parsed and checked, nothing started."""
    if settings is None:
        return {}
    package = _package()
    if package is not None:
        return dict(package.server_configs(settings))
    servers = getattr(settings, "mcp_servers", None) or {}
    return dict(servers)


def _conf_dict(conf: Any) -> Any:
    if isinstance(conf, Mapping):
        return dict(conf)
    if hasattr(conf, "__dataclass_fields__"):
        return asdict(conf)
    return getattr(conf, "__dict__", str(conf))


def config_hash(conf: Any) -> str:
    """A short stable hash of one server's config: a changed config misses the cache."""
    text = json.dumps(_conf_dict(conf), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cache_dir() -> Path:
    """``$XDG_DATA_HOME/agentcli/mcp`` (``~/.local/share`` by default)."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "agentcli" / "mcp"


def _cache_file(server: str, conf: Any) -> Path:
    return cache_dir() / f"tools-{server}-{config_hash(conf)}.json"


def cached_tools(server: str, conf: Any) -> list[MCPToolInfo] | None:
    """The tool list seen the last time this server (with this config) ran; None if never."""
    package = _package()
    if package is not None:
        from agentcli.mcp.cache import (  # type: ignore[import-not-found,unused-ignore]
            cached_tools as package_cached,
        )

        conf = _parsed(package, server, conf)
        found = package_cached(conf)
        return None if found is None else [_info_of_package(package, conf, i) for i in found]
    try:
        data = json.loads(_cache_file(server, conf).read_text(encoding="utf-8"))
        if data.get("version") != _CACHE_VERSION:
            return None
        return [MCPToolInfo(**item) for item in data["tools"]]
    except (OSError, ValueError, TypeError, KeyError):
        return None  # no cache, or an unreadable one: treat as never listed


def write_cache(server: str, conf: Any, infos: list[MCPToolInfo]) -> None:
    """Remember a server's tool list (written whole: temp file, then rename)."""
    import tempfile

    path = _cache_file(server, conf)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"version": _CACHE_VERSION, "server": server,
                   "tools": [asdict(i) for i in infos]}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tools-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache we cannot write only costs a server start next time


def _short(server: str, name: str) -> str:
    return name[len(server) + 1:] if name.startswith(server + ".") else name


def info_of(server: str, item: Any) -> MCPToolInfo:
    """An :class:`MCPToolInfo` from a Tool, a ToolSpec or an SDK tool object."""
    schema = (getattr(item, "args_schema", None) or getattr(item, "input_schema", None)
              or getattr(item, "inputSchema", None))
    description = getattr(item, "description", None) or getattr(item, "summary", "") or ""
    return MCPToolInfo(_short(server, str(item.name)), str(description),
                       bool(getattr(item, "dangerous", False)),
                       str(getattr(item, "danger_reason", "") or ""),
                       dict(schema) if isinstance(schema, Mapping) else None)


def _info_of_package(package: Any, conf: Any, info: Any) -> MCPToolInfo:
    dangerous, reason = package.tool_danger(conf, info)
    return MCPToolInfo(info.name, info.description or "", dangerous, reason,
                       dict(info.input_schema or {}) or None)


def _roots(tool_settings: Mapping[str, Any]) -> list[Path]:
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
    package = _package()
    if package is not None:
        return list(package.load_server_tools(server, _parsed(package, server, conf), only,
                                              roots=_roots(tool_settings or {})))
    client = _client()
    conn, infos = client.connect(server, conf)
    dangerous = bool(conf.get("dangerous", False))
    reason = f"MCP server {server!r} is marked dangerous in your config" if dangerous else ""
    tools = []
    for info in infos:
        tools.append(replace(client._make_tool(conn, info), dangerous=dangerous,
                             danger_reason=reason, source="MCP"))
    write_cache(server, conf, [info_of(server, t) for t in tools])
    return [t for t in tools if only is None or _short(server, t.name) in only]


def refresh_tools(server: str, conf: Any) -> list[MCPToolInfo]:
    """Start the server, list its tools and update the cache."""
    package = _package()
    if package is not None:
        conf = _parsed(package, server, conf)
        return [_info_of_package(package, conf, i)
                for i in package.list_tools(server, conf, refresh=True)]
    return [info_of(server, t) for t in load_server_tools(server, conf, None)]
