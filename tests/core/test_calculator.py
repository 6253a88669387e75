"""The Calculator: direct evaluation, translation by the model, and refusals of attacks."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.errors import ToolInputError
from agentcli.models.fake import FakeChatModel
from agentcli.tools import calculator
from agentcli.tools.calculator import extract_expression, make_calculator
from agentcli.tools.math_eval import NotAnExpression, evaluate


def calculate(text: str, llm: FakeChatModel | None) -> str:
    """The async Calculator, run to its answer."""
    return asyncio.run(calculator.calculate(text, llm))


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
        ("2**70", "1180591620717411303424"),
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
    question = "How many apples are 37593 crates of 67 apples each?"
    assert calculate(question, llm) == "Answer: 2518731"
    assert len(llm.requests) == 1
    assert llm.requests[0].stop == ["```output"]
    assert question in llm.requests[0].messages[0].content


def test_model_translation_is_checked_too() -> None:
    llm = FakeChatModel(["```text\n__import__('os').system('ls')\n```"])
    with pytest.raises(ToolInputError, match="dunders"):
        calculate("do something sneaky with 5", llm)


def test_word_problem_without_model_is_refused() -> None:
    with pytest.raises(ToolInputError, match="the Calculator cannot read 'how many apples'; "
                       "write the calculation itself: arithmetic"):
        calculate("how many apples", None)


@pytest.mark.parametrize(
    ("reply", "expr"),
    [("```text\n2 + 2\n```", "2 + 2"), ("2*3", "2*3"), ("Answer: 5", "5"),
     ("```\n9/3\n```", "9/3")],
)
def test_extract_expression(reply: str, expr: str) -> None:
    assert extract_expression(reply) == expr


FORMS = [
    ("15% of 80", "Answer: 12.0"), ("25 percent of 300", "Answer: 75.0"),
    ("2^10", "Answer: 1024"), ("2**10", "Answer: 1024"), ("2 to the power of 10", "Answer: 1024"),
    ("sqrt(144)", "Answer: 12.0"), ("square root of 144", "Answer: 12.0"),
    ("cube root of 27", "Answer: 3.0"), ("15 squared", "Answer: 225"), ("3 cubed", "Answer: 27"),
    ("1,234 + 5", "Answer: 1239"), ("12 x 4", "Answer: 48"), ("12 × 4", "Answer: 48"),
    ("20 ÷ 4", "Answer: 5.0"), ("$20 * 3", "Answer: 60"), ("7 * 6 =", "Answer: 42"),
    ("300 * 25%", "Answer: 75.0"), ("7 % 3", "Answer: 1"), ("What is 3 + 4?", "Answer: 7"),
    # Phrases copied from a question, the way small models pass them (issue 22).
    ("40% more than 250", "Answer: 350.0"), ("20 percent off a price of 85", "Answer: 68.0"),
    ("30% less than 200", "Answer: 140.0"), ("600 + 8%", "Answer: 648.0"),
    ("85 - 20%", "Answer: 68.0"), ("2 raised to the 12th power", "Answer: 4096"),
    ("2 to the power 8", "Answer: 256"), ("half of 3 to the power of 4", "Answer: 40.5"),
    ("the square of 9", "Answer: 81"), ("twice 21", "Answer: 42"),
    ("the sum of 12, 45 and 78", "Answer: 135"), ("add 3 and 4", "Answer: 7"),
    ("the average of 14, 22 and 36", "Answer: 24.0"), ("the product of 4, 5 and 6",
                                                       "Answer: 120"),
    ("the difference between 10 and 4", "Answer: 6"), ("subtract 4 from 10", "Answer: 6"),
    ("How many seconds are in 3 hours?", "Answer: 10800.0"),
    ("How many grams are in 4.2 kilograms?", "Answer: 4200.0"),
    ("7.5 metres in centimeters", "Answer: 750.0"), ("5000 m to km", "Answer: 5.0"),
    ("What is 100 minus 37 minus 18?", "Answer: 45"),
]


@pytest.mark.parametrize("text", ["2 hours in kilograms", "how many apples are in 3 boxes",
                                  "the sum of 3", "40% more than"])
def test_word_forms_that_do_not_fit_are_not_guessed(text: str) -> None:
    """Units of different kinds, unknown units and incomplete phrases are not arithmetic."""
    with pytest.raises(ToolInputError, match="cannot read"):
        calculate(text, None)


@pytest.mark.parametrize(("text", "answer"), FORMS)
def test_forms_people_and_small_models_write(text: str, answer: str) -> None:
    llm = FakeChatModel([])  # never asked: each form is read directly
    assert calculate(text, llm) == answer
    assert llm.requests == []


@pytest.mark.parametrize(("given", "answer"), [
    (".35", "Answer: 0.35"), ("15", "Answer: 15"), ("125", "Answer: 125"),
    ("12 * 3", "Answer: 36"),
])
def test_a_bare_number_is_evaluated_as_itself(given: str, answer: str) -> None:
    """Issue 31: the Calculator computes what it is given; it has no question to read."""
    llm = FakeChatModel([])
    assert make_calculator(llm).run(given) == answer
    assert llm.requests == []


@pytest.mark.parametrize(("given", "answer"), [
    ("9007199254740993 - 9007199254740992", "Answer: 1"),  # past 2**53: exact, not a float
    ("2 ** 70", "Answer: 1180591620717411303424"), ("123456789123456789 * 10", "Answer: "
                                                    "1234567891234567890"),
    ("0x10 + 1", "Answer: 17"), ("0xff", "Answer: 255"), ("3 x 4", "Answer: 12"),
    ("2 ** -1", "Answer: 0.5"),
])
def test_big_integers_are_exact_and_hex_is_a_number(given: str, answer: str) -> None:
    assert calculate(given, None) == answer


@pytest.mark.parametrize("given", ["4 hours", "2^3 * 4 = 8", "three cubed plus one", "6 sides"])
def test_an_unreadable_input_is_quoted_and_never_guessed(given: str) -> None:
    with pytest.raises(ToolInputError) as info:
        calculate(given, None)
    message = str(info.value)
    assert repr(given) in message and "\n" not in message and "Answer" not in message


def test_a_bare_number_translated_from_words_without_numbers_is_refused() -> None:
    llm = FakeChatModel(["```text\n4.0\n```"])
    with pytest.raises(ToolInputError, match="cannot read 'six sides'"):
        calculate("six sides", llm)


def test_numbers_in_words_are_translated() -> None:
    llm = FakeChatModel(["```text\n300 * 0.25\n```"])
    assert calculate("a quarter of three hundred", llm) == "Answer: 75.0"


def test_a_translation_with_a_number_from_nowhere_is_refused() -> None:
    """'6 sides' translated to 4.0 (seen with a small model): 4 is in no part of the input."""
    llm = FakeChatModel(["```text\n4.0\n```"])
    with pytest.raises(ToolInputError, match="cannot read '6 sides'"):
        calculate("6 sides", llm)


def test_a_translation_from_the_inputs_own_numbers_is_kept() -> None:
    llm = FakeChatModel(["```text\n7 * 250\n```"])
    assert calculate("7 cakes, 250 grams per cake", llm) == "Answer: 1750"


def test_an_unreadable_input_is_quoted_with_the_accepted_forms_and_no_example() -> None:
    llm = FakeChatModel(["```text\n25%\n```"])  # the translation is no better
    with pytest.raises(ToolInputError) as info:
        calculate("a quarter of the budget of 300", llm)
    message = str(info.value)
    assert "'a quarter of the budget of 300'" in message and "percent of" in message
    assert "N%" not in message
    assert "300 * 0.25" not in message  # nothing a model would copy as its next input


def test_a_bare_percentage_asks_what_it_is_a_percentage_of() -> None:
    with pytest.raises(ToolInputError,
                       match=r"'25%' is a percentage of nothing; say what it is a percentage of$"):
        calculate("25%", None)


def test_word_forms_stay_safe() -> None:
    for text in ("__import__('os') squared", "2 to the power of 99999", "open squared"):
        with pytest.raises((ToolInputError, NotAnExpression)):
            evaluate(text)


@pytest.mark.parametrize("bomb", [
    "((-1) % ((-1) % 10**300) ** 10000) ** 10000",
    "(-1 % 10**300) ** 10000",
    "(((10**300) ** 10000) ** 10000) % 7",  # a huge power inside a %, whose bound is small
])
def test_modulo_bombs_are_the_calculators_own_too_large_line(bomb: str) -> None:
    with pytest.raises(ToolInputError) as info:
        evaluate(bomb)
    assert "is too large" in str(info.value)
    assert "digits" not in str(info.value)  # not Python's "Exceeds the limit (4300 digits)"


def test_a_negative_modulo_is_bounded_by_its_divisor_and_stays_exact() -> None:
    assert evaluate("(-1) % 10**20") == str(10**20 - 1)
    assert evaluate("-7 % 3") == "2"


@pytest.mark.parametrize(("words", "answer"), [
    ("2 squared cubed", "64"), ("3 cubed squared", "729"), ("(1 + 2) squared cubed", "729"),
    ("5 squared", "25"), ("2 cubed", "8"),
])
def test_postfix_powers_apply_left_to_right(words: str, answer: str) -> None:
    assert calculate(words, None) == f"Answer: {answer}"
