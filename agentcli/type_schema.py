"""The one converter from Python type hints to JSON Schema, and the one validator of values
against a JSON Schema (tool arguments, structured answers, state fields): ``jsonschema``."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
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


def best_error(schema: Mapping[str, Any], value: object
               ) -> jsonschema.exceptions.ValidationError | None:
    """The most relevant validation error of ``value`` against ``schema``, or None."""
    import jsonschema

    return jsonschema.exceptions.best_match(_validator(schema).iter_errors(value))
