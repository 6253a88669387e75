"""The AgentExecutor: plan, act, observe, repeat, within limits. No terminal I/O here.

The loop is written once, as a generator (:meth:`AgentExecutor._loop`) that *yields effects*
(plan this step, run these tools, report this event) and receives their results. Drivers
fulfil the effects: :meth:`_drive` synchronously and :meth:`_adrive` with asyncio. ``invoke``,
``stream``, ``ainvoke``, ``astream`` and ``batch`` are thin wrappers over the two drivers, so
every feature of the loop exists in every mode.
"""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcli.agents.base import Agent
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.manager import (
    CallbackManager,
    ensure_manager,
    reset_current_manager,
    set_current_manager,
)
from agentcli.deadline import adeadline_scope, deadline_scope, expired
from agentcli.errors import AgentCliError, DeadlineExceeded, OutputParserError
from agentcli.schema import (
    AgentAction,
    AgentFinish,
    AgentStep,
    ChatResult,
    Decision,
    RunResult,
    StopReason,
    Usage,
)
from agentcli.tools.base import Tool, ToolInput

FORCE_STOP_MESSAGE = "Agent stopped due to iteration limit or time limit."
PARSE_ERROR_TOOL = "_Exception"
ParsingErrorHandler = bool | str | Callable[[OutputParserError], str]
Trim = int | Callable[[list[AgentStep]], list[AgentStep]]


@dataclass(frozen=True)
class Approval:
    """An approver's verdict on one dangerous call; ``tool_input`` replaces the input if set."""

    allowed: bool
    reason: str = ""
    tool_input: ToolInput | None = None


Approver = Callable[[Tool, ToolInput], Approval]


def deny_all(tool: Tool, tool_input: ToolInput) -> Approval:
    """The core default: dangerous calls are refused unless an approver says otherwise."""
    return Approval(False, "no approver is configured for dangerous tools")


def allow_all(tool: Tool, tool_input: ToolInput) -> Approval:
    """Approve every call (``--yes``)."""
    return Approval(True, "approved by --yes")


@dataclass(frozen=True)
class RunEvent:
    """One thing that happened in a run, in order: an action, an observation, the end."""

    kind: Literal["action", "observation", "parse_error", "finish", "limit", "end"]
    action: AgentAction | None = None
    step: AgentStep | None = None
    output: str = ""
    result: RunResult | None = None
    finish: AgentFinish | None = None


@dataclass(frozen=True)
class _Plan:
    steps: list[AgentStep]
    final: bool = False


@dataclass(frozen=True)
class _RunTools:
    actions: list[AgentAction]


_Effect = _Plan | _RunTools | RunEvent


@dataclass
class _RunState:
    inputs: dict[str, Any]
    callbacks: CallbackManager
    started: float = field(default_factory=time.monotonic)
    steps: list[AgentStep] = field(default_factory=list)
    iterations: int = 0


class _UsageCounter(BaseCallbackHandler):
    def __init__(self, *, priced: bool = False) -> None:
        self.usage = Usage()
        self.calls = 0
        self.errors = 0
        self.priced = priced  # only a cost budget needs the price table
        self.cost = 0.0
        self.repairs = 0  # tool calls the agent recovered from text or broken JSON

    def on_llm_end(self, result: ChatResult, **kw: Any) -> None:
        self.usage = self.usage + result.usage
        self.calls += 1
        if self.priced:
            from agentcli.pricing import cost_of

            # An unknown price counts as zero here; the CLI refuses --max-cost without one.
            self.cost += cost_of(str(kw.get("model") or result.model), result.usage) or 0.0

    def on_llm_error(self, error: BaseException, **kw: Any) -> None:
        self.errors += 1

    def on_text(self, text: str, **kw: Any) -> None:
        if kw.get("kind") == "repair":
            self.repairs += int(kw.get("count", 1))


def truncate_middle(text: str, limit: int | None) -> str:
    """Keep the head and tail of a long text, with a marker saying how much was cut."""
    if limit is None or limit <= 0 or len(text) <= limit:
        return text
    head = int(limit * 0.7)
    tail = max(0, limit - head)
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut:,} characters cut ...]\n{text[len(text) - tail:]}"


