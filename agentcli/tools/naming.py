"""Tool names on the wire: what function-calling APIs accept, and the way back.

OpenAI-style APIs only accept function names matching ``^[a-zA-Z0-9_-]{1,64}$``, but our
tools are named ``ev.echo`` (MCP) or ``my tool`` (plugins). :func:`wire_name` maps a readable
name to a valid one deterministically (``.`` becomes ``__``, other characters ``_``, long
names are cut and get a short hash); :func:`check_wire_names` makes sure no two tools of one
run end up with the same wire name; :func:`tool_lookup` finds a tool by either name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from agentcli.errors import ToolLoadError

VALID_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_MAX = 64


class _Named(Protocol):  # anything with a name (a Tool), without importing tools.base
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=_Named)


def wire_name(name: str) -> str:
    """The function name sent to a model for the tool ``name`` (itself when already valid)."""
    if VALID_NAME.fullmatch(name):
        return name
    out = _INVALID_CHAR.sub("_", name.replace(".", "__")) or "tool"
    if len(out) > _MAX:  # keep it unique: a cut name gets a hash of the full one
        import hashlib  # rarely needed: not paid for at start-up

        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
        out = f"{out[: _MAX - 9]}_{digest}"
    return out


def check_wire_names(names: Iterable[str]) -> None:
    """Raise one clear error when two tool names become the same wire name."""
    seen: dict[str, str] = {}
    for name in names:
        wire = wire_name(name)
        other = seen.get(wire)
        if other is not None and other != name:
            raise ToolLoadError(
                f"tools {other!r} and {name!r} both become {wire!r} when sent to the model "
                "(function names allow only letters, digits, _ and -); rename one of them "
                "or leave one out of --tools"
            )
        seen[wire] = name


def tool_lookup(tools: Iterable[T]) -> dict[str, T]:
    """Tools by readable name and by wire name (the readable name wins a clash)."""
    tools = list(tools)
    out = {wire_name(t.name): t for t in tools}
    out.update({t.name: t for t in tools})
    return out


def readable_name(name: str, lookup: Mapping[str, T]) -> str:
    """The tool's own name for a name the model sent (unchanged when unknown); ``lookup``
    is :func:`tool_lookup`'s."""
    found = lookup.get(name)
    return found.name if found is not None else name


def find_tool(tool_map: Mapping[str, T], tools: Sequence[T], name: str, *,
              wire: bool = False) -> tuple[T | None, str]:
    """The tool a call names (readable or wire name), or the observation explaining why it
    cannot run: the valid names and the closest one. ``wire``: the model calls functions, so
    it is told the function names it must use (``dyn__unlock``, not ``dyn.unlock``)."""
    tool = tool_map.get(name)
    if tool is not None:
        return tool, ""
    import difflib

    readable = [wire_name(t.name) if wire else t.name for t in tools]
    names = ", ".join(readable) or "(none)"
    close = difflib.get_close_matches(name, readable, n=1)
    hint = f" Did you mean {close[0]}?" if close else ""
    return None, f"{name} is not a valid tool, try one of [{names}].{hint}"
