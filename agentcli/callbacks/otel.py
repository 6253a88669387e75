"""OpenTelemetry spans of a run, per the GenAI semantic conventions, built from its events.

One span tree per run::

    invoke_agent {agent}                    the run (Start .. End / RunError)
      chat {model}                          one model request (ModelStart .. ModelEnd/Error)
      execute_tool {tool}                   one tool call (ToolStart .. Observation)
        chat {model}                        a model request made inside the tool (``parent``)
        MCP send tools/call ...             the MCP SDK's own span: the tool span is current

While a tool runs its span is the *current* OpenTelemetry context of the task running it,
so spans made by libraries inside the tool (the MCP SDK, which also passes the context on
to the server in ``_meta``) nest under it. Each model request also records the GenAI
metrics ``gen_ai.client.operation.duration`` and ``gen_ai.client.token.usage``. Message
content (prompts, replies, tool arguments and results) is recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, and always redacted.

Needs only ``opentelemetry-api``; where the spans go is the tracer provider's business
(:mod:`agentcli.otel_export` builds the CLI's).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.records import record
from agentcli.redact import redact

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.util.types import AttributeValue

    from agentcli.events import (
        End,
        Finish,
        ModelEnd,
        ModelError,
        ModelStart,
        Observation,
        RunError,
        RunEvent,
        Start,
        ToolError,
        ToolStart,
    )
    from agentcli.schema import ChatRequest, ChatResult, Message, ToolCall, Usage

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_OPTIONS = {  # request options recorded as gen_ai.request.* (never their values' secrets)
    "temperature": "temperature", "max_tokens": "max_tokens", "top_p": "top_p",
    "max_completion_tokens": "max_tokens", "top_k": "top_k", "seed": "seed",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty", "n": "choice.count",
}


@record(frozen=False)
class _Open:
    """A span in progress and, when it was made current, how to undo that."""

    span: trace.Span
    token: object | None = None
    owner: object | None = None  # the task (or thread) whose context holds the span
    seq: int = 0  # attach order


# the conventions' advisory bucket boundaries for the two GenAI client histograms
_SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96,
            81.92]
_TOKENS = [4.0 ** i for i in range(14)]  # 1, 4, 16 ... 67108864
_CONVERSATION_KEYS = ("conversation_id", "session_id", "thread_id")  # LangSmith's thread keys


@record(frozen=False)
class _RunSpans:
    """The open spans of one run."""

    agent: _Open
    # chat span id -> when it started and its metric attributes
    started: dict[int, tuple[float, dict[str, AttributeValue]]] = field(default_factory=dict)
    chats: dict[str | None, list[_Open]] = field(default_factory=dict)  # by parent call
    tools: dict[str, _Open] = field(default_factory=dict)  # by call id (or tool name)
    errors: dict[str, str] = field(default_factory=dict)  # call key -> error.type


_ORDER = itertools.count()


def _owner() -> object:
    try:
        return asyncio.current_task() or threading.get_ident()
    except RuntimeError:  # no running loop: a worker thread
        return threading.get_ident()


def _split(model: str) -> tuple[str, str]:
    """``provider/model`` as (provider, model); a bare name (``fake``) is its own provider."""
    provider, _, name = model.partition("/")
    return (provider, name) if name else (model, model)


def error_type(error: BaseException) -> str:
    """``error.type``: the HTTP status where there is one (``401``), else the class name."""
    status = getattr(error, "status", None)
    return str(status) if isinstance(status, int) and status > 0 else type(error).__name__


def _server(url: str) -> dict[str, AttributeValue]:
    """``server.address`` / ``server.port`` of a base URL (never its path or credentials)."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        return {}
    if not parts.hostname:
        return {}
    return {"server.address": parts.hostname, **({"server.port": port} if port else {})}


