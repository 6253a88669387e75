"""The metrics handler: model calls, tokens, latency p50/p95, tool time, errors and cost.

Thread-safe and keyed by run id, so one handler can watch many concurrent runs (a batch).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.schema import ChatResult, Message

if TYPE_CHECKING:
    from agentcli.events import RunEvent


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


class MetricsHandler(BaseCallbackHandler):
    """Collects what a run cost: calls, tokens in/out, latencies, tool time, errors, USD."""

    def __init__(self, prices: Any = None) -> None:
        self._prices = prices  # a pricing.PriceTable; None loads the built-in table lazily
        self._lock = threading.Lock()
        self._llm_started: dict[str, list[float]] = {}
        self._tool_started: dict[tuple[str, str], list[float]] = {}
        self.llm_latencies: list[float] = []
        self.llm_calls = 0
        self.llm_errors = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost: float | None = 0.0
        self.unpriced_models: set[str] = set()
        self.tool_calls = 0
        self.tool_errors = 0
        self.tool_time = 0.0
        self.retries = 0
        self.fallbacks = 0
        self.cache_hits = 0
        self.runs = 0
        self.run_errors = 0

    @staticmethod
    def _rid(kw: dict[str, Any]) -> str:
        return str(kw.get("run_id") or "")

    def on_chain_start(self, inputs: dict[str, Any], **kw: Any) -> None:
        with self._lock:
            self.runs += 1

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        with self._lock:
            self.run_errors += 1

    def on_llm_start(self, messages: list[Message], **kw: Any) -> None:
        with self._lock:
            self._llm_started.setdefault(self._rid(kw), []).append(time.perf_counter())

    def _llm_elapsed(self, kw: dict[str, Any]) -> float | None:
        starts = self._llm_started.get(self._rid(kw))
        if not starts:
            return None
        started = starts.pop()
        if not starts:
            del self._llm_started[self._rid(kw)]
        return time.perf_counter() - started

    def on_llm_end(self, result: ChatResult, **kw: Any) -> None:
        from agentcli.pricing import cost_of

        model = str(kw.get("model") or result.model or "")
        cost = cost_of(model, result.usage, self._prices)
        with self._lock:
            elapsed = self._llm_elapsed(kw)
            if elapsed is not None:
                self.llm_latencies.append(elapsed)
            self.llm_calls += 1
            self.prompt_tokens += result.usage.prompt_tokens
            self.completion_tokens += result.usage.completion_tokens
            if cost is None:
                self.unpriced_models.add(model)
                self.cost = None
            elif self.cost is not None:
                self.cost += cost

    def on_llm_error(self, error: BaseException, **kw: Any) -> None:
        with self._lock:
            self._llm_elapsed(kw)
            self.llm_errors += 1

    def on_tool_start(self, tool: str, tool_input: str | dict[str, Any], **kw: Any) -> None:
        with self._lock:
            self._tool_started.setdefault((self._rid(kw), tool), []).append(time.perf_counter())

    def _tool_done(self, kw: dict[str, Any]) -> None:
        starts = self._tool_started.get((self._rid(kw), str(kw.get("tool") or "")))
        if starts:
            self.tool_time += time.perf_counter() - starts.pop()
            self.tool_calls += 1

    def on_tool_end(self, observation: str, **kw: Any) -> None:
        with self._lock:
            self._tool_done(kw)

    def on_tool_error(self, error: BaseException, **kw: Any) -> None:
        with self._lock:
            self.tool_errors += 1

    def on_event(self, event: RunEvent, **kw: Any) -> None:
        from agentcli.events import Notice

        if not isinstance(event, Notice):
            return
        with self._lock:
            if event.topic == "retry":
                self.retries += 1
            elif event.topic == "fallback":
                self.fallbacks += 1
            elif event.topic == "cache_hit":
                self.cache_hits += 1

    def summary(self) -> dict[str, Any]:
        """The numbers as a JSON-ready dict (latencies in seconds; cost None if unknown)."""
        with self._lock:
            lat = list(self.llm_latencies)
            return {
                "runs": self.runs,
                "model_calls": self.llm_calls,
                "model_errors": self.llm_errors,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "latency_p50": percentile(lat, 50),
                "latency_p95": percentile(lat, 95),
                "tool_calls": self.tool_calls,
                "tool_errors": self.tool_errors,
                "tool_time": self.tool_time,
                "retries": self.retries,
                "fallbacks": self.fallbacks,
                "cache_hits": self.cache_hits,
                "cost_usd": self.cost,
                "unpriced_models": sorted(self.unpriced_models),
            }

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for a stats table."""
        s = self.summary()

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v * 1000:,.0f} ms"

        cost = ("?" + f" (no price for {', '.join(s['unpriced_models'])})"
                if s["cost_usd"] is None else f"${s['cost_usd']:.6f}")
        return [
            ("model calls", str(s["model_calls"])),
            ("tokens in", f"{s['prompt_tokens']:,}"),
            ("tokens out", f"{s['completion_tokens']:,}"),
            ("latency p50", ms(s["latency_p50"])),
            ("latency p95", ms(s["latency_p95"])),
            ("tool calls", str(s["tool_calls"])),
            ("tool time", ms(s["tool_time"])),
            ("errors", f"model {s['model_errors']}, tools {s['tool_errors']}"),
            ("retries / fallbacks", f"{s['retries']} / {s['fallbacks']}"),
            ("cache hits", str(s["cache_hits"])),
            ("cost", cost),
        ]
