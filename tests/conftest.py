"""Shared fixtures: env isolation, a loopback-only network guard, the mock model server."""

from __future__ import annotations

import compileall
import ipaddress
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.models.presets import PRESETS

# OTEL_: a developer's collector settings must not switch export on in tests; then the prefix
# of every registered provider's variables (OPENAI_, DASHSCOPE_, ...)
_ENV_PREFIXES = ("AGENT_", "OTEL_", *sorted({
    name.split("_", 1)[0] + "_" for p in PRESETS.values() for name in (p.key_env, p.base_url_env)
    if name}))


# A shell starts a background job (`pytest ... &`) with SIGINT ignored, and a child process
# inherits that: the Ctrl-C tests would then test nothing. Python's own handler, as in a
# terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _is_loopback(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    else:
        return True  # unix sockets
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile the package once, before any worker starts: hundreds of tests start
    ``agent`` in a child process, and with ``PYTHONDONTWRITEBYTECODE`` set (as on some CI
    machines) an editable tree without ``__pycache__`` would be compiled again by each one
    (~0.1 s of CPU a child). ``compileall`` writes the files regardless, atomically."""
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        compileall.compile_dir(Path(__file__).resolve().parents[1] / "agentcli", quiet=1)


def pytest_configure(config: pytest.Config) -> None:
    """``python -m agentcli`` children fork from a warm zygote (``tests/support/zygote.py``;
    ``AGENTCLI_TEST_COLD=1`` starts every one cold)."""
    from tests.support import zygote

    zygote.install()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the real npm MCP servers ``npm`` (directly or through another
    fixture), so the README's quick command can skip them by marker."""
    for item in items:
        if "npm_servers" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.npm)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block every connection that is not to 127.0.0.0/8 or ::1."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")
        return real_connect(sock, address)

    def guard_ex(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guard)
    monkeypatch.setattr(socket.socket, "connect_ex", guard_ex)


@pytest.fixture(autouse=True)
def _cold_children(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked ``cold`` starts its ``agent`` children with the real ``Popen``."""
    if request.node.get_closest_marker("cold") is not None:
        from tests.support import zygote

        monkeypatch.setattr(subprocess, "Popen", zygote.REAL_POPEN)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No user config, keys or .env leak into tests; Ollama probes hit a closed port."""
    for key in list(os.environ):
        if key.startswith(_ENV_PREFIXES) or key.endswith("_API_KEY"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9/v1")  # discard port: nothing there
    monkeypatch.setenv("NO_COLOR", "1")
    # The developer's terminal type must not decide what a test sees: under TERM=dumb Rich
    # draws no live display (no spinner). Tests that are about a dumb terminal set it.
    monkeypatch.setenv("TERM", "xterm-256color")
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture
def mock_server() -> Iterator[Any]:
    """A started local OpenAI-compatible server on a free loopback port."""
    from tests.support.mock_server import MockOpenAIServer

    server = MockOpenAIServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
