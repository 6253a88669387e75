"""Streamable HTTP sessions survive a server restart (issue 20 #14): a 404 for the old
session re-initializes once, as the spec says; a server that is down for a moment is tried
again with backoff (5 attempts) instead of failing the call at once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.mcp.mcp_helpers import agent

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_http_flaky.py"


@pytest.fixture
def flaky(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "methods.log"
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env={"MODE": request.param, "DOWN": "1", "LOG": str(log),
                                 "PATH": "/usr/bin:/bin"})
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    yield f"http://127.0.0.1:{port}/mcp", log
    proc.kill()
    proc.wait()
    proc.stdin.close() if proc.stdin else None
    proc.stdout.close()


def run_two_calls(mock_server: Any, url: str, tmp_path: Path) -> Any:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"mcp_servers": {"flaky": {"url": url, "trusted": True,
                                                             "dangerous": False}}}))
    mock_server.add_reply(tool_calls=[{"name": "flaky__echo", "arguments": {"text": "a"}}])
    mock_server.add_reply(tool_calls=[{"name": "flaky__echo", "arguments": {"text": "b"}}])
    mock_server.add_reply("both done")
    return agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c", str(cfg),
                 "-t", "flaky", "--json",
                 env={"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"})


@pytest.mark.parametrize("flaky", ["forget", "bounce"], indirect=True)
def test_the_second_call_survives_the_restart(mock_server: Any, flaky: tuple[str, Path],
                                              tmp_path: Path) -> None:
    """forget: the old session gets a 404, so a new one is started (initialize twice);
    bounce: the server is down for a second, so the client tries again with backoff."""
    url, log = flaky
    proc = run_two_calls(mock_server, url, tmp_path)
    assert proc.returncode == 0, proc.stderr
    sent = [m["content"] for m in mock_server.requests[2].body["messages"] if m["role"] == "tool"]
    assert sent == ["echo 1: a", "echo 2: b"]
    assert log.read_text().split().count("initialize") == 2  # once more after the restart
