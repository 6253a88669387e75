"""The one converter from Python type hints to JSON Schema, and the one validator of values
against a JSON Schema (tool arguments, structured answers, state fields): ``jsonschema``.

A front step settles the common case without loading ``jsonschema`` (~70 ms of imports with
``referencing``, ``attrs`` and ``rpds``): a flat schema (``type``, ``enum``, ``required``,
``properties`` of flat schemas, ``additionalProperties: false``, annotations) that the value
plainly satisfies. Anything else, and every failure, goes to ``jsonschema``, so its messages
are the only ones; the front step may pass the decision on but never accepts what
``jsonschema`` would refuse (``tests/core/test_flat_schema.py`` checks that on random pairs).

Its ``pattern`` and ``patternProperties`` keywords match with the ``regex`` module under a
time limit (:data:`PATTERN_TIME_LIMIT` for one whole validation), so a catastrophic pattern
such as ``(a|aa)+$`` on ``aaa…a!`` is a validation error instead of a hang; the match releases
the GIL, so it never holds up the event loop's thread either.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import time
import typing
from collections.abc import Callable, Iterator, Mapping
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


PATTERN_TIME_LIMIT = 1.0  # seconds for all the pattern matches of one validation
_pattern_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "pattern_deadline", default=None)


class _Unchecked(Exception):
    """A pattern could not be checked: its match ran past the validation's time limit, or
    it is no regular expression."""


def _search(pattern: str, text: str) -> bool:
    """``pattern`` found in ``text``, within what is left of the validation's time limit."""
    import regex

    deadline = _pattern_deadline.get()
    left = PATTERN_TIME_LIMIT if deadline is None else deadline - time.monotonic()
    try:
        return regex.search(pattern, text, timeout=max(left, 0.001),
                            concurrent=True) is not None
    except TimeoutError:
        raise _Unchecked(f"took over {PATTERN_TIME_LIMIT:g} s to check (a pattern that "
                         "backtracks catastrophically); use a simpler pattern") from None
    except (regex.error, TypeError) as err:  # a tool's schema is not checked beforehand
        raise _Unchecked(f"is not a regular expression ({err})") from None


def _unchecked(pattern: str, err: _Unchecked) -> jsonschema.ValidationError:
    import jsonschema

    return jsonschema.ValidationError(f"the pattern {pattern!r} {err}")


def _pattern(validator: Any, pattern: str, instance: object, schema: object
             ) -> Iterator[jsonschema.ValidationError]:
    import jsonschema

    if not isinstance(instance, str):
        return
    try:
        if not _search(pattern, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")
    except _Unchecked as err:
        yield _unchecked(pattern, err)


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: object,
                        schema: object) -> Iterator[jsonschema.ValidationError]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                found = _search(pattern, key)
            except _Unchecked as err:
                yield _unchecked(pattern, err)
                return
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: object, instance: object,
                           schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    """jsonschema's own keyword, with the names that match ``patternProperties`` found by
    :func:`_search` (a key is as much the model's text as a value)."""
    import jsonschema

    if not isinstance(instance, dict):
        return
    named = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = []
    for key in instance:
        if key in named:
            continue
        try:
            if any(_search(p, key) for p in patterns):
                continue
        except _Unchecked as err:
            yield _unchecked("|".join(patterns), err)
            return
        extras.append(key)
    if isinstance(allowed, dict):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)
    elif allowed is False and extras:
        listed = ", ".join(repr(k) for k in sorted(extras, key=str))
        yield jsonschema.ValidationError(
            f"Additional properties are not allowed ({listed} "
            f"{'was' if len(extras) == 1 else 'were'} unexpected)")


def _validator(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    """A validator whose ``$ref`` lookups never leave the document (no URL is retrieved) and
    whose patterns match under the time limit."""
    from referencing import Registry

    registry = Registry(retrieve=_refuse)  # type: ignore[call-arg]
    return _bounded_class()(schema, registry=registry)


@functools.cache
def _bounded_class() -> type[jsonschema.protocols.Validator]:
    """Draft 2020-12 with the pattern keywords above (built once, on first use)."""
    import jsonschema

    made: type[jsonschema.protocols.Validator] = jsonschema.validators.extend(
        jsonschema.Draft202012Validator, {
            "pattern": _pattern, "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties})
    return made


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


# The keywords :func:`plainly_valid` reads: checking a value against them (here or in
# jsonschema) takes time linear in the value; ``pattern`` and the rest may not.
_FLAT_KEYWORDS = _ANNOTATIONS | {"type", "enum", "required", "additionalProperties",
                                 "properties"}


def is_flat(schema: object) -> bool:
    """Whether ``schema`` uses only the keywords the flat check reads, at every level: its
    check is quick whatever the value, so it may run on an event loop (no pattern to backtrack
    up to :data:`PATTERN_TIME_LIMIT`, no reference to follow)."""
    if not isinstance(schema, Mapping) or not _FLAT_KEYWORDS.issuperset(schema):
        return False
    props = schema.get("properties", {})
    return isinstance(props, Mapping) and all(is_flat(sub) for sub in props.values())


def best_error(schema: Mapping[str, Any], value: object
               ) -> jsonschema.exceptions.ValidationError | None:
    """The most relevant validation error of ``value`` against ``schema``, or None; all its
    pattern matches together take at most :data:`PATTERN_TIME_LIMIT` seconds."""
    if plainly_valid(schema, value):
        return None
    import jsonschema

    token = _pattern_deadline.set(time.monotonic() + PATTERN_TIME_LIMIT)
    try:
        return jsonschema.exceptions.best_match(_validator(schema).iter_errors(value))
    finally:
        _pattern_deadline.reset(token)
