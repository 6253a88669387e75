"""Live MCP sessions (stdio, Streamable HTTP, SSE) on the process's portal loop.

Every session of the process runs on the portal (``agentcli._sync``), so sync callers
(``Tool.run``) and async callers (``Tool.arun``, any loop) share it. A session's transport and
``ClientSession`` are entered and left inside one task (anyio requires it). A dead server is
reported with the tail of its stderr (kept in the data dir) and restarted once on the next
call; an HTTP or SSE server that went away is tried ``reconnect_attempts`` times (5) with a
doubling delay (0.25 s, 0.5 s, 1 s, 2 s).
A request the server never answered (it forgot our session: 404, or 400 naming the session;
it is down, still starting,
or closed the connection before any answer) is sent once more after reconnecting. This module
imports the SDK; nothing imports this module until an MCP server is actually used.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentcli import __version__, deadline
from agentcli._sync import on_portal, run_sync
from agentcli.errors import ConfigError, ServerStartError, ToolInputError, ToolLoadError
from agentcli.events import Notice, current_emitter
from agentcli.mcp.cache import ToolInfo, log_offset, log_path, save_tools
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.results import ContentText, resource_text, result_text
from agentcli.mcp.sdk import require_sdk
from agentcli.mcp.text import clean, describe_error, root_cause, tail
from agentcli.mcp.transports import open_transport, watch_request
from agentcli.mcp.trust import is_trusted, refusal

if TYPE_CHECKING:
    from mcp import types as mt
    from pydantic import BaseModel

_CONNECTION_CLOSED, _REQUEST_TIMEOUT, _INVALID_REQUEST = -32000, -32001, -32600
MAX_PAGES = 100  # pages of one paginated list (tools, resources) before it is refused
MAX_ITEMS = 10_000  # items of one list, across its pages
T = TypeVar("T")
run_async = on_portal  # MCP's callers await sessions through this name
__all__ = ["require_sdk", "run_async", "run_sync"]

def _dump(model: BaseModel) -> dict[str, Any]:
    return dict(model.model_dump(by_alias=True, mode="json", exclude_none=True))


def _code(err: BaseException) -> int | None:
    error = getattr(err, "error", None)
    return getattr(error, "code", None)


def session_terminated(err: BaseException) -> bool:
    """The SDK's own stand-in for a 404 to our session id ("Session terminated"): the request
    never ran. (mcp 1.x says only this; with 2.x the transport also records it per request.)"""
    return _code(err) == _INVALID_REQUEST and str(err) == "Session terminated"


class _EndWatch:
    """The session's read stream (the SDK's ``ReadStream`` protocol), noting when it ends:
    the server went away. The SDK keeps no public "connection closed" state, so we keep ours."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.ended = False

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context`` of a context stream
        return getattr(self._stream, name)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self.ended = True
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:  # as anyio's streams iterate: receive until the end
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _EndWatch:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        self.ended = True  # the session is done reading: nothing more will arrive
        return bool(await self._stream.__aexit__(*exc))


