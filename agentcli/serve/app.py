"""The ASGI app of ``agent serve``: ``GET /v1/models`` and ``POST /v1/chat/completions``.

Starlette routes over :mod:`agentcli.serve.turns` (the run) and :mod:`agentcli.serve.wire`
(the format). A streamed answer sends the role first, then the answer's tokens as the model
writes them, then the finish and ``[DONE]``. The run's trace comes only when asked
(``"agent_trace": true`` or ``X-Agent-Trace: 1``): as SSE comments in a stream (every SSE
client skips them), as a field of a non-streamed answer. A client that hangs up cancels its
run, said in one line through ``Service.say``. Every answer, errors included (unknown path,
wrong method), is JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from agentcli._sync import in_thread
from agentcli.errors import AgentCliError, ProviderError
from agentcli.records import record
from agentcli.redact import redact
from agentcli.serve.agents import ServedAgent
from agentcli.serve.guard import Guard
from agentcli.serve.turns import Delta, Turn, run_turn
from agentcli.serve.wire import (
    TRACE_FIELD,
    ChatCall,
    WireError,
    chunk,
    completion,
    error_body,
    new_id,
    parse_chat,
    read_json,
    sse_comment,
    sse_data,
)
from agentcli.store import Store
from agentcli.structured import ResponseFormat

MAX_BODY = 4 * 1024 * 1024  # bytes of one request


@record(frozen=False)
class Service:
    """What every request shares: the agents by model id, the store, the environment, and
    where a line for the server's console goes (``say``)."""

    agents: dict[str, ServedAgent]
    store: Store
    env: Mapping[str, str]
    log_runs: bool = True
    say: Callable[[str], None] = field(default=lambda line: None)

    def client_left(self, request: Request, served: ServedAgent) -> None:
        """Say that a client left before its answer, so its run was stopped."""
        who = f"{request.client.host}:{request.client.port}" if request.client else "a client"
        self.say(f"client {who} disconnected before its answer: its run of {served.name!r} "
                 "was stopped")

    def agent_for(self, model: str | None) -> ServedAgent:
        """The agent a request names (the first one when it names none)."""
        if model is None:
            return next(iter(self.agents.values()))
        if model not in self.agents:
            raise WireError(404, f"model {model!r} is not served here; models: "
                            f"{', '.join(self.agents)}", code="model_not_found", param="model")
        return self.agents[model]


def create_app(service: Service, *, token: str | None) -> Guard:
    """The app, behind the guard (token, loopback Host, JSON bodies)."""

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list",
                             "data": [a.describe() for a in service.agents.values()]})

    async def model(request: Request) -> Response:
        return JSONResponse(service.agent_for(request.path_params["model"]).describe())

    async def chat(request: Request) -> Response:
        call = parse_chat(read_json(await _body(request)), request.headers)
        served = service.agent_for(call.model)
        schema = call.schema
        try:  # the run's output schema: an input of the run; a bad one is the request's fault
            # (checked off the server's loop: CPU-bound, bounded by the wire's size limit)
            answer = None if schema is None else await in_thread(
                lambda: ResponseFormat.of(schema))
        except AgentCliError as err:
            raise WireError(400, f"response_format: {err}", param="response_format") from None
        if call.stream:
            return _EventStream(_stream(request, service, served, call, answer),
                                media_type="text/event-stream",
                                headers={"Cache-Control": "no-cache"})
        return await _complete(request, service, served, call, answer)

    routes = [Route("/v1/models", models, methods=["GET"]),
              Route("/v1/models/{model:path}", model, methods=["GET"]),
              Route("/v1/chat/completions", chat, methods=["POST"])]
    handlers = {HTTPException: _http_error, WireError: _wire_error, Exception: _server_error}
    return Guard(Starlette(routes=routes, exception_handlers=handlers), token=token)


class _EventStream(StreamingResponse):
    """A stream whose status line and headers go out with its first chunk: what comes before
    that chunk (the run's model request) is not queued behind them. It streams in the
    request's own task, which a client that leaves cancels (Starlette runs the stream in a
    task of an anyio task group beside the watcher: a task hop and cancel scopes more on
    the way to the model request, ~0.1 ms)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Stream until the end or until the client leaves (then the stream is cancelled)."""
        here = asyncio.current_task()
        assert here is not None
        over = False

        def left(_: object) -> None:
            if not over:
                here.cancel()

        gone = asyncio.ensure_future(self.listen_for_disconnect(receive))
        gone.add_done_callback(left)
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            # the client left: the stream ends here, as in Starlette; any other cancel goes on
            if not (gone.done() and not gone.cancelled()) or here.uncancel() > 0:
                raise
            if (failed := gone.exception()) is not None:  # the watcher broke, not the client
                raise failed from None
        finally:
            over = True
            gone.cancel()

    async def stream_response(self, send: Send) -> None:
        """Wait for the first chunk, then stream as Starlette does."""
        chunks = aiter(self.body_iterator)
        first = await anext(chunks, None)
        self.body_iterator = _from(first, chunks)
        await super().stream_response(send)


async def _from(first: str | bytes | memoryview | None,
                rest: AsyncIterator[str | bytes | memoryview]
                ) -> AsyncIterator[str | bytes | memoryview]:
    if first is not None:
        yield first
    async for part in rest:
        yield part


