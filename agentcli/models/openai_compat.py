"""OpenAI-compatible chat completions over httpx: async, SSE streaming, one retry loop.

One exchange (:meth:`OpenAICompatModel._exchange`) sends a request and retries it; plain and
streamed replies share it. Sync callers reach it through the model base class's one bridge.
Every failure becomes one :class:`ProviderError` (or :class:`ModelOutputError`) built in
:meth:`OpenAICompatModel._error`, which scrubs the API key from the message.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import random
import socket
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

from agentcli import deadline as run_deadline
from agentcli.errors import DeadlineExceeded, ModelOutputError, ProviderError
from agentcli.models.base import (
    BaseChatModel,
    StopStream,
    TokenSink,
    assemble_chunks,
    cut_at_stop,
    report,
)
from agentcli.models.http_pool import TimedClient, finish_body, loop_client
from agentcli.models.http_pool import close_shared_clients as close_shared_clients  # re-export
from agentcli.models.structured import (
    REFUSAL_STATUSES,
    choose_mechanism,
    rejects_schema,
    schema_fields,
)
from agentcli.redact import is_secret_name, redact, remember
from agentcli.schema import ChatChunk, ChatResult, Message, ToolCall, Usage

# Sleeping goes through this name so tests can patch it and run fast.
_asleep: Callable[[float], Any] = asyncio.sleep

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_MAX_SERVER_STOPS = 4  # OpenAI rejects more than four stop sequences; the rest are cut here
_USER_AGENT = "agentcli/0.1"
_NOT_JSON = object()
_SLACK = 0.05  # a socket timeout may fire a hair early; this close to the deadline is "at" it


@dataclass(frozen=True)
class _Limit:
    """When one attempt must be over (monotonic clock) and whether that is the run deadline."""

    at: float
    run: bool


@dataclass
class _Failure(Exception):
    """One failed attempt: what to tell the user and whether trying again may help."""

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    output_error: bool = False


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _server_message(body: str) -> str:
    """The server's own error text: JSON ``error.message`` or the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str) and err:
            return err
        if data.get("message"):
            return str(data["message"])
    text = " ".join(body.split())
    return text[:200] if text else "(empty body)"


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


