"""The one converter from Python type hints to JSON Schema, and the one validator of values
against a JSON Schema (tool arguments, structured answers, state fields): ``jsonschema``.

A front step settles the common case without loading ``jsonschema`` (~70 ms of imports with
``referencing``, ``attrs`` and ``rpds``): a flat schema (``type``, ``enum``, ``required``,
``properties`` of flat schemas, ``additionalProperties: false``, annotations) that the value
plainly satisfies. Anything else, and every failure, goes to ``jsonschema``, so its messages
are the only ones; the front step may pass the decision on but never accepts what
``jsonschema`` would refuse (``tests/core/test_flat_schema.py`` checks that on random pairs).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

if TYPE_CHECKING:
    import jsonschema

# A JSON value as json.loads returns it (what a model, a file or the store hands back).
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"


def json_type(hint: object, *, nullable: bool = True) -> dict[str, Any]:
    """A JSON Schema fragment for a Python type hint (nested dataclasses included).

    ``nullable=False`` reads ``X | None`` as ``X`` (a tool argument that may be left out).
    """
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return json_type(args[0], nullable=nullable)
    if origin in (list, tuple, set, frozenset):
        return {"type": "array", "items": json_type(args[0])} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        members = [a for a in args if a is not type(None)]
        inner = json_type(members[0], nullable=nullable) if len(members) == 1 else {}
        if nullable and type(None) in args:
            return {"anyOf": [inner, {"type": "null"}]}
        return inner
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or typing.is_typeddict(hint)):
        return schema_of(hint)
    simple = {str: "string", int: "integer", float: "number", bool: "boolean",
              list: "array", dict: "object"}
    return {"type": simple[hint]} if hint in simple else {}


def schema_of(cls: type) -> dict[str, Any]:
    """The JSON Schema of a dataclass or TypedDict: its fields, required where no default."""
    hints = typing.get_type_hints(cls)
    if dataclasses.is_dataclass(cls):
        missing = dataclasses.MISSING
        required = [f.name for f in dataclasses.fields(cls)
                    if f.default is missing and f.default_factory is missing]
    else:
        required = sorted(getattr(cls, "__required_keys__", ()))
    return {
        "type": "object",
        "properties": {name: json_type(hint) for name, hint in hints.items()},
        "required": required,
        "additionalProperties": False,
    }


def _refuse(uri: str) -> NoReturn:
    """References are resolved inside the schema only: nothing is ever fetched."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def _validator(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    """A validator whose ``$ref`` lookups never leave the document (no URL is retrieved)."""
    import jsonschema
    from referencing import Registry

    registry = Registry(retrieve=_refuse)  # type: ignore[call-arg]
    return jsonschema.Draft202012Validator(schema, registry=registry)


# Draft 2020-12's types, each as strict as jsonschema's or stricter (3.0 is an integer there,
# a Decimal a number: those go to jsonschema).
_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"})
_SCALARS = (str, int, float, bool, type(None))


def _same(member: object, value: object) -> bool:
    """``value`` equals an enum member: same scalar type (JSON's 1 is not true), equal."""
    return type(member) is type(value) and isinstance(value, _SCALARS) and member == value


def plainly_valid(schema: object, value: object) -> bool:
    """True when ``schema`` is flat and ``value`` satisfies it; False means "ask jsonschema"
    (a keyword this check does not read, or a value that looks invalid)."""
    if not isinstance(schema, Mapping):
        return False
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        return False
    for key, want in schema.items():
        if key in _ANNOTATIONS or key == "properties":
            continue
        if key == "type":
            names = [want] if isinstance(want, str) else want
            if not (isinstance(names, list) and all(n in _TYPES for n in names)
                    and any(_TYPES[n](value) for n in names)):
                return False
        elif key == "enum":
            if not (isinstance(want, list) and any(_same(m, value) for m in want)):
                return False
        elif key == "required":
            if not (isinstance(want, list) and all(isinstance(n, str) for n in want)):
                return False
            if isinstance(value, dict) and not all(n in value for n in want):
                return False
        elif key == "additionalProperties":
            if not isinstance(want, bool):
                return False
            if not want and isinstance(value, dict) and not all(k in props for k in value):
                return False
        else:
            return False
    return not isinstance(value, dict) or all(
        plainly_valid(sub, value[name]) for name, sub in props.items() if name in value)


def best_error(schema: Mapping[str, Any], value: object
               ) -> jsonschema.exceptions.ValidationError | None:
    """The most relevant validation error of ``value`` against ``schema``, or None."""
    if plainly_valid(schema, value):
        return None
    import jsonschema

    return jsonschema.exceptions.best_match(_validator(schema).iter_errors(value))
