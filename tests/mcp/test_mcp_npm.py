"""MCP against the real npm servers, through the real `agent` entry point where it matters:
list, call, timeout with cancellation, images, danger from annotations, broken servers beside
built-in tools, a killed server, and `agent run` over stdio, Streamable HTTP and SSE."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import agent

from agentcli.errors import ToolInputError
from agentcli.mcp import server_configs
from agentcli.tools.mcp import load_server_tools

OPENAI = {"OPENAI_API_KEY": "sk-test"}


def action(tool: str, tool_input: Any) -> str:
    """A chat-agent reply that calls ``tool``."""
    blob = json.dumps({"action": tool, "action_input": tool_input})
    return f"Thought: use the tool.\nAction:\n```\n{blob}\n```\n"


def write_config(tmp_path: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path = tmp_path / "mcp.yaml"
    path.write_text(json.dumps({"mcp_servers": servers, **extra}))  # JSON is YAML
    return path


NPM_FS = Path()  # set by the autouse fixture below


@pytest.fixture(autouse=True)
def _npm_paths(npm_servers: dict[str, Path]) -> None:
    global NPM_FS
    NPM_FS = npm_servers["filesystem"]


def ev_stdio(npm_servers: dict[str, Path]) -> dict[str, Any]:
    # the reference server is trusted here: its readOnlyHint annotations ungate its tools
    return {"command": "node", "args": [str(npm_servers["everything"]), "stdio"], "trusted": True}


def test_list_and_call_echo_and_sum(npm_servers: dict[str, Path], tmp_path: Path) -> None:
    cfg = str(write_config(tmp_path, {"ev": ev_stdio(npm_servers)}))
    listed = agent("mcp", "tools", "ev", "-c", cfg)
    assert listed.returncode == 0, listed.stderr
    assert "ev.echo" in listed.stdout and "ev.get-sum" in listed.stdout
    echo_row = next(line for line in listed.stdout.splitlines() if line.startswith("ev.echo\t"))
    assert echo_row.split("\t")[1] in ("yes", "no")  # flags read as in `agent tools list`
    servers = agent("mcp", "list", "-c", cfg)  # from the cache now: 14-ish tools, no start
    assert servers.returncode == 0 and "stdio" in servers.stdout
    assert "?" not in servers.stdout.splitlines()[1]
    tools = agent("tools", "list", "-c", cfg)
    assert tools.returncode == 0, tools.stderr
    assert any(line.startswith("ev.echo") and "MCP" in line for line in tools.stdout.splitlines())
    echo = agent("tools", "call", "ev.echo", '{"message": "hi there"}', "-c", cfg)
    assert echo.returncode == 0, echo.stderr
    assert "Echo: hi there" in echo.stdout
    total = agent("tools", "call", "ev.get-sum", '{"a": 2, "b": 40}', "-c", cfg)
    assert total.returncode == 0 and "42" in total.stdout, total.stderr


def test_long_call_times_out_and_is_cancelled(npm_servers: dict[str, Path],
                                              tmp_path: Path) -> None:
    wire = tmp_path / "stdin.jsonl"  # what the client sent, teed on the way to the server
    script = f"tee {wire} | exec node {npm_servers['everything']} stdio"
    conf = server_configs({"ev": {"command": "sh", "args": ["-c", script],
                                  "call_timeout": 2}})["ev"]
    tools = {t.name: t for t in load_server_tools("ev", conf, {"trigger-long-running-operation",
                                                                "echo"})}
    with pytest.raises(ToolInputError, match=r"timed out after 2s.*cancel"):
        tools["ev.trigger-long-running-operation"].run({"duration": 60, "steps": 2})
    assert tools["ev.echo"].run({"message": "still here"}) == "Echo: still here"
    sent = [json.loads(line) for line in wire.read_text().splitlines() if line.strip()]
    call = next(m for m in sent if m.get("method") == "tools/call"
                and m["params"]["name"] == "trigger-long-running-operation")
    cancels = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert cancels and cancels[0]["params"]["requestId"] == call["id"]


def test_image_result_is_a_placeholder_with_a_data_url_part(npm_servers: dict[str, Path]) -> None:
    conf = server_configs({"ev": ev_stdio(npm_servers)})["ev"]
    image = load_server_tools("ev", conf, {"get-tiny-image"})[0]
    out = image.run({})
    assert "[image/png, " in out and " KB]" in out and "ImageContent" not in out
    parts = getattr(out, "parts", ())
    assert parts and parts[0]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


def test_client_declares_its_roots(npm_servers: dict[str, Path], tmp_path: Path) -> None:
    conf = server_configs({"ev": ev_stdio(npm_servers)})["ev"]
    roots = load_server_tools("ev", conf, {"get-roots-list"}, roots=[tmp_path])[0]
    assert tmp_path.as_uri() in roots.run({})
    load_server_tools("ev", conf, {"get-roots-list"}, roots=[tmp_path / "x"])  # same server
    for _ in range(100):  # the server re-asks after roots/list_changed
        if (tmp_path / "x").as_uri() in roots.run({}):
            break
        time.sleep(0.05)
    assert (tmp_path / "x").as_uri() in roots.run({})


def _fs_batch(tmp_path: Path, mock_server: Any, root: Path, allow: list[str],
              *flags: str, command: str = "batch") -> Any:
    fs = {"command": "node", "args": [str(NPM_FS), str(root)], "trusted": True}
    # no roots are declared (none configured): server-filesystem keeps to its argument
    cfg = write_config(tmp_path, {"fs": fs}, allow=allow, tool_settings={"files_root": str(root)})
    mock_server.add_reply("", tool_calls=[{"name": "fs.write_file", "id": "c1", "arguments": {
        "path": str(root / "note.txt"), "content": "written by the agent"}}])
    mock_server.add_reply("done")
    common = ("-m", "openai/any", "-a", "tool-calling", "-t", "fs.write_file,fs.list_directory",
              "-c", str(cfg), *flags)
    env = {**OPENAI, "OPENAI_BASE_URL": mock_server.base_url}
    if command == "run":
        return agent("run", "write a note", *common, env=env)
    questions, out = tmp_path / "q.jsonl", tmp_path / "out.jsonl"
    questions.write_text(json.dumps({"id": "1", "input": "write a note"}) + "\n")
    out.unlink(missing_ok=True)
    return agent("batch", str(questions), "--out", str(out), *common, env=env)


def test_filesystem_server_keeps_to_the_folder_it_was_given(
        npm_servers: dict[str, Path], tmp_path: Path, mock_server: Any) -> None:
    """Issue 38: the run's directory was declared as the client's root and server-filesystem,
    given one folder, adopted it: a file beside that folder was read. It is refused now."""
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "notes.txt").write_text("shared notes")
    (tmp_path / "secret.txt").write_text("the private text")
    cfg = write_config(tmp_path, {"fs": {"command": "node", "args": [str(NPM_FS), str(folder)],
                                         "trusted": True}})
    for path in (tmp_path / "secret.txt", folder / "notes.txt"):
        mock_server.add_reply("", tool_calls=[{"name": "fs.read_text_file", "id": "c1",
                                               "arguments": {"path": str(path)}}])
    mock_server.add_reply("done")
    proc = agent("run", "read them", "-m", "openai/any", "-a", "tool-calling", "-c", str(cfg),
                 "-t", "fs.read_text_file", env={**OPENAI, "OPENAI_BASE_URL": mock_server.base_url},
                 cwd=tmp_path)  # the run starts in the folder's parent
    assert proc.returncode == 0, proc.stderr
    seen = [m["content"] for m in mock_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert len(seen) == 2 and "shared notes" in seen[1]  # the folder it was given: read
    assert "the private text" not in seen[0] and "denied" in seen[0].lower()


def test_filesystem_write_needs_opt_in_and_approval(npm_servers: dict[str, Path], tmp_path: Path,
                                                    mock_server: Any) -> None:
    root = tmp_path / "root"
    root.mkdir()
    refused = _fs_batch(tmp_path, mock_server, root, [])
    assert refused.returncode == 2
    assert "fs.write_file" in refused.stderr and "destructiveHint" in refused.stderr
    assert "--allow" in refused.stderr and "Traceback" not in refused.stderr
    not_asked = _fs_batch(tmp_path, mock_server, root, ["fs.write_file"])  # no tty, no --yes
    assert not_asked.returncode == 0, not_asked.stderr
    assert not (root / "note.txt").exists()
    allowed = _fs_batch(tmp_path, mock_server, root, ["fs.write_file"], "--yes")
    assert allowed.returncode == 0, allowed.stderr
    assert (root / "note.txt").read_text() == "written by the agent"
    (root / "note.txt").unlink()  # `agent run --allow fs --yes`: a server name opts in its tools
    refused_run = _fs_batch(tmp_path, mock_server, root, [], command="run")
    assert refused_run.returncode == 2 and "--allow fs" in refused_run.stderr
    ran = _fs_batch(tmp_path, mock_server, root, [], "--allow", "fs", "--yes", command="run")
    assert ran.returncode == 0, ran.stderr
    assert (root / "note.txt").read_text() == "written by the agent"


def test_broken_server_beside_builtin_tools(tmp_path: Path, mock_server: Any) -> None:
    cfg = write_config(tmp_path, {"broken": {"command": "sh", "args": [
        "-c", "echo 'cannot find config.json' >&2; exit 1"]}})
    mock_server.add_reply(action("Calculator", "6*7"))
    mock_server.add_reply("Final Answer: 42")
    env = {**OPENAI, "OPENAI_BASE_URL": mock_server.base_url}
    ok = agent("run", "six times seven", "-m", "openai/any", "-t", "llm-math", "-c", str(cfg),
               env=env)
    assert ok.returncode == 0, ok.stderr
    assert "42" in ok.stdout and "Traceback" not in ok.stderr
    listed = agent("tools", "list", "-c", str(cfg), "--all")  # plain `tools list` starts none
    assert listed.returncode == 0 and "llm-math" in listed.stdout
    assert "'broken' did not start" in listed.stderr and "cannot find config.json" in listed.stderr
    bad = agent("mcp", "tools", "broken", "-c", str(cfg))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "cannot find config.json" in bad.stderr and "Traceback" not in bad.stderr


def test_killed_server_reconnects(npm_servers: dict[str, Path], tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"echo $$ > {pidfile}; exec node {npm_servers['everything']} stdio"
    conf = server_configs({"ev": {"command": "sh", "args": ["-c", script]}})["ev"]
    tools = {t.name: t for t in load_server_tools("ev", conf, {"echo"})}
    assert tools["ev.echo"].run({"message": "one"}) == "Echo: one"
    first = int(pidfile.read_text())
    os.kill(first, signal.SIGKILL)
    from agentcli.mcp.pool import get_connection

    conn = get_connection(conf)
    for _ in range(250):
        if not conn.alive:
            break
        time.sleep(0.02)
    assert tools["ev.echo"].run({"message": "two"}) == "Echo: two"
    assert int(pidfile.read_text()) != first


def _echo(cfg: Path, mock_server: Any, tmp_path: Path, command: str) -> tuple[Any, str]:
    """``agent run`` or ``agent batch`` where the model calls ev.echo; returns (proc, answer)."""
    mock_server.add_reply(action("ev.echo", {"message": "over the wire"}))
    mock_server.add_reply("Final Answer: it said over the wire")
    env = {**OPENAI, "OPENAI_BASE_URL": mock_server.base_url}
    common = ("-m", "openai/any", "-t", "ev.echo", "-c", str(cfg))
    if command == "run":
        proc = agent("run", "echo something", *common, env=env)
        return proc, proc.stdout
    questions, out = tmp_path / "q.jsonl", tmp_path / "out.jsonl"
    questions.write_text(json.dumps({"id": "1", "input": "echo something"}) + "\n")
    proc = agent("batch", str(questions), "--out", str(out), *common, env=env)
    return proc, out.read_text() if out.exists() else ""


def _assert_echoed(result: tuple[Any, str], mock_server: Any) -> None:
    proc, answer = result
    assert proc.returncode == 0, proc.stderr
    assert "it said over the wire" in answer and "Traceback" not in proc.stderr
    second = json.dumps(mock_server.requests[1].body["messages"])
    assert "Echo: over the wire" in second  # the MCP result reached the model


@pytest.mark.parametrize("command", ["batch", "run"])
def test_agent_calls_an_mcp_tool_over_stdio(npm_servers: dict[str, Path], tmp_path: Path,
                                            mock_server: Any, command: str) -> None:
    cfg = write_config(tmp_path, {"ev": ev_stdio(npm_servers)})
    _assert_echoed(_echo(cfg, mock_server, tmp_path, command), mock_server)


@pytest.mark.parametrize("everything_http", ["streamableHttp", "sse"], indirect=True)
def test_agent_calls_an_mcp_tool_over_http(everything_http: str, tmp_path: Path,
                                           mock_server: Any) -> None:
    kind = "sse" if everything_http.endswith("/sse") else "http"
    cfg = write_config(tmp_path, {"ev": {"type": kind, "url": everything_http, "trusted": True,
                                         "headers": {"Authorization": "Bearer ${EV_TOKEN:-x}"}}})
    _assert_echoed(_echo(cfg, mock_server, tmp_path, "batch"), mock_server)
