"""Structured final answers: a JSON Schema (or a dataclass / TypedDict) the answer must match.

The agent asks for the answer in that shape (tool-calling agents through a final tool whose
arguments are the schema, text agents through a JSON final answer). The executor validates
it here; an answer that does not match goes back to the model as a parse error, so the
run's limits bound the retries. The validated value fills ``structured_response``.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentcli.errors import ConfigError, OutputParserError
from agentcli.schema import AgentFinish


def _json_type(hint: Any) -> dict[str, Any]:
    """A JSON Schema fragment for a Python type hint (nested dataclasses included)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _json_type(args[0])
    if origin in (list, tuple, set, frozenset):
        return {"type": "array", "items": _json_type(args[0])} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        members = [a for a in args if a is not type(None)]
        inner = _json_type(members[0]) if len(members) == 1 else {}
        return {"anyOf": [inner, {"type": "null"}]} if type(None) in args else inner
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or _is_typeddict(hint)):
        return schema_of(hint)
    simple = {str: "string", int: "integer", float: "number", bool: "boolean",
              list: "array", dict: "object"}
    return {"type": simple[hint]} if hint in simple else {}


def _is_typeddict(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, "__required_keys__")


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
        "properties": {name: _json_type(hint) for name, hint in hints.items()},
        "required": required,
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class ResponseFormat:
    """The shape of a structured answer and how to build the value the caller gets."""

    schema: dict[str, Any]
    build: Callable[[Any], Any] = lambda value: value
    name: str = "answer"

    @classmethod
    def of(cls, spec: ResponseFormat | Mapping[str, Any] | type) -> ResponseFormat:
        """From a JSON Schema dict, a dataclass or a TypedDict; a bad schema is a ConfigError."""
        if isinstance(spec, ResponseFormat):
            return spec
        if isinstance(spec, Mapping):
            schema = dict(spec)
            check_schema(schema)
            return cls(schema, name=str(schema.get("title") or "answer"))
        if isinstance(spec, type) and dataclasses.is_dataclass(spec):
            target = spec
            return cls(schema_of(spec), lambda v: _build_dataclass(target, v), spec.__name__)
        if _is_typeddict(spec):
            return cls(schema_of(spec), dict, spec.__name__)
        raise ConfigError(
            f"response_format must be a JSON Schema dict, a dataclass or a TypedDict, got {spec!r}"
        )

    def parse(self, finish: AgentFinish) -> Any:
        """The validated answer; OutputParserError (sent back to the model) when it is not."""
        from agentcli.agents.parsers import ANSWER_VALUE

        values = finish.return_values
        value = values.get("structured_response", values.get(ANSWER_VALUE))
        if value is None:
            value = _json_in(finish.output)
        import jsonschema

        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(self.schema).iter_errors(value))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "the answer"
            raise OutputParserError(
                f"the answer does not match the schema at {where}: {error.message}",
                llm_output=finish.log or finish.output,
                observation=f"Your final answer does not match the required JSON Schema "
                f"({where}: {error.message}). Give the final answer again as one JSON object "
                "matching the schema.",
            )
        return self.build(value)


def _build_dataclass(cls: type, value: Any) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, item in dict(value).items():
        hint = hints.get(name)
        nested = isinstance(hint, type) and dataclasses.is_dataclass(hint)
        kwargs[name] = _build_dataclass(hint, item) if nested else item  # type: ignore[arg-type]
    return cls(**kwargs)


def _json_in(text: str) -> Any:
    """The JSON value in an answer (a bare object, or one in a code fence)."""
    from agentcli.agents.parsers import maybe_json

    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        value = maybe_json(stripped)
    if not isinstance(value, dict | list):
        raise OutputParserError(
            "the final answer is not JSON", llm_output=text,
            observation="Your final answer must be one JSON object matching the required "
            "schema, with no other text. Give the final answer again.",
        )
    return value


def check_schema(schema: Mapping[str, Any], source: str = "response_format") -> None:
    """Refuse a schema that is not valid JSON Schema, naming what is wrong."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "the top level"
        raise ConfigError(
            f"{source} is not a valid JSON Schema ({where}: {err.message}); fix the schema"
        ) from None
