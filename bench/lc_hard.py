"""LangChain classic on the same server and questions as ``hard_bench.py``, with its defaults.

Runs inside a LangChain virtual environment (``pip install langchain langchain-classic
langchain-community langchain-openai numexpr``); agentcli is not imported.
``initialize_agent(load_tools(["llm-math"]), ChatOpenAI(...), AgentType(T))`` with
LangChain's defaults (15 iterations) except what agentcli's defaults also set: temperature 0,
replies capped at 1024 tokens (agentcli's ``local_max_tokens``), parse errors sent back to
the model (``handle_parsing_errors=True``, agentcli's default), and the same per-question
time cap as the agentcli side. ``hard_bench.py run --lc PYTHON`` calls it.

    LC/bin/python bench/lc_hard.py BASE_URL ALIAS QUESTIONS.json OUT.jsonl TYPES TIMEOUT
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_questions import FILES  # noqa: E402
from hard_questions import classify  # noqa: E402

STOPPED = "Agent stopped due to iteration limit or time limit."


def build(agent_type: str, base_url: str, alias: str, timeout: float,
          root: str | None = None) -> Any:
    from langchain_classic.agents import (
        AgentExecutor,
        AgentType,
        create_tool_calling_agent,
        initialize_agent,
        load_tools,
    )
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=alias, base_url=base_url, api_key="none", temperature=0,
                     max_tokens=1024, timeout=timeout, max_retries=0)
    tools = load_tools(["llm-math"], llm=llm)
    if root:  # issue 31's two-tool questions: the question's files, read with read_file
        from langchain_community.tools import ReadFileTool

        tools.append(ReadFileTool(root_dir=root))
    limits: dict[str, Any] = {"handle_parsing_errors": True, "max_execution_time": timeout,
                              "return_intermediate_steps": True}
    if agent_type == "tool-calling":
        from langchain_core.prompts import ChatPromptTemplate

        prompt = ChatPromptTemplate.from_messages([
            ("system", "You are a helpful assistant."), ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}")])
        return AgentExecutor(agent=create_tool_calling_agent(llm, tools, prompt), tools=tools,
                             **limits)
    kwargs: dict[str, Any] = {}
    if "conversational" in agent_type:
        from langchain_classic.memory import ConversationBufferMemory

        kwargs["memory"] = ConversationBufferMemory(
            memory_key="chat_history", return_messages=agent_type.startswith("chat"),
            output_key="output")
    return initialize_agent(tools, llm, AgentType(agent_type), **limits, **kwargs)


def interleaved(groups: dict[str, list[list[Any]]]) -> list[tuple[str, str, float]]:
    """Questions taken from each group in turn, so a run cut short covers every group."""
    longest = max((len(qs) for qs in groups.values()), default=0)
    return [(group, *qs[i]) for i in range(longest) for group, qs in groups.items()
            if i < len(qs)]


def main() -> None:
    base_url, alias, questions_path, out = sys.argv[1:5]
    types, timeout = sys.argv[5].split(","), float(sys.argv[6])
    groups = json.loads(Path(questions_path).read_text())
    for agent_type in types:
        ok = done = 0
        started = time.monotonic()
        for group, question, expected in interleaved(groups):
            t0 = time.monotonic()
            steps: list[dict[str, Any]] = []
            root = None
            if question in FILES:
                root = tempfile.mkdtemp(prefix="lc-files-")
                for name, text in FILES[question].items():
                    Path(root, name).write_text(text, encoding="utf-8")
            try:
                result = build(agent_type, base_url, alias, timeout, root).invoke(
                    {"input": question})
                answer = str(result["output"])
                steps = [{"observation": str(obs)}
                         for _, obs in result.get("intermediate_steps", [])]
                error = None
            except Exception:
                answer, error = "", traceback.format_exc(limit=2)
            stopped = answer.strip() == STOPPED
            row: dict[str, Any] = {
                "side": "langchain", "alias": alias, "agent": agent_type, "group": group,
                "question": question, "expected": expected, "answer": "" if stopped else answer,
                "stop": "limit" if stopped else ("traceback" if error else "finished"),
                "lc_traceback": error, "timeout": bool(error and "Timeout" in error),
                "s": round(time.monotonic() - t0, 1)}
            classify(row, expected, steps)
            ok += row["correct"]
            done += 1
            with open(out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
        print(f"{alias} langchain {agent_type:35} {ok:2}/{done}  "
              f"{time.monotonic() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main()
