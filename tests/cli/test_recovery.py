"""Never lose an answer the model already has (issue 22): a repeated call is not run again,
and after a stall the model is asked once for its answer, without tools, by default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CALC = '{"action": "Calculator", "action_input": "25 / 100 * 300"}'
FINAL = '{"action": "Final Answer", "action_input": "75"}'


def run(server: Any, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", *flags,
         "What is 25% of 300?"], env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)


def bodies(server: Any) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def test_a_repeated_call_asks_for_the_answer_at_once_and_exits_0(
    mock_server: Any, tmp_path: Path
) -> None:
    """Issue 31: the first repeat of a call that succeeded shows the model has its result;
    the answer is asked for then (no tools), not after three identical replies."""
    mock_server.add_reply(CALC)
    mock_server.add_reply(CALC)  # the same call again: not run, the answer is asked for
    mock_server.add_reply(FINAL)
    proc = run(mock_server, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] == "75" and out["stop_reason"] == "finished"
    sent = bodies(mock_server)
    assert len(sent) == 3
    assert [s["observation"] for s in out["steps"]] == ["Answer: 75.0"]
    # the answer-now request is constrained to the final-answer branch and says no tools
    final_schema = sent[2]["response_format"]["json_schema"]["schema"]
    assert final_schema["properties"]["action"]["enum"] == ["Final Answer"]
    assert "Do not use any more tools" in json.dumps(sent[2]["messages"])


def test_a_tool_blob_is_never_printed_as_the_answer(mock_server: Any, tmp_path: Path) -> None:
    for _ in range(5):
        mock_server.add_reply(CALC)  # even both answer-now requests get a tool call
    proc = run(mock_server, tmp_path, "--json")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "stalled"
    assert len(bodies(mock_server)) == 5
    plain = run(mock_server_again(mock_server), tmp_path)
    assert plain.stdout.strip() == ""
    said = " ".join(plain.stderr.split())
    assert "the model kept sending the same reply" in said
    # the trace shows the last observation that held a result, before the stop
    assert said.index("Observation: Answer: 75.0") < said.index("Stopped:")


def mock_server_again(server: Any) -> Any:
    for _ in range(5):
        server.add_reply(CALC)
    return server


def test_force_keeps_the_old_stop(mock_server: Any, tmp_path: Path) -> None:
    for _ in range(3):
        mock_server.add_reply(CALC)
    proc = run(mock_server, tmp_path, "--early-stopping", "force")
    assert proc.returncode == 3 and proc.stdout.strip() == ""
    assert len(bodies(mock_server)) == 3


@pytest.mark.parametrize(("phrase", "observation"), [
    ("2 to the power of 10", "Answer: 1024"), ("35% of 240", "Answer: 84.0"),
    ("the sum of 12, 45 and 78", "Answer: 135"), ("How many minutes are in 2.5 hours?",
                                                 "Answer: 150.0"),
    ("40% more than 250", "Answer: 350.0"), ("square root of 196", "Answer: 14.0"),
])
def test_calculator_forms_through_agent_run(mock_server: Any, tmp_path: Path, phrase: str,
                                            observation: str) -> None:
    """A phrase a small model copies from the question is read as arithmetic, not sent back
    as an error the model repeats, and no model call is made inside the Calculator."""
    mock_server.add_reply(json.dumps({"action": "Calculator", "action_input": phrase}))
    mock_server.add_reply('{"action": "Final Answer", "action_input": "done"}')
    proc = run(mock_server, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["steps"][0]["observation"] == observation
    assert len(bodies(mock_server)) == 2


def test_a_bare_percentage_is_refused_not_replaced_by_the_question(
        mock_server: Any, tmp_path: Path) -> None:
    """'25%' alone, for 'What is 25% of 300?': the Calculator computes what it is given
    (issue 31), so the observation refuses the percentage of nothing; it never reads the run's
    question."""
    mock_server.add_reply('{"action": "Calculator", "action_input": "25%"}')
    mock_server.add_reply(FINAL)
    proc = run(mock_server, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    observation = json.loads(proc.stdout)["steps"][0]["observation"]
    assert "'25%' is a percentage of nothing" in observation
    assert "75" not in observation and "question" not in observation.lower()
