"""A limit stop prints nothing on stdout (the reason goes to stderr and --json), unless
early_stopping_method generate produced a real answer: run, chat and batch alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agentcli.cli.repl import ChatRepl
from agentcli.config import Settings
from agentcli.executor import FORCE_STOP_MESSAGE
from agentcli.models.fake import FakeChatModel
from agentcli.schema import STOP_WORDS
from agentcli.store import Store

ACTION = 'Action:\n```json\n{"action": "Calculator", "action_input": "2*3"}\n```'


def run(server: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-x")
    return subprocess.run([sys.executable, "-m", "agentcli", "run", "q", "-m", "openai/any",
                           *args], capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("flags", "reason"), [
    (["--max-iterations", "1"], "max_iterations"),
    (["--max-tokens", "1"], "budget"),
])
def test_forced_stop_prints_no_answer(mock_server: Any, flags: list[str], reason: str) -> None:
    mock_server.set_responder(lambda body: {"text": ACTION})
    proc = run(mock_server, *flags)
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert f"Stopped: {STOP_WORDS[reason]}." in " ".join(proc.stderr.split())
    assert proc.stderr.count("Stopped:") == 1  # said once, by the trace
    assert FORCE_STOP_MESSAGE not in proc.stderr  # no fake "Final Answer" in the trace either


def test_forced_stop_json_has_null_answer_and_the_reason(mock_server: Any) -> None:
    mock_server.set_responder(lambda body: {"text": ACTION})
    proc = run(mock_server, "--max-iterations", "1", "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 3
    assert (data["answer"], data["stop_reason"], data["limit"]) == (
        None, "max_iterations", "max_iterations")


def test_generate_prints_the_real_answer(mock_server: Any) -> None:
    mock_server.add_reply(ACTION)
    mock_server.add_reply("Final Answer: six, from what I saw")
    proc = run(mock_server, "--max-iterations", "1", "--early-stopping", "generate")
    assert proc.returncode == 3
    assert proc.stdout == "six, from what I saw\n"


def test_chat_limit_shows_the_reason_not_a_fake_answer(tmp_path: Path) -> None:
    buf = StringIO()
    llm = FakeChatModel(lambda messages: ACTION)
    with create_pipe_input() as pipe:
        pipe.send_text("loop\r\x04")
        repl = ChatRepl(Settings(agent="chat-zero-shot-react-description", max_iterations=1,
                                 tools=["llm-math"]), Store(tmp_path / "a.db"),
                        lambda s: llm, session="s", console=Console(file=buf, width=120),
                        input=pipe, output=DummyOutput())
        repl.loop()
    out = buf.getvalue()
    assert f"Stopped: {STOP_WORDS['max_iterations']}." in " ".join(out.split())
    assert out.count("Stopped:") == 1
    assert FORCE_STOP_MESSAGE not in out
