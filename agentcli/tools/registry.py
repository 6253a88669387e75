"""The built-in tools by name (:func:`registry`), and the dangerous-tools gate.

The built-in table is read-only: every other tool (a plugin's, a ``--tools-module`` file's,
a YAML tool, an MCP server's, or specs handed to ``load_tools(specs=...)``) joins the catalog
of the command or call that reads it (``tools/resolve.py``), never a process-wide table.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from agentcli.errors import ToolLoadError
from agentcli.tools.base import Tool
from agentcli.tools.builtin import BUILTINS
from agentcli.tools.spec import ToolFactory, ToolSpec

__all__ = ["ToolFactory", "ToolSpec", "registry"]

if TYPE_CHECKING:  # listing or resolving tools must not import the model layer
    from agentcli.models.base import BaseChatModel


@functools.cache
def registry() -> Mapping[str, ToolSpec]:
    """The built-in tool specs by name: a constant, read-only table (made on first use)."""
    return MappingProxyType({spec.name: spec for spec in BUILTINS})


# LangChain's deprecated tool names, and what to load instead
_RENAMED = {"requests": "requests_get (GET only) or the group requests_all (every method)"}


def renamed_error(name: str) -> None:
    """Raise the hint for a LangChain tool name that is gone (``requests``), if it is one."""
    if name in _RENAMED:
        raise ToolLoadError(f"tool {name!r} is LangChain's old name; use {_RENAMED[name]}")


def refuse_dangerous(name: str, reason: str, group: str | None) -> ToolLoadError:
    """The load-time refusal: which tool, why it is dangerous, and the flag that opts in."""
    what = f"{name!r} (from group {group!r})" if group else repr(name)
    return ToolLoadError(
        f"tool {what} is dangerous: {reason or 'it can change your system'}. "
        f"Opt in with --allow {group or name} or --allow-dangerous-tools"
    )


def build_spec(
    spec: ToolSpec, *, llm: BaseChatModel | None, permitted: bool, group: str | None,
    settings: Mapping[str, Any],
) -> list[Tool]:
    """Build one spec's tool(s) through the load-time gate (danger, LLM, settings)."""
    name = spec.name
    if spec.dangerous and not permitted:
        raise refuse_dangerous(name, spec.danger_reason, group)
    if spec.needs.llm and llm is None:
        raise ToolLoadError(f"tool {name!r} needs a language model; configure --model")
    missing = [s for s in spec.needs.settings if settings.get(s) in (None, "")]
    if missing:
        raise ToolLoadError(
            f"tool {name!r} needs the setting(s) {', '.join(missing)}; set them under "
            f"tool_settings in your config"
        )
    assert spec.factory is not None
    from agentcli.models.base import observed

    built = spec.factory(llm=observed(llm), **settings)
    tools = []
    for t in built if isinstance(built, list) else [built]:
        if t.dangerous and not permitted:  # dangerous because of a setting or by its author
            raise refuse_dangerous(name, t.danger_reason, group)
        tools.append(replace(
            t, dangerous=t.dangerous or spec.dangerous,
            danger_reason=t.danger_reason or spec.danger_reason,
            needs=spec.needs, source=spec.source,
        ))
    return tools
