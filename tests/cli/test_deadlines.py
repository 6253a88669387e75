"""``--max-time`` is a deadline: slow calls, trickles, endless streams, long Retry-After,
sleeping tools and subprocess trees all end with stop reason max_execution_time (exit 3).

Each case runs the real ``agent run`` in a subprocess against the local mock server. The
outcome is the evidence (the slow thing would have produced an answer, or a different
stop); the only timing is a generous bound on a subprocess whose slow call takes 20 s+.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BOUND = 15.0  # seconds: far above the 2-3 s limits, far below the 20-300 s slow faults


def agent(*args: str, server: Any, extra_env: dict[str, str] | None = None,
          timeout: float = BOUND) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-1",
           **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def stopped_at_deadline(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    assert result["stop_reason"] == "max_execution_time"
    return result


def test_slow_model_call_is_cut(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: late", delay=20)
    proc = agent("run", "q", "-m", "openai/any", "--max-time", "2", "--json", server=mock_server)
    stopped_at_deadline(proc)  # without the deadline the late answer arrives: exit 0


@pytest.mark.parametrize("stream", ["false", "true"])
def test_trickling_server_is_cut(mock_server: Any, stream: str) -> None:
    mock_server.add_fault("trickle", delay=0.2)
    proc = agent("run", "q", "-m", "openai/any", "--max-time", "2", "--json",
                 server=mock_server, extra_env={"AGENT_STREAM": stream})
    stopped_at_deadline(proc)


def test_endless_sse_stream_is_closed(mock_server: Any) -> None:
    mock_server.add_fault("endless_sse")
    proc = agent("run", "q", "-m", "openai/any", "--max-time", "2", "--json",
                 server=mock_server, extra_env={"AGENT_STREAM": "true"})
    stopped_at_deadline(proc)


def test_slow_first_byte_is_cut(mock_server: Any) -> None:
    mock_server.add_fault("slow_first_byte", delay=20, text="Final Answer: late")
    proc = agent("run", "q", "-m", "openai/any", "--max-time", "2", "--json",
                 server=mock_server, extra_env={"AGENT_STREAM": "true"})
    stopped_at_deadline(proc)


def test_retry_after_longer_than_the_time_left_stops_at_once(mock_server: Any) -> None:
    mock_server.add_fault("status", status=429, retry_after=3600)
    mock_server.add_reply("Final Answer: after the wait")
    proc = agent("run", "q", "-m", "openai/any", "--max-time", "5", "--json", "-c",
                 str(_config(mock_server, "retry: {attempts: 3, backoff_max: 3600}\n")),
                 server=mock_server)
    stopped_at_deadline(proc)
    assert len(mock_server.requests) == 1  # no retry was started that could not finish


def test_sleep_tool_is_cut(mock_server: Any) -> None:
    mock_server.add_reply('Action: sleep\nAction Input: 30')
    mock_server.add_reply("Final Answer: rested")
    proc = agent("run", "q", "-m", "openai/any", "-a", "zero-shot-react-description",
                 "-t", "sleep", "--max-time", "2", "--json", server=mock_server)
    stopped_at_deadline(proc)
    assert len(mock_server.requests) == 1


def test_terminal_subprocess_tree_is_killed(mock_server: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {pidfile}; wait"
    mock_server.add_reply(f"Action: terminal\nAction Input: {command}")
    proc = agent("run", "q", "-m", "openai/any", "-a", "zero-shot-react-description",
                 "-t", "terminal", "--allow", "terminal", "--yes", "--max-time", "2", "--json",
                 server=mock_server)
    stopped_at_deadline(proc)
    child = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):  # the background grandchild died with the group
        _wait_gone(child, "sleep")


def test_request_timeout_is_a_provider_error_not_a_deadline(mock_server: Any) -> None:
    mock_server.add_fault("trickle", delay=0.2)
    proc = agent("run", "q", "-m", "openai/any", "-c",
                 str(_config(mock_server, "request_timeout: 1\nmax_retries: 0\n")),
                 server=mock_server)
    assert proc.returncode == 4, proc.stderr
    assert "request_timeout" in proc.stderr and "Traceback" not in proc.stderr


def test_batch_rows_are_cut_by_the_async_deadline(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: late", delay=20)
    questions = tmp_path / "in.jsonl"
    questions.write_text(json.dumps({"id": "a", "input": "q"}) + "\n")
    out = tmp_path / "out.jsonl"
    config = _config(mock_server, "max_execution_time: 2\n")
    agent("batch", str(questions), "--out", str(out), "-m", "openai/any", "-c", str(config),
          server=mock_server)
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["stop_reason"] == "max_execution_time"


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_bad_time_limits_are_rejected(mock_server: Any, value: str) -> None:
    proc = agent("run", "q", "-m", "openai/any", "--max-time", value, server=mock_server)
    assert proc.returncode == 2
    assert "max_execution_time" in proc.stderr and "finite" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("line", ["request_timeout: .nan", "request_timeout: 0",
                                  "request_timeout: -5", "request_timeout: .inf",
                                  "max_execution_time: .inf", "max_cost: .nan",
                                  "read_timeout: 0"])
def test_bad_limits_in_config_are_rejected(mock_server: Any, line: str) -> None:
    proc = agent("run", "q", "-m", "openai/any", "-c", str(_config(mock_server, line + "\n")),
                 server=mock_server)
    assert proc.returncode == 2, proc.stderr
    assert line.split(":")[0] in proc.stderr and "Traceback" not in proc.stderr


def _config(server: Any, text: str) -> Path:
    path = Path.cwd() / f"deadline-{abs(hash(text))}.yaml"
    path.write_text(text)
    return path


def _wait_gone(pid: int, name: str | None = None) -> None:
    """Raise ProcessLookupError once ``pid`` is gone: no such process, or (with ``name``) a
    dead one not reaped yet (a zombie: its new parent reaps it when it will) or the number
    taken by another program since."""
    import time

    for _ in range(50):  # the kill is sent before the run returns; reaping may lag a little
        os.kill(pid, 0)
        if name is not None:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            comm, _, rest = stat.partition(" (")[2].rpartition(") ")
            if rest.split()[0] == "Z" or comm != name:
                raise ProcessLookupError(pid)
        time.sleep(0.1)


@pytest.mark.parametrize("value", [".nan", ".inf", "0", "-3"])
def test_bad_yaml_tool_timeout_is_rejected(mock_server: Any, value: str) -> None:
    config = _config(mock_server, "yaml_tools:\n  - {name: nap, kind: command, "
                     f"argv: [sleep, '1'], timeout: {value}}}\n")
    proc = agent("run", "q", "-m", "openai/any", "-c", str(config), server=mock_server)
    assert proc.returncode == 2, proc.stderr
    assert "timeout must be a positive number" in proc.stderr and "Traceback" not in proc.stderr
