"""OpenAI-compatible chat completions over httpx: async, SSE streaming, one retry loop.

A plain request is one coroutine (:meth:`OpenAICompatModel._complete`), a streamed one an
async generator (:meth:`OpenAICompatModel._exchange`); both retry by the same decisions
(``attempts.py``). Sync callers reach them through the model base class's one bridge.
Every failure becomes one :class:`ProviderError` (or :class:`ModelOutputError`) built in
:meth:`OpenAICompatModel._error`, which scrubs the API key from the message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import httpx

from agentcli.errors import ModelOutputError, ProviderError
from agentcli.models.attempts import RETRY_STATUSES, Attempts, _Limit
from agentcli.models.base import (
    BaseChatModel,
    TokenSink,
    assemble_chunks,
    report,
)
from agentcli.models.http_pool import (
    TimedClient,
    finish_body,
    is_https,
    loop_client,
    loop_pool,
    running_pool,
)
from agentcli.models.http_pool import close_shared_clients as close_shared_clients  # re-export
from agentcli.models.structured import (
    REFUSAL_STATUSES,
    choose_mechanism,
    rejects_schema,
    schema_fields,
)
from agentcli.models.wire import (
    Failure,
    SSEState,
    parse_response,
    parse_retry_after,
    server_message,
)
from agentcli.redact import is_secret_name, redact, remember
from agentcli.schema import ChatChunk, ChatRequest, ChatResult, Message

# Sleeping goes through this name so tests can patch it and run fast.
_asleep: Callable[[float], Any] = asyncio.sleep

_MAX_SERVER_STOPS = 4  # OpenAI rejects more than four stop sequences; the rest are cut here
_USER_AGENT = "agentcli/0.1"


class OpenAICompatModel(Attempts, BaseChatModel):
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
        self._https = is_https(self.base_url)
        self._url: tuple[str, httpx.URL] | None = None  # see _wire_url
        self._pool_headers: tuple[list[tuple[bytes, bytes]], httpx.Headers] | None = None
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
        self._json_headers = {**self._headers, "Content-Type": "application/json"}
        self._last_messages: tuple[list[Message], str] = ([], "")  # see _joined
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

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """One completion; streams over SSE and feeds ``on_token`` when it is given.

        ``response_format`` (a JSON Schema) constrains the reply where the server can.
        """
        messages, stop, tools = request.messages, request.stop, request.tools
        params = request.params()
        constrained = self._sends_schema(params)
        if on_token is not None and constrained and self.structured_mechanism == "llamacpp":
            # llama-cpp-python 0.3 streams nothing under a grammar: ask whole, then pass it on.
            result = await self.arequest(request)
            if result.text:
                on_token(result.text)
            return result
        if on_token is None and self.local and stop and not constrained:
            on_token = _ignore_token  # streaming lets a stop string the server ignores end it
        for attempt in range(2):
            try:
                if on_token is None:
                    return await self._complete(
                        self._body(messages, stop, tools, params, stream=False), stop)
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
                body = self._body(messages, stop, tools, params, stream=True)
                async with contextlib.aclosing(self._exchange(body, stop)) as chunks:
                    async for chunk in chunks:
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

    async def _complete(self, body: bytes, stop: Sequence[str] | None) -> ChatResult:
        """Send ``body`` (see :meth:`_body`) and read the whole reply, retrying what may
        succeed next time: the plain path (one POST, the body read whole).

        Each attempt is bounded by the event loop's own timeout at its deadline (the run's or
        ``request_timeout``). One coroutine, no generator or context-manager layers: a batch
        makes this call hundreds of times at once, and each layer is resumed at every read.
        """
        client: httpx.AsyncClient | None = self._async_client
        pool = shard = None
        if client is None:
            pool = running_pool(self._https) or await loop_pool(self._https)
            shard = pool.pick()
            client = shard.client
        try:
            attempt = 0
            while True:
                limit = self._attempt_limit()
                try:
                    try:
                        async with asyncio.timeout_at(limit.at):
                            if shard is None:  # someone else's client: its own defaults apply
                                resp = await client.post(
                                    self._wire_url(), content=body, headers=self._json_headers,
                                    timeout=self._timeout_until(limit))
                            else:
                                resp = await client.send(self._request(client, body, limit))
                    except TimeoutError:
                        raise self._overdue(limit) from None
                    except httpx.TransportError as err:
                        self._check_overdue(limit)
                        raise self._transport_failure(err) from err
                    if resp.status_code >= 400:
                        self._raise_status(resp.status_code, resp.reason_phrase, resp.headers,
                                           resp.text)
                    return parse_response(self.provider, self.model, resp.status_code,
                                          resp.content, stop, _text_of(resp))
                except Failure as failure:
                    self._give_up_unless_retryable(failure, attempt)
                    await _asleep(self._retry_delay(attempt, failure))
                    attempt += 1
        finally:
            if shard is not None:
                pool.give_back(shard)  # type: ignore[union-attr]

    async def _exchange(self, body: bytes, stop: Sequence[str] | None
                        ) -> AsyncGenerator[ChatChunk, None]:
        """Send ``body`` (see :meth:`_body`) and stream the reply's chunks, retrying what
        may succeed next time (a stream that already yielded is never resent); each attempt
        bounded like :meth:`_complete`'s.
        """
        async with self._aclient() as client:
            for attempt in range(self.max_retries + 1):
                emitted = False
                limit = self._attempt_limit()
                try:
                    try:
                        async with contextlib.AsyncExitStack() as stack:
                            async with asyncio.timeout_at(limit.at):
                                resp = await stack.enter_async_context(client.stream(
                                    "POST", self.url, content=body, headers=self._json_headers,
                                    timeout=self._timeout_until(limit),
                                ))
                                if resp.status_code >= 400:
                                    await resp.aread()
                            if resp.status_code >= 400:
                                self._raise_status(resp.status_code, resp.reason_phrase,
                                                   resp.headers, resp.text)
                            events = SSEState(self.provider, self.base_url, stop)
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
                except Failure as failure:
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

    def _body(
        self,
        messages: Sequence[Message],
        stop: Sequence[str] | None,
        tools: Sequence[dict[str, Any]] | None,
        params: dict[str, Any],
        *,
        stream: bool,
    ) -> bytes:
        """The request body: :meth:`_payload` as JSON, assembled from each message's own JSON
        (encoded once per message, :meth:`Message.wire_json`), so a long history costs a join,
        not a new encoding, on every request."""
        rest = self._payload((), stop, tools, params, stream=stream)
        del rest["messages"]
        head = json.dumps(rest, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return f'{{"messages":[{self._joined(messages)}],{head[1:]}'.encode()

    def _joined(self, messages: Sequence[Message]) -> str:
        """The messages' JSON joined by commas; the part for the messages the last request
        began with (the same history, one step shorter) is reused."""
        known, text = getattr(self, "_last_messages", ([], ""))
        n = len(known)
        if n and n <= len(messages) and list(messages[:n]) == known:  # identity first, in C
            more = ",".join([m.wire_json() for m in messages[n:]])
            text = f"{text},{more}" if more else text
        else:
            text = ",".join([m.wire_json() for m in messages])
        self._last_messages = (list(messages), text)
        return text

    def _request(self, client: httpx.AsyncClient, body: bytes, limit: _Limit) -> httpx.Request:
        """The request ``client.post`` would build on a pooled client (which has no base URL,
        cookies, parameters or auth), built directly: its headers are the client's defaults
        with this model's over them, merged once, not on every call."""
        defaults = client.headers.raw
        known = self._pool_headers
        if known is None or known[0] != defaults:
            merged = httpx.Headers(client.headers)
            merged.update(self._json_headers)
            known = self._pool_headers = (defaults, merged)
        timeout = self._timeout_until(limit)
        return httpx.Request("POST", self._wire_url(), content=body, headers=known[1],
                             extensions={"timeout": timeout.as_dict()})

    def _wire_url(self) -> httpx.URL:
        """``self.url`` parsed once (httpx would parse the string on every request)."""
        known = self._url
        if known is None or known[0] != self.url:
            known = self._url = (self.url, httpx.URL(self.url))
        return known[1]

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

    def _raise_status(self, status: int, reason: str, headers: httpx.Headers, body: str) -> None:
        reason = reason or httpx.codes.get_reason_phrase(status)
        message = f"{self.provider} returned {status} {reason}: {server_message(body)}".rstrip()
        raise Failure(
            message,
            status=status,
            # a refused request field fails the same way however often it is sent
            retryable=status in RETRY_STATUSES
            and not rejects_schema(status, message, self.refusal_statuses),
            retry_after=parse_retry_after(headers.get("retry-after")),
        )

    def _error(self, message: str, status: int | None, *, output: bool = False) -> ProviderError:
        """The one place provider errors are built; the API key never leaves here."""
        message = redact(message)
        cls = ModelOutputError if output else ProviderError
        return cls(message, provider=self.provider, status=status)


def _text_of(resp: httpx.Response) -> Callable[[], str]:
    """The response's text, decoded when asked (its bytes are parsed as they are)."""
    return lambda: resp.text


def _ignore_token(_: str) -> None:
    """A token sink that keeps nothing (the chunks are collected anyway)."""
