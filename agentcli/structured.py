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
from typing import Any

from agentcli.agents.parsers import ANSWER_VALUE, maybe_json
from agentcli.errors import ConfigError, OutputParserError
from agentcli.records import record
from agentcli.schema import AgentFinish
from agentcli.type_schema import best_error, schema_of


@record
class ResponseFormat:
    """The shape of a structured answer and how to build the value the caller gets."""

    schema: dict[str, Any]
    build: Callable[[Any], Any] = lambda value: value
    name: str = "answer"

    @classmethod
    def of(cls, spec: ResponseFormat | Mapping[str, object] | type) -> ResponseFormat:
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
        if typing.is_typeddict(spec):
            return cls(schema_of(spec), dict, spec.__name__)
        raise ConfigError(
            f"response_format must be a JSON Schema dict, a dataclass or a TypedDict, got {spec!r}"
        )

    def parse(self, finish: AgentFinish) -> Any:
        """The validated answer; OutputParserError (sent back to the model) when it is not."""
        values = finish.return_values
        value = values.get("structured_response", values.get(ANSWER_VALUE))
        if value is None:
            value = _json_in(finish.output)
        try:
            error = best_error(self.schema, value)
        except RecursionError:
            raise OutputParserError(
                "the answer is nested too deeply to check", llm_output=finish.output,
                observation="Your final answer is nested too deeply; give a flatter JSON "
                "object matching the schema.") from None
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

    def answer(self, finish: AgentFinish, values: dict[str, object]) -> AgentFinish:
        """The run's answer checked against the schema (else OutputParserError): the value goes
        to ``values["structured_response"]``, and an answer given as the whole object (not one
        of its fields) becomes its JSON text."""
        values["structured_response"] = self.parse(finish)
        raw = finish.return_values.get(ANSWER_VALUE)
        if raw is None:
            return finish
        return AgentFinish({**finish.return_values, "output": json.dumps(raw, ensure_ascii=False)},
                           finish.log)


def _build_dataclass(cls: type, value: Mapping[str, object]) -> object:
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, item in dict(value).items():
        hint = hints.get(name)
        nested = isinstance(hint, type) and dataclasses.is_dataclass(hint)
        kwargs[name] = _build_dataclass(hint, item) if nested else item  # type: ignore[arg-type]
    return cls(**kwargs)


def _json_in(text: str) -> object:
    """The JSON value in an answer (a bare object, or one in a code fence)."""
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


def check_schema(schema: Mapping[str, object], source: str = "response_format") -> None:
    """Refuse a schema that is not valid JSON Schema, or whose ``$ref`` points outside itself
    or only round in a circle, naming what is wrong."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "the top level"
        raise ConfigError(
            f"{source} is not a valid JSON Schema ({where}: {err.message}); fix the schema"
        ) from None
    except RecursionError:
        raise ConfigError(f"{source} is nested too deeply; flatten the schema") from None
    for ref in _refs(schema):
        if not ref.startswith("#"):
            raise ConfigError(f"{source}: $ref {ref!r} points outside the schema; references "
                              "are resolved inside it only (use #/$defs/NAME)")
        seen: list[str] = []
        at: object = ref
        while isinstance(at, str) and at.startswith("#"):  # follow it to a real schema
            if at in seen:
                raise ConfigError(f"{source}: $ref {seen[0]!r} only refers round in a circle "
                                  f"({' -> '.join([*seen, at])}); point it at a real schema")
            seen.append(at)
            target = _pointer(schema, at, source)
            at = target.get("$ref") if isinstance(target, dict) else None


def _refs(node: object, depth: int = 0) -> list[str]:
    if depth > 200:
        return []
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v, depth + 1)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v, depth + 1)]
    return []


def _pointer(schema: Mapping[str, object], ref: str, source: str) -> object:
    from urllib.parse import unquote

    node: object = schema
    for part in [p for p in ref[1:].split("/") if p]:
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise ConfigError(f"{source}: $ref {ref!r} names nothing in the schema; fix it")
    return node
