"""Memory kinds: what the model sees, and state round-trips."""

from __future__ import annotations

import pytest

from agentcli.errors import ConfigError
from agentcli.memory import (
    BufferMemory,
    SummaryMemory,
    TokenLimitMemory,
    WindowMemory,
    make_memory,
    restore,
)
from agentcli.models.fake import FakeChatModel


def contents(memory: object) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in memory.messages()]  # type: ignore[attr-defined]


def test_buffer_keeps_every_turn_in_order() -> None:
    memory = BufferMemory()
    memory.add_turn("hi", "hello")
    memory.add_turn("2+2?", "4")
    assert contents(memory) == [("user", "hi"), ("assistant", "hello"),
                                ("user", "2+2?"), ("assistant", "4")]
    memory.clear()
    assert memory.messages() == []


def test_window_keeps_last_k_but_persists_all() -> None:
    memory = WindowMemory(k=2)
    for i in range(5):
        memory.add_turn(f"q{i}", f"a{i}")
    assert [c for _, c in contents(memory)] == ["q3", "a3", "q4", "a4"]
    again = WindowMemory(k=3)
    again.load_state(memory.to_state())
    assert [c for _, c in contents(again)][:2] == ["q2", "a2"]


def test_token_limit_drops_oldest_first() -> None:
    memory = TokenLimitMemory(max_tokens=20)
    memory.add_turn("x" * 40, "y" * 40)  # 20 tokens
    memory.add_turn("short", "reply")
    assert [c for _, c in contents(memory)] == ["short", "reply"]


def test_summary_memory_asks_the_model_and_round_trips() -> None:
    llm = FakeChatModel(["Alice likes tea.", "Alice likes tea and is 30."])
    memory = SummaryMemory(llm)
    assert memory.messages() == []
    memory.add_turn("I am Alice, I like tea", "Nice to meet you")
    memory.add_turn("I am 30", "Noted")
    assert "Alice likes tea" in llm.requests[1].messages[0].content
    assert contents(memory) == [("system",
                                 "Summary of the conversation so far:\nAlice likes tea and is 30.")]
    other = SummaryMemory(None)
    other.load_state(memory.to_state())
    assert other.summary == "Alice likes tea and is 30."


def test_make_memory_and_restore_across_kinds() -> None:
    buffer = make_memory("buffer")
    buffer.add_turn("q", "a")
    window = restore(make_memory("window", k=1), buffer.to_state())
    assert [c for _, c in contents(window)] == ["q", "a"]
    summary = restore(make_memory("summary", llm=FakeChatModel([])), buffer.to_state())
    assert summary.messages() == []  # turns do not turn into a summary silently
    with pytest.raises(ConfigError, match="unknown memory kind"):
        make_memory("forever")
