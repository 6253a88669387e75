"""The text of an ``Action:`` line and its ``Action Input``, as small models write them:
the tool's name without quotes, bold or a description, a code expression told apart from a
tool, ``tool("x")`` call forms, and an input without fences, quotes or trailing notes (and
the JSON it may hold: :func:`maybe_json`)."""

from __future__ import annotations

import json
import re
from typing import Any

from agentcli import _json_repair

MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!])")  # my\_tool is Markdown for my_tool
_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
_TOOL_WITH_DESCRIPTION = re.compile(r"([\w.\-]{1,64})[ \t]*[:：][ \t]+\S")
_DOTTED_CALL = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+\s*\(")  # os.path.join(, df.head(
_TRAILING_NOTE = re.compile(r"\n[ \t]*\n[ \t]*[(\[][^\n]*[)\]][ \t]*$")
_STOP_WORD = "Observation"
_LANG_TAG = re.compile(r"[\w+.#-]{0,24}")
_LANG_PREFIX = re.compile(r"[ \t]*[A-Za-z][\w+.-]{0,24}[ \t]+(?=[{\[])")


def tool_name(line: str) -> str:
    """The tool named on an ``Action:`` line, without quotes, backticks, brackets or bold."""
    quoted = _BACKTICKED.search(line)
    name = quoted.group(1) if quoted else line
    name = name.strip().strip("*_`'\"").strip().rstrip(".,;:").strip()
    if name.startswith("[") and name.endswith("]") and name.count("[") == 1:
        name = name[1:-1].strip()
    name = MD_ESCAPE.sub(r"\1", name)
    described = _TOOL_WITH_DESCRIPTION.match(name)  # "search: the web search tool"
    return described.group(1) if described else name


def is_code(line: str) -> bool:
    """True when an ``Action:`` line holds a code expression rather than a tool name:
    backticked code (``print(x)``), a dotted call (``os.path.join(a)``) or an assignment
    or comparison outside brackets (``x = search("y")``); ``search(query="y")`` is a call."""
    quoted = _BACKTICKED.search(line)
    if quoted and re.search(r"[()=;]", quoted.group(1)):
        return True
    target = line.strip().strip("*_`'\"").strip()
    if _DOTTED_CALL.match(target):
        return True
    depth = 0
    for ch in target:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth <= 0:
            return True
    return False


def call_form(tool: str) -> tuple[str, str | None]:
    """Split ``search("x")`` or ``Search[x]`` into tool and input; input None when not a call."""
    for opener, closer in (("(", ")"), ("[", "]")):
        i = tool.find(opener)
        if i > 0 and tool.endswith(closer) and re.fullmatch(r"[\w.\- ]{1,80}", tool[:i]):
            return tool[:i].strip(), tool[i + 1 : -1]
    return tool, None


def clean_input(raw: str) -> str:
    """An Action Input without fences, surrounding quotes or text after a JSON value."""
    text = drop_partial_stop(raw.strip())
    text = _TRAILING_NOTE.sub("", text).strip()  # "(waiting for the observation)"
    text = unfence(text) if text.startswith(("```", "~~~")) else drop_dangling_fence(text)
    if text.startswith(("{", "[")):
        try:
            _value, end = _json_repair.parse_prefix(text, 0)
        except (ValueError, RecursionError):
            end = len(text)
        text = text[:end].strip() if text[end:].strip() else text
    quote = text[:1]
    if len(text) >= 2 and quote in "\"'`" and text[-1] == quote and quote not in text[1:-1]:
        return text[1:-1].strip()
    return text


def drop_partial_stop(text: str) -> str:
    """Remove a last line that is the start of ``Observation`` (``Obs``, ``Observ:``): the
    server cut the reply in the middle of the stop word."""
    head, nl, last = text.rpartition("\n")
    word = last.strip().rstrip(":").strip()
    if nl and len(word) >= 2 and _STOP_WORD.startswith(word):
        return head.rstrip()
    return text


def unfence(text: str) -> str:
    """The text inside a leading code fence (all the rest when the fence is never closed)."""
    fence, rest = text[:3], text[3:]
    nl = rest.find("\n")
    head = rest if nl < 0 else rest[:nl]
    if _LANG_TAG.fullmatch(head.strip()):  # ```json on a line of its own
        rest = "" if nl < 0 else rest[nl + 1 :]
    else:  # ```json {"a": 1}``` on one line
        rest = _LANG_PREFIX.sub("", rest, count=1)
    end = rest.find(fence)
    return (rest if end < 0 else rest[:end]).strip()


def drop_dangling_fence(text: str) -> str:
    """Remove a closing fence whose opening fence lies outside the text."""
    for fence in ("```", "~~~"):
        if text.endswith(fence) and text.count(fence) % 2 == 1:
            return text[: -len(fence)].rstrip()
    return text


def blob_input(value: object, structured: bool) -> str | dict[str, Any]:
    """An action input from a JSON blob: text as it is, a dict kept for structured tools."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if structured and isinstance(value, dict):
        return value
    return json.dumps(value, ensure_ascii=False)


def norm_name(name: str) -> str:
    """A name compared loosely: lower case, ``_`` and ``-`` as spaces."""
    return " ".join(name.lower().replace("_", " ").replace("-", " ").split())


def maybe_json(text: str) -> object:
    """Return the JSON object or list that ``text`` holds (repairing it), else ``text`` as is."""
    stripped = text.strip()
    if stripped.startswith(("```", "~~~")):
        stripped = unfence(stripped)
    if stripped.startswith('"'):  # a JSON string that itself holds JSON
        try:
            inner = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(inner, str) and inner.lstrip().startswith(("{", "[", "```")):
            value = maybe_json(inner)
            return value if isinstance(value, (dict, list)) else text
        return text
    if not stripped.startswith(("{", "[")):
        return text
    try:
        value = _json_repair.loads(stripped)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, (dict, list)) else text
