"""How one model request is attempted over HTTP: deadlines, which failures to retry, backoff.

:class:`Attempts` is mixed into the HTTP model class; its methods read the model's settings
(provider, base URL, timeouts, retry counts) and never the API key.
"""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx

from agentcli import deadline as run_deadline
from agentcli.errors import DeadlineExceeded, ProviderError
from agentcli.models.structured import rejects_schema
from agentcli.models.wire import Failure, parse_retry_after, server_message
from agentcli.records import record
from agentcli.redact import redact

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_SLACK = 0.05  # a socket timeout may fire a hair early; this close to the deadline is "at" it


@record
class _Limit:
    """When one attempt must be over (monotonic clock) and whether that is the run deadline."""

    at: float
    run: bool


def _connect_reason(err: Exception) -> str:
    """A short human reason for a connection failure (its cause may be a few links down)."""
    if isinstance(err, httpx.ConnectTimeout):
        return "connect timed out"
    link: BaseException | None = err
    while link is not None:
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, socket.gaierror) or any(
                w in str(link).lower() for w in ("name or service", "nodename", "getaddrinfo")):
            return "host not found"
        link = link.__cause__ or link.__context__
    return str(err) or type(err).__name__


class Attempts:
    """Deadlines, retry decisions and backoff for one model's HTTP requests."""

    provider: str
    base_url: str
    name: str
    timeout: httpx.Timeout
    request_timeout: float
    max_retries: int
    backoff_base: float
    backoff_max: float
    local: bool
    on_retry: Callable[[dict[str, Any]], None] | None
    refusal_statuses: tuple[int, ...]

    def _error(self, message: str, status: int | None, *, output: bool = False) -> ProviderError:
        raise NotImplementedError

    def _transport_failure(self, err: httpx.TransportError, limit: _Limit, *,
                           emitted: bool = False) -> Failure:
        """The failure a transport error stands for; one at the attempt's deadline is that
        deadline's error (raised: a socket timeout may fire a hair before it)."""
        if time.monotonic() >= limit.at - _SLACK:
            raise self._overdue(limit) from err
        retryable = True
        if isinstance(err, httpx.ConnectError | httpx.ConnectTimeout):
            reason = _connect_reason(err)
            message = (f"cannot reach {self.provider} at {self.base_url} "
                       f"({reason}); is the server running?")
            retryable = reason != "host not found"  # a name that does not resolve will not
        elif isinstance(err, httpx.ReadTimeout):
            message = (f"{self.provider} at {self.base_url} sent nothing for "
                       f"{self.timeout.read:g}s (read timeout)")
            if self.local:  # resending would queue behind the reply it is still generating
                message += "; not retried, the local server may still be generating"
                retryable = False
            message += ("; raise read_timeout in the config (or AGENT_READ_TIMEOUT) if it needs "
                        "longer")
        elif isinstance(err, httpx.RemoteProtocolError | httpx.ReadError):
            where = "in the middle of the stream" if emitted else "before a complete response"
            message = f"{self.provider} at {self.base_url} closed the connection {where}"
        else:
            message = f"request to {self.provider} at {self.base_url} failed: {err}"
            retryable = False
        return Failure(message, retryable=retryable)

    def _status_failure(self, resp: httpx.Response) -> Failure:
        """The failure an error status (its body read) stands for."""
        status = resp.status_code
        reason = resp.reason_phrase or httpx.codes.get_reason_phrase(status)
        message = f"{self.provider} returned {status} {reason}: {server_message(resp.text)}"
        message = message.rstrip()
        return Failure(
            message,
            status=status,
            # a refused request field fails the same way however often it is sent
            retryable=status in RETRY_STATUSES
            and not rejects_schema(status, message, self.refusal_statuses),
            retry_after=parse_retry_after(resp.headers.get("retry-after")),
        )

    def _give_up_unless_retryable(
        self, failure: Failure, attempt: int, *, emitted: bool = False
    ) -> None:
        """Raise the user-facing error unless another attempt is allowed."""
        if failure.retryable and not emitted and attempt < self.max_retries:
            return
        message = failure.message
        if failure.retryable and attempt > 0:
            message += f" (gave up after {attempt + 1} attempts)"
        raise self._error(message, failure.status, output=failure.output_error) from failure

    def _retry_delay(self, attempt: int, failure: Failure) -> float:
        """The backoff before the next attempt, reported to ``on_retry`` first.

        A wait longer than the run has left is not started: the run stops at once.
        """
        delay = self._backoff(attempt, failure.retry_after)
        error = redact(failure.message)
        left = run_deadline.remaining()
        if left is not None and delay >= left:
            asked = (f"asked to retry in {failure.retry_after:g}s (Retry-After)"
                     if failure.retry_after is not None else f"needs a {delay:.1f}s backoff")
            raise DeadlineExceeded(
                f"{self.provider} failed ({error}) and "
                f"{asked}, but the run has only {left:.1f}s left (max_execution_time)"
            ) from failure
        if self.on_retry is not None:
            self.on_retry({
                "model": self.name, "attempt": attempt + 1, "delay": round(delay, 3),
                "status": failure.status, "error": error,
            })
        return delay

    # -- deadlines --------------------------------------------------------------------------

    def _attempt_limit(self) -> _Limit:
        """The deadline of one attempt: ``request_timeout`` or the run's, whichever is first."""
        run_deadline.check(f"the call to {self.name}")
        own = time.monotonic() + self.request_timeout
        run_at = run_deadline.deadline()
        if run_at is not None and run_at <= own:
            return _Limit(run_at, True)
        return _Limit(own, False)

    def _timeout_until(self, limit: _Limit) -> httpx.Timeout:
        """This model's timeouts, none longer than the time left before ``limit``."""
        left = max(0.001, limit.at - time.monotonic())
        parts = self.timeout.as_dict()
        capped = {k: left if v is None else min(v, left) for k, v in parts.items()}
        # the usual case: the deadline is further away than any of them
        return self.timeout if capped == parts else httpx.Timeout(**capped)

    def _overdue(self, limit: _Limit) -> Exception:
        """The error for an attempt cut at its deadline (the run's, or ``request_timeout``)."""
        if limit.run:
            return DeadlineExceeded(
                f"the call to {self.name} was cut at the time limit (max_execution_time)"
            )
        return self._error(
            f"{self.provider} at {self.base_url} did not finish its response within "
            f"{self.request_timeout:g}s (request_timeout)", None,
        )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before the next attempt: ``Retry-After`` or full jitter."""
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        return random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2**attempt))
