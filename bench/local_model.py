"""Correct answers out of 20 calculator questions on a real small model, per agent type.

    .venv/bin/python bench/local_model.py [--base-url URL] [--configs off,on,compact-on]
                                          [--types T1,T2] [--n 20] [--out results.jsonl]

Without ``--base-url`` it starts llama-cpp-python serving SmolLM2-135M from the cache dir
(see ``tests/support/realmodel.py``). Each agent type runs with structured actions off
and on, and (for the types with a compact prompt) compact prompt + on. A run is correct when
a number in the answer matches the expected one. Every run also records whether it ended
with an error instead of a result (the CLI would print one line; never a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcli.agents import agent_class, agent_names
from agentcli.config import load_settings
from agentcli.errors import AgentCliError
from agentcli.runtime import build_executor, build_model

QUESTIONS: list[tuple[str, float]] = [
    ("What is 25% of 300?", 75), ("What is 12 * 7?", 84), ("What is 144 divided by 12?", 12),
    ("What is 15 + 27?", 42), ("What is 3 to the power of 4?", 81),
    ("What is the square root of 81?", 9), ("What is 1000 - 357?", 643),
    ("What is 18 * 18?", 324), ("What is 7 plus 8 times 2?", 23), ("What is 90 / 4?", 22.5),
    ("What is 2 * 3 * 4?", 24), ("What is 10% of 450?", 45), ("What is 123 + 456?", 579),
    ("What is 56 * 3?", 168), ("What is 2 to the power of 10?", 1024),
    ("What is 99 - 45?", 54), ("What is 81 divided by 9?", 9), ("What is 13 * 13?", 169),
    ("What is 50% of 86?", 43), ("What is 17 + 38?", 55),
]
# The agent types that have a compact prompt variant (prompt_style: compact).
COMPACT_TYPES = frozenset({
    "zero-shot-react-description", "chat-zero-shot-react-description",
    "structured-chat-zero-shot-react-description", "chat-conversational-react-description",
})
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def correct(answer: str, expected: float) -> bool:
    """The last number in the answer equals the expected one (to 0.01)."""
    numbers = _NUMBER.findall(answer or "")
    with contextlib.suppress(ValueError):
        return bool(numbers) and abs(float(numbers[-1].replace(",", "")) - expected) < 0.01
    return False


def run_one(base_url: str, agent_type: str, mode: str, compact: bool, question: str
            ) -> dict[str, Any]:
    """One question through one configuration; never raises."""
    flags = {"model": "custom/smollm2", "base_url": base_url, "agent": agent_type,
             "tools": ["llm-math"], "max_iterations": 3, "max_execution_time": 45,
             "structured_actions": mode, "local_max_tokens": 100, "request_timeout": 60,
             "max_retries": 0, "verbose": False, "self_ask_tool": "Calculator",
             "prompt_style": "compact" if compact else "full"}
    started = time.monotonic()
    try:
        settings = load_settings(None, flags=flags, env={})
        llm = build_model(settings, {})
        executor = build_executor(settings, llm)
        result = executor.invoke(question)
        return {"answer": result.output, "stop": result.stop_reason, "error": None,
                "calls": result.model_calls, "s": round(time.monotonic() - started, 1)}
    except AgentCliError as err:  # what the CLI prints as one line
        return {"answer": "", "stop": "error", "error": str(err).splitlines()[0],
                "calls": None, "s": round(time.monotonic() - started, 1)}
    except Exception:  # a bug: the CLI would show a traceback
        return {"answer": "", "stop": "traceback", "error": traceback.format_exc(limit=3),
                "calls": None, "s": round(time.monotonic() - started, 1)}


def configs(wanted: list[str], types: list[str]) -> Iterator[tuple[str, str, bool]]:
    """(agent type, structured_actions, compact) in the order they are run."""
    for agent_type in types:
        for kind in wanted:
            blob = agent_class(agent_type).json_blob
            if kind == "off":
                yield agent_type, "off", False
            elif kind == "on" and blob:
                yield agent_type, "on", False
            elif kind == "compact-on" and agent_type in COMPACT_TYPES:
                yield agent_type, "on" if blob else "off", True
            elif kind == "compact-off" and agent_type in COMPACT_TYPES and blob:
                yield agent_type, "off", True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-url")
    parser.add_argument("--configs", default="off,on,compact-on",
                        help="off, on, compact-on, compact-off (comma-separated)")
    parser.add_argument("--types", default=",".join(agent_names()))
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--out", default="bench-local-model.jsonl")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        base_url = args.base_url
        if not base_url:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support
            from tests.support.realmodel import LlamaServer

            base_url = stack.enter_context(LlamaServer()).base_url
        table: list[str] = []
        for agent_type, mode, compact in configs(args.configs.split(","),
                                                 args.types.split(",")):
            label = f"{agent_type} structured={mode}{' compact' if compact else ''}"
            rows = []
            for question, expected in QUESTIONS[: args.n]:
                row = run_one(base_url, agent_type, mode, compact, question)
                row.update(agent=agent_type, structured=mode, compact=compact,
                           question=question, correct=correct(row["answer"], expected))
                rows.append(row)
                with open(args.out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
            ok = sum(r["correct"] for r in rows)
            tb = sum(r["stop"] == "traceback" for r in rows)
            err = sum(r["stop"] == "error" for r in rows)
            secs = sum(r["s"] for r in rows)
            line = (f"{label:72} {ok:2}/{len(rows)} correct  errors {err}  tracebacks {tb}  "
                    f"{secs:.0f}s")
            table.append(line)
            print(line, flush=True)
        print("\n".join(["", *table]), file=sys.stderr)


if __name__ == "__main__":
    main()
