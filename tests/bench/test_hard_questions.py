"""The harder bench's question set (bench/hard_questions.py): its size, groups and grading.

No model: this checks the data the bench runs on, not a model's score.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARD = _load("hard_questions")


def test_at_least_60_questions_in_three_groups() -> None:
    assert list(HARD.GROUPS) == ["literal", "reformulation", "word"]
    assert all(len(qs) >= 20 for qs in HARD.GROUPS.values())
    assert sum(len(qs) for qs in HARD.GROUPS.values()) >= 60


def test_every_question_is_new_and_has_a_finite_numeric_answer() -> None:
    questions = [q for qs in HARD.GROUPS.values() for q, _ in qs]
    assert len(set(questions)) == len(questions)
    old = {q for q, _ in _load("local_model").QUESTIONS}
    assert not old & set(questions)
    for qs in HARD.GROUPS.values():
        for question, answer in qs:
            assert question.strip().endswith("?")
            assert isinstance(answer, (int, float)) and not isinstance(answer, bool)
            assert math.isfinite(answer) and answer != 0


def test_grading_is_the_last_number_within_one_percent() -> None:
    assert HARD.graded("The answer is 1,058.", 1058)
    assert HARD.graded("about 1.414", 1.41421)
    assert HARD.graded("99", 99.25)
    assert not HARD.graded("84 is wrong; it is 85", 84)
    assert not HARD.graded("", 84)
    assert not HARD.graded("no number", 84)
    assert not HARD.graded("144 / 12", 12)  # the question echoed is not an answer
    assert HARD.graded("144 / 12 = 12", 12)
    assert HARD.graded("-12", -12)
    assert HARD.observed("Answer: 84.0", 84)
    assert not HARD.observed("Answer: 86.0", 84)
    assert not HARD.observed("Error: the model's expression '84 x' is not arithmetic", 84)


def test_a_run_is_classified_by_what_it_printed_and_observed() -> None:
    lost = {"answer": "", "stderr": "Stopped: the model kept sending the same reply."}
    HARD.classify(lost, 84, [{"observation": "Answer: 84.0"}])
    assert lost["lost"] and not lost["correct"] and not lost["blob"]
    blob = {"answer": '{"action": "Calculator", "action_input": "35% of 240"}', "stderr": ""}
    HARD.classify(blob, 84, [])
    assert blob["blob"] and not blob["held"] and not blob["lost"]
    crash = {"answer": "", "stderr": "Traceback (most recent call last):\n  ..."}
    HARD.classify(crash, 84, [])
    assert crash["traceback"]
