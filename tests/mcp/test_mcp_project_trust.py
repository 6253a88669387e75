"""A project's ``.mcp.json`` starts nothing until it is trusted (issue 20 #13): off a
terminal its servers are refused with a one-line error naming ``agent mcp trust``; trust is
remembered per path and content, so a changed file is refused again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
ECHO = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_echo_server.py"


def agent(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=full, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL)


def project(tmp_path: Path, marker: Path, **extra: Any) -> Path:
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": sys.executable, "args": [str(ECHO)], "env": {"MARKER_FILE": str(marker)},
        **extra}}}))
    return root


def test_an_untrusted_project_file_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = project(tmp_path, marker)
    proc = agent("mcp", "tools", "proj", cwd=root)
    assert proc.returncode == 2
    err = " ".join(proc.stderr.split())
    assert "which you have not trusted" in err and "agent mcp trust" in err
    assert not marker.exists()  # the command never ran
    listed = agent("mcp", "list", cwd=root)
    assert "no (agent mcp trust)" in listed.stdout


def test_trust_is_remembered_until_the_file_changes(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = project(tmp_path, marker)
    trusted = agent("mcp", "trust", cwd=root)
    assert trusted.returncode == 0 and "is trusted (servers: proj)" in trusted.stdout
    ok = agent("mcp", "tools", "proj", cwd=root)
    assert ok.returncode == 0, ok.stderr
    assert "echo" in ok.stdout and marker.exists()
    marker.unlink()
    project(tmp_path, marker, startup_timeout=20)  # the file changed: asked again
    again = agent("mcp", "tools", "proj", "--refresh", cwd=root)
    assert again.returncode == 2 and "which you have not trusted" in again.stderr
    assert not marker.exists()
    assert agent("mcp", "untrust", cwd=root).returncode == 0


def test_a_project_file_cannot_mark_itself_trusted(tmp_path: Path) -> None:
    from agentcli.config import Settings
    from agentcli.mcp.config import server_configs

    root = project(tmp_path, tmp_path / "m", trusted=True)
    here = Path.cwd()
    os.chdir(root)
    try:
        conf = server_configs(Settings())["proj"]
    finally:
        os.chdir(here)
    assert conf.trusted is False and conf.project_file == str(root / ".mcp.json")
