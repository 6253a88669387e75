"""``agent logs``: list, search and show logged runs; where the log is; turn logging on/off."""

from __future__ import annotations

import json
import re
import time
from contextlib import closing
from datetime import datetime
from pathlib import Path

import typer

from agentcli.cli.environ import environment as _env
from agentcli.cli.model_flags import DB_OPT
from agentcli.errors import ConfigError
from agentcli.textsafe import safe_json, safe_text

logs_app = typer.Typer(help="The log of every run and chat turn (SQLite).",
                       rich_markup_mode=None)
_MAX_COUNT = 2**63 - 1  # SQLite's largest integer
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: float | None = None) -> float:
    """A start time from ``30m`` / ``2h`` / ``7d`` / ``2w`` ago, or an ISO date or date-time."""
    now = time.time() if now is None else now
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if match:  # further back than the epoch (99999999999999999999d): every run
        return max(0.0, now - float(match.group(1)) * _UNITS[match.group(2)])
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"--since {text!r} is not a time; use 30m, 2h, 7d, 2w, "
                          "2026-11-20 or 2026-11-20T09:30") from None
    try:
        return max(0.0, when.timestamp())
    except (OverflowError, OSError, ValueError):  # year 1: before any run
        return 0.0


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


@logs_app.callback(invoke_without_command=True)
@logs_app.command("list")  # `agent logs list` is `agent logs`
def logs(
    ctx: typer.Context,
    n: int = typer.Option(20, "-n", "--count", help="How many runs (newest first)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON array, steps included."),
    jsonl: bool = typer.Option(False, "--jsonl",
                               help="Print one JSON object a line, steps included."),
    query: str | None = typer.Option(None, "-q", "--query", help="Full-text search."),
    model: str | None = typer.Option(None, "-m", "--model", help="Only runs of this model."),
    since: str | None = typer.Option(None, "--since",
                                     help="Only runs since: 30m, 2h, 7d, 2w or a date."),
    db: Path | None = DB_OPT,
) -> None:
    """List recent runs (every `run` and chat turn), or search them, steps included."""
    if ctx.invoked_subcommand is not None:  # (always None as `agent logs list`)
        return
    from agentcli.cli.consoles import console
    from agentcli.cli.db import read_store
    from agentcli.cli.tables import print_rows, when
    from agentcli.run_logging import logging_enabled

    env = _env()
    start = parse_since(since) if since else None
    if n < 1:
        raise ConfigError(f"-n must be at least 1, got {n}")
    n = min(n, _MAX_COUNT)  # more than SQLite's integers: every run
    with closing(read_store(db, env)) as store:
        runs = store.runs(limit=n, query=query, model=model, since=start)
    if not logging_enabled(env):
        console(stderr=True).print("note: run logging is off (`agent logs on` turns it on)",
                                   style="yellow", markup=False, highlight=False)
    if json_out and jsonl:
        raise ConfigError("--json and --jsonl are two forms of one output: choose one")
    if jsonl:
        for r in runs:
            typer.echo(safe_json(json.dumps(r, ensure_ascii=False)))
        return
    if json_out:
        typer.echo(safe_json(json.dumps(runs, ensure_ascii=False, indent=2)))
        return
    out = console()
    wide = not out.is_terminal  # piped rows keep every character
    rows = [(r["id"], when(r["started"]), r["model"], r["session"],
             r["question"] if wide else _short(r["question"]),
             r["answer"] if wide else _short(r["answer"]),
             "unreadable" if "steps" in r.get("unreadable", ()) else len(r["steps"]),
             (r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0),
             f"{r['elapsed'] or 0:.2f}") for r in runs]
    print_rows(out, "Runs" + (f" matching {query!r}" if query else ""),
               ("id", "when", "model", "session", "question", "answer", "steps", "tokens",
                "secs"), rows, wrap=("question", "answer"))


@logs_app.command("show")
def logs_show(
    run_id: int | None = typer.Argument(None, metavar="[ID]", help="Run id (default: the last)."),
    json_out: bool = typer.Option(False, "--json", help="Print the run as JSON."),
    db: Path | None = DB_OPT,
) -> None:
    """One run: question, every step, answer, model, options, tokens, cost and timings."""
    from agentcli.cli.consoles import console
    from agentcli.cli.db import read_store
    from agentcli.cli.run_report import run_markdown

    with closing(read_store(db, _env())) as store:
        row = store.run(run_id)
    if row is None:
        raise ConfigError(f"no run with id {run_id}; see `agent logs`" if run_id is not None
                          else "no runs logged yet")
    if json_out:
        typer.echo(safe_json(json.dumps(row, ensure_ascii=False, indent=2)))
        return
    out = console()
    text = safe_text(run_markdown(row))
    if out.is_terminal:
        from rich.markdown import Markdown

        out.print(Markdown(text))
    else:
        typer.echo(text)


@logs_app.command("path")
def logs_path(db: Path | None = DB_OPT) -> None:
    """Print the path of the SQLite file that holds the log."""
    from agentcli.cli.db import db_path

    typer.echo(str(db_path(db, _env())))


def _switch(on: bool) -> None:
    from agentcli.run_logging import set_logging

    set_logging(on, _env())
    typer.echo("run logging is on" if on else
               "run logging is off: `agent run` is not logged (chat sessions and --thread "
               "conversations are still saved; `agent run --log` logs one run)")


@logs_app.command("on")
def logs_on() -> None:
    """Log every `agent run` (the default)."""
    _switch(True)


@logs_app.command("off")
def logs_off() -> None:
    """Stop logging `agent run` (persisted; `agent logs on` undoes it)."""
    _switch(False)


@logs_app.command("status")
def logs_status() -> None:
    """Say whether runs are logged, and where."""
    from agentcli.cli.db import db_path
    from agentcli.run_logging import logging_enabled

    env = _env()
    state = "on" if logging_enabled(env) else "off"
    typer.echo(f"run logging is {state}; database: {db_path(None, env)}")
