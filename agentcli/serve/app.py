"""The ASGI app of ``agent serve``: ``GET /v1/models`` and ``POST /v1/chat/completions``.

Starlette routes over :mod:`agentcli.serve.turns` (the run) and :mod:`agentcli.serve.wire`
(the format). A streamed answer sends the role first, the run's trace as SSE comments while
it runs (every SSE client skips comments), then the answer and ``[DONE]``. A non-streamed one
carries the trace only when asked (``"agent_trace": true`` or ``X-Agent-Trace: 1``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agentcli.errors import AgentCliError, ProviderError
from agentcli.redact import redact
from agentcli.serve.agents import ServedAgent
from agentcli.serve.guard import Guard
from agentcli.serve.turns import Turn, run_turn
from agentcli.serve.wire import (
    TRACE_FIELD,
    ChatCall,
    WireError,
    chunk,
    completion,
    error_body,
    new_id,
    parse_chat,
    sse_comment,
    sse_data,
)
from agentcli.store import Store

MAX_BODY = 4 * 1024 * 1024  # bytes of one request


@dataclass
class Service:
    """What every request shares: the agents by model id, the store, the environment."""

    agents: dict[str, ServedAgent]
    store: Store
    env: Mapping[str, str]
    log_runs: bool = True

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
        try:
            served = service.agent_for(request.path_params["model"])
        except WireError as err:
            return JSONResponse(err.body(), status_code=err.status)
        return JSONResponse(served.describe())

    async def chat(request: Request) -> Response:
        try:
            raw = await request.body()
            if len(raw) > MAX_BODY:
                raise WireError(413, f"the request body is over {MAX_BODY // 1024} KB")
            try:
                body = json.loads(raw)
            except ValueError:
                raise WireError(400, "the request body is not valid JSON") from None
            call = parse_chat(body, request.headers)
            served = service.agent_for(call.model)
        except WireError as err:
            return JSONResponse(err.body(), status_code=err.status)
        if call.stream:
            return StreamingResponse(_stream(service, served, call),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        return await _complete(service, served, call)

    routes = [Route("/v1/models", models, methods=["GET"]),
              Route("/v1/models/{model:path}", model, methods=["GET"]),
              Route("/v1/chat/completions", chat, methods=["POST"])]
    return Guard(Starlette(routes=routes), token=token)


async def _complete(service: Service, served: ServedAgent, call: ChatCall) -> Response:
    trace: list[Any] = []
    turn: Turn | None = None
    try:
        async for item in run_turn(served, call, service.store, service.env,
                                   log_runs=service.log_runs):
            if isinstance(item, Turn):
                turn = item
            elif call.want_trace:
                trace.append(json.loads(item))
    except Exception as err:
        status, body = _failure(err, service.env)
        return JSONResponse(body, status_code=status)
    assert turn is not None
    extra = {TRACE_FIELD: trace} if call.want_trace else {}
    return JSONResponse(completion(new_id(), served.name, turn.content, turn.finish,
                                   turn.result.usage, {**extra, **_about(turn, call)}))


async def _stream(service: Service, served: ServedAgent, call: ChatCall) -> AsyncIterator[str]:
    cid = new_id()
    yield sse_data(chunk(cid, served.name, {"role": "assistant", "content": ""}))
    turn: Turn | None = None
    try:
        async for item in run_turn(served, call, service.store, service.env,
                                   log_runs=service.log_runs):
            if isinstance(item, Turn):
                turn = item
            else:
                yield sse_comment(f"{TRACE_FIELD} {item}")
    except Exception as err:
        yield sse_data(_failure(err, service.env)[1])
        yield sse_data("[DONE]")
        return
    assert turn is not None
    yield sse_data(chunk(cid, served.name, {"content": turn.content}))
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
