"""SQLite persistence: chat sessions, their turns, and the log of every run (with full-text search).

One file (WAL mode) under the user's data directory, overridable with ``db_path`` /
``$AGENT_DB``; its tables (ISO-8601 times, ``run_steps``, the external-content FTS index that
Datasette and ``sqlite-utils search`` read) are laid out in :mod:`agentcli.log_schema`.
Every write is one transaction, committed before the call returns, so a process killed
right after a turn loses nothing that completed.

Opening is cheap on purpose (a run is logged in well under 2 ms): the schema runs only when
the file is new or ``PRAGMA user_version`` is below :data:`SCHEMA_VERSION`, and closing does not
checkpoint the WAL (SQLite's auto-checkpoint does, every ~1,000 pages), because a checkpoint
costs two fsyncs, ~10 ms each run.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError, SessionConflictError
from agentcli.log_schema import SCHEMA_VERSION, RunRecord, epoch, insert_steps, iso, migrate
from agentcli.paths import data_dir
from agentcli.records import record
from agentcli.redact import Scrubber
from agentcli.sqlite_wal import create_private, keep_wal_on_close


def default_db_path(env: Mapping[str, str] | None = None) -> Path:
    """``$AGENT_DB``, else ``$XDG_DATA_HOME/agentcli/agent.db`` (``~/.local/share`` by default)."""
    env = os.environ if env is None else env
    if env.get("AGENT_DB"):
        return Path(env["AGENT_DB"]).expanduser()

    return data_dir(env) / "agent.db"


@record
class SessionInfo:
    """One session's summary row."""

    name: str
    created: float
    updated: float
    model: str | None
    agent: str | None
    turns: int
    memory_state: dict[str, object]
    memory_version: int = 0  # bumped by every memory write; see Store.add_turn
    tools: list[str] | None = None  # the tools it was last set up with (None: never saved)


def _json(data: Mapping[str, object], scrub: Scrubber) -> str:
    """Stored JSON, secrets redacted (see :mod:`agentcli.redact`). A memory state's turns
    are each encoded once (a session's state holds every earlier turn at each write)."""
    turns = data.get("turns")
    if not isinstance(turns, list):
        return json.dumps(scrub.data(data))
    head = json.dumps(scrub.data({k: v for k, v in data.items() if k != "turns"}))
    joined = scrub.json_items(turns)
    return f'{head[:-1]}{", " if len(head) > 2 else ""}"turns": [{joined}]}}'


def _when_unlocked(step: Callable[[], None], *, attempts: int = 50) -> None:
    """Run ``step``, again while another process holds the lock it needs: switching to WAL
    or creating the schema can be refused at once (no busy handler) when two processes open
    a new database together (two chats starting on one session)."""
    for attempt in range(attempts):
        try:
            step()
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or attempt == attempts - 1:
                raise
            time.sleep(0.1)


# A session row and its number of turns (``n``).
_SESSIONS = ("SELECT s.*, (SELECT COUNT(*) FROM turns t WHERE t.session = s.name) AS n "
             "FROM sessions s")