class OpenAICompatModel(BaseChatModel):
    """A chat model behind any OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None,
        provider: str = "openai",
        temperature: float | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        request_timeout: float = 600.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        extra_headers: dict[str, str] | None = None,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        on_retry: Callable[[dict[str, Any]], None] | None = None,
        options: dict[str, Any] | None = None,
        structured_actions: str = "auto",
        structured_mechanism: str | None = None,
        refusal_statuses: tuple[int, ...] = REFUSAL_STATUSES,
        local: bool = False,
        local_max_tokens: int | None = 1024,
    ) -> None:
        self.model = model
        self.provider = provider
        self.name = f"{provider}/{model}"
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.temperature = temperature
        self.options = dict(options or {})  # model options merged into every request body
        self.max_retries = max(0, max_retries)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.timeout = httpx.Timeout(
            connect=connect_timeout, read=timeout, write=timeout, pool=timeout
        )
        self.request_timeout = request_timeout  # total seconds for one response, all bytes
        self._api_key = api_key or None
        self._headers = {"User-Agent": _USER_AGENT, **(extra_headers or {})}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"
        # Keys and custom header values (often tokens) never reach an error, log or trace.
        remember([self._api_key, *(v for k, v in (extra_headers or {}).items()
                                    if is_secret_name(k))])
        if async_client is None and client is not None:  # a test's MockTransport serves both
            async_client = httpx.AsyncClient(transport=client._transport)  # type: ignore[arg-type]
        self._async_client = async_client
        self.on_retry = on_retry  # told about each retry: attempt, delay, status, error
        # Local servers (llama.cpp, Ollama, LM Studio, vLLM on this machine) serve one request
        # at a time: cap each reply, and never resend after a read timeout (still generating).
        self.local = local
        self.local_max_tokens = local_max_tokens
        # How a ``response_schema`` reaches this server (None: it is not sent); see structured.py.
        self.structured_actions = structured_actions
        self.refusal_statuses = refusal_statuses  # statuses that may mean "field refused"
        self.structured_mechanism = choose_mechanism(
            structured_actions, structured_mechanism, self.base_url
        )

    def __repr__(self) -> str:
        return f"OpenAICompatModel({self.name!r}, base_url={self.base_url!r})"

    # -- public API -------------------------------------------------------------------------

    async def agenerate(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_token: TokenSink | None = None,
        **params: Any,
    ) -> ChatResult:
        """One completion; streams over SSE and feeds ``on_token`` when it is given.

        ``response_schema`` (a JSON Schema) constrains the reply where the server can.
        """
        constrained = self._sends_schema(params)
        if on_token is not None and constrained and self.structured_mechanism == "llamacpp":
            # llama-cpp-python 0.3 streams nothing under a grammar: ask whole, then pass it on.
            result = await self.agenerate(messages, stop=stop, tools=tools, **params)
            if result.text:
                on_token(result.text)
            return result
        if on_token is None and self.local and stop and not constrained:
            on_token = _ignore_token  # streaming lets a stop string the server ignores end it
        for attempt in range(2):
            try:
                if on_token is None:
                    payload = self._payload(messages, stop, tools, params, stream=False)
                    async with contextlib.aclosing(self._exchange(payload, stop)) as replies:
                        async for reply in replies:
                            assert isinstance(reply, ChatResult)
                            return reply
                    raise AssertionError("unreachable")  # pragma: no cover
                chunks: list[ChatChunk] = []
                async with contextlib.aclosing(
                    self.astream(messages, stop=stop, tools=tools, **params)
                ) as stream:
                    async for chunk in stream:
                        if chunk.text:
                            on_token(chunk.text)
                        chunks.append(chunk)
                return self._collect(chunks)
            except ProviderError as err:
                if attempt:
                    raise
                self._drop_schema_or_raise(err, params)
        raise AssertionError("unreachable")  # pragma: no cover

    async def astream(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        **params: Any,
    ) -> AsyncGenerator[ChatChunk, None]:
        """Stream deltas over SSE; no text past a stop string is ever yielded."""
        for attempt in range(2):
            try:
                payload = self._payload(messages, stop, tools, params, stream=True)
                async with contextlib.aclosing(self._exchange(payload, stop)) as chunks:
                    async for chunk in chunks:
                        assert isinstance(chunk, ChatChunk)
                        yield chunk
                return
            except ProviderError as err:  # a refused schema fails before any chunk
                if attempt:
                    raise
                self._drop_schema_or_raise(err, params)

    def _sends_schema(self, params: dict[str, Any]) -> bool:
        """Whether this request will carry a JSON Schema."""
        return params.get("response_schema") is not None and self.structured_mechanism is not None

    def _drop_schema_or_raise(self, err: ProviderError, params: dict[str, Any]) -> None:
        """After a refused schema field: stop sending it (``auto``), else raise ``err``."""
        if (params.get("response_schema") is None or self.structured_mechanism is None
                or "structured_actions" in str(err)
                or not rejects_schema(err.status, str(err), self.refusal_statuses)):
            raise err
        if self.structured_actions == "on":
            raise self._error(
                f"{err} (the server refused the JSON Schema sent because structured_actions "
                "is on; set structured_actions: off or pass --structured-actions off)",
                err.status,
            ) from err
        self.structured_mechanism = None  # for the rest of this session
        report(f"{self.provider} at {self.base_url} refused the JSON Schema for actions "
               f"({err.status}); continuing without structured actions", kind="notice")

    async def _exchange(
        self, payload: dict[str, Any], stop: Sequence[str] | None
    ) -> AsyncGenerator[ChatResult | ChatChunk, None]:
        """Send ``payload``, retrying what may succeed next time; the one retry loop.

        Yields the reply (a plain request) or its chunks (``stream`` in the payload). Each
        attempt is bounded by the event loop's own timeout at its deadline (the run's or
        ``request_timeout``); a stream that already yielded is never resent.
        """
        streaming = bool(payload.get("stream"))
        async with self._aclient() as client:
            for attempt in range(self.max_retries + 1):
                emitted = False
                limit = self._attempt_limit()
                try:
                    try:
                        async with contextlib.AsyncExitStack() as stack:
                            async with asyncio.timeout_at(limit.at):
                                resp = await stack.enter_async_context(client.stream(
                                    "POST", self.url, json=payload, headers=self._headers,
                                    timeout=self._timeout_until(limit),
                                ))
                                if resp.status_code >= 400 or not streaming:
                                    await resp.aread()
                            if resp.status_code >= 400:
                                self._raise_status(resp.status_code, resp.reason_phrase,
                                                   resp.headers, resp.text)
                            if not streaming:
                                yield self._parse_response(resp.status_code, resp.reason_phrase,
                                                           resp.headers, resp.text, stop)
                                return
                            events = _SSEState(self, stop)
                            lines = resp.aiter_lines()  # closed with the response
                            while True:
                                # Each read is bounded by the deadline, never the consumer.
                                async with asyncio.timeout_at(limit.at):
                                    line = await anext(lines, None)
                                if line is None:
                                    break
                                for chunk in events.feed(line):
                                    emitted = True
                                    yield chunk
                                if events.finished:
                                    if not events.stopper.stopped:  # [DONE]: keep the connection
                                        await finish_body(lines)
                                    break
                            for chunk in events.end(emitted):
                                yield chunk
                            return
                    except TimeoutError:
                        raise self._overdue(limit) from None
                    except httpx.TransportError as err:
                        self._check_overdue(limit)
                        raise self._transport_failure(err, emitted=emitted) from err
                except _Failure as failure:
                    self._give_up_unless_retryable(failure, attempt, emitted=emitted)
                    await _asleep(self._retry_delay(attempt, failure))

    def close(self) -> None:
        """Nothing to release: injected clients belong to the caller, pooled ones are shared."""

    # -- requests ---------------------------------------------------------------------------

    def _payload(
        self,
        messages: Sequence[Message],
        stop: Sequence[str] | None,
        tools: Sequence[dict[str, Any]] | None,
        params: dict[str, Any],
        *,
        stream: bool,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() for m in messages],
        }
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        payload.update(self.options)
        stops = [s for s in (stop or ()) if s]
        if stops:
            payload["stop"] = stops[:_MAX_SERVER_STOPS]
        if tools:
            payload["tools"] = list(tools)
        params = dict(params)
        schema = params.pop("response_schema", None)
        if schema is not None and self.structured_mechanism is not None:
            payload.update(schema_fields(self.structured_mechanism, schema))
        if self.local and self.local_max_tokens and not (
            {"max_tokens", "max_completion_tokens"} & set(params)
        ):
            payload["max_tokens"] = self.local_max_tokens
        payload.update(params)
        if stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        return payload

    @contextlib.asynccontextmanager
    async def _aclient(self) -> AsyncIterator[httpx.AsyncClient | TimedClient]:
        # An AsyncClient is bound to one event loop: pooled clients are kept per loop.
        if self._async_client is not None:
            yield self._async_client
            return
        async with loop_client(self.base_url, self.timeout) as client:
            yield client

    def _collect(self, chunks: Sequence[ChatChunk] | Iterator[ChatChunk]) -> ChatResult:
        return replace(assemble_chunks(chunks), model=self.model)

    # -- responses --------------------------------------------------------------------------

    def _parse_response(
        self, status: int, reason: str, headers: httpx.Headers, body: str,
        stop: Sequence[str] | None,
    ) -> ChatResult:
        if status >= 400:
            self._raise_status(status, reason, headers, body)
        try:
            data = json.loads(body)
        except ValueError:
            raise self._bad_output(f"a body that is not JSON: {body[:200]!r}") from None
        if not isinstance(data, dict):
            raise self._bad_output(f"a JSON {type(data).__name__} instead of an object")
        choices = data.get("choices")
        if not choices or not isinstance(choices, list):
            if data.get("error"):
                raise _Failure(f"{self.provider} returned an error: {_server_message(body)}",
                               status=status)
            raise self._bad_output("no choices (empty 'choices' list)")
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            raise self._bad_output(f"a 'message' that is a {type(message).__name__}, "
                                   "not an object")
        content = _content_text(message.get("content"))
        if content is None:
            raise self._bad_output("a 'content' that is neither text nor a list of text parts")
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list) or not all(isinstance(c, dict) for c in raw_calls):
            raise self._bad_output("'tool_calls' that are not a list of objects")
        text, cut = cut_at_stop(content, stop)
        calls = tuple(_tool_call(raw, i) for i, raw in enumerate(raw_calls))
        finish = "stop" if cut else choice.get("finish_reason")
        return ChatResult(text, calls, finish, _usage(data.get("usage")),
                          str(data.get("model") or self.model))

    def _raise_status(self, status: int, reason: str, headers: httpx.Headers, body: str) -> None:
        reason = reason or httpx.codes.get_reason_phrase(status)
        message = f"{self.provider} returned {status} {reason}: {_server_message(body)}".rstrip()
        raise _Failure(
            message,
            status=status,
            # a refused request field fails the same way however often it is sent
            retryable=status in RETRY_STATUSES
            and not rejects_schema(status, message, self.refusal_statuses),
            retry_after=parse_retry_after(headers.get("retry-after")),
        )

    def _bad_output(self, what: str) -> _Failure:
        return _Failure(f"{self.provider} answered 200 with {what}", status=200,
                        output_error=True)

    def _transport_failure(self, err: httpx.TransportError, *, emitted: bool = False) -> _Failure:
        reason = ""
        if isinstance(err, httpx.ConnectError | httpx.ConnectTimeout):
            reason = _connect_reason(err)
            message = (f"cannot reach {self.provider} at {self.base_url} "
                       f"({reason}); is the server running?")
        elif isinstance(err, httpx.ReadTimeout):
            message = (f"{self.provider} at {self.base_url} sent nothing for "
                       f"{self.timeout.read:g}s (read timeout)")
            if self.local:  # resending would queue behind the reply it is still generating
                message += "; not retried, the local server may still be generating"
            message += "; raise request_timeout in the config (or AGENT_TIMEOUT) if it needs longer"
        elif isinstance(err, httpx.RemoteProtocolError | httpx.ReadError):
            where = "in the middle of the stream" if emitted else "before a complete response"
            message = f"{self.provider} at {self.base_url} closed the connection {where}"
        else:
            message = f"request to {self.provider} at {self.base_url} failed: {err}"
        retryable = isinstance(
            err,
            httpx.ConnectError | httpx.ConnectTimeout | httpx.ReadTimeout
            | httpx.RemoteProtocolError | httpx.ReadError,
        ) and not (self.local and isinstance(err, httpx.ReadTimeout)) and (
            reason != "host not found")  # a name that does not resolve will not next time
        return _Failure(message, retryable=retryable)

    def _give_up_unless_retryable(
        self, failure: _Failure, attempt: int, *, emitted: bool = False
    ) -> None:
        """Raise the user-facing error unless another attempt is allowed."""
        if failure.retryable and not emitted and attempt < self.max_retries:
            return
        message = failure.message
        if failure.retryable and attempt > 0:
            message += f" (gave up after {attempt + 1} attempts)"
        raise self._error(message, failure.status, output=failure.output_error) from failure

    def _error(self, message: str, status: int | None, *, output: bool = False) -> ProviderError:
        """The one place provider errors are built; the API key never leaves here."""
        message = redact(message)
        cls = ModelOutputError if output else ProviderError
        return cls(message, provider=self.provider, status=status)

    def _retry_delay(self, attempt: int, failure: _Failure) -> float:
        """The backoff before the next attempt, reported to ``on_retry`` first.

        A wait longer than the run has left is not started: the run stops at once.
        """
        delay = self._backoff(attempt, failure.retry_after)
        left = run_deadline.remaining()
        if left is not None and delay >= left:
            asked = (f"asked to retry in {failure.retry_after:g}s (Retry-After)"
                     if failure.retry_after is not None else f"needs a {delay:.1f}s backoff")
            raise DeadlineExceeded(
                f"{self.provider} failed ({self._error(failure.message, None).args[0]}) and "
                f"{asked}, but the run has only {left:.1f}s left (max_execution_time)"
            ) from failure
        if self.on_retry is not None:
            self.on_retry({
                "model": self.name, "attempt": attempt + 1, "delay": round(delay, 3),
                "status": failure.status, "error": self._error(failure.message, None).args[0],
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
        t = self.timeout

        def cap(value: float | None) -> float:
            return left if value is None else min(value, left)

        return httpx.Timeout(connect=cap(t.connect), read=cap(t.read), write=cap(t.write),
                             pool=cap(t.pool))

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

    def _check_overdue(self, limit: _Limit) -> None:
        """Raise :meth:`_overdue` when the attempt's deadline has passed."""
        if time.monotonic() >= limit.at - _SLACK:
            raise self._overdue(limit)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before the next attempt: ``Retry-After`` or full jitter."""
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        return random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2**attempt))


class _SSEState:
    """Turns SSE lines into chunks for one attempt, applying stop strings to the text."""

    def __init__(self, model: OpenAICompatModel, stop: Sequence[str] | None) -> None:
        self.model = model
        self.stopper = StopStream(stop)
        self.finished = False  # [DONE] seen, or a stop string cut the text
        self.finish_reason: str | None = None
        self.saw_choice = False

    def feed(self, line: str) -> list[ChatChunk]:
        """Chunks carried by one SSE line (none for comments, blank lines and events)."""
        if not line.startswith("data:"):
            return []
        data = line[5:].strip()
        if data == "[DONE]":
            self.finished = True
            return []
        try:
            event = json.loads(data)
        except ValueError:
            event = _NOT_JSON
        if event is _NOT_JSON:
            raise self.model._bad_output(f"a stream event that is not JSON: {data[:200]!r}")
        if not isinstance(event, dict):
            return []
        if event.get("error"):
            raise _Failure(f"{self.model.provider} sent an error in the stream: "
                           f"{_server_message(data)}")
        out: list[ChatChunk] = []
        choices = event.get("choices") or []
        if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
            raise self.model._bad_output("a stream event whose 'choices' are not objects")
        for choice in choices:
            self.saw_choice = True
            out.extend(self._choice_chunks(choice))
        if event.get("usage"):
            out.append(ChatChunk(usage=_usage(event["usage"])))
        return out

    def _choice_chunks(self, choice: dict[str, Any]) -> Iterator[ChatChunk]:
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise self.model._bad_output(f"a stream 'delta' that is a {type(delta).__name__}")
        content = _content_text(delta.get("content"))
        if content is None:
            raise self.model._bad_output("a stream 'content' that is not text")
        if content and not self.stopper.stopped:
            safe = self.stopper.feed(content)
            if safe:
                yield ChatChunk(text=safe)
            if self.stopper.stopped:
                # Stop reading: the server ignored ``stop`` and what follows is not wanted.
                self.finished = True
                self.finish_reason = "stop"
                yield ChatChunk(finish_reason="stop")
                return
        raw_calls = delta.get("tool_calls") or []
        if not isinstance(raw_calls, list) or not all(
                isinstance(c, dict) and isinstance(c.get("function") or {}, dict)
                for c in raw_calls):
            raise self.model._bad_output("stream 'tool_calls' that are not a list of objects")
        for raw in raw_calls:
            fn = raw.get("function") or {}
            args = fn.get("arguments") or ""
            yield ChatChunk(
                tool_call_index=raw.get("index"),
                tool_call_id=raw.get("id") or None,
                tool_call_name=fn.get("name") or None,
                tool_call_arguments=args if isinstance(args, str) else json.dumps(args),
            )
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
            yield ChatChunk(finish_reason=choice["finish_reason"])

    def end(self, emitted: bool) -> list[ChatChunk]:
        """Held-back text at the end, or a failure when the stream stopped short."""
        if not self.finished and self.finish_reason is None:
            where = "in the middle of the stream" if emitted else "before any content"
            raise _Failure(
                f"{self.model.provider} at {self.model.base_url} ended the stream {where}",
                retryable=True,
            )
        if not self.saw_choice:
            raise self.model._bad_output("a stream that holds no choices")
        rest = self.stopper.flush()
        return [ChatChunk(text=rest)] if rest else []


def _ignore_token(_: str) -> None:
    """A token sink that keeps nothing (the chunks are collected anyway)."""


def _content_text(content: Any) -> str | None:
    """Message content as text: a string, or a list of ``{"type": "text", "text"}`` parts
    (some servers); None when it is anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(str(p.get("text") or "") for p in content)
    return None


def _count(value: Any) -> int:
    """A token count; servers sometimes send numbers as strings, or junk we ignore."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def _tool_call(raw: dict[str, Any], index: int) -> ToolCall:
    fn = raw.get("function") or {}
    if not isinstance(fn, dict):
        fn = {}
    args = fn.get("arguments")
    if args is None:
        args = ""
    elif not isinstance(args, str):  # some servers (Ollama) send an object, not JSON text
        args = json.dumps(args)
    return ToolCall(id=str(raw.get("id") or f"call_{index}"), name=str(fn.get("name") or ""),
                    arguments=args)


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(_count(raw.get("prompt_tokens")), _count(raw.get("completion_tokens")))
