"""A Streamable HTTP server that restarts between calls (issue 20 #14): the client
re-initializes when the server answers 404 (or 400 naming the session) for its session id and
sends the call again; a server that is down or still starting is tried ``reconnect_attempts``
times with a doubling delay, and a server that stays down ends in one clear line after those
attempts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.mcp_helpers import agent

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_http_restarting.py"
PINGS = [f'Action: flaky.ping\nAction Input: {{"n": {n}}}' for n in (1, 2)]


class Flaky:
    """The fixture server in one MODE: its URL, its event log, and a way to stop it."""

    def __init__(self, tmp_path: Path, mode: str, down: int = 3) -> None:
        self.log = tmp_path / f"{mode}.log"
        self.log.write_text("")
        self.proc = subprocess.Popen([sys.executable, str(SERVER), mode, str(self.log)],
                                     stdout=subprocess.PIPE, text=True,
                                     env={"DOWN": str(down), "PATH": "/usr/bin:/bin"})
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}/mcp"

    def events(self) -> list[str]:
        return self.log.read_text().split()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def flaky(tmp_path: Path, request: Any) -> Iterator[Flaky]:
    server = Flaky(tmp_path, *request.param)
    try:
        yield server
    finally:
        server.stop()


def run(tmp_path: Path, url: str, replies: list[str], *flags: str, **server: Any
        ) -> subprocess.CompletedProcess[str]:
    """``agent run`` with a scripted model that follows ``replies`` and the flaky server."""
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"flaky": {
        "url": url, "startup_timeout": 20, "call_timeout": 20, "reconnect_delay": 0.05,
        **server}}}))
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    return agent("run", "ping twice", "-c", str(config), "-m", f"fake:{script}", "-t",
                 "flaky.ping", "--no-log", *flags)


@pytest.mark.parametrize("flaky", [("forget",)], indirect=True)
def test_a_forgotten_session_is_initialized_again(tmp_path: Path, flaky: Flaky) -> None:
    proc = run(tmp_path, flaky.url, [*PINGS, "Final Answer: done"], dangerous=False)
    assert proc.returncode == 0, proc.stderr
    # the second call met 404 for the old session, initialized a new one and was sent again
    assert flaky.events() == ["initialize", "call", "404", "initialize", "call"]
    assert "Session not found" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("flaky", [("forget400",)], indirect=True)
def test_a_400_naming_the_lost_session_is_initialized_again(tmp_path: Path,
                                                          flaky: Flaky) -> None:
    proc = run(tmp_path, flaky.url, [*PINGS, "Final Answer: done"], "-v", dangerous=False)
    assert proc.returncode == 0, proc.stderr
    assert flaky.events() == ["initialize", "call", "400", "initialize", "call"]
    assert "No valid session ID" not in proc.stdout + proc.stderr
    assert "pong 2" in proc.stderr


@pytest.mark.parametrize("flaky", [("down", 3)], indirect=True)
def test_a_server_still_starting_is_tried_again(tmp_path: Path, flaky: Flaky) -> None:
    proc = run(tmp_path, flaky.url, [*PINGS, "Final Answer: done"], dangerous=False)
    assert proc.returncode == 0, proc.stderr
    # 503 for the call, then for two reconnect attempts; the third attempt gets through
    assert flaky.events() == ["initialize", "call", "503", "503", "503", "initialize", "call"]


@pytest.mark.parametrize("flaky", [("down", 50)], indirect=True)
def test_a_server_that_stays_down_is_tried_reconnect_attempts_times(
        tmp_path: Path, flaky: Flaky) -> None:
    proc = run(tmp_path, flaky.url, [*PINGS, "Final Answer: done"], "-v", dangerous=False,
               reconnect_attempts=4)
    assert proc.returncode == 0, proc.stderr  # a failed tool call is an observation
    # the failed call and 4 attempts; nothing after: the request was not sent a third time
    assert flaky.events() == ["initialize", "call", "503", "503", "503", "503", "503"]
    assert "tried 4 times in 0.35s (reconnect_attempts)" in proc.stderr


@pytest.mark.parametrize("flaky", [("exit",)], indirect=True)
def test_a_server_that_went_away_is_given_up_then_tried_once_a_call(
        tmp_path: Path, flaky: Flaky) -> None:
    pings = [f'Action: flaky.ping\nAction Input: {{"n": {n}}}' for n in (1, 2, 3)]
    proc = run(tmp_path, flaky.url, [*pings, "Final Answer: done"], "-v", dangerous=False)
    assert proc.returncode == 0, proc.stderr
    assert flaky.events() == ["initialize", "call"]  # it exited after answering
    observations = [line for line in proc.stderr.splitlines() if "Observation" in line]
    assert len(observations) == 3 and "pong 1" in observations[0]
    assert "ConnectError" in observations[1]
    assert "tried 5 times in 0.75s (reconnect_attempts)" in observations[1]
    assert "(tried to reconnect once)" in observations[2]  # no second round of waiting
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("flaky", [("steady",)], indirect=True)
def test_an_unreachable_server_ends_in_one_line(tmp_path: Path, flaky: Flaky) -> None:
    url = flaky.url
    flaky.stop()  # nothing listens there any more
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"flaky": {"url": url}}}))
    proc = agent("mcp", "tools", "flaky", "-c", str(config))
    assert proc.returncode != 0
    assert "did not start" in proc.stderr and url in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_reconnect_settings_are_checked(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"flaky": {
        "url": "http://127.0.0.1:9/mcp", "reconnect_attempts": 0}}}))
    proc = agent("mcp", "list", "-c", str(config))
    assert proc.returncode == 2
    assert "reconnect_attempts must be a whole number from 1 to 20" in proc.stderr


@pytest.mark.parametrize("flaky", [("crash",)], indirect=True)
def test_a_call_that_may_have_run_is_not_sent_again(tmp_path: Path, flaky: Flaky) -> None:
    proc = run(tmp_path, flaky.url, [PINGS[0], "Final Answer: done"], "-v", dangerous=False)
    assert proc.returncode == 0, proc.stderr
    assert flaky.events() == ["initialize", "call"]  # a 500 is an answer: no reconnect, no resend
    assert "flaky.ping failed" in proc.stderr


def test_the_sdk_stand_in_for_a_404_counts_as_never_run() -> None:
    from mcp.shared.exceptions import MCPError

    from agentcli.mcp.connection import session_terminated

    assert session_terminated(MCPError(code=-32600, message="Session terminated"))
    assert not session_terminated(MCPError(code=-32600, message="bad params"))
    assert not session_terminated(MCPError(code=-32603, message="Session terminated"))
