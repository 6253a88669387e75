"""The Calculator: direct evaluation, translation by the model, and refusals of attacks."""

from __future__ import annotations

import pytest

from agentcli.errors import ToolInputError
from agentcli.models.fake import FakeChatModel
from agentcli.tools.calculator import calculate, extract_expression, make_calculator
from agentcli.tools.math_eval import evaluate


@pytest.mark.parametrize(
    ("expr", "answer"),
    [
        ("300 * 0.25", "75.0"),
        ("2+2", "4"),
        ("2^10", "1024"),
        ("(1 + 2) * 3 - 4 / 2", "7.0"),
        ("sqrt(16)", "4.0"),
        ("7 % 3", "1"),
        ("-3**2", "-9"),
        ("1,000 * 3", "3000"),
        ("2**70", "1.1805916207174113e+21"),
        ("pi", "3.141592653589793"),
    ],
)
def test_direct_expressions(expr: str, answer: str) -> None:
    assert evaluate(expr) == answer


ATTACKS = [
    ("__import__('os')", "dunder"),
    ("().__class__", "dunder"),
    ("a.b", "attribute"),
    ("x[0]", "subscript"),
    ("9**9**9", "exponent"),
    ("2**(9**9)", "exponent"),
    ("'a' * 3", "only numbers"),
    ("[1, 2, 3]", "list"),
    ("lambda: 1", "lambda"),
    ("open('/etc/passwd')", "open"),
    ("(2**100)**100", "too large"),
    ("1/0", "division by zero"),
    ("print(1)", "functions"),
    ("1 if 1 else 2", "ifexp"),
    ("1 < 2", "compare"),
]


@pytest.mark.parametrize(("attack", "why"), ATTACKS)
def test_attacks_are_refused_quickly(attack: str, why: str) -> None:
    tool = make_calculator(None)
    with pytest.raises(ToolInputError) as info:  # refused before evaluation, so it cannot hang
        tool.run(attack)
    message = str(info.value).lower()
    assert message and "\n" not in message
    assert any(w in message for w in ("not allowed", "only", "too large", "division", "limit",
                                      "imports", "cannot"))


def test_ten_thousand_characters_refused_without_model_call() -> None:
    llm = FakeChatModel([])
    with pytest.raises(ToolInputError, match="characters"):
        calculate("1+" * 5000, llm)
    assert llm.requests == []


def test_expression_input_needs_no_model_call() -> None:
    llm = FakeChatModel([])
    assert make_calculator(llm).run("300 * 0.25") == "Answer: 75.0"
    assert llm.requests == []


def test_word_problem_is_translated_by_the_model() -> None:
    llm = FakeChatModel(["```text\n37593 * 67\n```\n"])
    assert calculate("What is 37593 times 67?", llm) == "Answer: 2518731"
    assert len(llm.requests) == 1
    assert llm.requests[0].stop == ["```output"]
    assert "What is 37593 times 67?" in llm.requests[0].messages[0].content


def test_model_translation_is_checked_too() -> None:
    llm = FakeChatModel(["```text\n__import__('os').system('ls')\n```"])
    with pytest.raises(ToolInputError, match="dunders"):
        calculate("do something sneaky", llm)


def test_word_problem_without_model_is_refused() -> None:
    with pytest.raises(ToolInputError, match="not an arithmetic expression"):
        calculate("how many apples", None)


@pytest.mark.parametrize(
    ("reply", "expr"),
    [("```text\n2 + 2\n```", "2 + 2"), ("2*3", "2*3"), ("Answer: 5", "5"),
     ("```\n9/3\n```", "9/3")],
)
def test_extract_expression(reply: str, expr: str) -> None:
    assert extract_expression(reply) == expr
