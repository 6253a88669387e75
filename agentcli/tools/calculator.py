"""The Calculator (``llm-math``): direct evaluation when the input is already arithmetic."""

from __future__ import annotations

import re
from typing import Annotated, Any

from agentcli.errors import ToolInputError
from agentcli.models.base import BaseChatModel
from agentcli.schema import user
from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.inject import InjectedState, injections
from agentcli.tools.math_eval import MAX_EXPRESSION_CHARS, NotAnExpression, evaluate
from agentcli.tools.math_words import ACCEPTED_FORMS, normalise

DESCRIPTION = (
    "Useful for when you need to answer questions about math. "
    "Input: the calculation, in numbers with + - * / ** or in the question's own words "
    "(percent of, to the power of, square root of, sum of, hours in minutes)."
)
MAX_QUESTION_CHARS = 2_000
_BARE_PERCENT = re.compile(r"\s*\d+(?:\.\d+)?\s*(?:%|percent)\s*", re.I)
_BARE_NUMBER = re.compile(r"\s*-?(?:\d+(?:\.\d*)?|\.\d+)\s*")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
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


def question_math(asked: str) -> tuple[str, str] | None:
    """The math of the run's question, and its value, when the Calculator can read it as it
    is: the whole question, or one sentence of it (``What is 35% of 240?``, ``How many
    minutes are in 4 hours?``); None for a word problem."""
    for part in (asked, *_SENTENCE_END.split(asked)):
        part = part.strip().rstrip("?.!").strip()
        if not part or not any(ch.isdigit() for ch in part) or len(part) > MAX_EXPRESSION_CHARS:
            continue
        try:
            return part, evaluate(part)
        except (NotAnExpression, ToolInputError):
            continue
    return None


def _from_question(found: tuple[str, str]) -> str:
    from agentcli.events import notify

    notify("tool_text", f"Reading the question's math: {found[0]}", tool="Calculator")
    return f"Answer: {found[1]}"


def calculate(text: str, llm: BaseChatModel | None, asked: str = "") -> str:
    """Answer a math input: evaluate it directly, or ask the model for an expression first.

    ``asked`` is the run's question. A small model often passes only a number or a bare
    percentage from it (``.35``, ``25%``), or something unreadable (``4 hours``), although
    the question's math reads as it is; the Calculator then answers that math, and says so
    in the trace.
    """
    from agentcli.events import notify

    text = text.strip()
    if not text:
        raise ToolInputError("the Calculator got an empty input; pass the calculation to do")
    if len(text) > MAX_QUESTION_CHARS:
        raise ToolInputError(
            f"input is {len(text):,} characters; the Calculator accepts at most "
            f"{MAX_QUESTION_CHARS:,} (expressions at most {MAX_EXPRESSION_CHARS})"
        )
    if _BARE_NUMBER.fullmatch(text) or _BARE_PERCENT.fullmatch(text):
        found = question_math(asked) if asked else None
        if found is not None and normalise(found[0]) != normalise(text):
            return _from_question(found)
        if _BARE_PERCENT.fullmatch(text):
            raise ToolInputError(f"{text!r} is a percentage of nothing; say what it is a "
                                 "percentage of, in the question's words")
    try:
        return f"Answer: {evaluate(text)}"
    except (NotAnExpression, ToolInputError) as err:
        # The model's input is no better than the question: read the question's math.
        found = question_math(asked) if asked else None
        if found is not None:
            return _from_question(found)
        if isinstance(err, ToolInputError):
            raise
    if llm is None:
        raise ToolInputError(f"the Calculator cannot read {text!r}; it reads {ACCEPTED_FORMS}")
    prompt = _prompt_template().replace("{question}", text)
    reply = llm.generate([user(prompt)], stop=["```output"]).text
    expression = extract_expression(reply)
    notify("tool_text", f"Evaluating: {expression}", tool="Calculator")
    try:
        if _BARE_PERCENT.fullmatch(expression):
            raise NotAnExpression(expression)  # a percentage of nothing is no answer
        return f"Answer: {evaluate(expression)}"
    except NotAnExpression:
        raise ToolInputError(
            f"the Calculator cannot read {expression!r} (from {text!r}); it reads "
            f"{ACCEPTED_FORMS}"
        ) from None


def make_calculator(llm: BaseChatModel | None) -> Tool:
    """The ``llm-math`` tool, named Calculator as the model knows it."""

    def run(expression: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
        return calculate(expression, llm, str(state.get("input") or ""))

    return Tool(
        name="Calculator",
        description=DESCRIPTION,
        func=run,
        needs=ToolNeeds(llm=True),
        injected=injections(run),
    )
