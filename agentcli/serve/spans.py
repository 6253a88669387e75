"""The HTTP server span of each ``agent serve`` request, in the caller's trace.

A pure ASGI middleware, put in front of the app only when OpenTelemetry export is on (it needs
``opentelemetry-api``). It reads the request's W3C ``traceparent`` / ``tracestate``, opens a
SERVER span ``POST /v1/chat/completions`` under that context (a new trace without one), and
makes it current while the request is handled: the served run's ``invoke_agent`` span and
everything under it join the caller's trace. The span follows the HTTP semantic conventions
(method, route, status; a 5xx marks it an error).
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_ROUTES = ("/v1/chat/completions", "/v1/models")  # the app's routes (and /v1/models/{model})


def _route(path: str) -> str | None:
    if path in _ROUTES:
        return path
    return "/v1/models/{model}" if path.startswith("/v1/models/") else None


class ServerSpans:
    """Wraps ``app``: one SERVER span per HTTP request, child of the request's traceparent."""

    def __init__(self, app: ASGIApp, tracer_provider: Any) -> None:
        self.app = app
        self._tracer = trace.get_tracer("agentcli.serve", tracer_provider=tracer_provider)
        self._propagator = TraceContextTextMapPropagator()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", ())}
        caller = self._propagator.extract(headers)  # the client's trace, when it sent one
        method, route = scope.get("method", "GET"), _route(scope.get("path", ""))
        attributes: dict[str, Any] = {"http.request.method": method,
                                      "url.path": scope.get("path", ""),
                                      "url.scheme": scope.get("scheme", "http")}
        if route is not None:
            attributes["http.route"] = route
        server, client = scope.get("server"), scope.get("client")
        if server:
            attributes.update({"server.address": server[0], "server.port": server[1]})
        if client:
            attributes["client.address"] = client[0]
        span = self._tracer.start_span(f"{method} {route}" if route else method, context=caller,
                                       kind=trace.SpanKind.SERVER, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span, caller))

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_attribute("error.type", str(status))
                    span.set_status(trace.Status(trace.StatusCode.ERROR))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except BaseException as err:
            span.set_attribute("error.type", type(err).__name__)
            span.set_status(trace.Status(trace.StatusCode.ERROR))
            raise
        finally:
            otel_context.detach(token)
            span.end()
