"""The run's one event stream: every thing that happens in a run, as a typed event.

The executor emits each event once, in order, to its subscribers (callback handlers through
:class:`agentcli.callbacks.manager.CallbackManager`, metrics, trace, the CLI renderers) and
yields it from ``stream``/``astream``. ``kind`` tells the events apart::

    start                                                the run began (its inputs)
    model_start -> token* -> model_end | model_error     one model request (parent: a tool
                                                         call, for requests made inside one)
    action                                               the agent chose a tool
    tool_start -> observation | tool_error+observation   one tool call
    state_update                                         updates applied after a step
    parse_error                                          the reply could not be read
    notice                                               retry, fallback, cache hit, approval...
    limit -> finish -> end | error -> end                how the run ended

Every event is a frozen dataclass; ``RunEvent`` is their union.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from agentcli.records import record
from agentcli.schema import (
    AgentAction,
    AgentFinish,
    AgentStep,
    ChatRequest,
    ChatResult,
    RunResult,
)

if TYPE_CHECKING:
    from agentcli.models.base import BaseChatModel

ToolInput = str | dict[str, Any]
T = TypeVar("T")


@record(slots=True)
class Start:
    """The first event of every run: what it was asked."""

    inputs: dict[str, Any]
    run_id: str
    tags: tuple[str, ...] = ()  # the executor's and this run's (``config={"tags": ...}``)
    metadata: dict[str, Any] = field(default_factory=dict)
    name: str = ""  # ``config={"run_name": ...}``
    kind: Literal["start"] = "start"


@record(slots=True)
class RunError:
    """The run failed (a provider, config or our own error); it is raised after this."""

    error: BaseException
    kind: Literal["error"] = "error"


@record(slots=True)
class ModelStart:
    """A model request is about to be sent."""

    request: ChatRequest
    model: str
    parent: str | None = None  # the tool call this request was made in (None: the agent's)
    server: str = ""  # the base URL the request goes to ("" for in-process models)
    options: dict[str, Any] = field(default_factory=dict)  # what the model adds (temperature..)
    kind: Literal["model_start"] = "model_start"


def model_start(request: ChatRequest, model: BaseChatModel,
                parent: str | None = None) -> ModelStart:
    """The ModelStart of ``model``'s request: where it goes and the options the model adds."""
    own = getattr(model, "own_options", None)
    return ModelStart(request, model.name, parent, getattr(model, "base_url", ""),
                      own(request.options) if callable(own) else {})


@record(slots=True)
class ModelToken:
    """A streamed piece of the model's text."""

    text: str
    kind: Literal["token"] = "token"


@record(slots=True)
class ModelEnd:
    """A model request completed; usage and cost come from here, nowhere else."""

    result: ChatResult
    model: str
    elapsed: float
    cost: float | None = None
    parent: str | None = None  # the tool call this request was made in (None: the agent's)
    kind: Literal["model_end"] = "model_end"


@record(slots=True)
class ModelError:
    """A model request failed."""

    error: BaseException
    model: str
    parent: str | None = None
    kind: Literal["model_error"] = "model_error"


@record(slots=True)
class ActionEvent:
    """The agent chose a tool."""

    action: AgentAction
    kind: Literal["action"] = "action"


@record(slots=True)
class ToolStart:
    """A tool is about to run with this input."""

    tool: str
    tool_input: ToolInput
    call_id: str | None = None
    kind: Literal["tool_start"] = "tool_start"


@record(slots=True)
class ToolError:
    """A tool raised; the error text becomes its observation."""

    tool: str
    error: BaseException
    call_id: str | None = None
    kind: Literal["tool_error"] = "tool_error"


@record(slots=True)
class Observation:
    """A tool call ended: the step (action and what the model will read)."""

    step: AgentStep
    status: Literal["ok", "error", "invalid", "denied"] = "ok"
    kind: Literal["observation"] = "observation"

    @property
    def action(self) -> AgentAction:
        """The action this observation answers."""
        return self.step.action


@record(slots=True)
class StateUpdate:
    """State updates applied after a step, in the order they were declared."""

    update: dict[str, Any]
    kind: Literal["state_update"] = "state_update"


@record(slots=True)
class ParseError:
    """The model's reply could not be read; the step tells it what was wrong."""

    step: AgentStep
    kind: Literal["parse_error"] = "parse_error"


@record(slots=True)
class Notice:
    """Something worth showing that is not a step: retry, fallback, cache hit, approval."""

    topic: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    kind: Literal["notice"] = "notice"


@record(slots=True)
class Limit:
    """A limit stopped the loop (``reason`` is the stop reason)."""

    reason: str
    kind: Literal["limit"] = "limit"


@record(slots=True)
class Finish:
    """The run's answer."""

    finish: AgentFinish
    kind: Literal["finish"] = "finish"

    @property
    def output(self) -> str:
        """The answer text."""
        return self.finish.output


@record(slots=True)
class End:
    """The last event of every run; holds the result."""

    result: RunResult
    kind: Literal["end"] = "end"


RunEvent = (
    Start | RunError | ModelStart | ModelToken | ModelEnd | ModelError | ActionEvent | ToolStart
    | ToolError | Observation | StateUpdate | ParseError | Notice | Limit | Finish | End
)


# The emitter of the run in progress, so wrappers deep in a model call (retries, fallback,
# cache) can report a Notice without every provider taking the run as an argument.
Emitter = Callable[["RunEvent"], None]
_emitter: contextvars.ContextVar[Emitter | None] = contextvars.ContextVar(
    "agentcli_emitter", default=None
)


@record(slots=True)
class ToolScope:
    """A tool call in progress: model requests made inside it are events of the run too."""

    emit: Emitter
    account: Callable[[ChatResult, str], float | None]  # counts usage and cost in the run
    parent: str  # the tool call's id


_tool_scope: contextvars.ContextVar[ToolScope | None] = contextvars.ContextVar(
    "agentcli_tool_scope", default=None
)


@contextmanager
def _bound(var: contextvars.ContextVar[T], value: T) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def inside_tool(scope: ToolScope) -> AbstractContextManager[None]:
    """Model requests made in this block (by an LLM-backed tool) are the run's events."""
    return _bound(_tool_scope, scope)


def take_tool_scope() -> ToolScope | None:
    """The tool call in progress, cleared for the caller's block (a request is one request,
    however many model wrappers it passes through); :func:`restore_tool_scope` puts it back."""
    scope = _tool_scope.get()
    if scope is not None:
        _tool_scope.set(None)
    return scope


def restore_tool_scope(scope: ToolScope | None) -> None:
    """Undo :func:`take_tool_scope`."""
    if scope is not None:
        _tool_scope.set(scope)


def notifying(emit: Emitter) -> AbstractContextManager[None]:
    """Send :func:`notify` calls made inside this block to ``emit``."""
    return _bound(_emitter, emit)


def current_emitter() -> Emitter | None:
    """The emitter of the run in progress, for a callback that will fire in another task
    (an MCP server's progress notifications)."""
    return _emitter.get()


def notify(topic: str, text: str, **data: object) -> None:
    """Emit a :class:`Notice` to the run in progress (a no-op outside one)."""
    emit = _emitter.get()
    if emit is not None:
        emit(Notice(topic, text, data))
