"""The database's tables, laid out for the SQLite ecosystem (Datasette, ``sqlite-utils``).

- Timestamps are ISO-8601 UTC text (``2026-11-25T06:19:15.123Z``): readable as they are,
  sortable as text, and what ``llm``'s log and Datasette's date facets expect.
- ``runs_fts`` is an *external-content* FTS5 index of ``runs`` (``content=[runs]``,
  ``content_rowid=[id]``), kept in step by triggers, so ``sqlite-utils search DB runs TERM``
  and Datasette's search box find runs.
- ``run_steps`` holds one row per step of a run (tool, input, observation, status,
  duration); ``runs.steps`` keeps the same steps as one JSON list for ``agent logs show``.

Version 4 introduced this layout; :func:`migrate` converts a file made by an older version
(epoch-float times, a standalone FTS table, no ``run_steps``) in one transaction: every row
is kept, the index is rebuilt from the content and the steps are split out of the JSON.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from agentcli.records import record

SCHEMA_VERSION = 4  # bump when the layout changes: existing files then run migrate() once

ISO_SQL = "strftime('%Y-%m-%dT%H:%M:%fZ', {}, 'unixepoch')"  # epoch seconds -> our ISO text

_TABLES = {
    "sessions": """CREATE TABLE {name} (
    name TEXT PRIMARY KEY, created TEXT NOT NULL, updated TEXT NOT NULL,
    model TEXT, agent TEXT, memory_state TEXT NOT NULL DEFAULT '{{}}',
    memory_version INTEGER NOT NULL DEFAULT 0, tools TEXT
)""",
    "runs": """CREATE TABLE {name} (
    id INTEGER PRIMARY KEY, started TEXT NOT NULL, session TEXT, question TEXT NOT NULL,
    answer TEXT NOT NULL, steps TEXT NOT NULL, model TEXT, agent TEXT, stop_reason TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, elapsed REAL, meta TEXT
)""",
    "turns": """CREATE TABLE {name} (
    id INTEGER PRIMARY KEY, session TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
    run_id INTEGER REFERENCES runs(id), question TEXT NOT NULL, answer TEXT NOT NULL,
    created TEXT NOT NULL
)""",
    "run_steps": """CREATE TABLE {name} (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, tool TEXT NOT NULL, tool_input TEXT, observation TEXT, status TEXT,
    duration REAL, UNIQUE (run_id, idx)
)""",
}
_TIME_COLUMNS = {"sessions": ("created", "updated"), "runs": ("started",),
                 "turns": ("created",), "run_steps": ()}
# Run one by one inside the migration's transaction (executescript would commit it).
_INDEX = (
    "CREATE INDEX IF NOT EXISTS turns_session ON turns(session, id)",
    "CREATE INDEX IF NOT EXISTS run_steps_tool ON run_steps(tool)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS runs_fts USING fts5(
    question, answer, steps, content=[runs], content_rowid=[id])""",
    """CREATE TRIGGER IF NOT EXISTS runs_ai AFTER INSERT ON runs BEGIN
    INSERT INTO runs_fts (rowid, question, answer, steps)
    VALUES (new.id, new.question, new.answer, new.steps);
END""",
    """CREATE TRIGGER IF NOT EXISTS runs_ad AFTER DELETE ON runs BEGIN
    INSERT INTO runs_fts (runs_fts, rowid, question, answer, steps)
    VALUES ('delete', old.id, old.question, old.answer, old.steps);
END""",
    """CREATE TRIGGER IF NOT EXISTS runs_au AFTER UPDATE ON runs BEGIN
    INSERT INTO runs_fts (runs_fts, rowid, question, answer, steps)
    VALUES ('delete', old.id, old.question, old.answer, old.steps);
    INSERT INTO runs_fts (rowid, question, answer, steps)
    VALUES (new.id, new.question, new.answer, new.steps);
END""",
)
# Columns an old file may lack (added by versions 2 and 3), with how to add them.
_LATE_COLUMNS = {"runs": {"meta": "TEXT"},
                 "sessions": {"memory_version": "INTEGER NOT NULL DEFAULT 0", "tools": "TEXT"}}


@record
class RunRecord:
    """One finished run as the log keeps it: every column of ``runs``, prepared by the caller
    (:func:`agentcli.outcome.run_record`) and not yet redacted (the store scrubs on write)."""

    question: str
    answer: str  # the answer, or a note saying why there is none (outcome.recorded_answer)
    steps: list[dict[str, Any]]
    stop_reason: str
    prompt_tokens: int
    completion_tokens: int
    elapsed: float
    model: str | None = None
    agent: str | None = None
    session: str | None = None
    meta: dict[str, Any] | None = None  # options, cost, timings, the final state


