"""When an answer is Markdown, and how to render it without losing characters.

An answer such as ``2*3*4 = 24, and <the answer>`` is not Markdown, but a Markdown renderer
reads ``*3*`` as emphasis and ``<the answer>`` as an HTML tag, and prints ``234 = 24, and``:
a wrong answer on screen. So an answer is rendered as Markdown only when it has block
structure (a fence, a list, a heading, a table), and even then ``<`` and a ``*`` between
digits are escaped outside code so they show as written.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_STAR_IN_NUMBER = re.compile(r"(?<=[0-9)])[ \t]*\*[ \t]*(?=[0-9(])")


def has_markdown_blocks(text: str) -> bool:
    """True when ``text`` has a fence, a heading, a table, or a list of two items or more."""
    lines = text.splitlines()
    items = 0
    for i, line in enumerate(lines):
        if _FENCE.match(line) or _HEADING.match(line):
            return True
        if _TABLE_RULE.match(line) and i > 0 and "|" in lines[i - 1]:
            return True
        if _LIST_ITEM.match(line):
            items += 1
    return items >= 2


def protect_inline(text: str) -> str:
    """Escape ``<`` and ``*`` between digits outside code, so Markdown shows them as written."""
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opener = _FENCE.match(line)
        if opener and fence in (None, opener.group(1)):  # a fence opens or closes: kept
            fence = None if fence else opener.group(1)
            out.append(line)
        else:
            out.append(line if fence else _protect_line(line))
    return "".join(out)


def _protect_line(line: str) -> str:
    parts: list[str] = []
    pos = 0
    for span in _CODE_SPAN.finditer(line):
        parts.append(_escape(line[pos:span.start()]))
        parts.append(span.group(0))
        pos = span.end()
    parts.append(_escape(line[pos:]))
    return "".join(parts)


def _escape(text: str) -> str:
    text = _TAG_START.sub(r"\\<", text)
    return _STAR_IN_NUMBER.sub(lambda m: m.group(0).replace("*", r"\*"), text)
