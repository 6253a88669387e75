"""The seed run imports only what it uses: no jsonschema stack (its schemas are flat), no MCP
SDK or client, no OpenTelemetry, no web server, no project-trust rules (issue 40), and on a
pipe no Rich."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_lazy_imports import SEED_ACTION

QUESTION = "What is 25% of 300?"
# top-level packages, and agentcli modules with everything under them
# (Rich too: with stdout and stderr piped, the trace and the answer are plain lines.)
NEEDLESS_PACKAGES = ("jsonschema", "jsonschema_specifications", "referencing", "attrs", "rpds",
                     "mcp", "opentelemetry", "starlette", "uvicorn", "rich")
NEEDLESS_OURS = ("agentcli.mcp", "agentcli.tools.mcp", "agentcli.project_trust",
                 "agentcli.callbacks.otel", "agentcli.serve")


def imported(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
             ) -> tuple[str, set[str]]:
    """Run ``agent ARGS`` under ``-X importtime`` (stdout piped): its stdout and the modules
    it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentcli", *args],
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=120, stdin=subprocess.DEVNULL, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return proc.stdout, names


def needless(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in NEEDLESS_PACKAGES
                  or any(m == o or m.startswith(o + ".") for o in NEEDLESS_OURS))


def test_the_seed_run_against_a_model_imports_nothing_it_does_not_use(mock_server: Any) -> None:
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply("Final Answer: 75")
    out, modules = imported("run", QUESTION, "-m", "openai/mock-model", env={
        "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "k"})
    assert out.strip() == "75"
    assert "agentcli.tools.calculator" in modules  # the list is read: the tool it used is there
    assert needless(modules) == []


def test_the_offline_demo_imports_nothing_it_does_not_use() -> None:
    out, modules = imported("run", QUESTION)
    assert out.strip().splitlines()[-1] == "75"
    assert needless(modules) == []


def test_a_configured_mcp_server_or_project_env_loads_their_modules(tmp_path: Path) -> None:
    """The other side: the same command with an (unused) MCP server configured and a project
    ``.env`` does import what reads them, so the checks above can fail."""
    config = tmp_path / "c.yaml"
    config.write_text('mcp_servers: {ev: {command: "node", args: ["x.js"]}}\n')
    (tmp_path / ".env").write_text("AGENT_MAX_ITERATIONS=5\n")
    _, modules = imported("run", QUESTION, "-c", str(config), cwd=tmp_path)
    assert {"agentcli.mcp.config", "agentcli.project_trust"} <= set(needless(modules))


@pytest.mark.parametrize("schema", [{"type": "object", "properties": {"n": {"minimum": 1}}}])
def test_a_schema_the_flat_check_does_not_read_loads_jsonschema(schema: Any) -> None:
    code = ("import sys; from agentcli.type_schema import best_error; "
            f"print(best_error({schema!r}, {{'n': 2}}), 'jsonschema' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert proc.stdout.split() == ["None", "True"]
