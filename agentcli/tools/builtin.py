"""Registers the built-in tools through the same call a plugin uses.

Each tool family lives in its own module with a ``SPECS`` tuple; modules are imported here but
heavy libraries (httpx, sqlite drivers) only inside the factories.
"""

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
        needs=ToolNeeds(llm=True), also_known_as=("Calculator",),
    ),
)


def all_specs() -> tuple[ToolSpec, ...]:
    """Every built-in spec, family by family."""
    from agentcli.tools import (
        arxiv,
        files,
        misc,
        python_repl,
        requests_tools,
        search,
        shell,
        sql,
        wikipedia,
    )

    families = (wikipedia, arxiv, search, requests_tools, shell, python_repl, files, sql, misc)
    return BUILTINS + tuple(spec for family in families for spec in family.SPECS)


def register_all() -> None:
    """Register every built-in tool spec."""
    for spec in all_specs():
        register_tool(spec, replace=True)
