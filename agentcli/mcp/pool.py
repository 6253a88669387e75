"""The process's MCP connections by server config: started on first use, in parallel when many
are needed at once, closed at exit. Keyed by the whole config, not the server's name: two
agents in one process that configure a same-named server differently each keep their own."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from agentcli.errors import ToolLoadError
from agentcli.mcp.cache import ToolInfo
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.connection import ServerConnection, require_sdk, run_sync

_POOL: dict[ServerConfig, ServerConnection] = {}  # the portal's connections (see _sync.py)
_lock = threading.Lock()


def _budget(confs: Iterable[ServerConfig]) -> float:
    # start() bounds itself by startup_timeout twice (connect, then list); this is a backstop
    return max((c.startup_timeout for c in confs), default=30.0) * 2 + 15


def _keep(conn: ServerConnection) -> None:
    _POOL[conn.conf] = conn
    # At exit, close the servers before the portal finalises its loop's async generators
    # (exit hooks run last-registered first; the portal registers its own when it starts).
    atexit.unregister(close_all)
    atexit.register(close_all)


def _stale(conf: ServerConfig) -> ServerConnection | None:
    """The pooled connection for ``conf``, if it is running."""
    return _POOL.get(conf)


def get_connection(conf: ServerConfig, roots: Iterable[Path] = ()) -> ServerConnection:
    """The started connection to ``conf`` (starting it now if needed); new ``roots`` are
    declared to a running server."""
    roots = tuple(roots)
    with _lock:
        conn = _stale(conf)
        if conn is None:
            require_sdk()
            conn = ServerConnection(conf, roots or [Path.cwd()])
            run_sync(conn.start(), _budget([conf]))
            _keep(conn)
        elif roots and tuple(roots) != conn.roots:
            run_sync(conn.set_roots(roots), _budget([conf]))
        return conn


def start_many(
    confs: Mapping[str, ServerConfig], roots: Iterable[Path] = ()
) -> dict[str, list[ToolInfo] | ToolLoadError]:
    """Start the servers not yet running, all at once; each result is its tools or its error."""
    require_sdk()
    roots = tuple(roots) or (Path.cwd(),)
    with _lock:
        out: dict[str, list[ToolInfo] | ToolLoadError] = {}
        fresh = []
        for name, conf in confs.items():
            conn = _stale(conf)
            if conn is not None:
                out[name] = conn.tools
            else:
                fresh.append(ServerConnection(conf, roots))

        async def start_all() -> list[list[ToolInfo] | BaseException]:
            return await asyncio.gather(*(c.start() for c in fresh), return_exceptions=True)

        results = run_sync(start_all(), _budget(c.conf for c in fresh)) if fresh else []
        for conn, result in zip(fresh, results, strict=True):
            if isinstance(result, ToolLoadError):
                out[conn.conf.name] = result
            elif isinstance(result, BaseException):
                raise result
            else:
                _keep(conn)
                out[conn.conf.name] = result
        return out


def refresh(conf: ServerConfig) -> list[ToolInfo]:
    """Ask a running server for its tools again (starting it if needed); the cache follows."""
    running = _POOL.get(conf) is not None
    conn = get_connection(conf)
    if not running:  # it just started: its list is fresh
        return conn.tools

    async def again() -> list[ToolInfo]:
        await conn._refresh_tools()
        return conn.tools

    return run_sync(again(), _budget([conf]))


def close_all() -> None:
    """Close every connection (stdio servers exit); used at interpreter exit."""
    with _lock:
        conns = list(_POOL.values())
        _POOL.clear()
    if not conns:
        return

    async def close() -> None:
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    with contextlib.suppress(Exception):  # exiting anyway; a stuck server must not hang us
        run_sync(close(), 15)


def tools_version() -> int:
    """Changes whenever a running server says its tool list changed (``tools/list_changed``);
    :func:`settle` then waits for the new lists."""
    return sum(conn.version for conn in list(_POOL.values()))


def settle() -> None:
    """Wait for the tool lists being re-read after a change (each within its call_timeout)."""
    for conn in list(_POOL.values()):
        run_sync(conn.settled(conn.conf.call_timeout), conn.conf.call_timeout + 5)

