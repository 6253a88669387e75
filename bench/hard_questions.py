"""A harder calculator bench: 66 questions in three groups, written before any run.

Issue 22 item 6. The old 20 (``local_model.QUESTIONS``) are mostly literal ``A op B``; these
add questions a small model has to reformulate before the Calculator can take them, and word
problems. Nothing here was tuned on a model: the list was fixed before the first run and is
graded by one rule, :func:`graded` (the last number of the answer within 1 % of the truth).

No agentcli import: ``lc_hard.py`` reads this module from a LangChain virtual environment.
"""

from __future__ import annotations

import re
from typing import Any

# A op B, written as a person would type it into a calculator.
LITERAL: list[tuple[str, float]] = [
    ("What is 347 + 589?", 936), ("What is 1200 - 473?", 727), ("What is 46 * 23?", 1058),
    ("What is 918 / 17?", 54), ("What is 3.5 * 12?", 42), ("What is 7.25 + 4.8?", 12.05),
    ("What is 5000 / 8?", 625), ("What is 64 * 64?", 4096), ("What is 2048 - 999?", 1049),
    ("What is 81 * 0.15?", 12.15), ("What is 1234 + 4321?", 5555),
    ("What is 250 / 0.5?", 500), ("What is 19 * 21?", 399), ("What is 100 - 0.75?", 99.25),
    ("What is 73 + 28?", 101), ("What is 11 * 111?", 1221), ("What is 9.6 / 3?", 3.2),
    ("What is 602 - 58?", 544), ("What is 37 * 9?", 333), ("What is 144 + 256?", 400),
    ("What is 875 / 25?", 35), ("What is 12.5 * 8?", 100),
]

# Percent, powers, roots, more than two operands, units: the words must become arithmetic.
REFORMULATION: list[tuple[str, float]] = [
    ("What is 35% of 240?", 84), ("What is 12.5 percent of 640?", 80),
    ("What is 8% of 1250?", 100), ("What is 40% more than 250?", 350),
    ("What is 20 percent off a price of 85?", 68),
    ("What is 3 to the power of 5?", 243), ("What is 7 squared?", 49),
    ("What is 6 cubed?", 216), ("What is 2 raised to the 12th power?", 4096),
    ("What is half of 3 to the power of 4?", 40.5),
    ("What is the square root of 196?", 14), ("What is the square root of 2?", 1.41421),
    ("What is the cube root of 125?", 5),
    ("What is 17 + 26 + 39?", 82), ("What is 4 * 5 * 6 * 7?", 840),
    ("What is 100 minus 37 minus 18?", 45), ("What is the sum of 12, 45 and 78?", 135),
    ("What is the average of 14, 22 and 36?", 24),
    ("How many seconds are in 3 hours?", 10800), ("How many minutes are in 2.5 hours?", 150),
    ("How many grams are in 4.2 kilograms?", 4200),
    ("How many centimeters are in 7.5 meters?", 750),
]

# Word problems: the arithmetic is in the story.
WORD: list[tuple[str, float]] = [
    ("A box holds 24 pencils. How many pencils are in 17 boxes?", 408),
    ("Maria has 150 dollars and spends 47 dollars. How much does she have left?", 103),
    ("A train travels at 80 km per hour for 3.5 hours. How far does it go in km?", 280),
    ("Tickets cost 12 dollars each. How much do 9 tickets cost?", 108),
    ("5 pizzas of 8 slices each are shared equally by 10 people. How many slices does each "
     "person get?", 4),
    ("A shirt costs 40 dollars and is on sale for 25% off. What is the sale price?", 30),
    ("John reads 35 pages a day. How many pages does he read in 2 weeks?", 490),
    ("A rectangle is 12 m long and 7 m wide. What is its area in square meters?", 84),
    ("A car uses 6 liters of fuel per 100 km. How many liters does it need for 450 km?", 27),
    ("A school has 18 classes with 27 students each. How many students are there?", 486),
    ("Sam saves 15 dollars a week. How many weeks does he need to save 240 dollars?", 16),
    ("A farmer has 3 fields of 45 sheep each and sells 28 sheep. How many sheep are left?",
     107),
    ("A recipe needs 250 grams of flour per cake. How many grams of flour are needed for 6 "
     "cakes?", 1500),
    ("A phone costs 600 dollars plus 8% tax. What is the total price?", 648),
    ("The temperature was 12 degrees in the morning, rose by 9 degrees, then fell by 5 "
     "degrees. What is the temperature now?", 16),
    ("A bag of rice weighs 2.5 kg. How many kilograms do 14 bags weigh?", 35),
    ("A runner runs 400 meters in 80 seconds. What is her speed in meters per second?", 5),
    ("An item bought for 80 dollars is sold for 100 dollars. What is the profit as a "
     "percentage of the cost?", 25),
    ("There are 7 days in a week. How many days are in 52 weeks?", 364),
    ("A tank holds 1200 liters and is 35% full. How many liters are in it?", 420),
    ("Three friends split a bill of 96 dollars equally. How much does each pay?", 32),
    ("A square has sides of 13 cm. What is its perimeter in cm?", 52),
]

