"""The LangChain side of the benchmark; runs inside the LangChain venv (see README.md).

Usage: python lc_side.py MODE BASE_URL OUT.json [N] [CONCURRENCY]
MODE: seed | overhead (fake model) | steps (over HTTP) | batch | chat
"""

from __future__ import annotations

import json
import sys
import time
import warnings

warnings.filterwarnings("ignore")
ACTION = 'Thought: again\nAction:\n```\n{"action": "echo", "action_input": "x"}\n```\n'


def _agent(llm, tools, agent_type="CHAT_ZERO_SHOT_REACT_DESCRIPTION", **kw):  # type: ignore[no-untyped-def]
    from langchain_classic.agents import AgentType, initialize_agent

    return initialize_agent(tools, llm, getattr(AgentType, agent_type),
                            handle_parsing_errors=True, **kw)


def _llm(base_url):  # type: ignore[no-untyped-def]
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="mock-model", base_url=base_url, api_key="sk-bench", temperature=0,
                      max_retries=0)


def _echo():  # type: ignore[no-untyped-def]
    from langchain_core.tools import Tool

    return Tool(name="echo", func=lambda s: s, description="Echo the input back.")


def seed(base_url: str) -> dict:
    from langchain_classic.agents import load_tools

    llm = _llm(base_url)
    out = _agent(llm, load_tools(["llm-math"], llm=llm)).invoke({"input": "What is 25% of 300?"})
    return {"answer": out["output"]}


def overhead(steps: int) -> dict:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    timings = []
    for _ in range(5):
        llm = FakeListChatModel(responses=[ACTION] * steps + ["Final Answer: done"])
        executor = _agent(llm, [_echo()], max_iterations=steps + 5)
        t0 = time.perf_counter()
        executor.invoke({"input": "loop"})
        timings.append((time.perf_counter() - t0) / (steps + 1))
    return {"per_step_s": sorted(timings)[len(timings) // 2]}


def steps(base_url: str, n: int) -> dict:
    executor = _agent(_llm(base_url), [_echo()], max_iterations=n)
    t0, cpu0 = time.perf_counter(), time.process_time()
    out = executor.invoke({"input": "loop"}, return_only_outputs=False)
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0,
            "answer": out["output"]}


def batch(base_url: str, n: int, concurrency: int) -> dict:
    executor = _agent(_llm(base_url), [])
    inputs = [{"input": f"question {i}"} for i in range(n)]
    t0, cpu0 = time.perf_counter(), time.process_time()
    outs = executor.batch(inputs, config={"max_concurrency": concurrency})
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0,
            "ok": sum(o["output"] == "ok" for o in outs)}


def chat(base_url: str, turns: int) -> dict:
    """A chat session: the conversational chat agent with a buffer memory, ``turns`` turns."""
    from langchain_classic.memory import ConversationBufferMemory

    memory = ConversationBufferMemory(memory_key="chat_history", return_messages=True)
    executor = _agent(_llm(base_url), [], "CHAT_CONVERSATIONAL_REACT_DESCRIPTION", memory=memory)
    answers = [executor.invoke({"input": f"question {i}"})["output"] for i in range(turns)]
    return {"ok": sum(a == "ok" for a in answers)}


if __name__ == "__main__":
    mode, base_url, out = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    c = int(sys.argv[5]) if len(sys.argv) > 5 else 16
    result = {"seed": lambda: seed(base_url), "overhead": lambda: overhead(n),
              "steps": lambda: steps(base_url, n), "batch": lambda: batch(base_url, n, c),
              "chat": lambda: chat(base_url, n)}[mode]()
    with open(out, "w") as fh:
        json.dump(result, fh)
