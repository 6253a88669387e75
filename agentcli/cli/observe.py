"""``--stats``, ``--trace``, ``--otel``: build the observing handlers; print the stats table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.metrics import MetricsHandler
from agentcli.errors import ConfigError
from agentcli.pricing import load_prices

if TYPE_CHECKING:
    from rich.console import Console

    from agentcli.callbacks.trace import TraceHandler
    from agentcli.otel_export import OtelExport


class Observers:
    """The handlers behind ``--stats`` / ``--trace`` / ``--otel``; ``close()`` flushes and
    prints."""

    def __init__(self, *, stats: bool, trace: Path | None, env: Mapping[str, str],
                 prices: str | None = None, otel: bool = False) -> None:
        self.metrics = MetricsHandler(load_prices(prices)) if stats else None
        self.otel: OtelExport | None = None
        if otel:  # opentelemetry is imported only here
            from agentcli.otel_export import OtelExport

            self.otel = OtelExport(env)
        self.trace: TraceHandler | None = None
        if trace is not None:
            from agentcli.callbacks.trace import TraceHandler

            try:
                self.trace = TraceHandler(trace, env=env)
            except OSError as err:
                raise ConfigError(f"cannot open trace file {trace}: {err.strerror}") from None

    @property
    def handlers(self) -> list[BaseCallbackHandler]:
        """The handlers to pass to the executor."""
        otel = self.otel.handler if self.otel is not None else None
        return [h for h in (self.metrics, self.trace, otel) if h is not None]

    def setting_up(self) -> AbstractContextManager[None]:
        """Around building the agent: what it starts (MCP servers) joins the run's trace."""
        return self.otel.handler.setting_up() if self.otel is not None else nullcontext()

    def close(self, console: Console) -> None:
        """Close the trace and print the stats table (to stderr)."""
        if self.trace is not None:
            self.trace.close()
        if self.otel is not None:
            warning = self.otel.close()
            if warning:
                console.print(warning, markup=False, highlight=False)
        if self.metrics is not None:
            print_metrics(console, "Run stats", self.metrics.rows())


def print_metrics(console: Console, title: str, rows: Iterable[tuple[str, str]]) -> None:
    """Metrics as a titled two-column table (``--stats``, the batch summary)."""
    from rich.table import Table  # only runs with --stats (or a batch) pay for it

    table = Table(title=title, show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    for label, value in rows:
        table.add_row(label, value)
    console.print(table)
