"""`agent chat` as a subprocess on a real pty against the mock server: SIGKILL loses no
completed turn, and Ctrl-C (typed as ^C) cancels a slow run and returns to the prompt."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.exit_codes import INTERRUPTED_LINE
from agentcli.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
HERE = Path(__file__).parent
PROMPT = r"you>"


def test_sigkill_mid_conversation_loses_no_completed_turn(
    chat_pty: Any, mock_server: Any, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: Hello Ada!")
    mock_server.add_reply("Final Answer: never seen", delay=10)
    chat = chat_pty("--session", "s")
    at = chat.expect(PROMPT)
    chat.send("My name is Ada.\r")
    at = chat.expect(r"Hello Ada!", after=at)
    at = chat.expect(PROMPT, after=at)
    chat.send("And my age?\r")
    deadline = time.monotonic() + 10
    while len(mock_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(chat.proc.pid, signal.SIGKILL)  # mid-run, before the second turn completes
    assert chat.proc.wait(timeout=10) == -signal.SIGKILL

    turns = Store(tmp_path / "a.db").turns("s")
    assert [(t["question"], t["answer"]) for t in turns] == [("My name is Ada.", "Hello Ada!")]

    mock_server.add_reply("Final Answer: Your name is Ada.")
    again = chat_pty("--session", "s")
    at = again.expect(r"Resumed session 's': 1 earlier turn")
    at = again.expect(PROMPT, after=at)
    again.send("What is my name?\r")
    again.expect(r"Your name is Ada\.", after=at)
    messages = mock_server.requests[-1].body["messages"]
    assert [m["content"] for m in messages[1:3]] == ["My name is Ada.", "Hello Ada!"]


def test_ctrl_c_cancels_the_run_and_keeps_the_repl(chat_pty: Any, mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: too slow", delay=8)
    mock_server.add_reply("Final Answer: fast answer")
    chat = chat_pty("--session", "c")
    at = chat.expect(PROMPT)
    chat.send("slow question\r")
    deadline = time.monotonic() + 10
    while not mock_server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    chat.send("\x03")
    at = chat.expect(r"Cancelled; back at the prompt", after=at)  # the 8 s reply never shows
    assert INTERRUPTED_LINE not in chat.text  # one cancel, one line
    at = chat.expect(PROMPT, after=at)
    chat.send("quick question\r")
    at = chat.expect(r"fast answer", after=at)
    at = chat.expect(PROMPT, after=at)
    chat.send("\x04")
    assert chat.proc.wait(timeout=10) == 0
    assert "Traceback" not in chat.text
    assert "too slow" not in chat.text
