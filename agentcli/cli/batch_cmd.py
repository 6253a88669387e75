"""``agent batch``: run a JSONL file of questions concurrently, with progress and a summary."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from agentcli.batch import check_out_path, exit_code_for, outcome_counts, read_items, run_batch
from agentcli.cli.approve import build_approver
from agentcli.cli.consoles import console, report_tool_warnings
from agentcli.cli.observe import Observers, print_metrics
from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.runtime import build_executor, build_model


def run_batch_command(
    settings: Settings,
    env: dict[str, str],
    input_path: Path,
    out: Path,
    *,
    concurrency: int,
    expect: str | None,
    stats: bool,
    trace: Path | None,
    yes: bool,
    retry_errors: bool = True,
    schema: Mapping[str, object] | None = None,
) -> int:
    """Run the batch and print its summary; returns the exit code (non-zero when any item
    in OUT is not answered: 4 provider error, 3 limit, 2 bad input line, 1 other)."""
    from agentcli.otel_export import otel_wanted

    if not settings.model:
        raise ConfigError("agent batch needs a model: pass --model provider/model or set it "
                          "in the config")
    if concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    check_out_path(out)
    items = read_items(input_path, expect=expect)
    err = console(stderr=True)
    llm = build_model(settings, env)
    observers = Observers(stats=stats, trace=trace, env=env, prices=settings.prices,
                          otel=otel_wanted(settings.otel, env))
    try:
        warned: list[str] = []
        executor = build_executor(settings, llm, approver=build_approver(settings, yes),
                                  warnings=warned)
        report_tool_warnings(err, warned)
        with Progress(
            TextColumn("[bold]batch"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn(),
            console=err, transient=False, disable=not err.is_terminal,
        ) as progress:
            task = progress.add_task("batch", total=len(items), errors=0)
            errors = 0

            def advance(line: Mapping[str, object]) -> None:
                nonlocal errors
                errors += "error" in line
                progress.update(task, advance=1, errors=errors)

            progress.update(task, completed=0)
            summary = asyncio.run(run_batch(
                executor, items, out, concurrency=concurrency, callbacks=observers.handlers,
                on_line=advance, retry_errors=retry_errors, response_format=schema,
            ))
            progress.update(task, completed=len(items))
    finally:
        llm.close()
        observers.close(err)
    print_summary(Console(), summary.to_dict(), out)
    counts = outcome_counts(out, dict.fromkeys(i.id for i in items))
    code = exit_code_for(counts)
    err.print(Text(counts_line(counts, code), style="green" if code == 0 else "yellow"),
              soft_wrap=True)
    return code


_LABELS = {"answered": "answered", "limit": "stopped by a limit", "provider": "provider error",
           "input": "bad input line", "config": "config error", "internal": "internal error",
           "missing": "not run"}


def counts_line(counts: Counter[str], code: int) -> str:
    """One line of how every item in OUT stands, and the exit code it gives."""
    parts = [f"{n} {_LABELS.get(kind, kind)}" for kind, n in sorted(
        counts.items(), key=lambda kv: list(_LABELS).index(kv[0]) if kv[0] in _LABELS else 99)]
    return f"batch: {', '.join(parts) or 'no items'} (exit {code})"


def print_summary(console: Console, s: dict[str, Any], out: Path) -> None:
    """The batch summary (and eval numbers when answers were graded)."""

    def secs(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f} s"

    rows = [
        ("items", str(s["total"])),
        ("skipped (already in OUT)", str(s["skipped"])),
        ("results", str(s["results"])),
        ("errors", str(s["errors"]) + (
            f" ({', '.join(f'{k} {v}' for k, v in sorted(s['error_types'].items()))})"
            if s["error_types"] else "")),
    ]
    if s["accuracy"] is not None:
        rows.append(("accuracy", f"{s['accuracy']:.1%} ({s['correct']}/{s['graded']})"))
    rows += [
        ("mean steps", "-" if s["mean_steps"] is None else f"{s['mean_steps']:.2f}"),
        ("tokens in / out", f"{s['prompt_tokens']:,} / {s['completion_tokens']:,}"),
        ("latency p50 / p95", f"{secs(s['latency_p50'])} / {secs(s['latency_p95'])}"),
        ("stop reasons", ", ".join(f"{k} {v}" for k, v in sorted(s["stop_reasons"].items()))
         or "-"),
        ("wall time", secs(s["wall_seconds"])),
        ("throughput", "-" if not s["items_per_second"] else
         f"{s['items_per_second']:.1f} items/s"),
    ]
    print_metrics(console, f"Batch -> {out}", rows)
