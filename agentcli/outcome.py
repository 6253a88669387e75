"""How a run ended, as the CLI reports it: its exit code and the answer worth printing."""

from __future__ import annotations

from collections.abc import Mapping

from agentcli import exit_codes
from agentcli.log_schema import RunRecord
from agentcli.schema import (
    FORCE_STOP_MESSAGE,
    LIMIT_REASONS,
    STOP_WORDS,
    RunResult,
    stop_words,
)


def exit_code(result: RunResult) -> int:
    """0 only with an answer, 3 when the run ended without one (a limit, or a reply that was
    no answer), 130 when interrupted."""
    if result.stop_reason == "interrupted":
        return exit_codes.INTERRUPTED
    if real_answer(result) is None:
        return exit_codes.LIMIT
    if result.stop_reason in LIMIT_REASONS and not result.recovered:
        return exit_codes.LIMIT  # early_stopping_method generate: an answer, at a limit
    return exit_codes.OK


def real_answer(result: RunResult) -> str | None:
    """The answer to print, or None when the run ended without one.

    The executor already judged every reply by the answer rule (:mod:`agentcli.answers`):
    ``output`` is None when none was an answer. At a limit the forced stop puts LangChain's
    sentence where the answer goes; printed on stdout it would pass for an answer in a
    pipeline. A tool's own output (``return_direct``) is the answer when not empty.
    """
    output = result.output
    if result.stop_reason == "interrupted" or output is None or not output.strip():
        return None
    if "structured_response" in result.state:  # (output-only) the run's schema check passed:
        return output  # that check decides a structured answer, whatever its fields
    if result.stop_reason in LIMIT_REASONS and not result.recovered and (
            output == FORCE_STOP_MESSAGE):
        return None
    return output


def last_result(result: RunResult) -> str | None:
    """The last observation that held a result (not an error, not a reminder), if any."""
    for step in reversed(result.steps):
        text = step.observation.strip()
        if text and not text.startswith(("Error", "You already called")):
            return text
    return None


def stop_line(result: RunResult) -> str | None:
    """The stderr line saying why the run ended without an answer (None when answered), with
    the last observation that held a result."""
    if result.stop_reason == "interrupted" or real_answer(result) is not None:
        return None
    reason = result.stop_reason if result.stop_reason in LIMIT_REASONS else "no_answer"
    held = last_result(result)
    kept = f" The last result was: {held[:300]}" if held else ""
    return f"Stopped: {stop_words(reason)}.{kept}"


def recorded_answer(result: RunResult) -> str:
    """What logs and memory keep as the reply: the answer, or a note saying why there is none
    (never the executor's placeholder, which a model would read as something it said)."""
    answer = real_answer(result)
    if answer is not None:
        return answer
    reason = result.stop_reason if result.stop_reason in STOP_WORDS else "no_answer"
    return f"(no answer: {stop_words(reason)})"


def run_record(question: str, result: RunResult, *, model: str | None = None,
               agent: str | None = None, session: str | None = None,
               meta: Mapping[str, object] | None = None,
               options: Mapping[str, object] | None = None) -> RunRecord:
    """The run log's record of a finished run: what the store writes in one call, with the
    run's own count of model calls and its cost (None when a model it called has no price)."""
    extra: dict[str, object] = {"cost": result.cost, "model_calls": result.model_calls,
                                **(meta or {})}
    if options:
        extra["options"] = dict(options)
    if result.state.keys() - {"messages"}:  # the run's final state (messages are the steps)
        extra["state"] = result.state_data(skip=("messages",))
    usage = result.usage
    return RunRecord(question, recorded_answer(result), result.steps_data(), result.stop_reason,
                     usage.prompt_tokens, usage.completion_tokens, result.elapsed, model, agent,
                     session, extra or None)
