"""`agent batch` exit codes and counts, retrying provider errors on resume, stdin input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

LOOP = 'Action:\n```json\n{"action": "Calculator", "action_input": "1+1"}\n```'


def responder(body: dict[str, Any]) -> dict[str, Any]:
    text = body["messages"][-1]["content"]
    return {"text": LOOP if "loop" in text and "Observation" not in text else "Final Answer: ok"}


def batch(tmp: Path, server: Any, *args: str, stdin: str | None = None
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-x")
    return subprocess.run([sys.executable, "-m", "agentcli", "batch", *args, "-m", "openai/any",
                           "-j", "1"], input=stdin, capture_output=True, text=True, cwd=tmp,
                          env=env, timeout=120)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def write(path: Path, *questions: str) -> None:
    path.write_text("".join(json.dumps({"id": f"q{i}", "input": q}) + "\n"
                            for i, q in enumerate(questions)))


@pytest.mark.parametrize("retry", [True, False])
def test_provider_errors_exit_4_and_are_retried_on_resume(
    mock_server: Any, tmp_path: Path, retry: bool
) -> None:
    mock_server.set_responder(responder)
    mock_server.add_fault("status", status=400)  # not retryable: q0 ends in a provider error
    write(tmp_path / "in.jsonl", "a", "b", "c")
    first = batch(tmp_path, mock_server, "in.jsonl", "--out", "out.jsonl")
    assert first.returncode == 4, first.stderr
    assert "batch: 2 answered, 1 provider error (exit 4)" in first.stderr
    assert [r.get("error", {}).get("kind") for r in rows(tmp_path / "out.jsonl")] == [
        "provider", None, None]
    before = len(mock_server.requests)
    flag = "--retry-errors" if retry else "--no-retry-errors"
    again = batch(tmp_path, mock_server, "in.jsonl", "--out", "out.jsonl", flag)
    if retry:  # only the failed row runs again; answered rows are not re-run
        assert len(mock_server.requests) == before + 1
        assert again.returncode == 0 and "batch: 3 answered (exit 0)" in again.stderr
        assert rows(tmp_path / "out.jsonl")[-1] == {**rows(tmp_path / "out.jsonl")[-1],
                                                    "id": "q0", "answer": "ok"}
    else:
        assert len(mock_server.requests) == before
        assert again.returncode == 4 and "1 provider error (exit 4)" in again.stderr


def test_limit_rows_exit_3_with_no_answer(
    mock_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_EARLY_STOPPING", "force")  # no last request for an answer
    mock_server.set_responder(responder)
    write(tmp_path / "in.jsonl", "fine", "loop please")
    proc = batch(tmp_path, mock_server, "in.jsonl", "--out", "out.jsonl",
                 "--max-iterations", "1")
    assert proc.returncode == 3, proc.stderr
    assert "batch: 1 answered, 1 stopped by a limit (exit 3)" in proc.stderr
    limited = rows(tmp_path / "out.jsonl")
    assert {r["id"]: (r["answer"], r["stop_reason"]) for r in limited} == {
        "q0": ("ok", "finished"), "q1": (None, "max_iterations")}


def test_dash_reads_the_input_from_stdin(mock_server: Any, tmp_path: Path) -> None:
    mock_server.set_responder(responder)
    proc = batch(tmp_path, mock_server, "-", "--out", "out.jsonl",
                 stdin='{"id": "x", "input": "hello"}\n{"id": "y", "input": "again"}\n')
    assert proc.returncode == 0, proc.stderr
    assert [(r["id"], r["answer"]) for r in rows(tmp_path / "out.jsonl")] == [
        ("x", "ok"), ("y", "ok")]
