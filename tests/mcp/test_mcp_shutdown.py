"""How `agent run` ends its stdio MCP servers (the spec's order: close stdin, wait, SIGTERM,
SIGKILL): a server that exits on stdin EOF is left to exit by itself; one that lingers (as the
npm server-everything does with a request of its own in flight) is sent SIGTERM, with the
child it started, before the SDK's stdio_client would have sent it (the event order shows
it); either way no process of the run remains. How long it takes is measured in
bench/mcp_startup.py, not asserted here."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.mcp.mcp_helpers import agent, model_env, running

pytest.importorskip("mcp")
SERVER = Path(__file__).with_name("mcp_lingering_server.py")
# "late": 3/4 of the wait of the SDK's stdio_client between closing stdin and its SIGTERM
# (2.0 s): a client that waits as long records it (ours waits mcp.stdio.EXIT_GRACE, 0.5 s)
SDK_WAIT = getattr(importlib.import_module("mcp.client.stdio"), "PROCESS_TERMINATION_TIMEOUT", 2.0)
LATE = str(0.75 * SDK_WAIT)


def run_ping(tmp_path: Path, mock_server: Any, command: str, args: list[str]) -> None:
    """``agent run`` whose model calls ``srv.ping`` once, then answers."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"mcp_servers": {"srv": {
        "command": command, "args": args, "trusted": True}}}))
    mock_server.add_reply(tool_calls=[{"name": "srv__ping", "arguments": {}}])
    mock_server.add_reply("It said pong.")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", str(cfg),
                 "-t", "srv.ping", env=model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert "It said pong." in proc.stdout
    tool_texts = [m["content"] for m in mock_server.requests[1].body["messages"]
                  if m["role"] == "tool"]
    assert tool_texts == ["pong"]  # the server did its job before it was ended


def events(record: Path) -> dict[str, int | None]:
    lines = [line.split() for line in record.read_text().splitlines()]
    return {words[0]: int(words[1]) if len(words) > 1 else None for words in lines}


def test_a_lingering_server_gets_sigterm_after_eof(tmp_path: Path, mock_server: Any) -> None:
    record = tmp_path / "events"
    run_ping(tmp_path, mock_server, sys.executable, [str(SERVER), str(record), "linger", LATE])
    seen = events(record)
    order = [line.split()[0] for line in record.read_text().splitlines()]
    # stdin closed first, then SIGTERM, before the SDK's own wait would have run out ("late")
    assert order == ["pid", "child", "eof", "sigterm"]
    server, child = seen["pid"], seen["child"]
    assert server is not None and child is not None
    assert not running(server) and not running(child)  # its child went with its group


def test_a_server_that_exits_on_eof_is_not_signalled(tmp_path: Path, mock_server: Any) -> None:
    record = tmp_path / "events"
    run_ping(tmp_path, mock_server, sys.executable, [str(SERVER), str(record), "exit", LATE])
    assert [line.split()[0] for line in record.read_text().splitlines()] == ["pid", "eof"]
    server = events(record)["pid"]
    assert server is not None and not running(server)


def test_a_server_asking_after_eof_is_ended_at_once(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A request from a server whose stdin is closed ends its grace: with a 10 s grace, it
    still gets SIGTERM before its own 5 s mark ("late")."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCRequest

    from agentcli.mcp import stdio

    monkeypatch.setattr(stdio, "EXIT_GRACE", 10.0)
    record = tmp_path / "events"

    async def open_and_close() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with stdio.stdio_streams(sys.executable, [str(SERVER), str(record), "ask", "5"],
                                           None, None, errlog) as (read, write):
                # it answers initialize first: a server that never said a word gets no grace
                await write.send(SessionMessage(JSONRPCRequest(
                    jsonrpc="2.0", id=1, method="initialize",
                    params={"protocolVersion": "2025-06-18"})))
                await read.receive()

    anyio.run(open_and_close)
    assert [line.split()[0] for line in record.read_text().splitlines()] == [
        "pid", "eof", "asked", "sigterm"]


def test_no_npm_server_process_outlives_the_run(npm_servers: dict[str, Path], tmp_path: Path,
                                               mock_server: Any) -> None:
    """server-everything, ended right after its tool call (before it asked for our roots or
    while it waits for them): the run ends and the node process is gone."""
    pidfile = tmp_path / "pid"
    script = f"echo $$ > {pidfile}; exec node {npm_servers['everything']} stdio"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"mcp_servers": {"ev": {
        "command": "sh", "args": ["-c", script], "trusted": True}}}))
    mock_server.add_reply(tool_calls=[{"name": "ev__echo", "arguments": {"message": "hi"}}])
    mock_server.add_reply("It said hi.")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", str(cfg),
                 "-t", "ev.echo", env=model_env(mock_server))
    assert proc.returncode == 0 and "It said hi." in proc.stdout, proc.stderr
    assert not running(int(pidfile.read_text()))