class Store:
    """Sessions, turns and run logs in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        # Redaction for this store's writes: each write refreshes it with the secrets known then.
        self._scrub = Scrubber()
        try:
            if str(path) != ":memory:":
                create_private(self.path)
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA busy_timeout=5000")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            _when_unlocked(self._migrate)
            keep_wal_on_close(self.db)
        except (OSError, sqlite3.Error) as err:
            raise ConfigError(f"cannot open the database {self.path}: {err}") from None

    def _migrate(self) -> None:
        if self.db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            migrate(self.db)

    def _check_version(self, db: sqlite3.Connection, session: str,
                       expected: int | None) -> None:
        """Inside a write transaction: refuse when the memory changed since ``expected``."""
        if expected is None:
            return
        current = self._version(db, session)
        if current != expected:
            raise SessionConflictError(
                f"session {session!r} memory changed (version {current}, this chat read "
                f"version {expected}): another chat on the same session wrote first"
            )

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- runs ---------------------------------------------------------------------------
    def _insert_run(self, db: sqlite3.Connection, rec: RunRecord, scrub: Scrubber,
                    shown: tuple[str, str]) -> int:
        """Insert the run's row (and its steps); ``shown`` is its question and answer, redacted."""
        steps = json.dumps(scrub.data(rec.steps), ensure_ascii=False) if rec.steps else "[]"
        cur = db.execute(
            "INSERT INTO runs (started, session, question, answer, steps, model, agent, "
            "stop_reason, prompt_tokens, completion_tokens, elapsed, meta) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (iso(time.time() - rec.elapsed), rec.session, *shown, steps, rec.model, rec.agent,
             rec.stop_reason, rec.prompt_tokens, rec.completion_tokens, rec.elapsed,
             json.dumps(scrub.data(rec.meta), ensure_ascii=False) if rec.meta else None),
        )
        run_id = int(cur.lastrowid or 0)  # runs_fts follows by trigger (log_schema.py)
        if rec.steps:
            insert_steps(db, run_id, json.loads(steps), rec.meta)
        return run_id

    def log_run(self, rec: RunRecord) -> int:
        """Log one run (question, steps, answer, model, tokens, timing); returns its id."""
        scrub = self._scrub.refresh()
        with self._tx() as db:
            return self._insert_run(db, rec, scrub, (scrub.text(rec.question),
                                                     scrub.text(rec.answer)))

    def runs(self, *, limit: int = 20, query: str | None = None, model: str | None = None,
             since: float | None = None) -> list[dict[str, Any]]:
        """Recent runs, newest first, filtered by search text, model and start time."""
        where: list[str] = ["1=1"]
        args: list[str | int] = []
        if query:
            where.append("runs.id IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)")
            args.append(_fts_query(query))
        if model:  # the full name, or the name after the provider prefix
            where.append("(runs.model = ? OR runs.model LIKE ? ESCAPE '\\')")
            args += [model, "%/" + _like_literal(model)]
        if since is not None:
            where.append("runs.started >= ?")
            args.append(iso(since))
        sql = f"SELECT * FROM runs WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?"
        try:
            rows = self.db.execute(sql, (*args, limit)).fetchall()
        except sqlite3.OperationalError as err:
            raise _bad_search(query, err) from None
        return [_run_row(r) for r in rows]

    def run(self, run_id: int | None = None) -> dict[str, Any] | None:
        """One logged run by id (None: the latest), or None."""
        row = self.db.execute("SELECT * FROM runs WHERE id = coalesce(?, (SELECT MAX(id) "
                              "FROM runs))", (run_id,)).fetchone()
        return _run_row(row) if row else None

    # -- sessions -----------------------------------------------------------------------
    def session(self, name: str) -> SessionInfo | None:
        """One session, or None."""
        row = self.db.execute(f"{_SESSIONS} WHERE name = ?", (name,)).fetchone()
        return _info(row) if row else None

    def sessions(self) -> list[SessionInfo]:
        """Every session, most recently used first."""
        rows = self.db.execute(f"{_SESSIONS} ORDER BY updated DESC").fetchall()
        return [_info(r) for r in rows]

    def ensure_session(self, name: str, *, model: str | None = None,
                       agent: str | None = None) -> SessionInfo:
        """Create the session if it does not exist; return it."""
        now = iso()
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO sessions (name, created, updated, model, agent) "
                       "VALUES (?,?,?,?,?)", (name, now, now, model, agent))
        info = self.session(name)
        assert info is not None
        return info

    def set_session_setup(self, name: str, *, agent: str, tools: list[str]) -> None:
        """Remember the agent type and tools a session uses (``/agent``, ``/tools add``)."""
        with self._tx() as db:
            db.execute("UPDATE sessions SET agent = ?, tools = ? WHERE name = ?",
                       (agent, json.dumps(tools), name))

    def add_turn(self, rec: RunRecord, *, memory_state: Mapping[str, object],
                 expected_version: int | None = None) -> int:
        """Commit a finished turn of session ``rec.session``, its run log and the new memory
        state in one transaction.

        With ``expected_version`` the write happens only if the memory is still at that
        version (else :class:`SessionConflictError`, nothing written); every write bumps it.
        """
        assert rec.session is not None, "a turn belongs to a session"
        session, now = rec.session, iso()
        scrub = self._scrub.refresh()
        shown = scrub.text(rec.question), scrub.text(rec.answer)
        state = _json(memory_state, scrub)
        with self._tx() as db:
            # The session row first: its update also checks the version (one statement).
            if db.execute("UPDATE sessions SET updated = ?, model = ?, agent = ?, "
                          "memory_state = ?, memory_version = memory_version + 1 "
                          "WHERE name = ? AND (? IS NULL OR memory_version = ?)",
                          (now, rec.model, rec.agent, state, session, expected_version,
                           expected_version)).rowcount == 0:
                self._check_version(db, session, expected_version)  # raises on a conflict
            run_id = self._insert_run(db, rec, scrub, shown)
            db.execute("INSERT INTO turns (session, run_id, question, answer, created) "
                       "VALUES (?,?,?,?,?)", (session, run_id, *shown, now))
        return run_id

    def adopt_run(self, session: str, run_id: int, memory_state: Mapping[str, object], *,
                  agent: str | None = None) -> None:
        """Start session ``session`` from a logged run (its first turn), in one transaction.

        ``agent run --continue`` after a plain run turns that run into a thread this way.
        """
        now = iso()
        with self._tx() as db:
            row = db.execute("SELECT question, answer, model FROM runs WHERE id = ?",
                             (run_id,)).fetchone()
            if row is None:
                raise ConfigError(f"no run with id {run_id}")
            db.execute("INSERT OR IGNORE INTO sessions (name, created, updated, model, agent, "
                       "memory_state) VALUES (?,?,?,?,?,?)",
                       (session, now, now, row["model"], agent, json.dumps(memory_state)))
            db.execute("INSERT INTO turns (session, run_id, question, answer, created) "
                       "VALUES (?,?,?,?,?)", (session, run_id, row["question"], row["answer"],
                                              now))
            db.execute("UPDATE runs SET session = ? WHERE id = ?", (session, run_id))

    def save_memory(self, session: str, memory_state: Mapping[str, object], *,
                    expected_version: int | None = None) -> int:
        """Replace the stored memory state (after /clear); returns the new memory version."""
        with self._tx() as db:
            return self._write_memory(db, session, memory_state, expected_version)

    def drop_last_turn(self, session: str, memory_state: Mapping[str, object], *,
                       expected_version: int | None = None) -> int:
        """Remove a session's last turn (for /retry) and store the memory as it was before;
        returns the new memory version. With ``expected_version``, only if nobody else wrote
        since (else :class:`SessionConflictError`: the last turn may be theirs)."""
        with self._tx() as db:
            db.execute("DELETE FROM turns WHERE id = (SELECT MAX(id) FROM turns WHERE session = ?)",
                       (session,))
            return self._write_memory(db, session, memory_state, expected_version)

    def _write_memory(self, db: sqlite3.Connection, session: str,
                      memory_state: Mapping[str, object], expected: int | None) -> int:
        """Inside a write transaction: store the memory state, bump its version and return
        it (the transaction rolls back on a conflict with ``expected``)."""
        self._check_version(db, session, expected)
        db.execute("UPDATE sessions SET memory_state = ?, updated = ?, "
                   "memory_version = memory_version + 1 WHERE name = ?",
                   (_json(memory_state, self._scrub.refresh()), iso(), session))
        return self._version(db, session)

    @staticmethod
    def _version(db: sqlite3.Connection, session: str) -> int:
        row = db.execute("SELECT memory_version FROM sessions WHERE name = ?",
                         (session,)).fetchone()
        return int(row[0]) if row else 0

    def turns(self, session: str) -> list[dict[str, Any]]:
        """A session's turns, oldest first, with their run's steps."""
        rows = self.db.execute(
            "SELECT t.id, t.question, t.answer, t.created, r.steps, r.model, "
            "r.prompt_tokens, r.completion_tokens FROM turns t "
            "LEFT JOIN runs r ON r.id = t.run_id WHERE t.session = ? ORDER BY t.id",
            (session,)).fetchall()
        return [dict(r) | {"steps": _column(r["steps"], list) or []} for r in rows]

    def delete_session(self, name: str) -> bool:
        """Delete a session and its turns (the run log keeps its runs); False if absent."""
        with self._tx() as db:
            db.execute("DELETE FROM turns WHERE session = ?", (name,))
            cur = db.execute("DELETE FROM sessions WHERE name = ?", (name,))
        return cur.rowcount > 0


