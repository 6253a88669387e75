"""A plain-text trace on stderr for library users (``initialize_agent(..., verbose=True)``)."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any

from agentcli.callbacks.base import BaseCallbackHandler

if TYPE_CHECKING:
    from agentcli.events import RunEvent


class StdOutCallbackHandler(BaseCallbackHandler):
    """Prints each action, observation and the answer as plain lines (no colour, no Rich)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream

    def _print(self, text: str) -> None:
        from agentcli.textsafe import safe_text

        print(safe_text(text), file=self.stream or sys.stderr, flush=True)

    def on_event(self, event: RunEvent, **kw: Any) -> None:
        """Each action, observation and the answer, as they happen."""
        from agentcli import events as ev

        if isinstance(event, ev.ActionEvent):
            self._print(event.action.log.strip() or f"Action: {event.action.tool}")
        elif isinstance(event, ev.Observation):
            self._print(f"Observation: {event.step.observation}")
        elif isinstance(event, ev.Notice) and event.topic == "tool_text":
            self._print(event.text)
        elif isinstance(event, ev.Finish):
            self._print(f"Final Answer: {event.output}")
