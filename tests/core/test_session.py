"""A conversation through the library API: open, run the executor, commit, reopen."""

from __future__ import annotations

from pathlib import Path

from agentcli import initialize_agent
from agentcli.config import Settings
from agentcli.models.fake import FakeChatModel
from agentcli.schema import RunResult
from agentcli.session import open_conversation
from agentcli.store import Store

CHAT = "chat-conversational-react-description"


def blob(answer: str) -> str:
    return f'```json\n{{"action": "Final Answer", "action_input": "{answer}"}}\n```'


def test_a_committed_turn_is_read_back_by_the_next_conversation(tmp_path: Path) -> None:
    store, settings = Store(tmp_path / "a.db"), Settings()
    llm = FakeChatModel([blob("Hello Ada"), blob("You are Ada")])
    executor = initialize_agent([], llm, CHAT)
    first = open_conversation(store, "s", settings, agent=CHAT)
    assert first.earlier_turns == 0 and first.uses_memory
    result = executor.invoke(first.inputs("I am Ada"))
    assert result.output == "Hello Ada"
    assert first.commit("I am Ada", result, model="fake", agent=CHAT)
    again = open_conversation(store, "s", settings, agent=CHAT)
    assert again.earlier_turns == 1
    executor.invoke(again.inputs("Who am I?"))
    sent = [m.content for m in llm.requests[1].messages]
    assert "I am Ada" in sent and "Hello Ada" in sent


def test_an_interrupted_turn_is_logged_not_remembered(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    conversation = open_conversation(store, "s", Settings(), agent=CHAT)
    stopped = RunResult(output="", steps=(), stop_reason="interrupted")
    assert not conversation.commit("q", stopped, model="fake", agent=CHAT)
    assert store.turns("s") == [] and conversation.memory.messages() == []
    assert [r["question"] for r in store.runs()] == ["q"]


def test_memory_none_keeps_turns_but_hides_them(tmp_path: Path) -> None:
    conversation = open_conversation(Store(tmp_path / "a.db"), "s", Settings(memory="none"),
                                     agent=CHAT)
    assert not conversation.uses_memory and "chat_history" not in conversation.inputs("q")


def _done(answer: str) -> RunResult:
    return RunResult(output=answer, steps=(), stop_reason="finished")


def test_undo_refuses_to_drop_another_writers_turn(tmp_path: Path) -> None:
    import pytest

    from agentcli.errors import SessionConflictError

    store = Store(tmp_path / "a.db")
    mine = open_conversation(store, "s", Settings(), agent=CHAT)
    before = mine.memory.to_state()
    mine.commit("mine", _done("a"), model="fake", agent=CHAT)
    theirs = open_conversation(Store(tmp_path / "a.db"), "s", Settings(), agent=CHAT)
    theirs.commit("theirs", _done("b"), model="fake", agent=CHAT)
    with pytest.raises(SessionConflictError):
        mine.undo_last(before)
    assert [t["question"] for t in store.turns("s")] == ["mine", "theirs"]
    theirs.undo_last(theirs.memory.to_state() | {"turns": [["mine", "a"]]})
    assert [t["question"] for t in store.turns("s")] == ["mine"]


def test_clear_keeps_the_version_so_the_next_turn_commits_directly(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    conversation = open_conversation(store, "s", Settings(), agent=CHAT)
    conversation.commit("q1", _done("a1"), model="fake", agent=CHAT)
    conversation.clear()
    info = store.session("s")
    assert info is not None and info.memory_version == conversation.version
    assert conversation.memory.messages() == []
    conversation.commit("q2", _done("a2"), model="fake", agent=CHAT)
    info = store.session("s")
    assert info is not None and info.memory_state["turns"] == [["q2", "a2"]]


def test_the_state_snapshot_is_the_stored_one_and_follows_every_change(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    conversation = open_conversation(store, "s", Settings(memory="buffer"), agent=CHAT)
    assert conversation.state() == conversation.memory.to_state()
    for i in range(3):
        before = conversation.state()
        conversation.commit(f"q{i}", RunResult(f"a{i}", (), "finished"), model="m", agent=CHAT)
        now = conversation.state()
        assert now == conversation.memory.to_state() and now is not before
        assert conversation.state() is now  # no new snapshot until the memory changes
        info = store.session("s")
        assert info is not None and info.memory_state == now
    conversation.undo_last(before)
    assert conversation.state() == before == conversation.memory.to_state()
    conversation.clear()
    assert conversation.state() == conversation.memory.to_state()
    assert conversation.state()["turns"] == []
