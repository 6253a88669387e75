"""``agent sessions list|show|rm|export``: read the SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from agentcli.cli.environ import environment
from agentcli.cli.model_flags import DB_OPT
from agentcli.errors import ConfigError
from agentcli.textsafe import safe_json, safe_line, safe_text

if TYPE_CHECKING:
    from agentcli.store import Store

sessions_app = typer.Typer(help="Saved chat sessions (SQLite).", no_args_is_help=True)


def _store(db: Path | None) -> Store:
    from agentcli.cli.db import read_store

    return read_store(db, environment())


def _missing(name: str) -> NoReturn:
    raise ConfigError(f"no session named {name!r}; see `agent sessions list`")


@sessions_app.command("list")
def sessions_list(
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    db: Path | None = DB_OPT,
) -> None:
    """List sessions, most recently used first."""
    from agentcli.cli.consoles import console
    from agentcli.cli.tables import print_rows, when

    rows = [{"name": s.name, "turns": s.turns, "updated": when(s.updated),
             "model": s.model, "agent": s.agent} for s in _store(db).sessions()]
    if json_out:
        typer.echo(json.dumps(rows))
        return

    print_rows(console(), "Sessions", ("name", "turns", "updated", "model", "agent"),
               [(r["name"], r["turns"], r["updated"], r["model"], r["agent"]) for r in rows])


@sessions_app.command("show")
def sessions_show(
    name: str = typer.Argument(..., help="Session name."),
    db: Path | None = DB_OPT,
) -> None:
    """Print a session's transcript (questions, tool steps, answers)."""
    sessions_export(name, output=None, json_out=False, db=db)  # Markdown on stdout


@sessions_app.command("export")
def sessions_export(
    name: str = typer.Argument(..., help="Session name."),
    output: Path | None = typer.Option(None, "--output", "-o", help="File (default stdout)."),
    json_out: bool = typer.Option(False, "--json", help="JSON instead of Markdown."),
    db: Path | None = DB_OPT,
) -> None:
    """Export a session as Markdown (or JSON with --json)."""
    from agentcli.store import session_markdown

    store = _store(db)
    info = store.session(name)
    if info is None:
        _missing(name)
    turns = store.turns(name)
    text = (safe_json(json.dumps({"name": name, "memory": info.memory_state, "turns": turns},
                                 ensure_ascii=False, indent=2))
            if json_out else session_markdown(name, turns))
    if output is None:
        typer.echo(text if json_out else safe_text(text))
    else:
        from agentcli.files import write_atomic

        write_atomic(output, text + "\n")
        typer.echo(f"wrote session {safe_line(name)} ({len(turns)} turns, "
                   f"{'JSON' if json_out else 'Markdown'}) to {safe_line(str(output))}",
                   err=True)


@sessions_app.command("rm")
def sessions_rm(
    name: str = typer.Argument(..., help="Session name."),
    db: Path | None = DB_OPT,
) -> None:
    """Delete a session and its turns (its runs stay in the log)."""
    if not _store(db).delete_session(name):
        _missing(name)
    typer.echo(f"deleted session {name}")
