"""resolve_tools: every source by name, display names, lazy MCP servers, clear errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentcli.config import Settings
from agentcli.errors import ToolLoadError
from agentcli.mcp.config import parse_server
from agentcli.mcp.pool import close_all
from agentcli.models.fake import FakeChatModel
from agentcli.tools import load_tools
from agentcli.tools.mcp import cached_tools
from agentcli.tools.resolve import build_catalog, check_names, resolve_tools
from agentcli.tools.yaml_tools import check_definitions
from tests.support.zygote import server_command

ECHO_SERVER = str(Path(__file__).parent / "fixtures" / "mcp_echo_server.py")


@pytest.fixture
def mcp_closed() -> Any:
    yield
    close_all()


def settings(**kw: Any) -> Settings:
    return replace(Settings(), **kw)


def yaml_tool(name: str, **kw: Any) -> dict[str, Any]:
    return check_definitions([{"name": name, "kind": "command", "argv": ["true"], **kw}])[0]


def test_display_name_and_registry_name() -> None:
    llm = FakeChatModel([])
    [a] = resolve_tools(["Calculator"], llm=llm)
    [b] = resolve_tools(["llm-math"], llm=llm)
    assert a.name == b.name == "Calculator"
    assert load_tools(["Calculator"], llm)[0].run("2+2") == "Answer: 4"


def test_unknown_names_suggest() -> None:
    with pytest.raises(ToolLoadError, match=r"unknown tool 'wikipedai'; did you mean wikipedia"):
        check_names(["wikipedai"])
    with pytest.raises(ToolLoadError, match=r"no MCP server 'fs' is configured \(configured: "
                                            r"none\)"):
        resolve_tools(["fs.read_file"])


def test_yaml_tools_resolve_without_global_registration() -> None:
    s = settings(yaml_tools=[yaml_tool("noop", dangerous=False)])
    [t] = resolve_tools(["noop"], s)
    assert t.source == "YAML"
    with pytest.raises(ToolLoadError, match="unknown tool 'noop'"):
        resolve_tools(["noop"])  # another command without that config does not see it


def test_duplicate_names_across_sources(tmp_path: Path) -> None:
    with pytest.raises(ToolLoadError, match="'terminal' is defined twice, as a built-in tool "
                                            "and as a YAML tool"):
        build_catalog(settings(yaml_tools=[yaml_tool("terminal")]))
    module = tmp_path / "m.py"
    module.write_text("from agentcli import tool\n\n@tool\ndef noop(x: str) -> str:\n"
                      '    """No-op."""\n    return x\n')
    with pytest.raises(ToolLoadError, match="'noop' is defined twice, as a YAML tool and as a "
                                            "--tools-module tool"):
        build_catalog(settings(yaml_tools=[yaml_tool("noop")], tools_module=[str(module)]))
    with pytest.raises(ToolLoadError, match="MCP server name 'wikipedia' is also the name of "
                                            "a built-in tool"):
        build_catalog(settings(mcp_servers={"wikipedia": {"command": "x"}}))


def test_mcp_is_lazy_and_cached(tmp_path: Path, mcp_closed: None) -> None:
    marker = tmp_path / "marker"
    conf = {**server_command(ECHO_SERVER), "env": {"MARKER_FILE": str(marker)},
            "trusted": True}
    broken = {"command": str(tmp_path / "no-such-server")}
    s = settings(mcp_servers={"ev": conf, "broken": broken})
    assert resolve_tools(["current_datetime"], s)[0].name == "current_datetime"
    assert not marker.exists() and cached_tools(parse_server("ev", conf)) is None
    [echo] = resolve_tools(["ev.echo"], s)  # the broken server is never started
    assert echo.run({"text": "x"}) == "echo: x" and echo.source == "MCP"
    assert marker.read_text() == "started\n"
    assert [i.name for i in cached_tools(parse_server("ev", conf)) or []] == ["echo", "shout"]
    assert [t.name for t in load_tools(["ev"], config=s)] == ["ev.echo", "ev.shout"]
    assert marker.read_text() == "started\n"  # one process keeps one session per server
    other = parse_server("ev", {**conf, "timeout": 5})
    assert cached_tools(other) is None  # another config: not cached


def test_allow_by_server_name(tmp_path: Path, mcp_closed: None) -> None:
    conf = {**server_command(ECHO_SERVER), "dangerous": True}
    s = settings(mcp_servers={"ev": conf})
    with pytest.raises(ToolLoadError, match=r"'ev.echo' \(from MCP server 'ev'\) is dangerous.*"
                                            r"--allow ev "):
        resolve_tools(["ev.echo"], s)
    assert [t.name for t in resolve_tools(["ev"], s, allow=["ev"])] == ["ev.echo", "ev.shout"]
    assert resolve_tools(["ev.echo"], s, allow=["ev.echo"])[0].dangerous


def test_module_tools_load_without_being_named(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from agentcli import tool\n\n@tool\ndef noop(x: str) -> str:\n"
                      '    """No-op."""\n    return x\n')
    s = settings(tools_module=[str(module)])
    assert [t.name for t in resolve_tools([], s)] == ["noop"]
    assert resolve_tools([], s, with_module_tools=False) == []
    assert json.loads(json.dumps([t.to_openai() for t in resolve_tools(["noop"], s)]))


def test_unknown_tool_of_a_server_also_named_whole(tmp_path: Path, mcp_closed: None) -> None:
    # the server is named too, so it starts with every tool: the typo is matched against them
    conf = {**server_command(ECHO_SERVER), "trusted": True}
    s = settings(mcp_servers={"ev": conf}, allow_dangerous_tools=True)
    with pytest.raises(ToolLoadError, match=r"MCP server 'ev' has no tool 'ecko'; did you mean "
                                            r"ev\.echo"):
        resolve_tools(["ev", "ev.ecko"], s)
