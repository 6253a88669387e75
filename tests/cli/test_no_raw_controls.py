"""Text from a model, a tool, a file or the store reaches the terminal with its control
characters shown (``\\x1b``), never obeyed: trace, answer, tools call, logs, sessions show."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agentcli import events as ev
from agentcli.cli.app import app
from agentcli.cli.live import render_answer
from agentcli.cli.render import TraceRenderer
from agentcli.outcome import run_record
from agentcli.schema import AgentAction, AgentFinish, AgentStep, RunResult
from agentcli.store import Store

ESC = "\x1b[2K\x1b[1G"
SHOWN = r"\x1b[2K\x1b[1G"
runner = CliRunner()


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]


def test_trace_and_answer_show_escapes() -> None:
    buf = StringIO()
    console = Console(file=buf, width=200, force_terminal=True, color_system=None)
    trace = TraceRenderer(console)
    action = AgentAction("terminal", f"rm x #{ESC}echo", f"Thought: hide{ESC}\nAction: t")
    trace.on_event(ev.ActionEvent(action))
    trace.on_event(ev.Observation(AgentStep(action, f"out{ESC}put")))
    trace.on_event(ev.Finish(AgentFinish({"output": f"done{ESC}"}, "")))
    render_answer(console, f"answer{ESC}")
    out = buf.getvalue()
    for expected in (f"rm x #{SHOWN}echo", f"hide{SHOWN}", f"out{SHOWN}put", f"done{SHOWN}",
                     f"answer{SHOWN}"):
        assert expected in out
    assert ESC not in out


def test_tools_call_output_shows_escapes(tmp_path: Path) -> None:
    module = tmp_path / "t.py"
    module.write_text("from agentcli.tools import tool\n\n@tool\ndef paint(text: str) -> str:\n"
                      '    """Colour text."""\n    return "\\x1b[31m" + text + "\\x9b2K"\n')
    result = runner.invoke(app, ["tools", "call", "paint", "red", "--tools-module", str(module)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "\\x1b[31mred\\x9b2K\n"


@pytest.fixture
def store_with_escapes(tmp_path: Path) -> Path:
    db = tmp_path / "a.db"
    store = Store(db)
    step = AgentStep(AgentAction("read_file", "f", "log"), f"file{ESC}text")
    store.ensure_session("s")
    store.add_turn(run_record(f"question{ESC}", RunResult(f"answer{ESC}\x9b", (step,), "finished"),
                              session="s"),
                   memory_state={})
    store.close()
    return db


@pytest.mark.parametrize("args", [["logs"], ["sessions", "show", "s"]])
def test_logs_and_sessions_show_escapes(store_with_escapes: Path, args: list[str]) -> None:
    result = runner.invoke(app, [*args, "--db", str(store_with_escapes)])
    assert result.exit_code == 0, result.stderr
    assert f"question{SHOWN}" in result.stdout and f"answer{SHOWN}\\x9b" in result.stdout
    assert raw_controls(result.stdout) == []


def test_logs_json_keeps_the_data_but_no_raw_controls(store_with_escapes: Path) -> None:
    result = runner.invoke(app, ["logs", "--jsonl", "--db", str(store_with_escapes)])
    assert raw_controls(result.stdout) == []
    row: dict[str, Any] = json.loads(result.stdout)
    assert row["answer"] == f"answer{ESC}\x9b"  # the same data for a JSON reader
