"""Bad input is one clear line and exit 2 (user/config) or 4 (provider), never "internal error",
never a traceback, never hard-wrapped when piped (run as a subprocess: stdout piped, no COLUMNS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentcli.outcome import run_record
from agentcli.schema import RunResult
from agentcli.store import Store

DEEP = "[" * 50_000 + "]" * 50_000


def agent(cwd: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, cwd=cwd, env={**base, **(env or {})}, timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def assert_one_line(proc: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.rstrip("\n").split("\n")
    assert len(lines) == 1, proc.stderr  # one line, even when longer than 80 columns
    assert lines[0].startswith("error: ") and words in lines[0], proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.fixture
def raw_server() -> Iterator[Callable[[dict[str, Any]], str]]:
    """A loopback server answering every chat request with one fixed JSON body."""
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(bodies[-1])))
            self.end_headers()
            self.wfile.write(bodies[-1])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def serve(body: dict[str, Any]) -> str:
        bodies.append(json.dumps(body).encode())
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield serve
    server.shutdown()
    server.server_close()


NO_SERVER = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-x"}


def _setup(case: str, tmp: Path) -> None:
    if case == "config":
        (tmp / "bad.yaml").write_bytes(b"model: caf\xe9\n")
    elif case == "cassette":
        (tmp / "tape.json").write_text('{"interactions": [1, 2]}')
    elif case in ("cassette-dir", "cache-dir", "out-dir"):
        (tmp / "d").mkdir()
    elif case == "record-parent":
        (tmp / "afile").write_text("x")
    elif case == "cache-corrupt":
        (tmp / "c.sqlite").write_bytes(b"this is not a database" * 100)
    if case == "out-dir":
        (tmp / "in.jsonl").write_text('{"input": "q"}\n')
    elif case == "prices-yaml":
        (tmp / "prices.yaml").write_text("openai:\n  gpt-4o: {input: 1\n")


@pytest.mark.parametrize(("case", "args", "stdin", "env", "code", "words"), [
    ("stdin-utf8", ["run", "-", "-m", "openai/any"], b"caf\xe9?\n", NO_SERVER, 2, "not UTF-8"),
    ("stdin-binary", ["run", "-", "-m", "openai/any"], b"\x00\x01\x02", NO_SERVER, 2, "binary"),
    ("config", ["run", "q", "-c", "bad.yaml"], b"", {}, 2, "not UTF-8"),
    ("cassette", ["run", "q", "-m", "replay:tape.json"], b"", {}, 2, "interaction 1"),
    ("cassette-dir", ["run", "q", "-m", "replay:d"], b"", {}, 2, "is a directory"),
    ("record-parent", ["run", "q", "-m", "openai/any", "--record", "afile/tape.json"], b"",
     NO_SERVER, 2, "cannot create the folder"),
    ("cache-dir", ["run", "q", "-m", "openai/any", "--cache"], b"",
     {**NO_SERVER, "AGENT_CACHE_PATH": "d"}, 2, "is a directory"),
    ("cache-corrupt", ["run", "q", "-m", "openai/any", "--cache"], b"",
     {**NO_SERVER, "AGENT_CACHE_PATH": "c.sqlite"}, 2, "cannot use the response cache"),
    ("out-dir", ["batch", "in.jsonl", "--out", "d", "-m", "openai/any"], b"", NO_SERVER, 2,
     "is a directory"),
    ("long-error", ["run", "q", "-m", "replay:" + "missing-" * 20 + ".json"], b"", {}, 2,
     "does not exist"),
    ("prices-yaml", ["run", "q", "-m", "openai/any"], b"",
     {**NO_SERVER, "AGENT_PRICES": "prices.yaml"}, 2, "price file prices.yaml line 3"),
    ("prices-missing", ["run", "q", "-m", "openai/any"], b"",
     {**NO_SERVER, "AGENT_PRICES": "nope.yaml"}, 2, "price file nope.yaml does not exist"),
])
def test_bad_input_is_one_clear_line(case: str, args: list[str], stdin: bytes,
                                     env: dict[str, str], code: int, words: str,
                                     tmp_path: Path) -> None:
    _setup(case, tmp_path)
    assert_one_line(agent(tmp_path, *args, stdin=stdin, env=env), code, words)


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_is_accepted_after_the_subcommand(tmp_path: Path, where: str) -> None:
    args = ["run", "q", "-m", "replay:missing.json"]
    proc = agent(tmp_path, *(["--debug", *args] if where == "before" else [*args, "--debug"]))
    assert proc.returncode == 2 and "No such option" not in proc.stderr
    assert "Traceback" in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1].startswith("error: replay cassette")


def test_debug_does_not_leak_into_the_next_invocation(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Two invocations in one process: --debug belongs to its own run only."""
    from typer.testing import CliRunner

    from agentcli.cli.app import app

    monkeypatch.chdir(tmp_path)
    args = ["run", "q", "-m", "replay:missing.json"]
    runner = CliRunner()
    first = runner.invoke(app, ["--debug", *args])
    assert first.exit_code == 2 and "Traceback" in first.stderr
    second = runner.invoke(app, args)
    assert second.exit_code == 2
    assert "Traceback" not in second.stderr
    assert second.stderr.strip().splitlines() == [
        "error: replay cassette missing.json does not exist"]


