"""A dangerous tool the user approved cannot read the API key back from the agent's own
environment (``/proc/$PPID/environ``): the scrubbed child environment is not undone by one
read. Runs the real ``agent run`` with the terminal and python_repl tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

KEY = "sk-live-9f8e7d6c5b4a"

# cold: the agent's own /proc/PID/environ is what these read (a forked child shows its zygote's)
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux"),
              pytest.mark.cold]


def run_tool(server: Any, tool: str, tool_input: str) -> subprocess.CompletedProcess[str]:
    server.add_reply(f"Action: {tool}\nAction Input: {tool_input}")
    server.add_reply("Final Answer: done")
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY,
           "MY_SERVICE_TOKEN": "tok-abcdef123456"}
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "q", "-m", "openai/any", "-a",
         "zero-shot-react-description", "-t", tool, "--allow", tool, "--yes", "--json"],
        capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)


def observation(server: Any) -> str:
    last = server.requests[-1].body["messages"][-1]["content"]
    return str(last)


def test_terminal_cannot_read_the_key_from_the_parents_environ(mock_server: Any) -> None:
    proc = run_tool(mock_server, "terminal",
                    "tr '\\000' '\\n' < /proc/$PPID/environ | grep -E 'OPENAI_API|TOKEN'; "
                    "echo live=$OPENAI_API_KEY")
    assert proc.returncode == 0, proc.stderr
    seen = observation(mock_server)
    assert "live=\n" in seen or seen.rstrip().endswith("live=")  # the child env is scrubbed
    assert "OPENAI_API_KEY=" in seen  # the parent's environ was read: the value is gone
    assert KEY not in seen and "tok-abcdef123456" not in seen
    assert json.loads(proc.stdout)["answer"] == "done"


def test_python_repl_cannot_read_it_either(mock_server: Any) -> None:
    code = ("import os; print(open(f'/proc/{os.getppid()}/environ','rb').read()"
            ".replace(bytes(1), b' ').decode())")
    proc = run_tool(mock_server, "python_repl", code)
    assert proc.returncode == 0, proc.stderr
    seen = observation(mock_server)
    assert "OPENAI_API_KEY=*" in seen  # read, and blank
    assert KEY not in seen and "tok-abcdef123456" not in seen
