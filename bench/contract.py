"""Issue 39's contract columns, computed by the bench's own rules from what a run printed and
returned (its exit code, stdout, and its ``--trace`` file) — never by the agent's answer rule,
which is what they check.

- **restatement**: a printed answer whose every token (a word, or a number compared by value;
  case and punctuation aside) occurs in the question (``4 hours`` for "How many minutes are
  in 4 hours?");
- **tool text**: a printed answer (at least 8 characters, with a letter) found word for word,
  case and spacing aside, in one of the run's tool errors (an observation starting ``Error``,
  or a tool error event): a tool's error or help copied as the answer;
- **calculation shown**: a printed answer holding an arithmetic operation on numbers with no
  result sign (``=``, ``≈``) after the last one (``200 - (1/5 * 200) - 40``);
- **right answer refused**: the run printed no answer (not killed at the bench's cap) while
  the model's final answer is right by ``hard_questions.graded``. The final answer is the
  trace's ``agent_finish`` output, or, when the run refused it (that output is then null),
  what the bench reads itself in the run's last model reply (:func:`final_answer`).

No agentcli import: the LangChain side reads this module too (its rows have no trace: their
tool-text and refused cells read ``-``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hard_questions import _BLOB, graded

_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_]+")
_OPERATION = re.compile(r"[\d)]\s*(?:\*\*|[+*/×÷^]|\s-|-\s)\s*\(?\s*\d")
_RESULT = re.compile(r"[=≈]")
_SPACE = re.compile(r"\s+")
KILLED = -9  # the bench's return code for a run killed at its time cap


def tokens(text: str) -> set[str]:
    """Lower-case words and numbers (by value: ``4,500`` and ``4500.0`` are one token)."""
    out = set()
    for raw in _TOKEN.findall((text or "").lower()):
        if raw[0].isdigit():
            raw = repr(float(raw.replace(",", "")))
        out.add(raw)
    return out


def printed(row: dict[str, Any]) -> bool:
    """The run printed an answer and exited 0."""
    return row.get("rc") == 0 and bool(str(row.get("answer", "")).strip())


def restatement(answer: str, question: str) -> bool:
    """Every token of the answer occurs in the question."""
    said = tokens(answer)
    return bool(said) and said <= tokens(question)


def _plain(text: str) -> str:
    return _SPACE.sub(" ", (text or "").lower()).strip().rstrip(".!,;:")


def tool_text(answer: str, errors: list[str]) -> bool:
    """The answer is copied from a tool's error or help text."""
    said = _plain(answer)
    if len(said) < 8 or not re.search(r"[^\W\d_]", said):
        return False
    return any(said in _plain(error) for error in errors)


def calculation_shown(answer: str) -> bool:
    """The answer holds an arithmetic operation with no result after it."""
    found = list(_OPERATION.finditer(answer or ""))
    return bool(found) and not _RESULT.search(answer[found[-1].end():])


_FINAL_LINE = re.compile(r"final answer\s*:\s*(.*)", re.IGNORECASE | re.DOTALL)
_FINAL_BLOB = re.compile(r'"action"\s*:\s*"final answer"\s*,\s*"action_input"\s*:\s*'
                         r'"((?:[^"\\]|\\.)*)"', re.IGNORECASE)


def final_answer(reply: dict[str, Any] | None) -> str | None:
    """The answer a model reply gives, read by the bench: a ``"Final Answer"`` blob's input,
    the text after the last ``Final Answer:``, or a plain reply that calls no tool (None for
    a tool call or no reply)."""
    if not reply or reply.get("tool_calls"):
        return None
    text = str(reply.get("text") or "")
    blob = _FINAL_BLOB.findall(text)
    if blob:
        try:
            return str(json.loads(f'"{blob[-1]}"', strict=False))  # raw newlines too
        except ValueError:  # a broken escape: the text as written
            return str(blob[-1])
    if _BLOB.search(text):
        return None
    line = _FINAL_LINE.findall(text)
    return (line[-1] if line else text).strip()


def read_trace(path: Path) -> dict[str, Any]:
    """What the contract needs from a run's ``--trace`` JSONL: the model's last final answer
    (``agent_finish``), its last reply to the run (not a tool's own model call), and the
    run's tool error texts."""
    finish: str | None = None
    reply: dict[str, Any] | None = None
    errors: list[str] = []
    if not path.is_file():
        return {"trace": False}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:  # a line cut when the run was killed
            continue
        kind = event.get("event")
        if kind == "llm_end" and event.get("call_parent_run_id") == event.get("run_id"):
            result = event.get("result") or {}
            reply = {"text": str(result.get("text") or ""),
                     "tool_calls": len(result.get("tool_calls") or [])}
        elif kind == "agent_finish":
            output = ((event.get("finish") or {}).get("return_values") or {}).get("output")
            finish = output if isinstance(output, str) else finish
        elif kind == "tool_end" and str(event.get("observation", "")).startswith("Error"):
            errors.append(str(event["observation"]))
        elif kind == "tool_error":
            errors.append(str((event.get("error") or {}).get("message", "")))
    return {"trace": True, "finish_output": finish, "last_reply": reply,
            "tool_errors": errors}


def flag(row: dict[str, Any]) -> None:
    """Add the four contract facts to a run's row (None where the row cannot tell)."""
    answer, shown = str(row.get("answer", "")), printed(row)
    row["restated"] = shown and restatement(answer, str(row.get("question", "")))
    row["calc_shown"] = shown and calculation_shown(answer)
    if not row.get("trace"):
        row["tool_text"] = row["refused_right"] = None
        return
    row["tool_text"] = shown and tool_text(answer, row.get("tool_errors") or [])
    final = row.get("finish_output")
    if not isinstance(final, str):
        final = final_answer(row.get("last_reply"))
    row["refused_right"] = (not shown and row.get("rc") != KILLED and isinstance(final, str)
                            and not _BLOB.search(final) and graded(final, row["expected"]))


def count(rows: list[dict[str, Any]], key: str) -> str:
    """A column cell: how many rows have the fact, ``-`` when none of them can tell."""
    known = [r[key] for r in rows if r.get(key) is not None]
    return str(sum(bool(v) for v in known)) if known else "-"
