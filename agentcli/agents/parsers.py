"""Output parsers: turn one model reply into an ``AgentAction`` or an ``AgentFinish``.

* ``ReActOutputParser`` reads the text format ``Thought:`` / ``Action: <tool>`` /
  ``Action Input: <input>`` / ``Final Answer: <answer>``; ``tool_input`` is always a string.
* ``JsonBlobOutputParser`` reads the chat format: a JSON blob
  ``{"action": <tool>, "action_input": <input>}`` (usually fenced after ``Action:``) or
  ``Final Answer: <answer>``; the blob ``{"action": "Final Answer", ...}`` also finishes, so
  the structured chat agent reuses it. ``tool_input`` is a dict when the input is an object;
  a string stays a string even when it holds JSON (``maybe_json`` turns such text into a dict).

Both are pure functions of the text and forgiving, because real models are sloppy: labels
may be bold, numbered (``Action 1:``), oddly spaced or cased; blobs may sit in any fence or
none and be broken JSON (see ``_json_repair``); each parser also accepts the other's style.

How a reply is read:
1. Reasoning in ``<think>...</think>`` is dropped (if nothing follows it, its inside is
   read instead), and so is everything after an end-of-turn token such as ``<|im_end|>``.
2. If the reply holds both an action and a final answer, the one written first wins.
3. A final answer that is empty or only echoes a prompt's placeholder (e.g. "the final
   answer to the original input question"; the set is ``agents.prompts.placeholders``) does
   not count, so the action is taken. Alone, it is the finish, and the executor's answer rule
   (``agentcli.answers``) refuses it.
4. An action named None / N/A, or with no input, does not count when there is a final
   answer. ``Action: Final Answer`` (or ``Finish[...]``) with an input is a final answer.
5. A section runs to the next label at the start of a line outside a code fence opened in
   it, so a final answer keeps all its lines and code in an Action Input may mention labels.
6. Only the first action is taken: a hallucinated ``Observation:`` and any later steps
   after it are ignored, and of a list of blobs the first is used.
7. With nothing usable, ``OutputParserError`` is raised with ``llm_output`` set to the raw
   reply and an ``observation`` telling the model the exact format to use.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterable
from typing import Protocol

from agentcli import _json_repair
from agentcli.agents.action_text import (
    MD_ESCAPE,
    blob_input,
    call_form,
    clean_input,
    drop_dangling_fence,
    is_code,
    maybe_json,
    norm_name,
    tool_name,
)
from agentcli.agents.prompts import load, placeholders
from agentcli.answers import placeholder_key
from agentcli.errors import OutputParserError
from agentcli.records import record
from agentcli.schema import AgentAction, AgentFinish

__all__ = ["AgentOutputParser", "JsonBlobOutputParser", "ReActOutputParser", "maybe_json"]


class AgentOutputParser(Protocol):
    """Turns a model reply into the next step; raises OutputParserError when it cannot."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """Parse one reply."""
        ...


# A section label such as "Action:", "**Action 1:**", "Final answer :" or "最终答案：".
_MARKER = re.compile(
    r"(?<![A-Za-z0-9])(?P<open>\*\*|__)?"
    r"(?P<label>final[ \t_-]{0,3}answer|最终答案|action[ \t_-]{0,3}(?:#?\d{1,3}[ \t_-]{0,3})?input"
    r"|action"
    r"|thought|observation|question)"
    r"(?:[ \t]{0,3}#?\d{1,3})?[ \t]{0,3}(?P<c1>\*\*|__|\*)?[ \t]{0,3}[:：]"
    r"(?(open)(?P<c2>[ \t]{0,3}(?:\*\*|__))?)",
    re.IGNORECASE,
)
_KINDS = {"finalanswer": "final", "最终答案": "final", "actioninput": "input"}
_DECORATION = " \t>#*_-+•0123456789.)"
_FENCE_LINE = re.compile(r"(?m)^[ \t]{0,3}(?:```|~~~)")
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_TAG = re.compile(r"</?(?:think|thinking|reasoning)>", re.IGNORECASE)
_END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "</s>")
_NOT_A_TOOL = frozenset(
    {"", "none", "n/a", "na", "null", "nil", "no action", "no tool", "nothing", "-", "not needed"}
)
_FINAL_TOOLS = frozenset({"final answer", "final", "finish"})
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"',
                               "\u2018": "'", "\u2019": "'"})
ANSWER_VALUE = "answer_value"  # AgentFinish key: a JSON answer kept whole (see _finish)
_ANSWER_KEYS = ("answer", "output", "text", "response", "finalanswer", "content")

# The reply formats a parse error teaches (prompt data, so their placeholder words are the
# answer rule's too: agents.prompts.placeholders).
_REACT_FORMAT = load("format_react").strip()
_CHAT_FORMAT = load("format_chat").strip()


@record
class _Marker:
    """A section label found in a reply (Thought, Action, Final Answer, ...)."""

    kind: str  # final, input, action, thought, observation or question
    start: int  # where the previous section ends (the line start for a line-leading label)
    body: int  # where the text after the colon begins
    line_start: bool
    open_bold: bool  # "**Action: x**": the bold closes at the end of the line


@record
class _Candidate:
    """One way to read a reply: where it starts, and what it reads as."""

    pos: int
    result: AgentAction | AgentFinish | None = None
    problem: str = ""  # "code" (on the Action line), "input" (none given) or "placeholder"
    tool: str = ""
    echo: AgentFinish | None = None  # a placeholder or empty answer, for the answer rule


def labelled_answer(text: str, label: re.Match[str] | None, rival: re.Match[str] | None,
                    end: re.Pattern[str]) -> AgentFinish | None:
    """The answer after ``label`` (``AI:``, ``So the final answer is:``) up to ``end``, when
    the label comes before its ``rival`` (an action) and the answer is not empty."""
    if label is None or (rival is not None and rival.start() < label.start()):
        return None
    answer = text[label.end():]
    stop = end.search(answer)
    answer = (answer[: stop.start()] if stop else answer).strip()
    return AgentFinish({"output": answer}, text) if answer else None


class ReActOutputParser:
    """Parses the text ReAct format (``Action:`` / ``Action Input:`` / ``Final Answer:``)."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """Parse one reply; ``tool_input`` is the Action Input as a string."""
        return _parse(text, structured=False)


class JsonBlobOutputParser:
    """Parses the chat format: a JSON action blob, or ``Final Answer:`` text."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """Parse one reply; ``tool_input`` is a string, or a dict for an object input.

        A final answer whose text was cut off mid-string (``"action_input": "643 }`` at the
        reply-length limit) is a parse error, recovered like any other: a truncated blob is
        never taken as the answer."""
        result = _clean_blob(text) or _parse(text, structured=True)
        if isinstance(result, AgentFinish) and _cut_off(text):
            raise OutputParserError(
                "The final answer was cut off before its closing quote.", llm_output=text,
                observation="Your final answer was cut off before it ended. Send the whole "
                "JSON blob again, shorter if needed. " + _CHAT_FORMAT,
            )
        return result


# The common well-formed reply: an optional thought, then one fenced blob and nothing else.
# Answering it without the full scan keeps the per-step overhead low; anything unusual falls
# through to the forgiving parser, which gives the same result for these inputs.
_CLEAN = re.compile(
    r"\A[ \t]*(?:Thought:[^`{}<]*?\n)?[ \t]*(?:Action:[ \t]*\n)?```(?:json)?\n(\{[^`]*\})\n```\s*\Z"
)


_INPUT_STRING = re.compile(r'"action_input"\s*:\s*"')
_CLOSED_STRING = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # the rest of a closed string


def _cut_off(text: str) -> bool:
    """Whether the last ``"action_input": "...`` string in ``text`` never closes."""
    starts = list(_INPUT_STRING.finditer(text))
    return bool(starts) and _CLOSED_STRING.match(text, starts[-1].end()) is None


