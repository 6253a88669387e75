"""Every paginated MCP list is bounded (issue 20 #5): a server that always sends a
``nextCursor`` ends ``agent mcp resources`` and a tool listing with a one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.mcp.mcp_helpers import agent
from tests.support.zygote import server_command

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_endless_pages.py"


def config(tmp_path: Path, endless: str, slow: float = 0, call_timeout: float = 60) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"mcp_servers": {"endless": {
        **server_command(str(SERVER)),
        "env": {"ENDLESS": endless, "SLOW": str(slow)},
        "call_timeout": call_timeout, "startup_timeout": 60}}}))
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


def test_endless_prompt_pages_end_with_a_clear_error(tmp_path: Path) -> None:
    proc = agent("mcp", "prompts", "endless", "-c", config(tmp_path, "prompts"))
    assert proc.returncode != 0
    assert "lists more than 100 pages or 10,000 prompts" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_short_prompt_list_is_read_whole(tmp_path: Path) -> None:
    proc = agent("mcp", "prompts", "endless", "-c", config(tmp_path, "resources"))
    assert proc.returncode == 0, proc.stderr
    assert "p0" in proc.stdout


def test_slow_endless_pages_stop_at_call_timeout_in_all(tmp_path: Path) -> None:
    # 100 pages at 0.2 s each would take 20 s; the whole list gets call_timeout (2 s)
    proc = agent("mcp", "resources", "endless", "-c",
                 config(tmp_path, "resources", slow=0.2, call_timeout=2))
    assert proc.returncode != 0
    err = " ".join(proc.stderr.split())
    assert "took more than 2s (call_timeout) to list its resources; stopped after" in err
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
