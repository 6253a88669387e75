"""Rich consoles for the CLI: when a stream is not a terminal, text is never hard-wrapped."""

from __future__ import annotations

import builtins
import os
import re
import sys
import weakref
from typing import IO, TYPE_CHECKING, Any, cast

from agentcli.textsafe import safe_text

if TYPE_CHECKING:
    from rich.console import Console


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that soft-wraps when piped.

    Rich assumes 80 columns when no stream is a terminal and would cut long lines there;
    a pipe or a file wants each line whole. On a pipe Rich itself loads only when something
    needs it (:class:`_PipedConsole`).
    """
    if _plain_stream(sys.stderr if stderr else sys.stdout):
        return cast("Console", _PipedConsole(stderr))
    return _rich_console(stderr)


def _rich_console(stderr: bool) -> Console:
    from rich.console import Console  # lazily: piped commands print without Rich

    out = Console(stderr=stderr)
    if not out.is_terminal:
        out.soft_wrap = True
    return out


# Rich calls a stream a terminal when these say so whatever the stream is, and paints for
# Jupyter; with none of them a stream is a terminal when it is a tty.
_RICH_FORCES = ("FORCE_COLOR", "TTY_COMPATIBLE")


def _plain_stream(stream: IO[str]) -> bool:
    """Whether Rich would find ``stream`` no terminal, so without colour (sure cases only)."""
    if any(name in os.environ for name in _RICH_FORCES) or hasattr(builtins, "get_ipython"):
        return False
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):  # Rich: no isatty, or a closed stream
        return True


# What a piped Rich console answers, before anything made it otherwise.
_PLAIN: dict[str, object] = {"is_terminal": False, "color_system": None, "record": False,
                          "quiet": False, "_buffer_index": 0, "soft_wrap": True}


class _PipedConsole:
    """A console on a pipe (~12 ms of Rich's import saved when nothing needs it).

    It answers what :func:`print_plain` asks (no terminal, no colour, soft wrap, its
    stream); anything else, such as printing a Rich object, goes to the Rich console that
    :func:`console` would have made, made on first use.
    """

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._rich: Console | None = None
        # The stream last asked about, and whether it is plain.
        self._plain: tuple[IO[str] | None, bool] = (None, False)

    @property
    def file(self) -> IO[str]:
        """The stream, looked up at each use as Rich does."""
        if self._rich is not None:
            return self._rich.file
        return sys.stderr if self._stderr else sys.stdout

    def __getattr__(self, name: str) -> Any:
        if name in ("_rich", "_stderr", "_plain"):  # not set yet (a copy): no recursion
            raise AttributeError(name)
        if name in _PLAIN and self._rich is None and self._is_plain():
            return _PLAIN[name]
        if self._rich is None:
            self._rich = _rich_console(self._stderr)
        return getattr(self._rich, name)

    def _is_plain(self) -> bool:
        """:func:`_plain_stream` of the current stream, asked once per stream (a piped
        answer reads several of these attributes: an ``isatty`` call each was ~4x the
        cost of printing it)."""
        stream = self.file
        known, plain = self._plain
        if known is not stream:
            plain = _plain_stream(stream)
            self._plain = (stream, plain)
        return plain


# Characters Rich would change in text it prints: tabs (expanded), carriage returns and other
# control characters (stripped or passed on), ':' (an emoji code such as :smile:, in plain
# strings only).
_RICH_CHANGES = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def print_plain(out: Console, text: str, *, emoji_codes: bool = True,
                soft_wrap: bool | None = None) -> bool:
    """Print ``text`` and a newline the way ``out.print(text, markup=False, highlight=False,
    soft_wrap=soft_wrap)`` would, straight to the file when ``out`` is a piped console
    without colour (a chat turn prints three lines; through Rich they cost ~0.2 ms). Returns
    False, printing nothing, when Rich is needed: a terminal, colour, recording or capturing,
    or text Rich would change (or wrap). ``emoji_codes=False`` for a ``Text`` (no emoji
    replacement)."""
    file = plain_file(out)
    if file is None or not unchanged_by_rich(out, text, emoji_codes=emoji_codes,
                                             soft_wrap=soft_wrap):
        return False
    file.write(text + "\n")
    file.flush()
    return True


def print_line(out: Console, *parts: tuple[str, str], soft_wrap: bool | None = None) -> None:
    """One line of styled ``(text, style)`` parts, as ``out.print(Text(...))`` draws it:
    written by :func:`print_plain` when Rich would print it unchanged (a pipe without colour:
    Rich is not even imported), else drawn by Rich."""
    if print_plain(out, "".join(text for text, _ in parts), emoji_codes=False,
                   soft_wrap=soft_wrap):
        return
    from rich.text import Text

    line = Text()
    for text, style in parts:
        line.append(text, style=style)
    out.print(line, soft_wrap=soft_wrap)


def unchanged_by_rich(out: Console, text: str, *, emoji_codes: bool = True,
                      soft_wrap: bool | None = None) -> bool:
    """Whether a plain console (:func:`plain_file`) would print ``text`` as it is."""
    if _RICH_CHANGES.search(text) or (emoji_codes and ":" in text):
        return False
    wrapped = out.soft_wrap if soft_wrap is None else soft_wrap
    # Unwrapped, Rich fits text to the width: only a short plain line is left as it is.
    return wrapped or (text.isascii() and len(text) < out.width and "\n" not in text
                       and text == text.strip())


# Per console: the file it wrote to when last asked, whether that file is a terminal, and
# whether it is a plain one (not a terminal, no colour). Asking Rich (``is_terminal``:
# environment lookups and an ``isatty`` call) at each line costs more than the line; a
# console given another file, or following a replaced ``sys.stdout``, is asked again.
_FACTS: weakref.WeakKeyDictionary[Console, tuple[IO[str], bool, bool]] = (
    weakref.WeakKeyDictionary())


def _facts(out: Console) -> tuple[IO[str], bool, bool]:
    file = out.file
    known = _FACTS.get(out)
    if known is None or known[0] is not file:
        terminal = out.is_terminal
        known = _FACTS[out] = (file, terminal, not terminal and out.color_system is None)
    return known


def is_terminal(out: Console) -> bool:
    """``out.is_terminal``, asked once per file the console writes to."""
    return _facts(out)[1]


def plain_file(out: Console) -> IO[str] | None:
    """The file ``out`` prints to when text goes there unchanged by Rich: a piped console
    without colour that is not recording, quiet or capturing; None when Rich is needed."""
    # ``_buffer_index`` is Rich's only sign of a capture (``console.capture()``, ``with
    # console:``); Rich has no public one. This one private read, here only, keeps the plain
    # path (the piped answer and chat-turn rows of bench/README.md) off captured output.
    if out.record or out.quiet or out._buffer_index:
        return None
    file, _, plain = _facts(out)
    return file if plain else None


def report_tool_warnings(out: Console, lines: list[str]) -> None:
    """Print the warnings tool loading collected (a broken plugin, a server that did not
    start), each once: loading goes on without them; the user must still hear of it."""
    for line in lines:
        print_line(out, ("warning: " + safe_text(line), "yellow"), soft_wrap=True)
    lines.clear()
