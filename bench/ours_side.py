"""The agentcli side of the in-process benchmarks (overhead per step, batch throughput).

Usage: python ours_side.py MODE BASE_URL OUT.json [N]   (MODE: overhead | batch)
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path


def overhead(steps: int) -> dict:
    from agentcli.agents import initialize_agent
    from agentcli.models.fake import FakeChatModel
    from agentcli.tools import tool

    @tool
    def echo(text: str) -> str:
        """Echo the input back."""
        return text

    action = ('Thought: again\nAction:\n```\n{"action": "echo", "action_input": "x"}\n```\n')
    timings = []
    for _ in range(5):
        llm = FakeChatModel([action] * steps + ["Final Answer: done"])
        executor = initialize_agent([echo], llm, max_iterations=steps + 5,
                                    handle_parsing_errors=True)
        t0 = time.perf_counter()
        executor.invoke("loop")
        timings.append((time.perf_counter() - t0) / (steps + 1))
    return {"per_step_s": sorted(timings)[len(timings) // 2]}


def batch(base_url: str, n: int, concurrency: int) -> dict:
    from agentcli.agents import initialize_agent
    from agentcli.batch import BatchItem, run_batch
    from agentcli.models.presets import create_model

    llm = create_model("openai/mock-model", env={"OPENAI_BASE_URL": base_url,
                                                 "OPENAI_API_KEY": "sk-bench"}, max_retries=0)
    executor = initialize_agent([], llm, handle_parsing_errors=True)
    items = [BatchItem(str(i), f"question {i}") for i in range(n)]
    out = Path(tempfile.mkdtemp()) / "out.jsonl"
    t0 = time.perf_counter()
    summary = asyncio.run(run_batch(executor, items, out, concurrency=concurrency))
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "ok": summary.results}


if __name__ == "__main__":
    mode, base_url, out = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    result = {"overhead": lambda: overhead(n), "batch": lambda: batch(base_url, n, 16)}[mode]()
    with open(out, "w") as fh:
        json.dump(result, fh)
