"""The loop of a run: plan, act, observe, repeat, within limits. No I/O here.

The loop is written once, as a generator (:meth:`AgentLoop._loop`) that *yields effects* and
receives their results (:mod:`agentcli.run`): ``CallModel`` (send this request), ``RunTools``
(run these actions) and the run's events. The agent itself is pure: it builds each request
and reads each reply. The one driver, :mod:`agentcli._drive`, fulfils the effects on asyncio;
:class:`~agentcli.executor.AgentExecutor` (the public API) adds ``invoke``, ``stream`` and
``batch`` over the driver, so every entry point shares every feature of the loop.

State updates (from tools' :class:`~agentcli.state.Command` and from middleware) are
collected during a step and applied after it, in the order the actions were declared.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import (
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from functools import partial
from typing import Any

from agentcli.answers import REASON_WORDS, Verdict, echoes, judge
from agentcli.errors import ConfigError, OutputParserError
from agentcli.events import (
    ActionEvent,
    Finish,
    Limit,
    Notice,
    Observation,
    ParseError,
    StateUpdate,
)
from agentcli.history import closing, without_steps
from agentcli.loop_setup import LoopSetup
from agentcli.middleware import (
    ModelAsk,
    StopRun,
    overriding,
)
from agentcli.recovery import (
    asks_last,
    call_key,
    has_result,
    parse_error_observation,
    with_repeats,
)
from agentcli.run import (
    EXPIRED,
    CallModel,
    Compute,
    Effect,
    Expired,
    Outcome,
    RefreshTools,
    Run,
    RunTools,
)
from agentcli.schema import (
    FORCE_STOP_MESSAGE,
    LIMIT_REASONS,
    PARSE_ERROR_TOOL,
    AgentAction,
    AgentFinish,
    AgentStep,
    Message,
    RunResult,
    StopReason,
)
from agentcli.state import JUMP_TARGETS, Command
from agentcli.tools.naming import tool_lookup


class AgentLoop(LoopSetup):
    """The loop of one run of a :class:`~agentcli.loop_setup.LoopSetup` (the executor's
    engine): plan, act, observe, repeat, within its limits."""

    # ------------------------------------------------------------------ the loop (once)
    def _limit(self, run: Run) -> StopReason | None:
        if self.max_iterations is not None and run.info.iterations >= self.max_iterations:
            return "max_iterations"
        if run.deadline is not None and time.monotonic() >= run.deadline:
            return "max_execution_time"
        return None

    def _view(self, run: Run) -> dict[str, Any]:
        """What the agent sees: the state, its steps trimmed, the messages trimmed alike.

        Text agents read ``intermediate_steps``, chat-native ones ``messages``: both come from
        the one history, so trimming and summaries apply to every agent type.
        """
        messages: list[Message] = run.values.get("messages") or []
        index = run.history.update(messages)
        steps = list(index.steps)
        trim = self.trim_intermediate_steps
        kept = trim(list(steps)) if callable(trim) else steps[-trim:] if trim > 0 else steps
        view = {**run.values, "intermediate_steps": kept}
        if len(kept) < len(steps):
            view["messages"] = without_steps(messages, {id(s) for s in kept})
        summary = index.summary
        if summary is not None and "input" in view:  # text agents read the work from ``input``
            view["input"] = f"{view['input']}\n\n{summary.content}"
        return view

    def _update(self, run: Run, updates: Sequence[Mapping[str, object]]) -> str | None:
        """Apply updates in order; returns a ``jump_to`` target if one was set."""
        if not updates:
            return None
        run.values = self.schema.apply(run.values, updates)
        jump = run.values.pop("jump_to", None)
        if jump is not None and jump not in JUMP_TARGETS:
            raise ConfigError(f"jump_to must be one of {', '.join(JUMP_TARGETS)}, got {jump!r}")
        fields = {k: v for u in updates for k, v in u.items() if k not in ("messages", "jump_to")}
        if fields:
            run.emit(StateUpdate(fields))
        return str(jump) if jump else None

    def _stalled(self, run: Run, key: str) -> bool:
        """True when the model sent the same thing ``stall_limit`` times in a row."""
        run.repeats = run.repeats + 1 if key == run.last_key else 1
        run.last_key = key
        return self.stall_limit is not None and run.repeats >= self.stall_limit

    def _loop(self, run: Run) -> Generator[Effect, Any, RunResult]:
        middleware = run.middleware
        after = overriding(middleware, "after_model")  # each gets its own view of the state
        reason: StopReason | None = None
        while (reason := self._limit(run)) is None:
            try:
                view = self._view(run)
                updates = [u for m in middleware if (u := m.before_model(view, run.info))]
            except StopRun as stop:
                reason = stop.reason  # type: ignore[assignment]
                break
            if self._update(run, updates) == "end":
                return (yield from self._finish(run, run.last_text(), "jump_to_end"))
            if not (yield from self._asks(run, (m.ask_model(self._view(run), run.info)
                                                for m in overriding(middleware, "ask_model")))):
                reason = "max_execution_time"
                break
            yield from self._refresh_tools(run)
            result = yield CallModel(run.agent.request(self._view(run)))
            if result is EXPIRED:
                reason = "max_execution_time"
                break
            run.info.iterations += 1
            updates = [u for m in after
                       if (u := m.after_model(self._view(run), result, run.info))]
            jump = self._update(run, updates)
            if jump == "end":
                return (yield from self._finish(run, result.text.strip(), "jump_to_end"))
            if jump == "model":
                continue
            try:
                decision = run.agent.decide(result)
                if isinstance(decision, AgentFinish) and run.answer_format is not None:
                    decision = yield Compute(partial(self._structured, run, decision))
                    if decision is EXPIRED:
                        reason = "max_execution_time"
                        break
            except OutputParserError as err:
                if run.agent.native_tools and run.steps and not (
                        result.text.strip() or result.tool_calls):
                    if self.early_stopping_method == "force":
                        # an empty reply after tool results ends the run with no answer and
                        # no further request, as LangGraph's graph ends (seed 004; it stays
                        # in the messages, as there)
                        self._update(run, [{"messages": [Message("assistant", "")]}])
                        return (yield from self._finish(run, None, "no_answer"))
                    reason = "no_answer"  # asked once more, else exit 3, no answer
                    break
                observation = parse_error_observation(self.handle_parsing_errors, err)
                action = AgentAction(PARSE_ERROR_TOOL, observation, err.llm_output or result.text)
                step = AgentStep(action, observation)
                self._update(run, [{"messages": [Message("assistant", result.text),
                                                 Message("user", observation, step=step)]}])
                yield ParseError(step)
                if self._stalled(run, "parse:" + (err.llm_output or result.text).strip()):
                    reason = "stalled"
                    break
                continue
            calculation: AgentAction | None = None
            if isinstance(decision, AgentFinish) and run.answer_format is None:
                # (a structured answer is what the run's schema says it is: checked above)
                verdict = self._judge(run, decision.output)
                calculation = self._calculation(verdict, result.text)
                if calculation is not None:
                    decision = [calculation]  # a step, not an answer: the Calculator runs it
                elif not verdict.answer:
                    yield self._refused(verdict)
                    reason = "no_answer"  # the answer rule (agentcli.answers)
                    break
            if not isinstance(decision, AgentFinish) and self._has_it(run, decision):
                # (the call is not run: the run goes on with it if the reply is no answer)
                done = yield from self._answer_now(run, "already has")
                if isinstance(done, Expired):
                    reason = "max_execution_time"
                    break
                if done is not None:
                    return done
            self._update(run, [{"messages": run.agent.turn_messages(result, decision)}])
            if isinstance(decision, AgentFinish):
                return (yield from self._finish(run, decision, "finished"))
            actions = decision if isinstance(decision, list) else [decision]
            run.repairs += sum(a.repaired for a in actions)
            for action in actions:
                yield ActionEvent(action)
            if self._stalled(run, "act:" + json.dumps(
                [[a.tool, a.tool_input] for a in actions], sort_keys=True, default=str
            )):
                reason = "stalled"
                break
            fresh = actions if getattr(self.agent, "reruns_calls", False) else [
                a for a in actions if call_key(a) not in run.results]  # a plan() agent's: all
            outcomes = (yield RunTools(fresh, dict(run.values))) if fresh else []
            if outcomes is EXPIRED:
                reason = "max_execution_time"
                break
            outcomes = with_repeats(run.results, actions, fresh, outcomes)
            ended = yield from self._observe(run, actions, outcomes)
            if ended is not None:
                return ended
            if calculation is not None:  # the result is back: ask for the answer
                done = yield from self._answer_now(run, "has")
                if isinstance(done, RunResult):
                    return done
                reason = "no_answer" if done is None else "max_execution_time"
                break
        return (yield from self._stop(run, reason or "max_iterations"))

    def _judge(self, run: Run, reply: str) -> Verdict:
        """The answer rule (:func:`agentcli.answers.judge`) on what this run was given."""
        results = [text for key, text in run.results.items()
                   if not echoes(json.loads(key)[1], text)]  # (key: recovery.call_key)
        return judge(reply, self.answer_given(run.question, run.tool_texts, results))

    def _calculation(self, verdict: Verdict, log: str) -> AgentAction | None:
        """A bare calculation as the answer, as a Calculator call on the model's own text
        (None when it is not one, or no Calculator is loaded: then it is no answer)."""
        tool = self.tool_map.get("Calculator")
        if verdict.reason != "calculation" or tool is None:
            return None
        expression = verdict.text.strip("`").strip().strip("= ")
        return AgentAction(tool.name, expression, log, tool_call_id=f"call_{uuid.uuid4().hex[:12]}")

    def _answer_now(
        self, run: Run, has: str
    ) -> Generator[Effect, Any, RunResult | Expired | None]:
        """Ask once for the answer now: the finished run, EXPIRED, or None (no answer)."""
        run.asked_now = True
        yield Notice("answer_now", f"The model {has} the result; asked for its answer.", {})
        answer = yield from self._final_answer(run)
        if not isinstance(answer, AgentFinish):
            return answer
        return (yield from self._finish(run, answer, "finished"))

    def _has_it(self, run: Run, decision: AgentAction | list[AgentAction]) -> bool:
        """A call shows the model already has its result (asked once a run, CLI default)."""
        if self.early_stopping_method != "auto" or run.asked_now:
            return False
        actions = decision if isinstance(decision, list) else [decision]
        return any(has_result(run.results, a) for a in actions)

    def _final_answer(self, run: Run) -> Generator[Effect, Any, AgentFinish | Expired | None]:
        """Ask for the answer now, without tools: the answer, EXPIRED when the deadline
        passed, or None when the reply is still not one (the answer rule, then the run's
        output schema: the same check as every other answer)."""
        reply = yield CallModel(run.agent.request(self._view(run), final=True))
        if isinstance(reply, Expired):
            return reply
        finish: AgentFinish = run.agent.finish(reply)
        answer: AgentFinish | Expired | None = finish
        if run.answer_format is not None:  # the schema decides a structured answer
            answer = yield from self._last_check(run, finish)
        else:
            verdict = self._judge(run, finish.output)
            if not verdict.answer:
                answer = None
                yield self._refused(verdict)
        if isinstance(answer, AgentFinish):  # the answer is the run's last message, every path
            self._update(run, [{"messages": [Message("assistant", answer.output)]}])
        return answer

    @staticmethod
    def _refused(verdict: Verdict) -> Notice:
        """The trace's word on a reply the answer rule refused, and why."""
        return Notice("not_an_answer", "The model's reply is no answer: "
                      f"{REASON_WORDS[verdict.reason or 'empty']}.", {"reason": verdict.reason})

    def _structured(self, run: Run, finish: AgentFinish) -> AgentFinish:
        """The answer checked against the run's output schema (``structured.ResponseFormat``,
        the one check), its value in ``structured_response``; OutputParserError when it does
        not match. Without a schema the answer is returned as it is."""
        if run.answer_format is None:
            return finish
        return run.answer_format.answer(finish, run.values)

    def _last_check(self, run: Run, finish: AgentFinish
                    ) -> Generator[Effect, Any, AgentFinish | Expired | None]:
        """:meth:`_structured` where the model cannot be asked again (the answer-now reply, a
        tool's direct answer), off the loop like the normal path's: None, and a notice saying
        why, when the answer does not match; EXPIRED when the deadline passed meanwhile."""
        if run.answer_format is None:
            return finish
        try:
            checked: AgentFinish | Expired = yield Compute(partial(self._structured, run, finish))
        except OutputParserError as err:
            yield Notice("schema_mismatch", f"The answer does not match the output schema: "
                         f"{err}", {"error": str(err)})
            return None
        return checked

    def _refresh_tools(self, run: Run) -> Generator[Effect, Any, None]:
        """Offer the tools a live source changed since the last request (and say so)."""
        if self.tool_refresh is None:
            return
        fresh, notes = yield RefreshTools()  # what the refresh said (held back): the trace
        yield from notes
        if fresh is None:
            return
        before = {t.name for t in self.tools}
        self.tools, self.tool_map = list(fresh), tool_lookup(fresh)
        self.agent = self.agent.with_tools(self.tools)
        run.agent = self._agent_for(run.answer_format)
        added = sorted({t.name for t in fresh} - before)
        gone = sorted(before - {t.name for t in fresh})
        words = "; ".join(part for part in (f"new: {', '.join(added)}" if added else "",
                                            f"gone: {', '.join(gone)}" if gone else "") if part)
        yield Notice("tools_changed", f"The tools changed ({words or 'descriptions'}).",
                     {"added": added, "removed": gone})

    def _asks(
        self, run: Run, asks: Iterable[ModelAsk | None], *, answered: bool = False
    ) -> Generator[Effect, Any, bool]:
        """Send the requests middleware asks for (summaries) and apply what they return;
        False when the deadline passed meanwhile. Once the run is ``answered``, a failed
        request is a notice: the answer stands."""
        for ask in asks:
            if ask is None:
                continue
            try:
                reply = yield CallModel(ask.request, llm=ask.llm, agent=False)
            except Exception as err:
                if not answered:
                    raise
                yield Notice("ask_failed", f"A request made after the answer failed: {err}",
                             {"error": str(err)})
                continue
            if reply is EXPIRED:
                return False
            update = ask.then(reply)
            if update:
                self._update(run, [update])
        return True

    def _observe(
        self, run: Run, actions: list[AgentAction], outcomes: list[Outcome]
    ) -> Generator[Effect, Any, RunResult | None]:
        """Record each step, apply the step's state updates, end on return_direct/goto end."""
        updates: list[dict[str, Any]] = []
        direct: str | None = None
        last: AgentStep | None = None
        for action, (value, status) in zip(actions, outcomes, strict=True):
            call_id = action.tool_call_id
            parts: tuple[dict[str, Any], ...] = ()
            if isinstance(value, Command):
                observation = value.observation(call_id)
                update = dict(value.update)
                if value.goto == "end" and direct is None:
                    direct = observation
            else:
                observation, parts, update = value.text, value.parts, {}
            step = last = AgentStep(action, observation)
            if status != "ok":  # a tool's own error text: never an answer (agentcli.answers)
                run.tool_texts.append(observation)
            if "messages" not in update:
                update["messages"] = [Message("tool", observation, tool_call_id=call_id,
                                              name=action.tool, parts=parts, step=step)]
            else:  # a Command wrote its own messages: its tool result closes the step
                update["messages"] = closing(update["messages"], step)
            updates.append(update)
            yield Observation(step, status)
            tool = self.tool_map.get(action.tool)
            if direct is None and tool is not None and tool.return_direct and status == "ok":
                direct = observation
        if self._update(run, updates) == "end" and direct is None and last is not None:
            direct = last.observation
        if direct is not None:
            finish = AgentFinish({"output": direct}, actions[-1].log)
            return (yield from self._finish(run, finish, "return_direct"))
        return None

    def _finish(
        self, run: Run, finish: AgentFinish | str | None, reason: StopReason
    ) -> Generator[Effect, Any, RunResult]:
        """End the run with ``finish`` (None: without an answer)."""
        if isinstance(finish, str):
            finish = AgentFinish({"output": finish}, finish)
        # An answer that got here unchecked (a tool's, a jump's, an empty native reply's) meets
        # the run's schema too; ``structured_response`` is output-only: only this run's check
        # sets it.
        if (finish is not None and run.answer_format is not None
                and reason not in LIMIT_REASONS and "structured_response" not in run.values):
            checked = yield from self._last_check(run, finish)
            if not isinstance(checked, AgentFinish):
                finish = None
                reason = "no_answer" if checked is None else "max_execution_time"
            else:
                finish = checked
        output = None if finish is None else finish.output
        if finish is not None:
            yield Finish(finish)
        result = self._result(run, output, reason)
        yield from self._asks(run, (m.ask_at_end(self._view(run), result, run.info)
                                    for m in overriding(run.middleware, "ask_at_end")),
                              answered=True)
        return self._result(run, output, reason)  # those requests' tokens and cost too

    def _stop(self, run: Run, reason: StopReason) -> Generator[Effect, Any, RunResult]:
        """A limit ended the loop: force a stop message, or ask for one last answer. A reply
        that was no answer gets the one answer-now request on every path, then none."""
        yield Limit(reason)
        final: AgentFinish | None = AgentFinish({"output": FORCE_STOP_MESSAGE}, "")
        if reason == "no_answer":
            final = None
            ask = not run.asked_now
        else:
            ask = asks_last(self.early_stopping_method, reason, bool(run.results))
        if ask:
            run.asked_now = True
            answer = yield from self._final_answer(run)
            if isinstance(answer, AgentFinish):
                final = answer
                if self.early_stopping_method == "auto" or reason == "no_answer":
                    run.recovered = reason
        return (yield from self._finish(run, final, reason))

    def _result(self, run: Run, output: str | None, reason: StopReason) -> RunResult:
        info = run.info
        return RunResult(
            output=output,
            steps=tuple(run.steps) if self.return_intermediate_steps else (),
            stop_reason=reason,
            usage=info.usage,
            model_calls=info.model_calls,
            elapsed=time.monotonic() - run.started,
            stats={"tool_call_repairs": run.repairs},
            state=self.schema.output(run.values),
            cost=None if info.unpriced else info.cost,
            recovered=run.recovered,
            input=run.values.get("input"),
        )
