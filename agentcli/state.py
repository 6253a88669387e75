"""Typed run state: fields, what ``invoke`` accepts and returns, and how updates merge.

A state schema is a ``TypedDict`` subclass of :class:`AgentState`. Each field may carry, in
``Annotated[...]`` metadata:

* :data:`OmitFromInput` (output only), :data:`OmitFromOutput` (input only) or
  :data:`PrivateStateAttr` (neither: internal to the run);
* a reducer, any two-argument callable ``(old, new) -> merged`` (the default is last write
  wins; ``messages`` appends).

Nothing writes to the state during a step. Tools and middleware return updates; the executor
applies them after the step, in the order the actions were declared, so parallel tool calls
that touch one field merge the same way every time.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from agentcli.errors import ConfigError
from agentcli.records import record
from agentcli.schema import Message, ToolCall
from agentcli.type_schema import best_error, json_type

if TYPE_CHECKING:
    from agentcli.tools.base import Tool

Reducer = Callable[[Any, Any], Any]


class StateError(ConfigError):
    """A state value or update does not fit the schema; the message names the field."""


@record
class _Visibility:
    """Where a state field is visible: ``omit_input`` / ``omit_output``."""

    omit_input: bool
    omit_output: bool


OmitFromInput = _Visibility(omit_input=True, omit_output=False)
OmitFromOutput = _Visibility(omit_input=False, omit_output=True)
PrivateStateAttr = _Visibility(omit_input=True, omit_output=True)


def as_message(value: object) -> Message:
    """A :class:`Message` from a Message or an OpenAI-style dict."""
    if isinstance(value, Message):
        return value
    if isinstance(value, str):
        return Message("user", value)
    if isinstance(value, Mapping) and value.get("role") in ("system", "user", "assistant", "tool"):
        calls = tuple(
            ToolCall(str(c.get("id", "")), str(c.get("function", c).get("name", "")),
                     str(c.get("function", c).get("arguments", "")))
            for c in value.get("tool_calls") or () if isinstance(c, Mapping)
        )
        return Message(value["role"], str(value.get("content") or ""), tool_calls=calls,
                       tool_call_id=value.get("tool_call_id"), name=value.get("name"))
    raise StateError(
        f"a message must be a Message or a dict with a role and content, got {value!r:.80}"
    )


@record
class Overwrite:
    """An update that replaces a reduced field instead of merging into it."""

    value: Any


def add_messages(old: Sequence[Message] | None, new: object) -> list[Message]:
    """The ``messages`` reducer: append (one message or a list); ``Overwrite`` replaces."""
    if isinstance(new, Overwrite):
        return [as_message(m) for m in new.value]
    items = new if isinstance(new, list | tuple) else [new]
    return [*(old or ()), *(as_message(m) for m in items)]


class AgentState(TypedDict, total=False):
    """The state every run has; subclass it to add fields."""

    messages: Annotated[list[Message], add_messages]
    input: Annotated[str, OmitFromOutput]
    chat_history: Annotated[list[Message], OmitFromOutput]
    structured_response: Annotated[Any, OmitFromInput]
    jump_to: Annotated[str | None, PrivateStateAttr]


JUMP_TARGETS = ("model", "tools", "end")
_BASE_FIELDS = tuple(AgentState.__annotations__)
_SIMPLE_TYPES = (str, int, float, bool, list, dict)  # checked; other types are taken as given


@record
class StateField:
    """One declared field: its type, reducer and visibility."""

    name: str
    type: object = Any
    reducer: Reducer | None = None
    omit_input: bool = False
    omit_output: bool = False
    default: object = None

    def check(self, value: object, where: str) -> None:
        """Refuse a value of the wrong simple type (str, int, float, bool, list, dict)."""
        base = typing.get_origin(self.type) or self.type
        if value is None or base not in _SIMPLE_TYPES or type(value) is base:
            return  # (a value of exactly the type: its JSON type matches, nothing to ask)
        if best_error(json_type(base), list(value) if isinstance(value, tuple) else value):
            raise StateError(
                f"{where} {self.name!r} must be {getattr(base, '__name__', base)}, got "
                f"{type(value).__name__}; fix its value"
            )


def _unwrap(hint: object) -> tuple[object, list[object]]:
    """The bare type and the Annotated metadata of a hint (NotRequired/Required stripped)."""
    meta: list[object] = []
    while True:
        origin = typing.get_origin(hint)
        if origin is Annotated:
            args = typing.get_args(hint)
            hint, meta = args[0], [*meta, *args[1:]]
        elif origin in (typing.NotRequired, typing.Required):
            hint = typing.get_args(hint)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(hint) if a is not type(None)]
            if len(members) != 1:
                return hint, meta
            hint = members[0]
        else:
            return hint, meta


@record
class StateSchema:
    """The fields of a run's state, read once from a TypedDict (or YAML declarations)."""

    fields: dict[str, StateField] = field(default_factory=dict)

    @classmethod
    def of(cls, schema: type | StateSchema | None = None) -> StateSchema:
        """The schema of a TypedDict class (``AgentState`` when None)."""
        if isinstance(schema, StateSchema):
            return schema
        target = schema or AgentState
        try:
            hints = typing.get_type_hints(target, include_extras=True)
        except Exception as err:  # a forward reference that does not resolve
            raise StateError(f"cannot read the state schema {target!r}: {err}") from None
        out: dict[str, StateField] = {}
        for name, hint in hints.items():
            base, meta = _unwrap(hint)
            vis = next((m for m in meta if isinstance(m, _Visibility)), _Visibility(False, False))
            reducers: list[Reducer] = [m for m in meta if callable(m) and not isinstance(m, type)]
            out[name] = StateField(name, base, reducers[0] if reducers else None,
                                   vis.omit_input, vis.omit_output)
        return cls(out)

    def check_tools(self, tools: Iterable[Tool]) -> None:
        """A tool asking for a state field this schema lacks is a setup error, found early."""
        for t in tools:
            for inj in t.injected:
                if inj.source == "field" and inj.field not in self.fields:
                    raise ConfigError(
                        f"tool {t.name!r} injects state field {inj.field!r}, which the state "
                        f"schema does not declare (fields: {', '.join(sorted(self.fields))})"
                        "; declare it in the state schema or fix the tool"
                    )

    def extend(self, extra: Iterable[StateField]) -> StateSchema:
        """This schema plus more fields (YAML ``state:`` declarations)."""
        return StateSchema({**self.fields, **{f.name: f for f in extra}})

    def _field(self, name: str, where: str) -> StateField:
        known = self.fields.get(name)
        if known is None:
            import difflib

            close = difflib.get_close_matches(name, list(self.fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            own = sorted(set(self.fields) - set(_BASE_FIELDS))
            declared = f"declared: {', '.join(own)}" if own else "no extra fields are declared"
            raise StateError(
                f"{where} {name!r} is not in the state schema{hint} ({declared}); "
                "declare it (YAML `state:` or a state_schema) or remove it"
            )
        return known

    def accept(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``invoke`` input: declared, input-visible fields of the right type."""
        values: dict[str, Any] = {
            f.name: f.default for f in self.fields.values() if f.default is not None
        }
        for name, value in data.items():
            spec = self._field(name, "input field")
            if spec.omit_input:
                raise StateError(
                    f"state field {name!r} is output only and cannot be passed as input; "
                    "remove it from the input"
                )
            spec.check(value, "input field")
            values[name] = add_messages([], value) if name == "messages" else value
        return values

    def apply(self, values: dict[str, Any], updates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Merge updates in order with each field's reducer; undeclared fields are refused."""
        merged = dict(values)
        for update in updates:
            for name, value in update.items():
                spec = self._field(name, "state update of")
                if spec.reducer is None:
                    spec.check(value, "state update of")
                if isinstance(value, Overwrite) and spec.reducer is not add_messages:
                    merged[name] = value.value
                elif spec.reducer is not None:
                    merged[name] = spec.reducer(merged.get(name), value)
                else:
                    merged[name] = value
        return merged

    def parse_pairs(self, pairs: Sequence[str]) -> dict[str, object]:
        """``NAME=VALUE`` strings (``--state``): JSON values unless the field is a string."""
        import json

        out: dict[str, object] = {}
        for pair in pairs:
            name, sep, raw = pair.partition("=")
            if not sep or not name.strip():
                raise StateError(f"--state {pair!r} is not NAME=VALUE; e.g. --state foo=Hello")
            spec = self._field(name.strip(), "--state field")
            value: object = raw
            if (typing.get_origin(spec.type) or spec.type) is not str:
                try:
                    value = json.loads(raw)
                except ValueError:
                    value = raw
            out[spec.name] = value
        return out

    def output(self, values: Mapping[str, object]) -> dict[str, object]:
        """The state ``invoke`` returns: output-visible fields only."""
        return {
            k: v for k, v in values.items()
            if not (k in self.fields and self.fields[k].omit_output)
        }


@record
class Command:
    """What a tool returns to change the run's state instead of (or beside) text.

    ``update`` maps state fields to new values (merged by their reducers after the step);
    ``messages`` in it may hold the tool's own tool message, whose content is then the
    observation the model reads.
    """

    update: dict[str, Any] = field(default_factory=dict)
    goto: str | None = None  # "model", "tools" or "end", like a middleware's jump_to

    def observation(self, call_id: str | None) -> str:
        """The text the model reads for this call: its tool message, else a summary."""
        raw = self.update.get("messages")
        for m in add_messages([], raw) if raw is not None else []:
            if m.role == "tool" and (call_id is None or m.tool_call_id in (None, call_id)):
                return m.content
        keys = [k for k in self.update if k != "messages"]
        return f"Updated state: {', '.join(keys)}." if keys else ""


YAML_TYPES: dict[str, object] = {
    "str": str, "string": str, "int": int, "integer": int, "float": float, "number": float,
    "bool": bool, "boolean": bool, "list": list, "dict": dict, "object": dict, "any": Any,
}


def fields_from_yaml(spec: object, source: str = "config") -> list[StateField]:
    """Fields from YAML ``state:`` (a mapping of name -> {type, default, input, output})."""
    if not isinstance(spec, Mapping):
        raise StateError(f"{source}: `state` must be a mapping of field name to settings")
    out: list[StateField] = []
    for name, conf in spec.items():
        conf = conf if isinstance(conf, Mapping) else {"type": conf}
        unknown = set(conf) - {"type", "default", "input", "output"}
        if unknown:
            raise StateError(
                f"{source}: state field {name!r} has unknown keys {sorted(unknown)}; allowed: "
                "type, default, input, output"
            )
        kind = str(conf.get("type", "any")).lower()
        if kind not in YAML_TYPES:
            raise StateError(
                f"{source}: state field {name!r} has type {kind!r}; use one of "
                f"{', '.join(sorted(YAML_TYPES))}"
            )
        out.append(StateField(
            str(name), YAML_TYPES[kind], None,
            omit_input=not conf.get("input", True), omit_output=not conf.get("output", True),
            default=conf.get("default"),
        ))
    return out
