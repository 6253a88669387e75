"""Middleware: hooks around the model call and each tool call.

* ``before_model(state, run)`` / ``after_model(state, result, run)`` return a state update
  (or None). An update may set ``jump_to``: ``"end"`` ends the run, ``"model"`` (after the
  model) skips the tools and asks the model again, ``"tools"`` carries on as usual.
  Raising :class:`StopRun` ends the loop as a limit (early stopping then applies).
* ``ask_model(state, run)`` may return a :class:`ModelAsk`: a request of its own (a summary,
  say) that the executor sends before the agent's next one, through the same path (within
  the run's deadline and budget, as events of the run, on the async core), then applies
  ``then(reply)`` as a state update.
* ``ask_at_end(state, result, run)`` may return a :class:`ModelAsk` too, sent once the run has
  its result and before it ends (a summary memory folds the turn in): its tokens and cost are
  the run's, its model events are in the run's stream.
* ``wrap_tool_call(call, handler)`` runs around one tool call: call ``handler(call)`` to run
  the tool (or what the next middleware wraps), or return a :class:`ToolOutcome` (or plain
  text, read as ``ok``) without calling it.

The first middleware in the list is the outermost. The executor's own rules are middleware
too (:class:`ObservationCap`, :class:`ApprovalGate`, :class:`Budget`), built from its options.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from agentcli._sync import in_thread
from agentcli.errors import ToolInputError
from agentcli.events import Notice
from agentcli.records import record
from agentcli.schema import (
    AgentAction,
    ChatRequest,
    ChatResult,
    Message,
    RunResult,
    ToolOutcome,
    Usage,
    user,
)
from agentcli.state import Overwrite

if TYPE_CHECKING:
    from agentcli.events import RunEvent
    from agentcli.models.base import BaseChatModel
    from agentcli.state import Command
    from agentcli.tools.base import Tool, ToolInput


class StopRun(Exception):
    """Raised by middleware to end the loop as a limit with this stop reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@record(frozen=False)
class RunInfo:
    """What middleware may read about the run in progress (counters, per-run memos)."""

    run_id: str
    iterations: int = 0
    model_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    unpriced: bool = False
    memo: dict[str, Any] = field(default_factory=dict)  # per-run scratch space, by middleware
    emit: Callable[[RunEvent], None] = lambda event: None


@record
class ToolCallRequest:
    """One tool call on its way to the tool: what middleware sees and may replace."""

    action: AgentAction
    tool: Tool
    tool_input: ToolInput
    state: Mapping[str, Any]
    run: RunInfo

    @property
    def call_id(self) -> str | None:
        """The model's id for this call, if it gave one."""
        return self.action.tool_call_id


ToolValue: TypeAlias = "ToolOutcome | str | Command"  # what a handler or middleware returns
Handler = Callable[[ToolCallRequest], "ToolValue"]
AsyncHandler = Callable[[ToolCallRequest], Awaitable["ToolValue"]]


@record
class ModelAsk:
    """A model request a middleware needs; the executor sends it and applies ``then(reply)``."""

    request: ChatRequest
    then: Callable[[ChatResult], dict[str, Any] | None]
    llm: BaseChatModel | None = None  # None: the run's own model


