"""A chat session keeps the memory kind it was started with: resumed without --memory it comes
back as that kind; a --memory given now wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def chat(mock_server: Any, tmp_path: Path, *flags: str,
         text: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-t",
               AGENT_DB=str(tmp_path / "a.db"))
    done = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/any",
                           "--session", "kept", *flags], input=text, capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done


def test_a_resumed_session_keeps_its_memory_kind(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: Hello Ada")
    chat(mock_server, tmp_path, "--memory", "buffer", text="My name is Ada\n")
    resumed = chat(mock_server, tmp_path, text="/memory\n")
    said = resumed.stdout + resumed.stderr
    assert "(memory: buffer)" in said and "buffer memory, 2 message(s)" in said
    flagged = chat(mock_server, tmp_path, "--memory", "window", text="/memory\n")
    assert "(memory: window)" in flagged.stdout + flagged.stderr
