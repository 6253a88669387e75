"""The Rich consoles of the CLI: wrapped to a terminal's width, never hard-wrapped when piped."""

from __future__ import annotations

from rich.console import Console


def err_console() -> Console:
    """stderr for notices, warnings, the trace and error lines.

    Piped, Rich would break lines at 80 columns and split one message over several lines;
    soft wrap keeps each message on one line for logs and ``grep``.
    """
    console = Console(stderr=True)
    console.soft_wrap = not console.is_terminal
    return console
