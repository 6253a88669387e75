"""The answer rule: a reply is an answer when it adds something to what the run was given.

One pure function, :func:`judge`, decides it for every path (run, chat, batch, serve, the
answer-now reply, the library API) from the reply's text and what the run was given
(:class:`Given`). It never looks at a reply's value: ``10.73`` is as good as ``42``. A run
with an output schema (``--schema``, ``response_format``) has its answer decided by that
schema instead: a value that matches is the answer, whatever its fields. What it refuses, and
why (the :data:`Reason`):

* ``empty``: nothing visible (only whitespace, zero-width or other format/control
  characters, escape sequences, punctuation);
* ``tool_call``: a tool call in any form the parsers read, anywhere in the reply (a JSON
  blob, ``{"name": ..., "arguments": ...}`` in a fence after a sentence, ``<tool_call>``,
  ``<|python_tag|>``, ``[TOOL_CALLS]``, an ``Action:`` line);
* ``placeholder``: the prompt's own placeholder words (``your answer to the user``), or any
  words in the prompts' slot notation (``<the answer to the question>``);
* ``calculation``: arithmetic with no result (``300 - (1/3 * 300) - 20``): a step, which the
  executor runs through the Calculator when it is loaded;
* ``question``: only words and numbers of the question (every token of the reply occurs in
  it, in its order, case and punctuation aside): a restatement, a copied part, or the question
  in quotes. This holds for a question (it ends with "?" or holds an interrogative such as
  "how"); an instruction ("Say hi") may ask for its own words. A reply that picks one side
  of the question's ``or`` or one item of a list it gives (``9`` for "the largest of 3, 9
  and 4") is a choice, one that reorders the question's words says something (``The file is
  empty`` for "Is the file empty?"), and a reply a tool's result holds is that result, as is
  one drawn from the material the question gives to work on (its paragraphs before the last:
  piped text, fragments, a pasted document; its quoted passages): all are answers. A line's
  label (``Final Answer:``, ``Q:``, ``A:``) and markup tags (``<answer>``) are the reply's
  form, not its words;
* ``tool_text``: a piece copied from a tool's own error or help (its description): the
  reply's tokens are a run of that text's tokens; one or two words or only numbers are never
  taken for such a copy.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Literal

from agentcli import _json_repair
from agentcli.records import record

Reason = Literal["empty", "tool_call", "placeholder", "calculation", "question", "tool_text"]
# Why a reply is not an answer, in plain English (the trace's notice).
REASON_WORDS: dict[str, str] = {
    "empty": "nothing visible",
    "tool_call": "a tool call written as text",
    "placeholder": "the prompt's placeholder words",
    "calculation": "a calculation without its result",
    "question": "only words of the question",
    "tool_text": "a copy of a tool's own text",
}


@record
class Given:
    """What the run was given, against which a reply must add something."""

    question: str = ""
    tool_texts: tuple[str, ...] = ()  # tools' descriptions and the run's error observations
    results: tuple[str, ...] = ()  # observations that held a result (not errors)
    placeholders: frozenset[str] = frozenset()  # the prompts' placeholder phrases (tokens)
    # the loaded Calculator's symbols for arithmetic (×, ÷, −, $, 1,000); None: ASCII only
    arithmetic: Callable[[str], str] | None = None

    # What the rule reads at every streamed token, worked out once per Given (a run's stays
    # the same between its steps) and gone with it, not kept in a process-wide cache.
    @functools.cached_property
    def question_tokens(self) -> frozenset[str]:
        """The question's tokens."""
        return frozenset(tokens(self.question))

    @functools.cached_property
    def tool_token_sets(self) -> tuple[frozenset[str], ...]:
        """Each tool text's tokens."""
        return tuple(frozenset(tokens(t)) for t in self.tool_texts if t)

    @functools.cached_property
    def known_words(self) -> tuple[str, ...]:
        """The words of the tools' texts, of the placeholders and the labels, and
        ``action``, sorted."""
        words = {w for text in (*self.tool_texts, *self.placeholders) for w in tokens(text)}
        return tuple(sorted(words | _LABEL_WORDS | {"action"}))

    @functools.cached_property
    def sorted_placeholders(self) -> tuple[str, ...]:
        """The placeholder phrases, sorted (for a prefix search)."""
        return tuple(sorted(self.placeholders))


@record
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
# A reply's form around its words: a line's label, markup tags.
_LABELS = ("final answer", "the answer is", "answer", "question", "thought", "ai", "assistant",
           "q", "a")
