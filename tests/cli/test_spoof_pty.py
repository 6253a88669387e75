"""A model-written command that hides itself with escape sequences is shown in full on a real
pty (approval panel and trace), and answering "n" refuses it: the hidden ``rm`` never runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pty_session import PtySession

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
SPOOF = "rm -f victim.txt #\x1b[2K\x1b[1G\u2502 echo hello"
SHOWN = r"rm -f victim.txt #\x1b[2K\x1b[1G│ echo hello"  # what the person must see


def test_escape_spoofed_command_is_shown_visibly_and_refused(
    mock_server: Any, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    blob = json.dumps({"action": "terminal", "action_input": SPOOF})
    mock_server.add_reply(f"Thought: clean up\nAction:\n```json\n{blob}\n```")
    mock_server.add_reply("Final Answer: done")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1", AGENT_DB=str(tmp_path / "a.db"))
    session = PtySession(
        [sys.executable, "-m", "agentcli", "run", "tidy up", "-m", "openai/any",
         "-t", "terminal", "--allow", "terminal", "--verbose"],
        env=env, cwd=str(tmp_path), cols=160,
    )
    try:
        at = session.expect(r"terminal wants to run")
        session.expect(r"Allow\?", after=at)
        session.send("n\r")
        session.expect(r"done", after=at)
        assert session.proc.wait(timeout=30) == 0
    finally:
        session.close()
    raw = session._raw.decode("utf-8", "replace")
    assert SHOWN in raw  # the panel and the Action line show every byte, escaped
    assert raw.count(SHOWN) >= 2
    assert "\x1b[2K\x1b[1G\u2502" not in raw  # the model's escapes were never sent raw
    assert victim.read_text() == "keep me"
    observation = mock_server.requests[1].body["messages"][-1]["content"]
    assert "denied by the user" in observation