GROUPS: dict[str, list[tuple[str, float]]] = {
    "literal": LITERAL, "reformulation": REFORMULATION, "word": WORD,
}
TOLERANCE = 0.01  # relative: "within 1 % of the true value"
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_BARE_EXPRESSION = re.compile(r"[\d\s.,+\-*/x×÷^()%$]+")
_OPERATION = re.compile(r"\d\s*(?:[-+*/x×÷^]|\*\*)\s*\(?\d")


def numbers(text: str) -> list[float]:
    """Every number in ``text`` (``1,234`` is one number), in order."""
    return [float(raw.replace(",", "")) for raw in _NUMBER.findall(text or "")]


def close(value: float, expected: float) -> bool:
    """``value`` is within 1 % of ``expected``."""
    return abs(value - expected) <= TOLERANCE * abs(expected)


def graded(answer: str, expected: float | str) -> bool:
    """The last number of the answer is within 1 % of the true value.

    An answer that is only an unevaluated expression (``144 / 12``, ``2 * 3 * 4``) is not an
    answer, even when its last operand happens to be the result. A word expected (issue 31's
    no-tool questions, ``agent_questions``) is right when the answer contains it.
    """
    if isinstance(expected, str):
        return re.search(rf"\b{re.escape(expected)}\b", answer or "", re.IGNORECASE) is not None
    found = numbers(answer)
    if _BARE_EXPRESSION.fullmatch(answer.strip()) and _OPERATION.search(answer):
        return False
    return bool(found) and close(found[-1], expected)


# What a tool call looks like when it is printed as if it were the answer.
_BLOB = re.compile(r'"action"\s*:|"action_input"|"arguments"\s*:|<tool_call>|\[TOOL_CALLS\]'
                   r'|<\|python_tag\|>|^\s*Action( Input)?\s*:', re.MULTILINE)
_ANSWER_OBS = re.compile(r"Answer:\s*(-?[\d.,]+(?:e[-+]?\d+)?)")
_TRACEBACK = "Traceback (most recent call last)"
# Prompt words copied as the answer (agentcli's answer-now prompt and compact prompts).
_PLACEHOLDER = re.compile(r"best answer to the original question|<[^<>\n]*>|the tool's input",
                          re.IGNORECASE)


def observed(observation: str, expected: float | str) -> bool:
    """The Calculator's result in this observation is the right number (within 1 %)."""
    if isinstance(expected, str):
        return False
    return any(graded(value, expected) for value in _ANSWER_OBS.findall(observation or ""))


def classify(row: dict[str, Any], expected: float | str, steps: list[dict[str, Any]]) -> None:
    """Add the counted facts to a run's row (agentcli or LangChain)."""
    answer = row["answer"]
    row["correct"] = graded(answer, expected)
    row["blob"] = bool(_BLOB.search(answer))
    row["placeholder"] = bool(_PLACEHOLDER.search(answer))
    row["traceback"] = _TRACEBACK in row.get("stderr", "") or _TRACEBACK in answer or bool(
        row.get("lc_traceback"))
    row["held"] = any(observed(str(s.get("observation", "")), expected) for s in steps)
    row["lost"] = row["held"] and not answer.strip()
    row["held_wrong"] = row["held"] and bool(answer.strip()) and not row["correct"]
    row["tool_calls"] = len(steps)
    # Issue 31: never a tool call, an empty string or the question as the printed answer.
    row["empty"] = not answer.strip() and row.get("rc", 0) == 0
    row["echo"] = bool(answer.strip()) and answer.strip().lower() == str(
        row.get("question", "")).strip().lower()
