"""One redaction choke point, end to end: a safe tool reading .env puts the key in front of the
model, but not into the run log, the cassette, the cache, the trace or anything printed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

PLAIN_TOKEN = "zq9PlainValue77xy"  # not key-shaped: only known-value redaction catches it
API_KEY = "plainkey0123456789"
READ_ENV = 'Thought: look\nAction:\n```json\n{"action": "read_file", "action_input": ".env"}\n```'


def _agent(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=60, stdin=subprocess.DEVNULL)


def test_dotenv_read_by_a_tool_is_redacted_everywhere_it_is_kept(
    mock_server: Any, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={API_KEY}\nMY_SERVICE_TOKEN={PLAIN_TOKEN}\n")
    mock_server.add_reply(READ_ENV)
    mock_server.add_reply(f"Final Answer: the token is {PLAIN_TOKEN} and the key {API_KEY}")
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url,
           "AGENT_DB": str(tmp_path / "a.db"), "AGENT_CACHE_PATH": str(tmp_path / "c.sqlite")}
    run = _agent(tmp_path, "run", "what is in .env?", "-m", "openai/any", "-t", "read_file",
                 "--record", "tape.json", "--cache", "--trace", "trace.jsonl", "--json",
                 "--verbose", env=env)
    assert run.returncode == 0, run.stderr
    # The model was shown the file (the user allowed read_file) ...
    assert PLAIN_TOKEN in mock_server.requests[1].body["messages"][-1]["content"]
    assert mock_server.requests[0].headers.get("Authorization") == f"Bearer {API_KEY}"
    # ... but nothing kept or printed holds either secret.
    logs = _agent(tmp_path, "logs", "--jsonl", env=env)
    assert logs.returncode == 0 and '"steps"' in logs.stdout
    kept = {
        "stdout": run.stdout, "stderr": run.stderr, "logs": logs.stdout,
        "cassette": (tmp_path / "tape.json").read_text(),
        "cache": "\n".join(r[0] for r in sqlite3.connect(tmp_path / "c.sqlite").execute(
            "SELECT result FROM responses")),
        "trace": (tmp_path / "trace.jsonl").read_text(),
    }
    for where, text in kept.items():
        assert PLAIN_TOKEN not in text and API_KEY not in text, where
        assert "***" in text or where in ("stderr",), where
    assert json.loads(run.stdout)["answer"] == "the token is *** and the key ***"


def test_replay_of_a_redacted_cassette_still_matches(mock_server: Any, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={PLAIN_TOKEN}\n")
    mock_server.add_reply(READ_ENV)
    mock_server.add_reply("Final Answer: read it")
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": API_KEY,
           "AGENT_DB": str(tmp_path / "a.db")}
    first = _agent(tmp_path, "run", "q", "-m", "openai/any", "-t", "read_file",
                   "--record", "tape.json", env=env)
    assert first.returncode == 0, first.stderr
    again = _agent(tmp_path, "run", "q", "-m", "replay:tape.json", "-t", "read_file", env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "read it"


def test_401_with_debug_prints_a_traceback_without_the_key(
    mock_server: Any, tmp_path: Path
) -> None:
    mock_server.add_fault("status", status=401)  # the mock echoes the key, like real servers
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": API_KEY}
    proc = _agent(tmp_path, "--debug", "run", "q", "-m", "openai/any", env=env)
    assert proc.returncode == 4
    assert "Traceback" in proc.stderr and "401" in proc.stderr
    assert API_KEY not in proc.stderr + proc.stdout


def test_a_key_streamed_in_pieces_is_redacted_in_chat(mock_server: Any, tmp_path: Path) -> None:
    # the mock streams a few characters per event, so the key arrives cut into pieces
    mock_server.add_reply(f"Thought: the key is {API_KEY} as asked.\nFinal Answer: I will not say.")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY=API_KEY)
    proc = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/any",
                           "--stream", "--db", str(tmp_path / "a.db")], input="the key?\n",
                          capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "the key is *** as asked." in proc.stdout
    assert API_KEY[:4] not in proc.stdout + proc.stderr
    assert API_KEY[-4:] not in proc.stdout + proc.stderr


def test_a_key_streamed_in_pieces_is_redacted_in_the_trace(mock_server: Any,
                                                           tmp_path: Path) -> None:
    mock_server.add_reply(f"Thought: it is {API_KEY} here.\nFinal Answer: not telling")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY=API_KEY)
    trace = tmp_path / "t.jsonl"
    env["AGENT_STREAM"] = "1"
    proc = _agent(tmp_path, "run", "q", "-m", "openai/any", "--trace", str(trace),
                  "--db", str(tmp_path / "a.db"), env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    tokens = [line["token"] for line in lines if line["event"] == "llm_new_token"]
    assert len(tokens) > 3, trace.read_text()  # streamed, in pieces
    assert "".join(tokens) == "Thought: it is *** here.\nFinal Answer: not telling", (
        tokens, proc.stderr)
    assert API_KEY not in trace.read_text()
    # no piece of it in any token line (the rest of the trace holds run ids and timestamps,
    # whose hex digits may spell "6789" by chance)
    assert not [t for t in tokens if API_KEY[:4] in t or API_KEY[-4:] in t]
