"""A handler that times each model call and tool call of a run, for the run log (`agent run`,
chat turns and served runs alike: `meta["timings"]` gives each logged step its status and
duration)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agentcli import events as ev
from agentcli.callbacks.base import BaseCallbackHandler

if TYPE_CHECKING:
    from agentcli.events import RunEvent


class TimingsHandler(BaseCallbackHandler):
    """Collects ``{"kind": "model"|"tool", "seconds", ...}`` entries in the order they ended."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self._llm_started: list[float] = []
        self._tool_started: dict[str, list[float]] = {}
        self._tool_errors: dict[str, str] = {}
        self.steps: list[dict[str, Any]] = []  # per Observation, in step order: the run_steps

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Time model calls and tool calls from the run's events."""
        if isinstance(event, ev.ModelStart):
            self._llm_started.append(time.perf_counter())
        elif isinstance(event, ev.ModelEnd):
            usage = event.result.usage
            self._llm_done({"kind": "model", "prompt_tokens": usage.prompt_tokens,
                            "completion_tokens": usage.completion_tokens})
        elif isinstance(event, ev.ModelError):
            self._llm_done({"kind": "model", "error": type(event.error).__name__})
        elif isinstance(event, ev.ToolStart):
            self._tool_started.setdefault(event.tool, []).append(time.perf_counter())
        elif isinstance(event, ev.ToolError):
            self._tool_errors[event.tool] = type(event.error).__name__
        elif isinstance(event, ev.Observation):
            seconds = self._tool_done(event.step.action.tool)
            self.steps.append({"tool": event.step.action.tool, "status": event.status,
                               "seconds": seconds})

    def _llm_done(self, entry: dict[str, Any]) -> None:
        if self._llm_started:
            entry["seconds"] = round(time.perf_counter() - self._llm_started.pop(), 4)
            self.entries.append(entry)

    def _tool_done(self, name: str) -> float | None:
        starts = self._tool_started.get(name)
        if not starts:  # denied or unknown tools never started: nothing to time
            return None
        seconds = round(time.perf_counter() - starts.pop(0), 4)
        entry: dict[str, Any] = {"kind": "tool", "tool": name, "seconds": seconds}
        if name in self._tool_errors:  # an error is followed by the end of the same call
            entry["error"] = self._tool_errors.pop(name)
        self.entries.append(entry)
        return seconds

    def summary(self) -> dict[str, Any]:
        """Totals and the entries, JSON-ready."""
        model = [e["seconds"] for e in self.entries if e["kind"] == "model"]
        tools = [e["seconds"] for e in self.entries if e["kind"] == "tool"]
        return {"model_seconds": round(sum(model), 4), "model_calls": len(model),
                "tool_seconds": round(sum(tools), 4), "tool_calls": len(tools),
                "calls": self.entries, "steps": self.steps}
