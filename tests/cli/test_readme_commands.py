"""The README's commands table documents every command and flag: it must equal the table
generated from the Typer app, and that table must agree with the `agent ... --help` trees."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.cli.doc import BEGIN, END, commands_table, main

README = Path(__file__).resolve().parents[2] / "README.md"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def _block() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def _rows() -> list[tuple[list[str], list[str]]]:
    """(command words, flags) of each README row."""
    out = []
    for line in _block().splitlines()[2:]:
        usage, flags, _ = (c.strip() for c in line.strip("|").split(" | ", 2))
        words = [w for w in usage.strip("`").split() if re.fullmatch(r"[a-z][a-z-]*", w)]
        out.append((words[1:], re.findall(r"--?[a-zA-Z][\w-]*", flags)))
    return out


def test_readme_table_is_the_generated_one() -> None:
    assert _block() == commands_table(), (
        "README commands table is stale: run python -m agentcli.cli.doc --write README.md")


def test_write_leaves_an_up_to_date_readme_as_it_is(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text(encoding="utf-8").replace(BEGIN, BEGIN + "\nstale"),
                    encoding="utf-8")
    assert main(["--write", str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == README.read_text(encoding="utf-8")


def test_every_help_tree_command_and_flag_is_in_the_readme() -> None:
    rows = _rows()
    documented = {tuple(words) for words, _ in rows}
    pending: list[tuple[str, ...]] = [()]
    seen = 0
    while pending:  # walk `agent --help`, then each listed command's --help
        path = pending.pop()
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        help_text = result.stdout
        flags = next((f for words, f in rows if tuple(words) == path), None)
        if flags is not None:
            for flag in flags:
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_text), (
                    path, flag)
            seen += 1
        section = help_text.split("Commands:", 1)[1] if "Commands:" in help_text else ""
        for name in re.findall(r"^\s{2}([a-z][a-z-]*)\s", section, flags=re.M):
            child = (*path, name)
            assert child in documented or any(d[: len(child)] == child for d in documented), (
                f"`agent {' '.join(child)}` is in --help but not in the README table")
            pending.append(child)
    assert seen == len(rows)  # every README row was reached from the help tree


def test_doc_module_prints_the_table() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentcli.cli.doc"], capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.strip() == commands_table()
    assert "| `agent logs show [ID]` |" in proc.stdout
