"""A slow pipe into `agent run`: a person watching (stderr a terminal) is told once that agentcli
reads stdin, and Ctrl-C there says what Ctrl-C in a model wait says, with the same exit code."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.cli.question import WAITING_HINT
from agentcli.exit_codes import INTERRUPTED, INTERRUPTED_LINE

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


class Watched:
    """`agent run` with stdin and stdout piped and stderr on a pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=slave, env=env, cwd=cwd)
        os.close(slave)
        self.master = master
        self.err = b""

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        """Read stderr until ``text`` shows (a generous bound: never a timing assertion)."""
        end = time.monotonic() + timeout
        while text.encode() not in self.err:
            assert time.monotonic() < end, f"{text!r} not on stderr: {self.err!r}"
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.err += os.read(self.master, 4096)
                except OSError:  # the child closed its end
                    assert text.encode() in self.err, f"{text!r} not on stderr: {self.err!r}"

    def finish(self) -> tuple[int, str]:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self.proc.stdout.close()
        self.proc.wait(timeout=60)
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            try:
                chunk = os.read(self.master, 4096) if ready else b""
            except OSError:
                chunk = b""
            if not chunk:
                break
            self.err += chunk
        os.close(self.master)
        return self.proc.returncode, out.decode()


def _env(mock_server: Any, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-t", TERM="dumb",
               AGENT_DB=str(tmp_path / "a.db"))
    return env


def test_a_slow_pipe_is_said_once_then_read(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: the log shows one failure")
    run = Watched([sys.executable, "-m", "agentcli", "run", "what failed?", "-m", "openai/x"],
                  _env(mock_server, tmp_path), tmp_path)
    run.wait_for(WAITING_HINT)
    assert run.proc.stdin is not None
    run.proc.stdin.write(b"test_a FAILED\n")
    run.proc.stdin.close()
    code, out = run.finish()
    assert code == 0 and "the log shows one failure" in out
    assert run.err.count(WAITING_HINT.encode()) == 1
    question = mock_server.requests[0].body["messages"][-1]["content"]
    assert question.startswith("test_a FAILED") and question.endswith("what failed?")


def test_ctrl_c_while_reading_stdin_is_a_cancelled_run(mock_server: Any, tmp_path: Path) -> None:
    run = Watched([sys.executable, "-m", "agentcli", "run", "what failed?", "-m", "openai/x"],
                  _env(mock_server, tmp_path), tmp_path)
    run.wait_for(WAITING_HINT)
    run.proc.send_signal(signal.SIGINT)
    code, out = run.finish()
    assert (code, out) == (INTERRUPTED, "")
    assert INTERRUPTED_LINE.encode() in run.err and b"error:" not in run.err
    assert not mock_server.requests  # nothing was asked


def test_ctrl_c_in_a_model_wait_says_the_same(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: too late", delay=60)
    run = Watched([sys.executable, "-m", "agentcli", "run", "what failed?", "-m", "openai/x",
                   "--no-stdin"], _env(mock_server, tmp_path), tmp_path)
    end = time.monotonic() + 60
    while not mock_server.requests:  # the model is being waited for
        assert time.monotonic() < end
        time.sleep(0.05)
    run.proc.send_signal(signal.SIGINT)
    code, out = run.finish()
    assert (code, out) == (INTERRUPTED, "")
    assert INTERRUPTED_LINE.encode() in run.err and b"error:" not in run.err
