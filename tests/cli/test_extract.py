"""`agent run -x` prints only the first fenced code block of the answer; --extract-last the
last; an answer without one prints whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.cli.extract import extract_block, fenced_blocks

ANSWER = ("Final Answer: Here it is:\n```python\nprint('first')\n\nx = 1\n```\n"
          "Or in shell:\n~~~sh\necho last\n~~~\nDone.")


def run(tmp_path: Path, reply: str, *flags: str) -> Any:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([reply]))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "agentcli", "run", "write code", "-m",
                           f"fake:{script}", "--no-log", *flags], capture_output=True,
                          text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)


def test_extract_prints_the_first_block_only(tmp_path: Path) -> None:
    proc = run(tmp_path, ANSWER, "-x")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "print('first')\n\nx = 1\n"


def test_extract_last_prints_the_last_block(tmp_path: Path) -> None:
    proc = run(tmp_path, ANSWER, "--extract-last")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "echo last\n"


def test_bare_prompt_takes_extract(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([ANSWER]))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "agentcli", "write code", "-x", "-m",
                           f"fake:{script}", "--no-log"], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "print('first')\n\nx = 1\n"


def test_an_answer_without_a_block_prints_whole(tmp_path: Path) -> None:
    proc = run(tmp_path, "Final Answer: no code here", "-x")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "no code here\n"


def test_json_carries_the_extracted_block(tmp_path: Path) -> None:
    proc = run(tmp_path, ANSWER, "-x", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["extracted"] == "print('first')\n\nx = 1"
    assert "echo last" in data["answer"]


def test_extracted_code_never_carries_raw_controls(tmp_path: Path) -> None:
    proc = run(tmp_path, "Final Answer: ```\nrm \x1b[2J -rf\n```", "-x")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "rm" in proc.stdout


@pytest.mark.parametrize("text,blocks", [
    ("```\na\n```", ["a"]),
    ("````md\n```\ninner\n```\n````", ["```\ninner\n```"]),
    ("```py\nunclosed", ["unclosed"]),
    ("text ``` not a fence", []),
])
def test_fenced_blocks(text: str, blocks: list[str]) -> None:
    assert fenced_blocks(text) == blocks
    assert extract_block(text) == (blocks[0] if blocks else text)
