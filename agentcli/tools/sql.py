"""SQL on SQLite: list tables, show schemas, run queries (read-only unless writes are allowed)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import bool_setting, float_setting, int_setting

WRITE_DANGER = "sql_allow_writes is on: queries can change or delete your data"


class SQLiteDatabase:
    """A SQLite file opened read-only (``mode=ro``) unless ``writable``."""

    def __init__(self, path: str, *, writable: bool, max_rows: int, timeout: float) -> None:
        file = Path(path).expanduser()
        if not file.is_file():
            raise ToolLoadError(f"tool_settings sqlite_path: no SQLite file at {file}")
        mode = "rw" if writable else "ro"
        self.path, self.max_rows, self.timeout = file, max_rows, timeout
        self._uri = f"{file.resolve().as_uri()}?mode={mode}"

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
        deadline = time.monotonic() + self.timeout
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
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
                rows = "\n".join("\t".join(map(str, r)) for r in cur.fetchall())
                parts.append(f"{sql}\n\n/*\n3 rows from {name} table:\n"
                             f"{chr(9).join(cols)}\n{rows}\n*/")
        return "\n\n".join(parts)

    def query(self, sql: str) -> str:
        """Run one statement; rows come back as a list of tuples (capped)."""
        if not sql.strip():
            raise ToolInputError("sql_db_query needs a SQL statement")
        try:
            with self._connect() as conn:
                cur = conn.execute(sql)
                rows = cur.fetchmany(self.max_rows + 1)
                conn.commit()
        except sqlite3.Error as err:
            hint = " (the database is read-only; set sql_allow_writes)" if "readonly" in str(
                err).replace("-", "") else ""
            raise ToolInputError(f"Error: {err}{hint}") from None
        cut = f"\n...[only the first {self.max_rows} rows]" if len(rows) > self.max_rows else ""
        if not rows and cur.description is None:
            return f"OK, {cur.rowcount} row(s) changed" if cur.rowcount >= 0 else "OK"
        return str(rows[: self.max_rows]) + cut


def _database(settings: dict[str, Any]) -> SQLiteDatabase:
    return SQLiteDatabase(
        str(settings["sqlite_path"]), writable=bool_setting(settings, "sql_allow_writes"),
        max_rows=int_setting(settings, "sql_max_rows", 100),
        timeout=float_setting(settings, "sql_timeout", 10.0),
    )


def _list(**settings: Any) -> Tool:
    db = _database(settings)
    return Tool("sql_db_list_tables", "Input is an empty string, output is a comma-separated "
                "list of tables in the database.", func=lambda _="": ", ".join(db.tables()))


def _schema(**settings: Any) -> Tool:
    db = _database(settings)
    return Tool("sql_db_schema", "Input: a comma-separated list of tables. Output: the schema "
                "and sample rows for those tables. Call sql_db_list_tables first.",
                func=db.schema)


def _query(**settings: Any) -> Tool:
    db = _database(settings)
    writes = bool_setting(settings, "sql_allow_writes")
    return Tool("sql_db_query", "Input: a detailed and correct SQL query. Output: a result "
                "from the database. If the query is not correct, an error message is returned.",
                func=db.query, dangerous=writes, danger_reason=WRITE_DANGER if writes else "")

