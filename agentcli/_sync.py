"""The one bridge from synchronous callers to the async core: one portal loop.

Everything that runs a model, a tool or an MCP session is a coroutine; ``invoke``, ``stream``,
``generate``, MCP's sync calls and the CLI reach it through :func:`run_sync` (one coroutine) or
:func:`iterate` (an async generator, one item at a time); :func:`start` and :func:`post` keep
one coroutine at work there while the caller's thread does something else (``agent chat``
reading a pipe). All hand the work to the process's one portal: an event loop on a daemon
thread, started on first use and kept for the life of the process, so its pooled HTTP
connections and MCP sessions outlive each call. (``asyncio.run`` at the top of ``serve`` and
``batch`` is the only other loop owner.) anyio's blocking portal would do as well, but it
cancels through cancel scopes: a run that catches its cancellation to hand back what it has
would lose that result.

A sync call from inside a running event loop is an error naming the async call to await
instead: it would block that loop (a server's, say) until the call is over.

Ctrl-C while a step runs cancels that step's task, so the core can end the run cleanly (the
tool in flight is cancelled, what happened so far is kept) and still hand back its result.

:func:`in_thread` is the way the async core runs blocking code (a plain-function tool, a sync
model): a daemon thread the run may abandon at its deadline, never a pool that would keep the
process alive after Ctrl-C or a time limit.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import functools
import queue
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TypeVar

T = TypeVar("T")


def check_no_running_loop(instead: str) -> None:
    """Refuse a blocking call from a thread whose event loop is running (it would stall it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"a synchronous call made inside a running event loop would block it; "
                       f"await {instead} instead")


_lock = threading.Lock()


def _portal() -> asyncio.AbstractEventLoop:
    """The portal's loop, started now if it is not running yet."""
    with _lock:
        return _start_portal()


@functools.cache
def _start_portal() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="agentcli-portal", daemon=True).start()
    atexit.register(_close_pools, loop)
    return loop


def _close_pools(loop: asyncio.AbstractEventLoop) -> None:
    """At exit: finalise the loop's async generators, which close its HTTP pools (their
    sockets would otherwise be left to the garbage collector, with a warning each)."""
    if loop.is_running():
        done, _ = _start(loop.shutdown_asyncgens())
        with contextlib.suppress(Exception):
            done.result(2)


def _start(awaitable: Awaitable[T]) -> tuple[concurrent.futures.Future[T], Callable[[], None]]:
    """Start ``awaitable`` on the portal (in the caller's context); its future and how to
    cancel it (the task sees ``CancelledError`` and may still return a result)."""
    loop = _portal()
    done: concurrent.futures.Future[T] = concurrent.futures.Future()
    tasks: list[asyncio.Task[T]] = []

    def settle(task: asyncio.Task[T]) -> None:
        if task.cancelled():
            done.cancel()
        elif (err := task.exception()) is not None:
            done.set_exception(err)
        else:
            done.set_result(task.result())

    def begin() -> None:
        task = asyncio.ensure_future(awaitable)  # a coroutine or any awaitable, as a task
        task.add_done_callback(settle)
        tasks.append(task)

    def cancel() -> None:
        loop.call_soon_threadsafe(lambda: [t.cancel() for t in tasks])

    loop.call_soon_threadsafe(begin, context=contextvars.copy_context())
    return done, cancel


def start(coro: Awaitable[T], *, instead: str = "the async method"
          ) -> tuple[concurrent.futures.Future[T], Callable[[], None]]:
    """Start ``coro`` on the portal without waiting for it: its future and how to cancel it.
    For a front end that keeps feeding a coroutine already at work there (:func:`post`)
    while its own thread does something else, such as reading the next line of input."""
    check_no_running_loop(instead)
    return _start(coro)


def post(callback: Callable[..., object], *args: object) -> None:
    """Call ``callback(*args)`` on the portal soon, from any thread."""
    _portal().call_soon_threadsafe(callback, *args)


def run_sync(coro: Awaitable[T], timeout: float | None = None, *,
             instead: str = "the async method") -> T:
    """Run ``coro`` on the portal and wait for its result (at most ``timeout`` seconds; then,
    or on Ctrl-C, it is cancelled). ``instead`` names the call to await in async code."""
    try:
        check_no_running_loop(instead)
    except RuntimeError:
        close = getattr(coro, "close", None)
        if close is not None:
            close()  # never started: no "coroutine was never awaited" warning
        raise
    done, cancel = _start(coro)
    try:
        return done.result(timeout)
    except concurrent.futures.TimeoutError:
        cancel()
        raise TimeoutError(f"no result within {timeout:g}s") from None
    except KeyboardInterrupt:
        cancel()  # the core sees CancelledError and ends the run as interrupted
        try:
            return done.result()
        except concurrent.futures.CancelledError:
            raise KeyboardInterrupt from None


async def on_portal(coro: Awaitable[T]) -> T:
    """Await ``coro`` on the portal from another loop; cancelling the await cancels it there."""
    if asyncio.get_running_loop() is _portal():
        return await coro
    done, cancel = _start(coro)
    try:
        return await asyncio.wrap_future(done)
    except asyncio.CancelledError:
        cancel()
        raise


