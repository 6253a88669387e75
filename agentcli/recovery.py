"""Never lose an answer the model already has.

Small models often get the right observation, then send the same call again until the stall
stop ends the run without an answer. Two rules keep that answer:

* a call identical to one that already succeeded in this run is not run again: the model is
  told it already has that result (quoted) and should answer or try something else;
* when a run stalls or reaches its step limit after a useful observation, the model is asked
  once for its final answer without tools (``early_stopping_method: auto``, the CLI default);
  an answer obtained so is marked ``recovered``. A reply that still asks for a tool is never
  taken as the answer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentcli.schema import AgentAction, ToolOutcome

if TYPE_CHECKING:
    from agentcli.state import Command

RECOVERABLE = ("stalled", "max_iterations")  # a budget or the time limit forbids another call


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


def with_repeats(
    results: dict[str, str], actions: list[AgentAction], fresh: list[AgentAction],
    outcomes: list[tuple[ToolOutcome | Command, Any]],
) -> list[tuple[ToolOutcome | Command, Any]]:
    """Every action's outcome: the fresh calls' own (an ``ok`` one is remembered in
    ``results``), a reminder instead of a second run for repeated ones."""
    ran = dict(zip(map(id, fresh), outcomes, strict=True))
    out: list[tuple[ToolOutcome | Command, Any]] = []
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
