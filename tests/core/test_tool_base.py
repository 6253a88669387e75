"""Tool and @tool: schemas from signatures, input mapping and validation."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest

from agentcli.errors import ToolInputError
from agentcli.tools import tool


@tool
def shout(text: str) -> str:
    """Shout the text back in capitals."""
    return text.upper()


@tool(return_direct=True)
def area(width: float, height: float = 1.0, unit: Literal["m", "cm"] = "m") -> str:
    """Area of a rectangle.

    Args:
        width: the width
        height: the height
        unit: the unit of both sides
    """
    return f"{width * height}{unit}2"


@tool
async def later(text: str) -> str:
    """Answer asynchronously."""
    return f"later {text}"


def test_single_input_tool() -> None:
    assert shout.description == "Shout the text back in capitals."
    assert shout.args_schema is None
    assert shout.run("hi") == "HI"
    assert shout.run({"text": "dict"}) == "DICT"


def test_structured_schema_from_signature_and_docstring() -> None:
    schema = area.args_schema
    assert schema is not None
    assert schema["required"] == ["width"]
    assert schema["properties"]["width"] == {"type": "number", "description": "the width"}
    assert schema["properties"]["unit"]["enum"] == ["m", "cm"]
    assert area.return_direct
    assert area.description == "Area of a rectangle."


def test_structured_inputs() -> None:
    assert area.run({"width": "2", "height": 3}) == "6.0m2"
    assert area.run('{"width": 2}') == "2.0m2"
    with pytest.raises(ToolInputError, match="missing required argument"):
        area.run({"height": 2})
    with pytest.raises(ToolInputError, match="unknown argument"):
        area.run({"width": 1, "depth": 2})
    with pytest.raises(ToolInputError, match="'width' must be number"):
        area.run({"width": "wide"})


def test_plain_string_maps_onto_one_required_argument() -> None:
    assert area.run("4") == "4.0m2"


def test_async_tool_runs_both_ways() -> None:
    assert asyncio.run(later.arun("x")) == "later x"
    assert later.run("y") == "later y"


def test_openai_schema() -> None:
    fn = shout.to_openai()["function"]
    assert fn["name"] == "shout"
    assert fn["parameters"]["required"] == ["input"]
