"""Never lose an answer the model already has.

Small models often get the right observation, then send the same call again until the stall
stop ends the run without an answer. Two rules keep that answer:

* a call identical to one that already succeeded in this run is not run again: the model is
  told it already has that result (quoted) and should answer or try something else;
* when a run stalls or reaches its step limit after a useful observation, the model is asked
  once for its final answer without tools (``early_stopping_method: auto``, the CLI default);
  an answer obtained so is marked ``recovered``. The reply is judged by the one answer rule
  (:mod:`agentcli.answers`): a reply that still asks for a tool is never taken as the answer.

Issue 31 asks for the answer as soon as a call shows the model already has it
(:func:`has_result`: an exact repeat of a call that succeeded, or a call whose input is a
previous result), not after three identical replies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli.errors import OutputParserError
from agentcli.schema import AgentAction, ToolOutcome, ToolStatus

if TYPE_CHECKING:
    from agentcli.state import Command

# A budget or the time limit forbids another call; these do not. (A reply that was no answer
# always gets its one answer-now request: AgentLoop._stop.)
RECOVERABLE = ("stalled", "max_iterations")


def call_key(action: AgentAction) -> str:
    """The identity of a call: its tool and input."""
    return json.dumps([action.tool, action.tool_input], sort_keys=True, default=str)


def repeat_observation(action: AgentAction, earlier: str) -> str:
    """What the model reads instead of running a call it already made."""
    return (f"You already called {action.tool} with this input, and it returned: {earlier}\n"
            "Calling it again gives the same result. Give your final answer now, or try "
            "something different.")


def asks_last(method: str, reason: str, useful: bool) -> bool:
    """Whether the executor asks once more for an answer at this limit."""
    if method == "generate":
        return reason != "max_execution_time"
    return method == "auto" and reason in RECOVERABLE and useful


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", re.IGNORECASE)


def _input_text(action: AgentAction) -> str:
    value = action.tool_input
    if isinstance(value, dict):
        real = [v for k, v in value.items() if k not in ("required", "type", "title")]
        value = real[0] if len(real) == 1 else json.dumps(value, sort_keys=True, default=str)
    return str(value).strip()


def has_result(results: dict[str, str], action: AgentAction) -> bool:
    """The call shows the model already has what it needs: the same call succeeded before, or
    its input is a previous result (``Calculator("75.0")`` after ``Answer: 75.0``)."""
    if call_key(action) in results:
        return True
    given = _input_text(action)
    if not given or not results:
        return False
    for earlier in results.values():
        text = earlier.strip()
        if given in (text, text.removeprefix("Answer:").strip()):
            return True
        if _NUMBER.fullmatch(given) and float(given) in {
                float(n) for n in _NUMBER.findall(text)[-1:]}:
            return True
    return False


def with_repeats(
    results: dict[str, str], actions: list[AgentAction], fresh: list[AgentAction],
    outcomes: list[tuple[ToolOutcome | Command, ToolStatus]],
) -> list[tuple[ToolOutcome | Command, ToolStatus]]:
    """Every action's outcome: the fresh calls' own (an ``ok`` one is remembered in
    ``results``), a reminder instead of a second run for repeated ones."""
    ran = dict(zip(map(id, fresh), outcomes, strict=True))
    out: list[tuple[ToolOutcome | Command, ToolStatus]] = []
    for action in actions:
        done = ran.get(id(action))
        if done is None:
            text = repeat_observation(action, results[call_key(action)])
            out.append((ToolOutcome(text, "ok"), "ok"))
            continue
        if done[1] == "ok" and isinstance(done[0], ToolOutcome):
            results[call_key(action)] = done[0].text
        out.append(done)
    return out


ParsingErrorHandler = bool | str | Callable[[OutputParserError], str]


def parse_error_observation(handler: ParsingErrorHandler, err: OutputParserError) -> str:
    """What the model is told of a reply that did not parse (``handle_parsing_errors``):
    False re-raises, True sends the parser's own hint, a string or a function's result is sent
    as it is."""
    if handler is False:
        raise err
    if handler is True:
        return err.observation
    return handler if isinstance(handler, str) else handler(err)
