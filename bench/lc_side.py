"""The LangChain side of the benchmark; runs inside the LangChain venv (see README.md).

Usage: python lc_side.py MODE BASE_URL OUT.json [N]   (MODE: seed | overhead | batch)
"""

from __future__ import annotations

import json
import sys
import time
import warnings

warnings.filterwarnings("ignore")


def _agent(llm, tools, **kw):  # type: ignore[no-untyped-def]
    from langchain_classic.agents import AgentType, initialize_agent

    return initialize_agent(tools, llm, AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION,
                            handle_parsing_errors=True, **kw)


def seed(base_url: str) -> dict:
    from langchain_classic.agents import load_tools
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="mock-model", base_url=base_url, api_key="sk-bench", temperature=0)
    executor = _agent(llm, load_tools(["llm-math"], llm=llm))
    out = executor.invoke({"input": "What is 25% of 300?"})
    return {"answer": out["output"]}


def overhead(steps: int) -> dict:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.tools import Tool

    action = ('Thought: again\nAction:\n```\n{"action": "echo", "action_input": "x"}\n```\n')
    tools = [Tool(name="echo", func=lambda s: s, description="Echo the input back.")]
    timings = []
    for _ in range(5):
        llm = FakeListChatModel(responses=[action] * steps + ["Final Answer: done"])
        executor = _agent(llm, tools, max_iterations=steps + 5)
        t0 = time.perf_counter()
        executor.invoke({"input": "loop"})
        timings.append((time.perf_counter() - t0) / (steps + 1))
    return {"per_step_s": sorted(timings)[len(timings) // 2]}


def batch(base_url: str, n: int, concurrency: int) -> dict:
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="mock-model", base_url=base_url, api_key="sk-bench", temperature=0,
                     max_retries=0)
    executor = _agent(llm, [])
    inputs = [{"input": f"question {i}"} for i in range(n)]
    t0 = time.perf_counter()
    outs = executor.batch(inputs, config={"max_concurrency": concurrency})
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "ok": sum(o["output"] == "ok" for o in outs)}


if __name__ == "__main__":
    mode, base_url, out = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    result = {"seed": lambda: seed(base_url), "overhead": lambda: overhead(n),
              "batch": lambda: batch(base_url, n, 16)}[mode]()
    with open(out, "w") as fh:
        json.dump(result, fh)
