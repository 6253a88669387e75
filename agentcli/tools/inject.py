"""Tool parameters the executor fills in, hidden from the model.

``Annotated[dict, InjectedState]`` receives the whole run state (a copy),
``Annotated[str, InjectedState("foo")]`` one field of it, and
``Annotated[str, InjectedToolCallId]`` the id of the call being run. Such parameters never
appear in the schema the model sees.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Literal

from agentcli.errors import ToolInputError
from agentcli.records import record


class InjectedState:
    """Marks a tool parameter that receives the run state, or one field with ``("name")``."""

    field: str | None = None  # the bare class marks the whole state too

    def __init__(self, field: str | None = None) -> None:
        self.field = field

    def __repr__(self) -> str:
        return f"InjectedState({self.field!r})" if self.field else "InjectedState"


class InjectedToolCallId:
    """Marks a tool parameter that receives the id of the current tool call."""


@record
class Injection:
    """One injected parameter: its name and what fills it."""

    param: str
    source: Literal["state", "field", "call_id"]
    field: str | None = None


def injections(func: Callable[..., object]) -> tuple[Injection, ...]:
    """The injected parameters of a function, read from its ``Annotated`` hints."""
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:
        return ()
    found: list[Injection] = []
    for name, hint in hints.items():
        if name == "return" or typing.get_origin(hint) is not Annotated:
            continue
        for meta in typing.get_args(hint)[1:]:
            if meta is InjectedState or isinstance(meta, InjectedState):
                found.append(Injection(name, "field", meta.field) if meta.field
                             else Injection(name, "state"))
            elif meta is InjectedToolCallId or isinstance(meta, InjectedToolCallId):
                found.append(Injection(name, "call_id"))
    return tuple(found)


def fill(
    tool: str,
    wanted: tuple[Injection, ...],
    state: Mapping[str, object] | None,
    call_id: str | None,
) -> dict[str, object]:
    """The keyword arguments for the injected parameters of one call."""
    values: dict[str, object] = {}
    current = dict(state or {})
    for inj in wanted:
        if inj.source == "call_id":
            values[inj.param] = call_id or ""
        elif inj.source == "state":
            values[inj.param] = current
        else:
            assert inj.field is not None
            if inj.field not in current:
                raise ToolInputError(
                    f"{tool} needs state field {inj.field!r}, which this run does not have "
                    f"(fields: {', '.join(sorted(current)) or 'none'})"
                )
            values[inj.param] = current[inj.field]
    return values
