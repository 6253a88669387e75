"""The run's one history, ``messages``, and the views the executor takes of it.

A step (an action and its observation) is the message that closes it: the tool result, or the
correction sent after a reply that could not be parsed. ``intermediate_steps`` is read off
those messages (:class:`StepIndex`, incrementally); trimming drops a step's whole turn (the
assistant message that asked and the messages that answered), so a chat-native agent and a
text agent see the same shortened work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentcli.schema import AgentStep, Message


class StepIndex:
    """The steps (and the summary, if any) read off a run's messages, incrementally: a run
    that only appends costs one look per new message, not a rescan per step."""

    def __init__(self) -> None:
        self._seen = 0
        self._last: Message | None = None
        self.steps: list[AgentStep] = []
        self.summary: Message | None = None

    def update(self, messages: Sequence[Message]) -> StepIndex:
        """Catch up with ``messages``; a rewritten history (a summary) is read again."""
        n = self._seen
        if n > len(messages) or (n and messages[n - 1] is not self._last):
            self.__init__()  # type: ignore[misc]
            n = 0
        for m in messages[n:]:
            if m.step is not None:
                self.steps.append(m.step)
            if m.summary and self.summary is None:
                self.summary = m
        self._seen = len(messages)
        self._last = messages[-1] if messages else None
        return self


def without_steps(messages: Sequence[Message], kept: set[int]) -> list[Message]:
    """``messages`` less the turns whose steps are all dropped (``kept``: ids of the steps
    that stay). A turn is an assistant message up to the next; the messages before the first
    (system, history, the question) close no step and always stay."""
    turns: list[list[Message]] = [[]]
    for m in messages:
        if m.role == "assistant":
            turns.append([])
        turns[-1].append(m)
    return [m for turn in turns if _stays(turn, kept) for m in turn]


def _stays(turn: list[Message], kept: set[int]) -> bool:
    steps = {id(m.step) for m in turn if m.step is not None}
    return not steps or not steps.isdisjoint(kept)


def closing(messages: object, step: AgentStep) -> object:
    """A Command's own messages with ``step`` on the tool result that answers its call."""
    items = messages if isinstance(messages, list) else [messages]
    done = False
    out = []
    for m in reversed(items):
        if not done and isinstance(m, Message) and m.role == "tool" and (
                step.action.tool_call_id in (None, m.tool_call_id)):
            m = replace(m, step=step)
            done = True
        out.append(m)
    out.reverse()
    return out if isinstance(messages, list) else out[0]
