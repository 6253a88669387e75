"""Rich consoles for the CLI: when a stream is not a terminal, text is never hard-wrapped."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that soft-wraps when piped.

    Rich assumes 80 columns when no stream is a terminal and would cut long lines there;
    a pipe or a file wants each line whole.
    """
    from rich.console import Console  # lazily: piped list commands print without Rich

    out = Console(stderr=stderr)
    if not out.is_terminal:
        out.soft_wrap = True
    return out


def report_tool_warnings(out: Console) -> None:
    """Print (once) the warnings tool loading collected: a broken plugin, a server that did
    not start. Loading goes on without them; the user must still hear of it."""
    from rich.text import Text

    from agentcli.textsafe import safe_text
    from agentcli.tools.custom import take_warnings

    for line in take_warnings():
        out.print(Text("warning: " + safe_text(line), style="yellow"), soft_wrap=True)
