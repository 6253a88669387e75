"""Never lose an answer the model already has.

Small models often get the right observation, then send the same call again until the stall
stop ends the run without an answer. Two rules keep that answer:

* a call identical to one that already succeeded in this run is not run again: the model is
  told it already has that result (quoted) and should answer or try something else;
* when a run stalls or reaches its step limit after a useful observation, the model is asked
  once for its final answer without tools (``early_stopping_method: auto``, the CLI default);
  an answer obtained so is marked ``recovered``. A reply that still asks for a tool is never
  taken as the answer.

Issue 31 adds the answer contract (:func:`is_answer`: nothing that is not an answer is shown
as one) and asks for the answer as soon as a call shows the model already has it
(:func:`has_result`: an exact repeat of a call that succeeded, or a call whose input is a
previous result), not after three identical replies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli import _json_repair
from agentcli.errors import OutputParserError
from agentcli.schema import (
    EXAMPLE_VALUES,
    FORCE_STOP_MESSAGE,
    AgentAction,
    ToolOutcome,
    ToolStatus,
)

if TYPE_CHECKING:
    from agentcli.state import Command

# A budget or the time limit forbids another call; these do not.
RECOVERABLE = ("stalled", "max_iterations", "no_answer")


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


def looks_like_action(text: str) -> bool:
    """A reply that is still an action blob (a tool request), not an answer."""
    body = text.strip().strip("`").strip()
    if body.lower().startswith("json"):
        body = body[4:].lstrip()
    return body.startswith("{") and '"action"' in body and '"Final Answer"' not in body


# Tool calls written as text, in the forms the parsers recognise.
# ``"action":`` also when the blob around it is broken (an unclosed string ran on into a
# copy of the prompt: SmolLM2, chat-conversational, printed as its answer on main 697f723).
_CALL_MARKERS = re.compile(r"<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|^\s*Action( Input)?\s*:"
                           r'|"action(?:_input)?"\s*:', re.MULTILINE)
_FENCE = re.compile(r"^```[a-z]*\s*|\s*```$", re.IGNORECASE)
# Prompt words and canned sentences that are not an answer (a small model copies them); a
# text in angle brackets is a prompt's placeholder (the compact example's ``<the answer>``).
_PLACEHOLDER = re.compile(r"^(?:your answer to the original question|the final answer|"
                          r"best answer to the original question|<[^<>\n]*>|the tool's input|"
                          r"\$?JSON_BLOB|final answer:?|(?:the )?answer:?)$", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", re.IGNORECASE)


def _json_call(text: str) -> bool:
    """The text is (or holds) a JSON value shaped like a tool call."""
    body = _FENCE.sub("", text.strip()).strip()
    if body.lower().startswith("json"):
        body = body[4:].lstrip()
    if not body.startswith(("{", "[")):
        return False
    for _, value, _ in _json_repair.iter_values(body, max_attempts=5):
        found = _json_repair.find_tool_call(value)
        if found is not None and found[0].strip().lower() != "final answer":
            return True
    return False


def is_answer(text: str, question: str = "") -> bool:
    """An answer: non-empty text that is not a tool call in any form the parsers recognise
    (a JSON blob, ``{"name": ..., "arguments": ...}``, ``<tool_call>``,
    ``<|python_tag|>``, ``[TOOL_CALLS]``, ``Action:``), not the question echoed back and not
    a placeholder (a prompt's words or its example's values, the forced-stop sentence, a tool's
    ``Error:`` line)."""
    body = text.strip()
    if not body or body == FORCE_STOP_MESSAGE or _PLACEHOLDER.fullmatch(body.strip("`* ")):
        return False
    if body.strip("`*\"' .").lower() in {v.lower() for v in EXAMPLE_VALUES} or re.search(
            rf"(?<![\d.]){re.escape(EXAMPLE_VALUES[1])}(?![\d])", body):
        return False  # the compact prompt's example copied ("The answer is 10.73" too)
    if body.startswith("Error: "):  # a tool's error observation copied as the answer
        return False
    if _CALL_MARKERS.search(body) or looks_like_action(body) or _json_call(body):
        return False
    def bare(t: str) -> str:
        return "".join(t.lower().split()).rstrip("?.!")

    return not (question and bare(body) == bare(question))


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
