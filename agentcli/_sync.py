"""The one bridge from synchronous callers to the async core.

Everything that runs a model or a tool is a coroutine; ``invoke``, ``stream``, ``generate``
and the CLI reach it through :func:`run_sync` (one coroutine) or :func:`iterate` (an async
generator, one item at a time). Each call owns a fresh event loop in the calling thread; when
that thread already runs a loop (sync code called from async code), a worker thread does.

Ctrl-C while a step runs cancels that step's task, so the core can end the run cleanly (the
tool in flight is cancelled, what happened so far is kept) and still hand back its result.

:func:`in_thread` is the way the async core runs blocking code (a plain-function tool, a sync
model): a daemon thread the run may abandon at its deadline, never a pool that would keep the
process alive after Ctrl-C or a time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def _running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Loop:
    """A private event loop in this thread; each step is a task Ctrl-C can cancel."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def step(self, awaitable: Awaitable[T]) -> T:
        task = self.loop.create_task(_await(awaitable))
        try:
            return self.loop.run_until_complete(task)
        except KeyboardInterrupt:
            task.cancel()  # the core sees CancelledError and ends the run as interrupted
            try:
                return self.loop.run_until_complete(task)
            except asyncio.CancelledError:
                raise KeyboardInterrupt from None

    def close(self) -> None:
        loop = self.loop
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code and return its result."""
    if _running():
        return _in_worker(lambda: run_sync(coro))
    runner = _Loop()
    try:
        return runner.step(coro)
    finally:
        runner.close()


def iterate(agen: AsyncIterator[T]) -> Iterator[T]:
    """Yield the items of an async generator to synchronous code, as they come."""
    if _running():
        yield from _in_worker(lambda: list(iterate(agen)))
        return
    runner = _Loop()
    try:
        while True:
            try:
                item = runner.step(agen.__anext__())
            except StopAsyncIteration:
                return
            yield item
    finally:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            runner.step(aclose())
        runner.close()


def _in_worker(fn: Callable[[], T]) -> T:
    box: list[tuple[bool, Any]] = []
    ctx = contextvars.copy_context()

    def target() -> None:
        try:
            box.append((True, ctx.run(fn)))
        except BaseException as err:  # handed back to the caller's thread
            box.append((False, err))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def _in_place(fn: Callable[[], T]) -> T:
    """Run blocking ``fn`` on this thread as if no loop ran here, the way the code it calls
    expects of a plain function (``asyncio.run`` inside a tool, a prompt_toolkit question)."""
    loop = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        return fn()
    finally:
        asyncio.events._set_running_loop(loop)


class _Workers:
    """Daemon threads kept for blocking work: a thread is started only when none is idle.

    Unlike a ``ThreadPoolExecutor`` (joined at exit), nothing waits for them: a tool the run
    abandoned at its deadline or on Ctrl-C never keeps the process alive.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # that idle worker takes the job
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._work, daemon=True, name="agentcli-worker").start()

    def _work(self) -> None:
        while True:
            self._jobs.get()()
            with self._lock:
                self._idle += 1


_workers = _Workers()


async def in_thread(fn: Callable[[], T], *, may_inline: bool = True) -> T:
    """Run blocking ``fn`` on a daemon worker thread (with this context); await its result.

    Cancelling the await abandons the work: it finishes on its own, nobody waits for it.
    When nothing else runs on this loop and no deadline is set, ``fn`` simply runs here:
    there is nothing it could hold up and nothing that would need to abandon it (a thread hop
    costs ~80 us, a third of a fake-model step). ``may_inline=False`` when ``fn`` waits on
    this loop itself.
    """
    from agentcli.deadline import remaining

    if may_inline and remaining() is None and len(asyncio.all_tasks()) <= 1:
        return _in_place(fn)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    ctx = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():
            if ok:
                done.set_result(value)
            else:
                done.set_exception(value)

    def job() -> None:
        value: Any
        try:
            value, ok = ctx.run(fn), True
        except BaseException as err:
            value, ok = err, False
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, ok, value)

    _workers.submit(job)
    return await done