def _clean_blob(text: str) -> AgentAction | None:
    match = _CLEAN.match(text)
    if match is None or "Final Answer" in text or "Observation" in text:
        return None
    try:
        data = json.loads(match.group(1))
    except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
        return None
    if not isinstance(data, dict) or set(data) != {"action", "action_input"}:
        return None
    tool, tool_input = data["action"], data["action_input"]
    if not isinstance(tool, str) or not tool or tool != tool.strip() or "\\" in tool:
        return None
    low = tool.lower()
    if "final" in low or "finish" in low or low in {"answer", "none", "n/a", "null", "done"}:
        return None  # finish-like names have their own rules in the full parser
    if isinstance(tool_input, dict) or (
            isinstance(tool_input, str) and tool_input == tool_input.strip() and tool_input):
        return AgentAction(tool, tool_input, text)
    return None


# The common plain answer: an optional one-line thought, then "Final Answer: <one line>" with
# nothing a label, a blob, a fence, bold, a tag or an escape could start (no colon, bracket,
# brace, backtick, tilde, star, underscore, angle bracket or backslash). The full parser gives
# the same answer for these; a placeholder or empty answer goes to it for its error message.
_CLEAN_FINAL = re.compile(
    r"\A[ \t]*(?:Thought:[^\n\r:：{}\[\]<>`~*_\\]*\n[ \t]*)?"
    r"Final Answer:([^\n\r:：{}\[\]<>`~*_\\]*)\Z"
)


