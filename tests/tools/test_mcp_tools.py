"""MCP over stdio against a small Python server: listing, calls, danger from annotations,
the tool-list cache, list_changed, stderr in start-up errors, reconnect after a crash."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.mcp import server_configs
from agentcli.mcp.cache import ToolInfo, cached_tools, log_path
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.connection import require_sdk
from agentcli.mcp.pool import get_connection
from agentcli.tools import ToolSpec, load_tools
from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.mcp import (
    RESOURCE_TOOL,
    list_tools,
    load_server_tools,
    tool_danger,
)
from tests.support.zygote import server_command

pytest.importorskip("mcp")
SERVER = str(Path(__file__).parent / "fixtures" / "mcp_server.py")
CALC = {**server_command(SERVER), "env": {"GREETING": "hi ${TEST_MCP_SECRET}"}}


# A server's tools as specs in a caller's own list, for load_tools(specs=...) (the CLI resolves
# MCP tools through agentcli.tools.resolve instead); the tests below reach the servers so.
def _register_server(conf: ServerConfig, infos: list[ToolInfo], into: list[ToolSpec]
                     ) -> list[str]:
    names, any_danger = [], False
    extra = [] if any(i.name == RESOURCE_TOOL for i in infos) else [RESOURCE_TOOL]
    for tool_name in [i.name for i in infos] + extra:
        info = next((i for i in infos if i.name == tool_name), None)
        dangerous, reason = tool_danger(conf, info) if info else (False, "")
        any_danger = any_danger or dangerous

        def factory(llm: Any = None, _n: str = tool_name, **settings: Any) -> list[Tool]:
            return load_server_tools(conf.name, conf, {_n})

        summary = (info.description if info else f"Read a resource of {conf.name} by URI")
        into.append(ToolSpec(f"{conf.name}.{tool_name}", factory, summary.split("\n")[0],
                             needs=ToolNeeds(extra="mcp"), dangerous=dangerous,
                             danger_reason=reason, source="MCP"))
        if info is not None or conf.resources:
            names.append(f"{conf.name}.{tool_name}")
    into.append(ToolSpec(conf.name, None, f"Group: every tool of MCP server {conf.name}",
                         members=tuple(names), dangerous=any_danger,
                         danger_reason="some of its tools are dangerous" if any_danger else "",
                         source="MCP"))
    return names


def _register_failure(conf: ServerConfig, err: ToolLoadError, into: list[ToolSpec]) -> None:
    def factory(llm: Any = None, **_: Any) -> Tool:
        raise err

    into.append(ToolSpec(conf.name, factory, f"MCP server {conf.name} (failed to start)",
                         needs=ToolNeeds(extra="mcp"), source="MCP"))


def start_each(confs: Mapping[str, ServerConfig]) -> dict[str, list[ToolInfo] | ToolLoadError]:
    """Start the servers side by side (as resolve_tools does); each result is its tools or its
    error."""
    def one(conf: ServerConfig) -> list[ToolInfo] | ToolLoadError:
        try:
            return get_connection(conf).tools
        except ToolLoadError as err:
            return err

    require_sdk()
    with ThreadPoolExecutor(max_workers=len(confs)) as threads:
        return dict(zip(confs, threads.map(one, confs.values()), strict=True))


def register_mcp_servers(servers: dict[str, dict[str, Any]], into: list[ToolSpec], *,
                         start: bool = True, warnings: list[str] | None = None) -> list[str]:
    """Put every server's tool specs (source MCP) in ``into``; return the tool names.

    Cached lists are used as they are; the other servers start in parallel when ``start``;
    ``warnings`` receives a line per server that did not start.
    """
    confs = server_configs(servers)
    names: list[str] = []
    missing = {}
    for name, conf in confs.items():
        cached = cached_tools(conf)
        if cached is None:
            missing[name] = conf
        else:
            names += _register_server(conf, cached, into)
    if missing and start:
        for name, result in start_each(missing).items():
            if isinstance(result, ToolLoadError):
                if warnings is not None:
                    warnings.append(str(result))
                _register_failure(missing[name], result, into)
            else:
                names += _register_server(missing[name], result, into)
    return names


@pytest.fixture(autouse=True)
def _fresh_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from agentcli.mcp import pool

    monkeypatch.setenv("TEST_MCP_SECRET", "from-parent")
    yield
    pool.close_all()


def test_tools_listed_with_schema_danger_and_called() -> None:
    mine: list[ToolSpec] = []  # this test's own tools: no process-wide registry
    names = register_mcp_servers({"calc": CALC}, mine)
    assert {"calc.add", "calc.echo_env", "calc.fail"} <= set(names)
    specs = {s.name: s for s in mine}
    assert specs["calc.add"].source == "MCP"
    # readOnlyHint from a server not marked trusted is a hint only: still gated
    assert specs["calc.add"].dangerous and "hint" in specs["calc.add"].danger_reason
    assert specs["calc.fail"].dangerous and "readOnlyHint" in specs["calc.fail"].danger_reason
    with pytest.raises(ToolLoadError, match=r"calc\.echo_env.*dangerous.*--allow"):
        load_tools(["calc.echo_env"], specs=mine)
    tools = {t.name: t for t in load_tools(["calc"], allow=["calc"], specs=mine)}
    add = tools["calc.add"]
    assert add.args_schema is not None and set(add.args_schema["properties"]) == {"a", "b"}
    assert add.run({"a": 2, "b": 40}) == "42"
    assert add.run('{"a": "1", "b": 2}') == "3"
    assert tools["calc.echo_env"].run("GREETING") == "hi from-parent"
    assert tools["calc.echo_env"].run("TEST_MCP_SECRET") == "<unset>"  # env is not inherited
    with pytest.raises(ToolInputError, match=r"calc\.fail failed: "):
        tools["calc.fail"].run("boom")


def test_config_overrides_win_over_annotations() -> None:
    conf = server_configs({"calc": {**CALC, "tools": {"add": "dangerous", "fail": "safe"}}})
    tools = {t.name: t for t in load_server_tools("calc", conf["calc"])}
    assert tools["calc.add"].dangerous and "config" in tools["calc.add"].danger_reason
    assert not tools["calc.fail"].dangerous
    safe = server_configs({"calc": {**CALC, "dangerous": False}})["calc"]
    assert not any(t.dangerous for t in load_server_tools("calc", safe))
    trusted = server_configs({"calc": {**CALC, "trusted": True}})["calc"]
    tools = {t.name: t for t in load_server_tools("calc", trusted)}
    assert not tools["calc.add"].dangerous  # readOnlyHint counts for a trusted server
    assert tools["calc.fail"].dangerous


def test_list_is_cached_per_config_and_refreshed_on_list_changed() -> None:
    conf = server_configs({"calc": CALC})["calc"]
    assert cached_tools(conf) is None
    first = [i.name for i in list_tools(conf)]
    assert "extra" not in first and cached_tools(conf) is not None
    other = server_configs({"calc": {**CALC, "args": [SERVER, "x"]}})["calc"]
    assert other.digest() != conf.digest() and cached_tools(other) is None
    grow = load_server_tools("calc", conf, {"grow"})[0]
    assert grow.run({}) == "grown"
    from agentcli.mcp.pool import get_connection

    conn = get_connection(conf)
    for _ in range(100):  # the notification is handled on the MCP loop
        if any(i.name == "extra" for i in conn.tools):
            break
        time.sleep(0.05)
    assert any(i.name == "extra" for i in conn.tools)
    cached = cached_tools(conf)  # the disk cache keeps what a fresh server lists
    assert cached is not None and "extra" not in [i.name for i in cached]


def test_resource_tool_and_prompt() -> None:
    conf = server_configs({"calc": CALC})["calc"]
    reader = load_server_tools("calc", conf, {"read_resource"})[0]
    assert reader.name == "calc.read_resource" and not reader.dangerous
    assert reader.run("test://greeting") == "hello from a resource"
    from agentcli.mcp.connection import run_sync
    from agentcli.mcp.pool import get_connection

    conn = get_connection(conf)
    resources = run_sync(conn.list_resources())
    assert [r["uri"] for r in resources] == ["test://greeting"]
    prompts = run_sync(conn.list_prompts())
    assert prompts[0]["name"] == "review"
    messages = run_sync(conn.get_prompt("review", {"topic": "tests"}))
    assert messages == [{"role": "user", "text": "Please review tests briefly."}]


def test_server_that_cannot_start_reports_its_stderr() -> None:
    bad = {"command": "sh", "args": ["-c", "echo 'fatal: no config here' >&2; exit 3"]}
    conf = server_configs({"broken": bad})["broken"]
    with pytest.raises(ToolLoadError) as err:
        load_server_tools("broken", conf)
    msg = str(err.value)
    assert "MCP server 'broken' did not start" in msg and "fatal: no config here" in msg
    assert "\n" not in msg and "TaskGroup" not in msg
    assert "fatal: no config here" in log_path("broken").read_text()


def test_missing_command_and_other_servers_keep_working() -> None:
    warned: list[str] = []
    mine: list[ToolSpec] = []
    names = register_mcp_servers({
        "broken": {"command": "/nonexistent/mcp-server", "startup_timeout": 10},
        "calc": CALC,
    }, mine, warnings=warned)
    assert any("'broken' did not start" in w and "/nonexistent/mcp-server" in w
               for w in warned)
    assert "calc.add" in names
    assert load_tools(["calc.add"], allow=["calc.add"], specs=mine)[0].run({"a": 1, "b": 1}) == "2"
    with pytest.raises(ToolLoadError, match="did not start"):
        load_tools(["broken"], specs=mine)
    assert load_tools(["llm-math"], llm=object())  # type: ignore[arg-type]


def _pid_server(tmp_path: Path) -> tuple[Any, Path]:
    pidfile = tmp_path / "pid"
    script = (f"echo $$ > {pidfile}; SLOW_MARK={tmp_path / 'slow'} exec {sys.executable} {SERVER}")
    return server_configs({"calc": {"command": "sh", "args": ["-c", script]}})["calc"], pidfile


def test_server_killed_between_calls_is_restarted(tmp_path: Path) -> None:
    from agentcli.mcp.pool import get_connection

    conf, pidfile = _pid_server(tmp_path)
    add = load_server_tools("calc", conf, {"add"})[0]
    assert add.run({"a": 1, "b": 2}) == "3"
    first = int(pidfile.read_text())
    os.kill(first, signal.SIGKILL)
    conn = get_connection(conf)
    for _ in range(200):  # the session sees the pipe close
        if not conn.alive:
            break
        time.sleep(0.02)
    assert add.run({"a": 2, "b": 2}) == "4"  # reconnected once, transparently
    assert int(pidfile.read_text()) != first


def test_server_killed_mid_call_is_one_line_then_next_call_reconnects(tmp_path: Path) -> None:
    conf, pidfile = _pid_server(tmp_path)
    tools = {t.name: t for t in load_server_tools("calc", conf, {"slow", "add"})}
    slow, add = tools["calc.slow"], tools["calc.add"]
    errors: list[str] = []

    def call() -> None:
        try:
            slow.run({"seconds": 30})
        except ToolInputError as err:
            errors.append(str(err))

    worker = threading.Thread(target=call)
    worker.start()
    for _ in range(500):  # wait until the server is inside the 30 s call
        if (tmp_path / "slow").exists():
            break
        time.sleep(0.02)
    assert (tmp_path / "slow").exists()
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    worker.join(timeout=20)
    assert errors and "closed the connection during calc.slow" in errors[0]
    assert "testserver starting" in errors[0] and "\n" not in errors[0]
    assert add.run({"a": 5, "b": 5}) == "10"


def test_missing_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(ToolLoadError, match=r"pip install 'agentcli\[mcp\]'"):
        register_mcp_servers({"x": {"command": "true"}}, [])


def test_cached_registration_starts_nothing(tmp_path: Path) -> None:
    conf = server_configs({"calc": CALC})["calc"]
    list_tools(conf)  # fills the cache
    from agentcli.mcp import pool

    pool.close_all()
    names = register_mcp_servers({"calc": CALC}, [], start=False)
    assert "calc.add" in names and pool._POOL == {}
    data = json.loads(next((log_path("x").parent.parent / "tools").glob("calc-*.json")).read_text())
    assert data["server"] == "calc" and "GREETING" not in json.dumps(data)


def _recording(events: Path, me: str, waits_for: str | None = None) -> dict[str, Any]:
    """A server that appends ``start ME`` to ``events`` when launched and ``ready ME`` just
    before it serves; with ``waits_for``, it is ready only once that server has started (or
    gives up after ~10 s: a start that waits for the other to finish fails)."""
    wait = (f"i=0; while ! grep -q 'start {waits_for}' {events}; do i=$((i+1)); "
            f"[ $i -gt 200 ] && exit 9; sleep 0.05; done; " if waits_for else "sleep 0.3; ")
    script = f"echo start {me} >> {events}; {wait}echo ready {me} >> {events}; " \
             f"exec {sys.executable} {SERVER}"
    return {"command": "sh", "args": ["-c", script], "startup_timeout": 30}


def test_servers_start_side_by_side(tmp_path: Path) -> None:
    """Two slow servers through the product path (resolve_tools): both start before either is
    ready, and each started once."""
    from agentcli.mcp import pool
    from agentcli.tools.resolve import resolve_tools

    events = tmp_path / "events"
    servers = {"a": _recording(events, "a", "b"), "b": _recording(events, "b", "a")}
    tools = resolve_tools(["a.add", "b.add"], servers, allow_dangerous_tools=True)
    assert sorted(t.name for t in tools) == ["a.add", "b.add"]
    lines = events.read_text().split("\n")[:4]
    assert sorted(lines[:2]) == ["start a", "start b"], lines
    assert sorted(lines[2:]) == ["ready a", "ready b"], lines
    assert [c.starts for c in pool._POOL.values() if c.conf.name in ("a", "b")] == [1, 1]


def test_one_start_per_server_config_however_many_callers(tmp_path: Path) -> None:
    """Four threads ask at once for one slow server: it starts once, all get its connection."""
    events = tmp_path / "events"
    conf = server_configs({"slow": _recording(events, "slow")})["slow"]
    with ThreadPoolExecutor(max_workers=4) as threads:
        conns = list(threads.map(lambda _: get_connection(conf), range(4)))
    assert all(c is conns[0] for c in conns) and conns[0].starts == 1
    assert events.read_text().split() == ["start", "slow", "ready", "slow"]


def test_two_agents_with_a_same_named_server_keep_their_own_connections() -> None:
    """Two configs of a server named alike (two executors in one process): starting the second
    does not close the first, and each still answers after the other is closed."""
    from agentcli.mcp.connection import run_sync
    from agentcli.mcp.pool import get_connection

    first = server_configs({"calc": CALC})["calc"]
    second = server_configs({"calc": {**CALC, "args": [SERVER, "x"]}})["calc"]
    one, two = get_connection(first), get_connection(second)
    assert one is not two and one.alive and two.alive
    assert one.conf == first and get_connection(first) is one
    run_sync(two.close(), 15)
    assert one.alive and str(run_sync(one.call("add", {"a": 2, "b": 3}))) == "5"
