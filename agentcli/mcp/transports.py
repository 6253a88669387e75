"""The three MCP transports: stdio (:mod:`agentcli.mcp.stdio`, stderr to the server's log),
Streamable HTTP and SSE, with headers and environment values expanded only here, at connect
time.

A Streamable HTTP transport reports, in the :class:`NotRun` of the request being sent (see
:func:`watch_request`), a failure that shows the server never answered it: our session id
unknown (404, or 400 naming the session: the server restarted), no connection (it is down),
502/503 (a proxy in front of a server still starting), or the connection closed before any
answer (a restarted server closed our kept-alive connection). The connection then reconnects
and sends the request once more; any other failure (a timeout, an error answer, a stream cut
after the answer began) is not retried: a tool call may have had effects.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any

from agentcli.mcp.cache import log_path
from agentcli.mcp.config import ServerConfig, expand_vars


class NotRun:
    """Why a failed HTTP request got no answer from the server, if so: ``"session lost"``,
    ``"unreachable"``, ``"unavailable"`` or ``"dropped"``."""

    def __init__(self) -> None:
        self.why: str | None = None


_WATCHED: ContextVar[NotRun | None] = ContextVar("agentcli_mcp_request", default=None)


def watch_request() -> NotRun:
    """A fresh :class:`NotRun` for the request this task sends next. The SDK posts a message
    in its sender's context, so the POST of that request (and only it) records into it."""
    not_run = NotRun()
    _WATCHED.set(not_run)
    return not_run


def _watching_client(httpx2: Any) -> Any:
    """An ``httpx2.AsyncClient`` class that records in the sender's :class:`NotRun` the
    failures of a POST that show the server never answered it."""

    class Client(httpx2.AsyncClient):  # type: ignore[misc]
        async def send(self, request: Any, **kwargs: Any) -> Any:
            not_run = _WATCHED.get() if request.method == "POST" else None
            if not_run is None:
                return await super().send(request, **kwargs)
            try:
                response = await super().send(request, **kwargs)
            except (httpx2.ConnectError, httpx2.ConnectTimeout):
                not_run.why = "unreachable"
                raise
            except (httpx2.ReadError, httpx2.WriteError, httpx2.RemoteProtocolError):
                not_run.why = "dropped"  # closed before any answer (send returns at headers)
                raise
            if request.headers.get("mcp-session-id") and await _session_lost(response):
                not_run.why = "session lost"
            elif response.status_code in (502, 503):
                not_run.why = "unavailable"
            return response

    return Client


async def _session_lost(response: Any) -> bool:
    """The answer says the server no longer knows our session: 404 (the spec's word), or 400
    naming the session ("No valid session ID provided": server-everything and other
    TypeScript SDK servers after a restart). The body is read as the SDK reads it anyway."""
    if response.status_code == 404:
        return True
    if response.status_code != 400:
        return False
    try:
        body = await response.aread()
    except Exception:
        return False
    return b"session" in body[:4096].lower()


async def open_transport(conf: ServerConfig, stack: contextlib.AsyncExitStack
                         ) -> tuple[Any, Any]:
    """Enter the server's transport on ``stack``; return its (read, write) streams."""
    where = f"MCP server {conf.name!r}"
    if conf.transport == "stdio":
        from agentcli.mcp.stdio import stdio_streams

        env = {k: expand_vars(v, f"env {k} of {where}") for k, v in conf.env}
        errlog = stack.enter_context(log_path(conf.name).open("a", encoding="utf-8"))
        return await stack.enter_async_context(stdio_streams(
            str(conf.command), list(conf.args), env, conf.cwd, errlog))
    headers = {k: expand_vars(v, f"header {k} of {where}") for k, v in conf.headers}
    read_timeout = max(300.0, conf.call_timeout + 30)
    if conf.transport == "sse":
        from mcp.client.sse import sse_client

        streams = await stack.enter_async_context(sse_client(
            str(conf.url), headers=headers, timeout=conf.startup_timeout,
            sse_read_timeout=read_timeout))
        return streams[0], streams[1]
    from mcp.client import streamable_http as sh

    if hasattr(sh, "streamable_http_client"):  # mcp 2.x takes a configured client
        import httpx2

        client_class = _watching_client(httpx2)
        client = await stack.enter_async_context(client_class(
            headers=headers, timeout=httpx2.Timeout(conf.startup_timeout, read=read_timeout)))
        streams = await stack.enter_async_context(
            sh.streamable_http_client(str(conf.url), http_client=client))
    else:  # mcp 1.x
        streams = await stack.enter_async_context(sh.streamablehttp_client(  # type: ignore[attr-defined]
            str(conf.url), headers=headers, timeout=conf.startup_timeout,
            sse_read_timeout=read_timeout))
    return streams[0], streams[1]