def _clean_final(raw: str) -> AgentFinish | None:
    match = _CLEAN_FINAL.match(raw)
    if match is None:
        return None
    answer = match.group(1).strip()
    if answer in ("", "...", "…") or _is_placeholder(answer):
        return None
    return AgentFinish({"output": answer}, raw)


def _parse(raw: str, *, structured: bool) -> AgentAction | AgentFinish:
    clean = _clean_final(raw)
    if clean is not None:
        return clean
    help_text = _CHAT_FORMAT if structured else _REACT_FORMAT
    text = _visible(raw) if raw else ""
    reply = _Reply(text)
    candidates = [
        *_first_usable(_final_at(reply, i, raw) for i in reply.labels("final")),
        *_first_usable(_text_action(reply, i, raw, structured) for i in reply.labels("action")),
        *_blob_candidates(text, raw, structured),
    ]
    usable = [(c.pos, c.result) for c in candidates if c.result is not None]
    if usable:
        return min(usable, key=lambda found: found[0])[1]
    problems = {c.problem: c for c in reversed(candidates) if c.problem}  # the first of each
    if "placeholder" in problems and not problems.keys() & {"code", "input"}:
        # only an empty or placeholder answer: the executor's answer rule refuses it (one
        # answer-now request, then no answer), as it refuses any reply that adds nothing
        echo = problems["placeholder"].echo
        assert echo is not None
        return echo
    if not text.strip():
        message, note = "The model returned an empty reply.", "Your reply was empty. "
    elif "code" in problems:
        line = problems["code"].tool[:120]
        message = f"The Action line {line!r} is code, not a tool name."
        note = (f"'Action: {line}' is code, not a tool name. The Action line holds only the "
                "name of one of your tools; put code or text in the input of a tool that takes "
                "it. ")
    elif "input" in problems:
        tool = problems["input"].tool[:80]
        message = f"The action {tool!r} has no input."
        note = (f'The JSON blob for the tool "{tool}" has no "action_input". ' if structured
                else f"You chose 'Action: {tool}' but gave no input. Add the line "
                "'Action Input: <the input for that tool>' right after it. ")
    else:
        message = "The model's reply has neither an action nor a final answer."
        note = "I could not find a tool call or a final answer in your reply. "
    raise OutputParserError(message, llm_output=raw, observation=note + help_text)


