"""A console on a pipe answers like Rich's without loading Rich, and hands Rich the rest."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from agentcli.cli import consoles


def test_a_piped_console_answers_what_rich_would(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in consoles._RICH_FORCES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    piped = consoles.console()
    assert isinstance(piped, consoles._PipedConsole)
    rich = consoles._rich_console(False)  # what console() made before
    for name in consoles._PLAIN:
        assert getattr(piped, name) == getattr(rich, name), name
    assert piped.file is sys.stdout is rich.file
    assert piped.width == rich.width  # not answered here: Rich's own


def test_rich_objects_go_to_rich_and_print_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.text import Text

    for name in consoles._RICH_FORCES:
        monkeypatch.delenv(name, raising=False)
    printed = []
    for make in (consoles.console, lambda: consoles._rich_console(False)):
        monkeypatch.setattr(sys, "stdout", io.StringIO())
        out = make()
        out.print(Text("warning: " + "x" * 150, style="yellow"))
        assert consoles.print_plain(out, "a plain line")
        out.print("[bold]markup[/bold] :smile:", highlight=False)
        printed.append(sys.stdout.getvalue())
    assert printed[0] == printed[1]
    assert "x" * 150 in printed[0] and "markup 😄" in printed[0]


@pytest.mark.parametrize("name", consoles._RICH_FORCES)
def test_a_forced_terminal_gets_rich_at_once(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setenv(name, "1")
    from rich.console import Console

    assert isinstance(consoles.console(), Console)


def test_a_piped_error_line_still_prints_through_rich() -> None:
    # The error line is a styled Text: the piped console hands it to Rich, through the front door.
    proc = subprocess.run([sys.executable, "-m", "agentcli", "run", "What is 2+2?", "-t",
                           "no-such-tool"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown tool 'no-such-tool'"), proc.stderr
