"""LangChain on the same real local server and the same 20 questions as ``local_model.py``.

Runs inside a LangChain venv (``pip install langchain langchain-community langchain-openai
numexpr mypy_extensions``); agentcli is not imported. QUESTIONS.json holds [question, expected]
pairs (dump ``local_model.QUESTIONS``).

    LC/bin/python bench/lc_local.py BASE_URL QUESTIONS.json OUT.jsonl [AGENT_TYPES]
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import warnings

warnings.filterwarnings("ignore")

TYPES = ["zero-shot-react-description", "chat-zero-shot-react-description",
         "structured-chat-zero-shot-react-description", "conversational-react-description",
         "chat-conversational-react-description", "tool-calling"]


def build(agent_type: str, base_url: str):  # type: ignore[no-untyped-def]
    from langchain_classic.agents import (
        AgentExecutor,
        AgentType,
        create_tool_calling_agent,
        initialize_agent,
        load_tools,
    )
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="smollm2", base_url=base_url, api_key="none", temperature=0,
                     max_tokens=100, timeout=60, max_retries=0)
    tools = load_tools(["llm-math"], llm=llm)
    limits = {"max_iterations": 3, "max_execution_time": 45, "handle_parsing_errors": True}
    if agent_type == "tool-calling":
        from langchain_core.prompts import ChatPromptTemplate

        prompt = ChatPromptTemplate.from_messages([
            ("system", "You are a helpful assistant."), ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}")])
        return AgentExecutor(agent=create_tool_calling_agent(llm, tools, prompt), tools=tools,
                             **limits)
    kwargs: dict = {}
    if "conversational" in agent_type:
        from langchain_classic.memory import ConversationBufferMemory

        kwargs["memory"] = ConversationBufferMemory(
            memory_key="chat_history", return_messages=agent_type.startswith("chat"))
    return initialize_agent(tools, llm, AgentType(agent_type), **limits, **kwargs)


def correct(answer: str, expected: float) -> bool:
    import re

    numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?", answer or "")
    try:
        return bool(numbers) and abs(float(numbers[-1].replace(",", "")) - expected) < 0.01
    except ValueError:
        return False


def main() -> None:
    base_url, questions_path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    types = sys.argv[4].split(",") if len(sys.argv) > 4 else TYPES
    with open(questions_path) as fh:
        questions = json.load(fh)
    for agent_type in types:
        ok = tracebacks = 0
        started = time.monotonic()
        for question, expected in questions:
            t0 = time.monotonic()
            try:
                answer = build(agent_type, base_url).invoke({"input": question})["output"]
                error = None
            except Exception:
                answer, error = "", traceback.format_exc(limit=2)
                tracebacks += 1
            good = correct(str(answer), expected)
            ok += good
            with open(out, "a") as fh:
                fh.write(json.dumps({"agent": agent_type, "question": question,
                                     "answer": str(answer), "correct": good, "error": error,
                                     "s": round(time.monotonic() - t0, 1)}) + "\n")
        print(f"langchain {agent_type:50} {ok:2}/{len(questions)} correct  "
              f"tracebacks {tracebacks}  {time.monotonic() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main()
