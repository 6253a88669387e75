"""The run's deadline: one absolute time that every wait in the run respects.

The executor opens :func:`deadline_scope` for ``max_execution_time``; model calls, retry
sleeps and tools read :func:`remaining` and stop at it, raising :class:`DeadlineExceeded`.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from agentcli.errors import DeadlineExceeded

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "agentcli_deadline", default=None
)

__all__ = ["DeadlineExceeded", "deadline_scope", "remaining"]


def remaining() -> float | None:
    """Seconds left before the run's deadline (never negative), or None without one."""
    at = _deadline.get()
    return None if at is None else max(0.0, at - time.monotonic())


@contextmanager
def deadline_scope(seconds: float | None) -> Iterator[None]:
    """Set a deadline ``seconds`` from now; a nested scope keeps the earlier one."""
    if seconds is None:
        yield
        return
    at = time.monotonic() + seconds
    current = _deadline.get()
    token = _deadline.set(at if current is None else min(at, current))
    try:
        yield
    finally:
        _deadline.reset(token)
