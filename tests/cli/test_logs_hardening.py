"""`agent logs` on hostile input: huge --since / -n, FTS5 query syntax and malformed queries,
a damaged row of an old log, and the log's file modes. Real `agent` entry point, piped."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from test_run_log_ecosystem import agent, old_database

from agentcli.outcome import run_record
from agentcli.schema import RunResult
from agentcli.store import Store


def logged(db: Path, *pairs: tuple[str, str]) -> None:
    store = Store(db)
    for question, answer in pairs:
        store.log_run(run_record(question, RunResult(answer, (), "finished"), model="m"))
    store.close()


def questions(db: Path, *args: str) -> list[str]:
    proc = agent("logs", "--json", "--db", str(db), *args)
    assert proc.returncode == 0, proc.stderr
    return [r["question"] for r in json.loads(proc.stdout)]


def test_huge_since_and_count_are_bounds_not_internal_errors(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    logged(db, ("one", "1"), ("two", "2"))
    assert questions(db, "--since", "99999999999999999999d") == ["two", "one"]
    assert questions(db, "-n", "99999999999999999999999") == ["two", "one"]
    assert questions(db, "--since", "0001-01-01") == ["two", "one"]
    for args in (["-n", "0"], ["--since", "9" * 400 + "x"]):
        proc = agent("logs", "--db", str(db), *args)
        assert proc.returncode == 2 and "internal error" not in proc.stderr, args
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_query_takes_fts5_syntax_and_a_malformed_one_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    logged(db, ("pay the rent", "done"), ("a pirate ship", "arr"),
           ("summarise this", "ok"), ("What is 25% of 300?", "75"),
           ("meet at time: 10:30", "fine"))
    assert questions(db, "-q", "summ*") == ["summarise this"]
    assert questions(db, "-q", "rent OR pirate") == ["a pirate ship", "pay the rent"]
    assert questions(db, "-q", '"pirate ship"') == ["a pirate ship"]
    assert questions(db, "-q", "question:rent") == ["pay the rent"]
    assert questions(db, "-q", "25% of 300?") == ["What is 25% of 300?"]  # plain text
    assert questions(db, "-q", "time: 10:30") == ["meet at time: 10:30"]
    bad = agent("logs", "-q", "rent AND (", "--db", str(db))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "bad search 'rent AND ('" in bad.stderr and "FTS5 syntax" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_an_unreadable_row_of_a_migrated_log_does_not_break_the_listing(
        tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old_database(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET steps = '[{\"tool\": broken' WHERE id = 1")
    con.commit()
    con.close()
    listed = agent("logs", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()[1:]]
    assert [(r[0], r[6]) for r in rows] == [("2", "1"), ("1", "unreadable")]
    shown = agent("logs", "show", "1", "--db", str(db))
    assert shown.returncode == 0 and "unreadable in the log: steps" in shown.stdout
    data = json.loads(agent("logs", "--json", "--db", str(db)).stdout)
    assert data[1]["unreadable"] == ["steps"] and "unreadable" not in data[0]
    session = agent("sessions", "show", "s", "--db", str(db))  # its turn: no steps shown
    assert session.returncode == 0 and "old question about zebras" in session.stdout


@pytest.mark.parametrize("where", ["default", "flag"])
def test_the_run_log_and_its_wal_are_private(mock_server: Any, tmp_path: Path,
                                             where: str) -> None:
    data_home = tmp_path / "xdg"
    db = (data_home / "agentcli" / "agent.db" if where == "default"
          else tmp_path / "new" / "dir" / "a.db")
    mock_server.add_reply("Final Answer: 75")
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t",
           "XDG_DATA_HOME": str(data_home)}
    args = [] if where == "default" else ["--db", str(db)]
    proc = agent("run", "hi", "-m", "openai/x", "-q", "--log", *args, env=env)
    assert proc.returncode == 0, proc.stderr
    files = [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm"))]
    assert [p.exists() for p in files] == [True, True, True]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
