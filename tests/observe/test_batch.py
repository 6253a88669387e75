"""`agent batch`: results or structured errors, resumable output, eval numbers, faults."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.batch import finished_ids, is_correct, read_items, run_batch
from agentcli.cli.app import app
from agentcli.create import initialize_agent
from agentcli.errors import ProviderError
from agentcli.models.fake import FakeChatModel
from agentcli.schema import Message
from agentcli.tools import load_tools

runner = CliRunner()
_QUESTION = re.compile(r"What is (\d+) \* 3\?")
_OBSERVED = re.compile(r"Observation: Answer: (\S+)")


def reply_for(text: str) -> str:
    """A model that uses the Calculator once, then answers what it observed."""
    seen = _OBSERVED.findall(text)
    if seen:
        return f"Final Answer: {float(seen[-1]):g}"
    n = _QUESTION.search(text)
    assert n, text
    return ('Thought: use the calculator\nAction:\n```\n'
            f'{{"action": "Calculator", "action_input": "{n.group(1)} * 3"}}\n```\n')


def responder(body: dict[str, Any]) -> dict[str, Any]:
    return {"text": reply_for(body["messages"][-1]["content"])}


def write_questions(path: Path, n: int, *, wrong_every: int = 0) -> None:
    with path.open("w") as fh:
        for i in range(n):
            expect = i * 3 + (1 if wrong_every and i % wrong_every == 0 else 0)
            fh.write(json.dumps({"id": f"q{i}", "question": f"What is {i} * 3?",
                                 "answer": expect}) + "\n")


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_is_correct() -> None:
    assert is_correct("75", 75) and is_correct("The answer is 75.0", "75")
    assert is_correct(" Paris. ", "paris") and not is_correct("Lyon", "Paris")
    assert is_correct("1,234", 1234) and not is_correct("74", 75)


def test_read_items_reports_bad_lines_as_items(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "input": "x"}\nnot json\n\n{"id": "a", "input": "y"}\n'
                    '{"question": "z", "gold": 1}\n{"id": "c"}\n')
    items = read_items(path, expect="gold")
    assert [i.id for i in items] == ["a", "2", "a", "5", "c"]
    assert [bool(i.problem) for i in items] == [False, True, True, False, True]
    assert items[3].expect == 1 and items[3].input == "z"


def test_core_batch_mixes_results_and_errors_in_input_order_of_completion(
    tmp_path: Path,
) -> None:
    def fn(messages: list[Message]) -> Any:
        text = messages[-1].content
        if "What is 13 * 3?" in text:
            return ProviderError("server down", provider="mock", status=503)
        return reply_for(text)

    llm = FakeChatModel(fn)
    executor = initialize_agent(load_tools(["llm-math"], llm=llm), llm,
                                return_intermediate_steps=True)
    questions = tmp_path / "in.jsonl"
    write_questions(questions, 40, wrong_every=10)
    out = tmp_path / "out.jsonl"
    summary = asyncio.run(run_batch(executor, read_items(questions, expect="answer"), out,
                                    concurrency=8))
    lines = lines_of(out)
    assert len(lines) == 40 and {x["id"] for x in lines} == {f"q{i}" for i in range(40)}
    bad = [x for x in lines if "error" in x]
    assert bad == [{"id": "q13", "error": {"type": "ProviderError", "kind": "provider",
                                           "message": "server down"},
                    "latency": bad[0]["latency"], "expect": 39, "correct": False}]
    s = summary.to_dict()
    assert s["results"] == 39 and s["errors"] == 1
    assert s["correct"] == 35 and s["graded"] == 40  # 4 expectations are off by one
    assert s["mean_steps"] == 1 and s["stop_reasons"] == {"finished": 39}


def test_resume_skips_finished_ids_and_repairs_a_torn_line(tmp_path: Path) -> None:
    llm = FakeChatModel(lambda m: reply_for(m[-1].content))
    executor = initialize_agent(load_tools(["llm-math"], llm=llm), llm)
    questions = tmp_path / "in.jsonl"
    write_questions(questions, 10)
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "q0", "answer": "0"}\n{"id": "q1", "answer": "3"}\n{"id": "q2", "ans')
    summary = asyncio.run(run_batch(executor, read_items(questions), out, concurrency=4))
    assert summary.skipped == 2 and summary.results == 8
    assert finished_ids(out) == {f"q{i}" for i in range(10)}
    assert len(llm.requests) == 16  # two calls for each of the 8 that ran


def test_cli_batch_eval_table(mock_server: Any, tmp_path: Path) -> None:
    mock_server.set_responder(responder)
    questions = tmp_path / "in.jsonl"
    write_questions(questions, 20, wrong_every=5)
    out = tmp_path / "out.jsonl"
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = runner.invoke(app, ["batch", str(questions), "--out", str(out), "-j", "4",
                                 "--expect", "answer", "-m", "openai/any", "--stats"],
                           env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "accuracy" in result.stdout and "80.0% (16/20)" in result.stdout
    assert "stop reasons" in result.stdout and "finished 20" in result.stdout
    assert "model calls" in result.stderr and "40" in result.stderr
    assert len(lines_of(out)) == 20
    again = runner.invoke(app, ["batch", str(questions), "--out", str(out), "-m", "openai/any"],
                          env=env, catch_exceptions=False)
    assert "skipped (already in OUT)" in again.stdout and len(mock_server.requests) == 40


@pytest.mark.slow  # a soak: about a minute on a busy machine
def test_500_questions_with_10_percent_faults_give_500_lines_and_no_traceback(
    mock_server: Any, tmp_path: Path,
) -> None:
    mock_server.set_responder(responder)
    mock_server.set_fault_rate(0.10, [
        {"kind": "status", "status": 429, "retry_after": 0},
        {"kind": "status", "status": 500}, {"kind": "status", "status": 503},
        {"kind": "reset"}, {"kind": "timeout", "delay": 0.4}, {"kind": "stream_cut"},
        {"kind": "invalid_json"}, {"kind": "empty_choices"},
    ], seed=6)
    questions = tmp_path / "in.jsonl"
    write_questions(questions, 500)
    out = tmp_path / "out.jsonl"
    config = tmp_path / "c.yaml"
    config.write_text("read_timeout: 0.2\n"
                      "retry: {attempts: 3, backoff_base: 0.001, backoff_max: 0.01}\n")
    env = {**os.environ, "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "batch", str(questions), "--out", str(out),
         "-j", "16", "-m", "openai/any", "-c", str(config), "--expect", "answer"],
        capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = lines_of(out)
    assert len(lines) == 500 and len({x["id"] for x in lines}) == 500
    for line in lines:
        assert ("answer" in line) != ("error" in line)
        if "error" in line:
            assert line["error"]["type"] in ("ProviderError", "ModelOutputError")
            assert "Traceback" not in line["error"]["message"]
        else:
            assert line["correct"] is True, line
    injected = sum(mock_server.injected.values())
    assert injected >= 50  # about 10% of ~1000 requests
    kinds = {k.split()[0] for k in mock_server.injected}
    assert kinds == {"status", "reset", "timeout", "stream_cut", "invalid_json", "empty_choices"}
    errors = sum("error" in x for x in lines)
    retried = len(mock_server.requests) - 1000
    assert 0 < errors < injected and retried > 0
    assert proc.returncode == 4, proc.stderr  # some items ended in provider errors
    assert f"{500 - errors} answered, {errors} provider error (exit 4)" in proc.stderr
