"""The chat's event loop: one for the whole session, each turn one task on it.

``asyncio.Runner.run`` sets up at every call what a chat needs once: it installs and removes
its SIGINT handler around each run (two ``signal.signal`` calls and a task wrapper, ~50 us of
a piped turn's ~1.4 ms). Here the handler is installed once for the session and does what
the runner's does: the first Ctrl-C during a turn cancels the turn's task (the executor ends
the run as ``interrupted``), a second one raises :class:`KeyboardInterrupt`; with no turn
running (at the prompt), Ctrl-C raises :class:`KeyboardInterrupt` as usual.
"""

from __future__ import annotations

import asyncio
import contextvars
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any


class TurnLoop:
    """Runs each turn's coroutine on one event loop, cancelled by Ctrl-C."""

    def __init__(self) -> None:
        self._runner = asyncio.Runner()
        self._context = contextvars.copy_context()  # shared by the turns, as the runner's
        self._task: asyncio.Task[Any] | None = None
        self._interrupts = 0
        self._handler = self._on_sigint  # one bound method: compared by identity below

    def run(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run one turn to its end; Ctrl-C cancels it (see the module docstring)."""
        if signal.getsignal(signal.SIGINT) is self._handler:  # the session's (see loop())
            self._run(self._runner.get_loop(), coro)
            return
        with self.sigint_cancels_turns():
            self._run(self._runner.get_loop(), coro)

    def _run(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]) -> None:
        task = loop.create_task(coro, context=self._context)
        self._task, self._interrupts = task, 0
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            if self._interrupts:  # the cancellation was Ctrl-C's
                raise KeyboardInterrupt from None
            raise
        finally:
            self._task = None

    @contextmanager
    def sigint_cancels_turns(self) -> Iterator[None]:
        """Within this block Ctrl-C cancels the running turn; installed once for a whole
        session (nested uses, and a handler someone else set, are left alone)."""
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            yield
            return
        signal.signal(signal.SIGINT, self._handler)
        try:
            yield
        finally:
            if signal.getsignal(signal.SIGINT) is self._handler:
                signal.signal(signal.SIGINT, signal.default_int_handler)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        task = self._task
        self._interrupts += 1
        if task is not None and self._interrupts == 1 and not task.done():
            task.cancel()
            task.get_loop().call_soon_threadsafe(lambda: None)  # wake a waiting select()
            return
        raise KeyboardInterrupt

    def close(self) -> None:
        """Close the loop (cancelling whatever is left on it)."""
        with suppress(Exception):
            self._runner.close()
