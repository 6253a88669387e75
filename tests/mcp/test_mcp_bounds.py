"""Every paginated MCP list is bounded (issue 20 #5): a server that always sends a
``nextCursor`` ends ``agent mcp resources`` and a tool listing with a one-line error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tests.mcp.mcp_helpers import agent

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_endless_pages.py"


def config(tmp_path: Path, endless: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"mcp_servers": {"endless": {
        "command": sys.executable, "args": [str(SERVER)], "env": {"ENDLESS": endless},
        "call_timeout": 60, "startup_timeout": 60}}}))
    return str(path)


def test_endless_resource_pages_end_with_a_clear_error(tmp_path: Path) -> None:
    proc = agent("mcp", "resources", "endless", "-c", config(tmp_path, "resources"))
    assert proc.returncode != 0
    assert "lists more than 100 pages or 10,000 resources" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_endless_tool_pages_are_a_start_error(tmp_path: Path) -> None:
    proc = agent("mcp", "tools", "endless", "-c", config(tmp_path, "tools"))
    assert proc.returncode != 0
    assert "lists more than 100 pages or 10,000 tools" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr
