"""``agent chat`` remembers how a session was set up: a resumed session comes back with the
agent type and tools that ``/agent`` and ``/tools`` gave it; a session left without a single
turn is not kept. Runs the real entry point with piped input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def agent(*args: str, server: Any, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, input=stdin, timeout=120)


def test_a_resumed_session_keeps_its_agent_and_tools(mock_server: Any, tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    mock_server.add_reply("Final Answer: hello")
    first = agent("chat", "-m", "openai/any", "--db", db, "--session", "s1", server=mock_server,
                  stdin="/agent zero-shot-react-description\n/tools add sleep\nhi\n")
    assert first.returncode == 0, first.stderr
    again = agent("chat", "-m", "openai/any", "--db", db, "--session", "s1",
                  server=mock_server, stdin="/agent\n/tools\n")
    assert again.returncode == 0, again.stderr
    out = " ".join(again.stdout.split())
    assert "restored this session's agent zero-shot-react-description and tools" in out
    assert "agent type: zero-shot-react-description" in out
    listed = again.stdout.split("you> /tools")[1]
    assert "sleep" in listed
    flagged = agent("chat", "-m", "openai/any", "--db", db, "--session", "s1", "-a",
                    "chat-conversational-react-description", server=mock_server,
                    stdin="/agent\n")
    assert "agent type: chat-conversational-react-description" in flagged.stdout  # flag wins


def test_a_session_without_turns_is_not_kept(mock_server: Any, tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    mock_server.add_reply("Final Answer: kept")
    agent("chat", "-m", "openai/any", "--db", db, "--session", "kept", server=mock_server,
          stdin="hi\n")
    agent("chat", "-m", "openai/any", "--db", db, "--session", "empty", server=mock_server,
          stdin="/tools\n")
    listed = agent("sessions", "list", "--db", db, server=mock_server)
    assert listed.returncode == 0, listed.stderr
    assert "kept" in listed.stdout and "empty" not in listed.stdout


def test_chat_without_a_model_is_an_offline_demo(tmp_path: Path) -> None:
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # a port nothing listens on: no local Ollama
    port = closed.getsockname()[1]
    closed.close()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_", "OPENAI_", "DASHSCOPE_"))}
    env.update(OLLAMA_BASE_URL=f"http://127.0.0.1:{port}", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    proc = subprocess.run([sys.executable, "-m", "agentcli", "chat"], capture_output=True,
                          text=True, env=env, input="What is 25% of 300?\nwho are you?\n",
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = " ".join((proc.stdout + proc.stderr).split())
    assert "Offline demo: no model is configured" in out
    assert "Observation: Answer: 75" in out and "Final Answer: 75" in out  # the tool ran
    assert "without a model I can only work out" in out and "AGENT_MODEL" in out


def test_a_resume_holds_back_a_dangerous_tool_and_keeps_it_saved(mock_server: Any,
                                                                  tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    mock_server.add_reply("Final Answer: hello")
    first = agent("chat", "-m", "openai/any", "--db", db, "--session", "ops", server=mock_server,
                  stdin="/agent zero-shot-react-description\n/tools add sleep\n"
                        "/tools allow terminal\nhi\n")
    assert first.returncode == 0, first.stderr
    # Resumed without --allow terminal, and quit at once: the rest of the setup comes back,
    # one line says what was held back, and the saved setup still has terminal.
    again = agent("chat", "-m", "openai/any", "--db", db, "--session", "ops",
                  server=mock_server, stdin="/agent\n/tools\n")
    assert again.returncode == 0, again.stderr
    out = " ".join((again.stdout + again.stderr).split())
    assert ("session 'ops' had terminal allowed; not re-allowed without --allow terminal"
            in out)
    assert "agent type: zero-shot-react-description" in out
    listed = again.stdout.split("you> /tools")[1]
    assert "sleep" in listed and "terminal" not in listed
    allowed = agent("chat", "-m", "openai/any", "--db", db, "--session", "ops", "--allow",
                    "terminal", server=mock_server, stdin="/tools\n")
    assert allowed.returncode == 0, allowed.stderr
    assert "not re-allowed" not in allowed.stdout + allowed.stderr
    listed = allowed.stdout.split("you> /tools")[1]
    assert "terminal" in listed and "sleep" in listed  # the second resume lost nothing
    # /tools rm drops a held-back tool from the saved setup for good.
    dropped = agent("chat", "-m", "openai/any", "--db", db, "--session", "ops",
                    server=mock_server, stdin="/tools rm terminal\n")
    assert "terminal removed from this session's setup" in " ".join(dropped.stdout.split())
    last = agent("chat", "-m", "openai/any", "--db", db, "--session", "ops", "--allow",
                 "terminal", server=mock_server, stdin="/tools\n")
    assert "terminal" not in last.stdout.split("you> /tools")[1]


def test_the_offline_demo_saves_nothing(tmp_path: Path, mock_server: Any) -> None:
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # a port nothing listens on: no local Ollama
    port = closed.getsockname()[1]
    closed.close()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_", "OPENAI_", "DASHSCOPE_"))}
    env.update(OLLAMA_BASE_URL=f"http://127.0.0.1:{port}", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))

    def run(*args: str, stdin: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                              text=True, env={**env, **extra}, input=stdin, timeout=120)

    demo = run("chat", stdin="What is 25% of 300?\n")
    assert demo.returncode == 0, demo.stderr
    assert "Final Answer: 75" in " ".join(demo.stdout.split())
    assert "nothing is saved" in " ".join((demo.stdout + demo.stderr).split())
    listed = run("sessions", "list", stdin="")
    assert listed.returncode == 0, listed.stderr
    assert "default" not in listed.stdout  # no session, no log
    logs = run("logs", "--json", stdin="")
    assert logs.returncode == 0 and logs.stdout.strip() in ("", "[]"), logs.stdout + logs.stderr
    mock_server.add_reply("Final Answer: a real reply")
    real = run("chat", "-m", "openai/any", stdin="hi\n", OPENAI_BASE_URL=mock_server.base_url,
               OPENAI_API_KEY="sk-test")
    assert real.returncode == 0, real.stderr
    assert "Session 'default' (new)" in " ".join(real.stdout.split())
    [request] = [r for r in mock_server.requests if r.path.endswith("/chat/completions")]
    assert "75" not in json.dumps(request.body["messages"])  # no demo turn in its memory


def test_the_offline_run_demo_is_not_logged(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_", "OPENAI_", "DASHSCOPE_"))}
    env.update(OLLAMA_BASE_URL="http://127.0.0.1:9/v1", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    demo = subprocess.run([sys.executable, "-m", "agentcli", "run", "-q", "What is 25% of 300?"],
                          capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert demo.returncode == 0 and demo.stdout == "75\n", demo.stderr
    logs = subprocess.run([sys.executable, "-m", "agentcli", "logs", "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert logs.returncode in (0, 2)
    assert "25% of 300" not in logs.stdout  # `agent run -C` has no demo run to continue
