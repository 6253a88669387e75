"""Optimistic concurrency on a session's memory: versions, conflicts, merges, processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.errors import SessionConflictError
from agentcli.memory import Memory, make_memory, restore
from agentcli.outcome import run_record
from agentcli.schema import RunResult
from agentcli.session import Conversation
from agentcli.store import Store


def commit_turn(store: Store, name: str, memory: Memory, question: str, done: RunResult,
                *, version: int) -> int:
    conversation = Conversation(store, name, memory, 0, version=version)
    conversation.commit(question, done, model=None, agent=None)
    return conversation.version


def result(answer: str) -> RunResult:
    return RunResult(output=answer, steps=(), stop_reason="finished")


def test_a_stale_version_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    store.ensure_session("s")
    store.add_turn(run_record("q1", result("a1"), session="s"),
                   memory_state={"turns": [["q1", "a1"]]}, expected_version=0)
    with pytest.raises(SessionConflictError, match="another chat"):
        store.add_turn(run_record("q2", result("a2"), session="s"),
                       memory_state={"turns": [["q2", "a2"]]}, expected_version=0)
    info = store.session("s")
    assert info is not None and info.turns == 1 and info.memory_version == 1
    assert len(store.runs()) == 1


def test_two_writers_merge_instead_of_overwriting(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "a.db"), Store(tmp_path / "a.db")  # two connections
    a.ensure_session("s")
    mem_a, mem_b = make_memory("buffer"), make_memory("buffer")
    version_a = version_b = 0
    version_a = commit_turn(a, "s", mem_a, "qa", result("aa"), version=version_a)
    version_b = commit_turn(b, "s", mem_b, "qb", result("ab"), version=version_b)
    assert mem_b.to_state()["turns"] == [["qa", "aa"], ["qb", "ab"]]
    stored = a.session("s")
    assert stored is not None and stored.memory_state == mem_b.to_state()
    assert version_b == stored.memory_version == 2


def test_clear_by_the_other_writer_is_respected(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "a.db"), Store(tmp_path / "a.db")
    a.ensure_session("s")
    mem_b = restore(make_memory("buffer"), {"kind": "buffer", "turns": [["old", "x"]]})
    a.save_memory("s", {})  # /clear in the other chat bumps the version
    commit_turn(b, "s", mem_b, "qb", result("ab"), version=0)
    assert mem_b.to_state()["turns"] == [["qb", "ab"]]


def test_old_database_gains_the_version_column(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE sessions (name TEXT PRIMARY KEY, created REAL NOT NULL, "
               "updated REAL NOT NULL, model TEXT, agent TEXT, "
               "memory_state TEXT NOT NULL DEFAULT '{}')")
    db.execute("INSERT INTO sessions VALUES ('s', 0, 0, NULL, NULL, '{}')")
    db.commit()
    db.close()
    info = Store(path).session("s")
    assert info is not None and info.memory_version == 0


WRITER = """
import sys
from agentcli.memory import make_memory, restore
from agentcli.schema import RunResult
from agentcli.session import Conversation
from agentcli.store import Store

store = Store(sys.argv[1])
tag = sys.argv[2]
for i in range(int(sys.argv[3])):
    info = store.session("s")
    memory = restore(make_memory("buffer"), info.memory_state)
    done = RunResult(output="ok", steps=(), stop_reason="finished")
    Conversation(store, "s", memory, 0, version=info.memory_version).commit(
        f"{tag}{i}", done, model=None, agent=None)
"""


def test_two_processes_writing_one_session_keep_every_turn(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    Store(db).ensure_session("s")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag, "25"])
             for tag in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    info = Store(db).session("s")
    assert info is not None and info.turns == 50
    questions = [q for q, _ in info.memory_state["turns"]]
    assert sorted(questions) == sorted([f"a{i}" for i in range(25)] + [f"b{i}" for i in range(25)])
    assert [q for q in questions if q[0] == "a"] == [f"a{i}" for i in range(25)]  # order kept