_LABEL_WORDS = frozenset(" ".join(_LABELS).split())
# A slot in the prompts' placeholder notation, words in angle brackets (``<the result>``),
# whatever its words: it fills nothing in
_SLOT = re.compile(r"<[^\W\d_][^<>]*\s[^<>]*>")
_SCAFFOLD = re.compile(rf"^\s*(?:{'|'.join(_LABELS)})\s*:|</?[a-z][\w-]*>",
                       re.IGNORECASE | re.MULTILINE)
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
# Arithmetic as the Calculator reads it: numbers, + - * / % ** ^ and parentheses; a trailing
# "=" asks for the result.
_ARITHMETIC = re.compile(r"[\d.\s()+\-*/%^]+=?\s*")
_OPERATOR_SPACED = re.compile(r"[\d)]\s+(?:\*\*|[-+*/%^])\s+[(\d.]")
_BINARY = re.compile(r"[\d)]\s*(?:\*\*|[-+*/%^])\s*[(\d.]")
_STRONG_BINARY = re.compile(r"[\d)]\s*(?:\*\*|[*^])\s*[(\d.]")
# A question asks for what it does not hold; an instruction ("Say hi") may ask for its words.
_INTERROGATIVES = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why",
                             "how"})


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


def echoes(call_input: object, result: str) -> bool:
    """A tool's result only gives its input back (``Answer: 65`` for ``65``): it lends a
    restatement nothing, unlike a computed one (``Answer: 7`` for ``7 * 1``)."""
    given = (call_input if isinstance(call_input, str) else " ".join(map(str, call_input.values()))
             if isinstance(call_input, dict) else json.dumps(call_input))  # its arguments
    return tokens(_SCAFFOLD.sub(" ", result)) == tokens(given)


def placeholder_key(text: str) -> str:
    """How a placeholder phrase is compared: its tokens, space-joined."""
    return " ".join(tokens(text))


def is_calculation(text: str, read: Callable[[str], str] | None = None) -> bool:
    """Arithmetic with no result: ``300 - (1/3 * 300) - 20`` (never a fraction such as
    ``1/3``, a date such as ``2024-01-15`` or a lone number, bold or not: ``**75**``), as
    ``read`` (the loaded Calculator's notations: ``3 × 4``, ``$300 - $100``) makes it."""
    body = text.strip().strip("`").strip().lstrip("= ")
    if read is not None:
        body = read(body)
    if not _ARITHMETIC.fullmatch(body) or not re.search(r"\d", body):
        return False
    body = body.rstrip("= ")
    return bool(_OPERATOR_SPACED.search(body) or _STRONG_BINARY.search(body)
                or ("(" in body and _BINARY.search(body)))


def _tool_call(text: str) -> bool:
    if _CALL_MARKERS.search(text):
        return True
    for _, value, _ in _json_repair.iter_values(text, max_attempts=50):
        found = _json_repair.find_tool_call(value)
        if found is not None and found[0].strip().lower() != "final answer":
            return True
    return False


def _asks(question: str, asked: list[str]) -> bool:
    """The input is a question (it ends with "?" or holds an interrogative), which asks for
    something it does not hold; an instruction such as "Say hi" may ask for its own words."""
    return question.rstrip().endswith("?") or not _INTERROGATIVES.isdisjoint(asked)


def _in_order(words: list[str], asked: list[str]) -> bool:
    """Every token of the reply is in the question, in the question's order (a copy of it or
    of a part); a reordering adds an order (``The file is empty`` for "Is the file empty?",
    a sorted list)."""
    rest = iter(asked)
    return bool(words) and all(any(w == a for a in rest) for w in words)


def _piece(words: list[str], text: list[str]) -> bool:
    """The reply's tokens are a run of the text's tokens: a piece copied from it."""
    n = len(words)
    return any(text[i:i + n] == words for i in range(len(text) - n + 1))


# The question's material (see :func:`material`): quoted passages (an apostrophe inside a
# word, as in "What's", opens none) and the paragraphs before the last.
_QUOTED = re.compile(r"(?<!\w)'([^'\n]+)'(?!\w)|\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d"
                     r"|\u2018([^\u2019\n]+)\u2019|`([^`\n]+)`")
_PARAGRAPH = re.compile(r"\n\s*\n")
_ASKED = re.compile(r"[^.!?\n]*\?")  # a sentence that asks
# What separates the items of a list: ``3, 9 and 4``, ``cat, horse, ox``.
_ITEM_SEPARATOR = re.compile(r"[,;]|\b(?:and|or)\b", re.IGNORECASE)


def material(question: str) -> tuple[str, ...]:
    """What the question gives to work on apart from what it asks: its paragraphs before the
    last (piped text, a fragment, a pasted document) and its quoted passages, without the
    questions they hold (a question piped in is asked, not given). A reply drawn from it
    picks a part out, as a reply a tool's result holds does."""
    quoted = ("".join(m.groups(default="")) for m in _QUOTED.finditer(question))
    return tuple(_ASKED.sub(" ", text) for text in
                 (*_PARAGRAPH.split(question.strip())[:-1], *quoted))


