"""Shell completion: the scripts `--show-completion` / `agent completion` print, and the
callbacks the shell reaches through `_AGENT_COMPLETE` (tools, agent types, models, sessions)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli import completion as comp
from agentcli.cli.app import app
from agentcli.outcome import run_record

_PROBE = """
import atexit, json, runpy, sys
# at exit: the entry point ends the process itself once its exit handlers have run
atexit.register(lambda: sys.stderr.write("\\nMODULES=" + json.dumps(sorted(sys.modules))))
runpy.run_module("agentcli", run_name="__main__")
"""


def complete(words: str, db: Path | None = None) -> tuple[list[str], set[str]]:
    """Ask `agent` for bash completions of ``words`` (the cursor after the last word)."""
    parts = words.split(" ")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(_AGENT_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(parts) - 1))
    if db is not None:
        env["AGENT_DB"] = str(db)
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)
    modules = set(json.loads(proc.stderr.rsplit("MODULES=", 1)[1]))
    return [line for line in proc.stdout.splitlines() if line], modules


def test_show_completion_bash_zsh_fish() -> None:
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    for shell, marker in (("bash", "complete -o default -F _agent_completion agent"),
                          ("zsh", "compdef _agent_completion agent"),
                          ("fish", "complete --command agent")):
        proc = subprocess.run([sys.executable, "-m", "agentcli", "--show-completion", shell],
                              capture_output=True, text=True, env=env, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        assert marker in proc.stdout and "_AGENT_COMPLETE=complete_" in proc.stdout
        same = CliRunner().invoke(app, ["completion", shell])
        assert same.stdout.strip() == proc.stdout.strip()
    bad = CliRunner().invoke(app, ["completion", "tcsh"])
    assert bad.exit_code == 2 and "choose bash, zsh or fish" in bad.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_show_completion_detects_the_running_shell() -> None:
    proc = subprocess.run(["bash", "-c", f"'{sys.executable}' -m agentcli --show-completion; true"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert "complete -o default -F _agent_completion agent" in proc.stdout, proc.stderr
    assert "--install-completion" in CliRunner().invoke(app, ["--help"]).stdout


def test_commands_options_tools_agents_through_the_shell_protocol() -> None:
    assert "run" in complete("agent r")[0]
    assert {"--tools", "--tools-module", "--thread"} <= set(complete("agent run --t")[0])
    tools, modules = complete("agent run --tools llm-math,wiki")
    assert tools == ["llm-math,wikipedia"]
    assert complete("agent tools show llm-")[0] == ["llm-math"]
    agents, _ = complete("agent run --agent chat-")
    assert agents == ["chat-zero-shot-react-description",
                      "chat-conversational-react-description"]
    assert complete("agent chat --memory w")[0] == ["window"]
    heavy = {"httpx", "agentcli.models.openai_compat", "agentcli.executor", "mcp"} & modules
    assert heavy == set()  # cheap: no HTTP client, no executor, no MCP


def test_models_and_sessions_come_from_the_store(tmp_path: Path) -> None:
    from agentcli.schema import RunResult
    from agentcli.store import Store

    db = tmp_path / "a.db"
    store = Store(db)
    store.log_run(run_record("q", RunResult("a", (), "finished"), model="dashscope/qwen-turbo"))
    store.ensure_session("budget")
    store.ensure_session("bugs")
    store.close()
    models, _ = complete("agent run -m d", db)
    assert models[:3] == ["dashscope/qwen-turbo", "dashscope/", "deepseek/"]
    assert sorted(complete("agent chat --session bu", db)[0]) == ["budget", "bugs"]
    assert sorted(complete("agent run --thread b", db)[0]) == ["budget", "bugs"]
    assert complete("agent sessions show bud", db)[0] == ["budget"]
    assert complete("agent logs show ", db)[0] == ["1"]


def test_callbacks_directly(tmp_path: Path) -> None:
    from types import SimpleNamespace

    ctx: Any = SimpleNamespace(params={"db": str(tmp_path / "absent.db")})

    assert comp.complete_tools("llm-math,llm") == []  # already listed
    assert comp.complete_tools("") and "," not in comp.complete_tools("")[0]
    assert comp.complete_sessions(ctx, "") == []
    assert not (tmp_path / "absent.db").exists()  # completion never creates the file
    assert "openai/" in comp.complete_models(ctx, "op")
    assert comp.ARGUMENT_COMPLETERS["completion"]("z") == ["zsh"]
