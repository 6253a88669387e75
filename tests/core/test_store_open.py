"""Opening the store is cheap: schema only when new or outdated, no checkpoint on close."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentcli import store as store_module
from agentcli.outcome import run_record
from agentcli.schema import RunResult
from agentcli.sqlite_wal import keep_wal_on_close
from agentcli.store import SCHEMA_VERSION, Store


def test_schema_runs_only_for_a_new_or_outdated_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = store_module.migrate

    def counting(db: sqlite3.Connection) -> None:
        calls.append(Path(db.execute("PRAGMA database_list").fetchone()[2]))
        real(db)

    monkeypatch.setattr(store_module, "migrate", counting)
    path = tmp_path / "a.db"
    Store(path).close()
    Store(path).close()
    assert len(calls) == 1
    first = Store(path)
    assert first.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    first.db.execute("PRAGMA user_version = 0")  # a file written by an older agentcli
    first.close()
    again = Store(path)
    assert len(calls) == 2
    again.log_run(run_record("q", RunResult("a", (), "finished")))
    assert again.runs()[0]["answer"] == "a"


def test_closing_keeps_the_wal_and_the_data(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    first = Store(path)
    supported = keep_wal_on_close(first.db)
    first.log_run(run_record("q1", RunResult("a1", (), "finished")))
    first.close()
    # The checkpoint on close would have folded the WAL into the file and deleted it.
    assert (tmp_path / "a.db-wal").exists() == supported
    second = Store(path)
    second.log_run(run_record("q2", RunResult("a2", (), "finished")))
    assert [r["answer"] for r in second.runs()] == ["a2", "a1"]
    second.close()
    plain = sqlite3.connect(path)  # any SQLite reader sees both runs (it reads the WAL)
    assert plain.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    plain.close()
