"""Each chain, model call and tool call of a run gets its own id, with its parent's.

The run is the chain (its id is the manager's ``run_id``); the agent's model calls and its
tool calls are its children; a model call made inside a tool (an LLM-backed tool) is that
tool call's child. Handlers receive them as ``call_run_id``/``call_parent_run_id`` beside the
run's own ``run_id`` (LangChain-style ``on_*`` hooks receive them as ``run_id`` and
``parent_run_id``, UUIDs, as LangChain's callback managers pass them).
"""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING

from agentcli import events as ev

if TYPE_CHECKING:
    from agentcli.events import RunEvent


# (tuples, built once: ``A | B`` in the check would build a union at every event)
_MODEL_EVENTS = (ev.ModelStart, ev.ModelEnd, ev.ModelError, ev.ModelToken)
_TOOL_EVENTS = (ev.ToolStart, ev.ToolError)


class CallIds:
    """Names the call each event of one run belongs to: ``(its id, its parent's id)``."""

    def __init__(self, run_id: str, parent_run_id: str | None) -> None:
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        self._tools: dict[str, str] = {}  # open tool calls: call id (or tool name) -> id
        self._models: dict[str | None, list[str]] = {}  # open model calls, by tool key
        self._lock = threading.Lock()

    def of(self, event: RunEvent) -> tuple[str, str | None]:
        """The id of the call ``event`` belongs to and that call's parent's id."""
        with self._lock:
            if isinstance(event, _MODEL_EVENTS):
                parent = getattr(event, "parent", None)
                under = self._tools.get(parent, self.run_id) if parent else self.run_id
                stack = self._models.setdefault(parent, [])
                if isinstance(event, ev.ModelStart):
                    stack.append(uuid.uuid4().hex)
                    return stack[-1], under
                if not stack:
                    return self.run_id, self.parent_run_id
                own = stack[-1] if isinstance(event, ev.ModelToken) else stack.pop()
                return own, under
            if isinstance(event, _TOOL_EVENTS):
                key = event.call_id or event.tool
                if isinstance(event, ev.ToolStart):
                    self._tools[key] = uuid.uuid4().hex
                return self._tools.setdefault(key, uuid.uuid4().hex), self.run_id
            if isinstance(event, ev.Observation):  # the tool call's end
                action = event.step.action
                own = self._tools.pop(action.tool_call_id or action.tool, "")
                return own or uuid.uuid4().hex, self.run_id  # never started: denied, unknown
        return self.run_id, self.parent_run_id


def as_uuid(value: object) -> object:
    """An id as LangChain passes it (a UUID; an id that is not one, or None, stays as given)."""
    if not isinstance(value, str):
        return value
    try:
        return uuid.UUID(value)
    except ValueError:
        return value
