"""Hostile stdio MCP servers (issue 38), each written in a few lines of Python
(``mcp_hostile_server.py``) and run by the real ``agent run``: whatever they do, no process
they started outlives the run (checked by pid), their output stays bounded, and the run ends
as its limits say."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.mcp.mcp_helpers import agent, model_env, running

pytest.importorskip("mcp")
SERVER = Path(__file__).with_name("mcp_hostile_server.py")


def pids(record: Path) -> list[int]:
    """Every pid the server recorded (itself, its child)."""
    if not record.exists():
        return []
    return [int(line.split()[1]) for line in record.read_text().splitlines()
            if line.split()[0] in ("pid", "child")]


@pytest.fixture
def record(tmp_path: Path) -> Iterator[Path]:
    """The server's record file; whatever it recorded is killed after the test, pass or fail."""
    path = tmp_path / "events"
    yield path
    for pid in pids(path):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def config(tmp_path: Path, record: Path, *modes: str, **settings: object) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"mcp_servers": {"srv": {
        "command": sys.executable, "args": [str(SERVER), str(record), *modes],
        "trusted": True, **settings}}}))
    return str(path)


def run_args(cfg: str, *extra: str) -> list[str]:
    return ["run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", cfg, "-t", "srv.ping",
            *extra]


def ping_then_answer(mock_server: Any) -> None:
    mock_server.add_reply(tool_calls=[{"name": "srv__ping", "arguments": {}}])
    mock_server.add_reply("It said pong.")


def test_a_child_that_left_the_group_is_gone_after_the_run(tmp_path: Path, record: Path,
                                                          mock_server: Any) -> None:
    ping_then_answer(mock_server)
    proc = agent(*run_args(config(tmp_path, record, "setsid")), env=model_env(mock_server))
    assert proc.returncode == 0 and "It said pong." in proc.stdout, proc.stderr
    found = pids(record)
    assert len(found) == 2  # the server and its setsid child both ran
    assert [pid for pid in found if running(pid)] == []


def test_a_deaf_server_with_a_detached_child_is_killed(tmp_path: Path, record: Path,
                                                      mock_server: Any) -> None:
    """Ignoring stdin EOF and SIGTERM only delays the end: SIGKILL follows the grace."""
    ping_then_answer(mock_server)
    proc = agent(*run_args(config(tmp_path, record, "setsid", "deaf")),
                 env=model_env(mock_server))
    assert proc.returncode == 0 and "It said pong." in proc.stdout, proc.stderr
    found = pids(record)
    assert len(found) == 2
    assert [pid for pid in found if running(pid)] == []


def test_sigterm_ends_the_run_as_ctrl_c_does(tmp_path: Path, record: Path,
                                            mock_server: Any) -> None:
    """`kill` during a tool call: the run ends as interrupted (exit 130, its log row says so)
    and its server, deaf to stdin EOF and SIGTERM, is gone with its detached child."""
    mock_server.add_reply(tool_calls=[{"name": "srv__ping", "arguments": {}}])
    cfg = config(tmp_path, record, "setsid", "deaf", "slow-call")
    env = {**os.environ, **model_env(mock_server)}
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", *run_args(cfg)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        give_up = time.monotonic() + 60
        while "call" not in (record.read_text().split() if record.exists() else []):
            assert proc.poll() is None and time.monotonic() < give_up, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        err = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Interrupted" in err and "Traceback" not in err
    assert [pid for pid in pids(record) if running(pid)] == []
    logged = agent("logs", "--json", env=model_env(mock_server))
    assert logged.returncode == 0, logged.stderr
    rows = json.loads(logged.stdout)
    assert [row["stop_reason"] for row in rows] == ["interrupted"]
