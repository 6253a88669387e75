"""The agentcli side of the in-process benchmarks; runs in the project's venv.

Usage: python ours_side.py MODE BASE_URL OUT.json [N] [CONCURRENCY]
MODE: overhead | fakesteps (fake model) | steps (over HTTP) | batch | scratchpad | logging
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ACTION = 'Thought: again\nAction:\n```\n{"action": "echo", "action_input": "x"}\n```\n'


def _echo() -> Any:
    from agentcli.tools import tool

    @tool
    def echo(text: str) -> str:
        """Echo the input back."""
        return text

    return echo


def _model(base_url: str) -> Any:
    from agentcli.models.presets import create_model

    # local=False: the bench server stands in for a remote API, like the floor and LangChain
    # sides. A loopback URL would otherwise get the single-slot local-server treatment
    # (streamed so that a stop string can end the request early), which they do not pay for.
    return create_model("openai/mock-model", env={"OPENAI_BASE_URL": base_url,
                                                  "OPENAI_API_KEY": "sk-bench"}, max_retries=0,
                        local=False)


def overhead(steps: int) -> dict[str, Any]:
    """Per step with a zero-latency fake model: median of 5 runs."""
    from agentcli.create import initialize_agent
    from agentcli.models.fake import FakeChatModel

    timings = []
    for _ in range(5):
        llm = FakeChatModel([ACTION] * steps + ["Final Answer: done"])
        executor = initialize_agent([_echo()], llm, max_iterations=steps + 5,
                                    handle_parsing_errors=True, stall_limit=None)
        t0 = time.perf_counter()
        executor.invoke("loop")
        timings.append((time.perf_counter() - t0) / (steps + 1))
    return {"per_step_s": statistics.median(timings)}


def steps(base_url: str, n: int) -> dict[str, Any]:
    """One run of ``n`` steps over HTTP (the server always answers the echo action)."""
    from agentcli.create import initialize_agent

    executor = initialize_agent([_echo()], _model(base_url), max_iterations=n,
                                handle_parsing_errors=True, stall_limit=None)  # same reply
    cpu0, t0 = time.process_time(), time.perf_counter()
    result = executor.invoke("loop")
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"wall_s": wall, "cpu_s": cpu, "stop_reason": result.stop_reason}


def batch(base_url: str, n: int, concurrency: int) -> dict[str, Any]:
    """``n`` one-call questions through ``run_batch`` at ``concurrency``."""
    from agentcli.batch import BatchItem, run_batch
    from agentcli.create import initialize_agent

    executor = initialize_agent([], _model(base_url), handle_parsing_errors=True)
    items = [BatchItem(str(i), f"question {i}") for i in range(n)]
    out = Path(tempfile.mkdtemp()) / "out.jsonl"
    cpu0, t0 = time.process_time(), time.perf_counter()
    summary = asyncio.run(run_batch(executor, items, out, concurrency=concurrency))
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0,
            "ok": summary.results}


def fake_steps(n: int) -> dict[str, Any]:
    """One ``n``-step run on a fake model: the time between model calls, first vs last 10."""
    from agentcli.create import initialize_agent
    from agentcli.models.fake import FakeChatModel

    stamps: list[float] = []

    def reply(messages: Any) -> str:
        stamps.append(time.perf_counter())
        return ACTION

    executor = initialize_agent([_echo()], FakeChatModel(reply), max_iterations=n,
                                handle_parsing_errors=True, stall_limit=None)  # one reply
    executor.invoke("loop")
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    return {"first_s": statistics.median(gaps[:10]), "last_s": statistics.median(gaps[-10:])}


def scratchpad(n: int) -> dict[str, Any]:
    """Cost of ``scratchpad()`` at step 1-10 and at the last 10 steps of an ``n``-step run."""
    from agentcli.agents.base import scratchpad as pad
    from agentcli.schema import AgentAction, AgentStep

    history: list[AgentStep] = []
    costs = []
    for _ in range(n):
        history.append(AgentStep(AgentAction("echo", "x", ACTION), "x"))
        t0 = time.perf_counter()
        pad(history)
        costs.append(time.perf_counter() - t0)
    return {"first_s": statistics.median(costs[:10]), "last_s": statistics.median(costs[-10:])}


def logging_cost(n: int) -> dict[str, Any]:
    """Warm ``agent run`` logging: open the store, log one run, close; median of ``n``."""
    from agentcli.outcome import run_record
    from agentcli.schema import AgentAction, AgentStep, RunResult, Usage
    from agentcli.store import open_store

    path = Path(tempfile.mkdtemp()) / "agent.db"
    step = AgentStep(AgentAction("Calculator", "300*0.25", ACTION), "Answer: 75.0")
    result = RunResult("75", (step,), "finished", Usage(100, 20), 2, 0.3)
    open_store(str(path)).close()  # the file exists: this is the warm case
    costs = []
    for _ in range(n):
        t0 = time.perf_counter()
        store = open_store(str(path))
        store.log_run(run_record("What is 25% of 300?", result, model="openai/mock-model"))
        store.close()
        costs.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(costs), "min_s": min(costs)}


if __name__ == "__main__":
    mode, base_url, out = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    c = int(sys.argv[5]) if len(sys.argv) > 5 else 16
    os.environ.setdefault("NO_COLOR", "1")
    result = {"overhead": lambda: overhead(n), "steps": lambda: steps(base_url, n),
              "batch": lambda: batch(base_url, n, c), "scratchpad": lambda: scratchpad(n),
              "fakesteps": lambda: fake_steps(n),
              "logging": lambda: logging_cost(n)}[mode]()
    Path(out).write_text(json.dumps(result))
