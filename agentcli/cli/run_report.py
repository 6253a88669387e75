"""One logged run as Markdown: what ``agent logs show`` prints (rendered in a terminal)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from agentcli.cli.render import input_text, thought_of
from agentcli.textsafe import safe_text as neutral


def _cost(row: dict[str, Any]) -> str:
    cost = row["meta"].get("cost")
    if cost is None and row.get("model"):
        from agentcli.pricing import cost_of
        from agentcli.schema import Usage

        try:
            cost = cost_of(row["model"], Usage(row["prompt_tokens"] or 0,
                                               row["completion_tokens"] or 0))
        except Exception:  # a broken price table must not hide the run
            cost = None
    return "unknown (no price for this model)" if cost is None else f"${cost:.6f}"


def _timings(meta: dict[str, Any], elapsed: float) -> str:
    timing = meta.get("timings")
    if not timing:
        return f"{elapsed:.2f} s"
    return (f"{elapsed:.2f} s (model {timing['model_seconds']:.2f} s in "
            f"{timing['model_calls']} call(s), tools {timing['tool_seconds']:.2f} s in "
            f"{timing['tool_calls']} call(s))")


def _fence(text: str) -> list[str]:
    """A fenced block long enough that backticks inside cannot close it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + "text", neutral(text), ticks]


def _step_lines(i: int, step: dict[str, Any], tool_times: list[dict[str, Any]]) -> list[str]:
    lines = [f"### Step {i}: {neutral(step['tool'])}", ""]
    thought = thought_of(step.get("log") or "")
    if thought:
        lines += [f"*Thought:* {neutral(thought)}", ""]
    lines += ["Input:", "", *_fence(input_text(step["tool_input"])), "", "Observation:", "",
              *_fence(step["observation"])]
    timed = next((t for t in tool_times if t["tool"] == step["tool"]), None)
    if timed is not None:
        tool_times.remove(timed)
        lines += ["", f"*{timed['seconds']:.3f} s*"]
    return [*lines, ""]


def run_markdown(row: dict[str, Any]) -> str:
    """The run's question, steps and answer, with model, options, tokens, cost and timings."""
    meta = row["meta"]
    prompt, completion = row["prompt_tokens"] or 0, row["completion_tokens"] or 0
    from agentcli.log_schema import epoch

    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch(row["started"])))
    options = meta.get("options") or {}
    facts = [
        ("when", started),
        ("model", row["model"] or "-"),
        ("agent type", row["agent"] or "-"),
        ("session", row["session"] or "-"),
        ("options", ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "-"),
        ("stop reason", row["stop_reason"] or "-"),
        ("tokens", f"{prompt} prompt + {completion} completion = {prompt + completion}"),
        ("cost", _cost(row)),
        ("time", _timings(meta, row["elapsed"] or 0.0)),
    ]
    lines = [f"# Run {row['id']}", ""]
    lines += [f"- **{k}:** {neutral(str(v))}" for k, v in facts]
    lines += ["", "## Question", "", *_fence(row["question"]), ""]
    if row.get("unreadable"):
        lines += [f"(unreadable in the log: {', '.join(row['unreadable'])})", ""]
    if row["steps"]:
        lines += ["## Steps", ""]
        tool_times = [t for t in (meta.get("timings") or {}).get("calls", [])
                      if t["kind"] == "tool"]
        for i, step in enumerate(row["steps"], 1):
            lines += _step_lines(i, step, tool_times)
    lines += ["## Answer", "", neutral(row["answer"]), ""]
    return "\n".join(lines)
