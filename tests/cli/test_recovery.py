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


def trace_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_recovered_run_says_recovered_in_its_traces(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(CALC)  # the one step allowed
    mock_server.add_reply(FINAL)  # the answer, asked for once after the limit
    trace = tmp_path / "t.jsonl"
    proc = run(mock_server, tmp_path, "--max-iterations", "1", "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "75"
    err = " ".join(proc.stderr.split())
    limit = "the agent used all its steps (--max-iterations) without reaching an answer"
    stopped = err.index(f"Stopped: {limit}.")
    recovered = err.index(f"Recovered: {limit}; asked once more, the model gave its answer.")
    assert stopped < recovered  # the stop, then why an answer follows it
    lines = trace_lines(trace)
    [note] = [e for e in lines if e.get("kind") == "recovered"]
    assert note["reason"] == "max_iterations" and note["text"].startswith("Recovered:")
    [end] = [e for e in lines if e["event"] == "chain_end"]
    assert end["outputs"]["answer"] == "75" and end["outputs"]["recovered"] == "max_iterations"


def test_a_stopped_runs_trace_has_no_answer_and_its_reason(mock_server: Any,
                                                           tmp_path: Path) -> None:
    mock_server.add_reply(CALC)
    trace = tmp_path / "t.jsonl"
    proc = run(mock_server, tmp_path, "--max-iterations", "1", "--early-stopping", "force",
               "--trace", str(trace))
    assert proc.returncode == 3, proc.stderr
    text = trace.read_text()
    assert "Agent stopped due to" not in text  # LangChain's canned sentence is no answer
    lines = trace_lines(trace)
    [finish] = [e for e in lines if e["event"] == "agent_finish"]
    assert finish["answer"] is None and finish["stop_reason"] == "max_iterations"
    assert finish["finish"]["return_values"]["output"] is None
    [end] = [e for e in lines if e["event"] == "chain_end"]
    assert end["outputs"]["answer"] is None
    assert end["outputs"]["stop_reason"] == "max_iterations"
    assert not [e for e in lines if e.get("kind") == "recovered"]


def test_serves_trace_of_a_stopped_run_has_no_canned_answer(mock_server: Any,
                                                            tmp_path: Path) -> None:
    import socket

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    server = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "serve", "-m", "openai/small", "--port", str(port),
         "--no-token",
         "--max-iterations", "1", "--agent", "chat-zero-shot-react-description"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "Serving" in line:
                break
        mock_server.add_reply(CALC)
        mock_server.add_reply(CALC)  # the answer-now request gets a tool call again
        reply = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60, json={
            "model": "agent", "messages": [{"role": "user", "content": "What is 25% of 300?"}],
            "agent_trace": True}).json()
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()
    assert reply["choices"][0]["finish_reason"] == "length"
    trace = reply["agent_trace"]
    assert "Agent stopped due to" not in json.dumps(trace)
    [end] = [e for e in trace if e["event"] == "chain_end"]
    assert end["outputs"]["answer"] is None
    assert end["outputs"]["stop_reason"] == "max_iterations"
