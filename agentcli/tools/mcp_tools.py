"""Tools from MCP servers over stdio (``mcp_servers:`` in config), via the official SDK.

Each server runs in one background event loop for the whole process; its tools appear as
``server.tool`` with the server's JSON schema, and the group ``server`` holds them all.
The ``mcp`` package is optional: ``pip install 'agentcli[mcp]'``.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import threading
from concurrent.futures import Future
from typing import Any

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.registry import ToolSpec, register_tool

INSTALL_HINT = "pip install 'agentcli[mcp]'"
_ENV_REF = re.compile(r"\$\{(\w+)\}")
_KEYS = {"command", "args", "env", "cwd", "timeout", "dangerous"}


def check_servers(value: Any) -> dict[str, dict[str, Any]]:
    """Validate ``mcp_servers`` ({name: {command, args, env}})."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("a mapping of server name: {command, args, env}")
    out = {}
    for name, conf in value.items():
        where = f"server {name!r}"
        if not isinstance(name, str) or not re.fullmatch(r"[\w-]+", name):
            raise ValueError(f"a mapping with word-like server names ({where})")
        if not isinstance(conf, dict) or not isinstance(conf.get("command"), str):
            raise ValueError(f"a mapping of server: {{command, args, env}} ({where} needs "
                             "a 'command' string)")
        unknown = sorted(set(conf) - _KEYS)
        if unknown:
            raise ValueError(f"server settings among {sorted(_KEYS)} ({where} has {unknown})")
        args = conf.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"valid server settings ({where}: args must be a list of strings)")
        if not isinstance(conf.get("env") or {}, dict):
            raise ValueError(f"valid server settings ({where}: env must be a mapping)")
        out[name] = dict(conf)
    return out


def _require_mcp() -> Any:
    try:
        import mcp
    except ImportError:
        raise ToolLoadError(f"MCP servers need the optional package mcp: {INSTALL_HINT}") from None
    return mcp


class MCPConnection:
    """One stdio MCP server and a session kept open on a private event loop thread."""

    def __init__(self, name: str, conf: dict[str, Any]) -> None:
        self.name, self.conf = name, conf
        self.timeout = float(conf.get("timeout", 30))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: Future[Any] = Future()
        self._stop: asyncio.Event | None = None
        self._session: Any = None
        self._main_done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> list[Any]:
        """Spawn the server, initialise the session, return its tool list."""
        _require_mcp()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name=f"mcp-{self.name}")
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._main(), self._loop)
        try:
            self._ready.result(timeout=self.timeout)
        except Exception as err:
            self.close()
            reason = str(err) or (
                f"no MCP handshake within {self.timeout:g}s (does it print other text on "
                "stdout?)" if isinstance(err, TimeoutError) else type(err).__name__)
            raise ToolLoadError(f"MCP server {self.name!r} did not start "
                                f"({self.conf['command']}): {reason}") from None
        return list(self._run(self._session.list_tools()).tools)

    async def _main(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {k: _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), str(v))
               for k, v in (self.conf.get("env") or {}).items()}
        params = StdioServerParameters(command=self.conf["command"],
                                       args=list(self.conf.get("args") or []), env=env or None,
                                       cwd=self.conf.get("cwd"))
        self._stop = asyncio.Event()
        self._main_done.clear()
        try:
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write), \
                        ClientSession(read, write) as session:
                    await session.initialize()
                    self._session = session
                    self._ready.set_result(True)
                    await self._stop.wait()
        except BaseException as err:  # report start-up failures to the waiting thread
            if not self._ready.done():
                self._ready.set_exception(err if isinstance(err, Exception) else
                                          RuntimeError(str(err)))
        finally:
            self._main_done.set()

    def _run(self, coro: Any) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=self.timeout)

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call one tool; text content is joined, an error result becomes a tool error."""
        try:
            result = self._run(self._session.call_tool(tool, arguments))
        except TimeoutError:
            raise ToolInputError(f"{self.name}.{tool} timed out after {self.timeout:g}s") from None
        parts = []
        for block in result.content:
            text = getattr(block, "text", None)
            parts.append(text if text is not None else str(block))
        text = "\n".join(parts)
        if getattr(result, "is_error", None) or getattr(result, "isError", False):
            raise ToolInputError(f"{self.name}.{tool} failed: {text}")
        return text

    def close(self) -> None:
        """End the session and the server process."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = self._thread = None
        if self._stop is not None:
            loop.call_soon_threadsafe(self._stop.set)
            for _ in range(50):  # let the session and the server process shut down
                if self._main_done.is_set():
                    break
                self._main_done.wait(0.1)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()


_CONNECTIONS: dict[str, MCPConnection] = {}


def _close_all() -> None:
    for conn in list(_CONNECTIONS.values()):
        conn.close()
    _CONNECTIONS.clear()


atexit.register(_close_all)


def connect(name: str, conf: dict[str, Any]) -> tuple[MCPConnection, list[Any]]:
    """Start (once per process) the server ``name``; return the connection and its tools."""
    conn = _CONNECTIONS.get(name)
    if conn is None:
        conn = MCPConnection(name, conf)
        tools = conn.start()
        _CONNECTIONS[name] = conn
        conn.tools = tools  # type: ignore[attr-defined]
    return conn, conn.tools  # type: ignore[attr-defined]


def _make_tool(conn: MCPConnection, info: Any) -> Tool:
    schema = getattr(info, "input_schema", None) or getattr(info, "inputSchema", None) or {}
    schema = {"type": "object", "properties": {}, **dict(schema)}
    return Tool(f"{conn.name}.{info.name}", info.description or info.name,
                func=lambda **kw: conn.call(info.name, kw), args_schema=schema)


def register_mcp_servers(servers: dict[str, dict[str, Any]]) -> list[str]:
    """Start each server, register ``server.tool`` specs and a ``server`` group (source MCP)."""
    names: list[str] = []
    for server, conf in servers.items():
        conn, infos = connect(server, conf)
        dangerous = bool(conf.get("dangerous", False))
        reason = f"MCP server {server!r} is marked dangerous in your config" if dangerous else ""
        members = []
        for info in infos:
            name = f"{server}.{info.name}"
            members.append(name)

            def factory(llm: Any = None, _c: MCPConnection = conn, _i: Any = info,
                        **_: Any) -> Tool:
                return _make_tool(_c, _i)

            register_tool(ToolSpec(name, factory, (info.description or "").split("\n")[0],
                                   needs=ToolNeeds(extra="mcp"), dangerous=dangerous,
                                   danger_reason=reason, source="MCP"), replace=True)
        register_tool(ToolSpec(server, None, f"Group: every tool of MCP server {server}",
                               members=tuple(members), dangerous=dangerous,
                               danger_reason=reason, source="MCP"), replace=True)
        names += members
    return names
