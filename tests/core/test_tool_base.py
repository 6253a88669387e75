"""Tool and @tool: schemas from signatures, input mapping and validation."""

from __future__ import annotations

import asyncio
import threading
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


def test_an_async_tool_checks_a_flat_schema_on_its_loop_and_a_pattern_off_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern may take up to its time limit to check, so that check leaves the event loop
    (other runs share it); a flat schema's check is quick and needs no thread hop."""
    from agentcli.tools.base import Tool
    from agentcli.type_schema import is_flat

    async def echo(*args: object, **kwargs: object) -> str:
        return repr([*args, *sorted(kwargs.items())])

    where: list[str] = []
    real = Tool.prepare_input

    def watched(self: Tool, tool_input: object) -> object:
        where.append(threading.current_thread().name)
        return real(self, tool_input)  # type: ignore[arg-type]

    monkeypatch.setattr(Tool, "prepare_input", watched)
    flat = {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}},
            "required": ["n"]}
    patterned = {"type": "object", "properties": {"code": {"type": "string",
                                                           "pattern": "^[A-Z]+$"}}}
    assert is_flat(flat) and not is_flat(patterned) and is_flat({"type": "string"})

    async def both() -> list[str]:
        loop_thread = threading.current_thread().name
        got = [await Tool("flat", "d", coroutine=echo, args_schema=flat).ainvoke({"n": 2}),
               await Tool("pat", "d", coroutine=echo, args_schema=patterned).ainvoke(
                   {"code": "AB"}),
               await Tool("text", "d", coroutine=echo).ainvoke("hello")]
        assert got == ["[('n', 2)]", "[('code', 'AB')]", "['hello']"]
        return [loop_thread]

    loop_thread = asyncio.run(both())[0]
    assert where[0] == loop_thread and where[2] == loop_thread
    assert where[1] != loop_thread
