"""The word forms skip a form whose words are absent: the result is the same as trying every
form, in order, on every text."""

from __future__ import annotations

import random
import re

from agentcli.tools import math_words

_PHRASES = (
    "what is how many seconds are there in 3 hours 2 km to m the sum of 12, 45 and 78 add 3 and"
    " 4 product of 2 and 5 average mean of 1, 2 and 3 difference between 9 and 4 subtract 3 from"
    " 10 40% percent per cent more than less than off a price of 250 increased by plus minus"
    " decreased reduced 15 % of 80 square root of 16 cube root of 27 square of 3 cube of 2 raised"
    " to the 12th power to the power of 3 squared cubed half of 10 a third of 9 a quarter of 8"
    " twice double triple 3 x 4 × times multiplied by divided by over ( ) 7 % 3 SUM Of ſum K İN"
    " ın ß"
)
_WORDS = _PHRASES.split()


def _every_form(text: str) -> str:
    """normalise() as it was: every form's pattern applied, in order."""
    expr = text.strip().strip("`").strip()
    expr = math_words._LEAD.sub("", expr).rstrip("?").strip()
    expr = expr.replace("^", "**").replace("÷", "/").replace("−", "-")
    expr = re.sub(r"(?<=\d),(?=\d{3}\b)", "", expr)
    expr = re.sub(r"\$\s*(?=\d)", "", expr)
    for pattern, _, repl in math_words._FORMS:
        expr = re.sub(pattern, repl, expr, flags=re.I)
    return expr.rstrip("=").strip()


def test_skipping_absent_words_changes_no_result() -> None:
    rng = random.Random(23)
    for _ in range(5000):
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 9)))
        text = text.upper() if rng.random() < 0.3 else text
        assert math_words.normalise(text) == _every_form(text), text


def test_each_forms_words_are_in_its_pattern() -> None:
    for pattern, words, _ in math_words._FORMS:
        assert words and all(w in pattern or (w == "x" and "[x×]" in pattern) for w in words)


def test_the_seed_input_needs_no_word_form() -> None:
    folded = "300 * 0.25"
    assert [p for p, words, _ in math_words._FORMS if any(w in folded for w in words)] == []
    assert math_words.normalise("300 * 0.25") == "300 * 0.25"
