"""Two `agent chat --session same` at once (real processes on ptys): the resumed memory keeps
both chats' turns, because the session's memory is versioned and a late writer merges."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
HERE = Path(__file__).parent
PROMPT = r"you>"


def answer(body: dict[str, Any]) -> dict[str, Any]:
    question = body["messages"][-1]["content"]
    return {"text": f"Final Answer: noted {question.split()[-1]}"}


def test_two_chats_on_one_session_lose_no_memory(
    chat_pty: Any, mock_server: Any, tmp_path: Path
) -> None:
    mock_server.set_responder(answer)
    first, second = chat_pty("--session", "same"), chat_pty("--session", "same")
    at_first, at_second = first.expect(PROMPT), second.expect(PROMPT)  # both read version 0
    first.send("remember apples\r")
    at_first = first.expect(r"noted apples", after=at_first)
    first.expect(PROMPT, after=at_first)
    second.send("remember pears\r")  # its memory was read before the first chat wrote
    at_second = second.expect(r"noted pears", after=at_second)
    second.expect(PROMPT, after=at_second)
    first.send("remember plums\r")  # and the first chat is now behind the second
    at_first = first.expect(r"noted plums", after=at_first)
    first.expect(PROMPT, after=at_first)

    info = Store(tmp_path / "a.db").session("same")
    assert info is not None and info.turns == 3
    assert info.memory_state["turns"] == [
        ["remember apples", "noted apples"], ["remember pears", "noted pears"],
        ["remember plums", "noted plums"],
    ]
    resumed = chat_pty("--session", "same")
    at = resumed.expect(r"Resumed session 'same': 3 earlier turn")
    at = resumed.expect(PROMPT, after=at)
    resumed.send("remember figs\r")
    resumed.expect(r"noted figs", after=at)
    history = [m["content"] for m in mock_server.requests[-1].body["messages"][1:-1]]
    assert history == ["remember apples", "noted apples", "remember pears", "noted pears",
                       "remember plums", "noted plums"]
