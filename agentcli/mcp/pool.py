"""The process's MCP connections by server config: started on first use, side by side when
several are needed at once (one start per config however many callers wait for it), closed at
exit. Keyed by the whole config, not the server's name: two
agents in one process that configure a same-named server differently each keep their own."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
from collections.abc import Iterable
from pathlib import Path

from agentcli._sync import run_sync
from agentcli.mcp.cache import ToolInfo
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.connection import ServerConnection, require_sdk

# Both live on the portal loop (see _sync.py) and are read and changed only there: no lock.
_POOL: dict[ServerConfig, ServerConnection] = {}
_STARTING: dict[ServerConfig, asyncio.Task[ServerConnection]] = {}  # one start per config


def _budget(conf: ServerConfig) -> float:
    # start() bounds itself by startup_timeout twice (connect, then list); this is a backstop
    return conf.startup_timeout * 2 + 15


async def _start(conf: ServerConfig, roots: tuple[Path, ...]) -> ServerConnection:
    conn = ServerConnection(conf, roots)
    await conn.start()
    _POOL[conf] = conn
    # At exit, close the servers before the portal finalises its loop's async generators
    # (exit hooks run last-registered first; the portal registers its own when it starts).
    atexit.unregister(close_all)
    atexit.register(close_all)
    return conn


def _forget(conf: ServerConfig, task: asyncio.Task[ServerConnection]) -> None:
    _STARTING.pop(conf, None)
    if not task.cancelled():
        task.exception()  # its waiters were told; nobody else needs to hear it


async def connect(conf: ServerConfig, roots: Iterable[Path] = ()) -> ServerConnection:
    """The started connection to ``conf``, starting it now if needed (on the portal): servers
    of different configs start side by side, callers of one config share its one start; new
    ``roots`` are declared to a running server."""
    roots = tuple(roots)
    conn = _POOL.get(conf)
    if conn is None:
        task = _STARTING.get(conf)
        if task is None:
            task = asyncio.create_task(_start(conf, roots))
            _STARTING[conf] = task
            task.add_done_callback(lambda done: _forget(conf, done))
        conn = await asyncio.shield(task)  # a caller that gives up does not stop the start
    if roots and roots != conn.roots:
        await conn.set_roots(roots)
    return conn


def get_connection(conf: ServerConfig, roots: Iterable[Path] = ()) -> ServerConnection:
    """:func:`connect` for sync callers (any thread; several at once start side by side)."""
    require_sdk()
    return run_sync(connect(conf, roots), _budget(conf))


def refresh(conf: ServerConfig) -> list[ToolInfo]:
    """Ask a running server for its tools again (starting it if needed); the cache follows."""
    async def again() -> list[ToolInfo]:
        running = conf in _POOL
        conn = await connect(conf)
        if running:  # else it just started: its list is fresh
            await conn.refresh_tools()
        return conn.tools

    require_sdk()
    return run_sync(again(), _budget(conf))


def close_all() -> None:
    """Close every connection (stdio servers exit); used at interpreter exit."""
    if not _POOL:
        return

    async def close() -> None:
        conns = list(_POOL.values())
        _POOL.clear()
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

