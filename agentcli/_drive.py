"""The driver of the executor's loop, on asyncio (sync callers go through ``agentcli._sync``).

It fulfils :class:`~agentcli.run.CallModel` (send the request, emit model events, count
usage), :class:`~agentcli.run.RunTools` (run each action through the middleware
chain, concurrently) and :class:`~agentcli.run.RefreshTools` (live tool lists, in a worker
thread), and yields every event. The run's deadline bounds each effect with the
event loop's own timeouts: work still in flight when it passes is cancelled (a blocking tool's
daemon thread is abandoned) and the loop is told :data:`~agentcli.run.EXPIRED`, so it
ends with ``max_execution_time``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeVar

from agentcli.deadline import deadline_scope
from agentcli.errors import DeadlineExceeded, ProviderError
from agentcli.events import (
    End,
    ModelEnd,
    ModelError,
    ModelToken,
    Notice,
    RunEvent,
    ToolError,
    ToolScope,
    ToolStart,
    inside_tool,
    model_start,
    notifying,
    reset_emitter,
    set_emitter,
)
from agentcli.loop import AgentLoop
from agentcli.middleware import AsyncHandler, ToolCallRequest
from agentcli.run import EXPIRED, CallModel, Outcome, RefreshTools, Run, RunTools, outcome_of
from agentcli.schema import AgentAction, ChatResult, RunResult, ToolOutcome

if TYPE_CHECKING:
    from agentcli.state import Command

T = TypeVar("T")


# ---------------------------------------------------------------------- shared pieces
def _token_sink(ex: AgentLoop, run: Run, effect: CallModel) -> Any:
    """Where the reply's tokens go: the run's events, when the agent's tokens are shown."""
    if ex.stream_tokens and effect.agent:
        return lambda text: run.emit(ModelToken(text))
    return None


def _model_started(run: Run, llm: Any, effect: CallModel) -> float:
    run.emit(model_start(effect.request, llm))
    return time.perf_counter()


def _model_done(run: Run, llm: Any, result: ChatResult, started: float) -> ChatResult:
    cost = run.account(result, llm.name)
    run.emit(ModelEnd(result, llm.name, time.perf_counter() - started, cost))
    return result


def _model_failed(ex: AgentLoop, run: Run, llm: Any, err: BaseException
                  ) -> BaseException:
    """A failed model call becomes a ModelError event; the agent may explain the error.
    Returns what to raise: ``err`` itself, or the agent's explanation."""
    run.emit(ModelError(err, llm.name))
    return ex.agent.explain(err) if isinstance(err, ProviderError) else err


def _need_model(ex: AgentLoop, effect: CallModel) -> Any:
    if effect.llm is not None:
        return effect.llm
    if ex.llm is None:
        raise ValueError("this AgentExecutor has no model: pass llm=... (initialize_agent does)")
    return ex.llm


def _request(ex: AgentLoop, run: Run, action: AgentAction, state: dict[str, Any]) -> (
    ToolCallRequest | str
):
    tool, problem = ex.lookup(action)
    if tool is None:
        return problem
    return ToolCallRequest(action, tool, action.tool_input, state, run.info)


def _failure(call: ToolCallRequest, err: BaseException) -> ToolOutcome:
    if call.tool.raise_errors or not isinstance(err, Exception) or isinstance(
        err, DeadlineExceeded
    ):
        raise err
    call.run.emit(ToolError(call.tool.name, err, call.call_id))
    message = str(err) or type(err).__name__
    return ToolOutcome(message if message.startswith("Error") else f"Error: {message}", "error")


def _in_tool(run: Run, call: ToolCallRequest) -> Any:
    """Model requests the tool makes are the run's: events with this call as parent, usage."""
    return inside_tool(ToolScope(run.emit, run.account, call.call_id or call.tool.name))


def _done(value: Any) -> ToolOutcome | Command:
    """What the tool returned, as an ``ok`` outcome (a Command stays a Command)."""
    from agentcli.state import Command

    return value if isinstance(value, Command) else ToolOutcome.of(value)


def _started(call: ToolCallRequest) -> None:
    call.run.emit(ToolStart(call.tool.name, call.tool_input, call.call_id))


def _result(ex: AgentLoop, run: Run, error: BaseException | None, done: Any) -> RunResult:
    if error is not None:
        from agentcli.events import RunError

        run.emit(RunError(error))
        raise error
    return done  # type: ignore[no-any-return]


