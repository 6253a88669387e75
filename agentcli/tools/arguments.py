"""A tool call's arguments: one coercion pass that meets small models halfway, then one
check with ``jsonschema`` against the tool's own schema (``type_schema.best_error``).

The coercion pass, in order (documented in ``docs/tools.md``):

1. Text starting with ``{`` that parses as a JSON object is that object.
2. Keys that are JSON-Schema keywords (``required``, ``type``, ``properties``,
   ``description``, ``title``) beside the real arguments are dropped (unless the tool has an
   argument of that name): a small model copies them from the schema it was shown.
3. A single-argument tool given plain text gets that text as its argument; given a dict
   holding its argument plus noise, it gets the argument alone; given a dict with one other
   key holding text or a number (``{"expression": "2 + 2"}``), it gets that value.
4. Where the schema says number or integer, a numeric string becomes a number (``"3"`` →
   3); where it says boolean, ``"true"``/``"false"`` become booleans; where it says string,
   a number becomes its text. Nothing else changes: a dict or list is never turned into text.

Whatever still does not match the schema (a value that is itself a schema, a missing
argument, an unknown one) is refused with one line naming the tool's arguments and types and
the exact shape to send, with the model's own text filled in where there is one.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from agentcli.errors import ToolInputError
from agentcli.type_schema import best_error

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

Schema = dict[str, Any]  # a JSON Schema (read here, never built from the model's input)


def string_schema(description: str) -> Schema:
    """The schema of a tool that takes one string, named ``input``."""
    return {"type": "object", "properties": {"input": {"type": "string",
                                                       "description": description}},
            "required": ["input"]}


STRING_SCHEMA = string_schema("The tool input.")
SCHEMA_KEYWORDS = frozenset({"required", "type", "properties", "description", "title"})
_NUMBER = re.compile(r"\s*-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*")


def prepare(tool: str, schema: Schema, given: object) -> dict[str, Any]:
    """The arguments for ``tool``: coerced (the pass above), then checked against ``schema``."""
    props: dict[str, Schema] = schema.get("properties") or {}
    args = _coerce(schema, props, given)
    if not isinstance(args, dict):
        raise ToolInputError(_shape(tool, schema, props, args, given, "got plain text"))
    closed = bool(props) or ("properties" in schema and not schema.get("additionalProperties"))
    checked = ({**schema, "additionalProperties": False}
               if closed and "additionalProperties" not in schema else schema)
    error = best_error(checked, args)
    if error is not None:
        raise ToolInputError(_shape(tool, schema, props, args, given, _reason(error, props)))
    return args


def _single(schema: Schema, props: dict[str, Schema]) -> str | None:
    required = list(schema.get("required") or [])
    if len(props) == 1:
        return next(iter(props))
    return required[0] if len(required) == 1 else None


def _coerce(schema: Schema, props: dict[str, Schema], given: object) -> object:
    key = _single(schema, props)
    if isinstance(given, str):
        text = given.strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except (ValueError, RecursionError):  # RecursionError: nested thousands deep
                parsed = None
            if isinstance(parsed, dict):
                given = parsed
        if isinstance(given, str):
            if not props:
                return {}  # a tool without arguments: whatever text came is ignored
            return {key: _scalar(given, props[key])} if key in props else given
    if not isinstance(given, dict):
        return {key: _scalar(given, props[key])} if key in props else given
    args = {k: v for k, v in given.items() if k in props or k not in SCHEMA_KEYWORDS}
    if len(props) != 1:
        key = None  # the dict rules below are for a tool of one argument
    if key is not None and key not in args:
        others = [v for v in args.values() if isinstance(v, str | int | float)
                  and not isinstance(v, bool)]
        if len(args) == 1 and others:
            args = {key: others[0]}
    elif key is not None:
        args = {key: args[key]}  # its one argument; the rest is noise
    return {k: _scalar(v, props.get(k) or {}) for k, v in args.items()}


def _scalar(value: object, prop: Schema) -> object:
    kind = prop.get("type")
    if isinstance(value, str) and kind in ("number", "integer") and _NUMBER.fullmatch(value):
        number = float(value)
        return int(number) if kind == "integer" and number.is_integer() else number
    if isinstance(value, float) and kind == "integer" and value.is_integer():
        return int(value)
    if isinstance(value, str) and kind == "boolean" and value.strip().lower() in (
            "true", "false"):
        return value.strip().lower() == "true"
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _type_name(prop: Schema) -> str:
    if isinstance(prop.get("enum"), list):  # the allowed values say more than their type
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    kind = prop.get("type")
    return kind if isinstance(kind, str) else "any"


def _own_text(value: object) -> str | None:
    """The model's own text in a value it sent: the text itself, or the ``description`` /
    ``value`` / ``default`` of a value that is a schema."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict):
        for k in ("value", "default", "description"):
            if isinstance(value.get(k), str | int | float) and str(value[k]).strip():
                return str(value[k]).strip()
    return None


def _placeholder(name: str, prop: Schema) -> object:
    if isinstance(prop.get("enum"), list):
        return "<" + " | ".join(str(v) for v in prop["enum"]) + ">"
    kind = prop.get("type")
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    words = str(prop.get("description") or name).strip().rstrip(".")
    return f"<{words[:1].lower()}{words[1:]}>"


def _reason(error: ValidationError, props: dict[str, Schema]) -> str:
    """What is wrong, in a few words (from jsonschema's best error)."""
    where = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        return f"missing required argument {error.message.split(' is a')[0]}"
    if error.validator == "additionalProperties":
        return f"unknown argument(s) {sorted(set(error.instance) - set(props))}"
    if where and error.validator in ("type", "enum"):
        return f"argument {where[0]!r} must be {_type_name(props.get(where[0]) or {})}"
    return error.message[:200]  # type: ignore[no-any-return]


def _shape(tool: str, schema: Schema, props: dict[str, Schema], sent: object,
           given: object, reason: str) -> str:
    """One line: the tool's arguments with their types, and the exact shape to send."""
    required = set(schema.get("required") or [])
    if not props:
        return f"{tool}: {reason}; it takes no arguments; send {{}}"
    named = ", ".join(f"{k} ({_type_name(p)}{', required' if k in required else ''})"
                      for k, p in props.items())
    sent_dict = sent if isinstance(sent, dict) else {}
    key = _single(schema, props)
    shape: dict[str, object] = {}
    for name, prop in props.items():
        if name not in required and name not in sent_dict:
            continue
        own = _own_text(sent_dict.get(name))
        if own is None and name == key:
            own = _own_text(sent if not isinstance(sent, dict) else given)
        if isinstance(prop.get("enum"), list) and sent_dict.get(name) not in prop["enum"]:
            own = None  # never the refused value again: the placeholder lists the allowed ones
        if own is not None and prop.get("type") in ("number", "integer"):
            own = float(own) if _NUMBER.fullmatch(own) else None  # type: ignore[assignment]
        shape[name] = own if own is not None else _placeholder(name, prop)
    return (f"{tool}: {reason}; it takes {named}; send the arguments as "
            f"{json.dumps(shape, ensure_ascii=False)}")
