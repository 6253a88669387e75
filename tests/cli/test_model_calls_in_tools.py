"""A model request made inside a tool (the Calculator asking the model for an expression) is
part of the run: it is in the trace under its tool call, in --stats, and counts towards
--max-cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CALC = '{"action": "Calculator", "action_input": "300 apples and 25 pears"}'
EXPRESSION = "```text\n300 + 25\n```"
FINAL = '{"action": "Final Answer", "action_input": "325"}'


def script(server: Any) -> None:
    for reply in (CALC, EXPRESSION, FINAL):
        server.add_reply(reply)


def run(server: Any, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/gpt-4o-mini", *flags,
         "How many fruits are 300 apples and 25 pears?"], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL)


def model_ends(trace: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    return [d for d in lines if d["event"] == "llm_end"]


def test_trace_and_stats_show_the_tools_model_call(mock_server: Any, tmp_path: Path) -> None:
    script(mock_server)
    trace = tmp_path / "t.jsonl"
    proc = run(mock_server, tmp_path, "--stats", "--trace", str(trace), "--max-cost", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "325"
    ends = model_ends(trace)
    tool = next(json.loads(line) for line in trace.read_text().splitlines()
                if json.loads(line)["event"] == "tool_start")
    run_id = ends[0]["run_id"]  # each call has its own id; the tool's model call is its child
    assert [d["call_parent_run_id"] for d in ends] == [run_id, tool["call_run_id"], run_id]
    assert len({d["call_run_id"] for d in ends}) == 3
    assert all(d["cost"] > 0 for d in ends)
    stats = proc.stderr
    row = next(line for line in stats.splitlines() if "model calls" in line)
    assert row.replace("│", " ").split()[-1] == "3"
    assert "Evaluating: 300 + 25" in stats  # the tool said what it evaluates (on_text)


def test_max_cost_counts_the_tools_model_call(mock_server: Any, tmp_path: Path) -> None:
    script(mock_server)
    trace = tmp_path / "t.jsonl"
    assert run(mock_server, tmp_path, "--trace", str(trace), "--max-cost", "1").returncode == 0
    agent_cost, tool_cost, _ = (d["cost"] for d in model_ends(trace))
    # A budget the agent's first request stays under, but not once the tool's is added.
    script(mock_server)
    budget = agent_cost + tool_cost / 2
    proc = run(mock_server, tmp_path, "--max-cost", f"{budget:.10f}", "--json")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["stop_reason"] == "budget" and out["usage"]["model_calls"] == 2
