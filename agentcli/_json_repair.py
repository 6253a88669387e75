"""A forgiving JSON reader for the blobs models write, and the tool-call shapes inside them.

Besides strict JSON it accepts: single-quoted strings, Python literals (True/False/None),
comments (``//``, ``/* */``, ``#``), trailing, doubled or missing commas, bare words,
unescaped newlines and stray quotes inside strings, and containers left open (at the end
of the text or before text that cannot belong to them, such as a closing code fence).

``find_tool_call`` then recognises the tool-call shapes models use: ``action``/``action_input``,
``tool``/``tool_input``, ``name``/``arguments`` (or ``args``, ``parameters``), lists of these,
and OpenAI-style ``{"function": {...}}`` or ``{"tool_calls": [...]}`` wrappers.

Every routine only moves forward through the text and nesting is capped, so the cost
stays linear in the length of the text whatever it holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from agentcli.type_schema import JSON

MAX_DEPTH = 48

_STRICT = json.JSONDecoder(strict=False)
_WS = re.compile(r"\s*")
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?![\w.])")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_KEY_WORD = re.compile(r"[A-Za-z_$][\w$\- ]*")
_VALUE_WORD = re.compile(r"[\w$.+\-][^,}\]\n]*")
# Unrolled "[^q\\]*(\\.[^q\\]*)*": unambiguous, so it cannot backtrack badly.
_STRING_BODY = {
    '"': re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.S),
    "'": re.compile(r"[^'\\]*(?:\\.[^'\\]*)*", re.S),
}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\",
                   '"': '"', "'": "'"}
_LITERALS: dict[str, JSON] = {
    "true": True, "True": True, "false": False, "False": False,
    "null": None, "None": None, "none": None, "undefined": None,
}
# After a closing quote one of these (or the end) must follow; otherwise the quote is text.
_AFTER_STRING = ",:}])`/#"
# A "{" or "[" worth trying as the start of a tool-call blob.
_BRACKET_RUN = re.compile(r"[\s\[{]*")
# A quoted key and its colon just ahead: the comma before it was forgotten.
_LONG_ESCAPED = 64  # characters: below it the pattern is faster than json.loads
_KEY_AHEAD = re.compile(r"""(["'])[^"'\n]{1,80}\1\s*[:=]""")
_CANDIDATE = re.compile(r"\{\s{0,20}[\"'A-Za-z_/#]|\[\s{0,20}[{\[]")


class JsonRepairError(ValueError):
    """The text is not JSON even with repairs; ``pos`` is where reading stopped."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _match_end(text: str, pos: int, pattern: re.Pattern[str] = _WS) -> int:
    m = pattern.match(text, pos)  # these patterns all match the empty string
    return m.end() if m else pos


def _unescape(raw: str, quote: str) -> str:
    if "\\" not in raw:
        return raw
    if quote == '"' and len(raw) > _LONG_ESCAPED:
        try:  # json's C decoder is ~5x faster than the pattern below on long escaped strings
            return str(json.loads('"' + raw + '"', strict=False))
        except ValueError:
            pass

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if len(code) == 5:
            return chr(int(code[1:], 16))
        return _SIMPLE_ESCAPES.get(code, "\\" + code)

    # Join surrogate pairs written as two \u escapes (a lone one stays, as json.loads keeps it).
    return _ESCAPE.sub(one, raw).encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def skip(self, pos: int) -> int:
        """Skip whitespace and comments."""
        text = self.text
        while True:
            pos = _match_end(text, pos)
            if text.startswith(("//", "#"), pos):
                nl = text.find("\n", pos)
                pos = self.n if nl < 0 else nl + 1
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                pos = self.n if end < 0 else end + 2
            else:
                return pos

    def value(self, pos: int, depth: int) -> tuple[JSON, int]:
        if depth > MAX_DEPTH:
            raise JsonRepairError("nested too deeply", pos)
        pos = self.skip(pos)
        if pos >= self.n:
            raise JsonRepairError("a value is missing", pos)
        c = self.text[pos]
        if c == "{":
            return self.obj(pos + 1, depth + 1)
        if c == "[":
            return self.arr(pos + 1, depth + 1)
        if c in "\"'":
            return self.string(pos)
        m = _NUMBER.match(self.text, pos)
        if m:
            token = m.group()
            try:
                return (float(token) if any(ch in token for ch in ".eE") else int(token)), m.end()
            except ValueError:  # more digits than int() accepts
                return token, m.end()
        m = _IDENT.match(self.text, pos)
        if m and m.group() in _LITERALS:
            return _LITERALS[m.group()], m.end()
        m = _VALUE_WORD.match(self.text, pos)
        if m:
            word = m.group().rstrip()
            return word, pos + len(word)
        raise JsonRepairError(f"unexpected {c!r}", pos)

    def string(self, pos: int) -> tuple[str, int]:
        text, quote = self.text, self.text[pos]
        body = _STRING_BODY[quote]
        i = pos + 1
        while True:
            end = _match_end(text, i, body)
            if end >= self.n:  # never closed: the string runs to the end
                return _unescape(text[pos + 1 :], quote), self.n
            after = _match_end(text, end + 1)
            follower = text[after] if after < self.n else ""
            newline = "\n" in text[end + 1 : after]
            if not follower or follower in _AFTER_STRING or (
                follower in "\"'" and (newline or _KEY_AHEAD.match(text, after))
            ):
                return _unescape(text[pos + 1 : end], quote), end + 1
            i = end + 1  # a stray quote inside the string

    def obj(self, pos: int, depth: int) -> tuple[dict[str, JSON], int]:
        # obj and arr repeat their loop on purpose: one loop over closures made per container
        # cost 25 % on deeply nested input (bench/parser_speed.py, issue 32).
        text, out = self.text, dict[str, JSON]()
        while True:
            pos = self.skip(pos)
            if pos >= self.n:
                return out, self.n
            c = text[pos]
            if c == "}":
                return out, pos + 1
            if c == ",":
                pos += 1
                continue
            key: str
            if c in "\"'":
                key, pos = self.string(pos)
            else:
                m = _KEY_WORD.match(text, pos)
                if m is None:  # text that cannot be a key: the object ended here
                    return out, pos
                key = m.group().rstrip()
                pos += len(key)
            pos = self.skip(pos)
            if pos >= self.n:
                return out, self.n
            if text[pos] not in ":=":
                raise JsonRepairError("expected ':' after a key", pos)
            out[key], pos = self.value(pos + 1, depth)
            after = self.skip(pos)
            if after >= self.n:
                return out, self.n
            c = text[after]
            if c == ",":
                pos = after + 1
            elif c == "}":
                return out, after + 1
            elif c in "\"'" and ("\n" in text[pos:after] or _KEY_AHEAD.match(text, after)):
                pos = after  # a missing comma before the next key
            else:
                return out, pos

    def arr(self, pos: int, depth: int) -> tuple[list[JSON], int]:
        text, out = self.text, list[JSON]()
        while True:
            pos = self.skip(pos)
            if pos >= self.n:
                return out, self.n
            c = text[pos]
            if c == "]":
                return out, pos + 1
            if c == ",":
                pos += 1
                continue
            if c == "}":
                return out, pos
            item, pos = self.value(pos, depth)
            out.append(item)
            after = self.skip(pos)
            if after >= self.n:
                return out, self.n
            c = text[after]
            if c == ",":
                pos = after + 1
            elif c == "]":
                return out, after + 1
            elif c in "{[\"'" and "\n" in text[pos:after]:
                pos = after  # a missing comma before the next item
            else:
                return out, pos


def parse_prefix(text: str, start: int = 0) -> tuple[JSON, int]:
    """Read one JSON value at ``start``, repairing it; return it and the index after it."""
    try:
        value, end = _STRICT.raw_decode(text, start)
        return value, int(end)
    except (ValueError, RecursionError):
        pass
    return _Reader(text).value(start, 0)


def loads(text: str) -> JSON:
    """Parse a whole text as JSON, repairing it; raise ValueError when it is not JSON."""
    stripped = text.strip()
    value, end = parse_prefix(stripped, 0)
    if _Reader(stripped).skip(end) < len(stripped):
        raise JsonRepairError("text after the JSON value", end)
    return value


def iter_values(text: str, max_attempts: int = 500) -> Iterator[tuple[int, object, int]]:
    """Yield ``(start, value, end)`` for each JSON object or list of objects found in free text."""
    pos = 0
    for _ in range(max_attempts):
        m = _CANDIDATE.search(text, pos)
        if m is None:
            return
        start = m.start()
        try:
            value, end = parse_prefix(text, start)
        except JsonRepairError as exc:
            pos = max(start + 1, exc.pos)
            if exc.pos - start > MAX_DEPTH:  # a pile of brackets: skip it whole
                pos = _match_end(text, pos, _BRACKET_RUN)
            continue
        yield start, value, end
        pos = max(end, start + 1)


_ACTION_KEYS = ("action", "tool", "toolname", "name", "actionname", "function")
_INPUT_KEYS = (
    "actioninput", "toolinput", "input", "arguments", "args", "parameters", "params", "kwargs",
)
_NESTED_KEYS = ("function", "toolcall", "toolcalls", "action")


def norm_key(key: str) -> str:
    """A key without case, spaces or punctuation: "Action Input" and "action_input" match."""
    return "".join(ch for ch in key.lower() if ch.isalnum())


def find_tool_call(value: object, depth: int = 0) -> tuple[str, bool, JSON] | None:
    """``(tool, has_input, input)`` of the first tool-call-shaped object in a JSON value."""
    if depth > 4:
        return None
    if isinstance(value, list):
        return _first_call(value[:20], depth)
    if not isinstance(value, dict):
        return None
    keys = {norm_key(k): k for k in value}
    tool_key = next((keys[k] for k in _ACTION_KEYS
                     if k in keys and isinstance(value[keys[k]], str)), None)
    input_key = next((keys[k] for k in _INPUT_KEYS if k in keys), None)
    if tool_key is not None and value[tool_key].strip():
        tool = value[tool_key].strip()
        if input_key is not None:
            return tool, True, value[input_key]
        if norm_key(tool_key) in ("action", "tool"):  # "name" alone is too common to trust
            return tool, False, None
    # {"function": {"name": ..., "arguments": ...}} and the like
    return _first_call([value[keys[k]] for k in _NESTED_KEYS
                        if k in keys and isinstance(value[keys[k]], (dict, list))], depth)


def _first_call(values: list[JSON], depth: int) -> tuple[str, bool, JSON] | None:
    found = (find_tool_call(v, depth + 1) for v in values)
    return next((f for f in found if f is not None), None)
