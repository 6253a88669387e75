"""The tests' warm ``agent`` children (forked from ``tests/support/zygote.py``) are what cold
ones are: each case runs both ways and must print the same bytes with the same exit code."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork + /proc")
AGENT = [sys.executable, "-m", "agentcli"]


def both(monkeypatch: pytest.MonkeyPatch, args: list[str], **kw: Any) -> list[Any]:
    """``subprocess.run`` of ``agent ARGS`` warm, then cold: (exit code, stdout, stderr)."""
    out = []
    for popen in (zygote.WarmPopen, zygote.REAL_POPEN):
        monkeypatch.setattr(subprocess, "Popen", popen)
        proc = subprocess.run([*AGENT, *args], capture_output=True, timeout=120, **kw)
        out.append((proc.returncode, proc.stdout, proc.stderr))
    return out


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[1])


def test_a_warm_child_is_forked_from_the_zygote_and_a_cold_one_is_ours() -> None:
    warm = zygote.WarmPopen([*AGENT, "chat", "-m", "openai/x"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cold = zygote.REAL_POPEN([*AGENT, "chat", "-m", "openai/x"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert parent_of(cold.pid) == os.getpid()
        assert parent_of(warm.pid) not in (os.getpid(), 1)  # the zygote's
    finally:
        warm_result = warm.communicate(timeout=120)
        cold_result = cold.communicate(timeout=120)
    assert (warm.returncode, *warm_result) == (cold.returncode, *cold_result)


@pytest.mark.parametrize("args", [
    ["--help"],
    ["run", "What is 25% of 300?"],  # the offline demo: no model configured
    ["run", "q", "-m", "nosuch/model"],  # a one-line error, exit 2
    ["tools", "list"],
    ["run", "--max-iterations", "0", "q"],
])
def test_warm_and_cold_print_the_same(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    warm, cold = both(monkeypatch, args, stdin=subprocess.DEVNULL)
    assert warm == cold


def test_stdin_environment_and_directory_reach_a_warm_child(
        monkeypatch: pytest.MonkeyPatch, mock_server: Any, tmp_path: Path) -> None:
    for _ in range(2):
        mock_server.add_reply("Final Answer: read it")
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}
    (tmp_path / "notes.txt").write_text("from the file\n")
    warm, cold = both(monkeypatch, ["run", "-m", "openai/any", "-f", "notes.txt", "--json"],
                      input=b"from stdin\n", env=env, cwd=tmp_path)
    assert warm[0] == cold[0] == 0 and warm[2] == cold[2]
    warm_out, cold_out = json.loads(warm[1]), json.loads(cold[1])
    assert warm_out.pop("elapsed_seconds") > 0 and cold_out.pop("elapsed_seconds") > 0
    assert warm_out == cold_out
    asked = [r.body["messages"][-1]["content"] for r in mock_server.requests]
    assert asked[0] == asked[1] and "from stdin" in asked[0] and "from the file" in asked[0]


def test_ctrl_c_ends_a_warm_child_as_a_cold_one(mock_server: Any) -> None:
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}
    ends = []
    for popen in (zygote.WarmPopen, zygote.REAL_POPEN):
        mock_server.add_reply("Final Answer: too late", delay=30)
        asked = len(mock_server.requests)
        proc = popen([*AGENT, "run", "q", "-m", "openai/any"], stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        while len(mock_server.requests) == asked and proc.poll() is None:
            select.select([], [], [], 0.05)  # the run is waiting on its model call
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        ends.append((proc.returncode, out, err))
    assert ends[0] == ends[1] and ends[0][0] == 130
