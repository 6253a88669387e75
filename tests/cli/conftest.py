"""Fixtures for the CLI tests that drive `agent chat` on a real pseudo-terminal."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pty_session import PtySession

HERE = Path(__file__).parent


@pytest.fixture
def chat_pty(mock_server: Any, tmp_path: Path) -> Iterator[Any]:
    """``spawn(*args)``: an `agent chat` child (memory agent, mock server) on its own pty."""
    sessions: list[PtySession] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1", AGENT_DB=str(tmp_path / "a.db"))

    def spawn(*args: str) -> PtySession:
        argv = [sys.executable, str(HERE / "chat_child.py"), "chat", "-m", "openai/any",
                "--agent", "test-memory-chat", *args]
        session = PtySession(argv, env=env, cwd=str(tmp_path))
        sessions.append(session)
        return session

    yield spawn
    for session in sessions:
        session.close()
