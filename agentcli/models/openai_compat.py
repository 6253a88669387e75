"""OpenAI-compatible chat completions over httpx: async, SSE streaming, one attempt loop.

Plain and streamed requests go through one coroutine, :meth:`OpenAICompatModel._reply`, whose
loop retries by the decisions in ``attempts.py`` (a refused schema field is dropped for the
next attempt); the request body is built here, the reply read by ``wire.py``. Sync callers
reach it through the model base class's one bridge.
Every failure becomes one :class:`ProviderError` (or :class:`ModelOutputError`) built in
:meth:`OpenAICompatModel._error`, which scrubs the API key from the message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import httpx

from agentcli.errors import ModelOutputError, ProviderError
from agentcli.events import notify
from agentcli.models.attempts import Attempts, _Limit
from agentcli.models.base import BaseChatModel, TokenSink, assemble_chunks
from agentcli.models.http_pool import ack_now, loop_pool, running_pool, sent_hook
from agentcli.models.structured import (
    REFUSAL_STATUSES,
    choose_mechanism,
    rejects_schema,
    schema_fields,
)
from agentcli.models.wire import Failure, SSEState, parse_response, read_sse
from agentcli.redact import is_secret_name, redact, remember
from agentcli.schema import ChatRequest, ChatResult, Message

# Sleeping goes through this name so tests can patch it and run fast.
_asleep: Callable[[float], Any] = asyncio.sleep

_USER_AGENT = "agentcli/0.1"
_MAX_SERVER_STOPS = 4  # OpenAI rejects more than four stop sequences; the rest are cut here


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
        self._https = self.base_url[:8].lower() == "https://"
        self._wire_url = httpx.URL(self.url)  # parsed once (httpx would parse it per request)
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
        self._json_headers = {"User-Agent": _USER_AGENT, **(extra_headers or {}),
                              "Content-Type": "application/json"}
        if self._api_key:
            self._json_headers["Authorization"] = f"Bearer {self._api_key}"
        self._last_messages: tuple[list[Message], str] = ([], "")  # see _joined
        # Keys and custom header values (often tokens) never reach an error, log or trace.
        remember([self._api_key, *(v for k, v in (extra_headers or {}).items()
                                    if is_secret_name(k))])
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
        self._whole_under_schema = False  # the server streamed nothing under a schema

    def __repr__(self) -> str:
        return f"OpenAICompatModel({self.name!r}, base_url={self.base_url!r})"

    # -- public API -------------------------------------------------------------------------

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """One completion; streams over SSE and feeds ``on_token`` when it is given.

        ``response_format`` (a JSON Schema) constrains the reply where the server can.
        """
        constrained = self._sends_schema(request)
        if on_token is not None and constrained and self._whole_under_schema:
            result = await self._reply(request, None)  # asked whole, then passed on
            if result.text:
                on_token(result.text)
            return result
        if on_token is None and self.local and request.stop and not constrained:
            on_token = _ignore_token  # streaming lets a stop string the server ignores end it
        result = await self._reply(request, on_token)
        if on_token is not None and constrained and not (result.text or result.tool_calls):
            # llama.cpp's server streams under a schema; llama-cpp-python 0.3 sends no content
            # there: such a server is asked whole from now on (nothing was passed on yet)
            self._whole_under_schema = True
            again = await self.arequest(request, on_token)
            return replace(again, usage=result.usage + again.usage)
        return result

    def _sends_schema(self, request: ChatRequest) -> bool:
        """Whether this request will carry a JSON Schema."""
        return request.response_format is not None and self.structured_mechanism is not None

    def _drops_schema(self, failure: Failure, request: ChatRequest) -> bool:
        """Whether ``failure`` refused the schema field and it is no longer sent (``auto``);
        with ``structured_actions: on`` that is an error."""
        if not (self._sends_schema(request) and failure.status is not None
                and rejects_schema(failure.status, failure.message, self.refusal_statuses)):
            return False
        if self.structured_actions == "on":
            raise self._error(
                f"{failure.message} (the server refused the JSON Schema sent because "
                "structured_actions is on; set structured_actions: off or pass "
                "--structured-actions off)", failure.status) from failure
        self.structured_mechanism = None  # for the rest of this session
        notify("notice", f"{self.provider} at {self.base_url} refused the JSON Schema for "
               f"actions ({failure.status}); continuing without structured actions")
        return True

    async def _reply(self, request: ChatRequest, on_token: TokenSink | None) -> ChatResult:
        """The one attempt loop: send the request, open the response (status, headers), read
        it whole (``on_token`` None) or as SSE chunks whose text goes to ``on_token``; retry
        what may succeed next time (a stream that already passed a chunk on is never resent).
        A refused schema field is dropped for the next attempt, which is not counted as a retry.

        Each attempt is bounded by the loop's own timeout at its deadline (the run's or
        ``request_timeout``). One coroutine, no generator or context-manager layers: a batch
        makes this call hundreds of times at once, and each layer is resumed at every read.
        """
        stream = on_token is not None
        body = self._body(request, stream=stream)
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
                events = SSEState(self.provider, self.base_url, request.stop)  # this attempt's
                try:
                    try:
                        async with asyncio.timeout_at(limit.at):
                            resp = await client.send(
                                self._request(client, body, limit, shard), stream=stream)
                            try:
                                if resp.status_code >= 400:
                                    await resp.aread()
                                    raise self._status_failure(resp)
                                if not stream:
                                    return parse_response(self.provider, self.model, resp,
                                                          request.stop)
                                ack_now(resp)
                                chunks = await read_sse(resp, events, on_token)  # type: ignore[arg-type]
                                return replace(assemble_chunks(chunks), model=self.model)
                            finally:
                                if stream:
                                    await resp.aclose()
                    except TimeoutError:
                        raise self._overdue(limit) from None
                    except httpx.TransportError as err:
                        raise self._transport_failure(err, limit, emitted=events.emitted) from err
                except Failure as failure:
                    if self._drops_schema(failure, request):  # the next attempt goes without
                        body = self._body(request, stream=stream)
                        continue
                    self._give_up_unless_retryable(failure, attempt, emitted=events.emitted)
                    await _asleep(self._retry_delay(attempt, failure))
                    attempt += 1
        finally:
            if shard is not None:
                pool.give_back(shard)  # type: ignore[union-attr]

    def close(self) -> None:
        """Nothing to release: injected clients belong to the caller, pooled ones are shared."""

    # -- requests ---------------------------------------------------------------------------

    def own_options(self, params: Iterable[str] = ()) -> dict[str, Any]:
        """What this model adds to a request (whose own options are ``params``): temperature,
        the model's options and, on a local server, ``max_tokens`` unless a limit is set."""
        own = {} if self.temperature is None else {"temperature": self.temperature}
        own.update(self.options)
        if self.local and self.local_max_tokens and not (
                {"max_tokens", "max_completion_tokens"} & {*own, *params}):
            own["max_tokens"] = self.local_max_tokens
        return own

    def _fields(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        """Every field of the request body but its messages."""
        payload: dict[str, Any] = {"model": self.model, **self.own_options(request.options)}
        stops = [s for s in request.stop if s]
        if stops:
            payload["stop"] = stops[:_MAX_SERVER_STOPS]
        if request.tools:
            payload["tools"] = list(request.tools)
        schema = request.response_format
        if schema is not None and self.structured_mechanism is not None:
            payload.update(schema_fields(self.structured_mechanism, schema))
        payload.update(request.options)
        if stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        return payload

    def _body(self, request: ChatRequest, *, stream: bool) -> bytes:
        """The request body as JSON, assembled from each message's own JSON (encoded once per
        message, :meth:`Message.wire_json`), so a long history costs a join, not a new
        encoding, on every request."""
        rest = json.dumps(self._fields(request, stream=stream), ensure_ascii=False,
                          separators=(",", ":"), allow_nan=False)
        return f'{{"messages":[{self._joined(request.messages)}],{rest[1:]}'.encode()

    def _joined(self, messages: Sequence[Message]) -> str:
        """The messages' JSON joined by commas; the part for the messages the last request
        began with (the same history, one step shorter) is reused."""
        known, text = self._last_messages
        n = len(known)
        if n and n <= len(messages) and list(messages[:n]) == known:  # identity first, in C
            more = ",".join([m.wire_json() for m in messages[n:]])
            text = f"{text},{more}" if more else text
        else:
            text = ",".join([m.wire_json() for m in messages])
        self._last_messages = (list(messages), text)
        return text

    def _request(self, client: httpx.AsyncClient, body: bytes, limit: _Limit,
                 pooled: object) -> httpx.Request:
        """The POST for one attempt. On a pooled client (no base URL, cookies, parameters or
        auth) it is built directly: ``Host``, the client's default headers and this model's
        over them, merged once, not on every call, and the body's length (what httpx would
        add, in its order). Someone else's client applies its own defaults."""
        timeout = self._timeout_until(limit)
        if pooled is None:
            return client.build_request("POST", self.url, content=body,
                                        headers=self._json_headers, timeout=timeout,
                                        extensions=sent_hook())
        defaults = client.headers.raw
        known = self._pool_headers
        if known is None or known[0] != defaults:
            merged = httpx.Headers({"Host": self._wire_url.netloc.decode("ascii")})
            merged.update(client.headers)
            merged.update(self._json_headers)
            known = self._pool_headers = (defaults, merged)
        headers = httpx.Headers(known[1])  # a copy: a list's copy
        headers["Content-Length"] = str(len(body))
        return httpx.Request("POST", self._wire_url, headers=headers,
                             stream=httpx.ByteStream(body),
                             extensions={"timeout": timeout.as_dict(), **sent_hook()})

    # -- responses --------------------------------------------------------------------------

    def _error(self, message: str, status: int | None, *, output: bool = False) -> ProviderError:
        """The one place provider errors are built; the API key never leaves here."""
        message = redact(message)
        cls = ModelOutputError if output else ProviderError
        return cls(message, provider=self.provider, status=status)


def _ignore_token(_: str) -> None:
    """A token sink that keeps nothing (the chunks are collected anyway)."""
