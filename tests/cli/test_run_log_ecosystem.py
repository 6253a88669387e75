"""The run log as the SQLite ecosystem reads it: real `sqlite-utils search` / `rows` against a
log written by `agent run`, ISO-8601 times, `run_steps`, `logs path`, `--json` / `--jsonl`,
and a version-3 file migrated on open with nothing lost."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ACTION = ('Thought: I need to compute.\nAction:\n```\n'
          '{"action": "Calculator", "action_input": "300 * 0.25"}\n```\n')
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def sqlite_utils(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("sqlite-utils")
    if not exe.exists():
        found = shutil.which("sqlite-utils")
        if found is None:
            pytest.skip("sqlite-utils is not installed (it is in the dev extra)")
        exe = Path(found)
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def agent(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point, stdout piped, no COLUMNS override."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=full, timeout=120, stdin=subprocess.DEVNULL)


def log_two_runs(mock_server: Any, db: Path) -> None:
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t", "AGENT_DB": str(db)}
    mock_server.add_reply(ACTION)
    mock_server.add_reply("Final Answer: seventy-five")
    assert agent("run", "What is 25% of 300?", "-m", "openai/alpha", env=env).returncode == 0
    mock_server.add_reply("Final Answer: hello there")
    assert agent("run", "Say hi", "-m", "openai/beta", env=env).returncode == 0


def test_sqlite_utils_searches_runs_and_reads_run_steps(mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    log_two_runs(mock_server, db)
    found = json.loads(sqlite_utils("search", str(db), "runs", "seventy", "--json-cols").stdout)
    assert [r["question"] for r in found] == ["What is 25% of 300?"]
    assert ISO.match(found[0]["started"]), found[0]["started"]
    in_steps = json.loads(sqlite_utils("search", str(db), "runs", "75.0", "--quote").stdout)
    assert [r["id"] for r in in_steps] == [1]  # an observation is searchable too
    steps = json.loads(sqlite_utils("rows", str(db), "run_steps").stdout)
    assert len(steps) == 1
    step = steps[0]
    assert (step["run_id"], step["idx"], step["tool"], step["tool_input"]) == (
        1, 0, "Calculator", "300 * 0.25")
    assert step["observation"] == "Answer: 75.0" and step["status"] == "ok"
    assert step["duration"] is not None and step["duration"] >= 0
    tables = sqlite_utils("tables", str(db), "--fts5").stdout
    assert "runs_fts" in tables


def test_logs_path_json_and_jsonl(mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    log_two_runs(mock_server, db)
    assert agent("logs", "path", env={"AGENT_DB": str(db)}).stdout.strip() == str(db)
    array = json.loads(agent("logs", "--json", "--db", str(db)).stdout)
    assert [r["question"] for r in array] == ["Say hi", "What is 25% of 300?"]
    assert array[1]["steps"][0]["tool"] == "Calculator" and ISO.match(array[1]["started"])
    lines = agent("logs", "--jsonl", "--db", str(db)).stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [2, 1]
    both = agent("logs", "--json", "--jsonl", "--db", str(db))
    assert both.returncode == 2 and "choose one" in both.stderr
    assert "Traceback" not in both.stderr


OLD_SCHEMA = """
CREATE TABLE sessions (
    name TEXT PRIMARY KEY, created REAL NOT NULL, updated REAL NOT NULL,
    model TEXT, agent TEXT, memory_state TEXT NOT NULL DEFAULT '{}',
    memory_version INTEGER NOT NULL DEFAULT 0, tools TEXT);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, session TEXT, question TEXT NOT NULL,
    answer TEXT NOT NULL, steps TEXT NOT NULL, model TEXT, agent TEXT, stop_reason TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, elapsed REAL, meta TEXT);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY, session TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
    run_id INTEGER REFERENCES runs(id), question TEXT NOT NULL, answer TEXT NOT NULL,
    created REAL NOT NULL);
CREATE INDEX turns_session ON turns(session, id);
CREATE VIRTUAL TABLE runs_fts USING fts5(question, answer, steps);
PRAGMA user_version = 3;
"""


def old_database(path: Path) -> None:
    """A log written by the version-3 layout: epoch times, a standalone FTS copy."""
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    steps = json.dumps([{"tool": "Calculator", "tool_input": "2*3", "log": "",
                         "observation": "Answer: 6"}])
    db.execute("INSERT INTO sessions VALUES ('s', 1764000000.5, 1764000100.25, 'openai/x', "
               "'chat', '{\"k\": 1}', 3, NULL)")
    for run_id, question, answer in ((1, "old question about zebras", "six"),
                                     (2, "second turn", "done")):
        db.execute("INSERT INTO runs VALUES (?, ?, 's', ?, ?, ?, 'openai/x', 'chat', "
                   "'finished', 10, 2, 0.5, NULL)",
                   (run_id, 1764000000.5 + run_id, question, answer, steps))
        db.execute("INSERT INTO runs_fts (rowid, question, answer, steps) VALUES (?,?,?,?)",
                   (run_id, question, answer, steps))
        db.execute("INSERT INTO turns (session, run_id, question, answer, created) "
                   "VALUES ('s', ?, ?, ?, ?)", (run_id, question, answer, 1764000000.5 + run_id))
    db.commit()
    db.close()


def test_a_version_3_log_is_migrated_on_open_with_nothing_lost(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old_database(db)
    listed = agent("logs", "--json", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [(r["id"], r["question"], r["answer"]) for r in runs] == [
        (2, "second turn", "done"), (1, "old question about zebras", "six")]
    assert runs[1]["started"] == "2025-11-24T16:00:01.500Z"  # epoch 1764000001.5, exactly
    assert [r["question"] for r in json.loads(
        agent("logs", "--json", "-q", "zebras", "--db", str(db)).stdout)] == [
        "old question about zebras"]
    found = json.loads(sqlite_utils("search", str(db), "runs", "zebras").stdout)
    assert [r["id"] for r in found] == [1]
    steps = json.loads(sqlite_utils("rows", str(db), "run_steps").stdout)
    assert [(s["run_id"], s["tool"], s["observation"]) for s in steps] == [
        (1, "Calculator", "Answer: 6"), (2, "Calculator", "Answer: 6")]
    shown = agent("sessions", "show", "s", "--db", str(db))
    assert shown.returncode == 0 and "old question about zebras" in shown.stdout
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 4
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT created, updated, memory_state, memory_version FROM "
                           "sessions").fetchone() == ("2025-11-24T16:00:00.500Z",
                                                      "2025-11-24T16:01:40.250Z", '{"k": 1}', 3)
        assert [r[0] for r in con.execute("SELECT created FROM turns ORDER BY id")] == [
            "2025-11-24T16:00:01.500Z", "2025-11-24T16:00:02.500Z"]
        fts = con.execute("SELECT sql FROM sqlite_master WHERE name = 'runs_fts'").fetchone()[0]
        assert "content=[runs]" in fts
    finally:
        con.close()


def test_a_failed_migration_leaves_the_old_file_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old_database(db)
    con = sqlite3.connect(db)
    # a time that is no time: the new layout refuses it, the migration must roll back
    con.execute("UPDATE runs SET started = 'garbage' WHERE id = 2")
    con.commit()
    con.close()
    before = db.read_bytes()
    proc = agent("logs", "--db", str(db))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "cannot open the database" in proc.stderr
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 3
        assert con.execute("SELECT typeof(started) FROM runs WHERE id = 1").fetchone()[0] == "real"
        assert con.execute("SELECT count(*) FROM runs_fts").fetchone()[0] == 2
    finally:
        con.close()
    assert len(before) > 0
