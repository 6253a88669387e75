"""The thinking spinner (a terminal only, gone before output) and `/verbose off` in chat."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from pty_session import PtySession
from rich.console import Console

from agentcli import events as ev
from agentcli.cli.repl import ChatRepl
from agentcli.cli.spinner import ThinkingSpinner, _Elapsed
from agentcli.config import Settings
from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatRequest, ChatResult
from agentcli.store import Store

ACTION = ('Thought: I need to compute the share.\nAction:\n```\n'
          '{"action": "Calculator", "action_input": "300 * 0.25"}\n```\n')


def test_spinner_shows_elapsed_seconds_in_a_terminal_only() -> None:
    buf = StringIO()
    term = Console(file=buf, force_terminal=True, width=100)
    spinner = ThinkingSpinner(term)
    spinner.on_event(ev.ModelStart(ChatRequest(()), "m"))
    assert spinner._status is not None
    spinner.on_event(ev.ModelEnd(ChatResult("x"), "m", 0.0))
    assert spinner._status is None
    assert "Thinking…" in buf.getvalue()
    shown = Console(file=StringIO(), width=100)
    shown.print(_Elapsed("Thinking", 0.0))
    assert re.search(r"Thinking… \d+\.\ds", shown.file.getvalue())  # type: ignore[attr-defined]
    piped = StringIO()
    quiet = ThinkingSpinner(Console(file=piped, width=100))
    quiet.on_event(ev.ModelStart(ChatRequest(()), "m"))
    assert quiet._status is None and piped.getvalue() == ""


def test_a_dumb_terminal_gets_no_spinner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")  # it cannot redraw a line: nothing animated is drawn
    buf = StringIO()
    spinner = ThinkingSpinner(Console(file=buf, force_terminal=True, width=100))
    spinner.on_event(ev.ModelStart(ChatRequest(()), "m"))
    spinner.on_event(ev.ModelEnd(ChatResult("x"), "m", 0.0))
    assert "Thinking" not in buf.getvalue()


def test_visible_tokens_stop_it_hidden_tokens_do_not() -> None:
    term = Console(file=StringIO(), force_terminal=True)
    shown = ThinkingSpinner(term)
    shown.on_event(ev.ModelStart(ChatRequest(()), "m"))
    shown.on_event(ev.ModelToken("Hel"))
    assert shown._status is None
    hidden = ThinkingSpinner(term, tokens_visible=lambda: False)
    hidden.on_event(ev.ModelStart(ChatRequest(()), "m"))
    hidden.on_event(ev.ModelToken("Hel"))
    assert hidden._status is not None
    hidden.on_event(ev.Notice("interrupted", "Interrupted"))
    assert hidden._status is None


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_agent_run_spins_on_a_terminal_and_not_when_piped(mock_server: Any) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-t", TERM="xterm")
    mock_server.add_reply("Final Answer: slow one", delay=1.5)
    session = PtySession([sys.executable, "-m", "agentcli", "run", "hi", "-m", "openai/any"],
                         env=env)
    try:
        session.expect(r"Thinking… \d+\.\ds")
        session.expect(r"slow one")
    finally:
        session.close()
    mock_server.add_reply("Final Answer: piped one", delay=0.5)
    proc = subprocess.run([sys.executable, "-m", "agentcli", "run", "hi", "-m", "openai/any"],
                          capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.stdout == "piped one\n"
    assert "Thinking" not in proc.stderr and "\x1b[?25l" not in proc.stderr


def _chat(tmp_path: Path, keys: str, llm: FakeChatModel) -> str:
    buf = StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        ChatRepl(Settings(agent="chat-conversational-react-description", stream=True),
                 Store(tmp_path / "a.db"), lambda s: llm, session="s",
                 console=Console(file=buf, width=120), input=pipe, output=DummyOutput()).loop()
    return buf.getvalue()


def test_verbose_off_hides_streamed_thoughts_in_chat(tmp_path: Path) -> None:
    final = '```json\n{"action": "Final Answer", "action_input": "It is 75."}\n```'
    shown = _chat(tmp_path, "share?\r\x04", FakeChatModel([ACTION, final]))
    assert "I need to compute the share." in shown
    hidden = _chat(tmp_path, "/verbose off\rshare?\r\x04", FakeChatModel([ACTION, final]))
    assert "I need to compute" not in hidden and "Observation" not in hidden
    assert "It is 75." in hidden
