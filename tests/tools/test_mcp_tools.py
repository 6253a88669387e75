"""MCP servers over stdio: tools appear as server.tool with their schema and can be called."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.tools import load_tools, registry
from agentcli.tools.mcp_tools import _CONNECTIONS, check_servers, register_mcp_servers
from agentcli.tools.registry import _REGISTRY

pytest.importorskip("mcp")
SERVER = str(Path(__file__).parent / "fixtures" / "mcp_server.py")


@pytest.fixture
def mcp_registered(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TEST_MCP_SECRET", "from-parent")
    before = dict(registry())
    servers = check_servers({"calc": {"command": sys.executable, "args": [SERVER],
                                      "env": {"GREETING": "hi ${TEST_MCP_SECRET}"}}})
    names = register_mcp_servers(servers)
    yield names
    _REGISTRY.clear()
    _REGISTRY.update(before)
    for conn in list(_CONNECTIONS.values()):
        conn.close()
    _CONNECTIONS.clear()


def test_mcp_tools_listed_with_schema_and_called(mcp_registered: list[str]) -> None:
    assert sorted(mcp_registered) == ["calc.add", "calc.echo_env", "calc.fail"]
    assert registry()["calc.add"].source == "MCP"
    tools = {t.name: t for t in load_tools(["calc"])}
    add = tools["calc.add"]
    assert add.args_schema is not None and set(add.args_schema["properties"]) == {"a", "b"}
    assert add.run({"a": 2, "b": 40}) == "42"
    assert add.run('{"a": "1", "b": 2}') == "3"
    assert tools["calc.echo_env"].run("GREETING") == "hi from-parent"
    assert tools["calc.echo_env"].run("TEST_MCP_SECRET") == "<unset>"
    with pytest.raises(ToolInputError, match=r"calc\.fail failed"):
        tools["calc.fail"].run("boom")


def test_mcp_server_that_cannot_start() -> None:
    with pytest.raises(ToolLoadError, match=r"MCP server .broken. did not start"):
        register_mcp_servers({"broken": {"command": "/nonexistent/mcp-server", "timeout": 10}})


def test_mcp_missing_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(ToolLoadError, match=r"pip install 'agentcli\[mcp\]'"):
        register_mcp_servers({"x": {"command": "true"}})
