"""A plain-text trace on stderr for library users (``initialize_agent(..., verbose=True)``)."""

from __future__ import annotations

import sys
from typing import IO, Any

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.schema import AgentAction, AgentFinish


class StdOutCallbackHandler(BaseCallbackHandler):
    """Prints each action, observation and the answer as plain lines (no colour, no Rich)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream

    def _print(self, text: str) -> None:
        from agentcli.textsafe import safe_text

        print(safe_text(text), file=self.stream or sys.stderr, flush=True)

    def on_agent_action(self, action: AgentAction, **kw: Any) -> None:
        self._print(action.log.strip() or f"Action: {action.tool}")

    def on_tool_end(self, observation: str, **kw: Any) -> None:
        self._print(f"Observation: {observation}")

    def on_agent_finish(self, finish: AgentFinish, **kw: Any) -> None:
        self._print(f"Final Answer: {finish.output}")