@pytest.mark.parametrize(("message", "words"), [
    ("just a string", "'message' that is a str"),
    ({"role": "assistant", "content": None, "tool_calls": ["not", "objects"]}, "'tool_calls'"),
    ({"role": "assistant", "content": {"odd": 1}}, "'content'"),
])
def test_malformed_provider_reply_is_exit_4(raw_server: Any, tmp_path: Path, message: Any,
                                            words: str) -> None:
    url = raw_server({"choices": [{"message": message, "finish_reason": "stop"}]})
    proc = agent(tmp_path, "run", "q", "-m", "openai/any",
                 env={"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-x"})
    assert_one_line(proc, 4, words)


def test_usage_numbers_as_strings_are_read(raw_server: Any, tmp_path: Path) -> None:
    url = raw_server({"choices": [{"message": {"content": "Final Answer: fine"}}],
                      "usage": {"prompt_tokens": "12", "completion_tokens": "n/a"}})
    proc = agent(tmp_path, "run", "q", "-m", "openai/any", "--json",
                 env={"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-x"})
    assert proc.returncode == 0, proc.stderr
    usage = json.loads(proc.stdout)["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (12, 0)


def test_deeply_nested_json_action_is_a_parse_error_observation(
    mock_server: Any, tmp_path: Path
) -> None:
    mock_server.add_reply('Action:\n```json\n{"action": "Calculator", "action_input": '
                          + DEEP + "}\n```")
    mock_server.add_reply("Final Answer: recovered")
    proc = agent(tmp_path, "run", "q", "-m", "openai/any", "-q",
                 env={"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "recovered\n"
    told = mock_server.requests[1].body["messages"][-1]["content"]
    assert "could not find a tool call" in told


def test_long_path_to_a_file_tool(mock_server: Any, tmp_path: Path) -> None:
    long_path = "a/" * 30_000
    proc = agent(tmp_path, "tools", "call", "read_file", long_path)
    assert proc.returncode == 1 and "internal error" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "too long" in proc.stderr
    blob = json.dumps({"action": "read_file", "action_input": long_path})
    mock_server.add_reply(f"Action:\n```json\n{blob}\n```")
    mock_server.add_reply("Final Answer: gave up")
    run = agent(tmp_path, "run", "q", "-m", "openai/any", "-t", "read_file", "-q",
                env={"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"})
    assert run.returncode == 0 and run.stdout == "gave up\n", run.stderr
    assert "too long" in mock_server.requests[1].body["messages"][-1]["content"]


def test_batch_line_nested_deep_is_an_error_row_and_the_rest_runs(
    mock_server: Any, tmp_path: Path
) -> None:
    mock_server.set_responder(lambda body: {"text": "Final Answer: ok"})
    lines = [json.dumps({"id": "a", "input": "q"}), '{"id": "b", "input": ' + DEEP + "}",
             json.dumps({"id": "c", "input": "q"})]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    proc = agent(tmp_path, "batch", "in.jsonl", "--out", "out.jsonl", "-m", "openai/any",
                 env={"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"})
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    out = (tmp_path / "out.jsonl").read_text().splitlines()
    rows = {r["id"]: r for r in map(json.loads, out)}
    assert rows["a"]["answer"] == rows["c"]["answer"] == "ok"
    assert rows["2"]["error"]["kind"] == "input" and "nested" in rows["2"]["error"]["message"]
    assert proc.returncode == 2 and "2 answered, 1 bad input line (exit 2)" in proc.stderr


@pytest.mark.slow  # waits out the server's 2 s handshake timeout, then its shutdown
def test_mcp_server_printing_garbage_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    server = tmp_path / "junk.py"
    server.write_text("import sys, time\nprint('Welcome!\\n\\x1b[31mnot json')\n"
                      "sys.stdout.flush()\ntime.sleep(30)\n")
    (tmp_path / "c.yaml").write_text(
        f"mcp_servers:\n  junk:\n    command: {sys.executable}\n    args: ['{server}']\n"
        "    timeout: 2\n    trusted: true\n")  # (an untrusted one is refused before it starts)
    # Servers start only when their tools are named (or for `tools list --all`).
    assert_one_line(agent(tmp_path, "run", "q", "-m", "openai/x", "-c", "c.yaml", "-t", "junk",
                          env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}),
                    2, "MCP server 'junk' did not start")
    listed = agent(tmp_path, "tools", "list", "-c", "c.yaml", "--all")
    assert listed.returncode == 0 and "junk" in listed.stdout  # the other tools still listed
    [line] = listed.stderr.rstrip("\n").split("\n")
    assert line.startswith("warning: MCP server 'junk' did not start"), listed.stderr
    assert "\x1b" not in listed.stderr + listed.stdout and "Traceback" not in listed.stderr


def test_closed_stdout_is_quiet(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    for i in range(300):
        store.log_run(run_record(f"question {i}", RunResult("x" * 1000, (), "finished")))
    store.close()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", "logs", "--jsonl", "-n", "300",
                             "--db", str(tmp_path / "a.db")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert json.loads(first)["question"] == "question 299"
    assert err == b""