def _column(text: str | None, kind: type) -> object:
    """A JSON column (``steps``: a list of objects, ``meta``: an object), or None when the
    stored value is not that (a damaged or hand-edited file)."""
    try:
        value = json.loads(text or ("[]" if kind is list else "{}"))
    except (ValueError, TypeError, RecursionError):
        return None
    if kind is list and isinstance(value, list) and not all(isinstance(s, dict) for s in value):
        return None
    return value if isinstance(value, kind) else None


def _run_row(row: sqlite3.Row) -> dict[str, Any]:
    """A run as a dict; a ``steps`` or ``meta`` value that is unreadable reads as empty and
    is named in ``unreadable``: one bad row never breaks a listing."""
    data = dict(row)
    for column, kind in (("steps", list), ("meta", dict)):
        value = _column(data[column], kind)
        if value is None:
            data.setdefault("unreadable", []).append(column)
        data[column] = kind() if value is None else value
    return data


def _like_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _info(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(row["name"], epoch(row["created"]), epoch(row["updated"]), row["model"],
                       row["agent"],
                       int(row["n"]), json.loads(row["memory_state"] or "{}"),
                       int(row["memory_version"] or 0),
                       json.loads(row["tools"]) if row["tools"] else None)


_FTS_SYNTAX = re.compile(r'["*()^]|\b(?:AND|OR|NOT|NEAR)\b|\b(?:question|answer|steps)\s*:')


def _fts_query(text: str) -> str:
    """A query that uses FTS5 syntax (``"a phrase"``, ``summ*``, ``rent OR pirate``,
    ``NEAR(a b)``, ``question:rent``) goes to SQLite as written; plain text (``25% of 300?``)
    becomes quoted words, ANDed, so its punctuation never trips the syntax."""
    if _FTS_SYNTAX.search(text):
        return text
    words = [w.replace('"', '""') for w in text.split()]
    return " ".join(f'"{w}"' for w in words) or '""'


def _bad_search(query: str | None, err: sqlite3.Error) -> ConfigError:
    return ConfigError(f"bad search {query!r}: {err}; FTS5 syntax: words, \"a phrase\", "
                       "prefix*, a OR b, a NOT b, NEAR(a b), question:word")


def session_markdown(name: str, turns: list[dict[str, Any]]) -> str:
    """A session transcript as Markdown: each question, its tool steps, and the answer."""
    lines = [f"# Chat session: {name}", ""]
    for i, turn in enumerate(turns, 1):
        lines += [f"## Turn {i}", "", f"**You:** {turn['question']}", ""]
        for step in turn["steps"]:
            tool_input = step["tool_input"]
            shown = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
            lines += [f"- `{step['tool']}({shown})` → {step['observation']}"]
        if turn["steps"]:
            lines.append("")
        lines += [f"**Agent:** {turn['answer']}", ""]
    return "\n".join(lines)


def open_store(db_path: str | None, env: Mapping[str, str] | None = None) -> Store:
    """The store at ``db_path`` (a setting) or the default location."""
    return Store(db_path or default_db_path(env))
