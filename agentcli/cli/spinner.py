"""A spinner with the elapsed time while the model is thinking (terminal only).

It is a callback handler: ``on_llm_start`` starts a Rich status on the console (stderr for
``agent run``); the first visible token, the reply or an error stops it. Lines printed on the
same console meanwhile appear above it. When the console is not a terminal it does nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.cli.consoles import is_terminal

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.status import Status

    from agentcli.events import Notice, RunEvent


class _Elapsed:
    """Status text re-rendered at every refresh, so the seconds count up."""

    def __init__(self, label: str, started: float) -> None:
        self.label = label
        self.started = started

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        yield Text(f"{self.label}… {time.monotonic() - self.started:.1f}s", style="dim")


class ThinkingSpinner(BaseCallbackHandler):
    """Shows ``Thinking… 2.3s`` from a model request's start to its first visible output."""

    def __init__(self, console: Console, *, label: str = "Thinking",
                 tokens_visible: Callable[[], bool] = lambda: True) -> None:
        self.console = console
        self.label = label
        self.tokens_visible = tokens_visible  # streamed tokens hidden: keep spinning
        self._status: Status | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Show the spinner (a no-op when not a terminal or already shown)."""
        if not is_terminal(self.console):
            return
        with self._lock:
            if self._status is None:
                self._status = self.console.status(_Elapsed(self.label, time.monotonic()),
                                                   spinner="dots")
                self._status.start()

    def stop(self) -> None:
        """Remove the spinner, if shown."""
        if self._status is None:  # the usual case (always when piped): nothing to take down
            return
        with self._lock:
            status, self._status = self._status, None
        if status is not None:
            status.stop()

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Shown while a model thinks; gone when it answers, streams visible tokens, fails,
        or the run ends or is interrupted (notices print above it)."""
        kind = event.kind  # one class per kind (events.py): a string test, at every event
        if kind == "model_start":
            self.start()
        elif kind == "token":
            if self._status is not None and self.tokens_visible():
                self.stop()
        elif kind in _STOPS or (kind == "notice" and cast("Notice", event).topic == "interrupted"):
            self.stop()


_STOPS = frozenset({"model_end", "model_error", "end", "error"})
