"""Tools wait no longer than the run has left: the run deadline, not their own timeout,
is what ends them (DeadlineExceeded), and what they started is killed."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from agentcli import deadline
from agentcli.errors import DeadlineExceeded, ToolInputError
from agentcli.tools import load_tools
from agentcli.tools.net import fetch
from agentcli.tools.yaml_tools import _command_tool
from tests.tools.conftest import Handler, LocalServer


def test_http_tool_trickle_is_cut_at_the_run_deadline(local_server: LocalServer) -> None:
    stop = threading.Event()

    def trickle(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "100000")
        h.end_headers()
        while not stop.wait(0.2):
            h.wfile.write(b"x")
            h.wfile.flush()

    local_server.routes["/slow"] = trickle
    try:
        with deadline.deadline_scope(1), pytest.raises(DeadlineExceeded):
            fetch("GET", local_server.url + "/slow", allow_private=True, timeout=30)
    finally:
        stop.set()


def test_python_repl_is_killed_at_the_run_deadline(tmp_path: Path) -> None:
    [repl] = load_tools(["python_repl"], allow=["python_repl"], python_cwd=str(tmp_path))
    code = "import time\nfor i in range(300):\n    print(i, flush=True)\n    time.sleep(0.1)"
    with deadline.deadline_scope(1), pytest.raises(DeadlineExceeded):
        repl.run(code)  # output keeps arriving: the deadline must not restart per line


def test_yaml_command_tree_is_killed_at_the_run_deadline(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    tool = _command_tool({"name": "spawn", "kind": "command", "timeout": 60,
                          "argv": ["sh", "-c", f"sleep 30 & echo $! > {pidfile}; wait"]},
                         {"files_root": str(tmp_path)})
    with deadline.deadline_scope(1), pytest.raises(DeadlineExceeded):
        tool.run({})
    child = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(child, 0)
            time.sleep(0.1)


def test_own_timeout_is_still_a_tool_error(tmp_path: Path) -> None:
    tool = _command_tool({"name": "nap", "kind": "command", "timeout": 0.5,
                          "argv": ["sleep", "30"]}, {"files_root": str(tmp_path)})
    with deadline.deadline_scope(60), pytest.raises(ToolInputError, match="timed out after"):
        tool.run({})


def test_sleep_tool_stops_at_the_run_deadline() -> None:
    [nap] = load_tools(["sleep"])
    with deadline.deadline_scope(0.5), pytest.raises(DeadlineExceeded):
        nap.run("30")
    assert nap.run("0.01") == "Slept for 0.01 seconds."  # outside a run: its own value
