"""Fixtures for `agent serve`: the real command in a subprocess, on a free loopback port."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_READY = re.compile(r"Serving .* on http://(\S+):(\d+)/v1")
_TOKEN = re.compile(r"^OPENAI_BASE_URL=\S+ OPENAI_API_KEY=(\S+)$")


@dataclass
class Served:
    """A running `agent serve`: its process, port and what it printed on stderr."""

    proc: subprocess.Popen[str]
    port: int
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None
    token: str | None = None  # the token it generated and printed (None: none printed)
    later: queue.Queue[str | None] | None = None  # what it prints after the ready line

    def wait_line(self, needle: str, timeout: float = 60) -> str:
        """The next stderr line holding ``needle`` (the lines before it are kept in
        ``lines``); fails when the server ends or prints none within ``timeout``."""
        assert self.later is not None
        while True:
            line = self.later.get(timeout=timeout)
            assert line is not None, f"agent serve ended without a line with {needle!r}"
            self.lines.append(line)
            if needle in line:
                return line

    @property
    def auth(self) -> dict[str, str]:
        """The Authorization header of the printed token (none when it printed none)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    @property
    def url(self) -> str:
        """The base URL, always through 127.0.0.1 (whatever address the server bound)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> int:
        """Ctrl-C the server; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.reader is not None:
            self.reader.join(10)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        return self.proc.returncode


def _reader(stream: Any, sink: queue.Queue[str | None]) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


@pytest.fixture
def serve(mock_server: Any, tmp_path: Path) -> Iterator[Any]:
    """``serve(*args)``: start `agent serve ARGS --port 0` against the mock model server and
    wait for its "Serving ..." line (a server that exits instead fails the test with its
    stderr)."""
    started: list[Served] = []
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test",
           "AGENT_DB": str(tmp_path / "serve.db")}

    def spawn(*args: str, extra_env: dict[str, str] | None = None) -> Served:
        argv = [sys.executable, "-m", "agentcli", "serve", "-m", "openai/mock-model",
                "--port", "0", *args]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True,
                                env={**env, **(extra_env or {})}, cwd=tmp_path)
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_reader, args=(proc.stderr, lines), daemon=True)
        reader.start()
        seen: list[str] = []
        while True:
            line = lines.get(timeout=60)
            if line is None:
                proc.wait(timeout=10)
                reader.join(10)
                for pipe in (proc.stdout, proc.stderr):
                    if pipe is not None:
                        pipe.close()
                raise AssertionError(f"agent serve exited {proc.returncode}: {''.join(seen)}")
            seen.append(line)
            match = _READY.search(line)
            if match:
                served = Served(proc, int(match.group(2)), seen, reader, later=lines)
                started.append(served)
                if "bearer token required" in line and "--token" not in args \
                        and "AGENT_SERVE_TOKEN" not in (extra_env or {}):
                    printed = lines.get(timeout=60) or ""
                    seen.append(printed)
                    found = _TOKEN.match(printed.strip())
                    assert found, f"no token line after the ready line: {printed!r}"
                    served.token = found.group(1)
                return served

    yield spawn
    for served in started:
        served.stop()


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    from openai_clients import close_all

    yield
    close_all()
