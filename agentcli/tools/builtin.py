"""Registers the built-in tools through the same call a plugin uses."""

from __future__ import annotations

from typing import Any

from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.registry import ToolSpec, register_tool


def _llm_math(llm: Any = None, **_: Any) -> Tool:
    from agentcli.tools.calculator import make_calculator

    return make_calculator(llm)


BUILTINS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "llm-math", _llm_math,
        "Calculator: evaluates arithmetic safely; asks the model to translate word problems.",
        needs=ToolNeeds(llm=True),
    ),
)


def register_all() -> None:
    """Register every built-in tool spec."""
    for spec in BUILTINS:
        register_tool(spec, replace=True)
