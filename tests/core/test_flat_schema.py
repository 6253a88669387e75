"""The flat-schema front step of ``type_schema.best_error`` never accepts what jsonschema
refuses, and it settles the schemas a plain run checks (tool arguments, state fields)."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import pytest

from agentcli.state import StateField
from agentcli.tools.arguments import STRING_SCHEMA
from agentcli.type_schema import best_error, json_type, plainly_valid

_TYPE_NAMES = ["object", "array", "string", "integer", "number", "boolean", "null"]
_SCALARS: list[Any] = [0, 1, -3, 2.0, 2.5, float("nan"), True, False, None, "", "a", "1",
                       "true", "null"]
_KEYS = ["a", "b", "input", "1"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 2 and roll < 0.3:
        return {k: _value(rng, depth + 1) for k in rng.sample(_KEYS, rng.randint(0, 3))}
    if depth < 2 and roll < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    return rng.choice(_SCALARS)


def _schema(rng: random.Random, depth: int = 0) -> Any:
    """A random schema: mostly flat keywords, sometimes odd values or keywords the front
    step does not read (those must go to jsonschema)."""
    if rng.random() < 0.03:
        return rng.choice([True, False])
    out: dict[str, Any] = {}
    if rng.random() < 0.7:
        names = rng.sample(_TYPE_NAMES, rng.randint(0, 3))
        out["type"] = names[0] if len(names) == 1 and rng.random() < 0.6 else names
    if rng.random() < 0.25:
        out["enum"] = [_value(rng, 2) for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.4:
        out["required"] = rng.sample(_KEYS, rng.randint(0, 2))
    if depth < 2 and rng.random() < 0.5:
        out["properties"] = {k: _schema(rng, depth + 1)
                             for k in rng.sample(_KEYS, rng.randint(0, 3))}
    if rng.random() < 0.4:
        out["additionalProperties"] = rng.choice([True, False, {"type": "string"}])
    if rng.random() < 0.2:
        out["description"] = "annotation"
    if rng.random() < 0.08:
        key, want = rng.choice([("minimum", 1), ("maxLength", 1), ("const", "a"),
                                ("items", {"type": "integer"}), ("pattern", "^a")])
        out[key] = want
    return out


def test_the_front_step_never_accepts_what_jsonschema_refuses() -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    settled = refused_by_jsonschema = 0
    for _ in range(8_000):
        schema, value = _schema(rng), _value(rng)
        expected = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(schema).iter_errors(value))
        refused_by_jsonschema += expected is not None
        if plainly_valid(schema, value):
            settled += 1
            assert expected is None, f"seed {seed}: front step accepted {value!r} for {schema!r}"
        got = best_error(schema, value)
        assert (got and got.message) == (expected and expected.message), (seed, schema, value)
    # the pairs test both sides: many settled by the front step, many refused by jsonschema
    assert settled > 800 and refused_by_jsonschema > 800, (settled, refused_by_jsonschema)


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "integer"}, 3.0), ({"type": "number"}, True), ({"enum": [1]}, 1.0),
    ({"enum": [1]}, True), ({"type": "string", "minLength": 2}, "abc"),
    ({"properties": {"a": {"pattern": "x"}}}, {"a": "x"}), ({"type": "strnig"}, "a"),
])
def test_what_the_front_step_does_not_read_is_jsonschemas_to_decide(schema: Any,
                                                                    value: Any) -> None:
    assert not plainly_valid(schema, value)


def test_a_plain_run_s_schemas_are_settled_without_jsonschema() -> None:
    checked = {**STRING_SCHEMA, "additionalProperties": False}
    assert plainly_valid(checked, {"input": "300 * 0.25"})
    assert plainly_valid(json_type(dict), {"messages": []})
    assert not plainly_valid(checked, {"input": 3})


def test_messages_on_failure_are_jsonschemas() -> None:
    error = best_error({**STRING_SCHEMA, "additionalProperties": False}, {})
    assert error is not None and error.message == "'input' is a required property"
    with pytest.raises(Exception, match="must be"):
        StateField("n", int).check("seven", "input field")
