"""The run's hard deadline, visible to everything that waits (model calls, retries, tools).

The executor opens :func:`deadline_scope` for ``max_execution_time``; code that blocks asks
:func:`remaining` for the time left and bounds its own timeout by it. When the run deadline is
what expired, it raises :class:`~agentcli.errors.DeadlineExceeded`, which the executor turns
into the stop reason ``max_execution_time``. The deadline is an absolute ``time.monotonic()``
value held in a context variable, so threads started with ``contextvars.copy_context().run``
and ``asyncio.to_thread`` see it; the asyncio loop clock is the same monotonic clock.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentcli.errors import DeadlineExceeded

if TYPE_CHECKING:
    import httpx

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "agentcli_deadline", default=None
)


def deadline() -> float | None:
    """The absolute deadline (``time.monotonic()`` clock) of the current run, if any."""
    return _deadline.get()


def remaining() -> float | None:
    """Seconds left before the run deadline (never negative), or None without one."""
    at = _deadline.get()
    return None if at is None else max(0.0, at - time.monotonic())


def expired() -> bool:
    """True when there is a run deadline and it has passed."""
    return remaining() == 0.0


def check(what: str = "the run") -> None:
    """Raise :class:`DeadlineExceeded` if the run deadline has passed."""
    if expired():
        raise DeadlineExceeded(f"{what} reached the time limit (max_execution_time)")


def bound(timeout: float | None) -> float | None:
    """``timeout`` shortened to the time left (None means no limit on either side)."""
    return min((t for t in (timeout, remaining()) if t is not None), default=None)


@contextlib.contextmanager
def deadline_scope(seconds: float | None) -> Iterator[float | None]:
    """Set the run deadline ``seconds`` from now; a nested scope keeps the earlier deadline.

    ``None`` leaves the current deadline as it is. Yields the effective absolute deadline.
    """
    current = _deadline.get()
    if seconds is None:
        yield current
        return
    if math.isnan(seconds):
        raise ValueError("a deadline cannot be NaN")
    at = time.monotonic() + max(0.0, seconds)
    if current is not None:
        at = min(at, current)
    token = _deadline.set(at)
    try:
        yield at
    finally:
        _deadline.reset(token)


@contextlib.contextmanager
def socket_watchdog(response: httpx.Response, at: float | None) -> Iterator[None]:
    """Shut an httpx response's socket down at ``at``, so a read blocked mid-body returns.

    A read timeout restarts with every byte, so a server trickling one byte at a time (or an
    SSE stream that never ends) is only stopped by a clock outside the read. Without a
    socket (a mock transport, HTTP/2) nothing is armed; callers still check between reads.
    """
    stream = response.extensions.get("network_stream") if at is not None else None
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is None or at is None:
        yield
        return
    import socket
    import threading

    def fire() -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(0.0, at - time.monotonic()), fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
