"""The Calculator (``llm-math``): direct evaluation when the input is already arithmetic.

The Calculator computes what it is given, and only that: its input is the whole of what it
reads (never the run's question), and its result answers that input. Math words in the input
(``15% of 80``, ``2 to the power of 10``) are read as arithmetic (``math_words``); other
words go to the model for a translation, which is kept only when every number it uses is in
the input (or a unit factor): a number that appears from nowhere is a guess, refused.
"""

from __future__ import annotations

import re

from agentcli.errors import ToolInputError
from agentcli.events import notify
from agentcli.models.base import BaseChatModel
from agentcli.schema import user
from agentcli.tools.arguments import string_schema
from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.math_eval import MAX_EXPRESSION_CHARS, NotAnExpression, evaluate
from agentcli.tools.math_words import ACCEPTED_FORMS, NUM

DESCRIPTION = (
    "Computes a calculation on numbers you already have; it knows no facts. "
    "Input: the calculation, in numbers with + - * / ** or in words "
    "(percent of, to the power of, square root of, sum of, hours in minutes)."
)
MAX_QUESTION_CHARS = 2_000
_BARE_PERCENT = re.compile(r"\s*\d+(?:\.\d+)?\s*(?:%|percent)\s*", re.I)
_BLOCK = re.compile(r"```(?:text|python|math)?\s*\n?(.*?)(?:```|$)", re.S)


def _prompt_template() -> str:
    from importlib.resources import files

    return files("agentcli.agents").joinpath("prompts/llm_math.txt").read_text(encoding="utf-8")


def extract_expression(reply: str) -> str:
    """Pull the expression out of the model's reply (a ```text block, or the bare line)."""
    match = _BLOCK.search(reply)
    if match and match.group(1).strip():
        return match.group(1).strip().splitlines()[0].strip()
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()]
    if not lines:
        raise ToolInputError("the model returned no expression to evaluate")
    return lines[0].removeprefix("Answer:").strip()


def _unreadable(text: str) -> ToolInputError:
    """One line: the input quoted and how to write it (no guess, no example to copy)."""
    return ToolInputError(f"the Calculator cannot read {text!r}; write the calculation "
                          f"itself: {ACCEPTED_FORMS}")


# Numbers a translation may bring in although the input does not hold them: unit factors.
_FACTORS = frozenset({"1", "2", "3", "7", "10", "12", "24", "60", "100", "1000", "3600"})


def _invented(expression: str, text: str) -> bool:
    """The translation is a guess: with digits in the input, it uses a number that is neither
    in the input nor a unit factor; without (``a quarter of three hundred``), it is a bare
    number and no calculation (``six sides`` -> ``4.0``)."""
    given = {float(n) for n in re.findall(NUM, text.replace(",", ""))}
    if not given:
        return re.fullmatch(rf"\s*-?{NUM}\s*", expression) is not None
    return any(float(n) not in given and n not in _FACTORS
               for n in re.findall(NUM, expression))


async def calculate(text: str, llm: BaseChatModel | None) -> str:
    """Answer a math input: evaluate it directly, or ask the model for an expression first.

    A bare number is evaluated as itself; a bare percentage is refused (a percentage of
    nothing); a translation that guesses (``_invented``) is refused. Async, so a run's
    Calculator call needs no worker thread: the direct evaluation is bounded (the input caps)
    and runs on the run's loop, and the model call for a translation is awaited there.
    """
    text = text.strip()
    if not text:
        raise ToolInputError("the Calculator got an empty input; pass the calculation to do")
    if len(text) > MAX_QUESTION_CHARS:
        raise ToolInputError(
            f"input is {len(text):,} characters; the Calculator accepts at most "
            f"{MAX_QUESTION_CHARS:,} (expressions at most {MAX_EXPRESSION_CHARS})"
        )
    if _BARE_PERCENT.fullmatch(text):
        raise ToolInputError(f"{text!r} is a percentage of nothing; say what it is a "
                             "percentage of")
    try:
        return f"Answer: {evaluate(text)}"
    except NotAnExpression:
        pass
    if llm is None:
        raise _unreadable(text)
    prompt = _prompt_template().replace("{question}", text)
    reply = (await llm.agenerate([user(prompt)], stop=["```output"])).text
    expression = extract_expression(reply)
    if _BARE_PERCENT.fullmatch(expression) or _invented(expression, text):
        raise _unreadable(text)  # a percentage of nothing, or a number from nowhere
    notify("tool_text", f"Evaluating: {expression}", tool="Calculator")
    try:
        return f"Answer: {evaluate(expression)}"
    except NotAnExpression:
        raise _unreadable(text) from None


def make_calculator(llm: BaseChatModel | None) -> Tool:
    """The ``llm-math`` tool, named Calculator as the model knows it."""

    async def run(input: str) -> str:
        return await calculate(input, llm)

    return Tool(
        name="Calculator",
        description=DESCRIPTION,
        coroutine=run,
        needs=ToolNeeds(llm=True),
        args_schema=string_schema("The calculation."),
    )