def iso(epoch: float | None = None) -> str:
    """A time (now by default) as the stored ISO-8601 UTC text."""
    when = datetime.now(UTC) if epoch is None else datetime.fromtimestamp(epoch, UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch(text: str | float | None) -> float:
    """Stored ISO text (or an old epoch float) as seconds since the epoch."""
    if text is None:
        return 0.0
    if isinstance(text, int | float):
        return float(text)
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def migrate(db: sqlite3.Connection) -> None:
    """Create the tables, or bring an older file to this layout; one transaction."""
    db.execute("PRAGMA journal_mode=WAL")  # stored in the file: set once
    db.execute("PRAGMA foreign_keys=OFF")  # tables are rebuilt below (a no-op in a transaction)
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            _migrate(db)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.execute("PRAGMA foreign_keys=ON")


def _columns(db: sqlite3.Connection, table: str) -> dict[str, str]:
    return {r[1]: str(r[2]).upper() for r in db.execute(f"PRAGMA table_info({table})")}


def _migrate(db: sqlite3.Connection) -> None:
    old_fts = db.execute("SELECT sql FROM sqlite_master WHERE name = 'runs_fts'").fetchone()
    if old_fts is not None and "content=" not in str(old_fts[0]):
        db.execute("DROP TABLE runs_fts")  # a standalone copy of the text: rebuilt below
    for table, create in _TABLES.items():
        columns = _columns(db, table)
        if not columns:
            db.execute(create.format(name=table))
            continue
        for column, kind in _LATE_COLUMNS.get(table, {}).items():
            if column not in columns:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        if any(columns.get(c) != "TEXT" for c in _TIME_COLUMNS[table]):
            _rebuild(db, table, create)
    for statement in _INDEX:
        db.execute(statement)
    db.execute("INSERT INTO runs_fts (runs_fts) VALUES ('rebuild')")
    _split_steps(db)


def _rebuild(db: sqlite3.Connection, table: str, create: str) -> None:
    """Copy ``table`` into the new layout, epoch times turned into ISO text."""
    names = list(_columns(db, table))
    chosen = [ISO_SQL.format(n) if n in _TIME_COLUMNS[table] else n for n in names]
    db.execute(create.format(name=f"{table}_v4"))
    db.execute(f"INSERT INTO {table}_v4 ({', '.join(names)}) "
               f"SELECT {', '.join(chosen)} FROM {table}")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"ALTER TABLE {table}_v4 RENAME TO {table}")


def _split_steps(db: sqlite3.Connection) -> None:
    """One ``run_steps`` row per step of every run that has none yet (from ``runs.steps``)."""
    rows = db.execute("SELECT id, steps, meta FROM runs WHERE id NOT IN "
                      "(SELECT run_id FROM run_steps)").fetchall()
    for run_id, steps, meta in rows:
        try:
            parsed, timings = json.loads(steps or "[]"), json.loads(meta or "{}")
        except ValueError:  # unreadable JSON: the run keeps its text, it gets no step rows
            continue
        if isinstance(parsed, list) and isinstance(timings, dict):
            insert_steps(db, run_id, [s for s in parsed if isinstance(s, dict)], timings)


def insert_steps(db: sqlite3.Connection, run_id: int, steps: Sequence[Mapping[str, object]],
                 meta: Mapping[str, Any] | None) -> None:
    """Write a run's ``run_steps`` rows (inside the caller's transaction); status and duration
    come from the run's timings (``meta["timings"]["steps"]``) when it was timed."""
    timed = list(((meta or {}).get("timings") or {}).get("steps") or [])
    rows = []
    for index, step in enumerate(steps):
        tool = str(step.get("tool", ""))
        found = next((i for i, t in enumerate(timed) if t.get("tool") == tool), None)
        info = {} if found is None else timed[found]
        del timed[:0 if found is None else found + 1]
        status = info.get("status") or ("parse_error" if tool == "_Exception" else None)
        tool_input = step.get("tool_input")
        shown = tool_input if isinstance(tool_input, str) else json.dumps(
            tool_input, ensure_ascii=False)
        rows.append((run_id, index, tool, shown, str(step.get("observation", "")), status,
                     info.get("seconds")))
    db.executemany("INSERT INTO run_steps (run_id, idx, tool, tool_input, observation, status, "
                   "duration) VALUES (?,?,?,?,?,?,?)", rows)
