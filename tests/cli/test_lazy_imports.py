"""Piped runs import only what they use: no Markdown renderer, no unused tool module, no TLS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

FAMILIES = ("search", "net", "processes", "files", "sql", "misc", "calculator")
_PROBE = """
import atexit, json, runpy, ssl, sys
_tls = ssl.create_default_context
def _count_tls(*a, **kw):
    sys.stderr.write("\\nTLS-CONTEXT-BUILT")
    return _tls(*a, **kw)
ssl.create_default_context = _count_tls
sys.argv = ["agent", *sys.argv[1:]]
# at exit: the entry point ends the process itself once its exit handlers have run
atexit.register(lambda: sys.stderr.write("\\nMODULES=" + json.dumps(sorted(sys.modules))))
runpy.run_module("agentcli", run_name="__main__")
"""
SEED_ACTION = ('Thought: use the calculator\nAction:\n```\n{"action": "Calculator", '
               '"action_input": "300 * 0.25"}\n```\n')


def probe(*args: str, env: dict[str, str] | None = None) -> tuple[str, str, set[str]]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr, set(json.loads(proc.stderr.rsplit("MODULES=", 1)[1]))


def test_tools_list_imports_no_tool_module() -> None:
    out, _, modules = probe("tools", "list")
    assert "terminal" in out and "sql_db_query" in out and "requests_all" in out
    assert sorted(f for f in FAMILIES if f"agentcli.tools.{f}" in modules) == []
    assert sorted(m for m in modules if m.split(".")[0] == "rich") == []  # piped: plain text


def test_piped_run_skips_markdown_tls_and_unused_tools(mock_server: Any) -> None:
    mock_server.add_reply(SEED_ACTION)
    mock_server.add_reply("Final Answer: **75**")
    out, err, modules = probe("run", "What is 25% of 300?", "-m", "openai/mock-model", "-q",
                         env={"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "k"})
    assert "75" in out
    assert "agentcli.tools.calculator" in modules  # the one tool that was named
    unused = sorted(f for f in FAMILIES if f != "calculator" and f"agentcli.tools.{f}" in modules)
    assert unused == []
    assert sorted({"rich.markdown", "markdown_it", "pygments"} & modules) == []
    assert "TLS-CONTEXT-BUILT" not in err  # no SSL context for an http:// URL
    # Only for a flag or a config this run does not have: -T/--save, -f, YAML tools; the
    # answer's Markdown check is for a terminal.
    needless = {"agentcli.saved_templates", "agentcli.cli.fragments", "agentcli.tools.yaml_tools",
                "agentcli.cli.answer_markdown"}
    assert sorted(needless & modules) == []
    assert sorted(m for m in modules if m.split(".")[0] == "rich") == []  # piped: plain lines


def test_help_and_tools_list_never_import_opentelemetry() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "AGENT_OTEL": "1"}
    for args in (("--help",), ("tools", "list")):
        _, _, modules = probe(*args, env=env)
        assert sorted(m for m in modules if m.startswith("opentelemetry")) == [], args
        assert "agentcli.callbacks.otel" not in modules and "agentcli.otel_export" not in modules
