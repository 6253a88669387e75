"""The stdio transport: the server is our child process, spoken to in JSON lines over its
stdin and stdout (its stderr goes to its log within a cap: :mod:`agentcli.mcp.errlog`), and
ended the way the MCP spec tells a client to end it: close its stdin,
wait for it to exit, then SIGTERM, then SIGKILL (its whole process group: it runs in a session
of its own; and, by pid, every process below it, found through ``/proc`` while it runs and
again as it is stopped, so a child that left the group with ``setsid()`` goes too: see
:mod:`agentcli.mcp.proctree`). Nothing it started outlives us.

Ours rather than the SDK's ``stdio_client`` for one reason, the wait: the SDK waits a fixed
2 s (``PROCESS_TERMINATION_TIMEOUT``) after closing stdin and exposes neither that wait nor
the process. A server busy with a request of its own never exits on stdin EOF: the npm
reference server (server-everything) asks the client for its roots 350 ms after start-up, and
that unanswerable request keeps node alive until the 2 s run out, so every short ``agent run``
ended 2 s late. Here a server has :data:`EXIT_GRACE` to exit by itself (an idle one does in
milliseconds), cut short by a request it sends after its stdin closed: it waits for an answer
it cannot get.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, TextIO

import anyio
from anyio.abc import AsyncResource, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agentcli.mcp import proctree
from agentcli.mcp.errlog import CappedLog

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

    Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                    MemoryObjectSendStream[SessionMessage]]

EXIT_GRACE = 0.5  # s for the server to exit by itself once its stdin is closed
TERM_GRACE = 0.5  # s after SIGTERM before SIGKILL (all of a stop: 1 s, within --max-time + 2 s)
MAX_LINE = 16 << 20  # bytes of one message (a line) from a server: past it, the connection ends
_WATCHED_LINE = 64 << 10  # bytes of a line read while the server is being stopped
_POLL = 0.01  # s between looks at the process's return code
TRACK_EVERY = 1.0  # s between looks for the processes the server started (a child that
# detaches and whose parent exits is then still known by pid when the server is stopped)
_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL: terminate is final


@contextlib.asynccontextmanager
async def stdio_streams(command: str, args: list[str], env: Mapping[str, str] | None,
                        cwd: str | None, errlog: TextIO) -> AsyncIterator[Streams]:
    """Start the server and yield the session's (read, write) streams; on exit stop it (see
    :func:`stop`), whatever ended the block."""
    import mcp.types as mt
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage
    from pydantic import TypeAdapter

    parse = TypeAdapter(mt.JSONRPCMessage).validate_json
    process = await anyio.open_process([command, *args],
                                       env={**get_default_environment(), **(env or {})},
                                       cwd=cwd, stderr=subprocess.PIPE, start_new_session=True)
    log = CappedLog(errlog)
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    started: set[proctree.Known] = set()  # every process found below the server so far
    heard = False  # whether the server ever sent a line (a silent one gets no grace)

    async def track() -> None:
        while process.returncode is None:
            started.update(proctree.descendants(process.pid))
            await anyio.sleep(TRACK_EVERY)

    async def pump_err() -> None:  # server stderr -> its log, within the cap
        assert process.stderr is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                log.write(chunk)

    async def pump_out() -> None:  # server stdout -> session, one JSON-RPC message a line
        nonlocal heard
        assert process.stdout is not None
        lines = _Lines(MAX_LINE)
        async with to_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in process.stdout:
                    try:
                        found = lines.feed(chunk)
                    except MessageTooLong as err:  # a server this broken is not read on
                        log.note(str(err))
                        await to_session.send(err)  # the session reports it, then it ends
                        return
                    for line in found:
                        heard = True
                        try:
                            item: SessionMessage | Exception = SessionMessage(
                                parse(line.decode("utf-8", "replace")))
                        except ValueError as err:  # the session reports it
                            item = err
                        await to_session.send(item)

    async def pump_in() -> None:  # session -> server stdin
        assert process.stdin is not None
        async with from_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError,
                                     OSError):
                async for message in from_session:
                    line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(f"{line}\n".encode())
            await to_session.aclose()  # the server can no longer hear us: the session ends

    try:
        async with anyio.create_task_group() as logging:  # its stderr, until it is stopped
            logging.start_soon(pump_err)
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(pump_out)
                    tasks.start_soon(pump_in)
                    tasks.start_soon(track)
                    try:
                        yield read, write
                    finally:
                        tasks.cancel_scope.cancel()
            finally:
                # a cancelled caller must not leave it running (nor stop the log of its
                # last words: a full stderr pipe would hold up its exit)
                with anyio.CancelScope(shield=True):
                    await stop(process, started, EXIT_GRACE if heard else 0.0)
                logging.cancel_scope.cancel()  # a child it left may hold stderr open
    finally:
        with anyio.CancelScope(shield=True):
            log.close()
            for stream in (read, write, to_session, from_session):
                await stream.aclose()


async def stop(process: Process, started: set[proctree.Known] | None = None,
               grace: float = EXIT_GRACE) -> None:
    """Close the server's stdin and give it (with whatever it started) ``grace`` seconds to
    exit, cut short if it asks us something meanwhile (it waits for an answer it can no longer
    get); then SIGTERM its process group and every process known to be below it (``started``
    and those found now) and, after :data:`TERM_GRACE`, SIGKILL them. A server that never said
    a word (not even an answer to ``initialize``) gets no grace."""
    known = set(started or ())
    if process.returncode is None:  # before anything ends: the tree is whole
        known |= proctree.descendants(process.pid)
    await _close(process.stdin)
    async with anyio.create_task_group() as tasks:
        asked = anyio.Event()
        tasks.start_soon(_watch_for_requests, process, asked)
        gone = await _gone(process, grace, known, asked)
        tasks.cancel_scope.cancel()
    await _close(process.stdout)
    for sig in (signal.SIGTERM, _KILL):
        if gone:
            return
        if process.returncode is None:  # (once reaped, its pid may be someone else's)
            known |= proctree.descendants(process.pid)
        _signal_group(process, sig)
        proctree.signal_all(known, sig)
        gone = await _gone(process, TERM_GRACE, known)


async def _close(pipe: AsyncResource | None) -> None:
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if pipe is not None:
            await pipe.aclose()


async def _watch_for_requests(process: Process, asked: anyio.Event) -> None:
    """Set ``asked`` when the server's stdout brings a request (a line with an id and a
    method), reading (and so draining) it to its end; a long line is passed over unread (a
    request for roots is short)."""
    assert process.stdout is not None
    lines = _Lines(_WATCHED_LINE)
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                             anyio.BrokenResourceError, OSError):
        while True:
            try:
                found = lines.feed(await process.stdout.receive())
            except MessageTooLong:
                continue
            for line in found:
                with contextlib.suppress(ValueError):
                    message = json.loads(line)
                    if isinstance(message, dict) and "method" in message and "id" in message:
                        asked.set()


class MessageTooLong(ValueError):
    """A server sent a line (one JSON-RPC message) longer than the limit."""


class _Lines:
    """A byte stream cut into lines, one chunk at a time, without holding more than ``limit``
    bytes of an unfinished line: past that, :class:`MessageTooLong` is raised once and the
    rest of that line is passed over (the next line is read again)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes (without their newlines)."""
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            self._skipping, chunk = False, chunk[end + 1:]
        scan = len(self._buffer)
        self._buffer += chunk
        lines: list[bytes] = []
        start = 0
        while (end := self._buffer.find(b"\n", scan)) >= 0:
            lines.append(bytes(self._buffer[start:end]))
            start = scan = end + 1
        del self._buffer[:start]
        if len(self._buffer) > self._limit:
            self._buffer.clear()
            self._skipping = True
            raise MessageTooLong(f"the server sent a message longer than {self._limit:,} bytes "
                                 "(a line of its stdout); the connection was closed")
        return lines


async def _gone(process: Process, within: float, known: set[proctree.Known],
                asked: anyio.Event | None = None) -> bool:
    """Whether the server exited, was reaped and left no process in its group nor any of
    ``known`` running, within ``within`` seconds (stopping early, False, once ``asked`` is
    set)."""
    with anyio.move_on_after(within):
        while (process.returncode is None or _group_alive(process.pid)
               or any(proctree.alive(k) for k in known)):
            if asked is not None and asked.is_set():
                return False
            await anyio.sleep(_POLL)
        return True
    return False


def _signal_group(process: Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, sig)  # its pid is its group's id (start_new_session)
        else:  # Windows: the process only
            process.send_signal(sig)


def _group_alive(pgid: int) -> bool:
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
