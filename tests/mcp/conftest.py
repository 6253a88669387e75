"""Real MCP servers from npm (server-everything, server-filesystem), installed once into a cache
dir (``$AGENTCLI_NPM_CACHE`` or ``~/.cache/agentcli-npm``); tests skip, saying why, without npm."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
# resolved at import, before the autouse fixture points HOME at a temporary directory
NPM_DIR = Path(os.environ.get("AGENTCLI_NPM_CACHE") or Path.home() / ".cache" / "agentcli-npm")
PACKAGES = ("@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem")


def _entry(package: str) -> Path:
    return NPM_DIR / "node_modules" / package / "dist" / "index.js"


@pytest.fixture(scope="session")
def npm_servers() -> dict[str, Path]:
    """Paths to the two servers' entry scripts (installed with npm if missing)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: the real-server MCP tests need them")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    # pytest-xdist runs this once per worker: one installs, the others wait for it
    with (NPM_DIR / ".agentcli-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _install()
    return {"everything": _entry(PACKAGES[0]), "filesystem": _entry(PACKAGES[1])}


def _install() -> None:
    if not all(_entry(p).is_file() for p in PACKAGES):
        try:
            proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                                   str(NPM_DIR), *PACKAGES], capture_output=True, text=True,
                                  timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install timed out: npm registry unreachable?")
        if proc.returncode != 0 or not all(_entry(p).is_file() for p in PACKAGES):
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            pytest.skip(f"npm install of the MCP test servers failed (unreachable?): {last}")


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def everything_http(npm_servers: dict[str, Path], request: Any, tmp_path: Path) -> Iterator[str]:
    """server-everything over HTTP: the mode (``streamableHttp`` or ``sse``) comes from the
    test's parameter; yields the endpoint URL."""
    mode = request.param
    port = free_port()
    log = (tmp_path / f"{mode}.log").open("w")
    proc = subprocess.Popen(["node", str(npm_servers["everything"]), mode],
                            env={**os.environ, "PORT": str(port)}, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail(f"server-everything {mode} did not listen on {port}")
        yield f"http://127.0.0.1:{port}/{'mcp' if mode == 'streamableHttp' else 'sse'}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture(autouse=True)
def _close_mcp_servers() -> Iterator[None]:
    """Each test starts its own servers (they would outlive the test's temporary dirs)."""
    from agentcli.mcp import pool

    yield
    pool.close_all()
