"""Pipes: piped stdin joins the question; list commands print tab-separated rows when piped;
nothing is hard-wrapped at 80 columns. Every test runs with no COLUMNS set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app

runner = CliRunner()
LONG = "word " * 40  # 200 characters: would wrap at Rich's default 80 columns


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


def _env(server: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
    return env


def _agent(*args: str, env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, timeout=120, **kw)


def test_piped_text_is_sent_before_the_question(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: a summary")
    proc = _agent("run", "summarize this", "-m", "openai/any", "-q", env=_env(mock_server),
                  input="Notes: the launch moved to Friday.\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "a summary\n"
    sent = mock_server.requests[0].body["messages"][-1]["content"]
    assert "Notes: the launch moved to Friday.\n\nsummarize this" in sent


def test_dash_still_reads_the_question_alone(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: four")
    proc = _agent("run", "-", "-m", "openai/any", "-q", env=_env(mock_server),
                  input="What is 2+2?\n")
    assert proc.stdout == "four\n", proc.stderr
    sent = mock_server.requests[0].body["messages"][-1]["content"]
    assert "What is 2+2?" in sent and "\n\n-" not in sent


def test_no_stdin_and_no_stdin_flag_do_not_block(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: one")
    mock_server.add_reply("Final Answer: two")
    proc = _agent("run", "first", "-m", "openai/any", "-q", env=_env(mock_server),
                  stdin=subprocess.DEVNULL)
    assert proc.stdout == "one\n", proc.stderr
    # A pipe that stays open and sends nothing (a CI runner's stdin): --no-stdin goes on.
    with subprocess.Popen(
        [sys.executable, "-m", "agentcli", "run", "second", "-m", "openai/any", "-q",
         "--no-stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=_env(mock_server)) as child:
        assert child.stdout is not None and child.stderr is not None
        child.wait(timeout=120)  # stdin is still open: communicate() would close it
        out, err = child.stdout.read(), child.stderr.read()
    assert out == "two\n", err
    assert mock_server.requests[1].body["messages"][-1]["content"] == "second"


def test_a_slow_pipe_is_read_to_its_end(mock_server: Any) -> None:
    """`(sleep 2; cat notes.txt) | agent run summarize`: the notes are part of the question."""
    mock_server.add_reply("Final Answer: summed up")
    with subprocess.Popen(
        [sys.executable, "-m", "agentcli", "run", "summarize", "-m", "openai/any", "-q"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(mock_server)) as child:
        assert child.stdin is not None
        child.stdin.write("first line of the notes\n")
        child.stdin.flush()
        # The run has started and read what came so far, but it waits for the end of input.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert child.poll() is None and mock_server.requests == []
        out, err = child.communicate("last line of the notes\n", timeout=120)
    assert out == "summed up\n", err
    sent = mock_server.requests[0].body["messages"][-1]["content"]
    assert sent == "first line of the notes\nlast line of the notes\n\nsummarize"


def test_endless_or_binary_stdin_is_refused_with_one_line(mock_server: Any) -> None:
    endless = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        proc = _agent("run", "q", "-m", "openai/any", env=_env(mock_server),
                      stdin=endless.stdout)
    finally:
        endless.kill()
        endless.wait()
        assert endless.stdout is not None
        endless.stdout.close()
    assert proc.returncode == 2 and "more than 1 MiB" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    with open("/dev/zero", "rb") as zeros:
        proc = _agent("run", "q", "-m", "openai/any", env=_env(mock_server), stdin=zeros)
    assert proc.returncode == 2 and "binary data" in proc.stderr
    assert mock_server.requests == []


def test_empty_pipe_with_a_question_asks_just_the_question(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: ok")
    proc = _agent("run", "hello", "-m", "openai/any", "-q", env=_env(mock_server), input="")
    assert proc.stdout == "ok\n", proc.stderr
    assert mock_server.requests[0].body["messages"][-1]["content"].endswith("hello")


def _tsv(stdout: str) -> list[list[str]]:
    return [line.split("\t") for line in stdout.splitlines()]


def test_agents_list_piped_is_one_row_per_type() -> None:
    result = runner.invoke(app, ["agents", "list"])
    rows = _tsv(result.stdout)
    assert rows[0] == ["name", "suits", "tools it accepts", "default for"]
    names = [r[0] for r in rows[1:]]
    assert "chat-conversational-react-description" in names
    assert all(len(r) == 4 for r in rows)
    grep = [line for line in result.stdout.splitlines() if "conversational" in line]
    assert any(line.startswith("chat-conversational-react-description\t") for line in grep)


def test_tools_and_sessions_list_piped_are_tab_separated(tmp_path: Path) -> None:
    rows = _tsv(runner.invoke(app, ["tools", "list"]).stdout)
    calc = next(r for r in rows if r[0] == "llm-math")
    assert rows[0][0] == "name" and calc[:3] == ["llm-math", "yes", "no"]
    assert all(len(r) == len(rows[0]) for r in rows)
    from agentcli.store import Store

    db = tmp_path / "a.db"
    store = Store(db)
    store.ensure_session("work\tlong " + LONG, model="openai/x")
    store.close()
    out = runner.invoke(app, ["sessions", "list", "--db", str(db)]).stdout
    rows = _tsv(out)
    assert rows[0] == ["name", "turns", "updated", "model", "agent"]
    assert rows[1][0] == "work\\tlong " + LONG  # a tab inside a value is escaped, not a column
    assert rows[1][3] == "openai/x"


def test_long_lines_are_not_wrapped_when_piped(mock_server: Any) -> None:
    mock_server.add_reply("Thought: " + LONG + "\nFinal Answer: " + LONG)
    proc = _agent("run", "long?", "-m", "openai/any", env=_env(mock_server),
                  stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert LONG.strip() in proc.stdout
    assert LONG.strip() in proc.stderr  # the thought, on one line
    bad = _agent("run", "q", "-t", "calculator_" + "x" * 90, env=_env(mock_server),
                 stdin=subprocess.DEVNULL)
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_json_output_unaffected_by_pipes(mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: x")
    proc = _agent("run", "q", "-m", "openai/any", "--json", env=_env(mock_server), input="ctx")
    assert json.loads(proc.stdout)["answer"] == "x"


def test_chat_reads_messages_from_a_pipe_without_drawing_a_prompt(mock_server: Any,
                                                                   tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: first done")
    mock_server.add_reply("Final Answer: second done")
    proc = _agent("chat", "-m", "openai/any", "--db", str(tmp_path / "a.db"),
                  input="one line\ntwo \\\nlines\n", env=_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert "first done" in proc.stdout and "second done" in proc.stdout
    assert "you> one line\n" in proc.stdout and "you> two \nlines\n" in proc.stdout
    assert "\x1b" not in proc.stdout and "\n\n\n" not in proc.stdout
    asked = [r.body["messages"][-1]["content"] for r in mock_server.requests]
    assert asked == ["one line", "two \nlines"]  # a trailing backslash continues the message
