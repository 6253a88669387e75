"""The Calculator (``llm-math``): direct evaluation when the input is already arithmetic."""

from __future__ import annotations

import re

from agentcli.errors import ToolInputError
from agentcli.models.base import BaseChatModel
from agentcli.schema import user
from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.math_eval import MAX_EXPRESSION_CHARS, NotAnExpression, evaluate
from agentcli.tools.math_words import ACCEPTED_FORMS

DESCRIPTION = (
    "Useful for when you need to answer questions about math. "
    "Input: the calculation, in numbers with + - * / ** or in the question's own words "
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


def calculate(question: str, llm: BaseChatModel | None) -> str:
    """Answer a math input: evaluate it directly, or ask the model for an expression first."""
    question = question.strip()
    if not question:
        raise ToolInputError("the Calculator needs an expression, e.g. 300 * 0.25")
    if len(question) > MAX_QUESTION_CHARS:
        raise ToolInputError(
            f"input is {len(question):,} characters; the Calculator accepts at most "
            f"{MAX_QUESTION_CHARS:,} (expressions at most {MAX_EXPRESSION_CHARS})"
        )
    if _BARE_PERCENT.fullmatch(question):
        raise ToolInputError(f"{question!r} is a percentage of nothing; to take a percentage of "
                             "a number, write it as 'N% of M'")
    try:
        return f"Answer: {evaluate(question)}"
    except NotAnExpression:
        pass
    if llm is None:
        raise ToolInputError(f"the Calculator cannot read {question!r}; it reads {ACCEPTED_FORMS}")
    prompt = _prompt_template().replace("{question}", question)
    reply = llm.generate([user(prompt)], stop=["```output"]).text
    expression = extract_expression(reply)
    from agentcli.events import notify

    notify("tool_text", f"Evaluating: {expression}", tool="Calculator")
    try:
        if _BARE_PERCENT.fullmatch(expression):
            raise NotAnExpression(expression)  # a percentage of nothing is no answer
        return f"Answer: {evaluate(expression)}"
    except NotAnExpression:
        raise ToolInputError(
            f"the Calculator cannot read {expression!r} (from {question!r}); it reads "
            f"{ACCEPTED_FORMS}"
        ) from None


def make_calculator(llm: BaseChatModel | None) -> Tool:
    """The ``llm-math`` tool, named Calculator as the model knows it."""
    return Tool(
        name="Calculator",
        description=DESCRIPTION,
        func=lambda q: calculate(q, llm),
        needs=ToolNeeds(llm=True),
    )
