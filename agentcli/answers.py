"""The answer rule: a reply is an answer when it adds something to what the run was given.

One pure function, :func:`judge`, decides it for every path (run, chat, batch, serve, the
answer-now reply, the library API) from the reply's text and what the run was given
(:class:`Given`). It never looks at a reply's value: ``10.73`` is as good as ``42``. What it
refuses, and why (the :data:`Reason`):

* ``empty``: nothing visible (only whitespace, zero-width or other format/control
  characters, escape sequences, punctuation);
* ``tool_call``: a tool call in any form the parsers read, anywhere in the reply (a JSON
  blob, ``{"name": ..., "arguments": ...}`` in a fence after a sentence, ``<tool_call>``,
  ``<|python_tag|>``, ``[TOOL_CALLS]``, an ``Action:`` line);
* ``placeholder``: the prompt's own placeholder words (``your answer to the user``);
* ``calculation``: arithmetic with no result (``300 - (1/3 * 300) - 20``): a step, which the
  executor runs through the Calculator when it is loaded;
* ``question``: only words and numbers of the question (every token of the reply occurs in
  it, case and punctuation aside): a restatement, or the question in quotes. A reply that
  picks one side of the question's ``or`` is a choice, and a reply a tool's result holds is
  that result: both are answers;
* ``tool_text``: only text of a tool's own error or help (its description); one or two words
  or only numbers are never taken for such a copy.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from agentcli import _json_repair

Reason = Literal["empty", "tool_call", "placeholder", "calculation", "question", "tool_text"]


@dataclass(frozen=True)
class Given:
    """What the run was given, against which a reply must add something."""

    question: str = ""
    tool_texts: tuple[str, ...] = ()  # tools' descriptions and the run's error observations
    results: tuple[str, ...] = ()  # observations that held a result (not errors)
    placeholders: frozenset[str] = frozenset()  # the prompts' placeholder phrases (tokens)


@dataclass(frozen=True)
class Verdict:
    """The rule's decision: ``reason`` is None for an answer; ``text`` is the visible reply."""

    text: str
    reason: Reason | None = None

    @property
    def answer(self) -> bool:
        """True when the reply is an answer."""
        return self.reason is None


# Escape sequences (CSI, OSC, and two-character ESC forms) draw nothing.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# Tool calls written as text, in the forms the parsers read. ``"action":`` also when the blob
# around it is broken (an unclosed string ran on into a copy of the prompt).
_CALL_MARKERS = re.compile(r"<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|^\s*Action( Input)?\s*:"
                           r'|"action(?:_input)?"\s*:', re.MULTILINE)
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
# Arithmetic: numbers, operators and parentheses; a trailing "=" asks for the result.
_ARITHMETIC = re.compile(r"[\d.\s()+\-*/%^×÷]+=?\s*")
_OPERATOR_SPACED = re.compile(r"\d\)?\s+[-+*/%^×÷]+\s+\(?\d")
_STRONG_OPERATOR = re.compile(r"[*×÷^(]")


def visible(text: str) -> str:
    """The reply without escape sequences and invisible characters, stripped."""
    text = _ESCAPES.sub("", text)
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c)[0] != "C").strip()


def tokens(text: str) -> list[str]:
    """Words and numbers, case and punctuation aside (``4.0`` and ``4`` are one number)."""
    out = []
    for token in _TOKEN.findall(text.casefold()):
        if token[0].isdigit():
            token = token.replace(",", "")
            token = token.rstrip("0").rstrip(".") if "." in token else token
        out.append(token)
    return out


def placeholder_key(text: str) -> str:
    """How a placeholder phrase is compared: its tokens, space-joined."""
    return " ".join(tokens(text))


def is_calculation(text: str) -> bool:
    """Arithmetic with no result: ``300 - (1/3 * 300) - 20`` (never a fraction such as
    ``1/3``, a date such as ``2024-01-15`` or a lone number)."""
    body = text.strip().strip("`").strip()
    if not _ARITHMETIC.fullmatch(body) or not re.search(r"\d", body):
        return False
    body = body.rstrip("= ")
    return bool(_OPERATOR_SPACED.search(body) or (
        _STRONG_OPERATOR.search(body) and re.search(r"\d\s*[-+*/%^×÷]", body)))


def _tool_call(text: str) -> bool:
    if _CALL_MARKERS.search(text):
        return True
    for _, value, _ in _json_repair.iter_values(text, max_attempts=50):
        found = _json_repair.find_tool_call(value)
        if found is not None and found[0].strip().lower() != "final answer":
            return True
    return False


def _within(words: list[str], texts: Iterable[str]) -> bool:
    """Every token of the reply occurs in one of the texts."""
    return any(set(words) <= set(tokens(t)) for t in texts if t)


def judge(reply: str, given: Given) -> Verdict:
    """Whether ``reply`` is an answer to a run that was given ``given``, and if not, why."""
    text = visible(reply)
    words = tokens(text)
    if not any(unicodedata.category(c)[0] in "LNS" for c in text):
        return Verdict(text, "empty")  # nothing, or only punctuation
    if _tool_call(text):
        return Verdict(text, "tool_call")
    if placeholder_key(text) in given.placeholders:
        return Verdict(text, "placeholder")
    if is_calculation(text):
        return Verdict(text, "calculation")
    asked = tokens(given.question)
    if words and set(words) <= set(asked):
        chose = "or" in asked and "or" not in words
        if not chose and not _within(words, given.results):
            return Verdict(text, "question")
    has_word = any(not w[0].isdigit() for w in words)
    if len(words) >= 3 and has_word and _within(words, given.tool_texts):
        return Verdict(text, "tool_text")
    return Verdict(text)


def is_answer(reply: str, given: Given | None = None) -> bool:
    """:func:`judge`'s yes or no."""
    return judge(reply, given or Given()).answer
