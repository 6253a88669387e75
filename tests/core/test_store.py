"""The SQLite store: sessions, turns, run logs, full-text search, durability settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.errors import ConfigError
from agentcli.outcome import run_record
from agentcli.schema import AgentAction, AgentStep, RunResult, Usage
from agentcli.store import Store, default_db_path, session_markdown


def result(answer: str, *, tool: str = "Calculator", observation: str = "Answer: 75.0",
           ) -> RunResult:
    step = AgentStep(AgentAction(tool, "300*0.25", "Thought: compute"), observation)
    return RunResult(answer, (step,), "finished", Usage(10, 5), 2, 0.5)


def test_default_path_follows_xdg_and_agent_db(tmp_path: Path) -> None:
    assert default_db_path({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "agentcli" / "agent.db"
    assert default_db_path({"AGENT_DB": str(tmp_path / "x.db")}) == tmp_path / "x.db"


def test_wal_mode_and_turns_survive_reopen(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.ensure_session("s", model="m", agent="a")
    store.add_turn(run_record("What is 25% of 300?", result("75"), session="s", model="m",
                              agent="a"),
                   memory_state={"turns": [["q", "a"]]})
    # no close(): a killed process never gets to close
    again = Store(tmp_path / "a.db")
    info = again.session("s")
    assert info is not None and info.turns == 1
    assert info.memory_state == {"turns": [["q", "a"]]}
    turns = again.turns("s")
    assert turns[0]["answer"] == "75" and turns[0]["steps"][0]["tool"] == "Calculator"


def test_run_log_search_covers_intermediate_steps(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    store.log_run(run_record("first question", result("one", observation="banana bread"),
                             model="m"))
    store.log_run(run_record("second question", result("two"), model="m"))
    assert [r["answer"] for r in store.runs()] == ["two", "one"]
    assert [r["answer"] for r in store.runs(query="banana")] == ["one"]
    with pytest.raises(ConfigError, match="FTS5 syntax"):  # a malformed FTS5 query
        store.runs(query='"odd syntax* AND')
    assert [r["answer"] for r in store.runs(query="banan*")] == ["one"]
    assert store.runs(limit=1)[0]["prompt_tokens"] == 10


def test_delete_and_markdown(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    store.ensure_session("s")
    store.add_turn(run_record("q", result("a"), session="s"), memory_state={})
    text = session_markdown("s", store.turns("s"))
    assert "**You:** q" in text and "`Calculator(300*0.25)` → Answer: 75.0" in text
    assert store.delete_session("s") and not store.delete_session("s")
    assert store.sessions() == []
    assert len(store.runs()) == 1  # the run log keeps the run
