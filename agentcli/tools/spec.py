"""``ToolSpec``: how to build a tool by name, and what it needs (plain data the registry holds)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agentcli.tools.base import Tool, ToolNeeds

ToolFactory = Callable[..., "Tool | list[Tool]"]


@dataclass(frozen=True)
class ToolSpec:
    """How to build a tool by name, and what it needs."""

    name: str
    factory: ToolFactory | None
    summary: str
    needs: ToolNeeds = field(default_factory=ToolNeeds)
    dangerous: bool = False
    danger_reason: str = ""
    members: tuple[str, ...] = ()  # a group name expands to these
    source: str = "built-in"
    also_known_as: tuple[str, ...] = ()  # names users may try (the name the model sees)