def _one_item(words: list[str], question: str) -> bool:
    """The reply is one item of a list of single words or numbers the question gives (``9``
    of "the largest of 3, 9 and 4"): a choice, like a side of an ``or``. The first and last
    items are the words next to the list's first and last separators. (A phrase of a list,
    ``4 blue`` of "6 red, 4 blue and 5 green balls", is no such choice.)"""
    if len(words) != 1 or not re.search(r"[,;]", question):
        return False
    pieces = [tokens(p) for p in _ITEM_SEPARATOR.split(question)]
    middle = pieces[1:-1]
    if not middle or any(len(p) != 1 for p in middle):
        return False
    return words in middle or pieces[0][-1:] == words or pieces[-1][:1] == words


def _within(words: list[str], texts: Iterable[str]) -> bool:
    """Every token of the reply occurs in one of the texts."""
    return any(set(words) <= set(tokens(t)) for t in texts if t)


def _begins_one(key: str, ordered: tuple[str, ...]) -> bool:
    """Some of the sorted phrases begins with ``key`` (those that do follow it at once)."""
    at = bisect.bisect_left(ordered, key)
    return at < len(ordered) and ordered[at].startswith(key)


# Where a tool call written as text could begin (streamed text is held back from there).
_CALL_START = re.compile(r'[{<\[]|```|^\s*Action|"action', re.MULTILINE | re.IGNORECASE)


def settled(prefix: str, given: Given, *, whole: bool = False) -> int:
    """How much of a reply still arriving can be shown before the rule has judged it: all of
    ``prefix`` up to where a tool call could begin once it adds something whatever follows
    (a word or number neither the question, a placeholder, a tool's text nor arithmetic
    holds), else 0. Each test but the tool call's only turns "no" into "yes" as text comes.
    A ``whole`` reply is judged: all of it when it is an answer, else 0."""
    if whole:
        return len(prefix) if judge(prefix, given).answer else 0
    complete = prefix if not prefix or not prefix[-1].isalnum() else _TOKEN.sub(
        lambda m: m.group() if m.end() < len(prefix) else "", prefix)
    if complete != prefix and _new_whatever_follows(prefix[len(complete):], given):
        complete = prefix  # a word still arriving that only a new word can come of
    text = visible(complete)
    words = [w for w in tokens(_SCAFFOLD.sub(" ", text)) if w not in _LABEL_WORDS]
    if not words or set(words) <= given.question_tokens or _ARITHMETIC.fullmatch(text):
        return 0
    key = placeholder_key(text)
    if _begins_one(key, given.sorted_placeholders) or any(
            set(words) <= known for known in given.tool_token_sets):
        return 0
    start = _CALL_START.search(prefix)
    return start.start() if start else len(complete.rstrip())


def _new_whatever_follows(arriving: str, given: Given) -> bool:
    """A word still arriving is judged as it stands when no word the rule compares a reply
    with begins with it (the question's, a placeholder's, a tool text's, a label, ``action``
    of a call written as text): whatever letters follow, it is a word none of them has. A
    number is not: more digits may make it the question's, or arithmetic."""
    word = arriving.casefold()
    if not word.isalpha() or any(w.startswith(word) for w in given.question_tokens):
        return False
    known = given.known_words
    at = bisect.bisect_left(known, word)
    return not (at < len(known) and known[at].startswith(word))


def judge(reply: str, given: Given) -> Verdict:
    """Whether ``reply`` is an answer to a run that was given ``given``, and if not, why."""
    text = visible(reply)
    words = tokens(text)
    if not any(unicodedata.category(c)[0] in "LNS" for c in text):
        return Verdict(text, "empty")  # nothing, or only punctuation
    if _tool_call(text):
        return Verdict(text, "tool_call")
    if placeholder_key(text) in given.placeholders or _SLOT.fullmatch(text.strip()):
        return Verdict(text, "placeholder")
    if is_calculation(text, given.arithmetic):
        return Verdict(text, "calculation")
    asked = tokens(given.question)
    said = tokens(_SCAFFOLD.sub(" ", text))
    if words and not said:
        return Verdict(text, "empty")  # only labels or tags
    if _asks(given.question, asked) and _in_order(said, asked):
        chose = ("or" in asked and "or" not in said) or _one_item(said, given.question)
        if not chose and not _within(said, (*given.results, *material(given.question))):
            return Verdict(text, "question")
    has_word = any(not w[0].isdigit() for w in words)
    if len(words) >= 3 and has_word and any(_piece(words, tokens(t)) for t in given.tool_texts):
        return Verdict(text, "tool_text")
    return Verdict(text)

