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

from agentcli.agents.prompts import load, render
from agentcli.tools.base import Tool

_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])", re.IGNORECASE)
_DESCRIPTION_CHARS = 80
# The compact prompts' example (prompts/example_*.txt) shows a real question and the
# calculation for it, never a result: SmolLM2 copied a worked `42` (later `10.73`) as its
# answer to unrelated questions. The result and the answer are placeholder words, which the
# answer rule refuses when copied (``prompts.placeholders``), so a copied example is never
# shown as an answer and no value ever has to be refused. Measured on SmolLM2 (bench/README.md,
# issue 31b): an example made only of letters (`A times B`) or placeholders was copied word for
# word, so the question and its calculation stay real.


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
    for key, name in (("example", "example_blob"), ("react_example", "example_react")):
        values[key] = render(load(name), tool="Calculator").rstrip("\n") + "\n" if real else ""
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
