"""`agent run` with structured actions against the mock server: the schema travels, and bad
replies (refused schema, empty, cut mid-JSON, schema ignored) never hang or traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CALC = '{"action": "Calculator", "action_input": "2*3*4"}'
FINAL = '{"action": "Final Answer", "action_input": "24"}'


def run(server: Any, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", *flags,
         "What is 2*3*4?"], env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)


def test_each_agent_request_carries_the_action_schema(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(CALC)
    mock_server.add_reply(FINAL)
    proc = run(mock_server, tmp_path, "--structured-actions", "on")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "24"
    bodies = [r.body for r in mock_server.requests if r.path.endswith("/chat/completions")]
    assert len(bodies) == 2
    for body in bodies:
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["action"]["enum"] == ["Calculator", "Final Answer"]
        assert body["max_tokens"] == 1024  # a loopback server gets the local reply cap


def test_off_sends_no_schema(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(FINAL)
    proc = run(mock_server, tmp_path, "--structured-actions", "off")
    assert proc.returncode == 0, proc.stderr
    assert "response_format" not in mock_server.requests[-1].body


def test_refused_schema_empty_and_cut_replies(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_fault("status", status=400,
                          message="Unrecognized request argument supplied: response_format")
    mock_server.add_reply("")  # empty reply
    mock_server.add_reply('{"action": "Calculator", "action_input": "2*3')  # cut at max_tokens
    mock_server.add_reply("I think the answer is probably 24 but who knows")  # schema ignored
    mock_server.add_reply(FINAL)
    proc = run(mock_server, tmp_path, "--max-iterations", "6")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "24"
    assert proc.stderr.count("continuing without structured actions") == 1
    bodies = [r.body for r in mock_server.requests if r.path.endswith("/chat/completions")]
    assert "response_format" in bodies[0]
    assert all("response_format" not in b for b in bodies[1:])


def test_on_with_a_refusing_server_is_one_clear_line(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_fault("status", status=400, message="response_format is not supported")
    proc = run(mock_server, tmp_path, "--structured-actions", "on")
    assert proc.returncode == 4
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "structured_actions: off" in line]
    assert len(lines) == 1 and "response_format is not supported" in lines[0]


def test_bad_structured_actions_value_is_a_usage_error(mock_server: Any, tmp_path: Path) -> None:
    proc = run(mock_server, tmp_path, "--structured-actions", "maybe")
    assert proc.returncode == 2
    assert "structured_actions" in proc.stderr and "auto, on, off" in proc.stderr
    assert json.dumps(proc.stderr).count("\\n") <= 2  # one line (plus its end)


def test_schema_answer_is_constrained_and_kept_whole(mock_server: Any, tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"},
                                               "steps": {"type": "integer"}},
              "required": ["answer", "steps"]}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    mock_server.add_reply('{"action": "Final Answer", "action_input": '
                          '{"answer": "24", "steps": 0}}')
    proc = run(mock_server, tmp_path, "--structured-actions", "on", "--schema",
               str(tmp_path / "s.json"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"answer": "24", "steps": 0}  # not collapsed to "24"
    sent = mock_server.requests[0].body["response_format"]["json_schema"]["schema"]
    final = [b for b in sent["anyOf"] if b["properties"]["action"]["enum"] == ["Final Answer"]]
    assert final[0]["properties"]["action_input"] == schema


def test_openai_preset_on_a_llamacpp_server_that_answers_500(
    mock_server: Any, tmp_path: Path
) -> None:
    """llama-cpp-python refuses an unsupported response_format with 500: the field is dropped
    once (no retries of the refusal) and the run answers, exit 0."""
    mock_server.add_fault("status", status=500, message=(
        "response_format: json_schema is not supported by this server"))
    mock_server.add_reply(CALC)
    mock_server.add_reply(FINAL)
    proc = run(mock_server, tmp_path, "--structured-actions", "auto")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "24"
    bodies = [r.body for r in mock_server.requests if r.path.endswith("/chat/completions")]
    assert ["response_format" in b for b in bodies] == [True, False, False]
    assert proc.stderr.count("continuing without structured actions") == 1


def test_yaml_on_and_off_read_as_booleans_are_accepted(mock_server: Any, tmp_path: Path) -> None:
    # YAML 1.1 reads a bare `off` as false and `on` as true: both mean what they say.
    for word, sent in (("off", False), ("on", True)):
        config = tmp_path / f"{word}.yaml"
        config.write_text(f"structured_actions: {word}\ntool_media: {word}\n")
        mock_server.add_reply(FINAL)
        proc = run(mock_server, tmp_path, "--config", str(config))
        assert proc.returncode == 0, proc.stderr
        assert ("response_format" in mock_server.requests[-1].body) is sent, word
