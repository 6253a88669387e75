"""How a run ended, as the CLI reports it: its exit code and the answer worth printing."""

from __future__ import annotations

from agentcli import exit_codes
from agentcli.schema import LIMIT_REASONS, RunResult


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
    from agentcli.executor import FORCE_STOP_MESSAGE

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
    return f"Stopped by {reason_words(result)}."


def reason_words(result: RunResult) -> str:
    """The stop reason as words: ``max_iterations`` -> ``max iterations``."""
    return result.stop_reason.replace("_", " ")