def _visible(text: str) -> str:
    """The part of a reply meant as the answer: no reasoning block, nothing after end-of-turn."""
    for token in _END_TOKENS:
        i = text.find(token)
        if i >= 0:
            text = text[:i] if text[:i].strip() else text[i + len(token) :]
    ends = [m.end() for m in _THINK_CLOSE.finditer(text)]
    if ends and text[ends[-1]:].strip():
        return text[ends[-1]:]
    return _THINK_TAG.sub("", text)


class _Reply:
    """A reply split at its section labels, with the positions of its code fences."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.markers = list(self._scan(text))
        self.fences = [m.start() for m in _FENCE_LINE.finditer(text)]

    @staticmethod
    def _scan(text: str) -> list[_Marker]:
        out = []
        for m in _MARKER.finditer(text):
            label = m.group("label")
            key = "".join(ch for ch in label.lower() if ch.isalpha())
            kind = _KINDS.get(key, key)
            start = m.start()
            window = max(0, start - 24)  # labels are only looked for near the line start
            nl = text.rfind("\n", window, start)
            begin = nl + 1 if nl >= 0 else (0 if window == 0 else -1)
            line_start = begin >= 0 and not text[begin:start].strip(_DECORATION)
            # Mid-line, only a capitalised label counts ("the next action: wait" is prose).
            if not line_start and (kind == "question" or label[0].islower()):
                continue
            open_bold = bool(m.group("open")) and not m.group("c1") and not m.group("c2")
            out.append(_Marker(kind, begin if line_start else start, m.end(), line_start,
                               open_bold))
        return out

    def labels(self, kind: str) -> list[int]:
        """The indexes of the (first 50) labels of ``kind``."""
        return [i for i, m in enumerate(self.markers) if m.kind == kind][:50]

    def end_of(self, i: int, *, inline: bool) -> int:
        """Where section ``i`` ends: at the next label outside a code fence opened inside it."""
        body = self.markers[i].body
        for j in range(i + 1, len(self.markers)):
            other = self.markers[j]
            if (inline or other.line_start) and not self._fenced(body, other.start):
                return other.start
        return len(self.text)

    def _fenced(self, a: int, b: int) -> bool:
        return (bisect_left(self.fences, b) - bisect_left(self.fences, a)) % 2 == 1

    def section(self, i: int, *, inline: bool) -> str:
        """The text of section ``i`` with whitespace and a dangling bold closer removed."""
        text = self.text[self.markers[i].body : self.end_of(i, inline=inline)].strip()
        if self.markers[i].open_bold:
            head, nl, rest = text.partition("\n")
            text = head.rstrip().rstrip("*_").rstrip() + nl + rest
        return text.strip()


def _first_usable(found: Iterable[_Candidate | None]) -> list[_Candidate]:
    """The first candidate with a result, plus the first one without before it (its problem
    explains a failure); later ones are never built."""
    out: list[_Candidate] = []
    for candidate in found:
        if candidate is not None and (candidate.result is not None or not out):
            out.append(candidate)
            if candidate.result is not None:
                break
    return out


def _final_at(reply: _Reply, i: int, raw: str) -> _Candidate:
    answer, value = drop_dangling_fence(reply.section(i, inline=False)), None
    if answer.startswith(("```", "~~~", "{")):  # Final Answer: {"action": "Final Answer", ...}
        fields = _json_repair.find_tool_call(maybe_json(answer))
        if fields is not None and fields[1] and norm_name(fields[0]) in _FINAL_TOOLS:
            answer, value = _as_text(fields[2]), fields[2]
    return _finish(reply.markers[i].start, answer, raw, value)


def _text_action(reply: _Reply, i: int, raw: str, structured: bool) -> _Candidate | None:
    pos = reply.markers[i].start
    body = reply.section(i, inline=True)
    if body.startswith(("```", "~~~", "{")) or re.match(r"\[\s*\{", body):
        return None  # a JSON blob after "Action:": the blob candidates read it
    line = body.split("\n", 1)[0]
    if is_code(line):
        return _Candidate(pos, problem="code", tool=line.strip())
    tool = tool_name(line)
    if tool.lower() in _NOT_A_TOOL:
        return None
    raw_input = None
    for j in range(i + 1, len(reply.markers)):
        kind = reply.markers[j].kind
        if kind == "action":
            break
        if kind == "input":
            raw_input = reply.section(j, inline=False)
            break
    if raw_input is None:
        tool, raw_input = call_form(tool)
        if raw_input is None:
            return _Candidate(pos, problem="input", tool=tool)
    tool_input = clean_input(raw_input)
    if norm_name(tool) in _FINAL_TOOLS:
        return _finish(pos, tool_input, raw)
    parsed = maybe_json(tool_input) if structured else None  # an object for structured tools
    return _Candidate(pos, AgentAction(tool, parsed if isinstance(parsed, dict) else tool_input,
                                       raw))


def _blob_candidates(text: str, raw: str, structured: bool) -> list[_Candidate]:
    """The first complete tool-call blob in the text, plus the first incomplete one before it."""
    out = _blobs(text, raw, structured)
    if not out and any(chr(q) in text for q in _SMART_QUOTES):  # “typographic” quotes
        out = _blobs(text.translate(_SMART_QUOTES), raw, structured)
    return out


def _blobs(text: str, raw: str, structured: bool) -> list[_Candidate]:
    return _first_usable(_blob_at(start, value, raw, structured)
                         for start, value, _end in _json_repair.iter_values(text))


def _blob_at(start: int, value: object, raw: str, structured: bool) -> _Candidate | None:
    fields = _json_repair.find_tool_call(value)
    if fields is None:
        return None
    tool, has_input, tool_input = fields
    tool = MD_ESCAPE.sub(r"\1", tool)
    if norm_name(tool) in _FINAL_TOOLS:
        return _finish(start, _as_text(tool_input) if has_input else "", raw,
                       tool_input if has_input else None)
    if not has_input:  # {"action": "get_time"}: a call without arguments, as LangChain
        return _Candidate(start, AgentAction(tool, {}, raw))
    return _Candidate(start, AgentAction(tool, blob_input(tool_input, structured), raw))


# An answer that ran past its blob's closing brace: '1058 }\nThe answer is 1058. The
# question was...' (the model forgot the closing quote; a grammar kept it inside the string).
_SPILLED = re.compile(r'([^{}\n]*?)\s*"?\s*\}\s*(?:\n|$)')


def _finish(pos: int, answer: str, raw: str, value: object = None) -> _Candidate:
    """A final answer; ``value`` is the blob's JSON answer (an object or a list), kept whole
    beside its text for a run that needs a structured answer."""
    spilled = _SPILLED.match(answer)
    if spilled and spilled.group(1).strip():
        answer = spilled.group(1).strip()
    if answer.strip() in ("", "...", "…") or _is_placeholder(answer):  # kept for the rule
        return _Candidate(pos, problem="placeholder", echo=AgentFinish({"output": answer}, raw))
    values: dict[str, object] = {"output": answer}
    if isinstance(value, dict | list):
        values[ANSWER_VALUE] = value
    return _Candidate(pos, AgentFinish(values, raw))


def _is_placeholder(answer: str) -> bool:
    """The prompts' placeholder words (one set with the answer rule's)."""
    return len(answer) <= 200 and placeholder_key(answer) in placeholders()


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    if isinstance(value, dict):
        keys = {_json_repair.norm_key(k): k for k in value}
        for k in _ANSWER_KEYS:
            if k in keys and isinstance(value[keys[k]], str):
                return str(value[keys[k]]).strip()
    return json.dumps(value, ensure_ascii=False)