def _interrupted(ex: AgentLoop, run: Run) -> RunResult:
    run.emit(Notice("interrupted", "Interrupted: the run was cancelled"))
    return ex._result(run, "", "interrupted")


def _end(run: Run, result: RunResult) -> End:
    event = End(result)
    run.emit(event)
    return event


async def _within(run: Run, coro: Any) -> Any:
    """Await ``coro`` within the deadline; cancelled and EXPIRED when it passes (the loop's
    own timeout on this task: no task of its own, as ``wait_for`` would make)."""
    import asyncio

    left = run.remaining()
    try:
        if left is None:
            return await coro
        with deadline_scope(left):
            async with asyncio.timeout(left):
                return await coro
    except (TimeoutError, DeadlineExceeded):
        return EXPIRED


async def _acall_model(ex: AgentLoop, run: Run, effect: CallModel) -> ChatResult | Any:
    llm = _need_model(ex, effect)
    sink = _token_sink(ex, run, effect)
    started = _model_started(run, llm, effect)
    try:
        token = set_emitter(run.emit)  # notify() inside the call reaches this run
        try:
            if run.deadline is None:  # no deadline: no timeout layer (as _within would do)
                try:
                    result = await llm.arequest(effect.request, sink)
                except (TimeoutError, DeadlineExceeded):
                    result = EXPIRED
            else:
                result = await _within(run, llm.arequest(effect.request, sink))
        finally:
            reset_emitter(token)
    except BaseException as err:
        better = _model_failed(ex, run, llm, err)
        if better is err:
            raise
        raise better from err
    return result if result is EXPIRED else _model_done(run, llm, result, started)


def _atool_chain(run: Run) -> AsyncHandler:
    async def innermost(call: ToolCallRequest) -> ToolOutcome | Command:
        _started(call)
        try:
            return _done(await call.tool.ainvoke(call.tool_input, state=call.state,
                                                 call_id=call.call_id))
        except Exception as err:
            return _failure(call, err)

    handler: AsyncHandler = innermost
    for mw in reversed(run.middleware):
        handler = (lambda m, h: lambda c: m.awrap_tool_call(c, h))(mw, handler)
    return handler


async def _arun_tools(ex: AgentLoop, run: Run, effect: RunTools) -> list[Outcome] | Any:
    import asyncio

    chain = _atool_chain(run)

    async def one(action: AgentAction) -> Outcome:
        call = _request(ex, run, action, effect.state)
        if isinstance(call, str):
            return ToolOutcome(call, "invalid"), "invalid"
        with notifying(run.emit), _in_tool(run, call):
            return outcome_of(await chain(call))

    async def all_of() -> list[Outcome]:
        if len(effect.actions) == 1:
            return [await one(effect.actions[0])]
        return list(await asyncio.gather(*(one(a) for a in effect.actions)))

    return await _within(run, all_of())


async def _arefresh_tools(ex: AgentLoop) -> tuple[Any, list[Any]]:
    """``ex.tool_refresh()`` in a worker thread (it makes sync calls on the portal, which
    this loop may be), with the notices it sends."""
    import asyncio

    notes: list[Any] = []

    def refresh() -> Any:
        with notifying(notes.append):
            return ex.tool_refresh() if ex.tool_refresh is not None else None

    return await asyncio.to_thread(refresh), notes


async def adrive(ex: AgentLoop, run: Run) -> AsyncIterator[RunEvent]:
    """Run the loop on asyncio, yielding each event."""
    import asyncio

    loop = ex._loop(run)
    value: Any = None
    error: BaseException | None = None
    failed: Exception | None = None  # a failed model call, thrown into the loop (it may go on)
    done: RunResult | None = None
    try:
        while True:
            effect = loop.send(value) if failed is None else loop.throw(failed)
            value = failed = None
            if isinstance(effect, CallModel):
                try:
                    value = await _acall_model(ex, run, effect)
                except Exception as err:
                    failed = err
            elif isinstance(effect, RunTools):
                value = await _arun_tools(ex, run, effect)
            elif isinstance(effect, RefreshTools):
                value = await _arefresh_tools(ex)
            else:
                run.emit(effect)
            while run.pending:  # each event as it happened, in order
                yield run.pending.pop(0)
    except StopIteration as stop:
        done = stop.value
    except (KeyboardInterrupt, asyncio.CancelledError):
        done = _interrupted(ex, run)
    except BaseException as err:
        error = err
    while run.pending:
        yield run.pending.pop(0)
    result = _result(ex, run, error, done)
    _end(run, result)
    while run.pending:
        yield run.pending.pop(0)
