"""load_tools: names, groups, needs and the dangerous-tools gate."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentcli.errors import ToolLoadError
from agentcli.models.fake import FakeChatModel
from agentcli.tools import Tool, ToolNeeds, ToolSpec, load_tools, register_tool, registry
from agentcli.tools.registry import _REGISTRY


@pytest.fixture
def fake_tools() -> Iterator[None]:
    registry()
    specs = [
        ToolSpec("zap", lambda **_: Tool("zap", "zaps"), "zaps things", dangerous=True,
                 danger_reason="it deletes files"),
        ToolSpec("zip", lambda **_: Tool("zip", "zips"), "zips", dangerous=True,
                 danger_reason="it writes files"),
        ToolSpec("z_all", None, "all z tools", dangerous=True, members=("zap", "zip")),
        ToolSpec("needs_url", lambda url, **_: Tool("needs_url", url), "uses a url",
                 needs=ToolNeeds(settings=("url",))),
    ]
    for s in specs:
        register_tool(s, replace=True)
    yield
    for s in specs:
        _REGISTRY.pop(s.name, None)


def test_llm_math_needs_llm() -> None:
    with pytest.raises(ToolLoadError, match="'llm-math' needs a language model"):
        load_tools(["llm-math"])
    [calc] = load_tools(["llm-math"], llm=FakeChatModel([]))
    assert calc.name == "Calculator"


def test_unknown_tool_suggests_close_match() -> None:
    with pytest.raises(ToolLoadError, match=r"unknown tool 'llm_math'; did you mean llm-math\?"):
        load_tools(["llm_math"], llm=FakeChatModel([]))


@pytest.mark.usefixtures("fake_tools")
def test_dangerous_refused_with_reason_and_flag() -> None:
    with pytest.raises(ToolLoadError) as info:
        load_tools(["zap"])
    msg = str(info.value)
    assert "'zap' is dangerous" in msg and "deletes files" in msg
    assert "--allow zap" in msg and "--allow-dangerous-tools" in msg


@pytest.mark.usefixtures("fake_tools")
def test_dangerous_allowed_globally_or_by_name() -> None:
    assert [t.name for t in load_tools(["zap"], allow_dangerous_tools=True)] == ["zap"]
    assert [t.name for t in load_tools(["zap"], allow=["zap"])] == ["zap"]
    with pytest.raises(ToolLoadError, match="'zip' is dangerous"):
        load_tools(["zap", "zip"], allow=["zap"])
    assert load_tools(["zap"], allow_dangerous_tools=True)[0].dangerous


@pytest.mark.usefixtures("fake_tools")
def test_group_expands_and_is_gated() -> None:
    with pytest.raises(ToolLoadError, match="from group 'z_all'"):
        load_tools(["z_all"])
    assert [t.name for t in load_tools(["z_all"], allow=["z_all"])] == ["zap", "zip"]
    assert [t.name for t in load_tools(["zap", "z_all"], allow_dangerous_tools=True)] == [
        "zap", "zip",
    ]


@pytest.mark.usefixtures("fake_tools")
def test_missing_setting_is_named() -> None:
    with pytest.raises(ToolLoadError, match="needs the setting\\(s\\) url"):
        load_tools(["needs_url"])
    assert load_tools(["needs_url"], url="http://x")[0].description == "http://x"