class AgentExecutor:
    """Runs an agent with its tools: limits, early stopping, parse-error recovery, approvals."""

    def __init__(
        self,
        agent: Agent,
        tools: Sequence[Tool] | None = None,
        *,
        max_iterations: int | None = 15,
        max_execution_time: float | None = None,
        early_stopping_method: Literal["force", "generate"] = "force",
        handle_parsing_errors: ParsingErrorHandler = False,
        return_intermediate_steps: bool = False,
        trim_intermediate_steps: Trim = -1,
        max_observation_chars: int | None = 8_000,
        approver: Approver = deny_all,
        callbacks: Iterable[BaseCallbackHandler] = (),
        max_tool_workers: int = 8,
        max_tokens: int | None = None,
        max_cost: float | None = None,
    ) -> None:
        if early_stopping_method not in ("force", "generate"):
            raise ValueError(
                f"early_stopping_method must be 'force' or 'generate', "
                f"got {early_stopping_method!r}"
            )
        self.agent = agent
        self.tools = list(tools if tools is not None else agent.tools)
        self.tool_map = {t.name: t for t in self.tools}
        self.max_iterations = max_iterations
        self.max_execution_time = max_execution_time
        self.early_stopping_method = early_stopping_method
        self.handle_parsing_errors = handle_parsing_errors
        self.return_intermediate_steps = return_intermediate_steps
        self.trim_intermediate_steps = trim_intermediate_steps
        self.max_observation_chars = max_observation_chars
        self.approver = approver
        self.callbacks = list(callbacks)
        self.max_tool_workers = max_tool_workers
        self.max_tokens = max_tokens  # budget: total tokens in + out across the run
        self.max_cost = max_cost  # budget: USD across the run (see agentcli.pricing)

    # ------------------------------------------------------------------ the loop (once)
    def _limit(self, state: _RunState) -> StopReason | None:
        if self.max_iterations is not None and state.iterations >= self.max_iterations:
            return "max_iterations"
        if (
            self.max_execution_time is not None
            and time.monotonic() - state.started >= self.max_execution_time
        ):
            return "max_execution_time"
        if self.max_tokens is not None or self.max_cost is not None:
            counter = self._counter(state)
            if self.max_tokens is not None and counter.usage.total_tokens >= self.max_tokens:
                return "budget"
            if self.max_cost is not None and counter.cost >= self.max_cost:
                return "budget"
        return None

    @staticmethod
    def _counter(state: _RunState) -> _UsageCounter:
        return next(
            (h for h in state.callbacks.handlers if isinstance(h, _UsageCounter)), _UsageCounter()
        )

    def _agent_steps(self, steps: list[AgentStep]) -> list[AgentStep]:
        trim = self.trim_intermediate_steps
        if callable(trim):
            return trim(list(steps))
        return list(steps[-trim:]) if trim > 0 else list(steps)

    def _parse_error_observation(self, err: OutputParserError) -> str:
        handler = self.handle_parsing_errors
        if handler is False:
            raise err
        if handler is True:
            return err.observation
        if isinstance(handler, str):
            return handler
        return handler(err)

    def _loop(self, state: _RunState) -> Generator[_Effect, Any, RunResult]:
        cb = state.callbacks
        while (reason := self._limit(state)) is None:
            decision: Decision | OutputParserError = yield _Plan(self._agent_steps(state.steps))
            state.iterations += 1
            if isinstance(decision, OutputParserError):
                observation = self._parse_error_observation(decision)
                action = AgentAction(PARSE_ERROR_TOOL, observation, decision.llm_output)
                step = AgentStep(action, observation)
                state.steps.append(step)
                cb.on_text(f"Could not parse the model's reply; told it: {observation}",
                           kind="parse_error")
                yield RunEvent("parse_error", action=action, step=step)
                continue
            if isinstance(decision, AgentFinish):
                cb.on_agent_finish(decision)
                yield RunEvent("finish", output=decision.output, finish=decision)
                return self._result(state, decision.output, "finished")
            actions = decision if isinstance(decision, list) else [decision]
            for action in actions:
                cb.on_agent_action(action)
                yield RunEvent("action", action=action)
            observations: list[str] = yield _RunTools(actions)
            for action, observation in zip(actions, observations, strict=True):
                step = AgentStep(action, observation)
                state.steps.append(step)
                yield RunEvent("observation", action=action, step=step)
            for action, observation in zip(actions, observations, strict=True):
                tool = self.tool_map.get(action.tool)
                if tool is not None and tool.return_direct:
                    direct = AgentFinish({"output": observation}, action.log)
                    cb.on_agent_finish(direct)
                    yield RunEvent("finish", output=observation, finish=direct)
                    return self._result(state, observation, "return_direct")
        cb.on_text(f"Stopped: {reason.replace('_', ' ')} reached", kind="limit", reason=reason)
        yield RunEvent("limit", output=reason)
        if self.early_stopping_method == "generate":
            final: AgentFinish = yield _Plan(self._agent_steps(state.steps), final=True)
            cb.on_agent_finish(final)
        else:
            final = AgentFinish({"output": FORCE_STOP_MESSAGE}, "")
            cb.on_agent_finish(final)
        output = final.output
        yield RunEvent("finish", output=output, finish=final)
        return self._result(state, output, reason)

    def _result(self, state: _RunState, output: str, reason: StopReason) -> RunResult:
        counter = self._counter(state)
        return RunResult(
            output=output,
            steps=tuple(state.steps) if self.return_intermediate_steps else (),
            stop_reason=reason,
            usage=counter.usage,
            model_calls=counter.calls,
            elapsed=time.monotonic() - state.started,
            stats={"tool_call_repairs": counter.repairs},
        )

    # ------------------------------------------------------------------ tools
    def _resolve(self, action: AgentAction) -> tuple[Tool | None, str | None]:
        """The tool for an action, or the observation explaining why it cannot run."""
        tool = self.tool_map.get(action.tool)
        if tool is None:
            names = ", ".join(self.tool_map) or "(none)"
            close = difflib.get_close_matches(action.tool, list(self.tool_map), n=1)
            hint = f" Did you mean {close[0]}?" if close else ""
            return None, f"{action.tool} is not a valid tool, try one of [{names}].{hint}"
        return tool, None

    def _gate(self, tool: Tool, action: AgentAction, cb: CallbackManager) -> tuple[ToolInput, str]:
        """Ask the approver about a dangerous call; return the input to use or a denial."""
        tool_input = action.tool_input
        if not tool.dangerous:
            return tool_input, ""
        verdict = self.approver(tool, tool_input)
        cb.on_text(
            f"{'approved' if verdict.allowed else 'denied'} {tool.name}: {verdict.reason}",
            kind="approval", tool=tool.name, allowed=verdict.allowed,
            verdict="approved" if verdict.allowed else "denied", reason=verdict.reason,
            tool_input=tool_input, edited_input=verdict.tool_input,
        )
        if not verdict.allowed:
            return tool_input, f"Denied: the user did not approve running {tool.name}" + (
                f" ({verdict.reason})" if verdict.reason else ""
            ) + ". Try another way or answer without it."
        return (verdict.tool_input if verdict.tool_input is not None else tool_input), ""

    def _finish_tool(self, tool: Tool, raw: str | BaseException, cb: CallbackManager) -> str:
        if isinstance(raw, BaseException):
            if tool.raise_errors or not isinstance(raw, Exception):
                raise raw
            cb.on_tool_error(raw, tool=tool.name)
            message = str(raw) or type(raw).__name__
            raw = message if message.startswith("Error") else f"Error: {message}"
        observation = truncate_middle(raw, self.max_observation_chars)
        cb.on_tool_end(observation, tool=tool.name)
        return observation

    def _run_tool(self, action: AgentAction, cb: CallbackManager) -> str:
        tool, problem = self._resolve(action)
        if tool is None:
            cb.on_tool_end(problem or "", tool=action.tool, invalid=True)
            return problem or ""
        tool_input, denial = self._gate(tool, action, cb)
        if denial:
            cb.on_tool_end(denial, tool=tool.name, denied=True)
            return denial
        cb.on_tool_start(tool.name, tool_input)
        token = set_current_manager(cb)
        try:
            raw: str | BaseException = tool.run(tool_input)
        except Exception as err:
            raw = err
        finally:
            reset_current_manager(token)
        return self._finish_tool(tool, raw, cb)

    async def _arun_tool(self, action: AgentAction, cb: CallbackManager) -> str:
        tool, problem = self._resolve(action)
        if tool is None:
            cb.on_tool_end(problem or "", tool=action.tool, invalid=True)
            return problem or ""
        tool_input, denial = await asyncio.to_thread(self._gate, tool, action, cb)
        if denial:
            cb.on_tool_end(denial, tool=tool.name, denied=True)
            return denial
        cb.on_tool_start(tool.name, tool_input)
        token = set_current_manager(cb)
        try:
            raw: str | BaseException = await tool.arun(tool_input)
        except Exception as err:
            raw = err
        finally:
            reset_current_manager(token)
        return self._finish_tool(tool, raw, cb)

    def _run_tools(self, actions: list[AgentAction], cb: CallbackManager) -> list[str]:
        if len(actions) == 1:
            return [self._run_tool(actions[0], cb)]
        workers = min(self.max_tool_workers, len(actions))
        # deadline: pool threads do not inherit context variables (the run deadline); each
        # call runs in its own copy of this thread's context.
        contexts = [contextvars.copy_context() for _ in actions]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda c, a: c.run(self._run_tool, a, cb), contexts, actions))

    # ------------------------------------------------------------------ drivers
    def _start(
        self, inputs: str | dict[str, Any], callbacks: Iterable[BaseCallbackHandler] | None
    ) -> _RunState:
        data = {"input": inputs} if isinstance(inputs, str) else dict(inputs)
        if "input" not in data:
            raise AgentCliError("the run needs an 'input' (the question)")
        counter = _UsageCounter(priced=self.max_cost is not None)
        manager = ensure_manager([*self.callbacks, *(callbacks or ()), counter])
        manager.on_chain_start(data)
        return _RunState(inputs=data, callbacks=manager)

    def _plan(self, effect: _Plan, state: _RunState) -> Any:
        if effect.final:
            return self.agent.plan_final(effect.steps, state.inputs, state.callbacks)
        try:
            return self.agent.plan(effect.steps, state.inputs, state.callbacks)
        except OutputParserError as err:
            return err

    async def _aplan(self, effect: _Plan, state: _RunState) -> Any:
        if effect.final:
            return await self.agent.aplan_final(effect.steps, state.inputs, state.callbacks)
        try:
            return await self.agent.aplan(effect.steps, state.inputs, state.callbacks)
        except OutputParserError as err:
            return err

    def _interrupted(self, state: _RunState) -> RunResult:
        state.callbacks.on_text("Interrupted: the run was cancelled", kind="interrupted")
        return self._result(state, "", "interrupted")

    def _time_left(self, state: _RunState) -> float | None:  # deadline:
        if self.max_execution_time is None:
            return None
        return self.max_execution_time - (time.monotonic() - state.started)

    def _deadline_stop(self, state: _RunState) -> Iterator[RunEvent]:  # deadline:
        """The events of a run cut at its deadline mid-call (as the loop's limit path)."""
        cb = state.callbacks
        cb.on_text("Stopped: max execution time reached", kind="limit",
                   reason="max_execution_time")
        yield RunEvent("limit", output="max_execution_time")
        final = AgentFinish({"output": FORCE_STOP_MESSAGE}, "")
        cb.on_agent_finish(final)
        yield RunEvent("finish", output=final.output, finish=final)

    def _end(self, state: _RunState, result: RunResult) -> RunEvent:
        state.callbacks.on_chain_end(result.to_dict())
        return RunEvent("end", output=result.output, result=result)

    def _drive(self, state: _RunState) -> Iterator[RunEvent]:
        loop = self._loop(state)
        value: Any = None
        try:
            while True:
                effect = loop.send(value)
                value = None
                if isinstance(effect, RunEvent):
                    yield effect
                elif isinstance(effect, _Plan):
                    with deadline_scope(self._time_left(state)):  # deadline:
                        value = self._plan(effect, state)
                else:
                    with deadline_scope(self._time_left(state)):  # deadline:
                        value = self._run_tools(effect.actions, state.callbacks)
                        if expired():  # a tool cut at the deadline said so in its observation
                            raise DeadlineExceeded("a tool reached the time limit")
        except StopIteration as done:
            result: RunResult = done.value
        except DeadlineExceeded:  # deadline: cut mid-call; stop as the loop's time limit does
            loop.close()
            yield from self._deadline_stop(state)
            result = self._result(state, FORCE_STOP_MESSAGE, "max_execution_time")
        except KeyboardInterrupt:
            result = self._interrupted(state)
        except BaseException as err:
            state.callbacks.on_chain_error(err)
            raise
        yield self._end(state, result)

    async def _adrive(self, state: _RunState) -> AsyncIterator[RunEvent]:
        loop = self._loop(state)
        value: Any = None
        try:
            while True:
                effect = loop.send(value)
                value = None
                if isinstance(effect, RunEvent):
                    yield effect
                elif isinstance(effect, _Plan):
                    async with adeadline_scope(self._time_left(state)):  # deadline:
                        value = await self._aplan(effect, state)
                else:
                    async with adeadline_scope(self._time_left(state)):  # deadline:
                        value = list(await asyncio.gather(
                            *(self._arun_tool(a, state.callbacks) for a in effect.actions)
                        ))
                        if expired():
                            raise DeadlineExceeded("a tool reached the time limit")
        except StopIteration as done:
            result: RunResult = done.value
        except DeadlineExceeded:  # deadline: cut mid-call; stop as the loop's time limit does
            loop.close()
            for event in self._deadline_stop(state):
                yield event
            result = self._result(state, FORCE_STOP_MESSAGE, "max_execution_time")
        except (KeyboardInterrupt, asyncio.CancelledError):
            result = self._interrupted(state)
        except BaseException as err:
            state.callbacks.on_chain_error(err)
            raise
        yield self._end(state, result)

    # ------------------------------------------------------------------ public API
    def stream(
        self, inputs: str | dict[str, Any], callbacks: Iterable[BaseCallbackHandler] | None = None
    ) -> Iterator[RunEvent]:
        """Yield each action, observation and the finish as they happen; the last is 'end'."""
        return self._drive(self._start(inputs, callbacks))

    def invoke(
        self, inputs: str | dict[str, Any], callbacks: Iterable[BaseCallbackHandler] | None = None
    ) -> RunResult:
        """Run to the end and return the result."""
        event = None
        for event in self.stream(inputs, callbacks):  # noqa: B007 - the last event holds the result
            pass
        assert event is not None and event.result is not None
        return event.result

    def astream(
        self, inputs: str | dict[str, Any], callbacks: Iterable[BaseCallbackHandler] | None = None
    ) -> AsyncIterator[RunEvent]:
        """Async twin of :meth:`stream`."""
        return self._adrive(self._start(inputs, callbacks))

    async def ainvoke(
        self, inputs: str | dict[str, Any], callbacks: Iterable[BaseCallbackHandler] | None = None
    ) -> RunResult:
        """Async twin of :meth:`invoke`."""
        event = None
        async for event in self.astream(inputs, callbacks):  # noqa: B007
            pass
        assert event is not None and event.result is not None
        return event.result

    async def abatch(
        self,
        inputs: Sequence[str | dict[str, Any]],
        *,
        concurrency: int = 8,
        return_exceptions: bool = True,
    ) -> list[RunResult | BaseException]:
        """Run many inputs with at most ``concurrency`` at once; results keep input order."""
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(item: str | dict[str, Any]) -> RunResult:
            async with gate:
                return await self.ainvoke(item)

        return list(await asyncio.gather(
            *(one(i) for i in inputs), return_exceptions=return_exceptions
        ))

    def batch(
        self, inputs: Sequence[str | dict[str, Any]], *, concurrency: int = 8
    ) -> list[RunResult | BaseException]:
        """Synchronous wrapper over :meth:`abatch`."""
        return asyncio.run(self.abatch(inputs, concurrency=concurrency))
