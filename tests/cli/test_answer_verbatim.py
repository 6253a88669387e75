"""Answers are shown as written: Markdown only for block structure, on a real pty too."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from pty_session import PtySession
from rich.console import Console

from agentcli.cli.answer_markdown import has_markdown_blocks, protect_inline
from agentcli.cli.render import print_answer

VERBATIM = "2*3*4 = 24, and <the answer for the user>"


def terminal() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, color_system=None, width=120), buf


@pytest.mark.parametrize("text", [
    "```python\nprint(1)\n```", "# Title\ntext", "- one\n- two", "1. a\n2. b",
    "| a | b |\n|---|---|\n| 1 | 2 |",
])
def test_block_structure_is_markdown(text: str) -> None:
    assert has_markdown_blocks(text)


@pytest.mark.parametrize("text", [
    VERBATIM, "**75**", "The answer is 6.", "- just one item", "2024. A year.", "a | b",
])
def test_inline_text_is_not_markdown(text: str) -> None:
    assert not has_markdown_blocks(text)


def test_plain_answer_in_a_terminal_is_verbatim() -> None:
    con, buf = terminal()
    print_answer(con, VERBATIM)
    assert VERBATIM in buf.getvalue()


def test_markdown_answer_keeps_angle_brackets_and_products() -> None:
    con, buf = terminal()
    print_answer(con, f"# Result\n\n- {VERBATIM}\n- `a*b<c>` stays code\n")
    out = buf.getvalue()
    assert VERBATIM in out and "a*b<c>" in out and "# Result" not in out


def test_protect_leaves_code_alone() -> None:
    text = "x <y> 2*3\n```\n<raw> 2*3\n```\n`<z>`"
    assert protect_inline(text) == "x \\<y> 2\\*3\n```\n<raw> 2*3\n```\n`<z>`"


def test_flags_override_the_content_check() -> None:
    con, buf = terminal()
    print_answer(con, "- a\n- b", markdown=False)
    assert buf.getvalue() == "- a\n- b\n"
    con, buf = terminal()
    print_answer(con, "**bold** text", markdown=True)
    assert "**" not in buf.getvalue() and "bold text" in buf.getvalue()


def _run_on_pty(tmp_path: Path, answer: str, *flags: str) -> str:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([f"Thought: done\nFinal Answer: {answer}"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(TERM="xterm-256color", AGENT_DB=str(tmp_path / "a.db"))
    env.pop("COLUMNS", None)
    session = PtySession([sys.executable, "-m", "agentcli", "run", "-m", f"fake:{script}",
                          *flags, "What is 2*3*4?"], env=env, cwd=str(tmp_path))
    try:
        session.finish()
        return session.text
    finally:
        session.close()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_answer_is_verbatim_on_a_real_terminal(tmp_path: Path) -> None:
    out = _run_on_pty(tmp_path, VERBATIM)
    assert VERBATIM in out, out
    listed = _run_on_pty(tmp_path, "- one\n- two")
    assert "• one" in listed and "- one" not in listed  # a real list is still rendered
    raw = _run_on_pty(tmp_path, "- one\n- two", "--no-markdown")
    assert "- one\n- two" in raw