class OtelHandler(BaseCallbackHandler):
    """Emits ``invoke_agent`` / ``chat`` / ``execute_tool`` spans for every run it observes."""

    def __init__(self, tracer_provider: trace.TracerProvider | None = None, *,
                 env: Mapping[str, str] | None = None, capture_content: bool | None = None,
                 meter_provider: MeterProvider | None = None, agent_name: str = "agentcli") -> None:
        from opentelemetry import metrics

        self._env = dict(os.environ if env is None else env)
        self._agent_name = agent_name  # a run's own name (run_name) wins
        self._tracer = trace.get_tracer("agentcli", tracer_provider=tracer_provider)
        meter = metrics.get_meter("agentcli", meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=_SECONDS)
        self._tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKENS)
        if capture_content is None:
            capture_content = self._env.get(CAPTURE_ENV, "").strip().lower() == "true"
        self._capture = capture_content
        self._runs: dict[str, _RunSpans] = {}
        self._lock = threading.Lock()
        self._early: trace.Span | None = None  # the next run's span, opened by setting_up()

    @contextlib.contextmanager
    def setting_up(self) -> Iterator[None]:
        """Open the next run's ``invoke_agent`` span now, current while the agent is built,
        so what building does (MCP servers starting) lands in the run's trace, under it."""
        span = self._tracer.start_span(
            f"invoke_agent {self._agent_name}", kind=trace.SpanKind.INTERNAL,
            attributes={"gen_ai.operation.name": "invoke_agent",
                        "gen_ai.agent.name": self._agent_name})
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        finally:
            otel_context.detach(token)
            with self._lock:
                self._early = span

    def end_unused(self) -> None:
        """End the span :meth:`setting_up` opened when no run took it (the build failed)."""
        with self._lock:
            early, self._early = self._early, None
        if early is not None:
            early.end()

    # -- the events ------------------------------------------------------------------------

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Open or close the span this event starts or ends."""
        run_id = str(kw.get("run_id") or "")
        with self._lock:
            if event.kind == "start":
                self._start(run_id, event, kw.get("parent_run_id"))
                return
            run = self._runs.get(run_id)
            if run is None:
                return
            handler = getattr(self, f"_on_{event.kind}", None)
            if handler is not None:
                handler(run, event)
            if event.kind in ("end", "error"):  # a failed run raises: no End follows
                self._runs.pop(run_id, None)

    def _start(self, run_id: str, event: Start, parent: object) -> None:
        name, inputs = event.name or self._agent_name, event.inputs
        attrs: dict[str, AttributeValue] = {"gen_ai.operation.name": "invoke_agent",
                                 "gen_ai.agent.name": name, "agentcli.run_id": run_id}
        conversation = next((event.metadata[k] for k in _CONVERSATION_KEYS
                             if event.metadata.get(k)), None)
        if conversation is not None:  # session.id: OpenInference's name, what Phoenix groups by
            attrs["gen_ai.conversation.id"] = attrs["session.id"] = str(conversation)
        outer = self._runs.get(str(parent)) if parent else None
        ctx = trace.set_span_in_context(outer.agent.span) if outer is not None else None
        if ctx is None and getattr(trace.get_current_span(), "end_time", None) is not None:
            ctx = otel_context.Context()  # an ended span left current (a cut-off call)
        if outer is None and self._early is not None:  # opened while the agent was built
            span, self._early = self._early, None
            span.update_name(f"invoke_agent {name}")
            span.set_attributes(attrs)
        else:
            span = self._tracer.start_span(f"invoke_agent {name}", context=ctx,
                                           kind=trace.SpanKind.INTERNAL, attributes=attrs)
        if self._capture and "input" in inputs:
            span.set_attribute("gen_ai.input.messages", self._json(
                [{"role": "user", "parts": _parts(str(inputs["input"]))}]))
        self._runs[run_id] = _RunSpans(_Open(span))  # not made current: Start and End may
        # come from different tasks, and a run's spans are parented explicitly

    def _on_model_start(self, run: _RunSpans, event: ModelStart) -> None:
        provider, model = _split(event.model)
        parent = run.tools.get(event.parent) if event.parent else None
        under = (parent or run.agent).span
        common: dict[str, AttributeValue] = {"gen_ai.operation.name": "chat",
                                  "gen_ai.provider.name": provider,
                                  "gen_ai.request.model": model, **_server(event.server)}
        if not run.started:  # the run's first request names the agent's model
            run.agent.span.set_attributes({k: common[k] for k in (
                "gen_ai.provider.name", "gen_ai.request.model")})
        span = self._tracer.start_span(f"chat {model}", kind=trace.SpanKind.CLIENT,
                                       context=trace.set_span_in_context(under),
                                       attributes={**common, **self._request_attrs(
                                       event.request, event.options)})
        run.started[id(span)] = (time.perf_counter(), common)
        run.chats.setdefault(event.parent, []).append(self._enter(span))

    def _on_model_end(self, run: _RunSpans, event: ModelEnd) -> None:
        opened = self._pop_chat(run, event.parent)
        if opened is not None:
            self._result_attrs(opened.span, event.result)
            usage = event.result.usage
            model = event.result.model
            attrs = self._measure(run, opened.span,
                                  {"gen_ai.response.model": model} if model else {})
            for kind, count in (("input", usage.prompt_tokens),
                                ("output", usage.completion_tokens)):
                self._tokens.record(count, {**attrs, "gen_ai.token.type": kind})
            self._leave(opened)

    def _on_model_error(self, run: _RunSpans, event: ModelError) -> None:
        opened = self._pop_chat(run, event.parent)
        if opened is not None:
            self._fail(opened.span, error_type(event.error), str(event.error))
            self._measure(run, opened.span, {"error.type": error_type(event.error)})
            self._leave(opened)

    def _on_tool_start(self, run: _RunSpans, event: ToolStart) -> None:
        key = event.call_id or event.tool
        span = self._tool_span(run, event.tool, event.call_id)
        if self._capture:
            span.set_attribute("gen_ai.tool.call.arguments", self._json(event.tool_input))
        run.tools[key] = self._enter(span)

    def _on_tool_error(self, run: _RunSpans, event: ToolError) -> None:
        run.errors[event.call_id or event.tool] = error_type(event.error)

    def _on_observation(self, run: _RunSpans, event: Observation) -> None:
        action = event.step.action
        key = action.tool_call_id or action.tool
        opened = run.tools.pop(key, None)
        if opened is None:  # never started: an unknown tool, a denied call
            opened = _Open(self._tool_span(run, action.tool, action.tool_call_id))
        span = opened.span
        span.set_attribute("agentcli.tool.status", event.status)
        if self._capture:
            span.set_attribute("gen_ai.tool.call.result", self._text(str(event.step.observation)))
        error = run.errors.pop(key, None)
        if event.status != "ok":
            self._fail(span, error or event.status, None)
        self._leave(opened)

    def _on_finish(self, run: _RunSpans, event: Finish) -> None:
        if self._capture:
            run.agent.span.set_attribute("gen_ai.output.messages", self._json(
                [{"role": "assistant", "parts": _parts(event.output), "finish_reason": "stop"}]))

    def _on_error(self, run: _RunSpans, event: RunError) -> None:
        self._fail(run.agent.span, error_type(event.error), str(event.error))
        self._close(run)

    def _on_end(self, run: _RunSpans, event: End) -> None:
        run.agent.span.set_attributes({**_usage(event.result.usage),
                                       "agentcli.stop_reason": str(event.result.stop_reason)})
        self._close(run)

    def _close(self, run: _RunSpans) -> None:
        """End the run's span and any span the run ended around."""
        left = sorted([*run.tools.values(), *(o for c in run.chats.values() for o in c)],
                      key=lambda o: o.seq)
        here = [o for o in left if o.token is not None and o.owner is _owner()]
        if here:  # restore this task's context as it was before the oldest of them
            otel_context.detach(here[0].token)  # type: ignore[arg-type]
        for opened in left:
            self._fail(opened.span, "interrupted", None)  # the run ended around them
            opened.span.end()
        self._leave(run.agent)

    # -- helpers ---------------------------------------------------------------------------

    def _measure(self, run: _RunSpans, span: trace.Span,
                 extra: Mapping[str, AttributeValue]) -> dict[str, AttributeValue]:
        """Record the request's duration; returns the metric attributes it used."""
        started, common = run.started.pop(id(span), (time.perf_counter(), {}))
        attrs = {**common, **extra}
        self._duration.record(time.perf_counter() - started, attrs)
        return attrs

    def _tool_span(self, run: _RunSpans, tool: str, call_id: str | None) -> trace.Span:
        attrs: dict[str, AttributeValue] = {"gen_ai.operation.name": "execute_tool",
                                 "gen_ai.tool.name": tool, "gen_ai.tool.type": "function"}
        if call_id:
            attrs["gen_ai.tool.call.id"] = call_id
        return self._tracer.start_span(f"execute_tool {tool}", kind=trace.SpanKind.INTERNAL,
                                       context=trace.set_span_in_context(run.agent.span),
                                       attributes=attrs)

    @staticmethod
    def _pop_chat(run: _RunSpans, parent: str | None) -> _Open | None:
        stack = run.chats.get(parent)
        return stack.pop() if stack else None

    @staticmethod
    def _enter(span: trace.Span) -> _Open:
        """Make ``span`` the current context of the task (or thread) emitting this event."""
        token = otel_context.attach(trace.set_span_in_context(span))
        return _Open(span, token, _owner(), next(_ORDER))

    @staticmethod
    def _leave(opened: _Open) -> None:
        """End the span; undo :meth:`_enter` where it was done (a task's context made
        current elsewhere ends with its task)."""
        if opened.token is not None and opened.owner is _owner() and \
                trace.get_current_span() is opened.span:
            otel_context.detach(opened.token)  # type: ignore[arg-type]
        opened.span.end()

    @staticmethod
    def _fail(span: trace.Span, error_type: str, message: str | None) -> None:
        span.set_attribute("error.type", error_type)
        span.set_status(trace.Status(trace.StatusCode.ERROR, message))

    def _request_attrs(self, request: ChatRequest,
                       own: Mapping[str, object]) -> dict[str, AttributeValue]:
        attrs: dict[str, AttributeValue] = {}
        options = {**own, **request.options}  # as the body merges them
        for key, name in _OPTIONS.items():
            value = options.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                attrs[f"gen_ai.request.{name}"] = value
        if request.stop:
            attrs["gen_ai.request.stop_sequences"] = list(request.stop)
        if request.tools:
            attrs["agentcli.request.tool_count"] = len(request.tools)
        if self._capture:
            attrs["gen_ai.input.messages"] = self._json(
                [_message(m) for m in request.messages])
        return attrs

    def _result_attrs(self, span: trace.Span, result: ChatResult) -> None:
        span.set_attributes(_usage(result.usage))
        if result.model:
            span.set_attribute("gen_ai.response.model", result.model)
        if result.response_id:
            span.set_attribute("gen_ai.response.id", result.response_id)
        if result.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [result.finish_reason])
        if self._capture:
            span.set_attribute("gen_ai.output.messages", self._json(
                [{"role": "assistant", "parts": _parts(result.text, result.tool_calls),
                  "finish_reason": result.finish_reason or "stop"}]))

    def _text(self, text: str) -> str:
        return redact(text, self._env)

    def _json(self, value: object) -> str:
        return self._text(json.dumps(value, ensure_ascii=False, default=str))


def _message(message: Message) -> dict[str, object]:
    """A message in the GenAI conventions' shape (role and parts)."""
    if message.tool_call_id:
        return {"role": message.role, "parts": [{"type": "tool_call_response",
                "id": message.tool_call_id, "response": message.content}]}
    return {"role": message.role, "parts": _parts(message.content, message.tool_calls)}


def _parts(text: str, calls: Sequence[ToolCall] = ()) -> list[dict[str, object]]:
    """A message's parts: its text (none when empty) and its tool calls."""
    parts: list[dict[str, object]] = [{"type": "text", "content": text}] if text else []
    return parts + [{"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
                    for c in calls]


def _usage(usage: Usage) -> dict[str, AttributeValue]:
    return {"gen_ai.usage.input_tokens": usage.prompt_tokens,
            "gen_ai.usage.output_tokens": usage.completion_tokens}
