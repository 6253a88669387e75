"""One output-schema check on every path (issue 39): the answer-now reply (the one extra
request made when a run stalls or reaches a limit) is checked against ``--schema`` exactly like
a normal answer, through the real ``agent`` and through the library API; the schema is an input
of the run (issue 38), so one executor serves runs with and without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.agents.base import final_instruction

SCHEMA = {"type": "object", "properties": {"value": {"type": "number"}},
          "required": ["value"], "additionalProperties": False}
CALC = '{"action": "Calculator", "action_input": "70 + 5"}'
QUESTION = "What is seventy plus five?"


def _answer_now(messages: list[dict[str, Any]]) -> bool:
    """The request is the answer-now one (its last user turn carries that instruction)."""
    users = [m for m in messages if m.get("role") == "user"]
    return bool(users) and final_instruction() in str(users[-1].get("content"))


def _run(server: Any, tmp_path: Path, *flags: str,
         schema: dict[str, Any] = SCHEMA) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COLUMNS"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", "--schema", str(path),
         *flags, QUESTION], env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)


def _stalling(server: Any, answer_now_reply: str) -> list[int]:
    """The model repeats one Calculator call until asked for its answer, then sends
    ``answer_now_reply``; returns the list the answer-now requests' numbers go to."""
    asked: list[int] = []

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if _answer_now(body["messages"]):
            asked.append(len(server.requests))
            return {"text": answer_now_reply}
        return {"text": CALC}

    server.set_responder(respond)
    return asked


@pytest.mark.parametrize("flags", [(), ("--max-iterations", "1")], ids=["stall", "limit"])
def test_an_answer_now_reply_that_fails_the_schema_is_no_answer(
        mock_server: Any, tmp_path: Path, flags: tuple[str, ...]) -> None:
    asked = _stalling(mock_server, "75")
    proc = _run(mock_server, tmp_path, *flags)
    assert asked, "the run never asked for its answer"
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert proc.stdout.strip() == ""  # nothing printed as the answer: not 75
    assert "Recovered" not in proc.stderr
    assert "Stopped:" in proc.stderr


def test_an_answer_now_reply_that_matches_the_schema_is_the_answer(
        mock_server: Any, tmp_path: Path) -> None:
    asked = _stalling(mock_server, '{"value": 75}')
    proc = _run(mock_server, tmp_path, "--json")
    assert asked and proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["state"]["structured_response"] == {"value": 75}
    assert json.loads(data["answer"]) == {"value": 75}
    # the answer-now request asked for the schema (its prompt names the field)
    final = next(r.body for r in mock_server.requests if _answer_now(r.body["messages"]))
    assert any('"value"' in str(m["content"]) for m in final["messages"])


def test_schema_mismatch_on_the_normal_path_goes_back_to_the_model(
        mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply('{"action": "Final Answer", "action_input": "75"}')
    mock_server.add_reply('{"action": "Final Answer", "action_input": {"value": 75}}')
    proc = _run(mock_server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"value": 75}
    assert "does not match the required JSON Schema" in json.dumps(
        mock_server.requests[-1].body["messages"])


def test_a_validated_answer_is_the_answer_whatever_its_fields(mock_server: Any,
                                                              tmp_path: Path) -> None:
    """The schema decides a structured answer: an object it accepts whose field is named like
    a tool call's (``action``) is printed, exit 0, and kept in ``structured_response``; stdout
    and the exit code always agree."""
    schema = {"type": "object", "properties": {"action": {"type": "string"}},
              "required": ["action"]}
    for flags in ((), ("--json",)):
        mock_server.add_reply(json.dumps({"action": "Final Answer",
                                          "action_input": {"action": "buy"}}))
        proc = _run(mock_server, tmp_path, *flags, schema=schema)
        assert "Traceback" not in proc.stderr
        assert proc.returncode == 0, proc.stderr
        if not flags:
            assert proc.stdout.strip() == '{"action": "buy"}'
            continue
        data = json.loads(proc.stdout)
        assert data["state"]["structured_response"] == {"action": "buy"}
        assert json.loads(data["answer"]) == {"action": "buy"}


def test_batch_checks_every_answer_against_the_schema(mock_server: Any, tmp_path: Path) -> None:
    """`agent batch --schema`: the same run input, the same check, item by item."""
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "input": "What is 70 + 5?"}\n'
                         '{"id": "b", "input": "And 70 + 6?"}\n')
    mock_server.add_reply('{"action": "Final Answer", "action_input": {"value": 75}}')
    mock_server.set_responder(lambda body: {"text": "Final Answer: 76"})  # never the schema
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COLUMNS"))}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "batch", str(questions), "-o", str(out), "-j", "1",
         "-m", "openai/small", "--schema", str(path)], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    lines = {d["id"]: d for d in map(json.loads, out.read_text().splitlines())}
    assert json.loads(lines["a"]["answer"]) == {"value": 75}
    assert lines["b"]["answer"] is None and lines["b"]["stop_reason"] != "finished"
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": 5}')
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "batch", str(questions), "-o", str(out),
         "-m", "openai/small", "--schema", str(bad)], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "--schema" in proc.stderr and "Traceback" not in proc.stderr
