"""List output shared by every list command: a Rich table in a terminal, tab-separated rows
when piped (one line a row, nothing wrapped, control characters neutralized)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentcli.textsafe import safe_text

if TYPE_CHECKING:
    from rich.console import Console


def cell(value: object) -> str:
    """One TSV cell: tabs and line breaks become visible escapes so a row stays one line."""
    text = "" if value is None else str(value)
    return safe_text(text.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r")
                   .replace("\n", "\\n"))


def when(started: str | float) -> str:
    """A start time (epoch seconds, or as the log stores it) as local ``YYYY-MM-DD HH:MM``."""
    import time

    from agentcli.log_schema import epoch

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch(started)))


def tsv_lines(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """The header and the rows as tab-separated lines."""
    return ["\t".join(cell(c) for c in row) for row in [columns, *rows]]


def print_rows(
    console: Console, title: str, columns: Sequence[str], rows: Sequence[Sequence[object]],
    *, wrap: Sequence[str] = (),
) -> None:
    """A titled table in a terminal; a header line and tab-separated rows otherwise.

    In a terminal the ``wrap`` columns (long free text) fold to make room; the others keep
    their values on one line.
    """
    if not console.is_terminal:
        for line in tsv_lines(columns, rows):
            console.file.write(line + "\n")
        console.file.flush()
        return
    cells = [[safe_text("" if v is None else str(v)) for v in row] for row in rows]
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    for col in columns:
        if col in wrap:
            table.add_column(col, overflow="fold", ratio=1)
        else:
            table.add_column(col, overflow="fold", no_wrap=bool(wrap))
    for row_cells in cells:
        table.add_row(*(Text(c) for c in row_cells))
    console.print(table)
