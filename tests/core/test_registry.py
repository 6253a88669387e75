"""load_tools: names, groups, needs and the dangerous-tools gate."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.errors import ToolLoadError
from agentcli.models.fake import FakeChatModel
from agentcli.tools import Tool, ToolNeeds, ToolSpec, load_tools, registry

FAKE = [  # a caller's own specs: they belong to the load_tools call that is handed them
    ToolSpec("zap", lambda **_: Tool("zap", "zaps"), "zaps things", dangerous=True,
             danger_reason="it deletes files"),
    ToolSpec("zip", lambda **_: Tool("zip", "zips"), "zips", dangerous=True,
             danger_reason="it writes files"),
    ToolSpec("z_all", None, "all z tools", dangerous=True, members=("zap", "zip")),
    ToolSpec("needs_url", lambda url, **_: Tool("needs_url", url), "uses a url",
             needs=ToolNeeds(settings=("url",))),
]


def _load(names: list[str], **options: Any) -> list[Tool]:
    return load_tools(names, specs=FAKE, **options)


def test_a_callers_specs_are_its_own_and_the_built_in_table_is_read_only() -> None:
    """Two callers in one process: one loads its own tools by name, the other never sees
    them, and nobody can add to the built-in table."""
    assert [t.name for t in _load(["zap"], allow=["zap"])] == ["zap"]
    with pytest.raises(ToolLoadError, match="unknown tool 'zap'"):
        load_tools(["zap"], allow=["zap"])
    assert "zap" not in registry()
    with pytest.raises(TypeError):
        registry()["zap"] = FAKE[0]  # type: ignore[index]


def test_llm_math_needs_llm() -> None:
    with pytest.raises(ToolLoadError, match="'llm-math' needs a language model"):
        load_tools(["llm-math"])
    [calc] = load_tools(["llm-math"], llm=FakeChatModel([]))
    assert calc.name == "Calculator"


def test_unknown_tool_suggests_close_match() -> None:
    with pytest.raises(ToolLoadError, match=r"unknown tool 'llm_math'; did you mean llm-math\?"):
        load_tools(["llm_math"], llm=FakeChatModel([]))


def test_dangerous_refused_with_reason_and_flag() -> None:
    with pytest.raises(ToolLoadError) as info:
        _load(["zap"])
    msg = str(info.value)
    assert "'zap' is dangerous" in msg and "deletes files" in msg
    assert "--allow zap" in msg and "--allow-dangerous-tools" in msg


def test_dangerous_allowed_globally_or_by_name() -> None:
    assert [t.name for t in _load(["zap"], allow_dangerous_tools=True)] == ["zap"]
    assert [t.name for t in _load(["zap"], allow=["zap"])] == ["zap"]
    with pytest.raises(ToolLoadError, match="'zip' is dangerous"):
        _load(["zap", "zip"], allow=["zap"])
    assert _load(["zap"], allow_dangerous_tools=True)[0].dangerous


def test_group_expands_and_is_gated() -> None:
    with pytest.raises(ToolLoadError, match="from group 'z_all'"):
        _load(["z_all"])
    assert [t.name for t in _load(["z_all"], allow=["z_all"])] == ["zap", "zip"]
    assert [t.name for t in _load(["zap", "z_all"], allow_dangerous_tools=True)] == [
        "zap", "zip",
    ]


def test_missing_setting_is_named() -> None:
    with pytest.raises(ToolLoadError, match="needs the setting\\(s\\) url"):
        _load(["needs_url"])
    assert _load(["needs_url"], url="http://x")[0].description == "http://x"
