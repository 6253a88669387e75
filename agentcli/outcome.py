"""How a run ended, as the CLI reports it: its exit code and the answer worth printing."""

from __future__ import annotations

from agentcli import exit_codes
from agentcli.schema import FORCE_STOP_MESSAGE, LIMIT_REASONS, RunResult, stop_words


def exit_code(result: RunResult) -> int:
    """0 when answered, 3 when a limit stopped the run, 130 when interrupted."""
    if result.stop_reason == "interrupted":
        return exit_codes.INTERRUPTED
    if result.recovered:  # the limit was hit, then the model gave its answer
        return exit_codes.OK
    return exit_codes.LIMIT if result.stop_reason in LIMIT_REASONS else exit_codes.OK


def real_answer(result: RunResult) -> str | None:
    """The answer to print, or None when a limit stopped the run without one.

    The executor's forced stop puts a placeholder sentence where the answer goes; printed on
    stdout it would pass for an answer in a pipeline. Only ``early_stopping_method: generate``
    produces a real answer at a limit.
    """
    if result.stop_reason == "interrupted":
        return None
    if result.stop_reason in LIMIT_REASONS and (
        not result.output.strip() or result.output.strip() == FORCE_STOP_MESSAGE
    ):
        return None
    return result.output


def stop_line(result: RunResult) -> str | None:
    """The stderr line saying which limit stopped the run (None when it was not a limit)."""
    if result.stop_reason not in LIMIT_REASONS or result.recovered:
        return None
    return f"Stopped: {stop_words(result.stop_reason)}."


def recorded_answer(result: RunResult) -> str:
    """What logs and memory keep as the reply: the answer, or a note saying why there is none
    (never the executor's placeholder, which a model would read as something it said)."""
    answer = real_answer(result)
    if answer is not None:
        return answer
    return f"(no answer: {stop_words(result.stop_reason)})"