async def _body(request: Request) -> bytes:
    """The request body, refused (413) past :data:`MAX_BODY` before it is read: by its
    ``Content-Length``, or, for a chunked body, as soon as what arrived passes the limit."""
    too_big = WireError(413, f"the request body is over {MAX_BODY // 1024} KB",
                        code="request_too_large")
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > MAX_BODY:
        raise too_big
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > MAX_BODY:
            raise too_big
    return bytes(body)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (unknown path, wrong method) as OpenAI-shaped JSON."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = f"no such endpoint: {request.url.path} (this server has /v1/models and " \
                  "/v1/chat/completions)"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    return JSONResponse(error_body(message, type="invalid_request_error",
                                   code=str(exc.status_code)),
                        status_code=exc.status_code, headers=exc.headers)


async def _wire_error(request: Request, exc: Exception) -> Response:
    """A request the endpoint refuses (:class:`WireError`), as its OpenAI error body."""
    assert isinstance(exc, WireError)
    return JSONResponse(exc.body(), status_code=exc.status)


async def _server_error(request: Request, exc: Exception) -> Response:
    """Our own bug, as a JSON 500 naming the error class (its text may hold data)."""
    return JSONResponse(error_body(f"internal error: {type(exc).__name__}", type="server_error"),
                        status_code=500)


async def _complete(request: Request, service: Service, served: ServedAgent,
                    call: ChatCall, answer: ResponseFormat | None) -> Response:
    """Run to the end and answer; a client that hangs up first cancels the run."""
    run = asyncio.ensure_future(_collect(service, served, call, answer))
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({run, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not run.done():  # the client left (or this request was cancelled): stop the run
            run.cancel()
            with contextlib.suppress(BaseException):
                await run
    if run.cancelled():
        service.client_left(request, served)
        return Response(status_code=499)  # nobody is there to read it
    try:
        turn, trace = run.result()
    except Exception as err:
        status, body = _failure(err, service.env)
        return JSONResponse(body, status_code=status)
    extra = {TRACE_FIELD: trace} if call.want_trace else {}
    return JSONResponse(completion(new_id(), served.name, turn.content, turn.finish,
                                   turn.result.usage, {**extra, **_about(turn, call)}))


async def _collect(service: Service, served: ServedAgent, call: ChatCall,
                   answer: ResponseFormat | None) -> tuple[Turn, list[Any]]:
    trace: list[Any] = []
    turn: Turn | None = None
    async for item in run_turn(served, call, service.store, service.env,
                               log_runs=service.log_runs, answer=answer):
        if isinstance(item, Turn):
            turn = item
        elif isinstance(item, str):
            trace.append(json.loads(item))
    assert turn is not None
    return turn, trace


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone (the body was read: all that is left is that)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _stream(request: Request, service: Service, served: ServedAgent, call: ChatCall,
                  answer: ResponseFormat | None) -> AsyncIterator[str]:
    """The answer as chunks, each piece the moment the model writes it; the trace as SSE
    comments when asked for. Starlette cancels this (and so the run) when the client leaves."""
    cid = ""
    # the role goes with the response's start, once the run's model request is out (or the
    # run has anything else to say): sent before, it would hold that request up
    turn: Turn | None = None
    try:
        async for item in run_turn(served, call, service.store, service.env,
                                   log_runs=service.log_runs, answer=answer):
            if not cid:
                cid = new_id()
                yield sse_data(chunk(cid, served.name, {"role": "assistant", "content": ""}))
            if isinstance(item, Turn):
                turn = item
            elif isinstance(item, Delta):
                yield sse_data(chunk(cid, served.name, {"content": item.text}))
            elif isinstance(item, str):
                yield sse_comment(f"{TRACE_FIELD} {item}")
    except Exception as err:
        if not cid:
            yield sse_data(chunk(new_id(), served.name, {"role": "assistant", "content": ""}))
        yield sse_data(_failure(err, service.env)[1])
        yield sse_data("[DONE]")
        return
    except (asyncio.CancelledError, GeneratorExit):  # the client left: Starlette stops this
        service.client_left(request, served)
        raise
    assert turn is not None
    yield sse_data({**chunk(cid, served.name, {}, turn.finish), **_about(turn, call)})
    if call.include_usage:
        yield sse_data(chunk(cid, served.name, {}, usage=turn.result.usage))
    yield sse_data("[DONE]")


def _about(turn: Turn, call: ChatCall) -> dict[str, Any]:
    """Extra fields saying how the run went (OpenAI clients keep unknown fields)."""
    about: dict[str, Any] = {"agent_stop_reason": turn.result.stop_reason,
                             "agent_steps": len(turn.result.steps)}
    if call.session is not None:
        about["agent_session"] = call.session
    return about


def _failure(err: Exception, env: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """An error during a run as a status and an OpenAI error body (secrets redacted)."""
    if isinstance(err, ProviderError):
        return 502, error_body(redact(f"the agent's model failed: {err}", env),
                               type="provider_error",
                               code=None if err.status is None else str(err.status))
    if isinstance(err, AgentCliError):
        return 400, error_body(redact(str(err), env), type="invalid_request_error")
    return 500, error_body(redact(f"internal error: {type(err).__name__}: {err}", env),
                           type="server_error")