def iterate(agen: AsyncIterator[T], *, instead: str = "the async method") -> Iterator[T]:
    """Yield the items of an async generator to synchronous code, as they come.

    One pump task on the portal serves the whole iteration: the caller's "next" wakes it, it
    takes one item (never ahead of the caller: the generator advances only when asked) and
    hands it back through a queue, with no task, future or context copy per item
    (``bench/portal_iterate.py``). Ctrl-C cancels the step in flight, or the next one when it
    came between two items, as :func:`run_sync` does; the generator may still hand back what
    it has. On the main thread the first Ctrl-C does only that (it raises nowhere, so the
    items that follow, a run's end among them, are not lost wherever it landed); a second
    one is a ``KeyboardInterrupt`` as usual.
    """
    check_no_running_loop(instead)
    loop = _portal()
    # an item (in a tuple), the generator's error, or None at its end
    out: queue.SimpleQueue[tuple[T] | BaseException | None] = queue.SimpleQueue()
    asked = asyncio.Event()
    # read and written on the portal only: a cancel that found the pump between two steps
    # cancels the next one; a closing pump ends
    between = {"cancel": False, "closing": False}

    async def pump() -> None:
        while True:
            try:
                await asked.wait()
            except asyncio.CancelledError:
                if between["closing"]:
                    raise
                between["cancel"] = True
                continue
            asked.clear()
            if between["cancel"]:
                between["cancel"] = False
                task = asyncio.current_task()
                assert task is not None
                loop.call_soon(task.cancel)  # lands at the step's first wait (or at the next)
            try:
                item = await agen.__anext__()
            except StopAsyncIteration:
                out.put(None)
                return
            except BaseException as err:
                out.put(err)
                return
            out.put((item,))

    pumped, stop = _start(pump())
    cancelled: list[bool] = []  # by a first Ctrl-C that raised nowhere

    def cancel() -> None:
        if cancelled:
            raise KeyboardInterrupt  # a second Ctrl-C
        cancelled.append(True)
        stop()

    with _first_ctrl_c_cancels(cancel):
        try:
            while True:
                loop.call_soon_threadsafe(asked.set)
                try:
                    got = out.get()
                except KeyboardInterrupt:
                    if cancelled:
                        raise  # a second Ctrl-C: no more waiting
                    stop()
                    got = out.get()  # the core ends the run as interrupted
                    if isinstance(got, asyncio.CancelledError):
                        raise KeyboardInterrupt from None
                if got is None:
                    return
                if isinstance(got, BaseException):
                    if cancelled and isinstance(got, asyncio.CancelledError):
                        raise KeyboardInterrupt from None  # the generator kept nothing
                    raise got
                yield got[0]
        finally:
            loop.call_soon_threadsafe(between.update, {"closing": True})
            stop()  # the pump stops before the generator closes
            aclose = getattr(agen, "aclose", None)

            async def close() -> None:
                with contextlib.suppress(BaseException):
                    await asyncio.wrap_future(pumped)
                if aclose is not None:
                    await aclose()

            run_sync(close(), instead=instead)


@contextlib.contextmanager
def _first_ctrl_c_cancels(cancel: Callable[[], None]) -> Iterator[None]:
    """While the block runs on the main thread under Python's own SIGINT handler, Ctrl-C
    calls ``cancel`` instead of raising (``cancel`` may raise); after the block it raises."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    active = [True]

    def on_ctrl_c(signum: int, frame: object) -> None:
        if not active:
            raise KeyboardInterrupt
        cancel()

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        active.clear()
        if signal.getsignal(signal.SIGINT) is on_ctrl_c:
            signal.signal(signal.SIGINT, signal.default_int_handler)


# Daemon threads kept for blocking work, started only when none is waiting. Unlike a
# ``ThreadPoolExecutor`` (joined at exit), nothing waits for them: a tool the run abandoned at
# its deadline or on Ctrl-C never keeps the process alive.
_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_idle = threading.Semaphore(0)  # one count per worker waiting for a job


def _work() -> None:
    while True:
        _jobs.get()()
        _idle.release()


async def in_thread(fn: Callable[[], T]) -> T:
    """Run blocking ``fn`` on a daemon worker thread (with this context); await its result.

    Cancelling the await abandons the work: it finishes on its own, nobody waits for it.
    Blocking code never runs on a loop's own thread: a sync model call it makes goes to the
    portal, and ``asyncio.run`` inside a plain-function tool just works.
    """
    done: concurrent.futures.Future[T] = concurrent.futures.Future()
    ctx = contextvars.copy_context()

    def job() -> None:
        if not done.set_running_or_notify_cancel():
            return  # the await was cancelled before a worker took the job
        try:
            done.set_result(ctx.run(fn))
        except BaseException as err:
            done.set_exception(err)

    _jobs.put(job)
    if not _idle.acquire(blocking=False):  # no worker is waiting: start one
        threading.Thread(target=_work, daemon=True, name="agentcli-worker").start()
    return await asyncio.wrap_future(done)  # a loop closed meanwhile is not told
