"""A handler that times each model call and tool call of a run, for the run log."""

from __future__ import annotations

import time
from typing import Any

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.schema import ChatResult, Message


class TimingsHandler(BaseCallbackHandler):
    """Collects ``{"kind": "model"|"tool", "seconds", ...}`` entries in the order they ended."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self._llm_started: list[float] = []
        self._tool_started: dict[str, list[float]] = {}
        self._tool_errors: dict[str, str] = {}

    def on_llm_start(self, messages: list[Message], **kw: Any) -> None:
        self._llm_started.append(time.perf_counter())

    def _llm_done(self, entry: dict[str, Any]) -> None:
        if self._llm_started:
            entry["seconds"] = round(time.perf_counter() - self._llm_started.pop(), 4)
            self.entries.append(entry)

    def on_llm_end(self, result: ChatResult, **kw: Any) -> None:
        self._llm_done({"kind": "model", "prompt_tokens": result.usage.prompt_tokens,
                        "completion_tokens": result.usage.completion_tokens})

    def on_llm_error(self, error: BaseException, **kw: Any) -> None:
        self._llm_done({"kind": "model", "error": type(error).__name__})

    def on_tool_start(self, tool: str, tool_input: str | dict[str, Any], **kw: Any) -> None:
        self._tool_started.setdefault(tool, []).append(time.perf_counter())

    def on_tool_end(self, observation: str, **kw: Any) -> None:
        name = str(kw.get("tool") or "")
        starts = self._tool_started.get(name)
        if not starts:  # denied or unknown tools never started: nothing to time
            return
        entry = {"kind": "tool", "tool": name,
                 "seconds": round(time.perf_counter() - starts.pop(0), 4)}
        if name in self._tool_errors:  # an error is followed by the end of the same call
            entry["error"] = self._tool_errors.pop(name)
        self.entries.append(entry)

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        self._tool_errors[str(kw.get("tool") or "")] = type(error).__name__

    def summary(self) -> dict[str, Any]:
        """Totals and the entries, JSON-ready."""
        model = [e["seconds"] for e in self.entries if e["kind"] == "model"]
        tools = [e["seconds"] for e in self.entries if e["kind"] == "tool"]
        return {"model_seconds": round(sum(model), 4), "model_calls": len(model),
                "tool_seconds": round(sum(tools), 4), "tool_calls": len(tools),
                "calls": self.entries}
