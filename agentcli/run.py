"""A run in progress, and the effects the executor's loop asks of its driver.

The loop (:meth:`agentcli.executor.AgentExecutor._loop`) yields :class:`CallModel`,
:class:`RunTools` and :class:`Compute`; the driver (:mod:`agentcli._drive`) answers with a
``ChatResult``, one outcome per action, the computed value, or :data:`EXPIRED` when the run's
deadline passed meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from agentcli.callbacks.manager import CallbackManager
from agentcli.events import RunEvent
from agentcli.history import StepIndex
from agentcli.middleware import AgentMiddleware, RunInfo
from agentcli.pricing import cost_of
from agentcli.records import record
from agentcli.schema import (
    AgentAction,
    AgentFinish,
    AgentStep,
    ChatRequest,
    ChatResult,
    ToolOutcome,
    ToolStatus,
)
from agentcli.state import Command

if TYPE_CHECKING:
    from agentcli.agents.base import Agent
    from agentcli.models.base import BaseChatModel
    from agentcli.pricing import PriceTable
    from agentcli.structured import ResponseFormat


@record
class CallModel:
    """Effect: send this request to the model; the driver answers with the ChatResult."""

    request: ChatRequest
    llm: BaseChatModel | None = None  # None: the executor's model
    agent: bool = True  # False for a middleware's own request (its tokens are not the answer)


@record
class RunTools:
    """Effect: run these actions; the driver answers with one outcome per action."""

    actions: list[AgentAction]
    state: dict[str, Any]


@record
class RefreshTools:
    """Effect: ask the executor's ``tool_refresh`` (live MCP tool lists) off the event loop
    (it may wait for a server); the driver answers with (fresh tools or None, notices)."""


@record
class Compute:
    """Effect: CPU-bound work of the loop's own (an answer checked against its schema), done
    off the event loop so other runs on it go on; the driver answers with its value, or
    throws its error into the loop."""

    work: Callable[[], Any]


class Expired:
    """What a driver sends back when the run's deadline passed during an effect."""


EXPIRED = Expired()
Outcome = tuple["ToolOutcome | Command", ToolStatus]
Effect = CallModel | RunTools | RefreshTools | Compute | RunEvent


@record(frozen=False)
class Run:
    """One run in progress: state values, steps, counters and its event subscribers."""

    values: dict[str, Any]
    callbacks: CallbackManager
    info: RunInfo
    deadline: float | None
    agent: Agent  # the executor's agent, asking for the run's output schema (a run input)
    started: float = field(default_factory=time.monotonic)
    pending: list[RunEvent] = field(default_factory=list)
    history: StepIndex = field(default_factory=StepIndex)
    repairs: int = 0
    last_key: str = ""
    repeats: int = 0
    results: dict[str, str] = field(default_factory=dict)  # call key -> its ok observation
    recovered: str | None = None  # the limit after which the answer was asked for
    tool_texts: list[str] = field(default_factory=list)  # the tools' error observations
    asked_now: bool = False  # a call showed the model had its result; the answer was asked for
    prices: PriceTable | None = None  # None: the built-in table
    middleware: list[AgentMiddleware] = field(default_factory=list)  # the executor's + the run's
    answer_format: ResponseFormat | None = None  # the schema the answer must match, if any
    question: str = ""  # what the answer rule judges against: the input, else the last user turn
    # Send an event to the subscribers now; ``stream`` yields it next. A closure over the
    # queue and the subscribers, not a method: the run's info holds it (``info.emit``), and a
    # bound method there would be a run <-> info cycle that only the collector frees (a batch
    # makes one per item).
    emit: Callable[[RunEvent], None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.emit = _emitter(self.pending, self.callbacks)

    @property
    def steps(self) -> list[AgentStep]:
        """The steps so far: a view over the run's one history, its messages."""
        return list(self.history.update(self.values.get("messages") or ()).steps)

    def last_text(self) -> AgentFinish:
        """The last thing the model said, as the answer (the run ended without one)."""
        text = next((m.content for m in reversed(self.values.get("messages") or [])
                     if m.role == "assistant" and m.content), "")
        return AgentFinish({"output": text}, text)

    def remaining(self) -> float | None:
        """Seconds left before the deadline, or None."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def account(self, result: ChatResult, model: str) -> float | None:
        """Count a reply's usage and cost (the run's record and a cost budget read them)."""
        self.info.model_calls += 1
        self.info.usage = self.info.usage + result.usage
        cost = cost_of(model or result.model, result.usage, self.prices)
        if cost is None:
            self.info.unpriced = True  # the CLI refuses --max-cost without a price
            return None
        self.info.cost += cost
        return cost


def _emitter(pending: list[RunEvent], callbacks: CallbackManager) -> Callable[[RunEvent], None]:
    def emit(event: RunEvent) -> None:
        pending.append(event)
        callbacks.dispatch(event)

    return emit


def outcome_of(value: ToolOutcome | str | Command) -> Outcome:
    """A tool call's final value (after middleware) and how it ended."""
    if isinstance(value, Command):
        return value, "ok"
    done = ToolOutcome.of(value)
    return done, done.status
