"""SQL on SQLite: list tables, show schemas, run queries (read-only unless writes are allowed)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from agentcli import deadline as run_deadline
from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.events import notify
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import bool_setting, float_setting, int_setting

WRITE_DANGER = "sql_allow_writes is on: queries can change or delete your data"
# Functions that read or write files, or load code, whatever the connection mode.
_FILE_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
# Pragmas that take an argument yet only read; any other pragma with an argument sets a value.
_READ_PRAGMAS = frozenset({"table_info", "table_xinfo", "index_list", "index_info",
                           "index_xinfo", "foreign_key_list", "foreign_key_check",
                           "integrity_check", "quick_check"})
_WRITE_PRAGMAS = frozenset({"optimize", "wal_checkpoint", "incremental_vacuum", "shrink_memory"})
_MAX_VALUE_BYTES = 1_000_000  # SQLite refuses to build a longer string or blob (zeroblob bombs)


def _authorizer(writable: bool) -> Callable[..., int]:
    """An SQLite authorizer: nothing may touch another file; read-only means no pragma writes.

    VACUUM and VACUUM INTO reach the authorizer as ATTACH (of '' or of the target file).
    """

    def check(action: int, arg1: str | None, arg2: str | None, db: str | None,
              source: str | None) -> int:
        if action == sqlite3.SQLITE_ATTACH:
            return sqlite3.SQLITE_OK if writable and arg1 == "" else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_DETACH:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _FILE_FUNCTIONS:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and not writable:
            name = (arg1 or "").lower()
            if name in _WRITE_PRAGMAS or (arg2 is not None and name not in _READ_PRAGMAS):
                return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return check


class SQLiteDatabase:
    """A SQLite file opened read-only (``mode=ro``) unless ``writable``."""

    def __init__(self, path: str, *, writable: bool, max_rows: int, timeout: float,
                 max_chars: int = 20_000) -> None:
        file = Path(path).expanduser()
        if not file.is_file():
            raise ToolLoadError(f"tool_settings sqlite_path: no SQLite file at {file}")
        mode = "rw" if writable else "ro"
        self.path, self.max_rows, self.timeout = file, max_rows, timeout
        self.writable, self.max_chars = writable, max_chars
        self._uri = f"{file.resolve().as_uri()}?mode={mode}"

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
        deadline = time.monotonic() + (run_deadline.bound(self.timeout) or 0.0)
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_VALUE_BYTES)
        if not self.writable:  # plain VACUUM attaches a temporary database internally
            conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        conn.set_authorizer(_authorizer(self.writable))
        return conn

    def tables(self) -> list[str]:
        """User table names."""
        with self._connect() as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view') "
                                "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
        return [r[0] for r in rows]

    def schema(self, names: str) -> str:
        """CREATE statements plus three sample rows for each named table."""
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        known = self.tables()
        unknown = [n for n in wanted if n not in known]
        if unknown or not wanted:
            raise ToolInputError(f"unknown table(s) {unknown or wanted}; tables: {known}")
        parts = []
        with self._connect() as conn:
            for name in wanted:
                (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                                      (name,)).fetchone()
                cur = conn.execute(f'SELECT * FROM "{name}" LIMIT 3')
                cols = [d[0] for d in cur.description]
                rows = "\n".join("\t".join(str(_cap_value(v, 200)) for v in r)
                                 for r in cur.fetchall())
                parts.append(f"{sql}\n\n/*\n3 rows from {name} table:\n"
                             f"{chr(9).join(cols)}\n{rows}\n*/")
        return "\n\n".join(parts)

    def query(self, sql: str) -> str:
        """Run one statement; rows come back as a list of tuples (capped)."""
        if not sql.strip():
            raise ToolInputError("sql_db_query needs a SQL statement")

        notify("tool_text", f"Executing SQL: {sql.strip()}", tool="sql_db_query")
        try:
            with self._connect() as conn:
                cur = conn.execute(sql)
                text, rows = _format_rows(cur, self.max_rows, self.max_chars)
                conn.commit()
        except sqlite3.Error as err:
            raise ToolInputError(f"Error: {err}{_hint(str(err))}") from None
        if not rows and cur.description is None:
            return f"OK, {cur.rowcount} row(s) changed" if cur.rowcount >= 0 else "OK"
        return text


def _hint(error: str) -> str:
    if "readonly" in error.replace("-", ""):
        return " (the database is read-only; set sql_allow_writes)"
    if "not authorized" in error or "authorization denied" in error:
        return (" (ATTACH, VACUUM, pragma writes and file functions are refused: the tool may "
                "only read this database)")
    if "too big" in error:
        return f" (values over {_MAX_VALUE_BYTES:,} bytes are refused; select less)"
    return ""


def _format_rows(cur: sqlite3.Cursor, max_rows: int, max_chars: int) -> tuple[str, int]:
    """Rows as a list of tuples, fetched one at a time and cut at ``max_chars`` characters
    (one huge value is cut too), so a giant result is never built before it is capped."""
    parts: list[str] = []
    size = 0
    note = ""
    while (row := cur.fetchone()) is not None:
        if len(parts) >= max_rows:
            note = f"\n...[only the first {max_rows} rows]"
            break
        text = repr(tuple(_cap_value(v, max_chars) for v in row))
        if size + len(text) > max_chars:
            if not parts:
                parts.append(text[:max_chars])
                note = f"\n...[the first row is cut at {max_chars:,} characters]"
            else:
                note = f"\n...[output cut at {max_chars:,} characters after {len(parts)} rows]"
            break
        parts.append(text)
        size += len(text) + 2
    return "[" + ", ".join(parts) + "]" + note, len(parts)


def _cap_value(value: object, max_chars: int) -> object:
    if isinstance(value, str) and len(value) > max_chars:
        return value[:max_chars] + f"...[{len(value) - max_chars:,} characters cut]"
    if isinstance(value, bytes) and len(value) > max_chars // 4:
        return value[: max_chars // 4] + b"...[cut]"
    return value


_DESCRIPTIONS = {
    "sql_db_list_tables": "Input is an empty string, output is a comma-separated list of "
                          "tables in the database.",
    "sql_db_schema": "Input: a comma-separated list of tables. Output: the schema and sample "
                     "rows for those tables. Call sql_db_list_tables first.",
    "sql_db_query": "Input: a detailed and correct SQL query. Output: a result from the "
                    "database. If the query is not correct, an error message is returned.",
}


def make(name: str, settings: Mapping[str, object]) -> Tool:
    """The SQL tool ``name`` on ``sqlite_path``; ``sql_db_query`` is dangerous when
    ``sql_allow_writes`` is on."""
    db = SQLiteDatabase(
        str(settings["sqlite_path"]), writable=bool_setting(settings, "sql_allow_writes"),
        max_rows=int_setting(settings, "sql_max_rows", 100),
        timeout=float_setting(settings, "sql_timeout", 10.0),
        max_chars=int_setting(settings, "sql_max_chars", 20_000),
    )
    runs: dict[str, Callable[[str], str]] = {
        "sql_db_list_tables": lambda _: ", ".join(db.tables()),
        "sql_db_schema": db.schema, "sql_db_query": db.query}
    danger = WRITE_DANGER if name == "sql_db_query" and db.writable else ""
    return Tool(name, _DESCRIPTIONS[name], func=runs[name], dangerous=bool(danger),
                danger_reason=danger)
