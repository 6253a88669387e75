"""Function names sent to models: valid for OpenAI-style APIs, unique, and mapped back."""

from __future__ import annotations

import pytest

from agentcli.errors import ToolLoadError
from agentcli.tools import Tool
from agentcli.tools.naming import (
    VALID_NAME,
    check_wire_names,
    readable_name,
    tool_lookup,
    wire_name,
)


@pytest.mark.parametrize(("name", "wire"), [
    ("llm-math", "llm-math"), ("ev.echo", "ev__echo"), ("fs.read_text_file", "fs__read_text_file"),
    ("my tool/v2", "my_tool_v2"), ("Ünïcode", "_n_code"), ("", "tool"),
])
def test_wire_name(name: str, wire: str) -> None:
    assert wire_name(name) == wire
    assert VALID_NAME.fullmatch(wire_name(name))


def test_long_names_are_cut_and_stay_distinct() -> None:
    a, b = "srv." + "x" * 80 + "a", "srv." + "x" * 80 + "b"
    assert len(wire_name(a)) == 64 and VALID_NAME.fullmatch(wire_name(a))
    assert wire_name(a) != wire_name(b)
    assert wire_name(a) == wire_name(a)  # deterministic across runs


def test_collision_after_sanitizing_is_one_clear_error() -> None:
    check_wire_names(["ev.echo", "ev.shout", "llm-math"])
    with pytest.raises(ToolLoadError, match=r"tools 'ev.echo' and 'ev__echo' both become "
                                             r"'ev__echo'"):
        check_wire_names(["ev.echo", "ev__echo"])


def test_lookup_by_either_name_and_back() -> None:
    echo = Tool("ev.echo", "Echo.", func=lambda s: s)
    calc = Tool("Calculator", "Math.", func=lambda s: s)
    lookup = tool_lookup([echo, calc])
    assert lookup["ev__echo"] is echo and lookup["ev.echo"] is echo
    assert lookup["Calculator"] is calc
    assert readable_name("ev__echo", lookup) == "ev.echo"
    assert readable_name("nope", lookup) == "nope"


def test_to_openai_sends_the_wire_name() -> None:
    schema = Tool("ev.echo", "Echo.", func=lambda s: s).to_openai()
    assert schema["function"]["name"] == "ev__echo"