class AgentMiddleware:
    """Base class: every hook passes through unless overridden."""

    def ask_model(self, state: Mapping[str, Any], run: RunInfo) -> ModelAsk | None:
        """A request of this middleware's own to send before the agent's next one, or None."""
        return None

    def ask_at_end(self, state: Mapping[str, Any], result: RunResult,
                   run: RunInfo) -> ModelAsk | None:
        """A request of this middleware's own to send once the run has ``result``, or None."""
        return None

    def before_model(self, state: Mapping[str, Any], run: RunInfo) -> dict[str, Any] | None:
        """Runs before each model request; may return a state update."""
        return None

    def after_model(
        self, state: Mapping[str, Any], result: ChatResult, run: RunInfo
    ) -> dict[str, Any] | None:
        """Runs after each model reply; may return a state update."""
        return None

    def wrap_tool_call(self, call: ToolCallRequest, handler: Handler) -> ToolValue:
        """Runs around one tool call."""
        return handler(call)

    async def awrap_tool_call(
        self, call: ToolCallRequest, handler: AsyncHandler
    ) -> ToolValue:
        """Async :meth:`wrap_tool_call`; by default the sync hook runs in a worker thread."""
        if type(self).wrap_tool_call is AgentMiddleware.wrap_tool_call:
            return await handler(call)
        import asyncio

        loop = asyncio.get_running_loop()

        def bridge(c: ToolCallRequest) -> ToolValue:
            return asyncio.run_coroutine_threadsafe(handler(c), loop).result()  # type: ignore[arg-type]

        return await in_thread(lambda: self.wrap_tool_call(call, bridge))


# ---------------------------------------------------------------------- the executor's rules
def truncate_middle(text: str, limit: int | None) -> str:
    """Keep the head and tail of a long text, with a marker saying how much was cut."""
    if limit is None or limit <= 0 or len(text) <= limit:
        return text
    head = int(limit * 0.7)
    tail = max(0, limit - head)
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut:,} characters cut ...]\n{text[len(text) - tail:]}"


class ObservationCap(AgentMiddleware):
    """Observations longer than ``limit`` characters keep their head and tail."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit

    async def awrap_tool_call(self, call: ToolCallRequest, handler: AsyncHandler) -> ToolValue:
        """Cap the tool's text."""
        value = await handler(call)
        if isinstance(value, str):
            value = ToolOutcome.of(value)
        if isinstance(value, ToolOutcome) and value.status != "denied":
            return value.with_text(truncate_middle(value.text, self.limit))  # keeps its status
        return value


@record
class Approval:
    """An approver's verdict on one dangerous call; ``tool_input`` replaces the input if set."""

    allowed: bool
    reason: str = ""
    tool_input: ToolInput | None = None


Approver = Callable[["Tool", "ToolInput"], Approval]


def deny_all(tool: Tool, tool_input: ToolInput) -> Approval:
    """The core default: dangerous calls are refused unless an approver says otherwise."""
    return Approval(False, "no approver is configured for dangerous tools")


def allow_all(tool: Tool, tool_input: ToolInput) -> Approval:
    """Approve every call (``--yes``)."""
    return Approval(True, "approved by --yes")


class ApprovalGate(AgentMiddleware):
    """Dangerous tools run only with the approver's yes; a no goes back to the model."""

    def __init__(self, approver: Approver) -> None:
        self.approver = approver

    async def awrap_tool_call(self, call: ToolCallRequest, handler: AsyncHandler) -> ToolValue:
        """Ask the approver (in a thread: it may prompt) before a dangerous call, showing the
        arguments as the tool will receive them (coerced first), and run exactly those."""
        tool = call.tool
        if not tool.dangerous:
            return await handler(call)
        try:
            sent = await in_thread(lambda: as_run(tool, call.tool_input))
        except ToolInputError:
            return await handler(call)  # refused by the tool before anything runs
        call = replace(call, tool_input=sent)
        verdict = await in_thread(lambda: self.approver(tool, sent))
        word = "approved" if verdict.allowed else "denied"
        call.run.emit(Notice("approval", f"{word} {tool.name}: {verdict.reason}", {
            "tool": tool.name, "allowed": verdict.allowed, "verdict": word,
            "reason": verdict.reason, "tool_input": sent,
            "edited_input": verdict.tool_input,
        }))
        if not verdict.allowed:
            because = f" ({verdict.reason})" if verdict.reason else ""
            return ToolOutcome(f"Denied: the user did not approve running {tool.name}{because}."
                               " Try another way or answer without it.", "denied")
        if verdict.tool_input is not None:
            call = replace(call, tool_input=verdict.tool_input)
        return await handler(call)


