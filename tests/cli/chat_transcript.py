"""Record the chat transcript in docs/chat.md: a real `agent chat` in tmux against the mock server.

Run ``python tests/cli/chat_transcript.py`` (needs tmux). The mock model's replies depend on
what it is sent, so the last answer is only right if the resumed session's memory reached it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.mock_server import MockOpenAIServer

HERE = Path(__file__).resolve().parent
SOCKET = "agentcli-transcript"


def _action(thought: str, expression: str) -> dict[str, Any]:
    blob = json.dumps({"action": "Calculator", "action_input": expression}, indent=2)
    return {"text": f"Thought: {thought}\nAction:\n```\n{blob}\n```\n"}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """A model that can only answer from what it is actually sent."""
    messages = body["messages"]
    last = messages[-1]["content"]
    history = [m["content"] for m in messages[1:-1] if m["role"] == "user"]
    worked = "Observation:" in last
    if "25% of 300" in last:
        if not worked:
            return _action("I should calculate 25% of 300.", "300 * 0.25")
        return {"text": "Thought: I have the result.\nFinal Answer: 25% of 300 is 75."}
    if "double" in last.lower():
        if not any("25% of 300" in h for h in history):
            return {"text": "Final Answer: Double what? I have no earlier number."}
        if not worked:
            return _action("The previous answer was 75; double it.", "75 * 2")
        return {"text": "Final Answer: Double that is 150."}
    if "first question" in last:
        if history:
            return {"text": f"Final Answer: Your first question was: \"{history[0]}\""}
        return {"text": "Final Answer: I don't know; this is our first exchange."}
    return {"text": "Final Answer: OK."}


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True,
                          text=True).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "demo")


def wait_for(text: str, count: int = 1, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while screen().count(text) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {text!r}:\n{screen()}")
        time.sleep(0.1)


def type_line(text: str) -> None:
    tmux("send-keys", "-t", "demo", "-l", text)
    tmux("send-keys", "-t", "demo", "Enter")


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed: apt-get install -y tmux")
    server = MockOpenAIServer().start()
    server.set_responder(respond)
    data = Path(tempfile.mkdtemp(prefix="agentcli-demo-"))
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-demo",
           "AGENT_MODEL": "openai/mock-model", "AGENT_TYPE": "test-memory-chat",
           "XDG_DATA_HOME": str(data), "NO_COLOR": "1", "PS1": "$ ", "TERM": "xterm-256color"}
    tmux("new-session", "-d", "-s", "demo", "-x", "100", "-y", "50",
         "-e", f"OPENAI_BASE_URL={env['OPENAI_BASE_URL']}", "bash --norc --noprofile")
    try:
        for key in ("OPENAI_API_KEY", "AGENT_MODEL", "AGENT_TYPE", "XDG_DATA_HOME", "NO_COLOR",
                    "PS1"):
            type_line(f"export {key}='{env[key]}'")
        type_line(f"agent() {{ {sys.executable} {HERE / 'chat_child.py'} \"$@\"; }}")
        type_line("clear")
        time.sleep(0.5)
        tmux("clear-history", "-t", "demo")
        type_line("agent chat --session demo")
        wait_for("you>")
        type_line("What is 25% of 300?")
        wait_for("you>", 2)
        type_line("And double that?")
        wait_for("you>", 3)
        type_line("/exit")
        wait_for("$ ", 2)
        type_line("agent chat --session demo")
        wait_for("you>", 4)
        type_line("/memory")
        wait_for("you>", 5)
        type_line("What was my first question?")
        wait_for("you>", 6)
        type_line("/exit")
        wait_for("$ ", 3)
        type_line("agent logs -q 150")
        wait_for("$ ", 4)
        print("\n".join(line.rstrip() for line in screen().rstrip().splitlines()))
    finally:
        tmux("kill-server")
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
