"""Issue 39's contract columns (bench/contract.py): the bench's own rules, applied to what a
run printed and its trace, and the groups it added (bench/agent_questions.py).

No model: this checks how the bench counts, not a model's score.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def contract(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("contract")


def row(**fields: Any) -> dict[str, Any]:
    return {"rc": 0, "question": "How many minutes are in 4 hours?", "expected": 240,
            "trace": True, "tool_errors": [], "finish_output": None, **fields}


@pytest.mark.parametrize(("answer", "restated"), [
    ("4 hours", True), ("4.0 Hours.", True), ("240", False), ("240 minutes", False),
    ("minutes in hours", True), ("", False)])
def test_a_restatement_is_an_answer_made_only_of_the_question(
    contract: ModuleType, answer: str, restated: bool
) -> None:
    r = row(answer=answer)
    contract.flag(r)
    assert r["restated"] is restated


@pytest.mark.parametrize(("answer", "shown"), [
    ("200 - (1/5 * 200) - 40", True), ("The total is 12 + 20 + 25", True),
    ("5 + 3 = 8", False), ("8", False), ("on 2023-11-26 it was -5", False),
    ("2 ** 10", True), ("multiply: 3.2 * 1000 ≈ 3200 meters", False)])
def test_a_calculation_shown_has_no_result_after_it(
    contract: ModuleType, answer: str, shown: bool
) -> None:
    assert contract.calculation_shown(answer) is shown


def test_tool_text_is_copied_from_a_tool_error(contract: ModuleType) -> None:
    hint = ("Error: the Calculator cannot read 'x'; write the calculation itself: arithmetic "
            "with + - * / ** and parentheses, or math words (percent of)")
    copied = row(answer="arithmetic with + - * / ** and parentheses, or math words (",
                 tool_errors=[hint])
    contract.flag(copied)
    assert copied["tool_text"] is True
    own = row(answer="240 minutes", tool_errors=[hint])
    contract.flag(own)
    assert own["tool_text"] is False


def test_a_right_answer_refused_is_counted_from_the_trace(contract: ModuleType) -> None:
    refused = row(rc=3, answer="", finish_output="240")
    wrong = row(rc=3, answer="", finish_output="4 hours")
    killed = row(rc=-9, answer="", finish_output="240")
    blob = row(rc=3, answer="", finish_output='{"action": "Calculator", "action_input": "240"}')
    shown = row(answer="240", finish_output="240")
    for r in (refused, wrong, killed, blob, shown):
        contract.flag(r)
    assert [r["refused_right"] for r in (refused, wrong, killed, blob, shown)] == [
        True, False, False, False, False]
    untraced = row(rc=3, answer="", trace=False)
    contract.flag(untraced)
    assert untraced["refused_right"] is None
    assert contract.count([untraced], "refused_right") == "-"
    assert contract.count([refused, wrong, untraced], "refused_right") == "1"


def test_read_trace_takes_the_last_final_answer_and_tool_errors(
    contract: ModuleType, tmp_path: Path
) -> None:
    events = [
        {"event": "tool_end", "observation": "Error: no such file: 'x'"},
        {"event": "tool_end", "observation": "Answer: 240"},
        {"event": "agent_finish", "finish": {"return_values": {"output": "4 hours"}}},
        {"event": "agent_finish", "finish": {"return_values": {"output": "240"}}},
    ]
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in events) + '{"cut', encoding="utf-8")
    assert contract.read_trace(trace) == {"trace": True, "finish_output": "240",
                                          "last_reply": None,
                                          "tool_errors": ["Error: no such file: 'x'"]}
    assert contract.read_trace(tmp_path / "none.jsonl") == {"trace": False}


def test_issue_39_groups_are_traps_for_copying(monkeypatch: pytest.MonkeyPatch) -> None:
    """The restatement traps hold their trap: no expected answer is made only of the
    question's own words and numbers; every file task writes the file it names."""
    monkeypatch.syspath_prepend(str(BENCH))
    questions = importlib.import_module("agent_questions")
    contract = importlib.import_module("contract")
    for group in ("units", "restate", "filephrase"):
        assert len(questions.GROUPS[group]) == 8
        for question, expected in questions.GROUPS[group]:
            assert not contract.restatement(str(expected), question), question
    for question, _ in questions.GROUPS["filephrase"]:
        names = questions.FILES[question]
        assert len(names) == 1 and next(iter(names)) in question
    assert questions.TOOLS["filephrase"] == "llm-math,read_file"


def test_a_refused_reply_is_read_from_the_last_model_reply(
    contract: ModuleType, tmp_path: Path
) -> None:
    """A refused answer has a null ``agent_finish`` output: the bench reads the run's last
    model reply itself (a tool's own model call, under the tool's id, is not the run's)."""
    run_id = "r1"
    events = [
        {"event": "llm_end", "run_id": run_id, "call_parent_run_id": run_id,
         "result": {"text": '{"action": "Final Answer", "action_input": "240"}'}},
        {"event": "llm_end", "run_id": run_id, "call_parent_run_id": "tool-call-1",
         "result": {"text": "4 * 60"}},
        {"event": "agent_finish", "finish": {"return_values": {"output": None}}},
    ]
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    r = row(rc=3, answer="", **contract.read_trace(trace))
    contract.flag(r)
    assert r["refused_right"] is True


@pytest.mark.parametrize(("text", "calls", "answer"), [
    ('{ "action": "Final Answer", "action_input": "10.73" }', 0, "10.73"),
    ("Thought: done\nFinal Answer: 240 minutes", 0, "240 minutes"),
    ("There are 240 minutes in 4 hours.", 0, "There are 240 minutes in 4 hours."),
    ('{"action": "Calculator", "action_input": "4 * 60"}', 0, None),
    ("", 1, None)])
def test_final_answer_reads_a_reply(
    contract: ModuleType, text: str, calls: int, answer: str | None
) -> None:
    assert contract.final_answer({"text": text, "tool_calls": calls}) == answer
