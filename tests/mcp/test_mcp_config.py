"""MCP settings: both config formats, .mcp.json, env references, and one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_helpers import agent

from agentcli.config import load_settings
from agentcli.errors import ConfigError
from agentcli.mcp.config import expand_vars, server_configs
from tests.support.zygote import server_command


def test_transports_timeouts_and_overrides() -> None:
    confs = server_configs({
        "a": {"command": "node", "args": ["x.js"], "timeout": 5},
        "b": {"url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer ${T}"}},
        "c": {"type": "sse", "url": "http://127.0.0.1:3001/events", "startup_timeout": 3,
              "call_timeout": 90, "tools": {"x": "dangerous"}, "dangerous": False},
        "d": {"url": "http://127.0.0.1:3001/sse"},
        "e": {"type": "streamableHttp", "url": "https://example.com/mcp"},
    })
    assert [c.transport for c in confs.values()] == ["stdio", "http", "sse", "sse", "http"]
    assert (confs["a"].startup_timeout, confs["a"].call_timeout) == (5, 5)
    assert (confs["c"].startup_timeout, confs["c"].call_timeout) == (3, 90)
    assert confs["c"].tool_danger == (("x", True),) and confs["c"].dangerous is False
    assert confs["b"].headers == (("Authorization", "Bearer ${T}"),)  # expanded only on connect
    assert confs["a"].digest() != server_configs({"a": {"command": "node"}})["a"].digest()


def test_env_references() -> None:
    env = {"TOKEN": "s3cret"}
    assert expand_vars("Bearer ${TOKEN}", "h", env) == "Bearer s3cret"
    assert expand_vars("${MISSING:-fallback}", "h", env) == "fallback"
    with pytest.raises(ConfigError, match=r"header Authorization .* uses \$\{NOPE\}, which is not"):
        expand_vars("Bearer ${NOPE}", "header Authorization of MCP server 'x'", env)


@pytest.mark.parametrize(("servers", "message"), [
    ({"x": {"args": ["a"]}}, "needs a 'command' (stdio) or a 'url'"),
    ({"x": {"url": "ftp://host/x"}}, "needs a 'url' like http://"),
    ({"x": {"url": "not a url"}}, "needs a 'url' like http://"),
    ({"x": {"url": "http://h/mcp", "headers": ["Authorization: x"]}}, "headers must be a mapping"),
    ({"x": {"url": "http://h/mcp", "headers": {"A": True}}}, "headers must be a mapping"),
    ({"x": {"command": "n", "args": "a b"}}, "args must be a list of strings"),
    ({"x": {"command": "n", "type": "websocket"}}, "type must be one of stdio, http, sse"),
    ({"x": {"command": "n", "call_timeout": 0}}, "call_timeout must be a number of seconds"),
    ({"x": {"command": "n", "tools": {"t": "maybe"}}}, "tool: dangerous|safe"),
    ({"x": {"command": "n", "comand": "n"}}, "unknown setting(s) ['comand']"),
    ({"bad name!": {"command": "n"}}, "must be 1-40 letters"),
])
def test_bad_servers_are_one_line_errors(servers: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        server_configs(servers)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_mcp_servers_key_of_other_clients_and_project_file(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"mcp_servers": {"ours": {"command": "a"}},
                               "mcpServers": {"theirs": {"type": "http",
                                                         "url": "http://127.0.0.1:1/mcp"}}}))
    settings = load_settings(cfg, env={})
    assert sorted(settings.mcp_servers) == ["ours", "theirs"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "proj": {"command": "p"}, "ours": {"command": "from-project"}}}))
    confs = server_configs(settings)
    assert sorted(confs) == ["ours", "proj", "theirs"]
    assert confs["ours"].command == "a"  # the YAML wins over .mcp.json
    cfg.write_text(json.dumps({"mcp_servers": {"x": {"command": "a"}},
                               "mcpServers": {"x": {"command": "b"}}}))
    with pytest.raises(ConfigError, match=r"\['x'\] appear in both mcp_servers and mcpServers"):
        load_settings(cfg, env={})
    (tmp_path / ".mcp.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"\.mcp\.json: not valid JSON"):
        server_configs(load_settings(None, env={}))


@pytest.mark.parametrize(("config", "args", "message"), [
    ({"mcp_servers": {"ev": {"command": "node"}}}, ["mcp", "tools", "nope"],
     "unknown MCP server 'nope'; configured: ev"),
    ({"mcp_servers": {"ev": {"args": ["x"]}}}, ["mcp", "list"], "needs a 'command'"),
    ({"mcp_servers": {"ev": {"url": "localhost:3001"}}}, ["tools", "list"], "needs a 'url' like"),
    ({"mcp_servers": {"ev": {"url": "http://127.0.0.1:9/mcp", "headers": "Bearer x"}}},
     ["mcp", "list"], "headers must be a mapping"),
    ({"mcp_servers": {"ev": {"command": "/nonexistent/server"}}}, ["mcp", "tools", "ev"],
     "MCP server 'ev' did not start (/nonexistent/server)"),
    ({"mcp_servers": {"ev": {"url": "http://127.0.0.1:9/mcp", "startup_timeout": 5}}},
     ["mcp", "tools", "ev"], "MCP server 'ev' did not start (http://127.0.0.1:9/mcp)"),
])
def test_cli_bad_input_exit_2(tmp_path: Path, config: dict[str, object], args: list[str],
                              message: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(config))
    proc = agent(*args, "-c", str(cfg))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    flat = " ".join(proc.stderr.split())
    assert message in flat and "Traceback" not in proc.stderr


def test_annotations_of_untrusted_server_are_hints_only(tmp_path: Path) -> None:
    """Issue 20 item 15: readOnlyHint from an untrusted server does not skip approval."""

    server = Path(__file__).parent.parent / "tools" / "fixtures" / "mcp_server.py"
    calc = {**server_command(str(server))}
    cfg = tmp_path / "c.yaml"
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    for extra, gated in (({}, True), ({"trusted": True}, False), ({"dangerous": False}, False)):
        cfg.write_text(json.dumps({"mcp_servers": {"calc": {**calc, **extra}}}))
        proc = agent("tools", "show", "calc.add", "-c", str(cfg), env=env)
        assert proc.returncode == 0, proc.stderr
        assert ("dangerous: yes" in proc.stdout) is gated, (extra, proc.stdout)
        if gated:
            assert "readOnlyHint" in proc.stdout and "untrusted" in proc.stdout
    cfg.write_text(json.dumps({"mcp_servers": {"calc": {**calc, "trusted": "yes"}}}))
    proc = agent("tools", "show", "calc.add", "-c", str(cfg), env=env)
    assert proc.returncode == 2 and "trusted must be true or false" in proc.stderr