def as_run(tool: Tool, tool_input: ToolInput) -> ToolInput:
    """``tool_input`` as ``tool`` will run it: coerced (``tools/arguments.py``) until coercing
    again changes nothing, so what the user approves is what runs. A named-argument tool's
    coercion settles at once; a text tool's may unwrap JSON text once more, each pass shorter.
    Raises :class:`~agentcli.errors.ToolInputError` when the tool refuses the input."""
    sent = tool.prepare_input(tool_input)
    while not tool.is_structured and (again := tool.prepare_input(sent)) != sent:
        sent = again
    return sent


class Budget(AgentMiddleware):
    """Stops the run (stop reason ``budget``) once tokens or cost reach their limit."""

    def __init__(self, max_tokens: int | None = None, max_cost: float | None = None) -> None:
        self.max_tokens = max_tokens
        self.max_cost = max_cost

    def before_model(self, state: Mapping[str, Any], run: RunInfo) -> dict[str, Any] | None:
        """Refuse another model call past the budget."""
        if (self.max_tokens is not None and run.usage.total_tokens >= self.max_tokens) or (
                self.max_cost is not None and run.cost >= self.max_cost):
            raise StopRun("budget")
        return None


# ---------------------------------------------------------------------- built-ins users ask for
class ToolCallLimit(AgentMiddleware):
    """At most ``limit`` calls per run to ``tool`` (each tool when None); later ones are refused."""

    def __init__(self, limit: int, tool: str | None = None) -> None:
        if limit < 0:
            raise ValueError("the call limit must be 0 or more")
        self.limit = limit
        self.tool = tool

    async def awrap_tool_call(self, call: ToolCallRequest, handler: AsyncHandler) -> ToolValue:
        """Run the call only while under the limit."""
        name = call.tool.name
        if self.tool is None or name == self.tool:
            key = f"{id(self)}:{name}"
            # counted on the run's loop with no await in between: parallel calls cannot race
            count = call.run.memo[key] = call.run.memo.get(key, 0) + 1
            if count > self.limit:
                return ToolOutcome(f"{name} may be called at most {self.limit} time(s) in a "
                                   "run; do not call it again. Use what you have.", "denied")
        return await handler(call)


class Summarization(AgentMiddleware):
    """Past ``max_tokens`` (estimated at 4 characters a token), older messages become a summary.

    The last ``keep`` messages stay as they are; a tool message is never separated from the
    assistant turn that called it. The summary is written by ``llm``.
    """

    def __init__(self, llm: BaseChatModel, *, max_tokens: int = 4000, keep: int = 6) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.keep = keep

    def ask_model(self, state: Mapping[str, Any], run: RunInfo) -> ModelAsk | None:
        """Ask for a summary of the older messages when the history is too long; the reply
        replaces them with one summary message (text agents' scratchpad shrinks with them)."""
        messages: list[Message] = list(state.get("messages") or [])
        if sum(len(m.content) for m in messages) // 4 <= self.max_tokens:
            return None
        cut = max(0, len(messages) - self.keep)
        while 0 < cut < len(messages) and messages[cut].role == "tool":
            cut -= 1  # keep each tool result with the call before it
        old, recent = messages[:cut], messages[cut:]
        if not old:
            return None
        transcript = "\n".join(f"{m.role}: {m.content}" for m in old)
        request = ChatRequest((user(
            "Summarize this conversation so far in a few sentences, keeping every fact, "
            f"number and decision that later turns may need:\n\n{transcript}"),))

        def then(reply: ChatResult) -> dict[str, Any]:
            summary = Message("user", "Summary of the earlier conversation: "
                              + reply.text.strip(), summary=True)
            return {"messages": Overwrite([summary, *recent])}

        return ModelAsk(request, then, self.llm)


def overriding(middleware: Sequence[AgentMiddleware], hook: str) -> list[AgentMiddleware]:
    """The middleware whose ``hook`` is its own (the base class's does nothing and returns
    None), so the state view each hook is given is built only for those."""
    base = getattr(AgentMiddleware, hook)
    return [m for m in middleware if getattr(getattr(m, hook), "__func__", None) is not base]
