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

from agentcli.mcp.cache import log_path
from agentcli.mcp.errlog import STDERR_HEAD, STDERR_TAIL
from agentcli.mcp.stdio import MAX_LINE
from tests.mcp.mcp_helpers import agent, model_env, running

pytest.importorskip("mcp")
SERVER = Path(__file__).with_name("mcp_hostile_server.py")
MB = 1 << 20


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
    assert [row["answer"] for row in rows] == ["(no answer: the run was interrupted)"]


def test_a_stderr_flood_during_a_call_leaves_a_capped_log(tmp_path: Path, record: Path,
                                                          mock_server: Any) -> None:
    flood_mb = 12 * (STDERR_HEAD + STDERR_TAIL) / MB  # far past the cap, quick to pipe
    ping_then_answer(mock_server)
    proc = agent(*run_args(config(tmp_path, record, f"err-call={flood_mb}")),
                 env=model_env(mock_server))
    assert proc.returncode == 0 and "It said pong." in proc.stdout, proc.stderr
    log = log_path("srv")
    assert log.stat().st_size < STDERR_HEAD + STDERR_TAIL + 1000
    text = log.read_text()
    assert "bytes of this server's stderr left out" in text
    assert text.rstrip().endswith("working, very loudly")  # its last words are kept


def peak_rss_kb(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """The peak memory of ``agent ARGS`` (a wrapper process's only child), and its stderr."""
    wrapper = ("import resource, subprocess, sys; "
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, "
               "stdin=subprocess.DEVNULL); sys.stderr.write(p.stderr); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "agentcli",
                           *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    return int(proc.stdout.split()[-1]), proc.stderr


def test_a_stderr_flood_before_initialize_does_not_grow_the_run(tmp_path: Path, record: Path,
                                                               mock_server: Any) -> None:
    """64 MB of stderr from a server that then never answers ``initialize``: the server is
    reported as not started (with its last words), and the run's memory stays what it is
    with a quiet server."""
    peaks = []
    for flood in ("err-start=0", "err-start=64"):
        mock_server.add_reply("No tools today.")
        cfg = config(tmp_path, record, flood, "silent", startup_timeout=3)
        peak, err = peak_rss_kb(run_args(cfg), model_env(mock_server))
        assert "did not start" in err and "no answer within 3s" in " ".join(err.split())
        peaks.append(peak)
    assert peaks[1] - peaks[0] < 16 * 1024, peaks  # KB; the flood was 64 MB


def test_a_long_log_is_moved_aside_when_its_server_starts_again() -> None:
    from agentcli.mcp.cache import LOG_KEEP, log_offset

    log = log_path("srv")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"old line\n" * 10)
    assert log_offset("srv") == 90  # a short log goes on
    log.write_bytes(b"x" * (LOG_KEEP + 1))
    assert log_offset("srv") == 0
    assert not log.exists() and log.with_name("srv.log.1").stat().st_size == LOG_KEEP + 1


def test_a_silent_server_cannot_hold_the_run_past_max_time(tmp_path: Path, record: Path,
                                                          mock_server: Any) -> None:
    """It never answers ``initialize`` and has ten minutes of startup_timeout: the run's
    --max-time (5 s) ends its start-up; the test's own 60 s bound would catch the old wait."""
    cfg = config(tmp_path, record, "silent", "deaf", "setsid", startup_timeout=600)
    proc = agent(*run_args(cfg, "--max-time", "5"), env=model_env(mock_server), timeout=60)
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "did not start" in err and "no answer before the run's time limit" in err
    assert [pid for pid in pids(record) if running(pid)] == []


def test_a_call_that_never_answers_ends_at_max_time(tmp_path: Path, record: Path,
                                                    mock_server: Any) -> None:
    """Ten minutes of call_timeout; --max-time 8 (room for a loaded machine to reach the
    call) ends it, within the test's 60 s bound."""
    mock_server.add_reply(tool_calls=[{"name": "srv__ping", "arguments": {}}])
    cfg = config(tmp_path, record, "slow-call", "deaf", "setsid", call_timeout=600)
    proc = agent(*run_args(cfg, "--max-time", "8", "--json"), env=model_env(mock_server),
                 timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout)["stop_reason"] == "max_execution_time"
    assert "call" in record.read_text().split()
    assert [pid for pid in pids(record) if running(pid)] == []


def test_a_line_over_the_cap_is_refused_with_a_clear_observation(tmp_path: Path, record: Path,
                                                                 mock_server: Any) -> None:
    """A result line just past MAX_LINE: the call fails with a one-line observation naming
    the limit, the run goes on to its answer, the server is gone after it."""
    ping_then_answer(mock_server)
    cfg = config(tmp_path, record, f"huge-call={MAX_LINE / MB + 1}")
    proc = agent(*run_args(cfg), env=model_env(mock_server))
    assert proc.returncode == 0 and "It said pong." in proc.stdout, proc.stderr
    observation = next(m["content"] for m in mock_server.requests[1].body["messages"]
                   if m["role"] == "tool")
    assert f"longer than {MAX_LINE:,} bytes" in observation and len(observation) < 1000
    assert [pid for pid in pids(record) if running(pid)] == []


@pytest.mark.parametrize(("settings", "named"), [
    ({"trusted": False}, "srv.ping"), ({"tools": {"ping": "dangerous"}}, "srv.ping"),
    ({"trusted": False}, "srv"), ({"dangerous": True}, "srv")])
def test_refusing_a_dangerous_tool_starts_no_server(tmp_path: Path, record: Path,
                                                    mock_server: Any,
                                                    settings: dict[str, object],
                                                    named: str) -> None:
    """The gate refuses what the config already tells (an untrusted server's hints are not
    believed; a tool or server marked dangerous) before any start: the server never runs."""
    args = run_args(config(tmp_path, record, **settings))
    args[args.index("srv.ping")] = named  # a tool, or the whole server
    proc = agent(*args, env=model_env(mock_server))
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "is dangerous" in err or "are dangerous" in err
    assert "--allow srv " in err and "Traceback" not in err
    assert not record.exists()  # never started
    assert mock_server.requests == []


def roots_seen(record: Path) -> str:
    """What the server recorded of our roots (it handles its input in order: the answer to
    its roots request, asked at start-up, comes before the tool call the run waited for)."""
    return next(line for line in record.read_text().splitlines() if line.startswith("roots"))


def test_no_roots_are_declared_unless_configured(tmp_path: Path, record: Path,
                                                 mock_server: Any) -> None:
    """The run's directory is not offered as a root: a server keeps to its own arguments."""
    ping_then_answer(mock_server)
    proc = agent(*run_args(config(tmp_path, record, "roots")), env=model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert roots_seen(record) == "roots none"


def test_only_the_configured_roots_are_declared(tmp_path: Path, record: Path,
                                                mock_server: Any) -> None:
    ping_then_answer(mock_server)
    folder = tmp_path / "only-this"
    folder.mkdir()
    cfg = config(tmp_path, record, "roots", roots=[str(folder)])
    proc = agent(*run_args(cfg), env=model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(roots_seen(record).split(" ", 1)[1]) == [folder.as_uri()]


def test_roots_must_be_a_list_of_directories(tmp_path: Path, record: Path) -> None:
    proc = agent(*run_args(config(tmp_path, record, roots="/tmp")))
    assert proc.returncode == 2
    assert "roots must be a list of directories" in proc.stderr and "Traceback" not in proc.stderr


def test_last_words_at_exit_are_logged_and_do_not_hold_it_up(tmp_path: Path, record: Path,
                                                               mock_server: Any) -> None:
    """A server that writes more than a pipe holds to stderr as its stdin closes: its stderr
    is still read while it is stopped, so it finishes and exits by itself (``bye``), and its
    last line is in the log."""
    ping_then_answer(mock_server)
    proc = agent(*run_args(config(tmp_path, record, "err-eof=0.5")), env=model_env(mock_server))
    assert proc.returncode == 0 and "It said pong." in proc.stdout, proc.stderr
    assert record.read_text().split()[-1] == "bye"
    assert log_path("srv").read_text().rstrip().endswith("goodbye for good")


def test_sigterm_ends_a_chat_and_its_servers(tmp_path: Path, record: Path,
                                             mock_server: Any) -> None:
    """`agent chat` waiting for its next line: a SIGTERM ends it (Ctrl-C there would only
    clear the line), exit 130, and its deaf server with its detached child is gone."""
    mock_server.add_reply("hello")
    cfg = config(tmp_path, record, "setsid", "deaf")
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", "chat", "-m", "openai/any",
                             "-a", "tool-calling", "-c", cfg, "-t", "srv.ping"],
                            env={**os.environ, **model_env(mock_server)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None
        proc.stdin.write("hi\n")  # the line is answered; stdin stays open: chat waits
        proc.stdin.flush()
        give_up = time.monotonic() + 60
        while not mock_server.requests or len(pids(record)) < 2:
            assert proc.poll() is None and time.monotonic() < give_up
            time.sleep(0.05)
        time.sleep(0.5)  # the answer is printed; chat reads its next line
        proc.send_signal(signal.SIGTERM)
        err = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert [pid for pid in pids(record) if running(pid)] == []
