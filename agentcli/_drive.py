"""The driver of the executor's loop, on asyncio (sync callers go through ``agentcli._sync``).

It fulfils :class:`~agentcli.run.CallModel` (send the request, emit model events, count
usage), :class:`~agentcli.run.RunTools` (run each action through the middleware
chain, concurrently), :class:`~agentcli.run.RefreshTools` (live tool lists, in a worker
thread) and :class:`~agentcli.run.Compute` (CPU-bound checks, in a worker thread), and yields
every event. The run's deadline bounds each effect with the
event loop's own timeouts: work still in flight when it passes is cancelled (a blocking tool's
daemon thread is abandoned) and the loop is told :data:`~agentcli.run.EXPIRED`, so it
ends with ``max_execution_time``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, TypeVar

from agentcli import exit_codes
from agentcli._sync import in_thread
from agentcli.deadline import deadline_scope
from agentcli.errors import DeadlineExceeded, ProviderError
from agentcli.events import (
    End,
    ModelEnd,
    ModelError,
    ModelToken,
    Notice,
    RunError,
    RunEvent,
    ToolError,
    ToolScope,
    ToolStart,
    inside_tool,
    model_start,
    notifying,
)
from agentcli.loop import AgentLoop
from agentcli.middleware import AsyncHandler, ToolCallRequest
from agentcli.run import (
    EXPIRED,
    CallModel,
    Compute,
    Expired,
    Outcome,
    RefreshTools,
    Run,
    RunTools,
    outcome_of,
)
from agentcli.schema import AgentAction, ChatResult, RunResult, ToolOutcome
from agentcli.state import Command

if TYPE_CHECKING:
    from agentcli.tools.base import Tool

T = TypeVar("T")

async def _within(run: Run, coro: Awaitable[T]) -> T | Expired:
    """Await ``coro`` within the deadline; cancelled and EXPIRED when it passes (the loop's
    own timeout on this task: no task of its own, as ``wait_for`` would make)."""
    left = run.remaining()
    try:
        if left is None:
            return await coro
        with deadline_scope(left):
            async with asyncio.timeout(left):
                return await coro
    except (TimeoutError, DeadlineExceeded):
        return EXPIRED


async def _call_model(ex: AgentLoop, run: Run, effect: CallModel) -> ChatResult | Expired:
    """Send the request: ModelStart, the tokens (when the agent's are shown), then ModelEnd
    with usage and cost counted; a failure is a ModelError (the agent may explain it)."""
    llm = effect.llm if effect.llm is not None else ex.llm
    if llm is None:
        raise ValueError("this AgentExecutor has no model: pass llm=... (initialize_agent does)")
    if not llm.observed:  # an in-process stand-in (a LangChain plan() agent's step)
        return await _within(run, llm.arequest(effect.request))
    sink = (lambda text: run.emit(ModelToken(text))) if ex.stream_tokens and effect.agent \
        else None
    run.emit(model_start(effect.request, llm))
    started = time.perf_counter()
    try:
        with notifying(run.emit):  # notify() inside the call reaches this run
            result = await _within(run, llm.arequest(effect.request, sink))
    except BaseException as err:
        run.emit(ModelError(err, llm.name))
        if isinstance(err, ProviderError) and (better := run.agent.explain(err)) is not err:
            raise better from err
        raise
    if isinstance(result, Expired):
        return result
    cost = run.account(result, llm.name)
    run.emit(ModelEnd(result, llm.name, time.perf_counter() - started, cost))
    return result


def _tool_chain(run: Run) -> AsyncHandler:
    """The tool call inside every middleware's ``awrap_tool_call`` (the first outermost)."""
    async def innermost(call: ToolCallRequest) -> ToolOutcome | Command:
        call.run.emit(ToolStart(call.tool.name, call.tool_input, call.call_id))
        try:
            value = await call.tool.ainvoke(call.tool_input, state=call.state,
                                            call_id=call.call_id)
        except Exception as err:
            if call.tool.raise_errors or isinstance(err, DeadlineExceeded):
                raise
            call.run.emit(ToolError(call.tool.name, err, call.call_id))
            message = str(err) or type(err).__name__
            return ToolOutcome(message if message.startswith("Error") else f"Error: {message}",
                               "error")
        return value if isinstance(value, Command) else ToolOutcome.of(value)

    handler: AsyncHandler = innermost
    for mw in reversed(run.middleware):
        handler = (lambda m, h: lambda c: m.awrap_tool_call(c, h))(mw, handler)
    return handler


async def _run_tools(ex: AgentLoop, run: Run, effect: RunTools) -> list[Outcome] | Expired:
    """Each action through the middleware chain, concurrently; model requests a tool makes
    are the run's (events with the call as parent, usage)."""
    chain = _tool_chain(run)

    async def one(action: AgentAction) -> Outcome:
        tool, problem = ex.lookup(action)
        if tool is None:
            return ToolOutcome(problem, "invalid"), "invalid"
        call = ToolCallRequest(action, tool, action.tool_input, effect.state, run.info)
        scope = ToolScope(run.emit, run.account, call.call_id or tool.name)
        with notifying(run.emit), inside_tool(scope):
            return outcome_of(await chain(call))

    async def all_of() -> list[Outcome]:
        if len(effect.actions) == 1:
            return [await one(effect.actions[0])]
        return list(await asyncio.gather(*(one(a) for a in effect.actions)))

    return await _within(run, all_of())


async def _refresh_tools(ex: AgentLoop) -> tuple[list[Tool] | None, list[RunEvent]]:
    """``ex.tool_refresh()`` in a worker thread (it makes sync calls on the portal, which
    this loop may be), with the notices it sends."""
    notes: list[RunEvent] = []

    def refresh() -> list[Tool] | None:
        with notifying(notes.append):
            return ex.tool_refresh() if ex.tool_refresh is not None else None

    return await asyncio.to_thread(refresh), notes


async def adrive(ex: AgentLoop, run: Run) -> AsyncIterator[RunEvent]:
    """Run the loop on asyncio, yielding each event."""
    loop = ex._loop(run)
    value: object = None
    error: BaseException | None = None
    failed: Exception | None = None  # a failed model call, thrown into the loop (it may go on)
    done: RunResult | None = None
    try:
        while True:
            effect = loop.send(value) if failed is None else loop.throw(failed)
            value = failed = None
            if isinstance(effect, CallModel):
                try:
                    value = await _call_model(ex, run, effect)
                except Exception as err:
                    failed = err
            elif isinstance(effect, RunTools):
                value = await _run_tools(ex, run, effect)
            elif isinstance(effect, RefreshTools):
                value = await _refresh_tools(ex)
            elif isinstance(effect, Compute):
                try:
                    value = await _within(run, in_thread(effect.work))
                except Exception as err:
                    failed = err
            else:
                run.emit(effect)
            while run.pending:  # each event as it happened, in order
                yield run.pending.pop(0)
    except StopIteration as stop:
        done = stop.value
    except (KeyboardInterrupt, asyncio.CancelledError):
        run.emit(Notice("interrupted", exit_codes.INTERRUPTED_LINE))
        done = ex._result(run, "", "interrupted")
    except GeneratorExit:  # the caller stopped reading (a break): nothing more is yielded
        loop.close()
        raise
    except BaseException as err:
        error = err
    while run.pending:
        yield run.pending.pop(0)
    if error is not None:
        run.emit(RunError(error))
        raise error
    assert done is not None
    run.emit(End(done))
    while run.pending:
        yield run.pending.pop(0)
