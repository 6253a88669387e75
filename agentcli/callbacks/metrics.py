"""The metrics handler: model calls, tokens, latency p50/p95/p99, tool time, error rates, cost.

Thread-safe and keyed by run id, so one handler can watch many concurrent runs (a batch).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentcli import events as ev
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.pricing import PriceTable, cost_of

if TYPE_CHECKING:
    from agentcli.events import ModelEnd, RunEvent


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _rate(errors: int, total: int) -> float | None:
    """The share of ``total`` that failed; None when nothing ran."""
    return errors / total if total else None


# The events that add one to a count, by kind (notices by topic), and the count's summary key
_COUNTED = {"start": "runs", "error": "run_errors", "model_error": "model_errors",
            "tool_error": "tool_errors"}
_NOTICES = {"retry": "retries", "fallback": "fallbacks", "cache_hit": "cache_hits"}


class MetricsHandler(BaseCallbackHandler):
    """Collects what a run cost: calls, tokens in/out, latencies, tool time, errors, USD."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self._prices = prices  # None loads the built-in table lazily
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Start counting afresh (LangChain handlers' ``reset_metrics``)."""
        self._tool_started: dict[tuple[str, str], list[float]] = {}
        self.counts: Counter[str] = Counter()  # by summary key: runs, model_calls, retries...
        self.llm_latencies: list[float] = []
        self.cost: float | None = 0.0
        self.unpriced_models: set[str] = set()
        self.tool_time = 0.0

    reset_metrics = reset

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Count what each event says (the one observer API)."""
        rid = str(kw.get("run_id") or "")
        with self._lock:
            key = _NOTICES.get(event.topic) if isinstance(event, ev.Notice) else _COUNTED.get(
                event.kind)
            if key is not None:
                self.counts[key] += 1
            elif isinstance(event, ev.ModelEnd):
                self._model_end(event)
            elif isinstance(event, ev.ToolStart):
                self._tool_started.setdefault((rid, event.tool), []).append(time.perf_counter())
            elif isinstance(event, ev.Observation) and (
                    starts := self._tool_started.get((rid, event.step.action.tool))):
                self.tool_time += time.perf_counter() - starts.pop()
                self.counts["tool_calls"] += 1

    def _model_end(self, event: ModelEnd) -> None:
        result = event.result
        model = str(event.model or result.model or "")
        cost = event.cost if event.cost is not None else cost_of(model, result.usage,
                                                                  self._prices)
        self.llm_latencies.append(event.elapsed)
        self.counts.update(model_calls=1, prompt_tokens=result.usage.prompt_tokens,
                           completion_tokens=result.usage.completion_tokens)
        if cost is None:
            self.unpriced_models.add(model)
            self.cost = None
        elif self.cost is not None:
            self.cost += cost

    def summary(self) -> dict[str, Any]:
        """The numbers as a JSON-ready dict (latencies in seconds; cost None if unknown)."""
        with self._lock:
            lat, c = list(self.llm_latencies), self.counts
            return {
                "runs": c["runs"],
                "model_calls": c["model_calls"],
                "model_errors": c["model_errors"],
                "prompt_tokens": c["prompt_tokens"],
                "completion_tokens": c["completion_tokens"],
                "latency_p50": percentile(lat, 50),
                "latency_p95": percentile(lat, 95),
                "latency_p99": percentile(lat, 99),
                "model_error_rate": _rate(c["model_errors"],
                                          c["model_calls"] + c["model_errors"]),
                "tool_calls": c["tool_calls"],
                "tool_errors": c["tool_errors"],
                "tool_error_rate": _rate(c["tool_errors"], c["tool_calls"]),
                "run_errors": c["run_errors"],
                "tool_time": self.tool_time,
                "retries": c["retries"],
                "fallbacks": c["fallbacks"],
                "cache_hits": c["cache_hits"],
                "cost_usd": self.cost,
                "unpriced_models": sorted(self.unpriced_models),
            }

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for a stats table."""
        s = self.summary()

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v * 1000:,.0f} ms"

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{v:.0%}"

        cost = ("?" + f" (no price for {', '.join(s['unpriced_models'])})"
                if s["cost_usd"] is None else f"${s['cost_usd']:.6f}")
        return [
            ("model calls", str(s["model_calls"])),
            ("tokens in", f"{s['prompt_tokens']:,}"),
            ("tokens out", f"{s['completion_tokens']:,}"),
            ("latency p50", ms(s["latency_p50"])),
            ("latency p95 / p99", f"{ms(s['latency_p95'])} / {ms(s['latency_p99'])}"),
            ("tool calls", str(s["tool_calls"])),
            ("tool time", ms(s["tool_time"])),
            ("errors", f"model {s['model_errors']} ({pct(s['model_error_rate'])}), "
                       f"tools {s['tool_errors']} ({pct(s['tool_error_rate'])})"),
            ("retries / fallbacks", f"{s['retries']} / {s['fallbacks']}"),
            ("cache hits", str(s["cache_hits"])),
            ("cost", cost),
        ]
