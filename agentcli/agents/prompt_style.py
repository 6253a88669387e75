"""The compact prompt variant for small models: which style to use, and what fills it.

``prompt_style: compact`` swaps an agent type's prompt file ``<name>.txt`` for
``<name>_compact.txt`` when one exists: one short line per tool, the reply format in two
lines, one example in placeholders. With five tools it fits a 2,048-token context with room for the
question and several steps. ``auto`` picks compact for models below ``compact_below_b``
billion parameters (read from the model name, e.g. ``SmolLM2-135M``, ``qwen2.5:0.5b``) and,
when the name tells no size, for models on a local server (where small models live).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib.resources import files

from agentcli.schema import EXAMPLE_ANSWER, EXAMPLE_CALCULATION
from agentcli.tools.base import Tool

_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])", re.IGNORECASE)
_DESCRIPTION_CHARS = 80
# The compact prompts' worked example, in each format (it ends the way a step ends). SmolLM2
# copied a worked `7 times 6` -> `42` as its answer to unrelated questions, and 42 is a real
# answer to other questions, so it could not be refused. The example's numbers are now ones no
# question of ours should have as its answer, and ``recovery.is_answer`` refuses a reply that
# is one of the example's values, so a copied example is never shown as an answer (a question
# whose true answer is exactly 10.73 would end with no answer: that is the price). Measured on
# SmolLM2 (bench/README.md, issue 31b): an example in letters (`A times B`) or in angle-bracket
# placeholders was copied word for word and the plain-arithmetic rows fell by half.
_EXAMPLE = (
    f"\nExample:\nQuestion: What is {EXAMPLE_CALCULATION}?\n"
    f'{{{{"action": "{{tool}}", "action_input": "{EXAMPLE_CALCULATION}"}}}}\n'
    f"Observation: Answer: {EXAMPLE_ANSWER}\n"
    f'{{{{"action": "Final Answer", "action_input": "{EXAMPLE_ANSWER}"}}}}\n'
)
_REACT_EXAMPLE = (
    f"\nExample:\nQuestion: What is {EXAMPLE_CALCULATION}?\nThought: I use {{tool}}.\n"
    f"Action: {{tool}}\nAction Input: {EXAMPLE_CALCULATION}\n"
    f"Observation: Answer: {EXAMPLE_ANSWER}\n"
    f"Thought: I know the answer.\nFinal Answer: {EXAMPLE_ANSWER}\n"
)


def tool_lines(tools: Sequence[Tool]) -> str:
    """``name: description`` for each tool, one per line."""
    return "\n".join(f"{t.name}: {t.description}" for t in tools)


def model_size_b(model_name: str) -> float | None:
    """Billions of parameters written in a model name (``135M`` -> 0.135), or None."""
    sizes = [float(n) / (1000.0 if unit.lower() == "m" else 1.0)
             for n, unit in _SIZE.findall(model_name.rsplit("/", 1)[-1])]
    return min(sizes) if sizes else None


def resolve_style(
    style: str, model_name: str, *, local: bool = False, compact_below_b: float = 4.0
) -> str:
    """``full`` or ``compact`` for a model, from the ``prompt_style`` setting."""
    if style in ("full", "compact"):
        return style
    size = model_size_b(model_name)
    small = local if size is None else size < compact_below_b
    return "compact" if small else "full"


@cache
def prompt_name(base: str, style: str) -> str:
    """The prompt file to load: ``<base>_compact`` when compact and it exists, else ``base``."""
    compact = f"{base}_compact"
    found = files("agentcli.agents.prompts").joinpath(f"{compact}.txt").is_file()
    return compact if style == "compact" and found else base


def compact_values(tools: Sequence[Tool], *, quoted_names: bool = False) -> dict[str, str]:
    """The placeholders of a compact prompt: short tool lines, names and the example."""
    names = [t.name for t in tools]
    values = {
        "tools": "\n".join(_tool_line(t) for t in tools),
        "tool_names": ", ".join(f'"{n}"' if quoted_names else n for n in names),
    }
    # A worked example only where it is a real one (the Calculator): a placeholder such as
    # "<tool name>" in an example is copied word for word by small models.
    real = "Calculator" in names or not tools
    values["example"] = _EXAMPLE.format(tool="Calculator") if real else ""
    values["react_example"] = _REACT_EXAMPLE.format(tool="Calculator") if real else ""
    return values


def short_description(description: str, limit: int = _DESCRIPTION_CHARS) -> str:
    """The first sentence of a description, at most ``limit`` characters, and its ``Input:``
    sentence when it has one (what the tool expects is the part a small model needs most)."""
    text = " ".join(description.split())
    sentences = re.split(r"(?<=[.!?])\s", text)
    first = sentences[0]
    first = first if len(first) <= limit else first[: limit - 3].rstrip() + "..."
    hint = next((s for s in sentences[1:] if s.startswith("Input:")), "")
    return f"{first} {hint}".strip()


def argument_names(tool: Tool) -> list[str]:
    """The names of a tool's arguments when it takes several (none for a one-input tool)."""
    props = (tool.args_schema or {}).get("properties") or {}
    return list(props) if tool.is_structured and len(props) > 1 else []


def _tool_line(tool: Tool) -> str:
    names = argument_names(tool)
    args = f"({', '.join(names)})" if names else ""
    return f"{tool.name}{args}: {short_description(tool.description)}"