class ServerConnection:
    """One MCP server: start, call, reconnect once, close. Methods are coroutines on the loop."""

    def __init__(self, conf: ServerConfig, roots: Iterable[Path] = ()) -> None:
        self.conf = conf
        self.roots = tuple(roots) or conf.root_paths()  # none: the roots capability is not
        # declared, so a server keeps to what its own arguments gave it
        self.tools: list[ToolInfo] = []
        self.starts = 0
        self._session: Any = None
        self._read: _EndWatch | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()  # one reconnect at a time (binds to the loop on first use)
        self._log_offset = 0
        self._refresh: asyncio.Task[None] | None = None
        self._stale = False  # a tools/list_changed came since the list was last read
        self._gave_up = False  # the last reconnect used all its attempts: next time try once
        self._broken: str | None = None  # why the transport ended the connection, if it did
        self.version = 0  # bumped when the server's tool list changes while it runs

    @property
    def alive(self) -> bool:
        """True while the session is open and its transport has not reached EOF."""
        if self._session is None or self._task is None or self._task.done():
            return False
        return self._read is not None and not self._read.ended

    def _stderr_tail(self) -> str:
        if self.conf.transport != "stdio":
            return ""
        lines = tail(log_path(self.conf.name), self._log_offset)
        return f"; stderr: {lines}" if lines else f"; log: {log_path(self.conf.name)}"

    async def start(self) -> list[ToolInfo]:
        """Connect within ``startup_timeout``, list the tools and cache them; a project
        ``.mcp.json`` server starts only once the file is trusted."""
        require_sdk()
        if self._untrusted():
            assert self.conf.project_file is not None
            raise ServerStartError(refusal(self.conf.name, self.conf.project_file,
                                           self.conf.target()))
        self._log_offset = log_offset(self.conf.name)
        self._broken = None
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._main(ready))
        # each step within startup_timeout, and all of it within the run's time limit
        left = deadline.remaining()
        limit = self.conf.startup_timeout if left is None else min(left, self.conf.startup_timeout)
        try:
            await asyncio.wait_for(asyncio.shield(ready), limit)
            self.tools = await asyncio.wait_for(self._list_tools(),
                                                deadline.bound(self.conf.startup_timeout))
        except (TimeoutError, Exception) as err:
            why = self._broken or describe_error(err)
            if isinstance(err, asyncio.TimeoutError):
                why = (f"no answer within {self.conf.startup_timeout:g}s (startup_timeout)"
                       if not deadline.expired() else
                       "no answer before the run's time limit (max_execution_time)")
            await self.close()
            if isinstance(root_cause(err), ConfigError):  # e.g. an unset ${VAR}: not the server
                raise root_cause(err) from None
            raise ServerStartError(clean(f"MCP server {self.conf.name!r} did not start "
                                      f"({self.conf.target()}): {why}{self._stderr_tail()}"
                                      )) from None
        self.starts += 1
        save_tools(self.conf, self.tools)
        return self.tools

    async def _main(self, ready: asyncio.Future[None]) -> None:
        import mcp.types as mt
        from mcp.client.session import ClientSession

        assert self._stop is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await open_transport(self.conf, stack)
                self._read = _EndWatch(read)
                session = await stack.enter_async_context(ClientSession(
                    self._read, write,
                    list_roots_callback=self._list_roots if self.roots else None,
                    message_handler=self._on_message,
                    client_info=mt.Implementation(name="agentcli", version=str(__version__))))
                await session.initialize()
                self._session = session
                if not ready.done():
                    ready.set_result(None)
                await self._stop.wait()
        except BaseException as err:  # start-up failures go to start(); later ones end the task
            if not ready.done():
                ready.set_exception(err if isinstance(err, Exception)
                                    else ConnectionError(describe_error(err)))
            if isinstance(err, asyncio.CancelledError):
                raise
        finally:
            self._session = None

    async def _list_roots(self, context: object) -> mt.ListRootsResult:
        import mcp.types as mt

        return mt.ListRootsResult(roots=[mt.Root(uri=p.as_uri(), name=p.name or str(p))  # type: ignore[arg-type]
                                         for p in self.roots])

    async def set_roots(self, roots: Iterable[Path]) -> None:
        """Change the declared roots and tell the server (roots/list_changed)."""
        self.roots = tuple(roots)
        if self.alive:
            # roots are deprecated by the 2026-07-28 revision, yet servers we talk to use them
            with warnings.catch_warnings(), contextlib.suppress(Exception):
                warnings.simplefilter("ignore")
                await self._session.send_roots_list_changed()

    async def _on_message(self, message: object) -> None:
        """A ``tools/list_changed`` only marks the list stale: :meth:`settled` (before the
        agent's next model request) reads it once, however many came (a server may send
        60,000 in one call); never one task or one ``tools/list`` per notification."""
        from agentcli.mcp.stdio import MessageTooLong

        if isinstance(message, MessageTooLong):  # the transport ends the connection next
            self._broken = str(message)
        elif getattr(message, "method", None) == "notifications/tools/list_changed":
            self.version += 1  # seen now, before the result of the call that caused it
            self._stale = True

    async def settled(self, timeout: float) -> None:
        """Re-read a stale tool list (one refresh in flight, again if it went stale
        meanwhile), waiting up to ``timeout``."""
        if self._stale and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.create_task(self._refresh_until_current())
        task = self._refresh
        if task is not None and not task.done():
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), timeout)

    async def _refresh_until_current(self) -> None:
        while self._stale:
            self._stale = False
            await self.refresh_tools()

    async def refresh_tools(self) -> None:
        """The server changed its tools: the running agent is offered the new list (see
        :func:`agentcli.mcp.pool.tools_version`). The disk cache keeps the list the server
        starts with: a tool added during one session is not one a fresh server has."""
        with contextlib.suppress(Exception):  # a failed refresh keeps the old list
            self.tools = await self._list_tools()

    async def _pages(self, what: str, fetch: Callable[[Any], Awaitable[Any]],
                     items: Callable[[Any], list[Any]]) -> list[Any]:
        """Every item of a paginated list, at most :data:`MAX_PAGES` pages and
        :data:`MAX_ITEMS` items within ``call_timeout`` in all: a server that always sends a
        ``nextCursor`` (or lists without end) gets a clear error, not an endless loop."""
        import mcp.types as mt

        out: list[Any] = []
        cursor: str | None = None
        loop = asyncio.get_running_loop()
        ends = loop.time() + self.conf.call_timeout
        for _ in range(MAX_PAGES):
            params = mt.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                page = await asyncio.wait_for(fetch(params), max(0.0, ends - loop.time()))
            except TimeoutError:
                raise ToolInputError(
                    f"MCP server {self.conf.name!r} took more than {self.conf.call_timeout:g}s "
                    f"(call_timeout) to list its {what}; stopped after {len(out)}") from None
            out += items(page)
            cursor = page.next_cursor
            if not cursor:
                return out
            if len(out) > MAX_ITEMS:
                break
        raise ToolInputError(
            f"MCP server {self.conf.name!r} lists more than {MAX_PAGES} pages or {MAX_ITEMS:,} "
            f"{what}; stopped (it keeps sending a nextCursor)")

    async def _list_tools(self) -> list[ToolInfo]:
        pages = await self._pages("tools", lambda params: self._session.list_tools(params=params),
                                  lambda page: page.tools)
        infos = [ToolInfo.from_wire(_dump(t)) for t in pages]
        twice = [n for n, count in Counter(i.name for i in infos).items() if count > 1]
        if twice:
            raise ValueError(f"the server lists the tool {twice[0]!r} twice")
        return infos

    async def _ensure(self) -> None:
        """Reconnect if the server died since the last call."""
        if self.alive:
            return
        async with self._lock:
            if not self.alive:
                await self._reconnect()

    async def _reconnect(self) -> None:
        """Restart the session: a stdio server once; an HTTP/SSE server up to
        ``reconnect_attempts`` times, waiting ``reconnect_delay`` then twice as long each time
        (once only if the previous reconnect used all its attempts; a project file no longer
        trusted is not tried again)."""
        attempts = (1 if self.conf.transport == "stdio" or self._gave_up
                    else self.conf.reconnect_attempts)
        delay, waited = self.conf.reconnect_delay, 0.0
        await self.close()
        for attempt in range(1, attempts + 1):
            try:
                await self.start()
            except ToolLoadError as err:
                if attempt == attempts or self._untrusted():
                    self._gave_up = True
                    tries = (" (tried to reconnect once)" if attempts == 1 else
                             f"; tried {attempts} times in {waited:g}s (reconnect_attempts)")
                    raise ToolInputError(f"{err}{tries}") from None
                await asyncio.sleep(delay)
                waited += delay
                delay *= 2
            else:
                self._gave_up = False
                return

    def _untrusted(self) -> bool:
        return self.conf.project_file is not None and not is_trusted(Path(self.conf.project_file))

    async def _request(self, label: str, make: Callable[[], Awaitable[T]]) -> T:
        await self._ensure()
        session, not_run = self._session, watch_request()
        try:
            return await make()
        except Exception as err:
            if not_run.why is None and not session_terminated(err):
                raise self._failure(label, err) from None
        async with self._lock:  # it never ran: reconnect (once for all callers)
            if self._session is session or not self.alive:
                await self._reconnect()
        try:
            return await make()
        except Exception as err:
            raise self._failure(label, err) from None

    def _failure(self, label: str, err: Exception) -> ToolInputError:
        """The observation for a failed request."""
        if _code(err) == _REQUEST_TIMEOUT and "timed out" in str(err).lower():
            return ToolInputError(f"{label} timed out after {self.conf.call_timeout:g}s "
                                  "(call_timeout); the server was told to cancel it")
        if self._broken is not None and not self.alive:
            return ToolInputError(clean(f"{label} failed: MCP server {self.conf.name!r}: "
                                        f"{self._broken}; the next call restarts it"))
        if _code(err) == _CONNECTION_CLOSED or not self.alive:
            return ToolInputError(clean(
                f"MCP server {self.conf.name!r} closed the connection during {label}"
                f"{self._stderr_tail()}; the next call restarts it"))
        return ToolInputError(clean(f"{label} failed: {describe_error(err)}"))

    async def call(self, tool: str, arguments: dict[str, object]) -> ContentText:
        """Call one tool; an error result or a failure raises ToolInputError (an observation)."""
        label = f"{self.conf.name}.{tool}"

        emit = current_emitter()  # progress arrives in the session's reader task: bind it now

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if emit is not None:
                of = f"/{total:g}" if total else ""
                emit(Notice("progress", clean(f"{label}: {message or 'working'} ({done:g}{of})",
                                              300), {"tool": label, "progress": done}))

        result = await self._request(label, lambda: self._session.call_tool(
            tool, arguments, read_timeout_seconds=self.conf.call_timeout,
            progress_callback=progress))
        # A call that changed the server's tools returns once the new list is read, so the
        # next model request is offered it (without a blocking wait on the run's loop).
        await self.settled(self.conf.call_timeout)
        data = _dump(result)
        text = result_text(data)
        if data.get("isError"):
            raise ToolInputError(f"{label} failed: {text}")
        return text

    async def _listed(self, label: str, method: str, field: str) -> list[dict[str, Any]]:
        """Every item of one of the server's lists (``field`` of each page of ``method``): all
        pages within the bounds of :meth:`_pages`, each page one :meth:`_request`."""
        async def fetch(params: object) -> Any:
            return await self._request(f"{self.conf.name} {label}",
                                       lambda: getattr(self._session, method)(params=params))

        pages = await self._pages(field.replace("_", " "), fetch, lambda p: getattr(p, field))
        return [_dump(item) for item in pages]

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource the server lists."""
        return await self._listed("resources/list", "list_resources", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """The server's resource templates; none when it has no resources capability."""
        caps = getattr(self._session, "server_capabilities", None) if self.alive else None
        if caps is not None and getattr(caps, "resources", None) is None:
            return []
        return await self._listed("resources/templates/list", "list_resource_templates",
                                  "resource_templates")

    async def read_resource(self, uri: str) -> ContentText:
        """One resource's contents as text (binary as placeholders and content parts)."""
        result = await self._request(f"{self.conf.name} read {uri}",
                                     lambda: self._session.read_resource(uri))
        return resource_text(_dump(result).get("contents") or [])

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The server's prompts with their arguments."""
        return await self._listed("prompts/list", "list_prompts", "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> list[dict[str, Any]]:
        """A prompt's messages, each ``{role, text}``."""
        result = await self._request(f"{self.conf.name} prompt {name}",
                                     lambda: self._session.get_prompt(name, arguments))
        return [{"role": m.get("role", "user"), "text": result_text({"content": [m["content"]]})}
                for m in _dump(result).get("messages") or []]

    async def close(self) -> None:
        """End the session and, for stdio, the server process."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        # a session still starting (a server silent to initialize) does not wait for the stop
        done, _ = await asyncio.wait({task}, timeout=5 if self._session is not None else 0)
        if not done:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._session = None
