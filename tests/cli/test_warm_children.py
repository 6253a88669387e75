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

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork + /proc"),
    pytest.mark.skipif(os.environ.get(zygote.COLD) == "1",
                       reason=f"{zygote.COLD}=1: every child is cold, there is no zygote"),
]
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
    for out in (warm_out, cold_out):  # each run's own duration: the one field that may differ
        assert isinstance(out.pop("elapsed_seconds"), float)
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


SCRIPT = """
import os, signal, sys, time
# os.write: the signal may land while print below is still flushing its line
signal.signal(signal.SIGTERM, lambda *_: (os.write(1, b"term\\n"), os._exit(0)))
print(sys.argv[1:], os.path.basename(os.getcwd()), os.environ.get("GREETING"), os.getpid(),
      sys.stdin.readline().strip(), flush=True)
if sys.argv[1] == "wait":
    time.sleep(600)
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else 0)
"""


def launch(script: Path, *args: str, **kw: Any) -> subprocess.Popen[str]:
    conf = zygote.server_command(script, *args)
    return zygote.REAL_POPEN([conf["command"], *conf["args"]], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=script.parent, env={**os.environ, "GREETING": "hi"}, **kw)


def test_a_warm_server_script_sees_what_a_cold_one_sees_and_exits_the_same(
        tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SCRIPT)
    warm = launch(script, "3")
    out, _ = warm.communicate("line\n", timeout=120)
    cold = subprocess.run([sys.executable, str(script), "3"], input="line\n", text=True,
                          capture_output=True, cwd=tmp_path, env={**os.environ, "GREETING": "hi"})
    pid = int(out.split()[-2])
    assert pid != warm.pid  # the script ran in the zygote's fork, not in the launcher
    assert out.split()[:-2] == cold.stdout.split()[:-2] == ["['3']", tmp_path.name, "hi"]
    assert warm.returncode == cold.returncode == 3


def test_a_signal_reaches_the_script_and_its_launchers_death_ends_it(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SCRIPT)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = launch(script, "wait")
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("x\n")
        proc.stdin.flush()
        pid = int(proc.stdout.readline().split()[-2])
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
        if sig == signal.SIGTERM:  # passed on: the script's own handler answers
            assert (out.strip(), proc.returncode) == ("term", 0)
        else:  # the launcher cannot pass SIGKILL on: the zygote ends the script
            assert proc.returncode == -signal.SIGKILL
            for _ in range(1200):  # a hang bound, not a speed check
                if not Path(f"/proc/{pid}").exists():
                    break
                select.select([], [], [], 0.05)
            assert not Path(f"/proc/{pid}").exists()
    after = launch(script, "0")  # the zygote outlived the status nobody was left to read
    assert after.communicate("y\n", timeout=120)[0].split()[-1] == "y"
    assert after.returncode == 0
