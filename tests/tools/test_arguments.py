"""The coercion pass and the one jsonschema check of tool arguments (issue 31 item 2)."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.errors import ToolInputError
from agentcli.tools.arguments import STRING_SCHEMA, prepare, string_schema

CALC = string_schema("The calculation.")
AREA = {"type": "object", "required": ["width"], "properties": {
    "width": {"type": "number"}, "height": {"type": "number"},
    "count": {"type": "integer"}, "exact": {"type": "boolean"}}}


@pytest.mark.parametrize(("given", "expected"), [
    ("120 / 4", {"input": "120 / 4"}),
    ({"input": "120 / 4", "required": ["input"]}, {"input": "120 / 4"}),
    ({"input": "120 / 4", "type": "object", "title": "x", "description": "d",
      "properties": {}}, {"input": "120 / 4"}),
    ({"input": "2 + 2", "noise": 1}, {"input": "2 + 2"}),  # its one argument, plus noise
    ({"expression": "2 + 2"}, {"input": "2 + 2"}),  # one other key holding text
    ('{"input": "3 * 4"}', {"input": "3 * 4"}),
    ({"input": 15}, {"input": "15"}),  # a number where the schema says string
])
def test_a_single_argument_tool_gets_its_argument(given: Any, expected: Any) -> None:
    assert prepare("Calculator", CALC, given) == expected


def test_numeric_strings_become_numbers_where_the_schema_says_number() -> None:
    assert prepare("area", AREA, {"width": "2.5", "count": "3", "exact": "true"}) == {
        "width": 2.5, "count": 3, "exact": True}
    assert prepare("area", AREA, "4") == {"width": 4.0}  # the one required argument
    assert prepare("area", AREA, {"width": 2, "required": ["width"]}) == {"width": 2}


@pytest.mark.parametrize(("given", "shape"), [
    ({"input": {"type": "string", "description": "7 cakes, 250 grams per cake"}},
     '{"input": "7 cakes, 250 grams per cake"}'),
    ({"type": "string", "description": "3 * 4"}, '{"input": "3 * 4"}'),
    ({"a": "1", "b": "2"}, '{"input": "<the calculation>"}'),
    ({"input": ["1", "2"]}, '{"input": "<the calculation>"}'),
])
def test_a_schema_as_value_or_a_mismatch_gets_the_exact_shape(given: Any, shape: str) -> None:
    with pytest.raises(ToolInputError) as info:
        prepare("Calculator", CALC, given)
    message = str(info.value)
    assert "\n" not in message and "input (string, required)" in message
    assert message.endswith(f"send the arguments as {shape}")


def test_a_dict_is_never_turned_into_text() -> None:
    with pytest.raises(ToolInputError):
        prepare("shout", STRING_SCHEMA, {"input": {"nested": "x"}})


@pytest.mark.parametrize(("given", "reason"), [
    ({"height": 2}, "missing required argument 'width'"),
    ({"width": 1, "depth": 2}, "unknown argument(s) ['depth']"),
    ({"width": "wide"}, "argument 'width' must be number"),
])
def test_what_is_wrong_is_named_with_the_arguments(given: Any, reason: str) -> None:
    with pytest.raises(ToolInputError) as info:
        prepare("area", AREA, given)
    assert str(info.value).startswith(f"area: {reason}; it takes width (number, required), "
                                      "height (number), count (integer), exact (boolean)")


def test_a_catastrophic_or_broken_pattern_is_a_clear_refusal_not_a_hang() -> None:
    from agentcli.type_schema import best_error

    slow = best_error({"type": "string", "pattern": "(a|aa)+$"}, "a" * 60 + "!")
    assert slow is not None and "took over 1 s to check" in slow.message
    broken = best_error({"type": "string", "pattern": "\\c"}, "x")
    assert broken is not None and "is not a regular expression" in broken.message
    key = best_error({"type": "object", "patternProperties": {"(a|aa)+$": {}},
                      "additionalProperties": False}, {"a" * 60 + "!": 1})
    assert key is not None and "took over 1 s to check" in key.message
    assert best_error({"type": "string", "pattern": "^a+$"}, "aaa") is None
    nested = best_error({"type": "string", "pattern": "(a+)+$"}, "a" * 60 + "!")  # the issue's
    assert nested is not None and "does not match" in nested.message  # at once, no hang
