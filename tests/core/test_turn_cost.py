"""A chat turn's own work does not grow with the session (issue 23): the token window is
kept between turns, and stored JSON is redacted with each string's result remembered."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentcli.memory import TokenLimitMemory, estimate_tokens
from agentcli.outcome import run_record
from agentcli.redact import Scrubber, redact, redact_data, remember
from agentcli.schema import AgentAction, AgentStep, Message, RunResult, assistant, user
from agentcli.store import Store


def brute_force(turns: list[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    used = 0
    for turn in reversed(turns):
        cost = estimate_tokens(turn[0]) + estimate_tokens(turn[1])
        if used + cost > limit:
            break
        kept.append(turn)
        used += cost
    return kept[::-1]


def test_token_window_matches_a_full_scan_at_every_turn() -> None:
    rng = random.Random(7)
    memory = TokenLimitMemory(max_tokens=60)
    for i in range(300):
        memory.add_turn("q" * rng.randrange(0, 80), "a" * rng.randrange(0, 120) + str(i))
        assert memory.turns[memory._first():] == brute_force(memory.turns, 60)
        if i == 150:  # a restore
            memory.load_state(memory.to_state())
        if i == 200:  # an undo: the state from before the last turn
            memory.load_state({"turns": memory.to_state()["turns"][:-1]})
        assert memory.turns[memory._first():] == brute_force(memory.turns, 60)
    memory.clear()
    assert memory.turns[memory._first():] == [] and memory.messages() == []


def test_scrubber_matches_redact_and_follows_new_secrets(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("BENCH_SERVICE_TOKEN", "tok-123456789")
    data = {"turns": [["key tok-123456789 here", "sk-abcdefghijkl"], ["plain", "x" * 5000]],
            "n": 3}
    scrub = Scrubber().refresh()
    assert scrub.data(data) == redact_data(data)
    assert scrub.text("Bearer abcdefghijk") == redact("Bearer abcdefghijk")
    assert scrub.text("later-secret-value!") == "later-secret-value!"
    remember(["later-secret-value!"])
    assert scrub.refresh().text("later-secret-value!") == "***"  # results kept are dropped


def test_a_secret_learned_mid_session_is_redacted_in_the_stored_memory(tmp_path: Path) -> None:
    store = Store(tmp_path / "agent.db")
    store.ensure_session("s")
    step = AgentStep(AgentAction("echo", "x", "log"), "obs")
    result = RunResult("ok", (step,), "finished")
    turns = [["hello mid-session-secret-1", "ok"]]
    store.add_turn(run_record("q1", result, session="s"),
                   memory_state={"kind": "tokens", "turns": turns})
    remember(["mid-session-secret-1"])
    store.add_turn(run_record("q2", result, session="s"),
                   memory_state={"kind": "tokens", "turns": turns})
    info = store.session("s")
    assert info is not None
    assert json.dumps(info.memory_state) == json.dumps({"kind": "tokens",
                                                        "turns": [["hello ***", "ok"]]})
    store.close()


@pytest.mark.parametrize("state", [
    {"kind": "tokens", "turns": [["q sk-abcdefghijkl", "a"], ["q2", "a2"]]},
    {"kind": "buffer", "turns": []},
    {"turns": [["x", "y"]]},
    {"kind": "odd", "turns": [[{"nested": "sk-abcdefghijkl"}, 1], "loose"], "extra": [1]},
    {"kind": "summary", "summary": "s"},
])
def test_stored_memory_json_is_what_json_dumps_gives(state: dict[str, object]) -> None:
    from agentcli.store import _json

    scrub = Scrubber().refresh()
    assert json.loads(_json(state, scrub)) == redact_data(state)
    assert json.loads(_json(state, scrub)) == redact_data(state)  # again, from what is kept
    if list(state)[-1] == "turns":  # the same text json.dumps writes
        assert _json(state, scrub) == json.dumps(redact_data(state))


def test_turns_seen_before_are_reused_but_an_edit_is_never_missed() -> None:
    from agentcli.store import _json

    scrub = Scrubber().refresh()
    turns = [[f"q{i}", f"a{i}"] for i in range(5)]
    state = {"kind": "tokens", "turns": turns}
    assert _json(state, scrub) == json.dumps(state)
    turns.append(["q5", "a5"])
    assert _json(state, scrub) == json.dumps(state)
    turns[2][1] = "edited in place"
    assert _json(state, scrub) == json.dumps(state)
    del turns[0]
    assert _json(state, scrub) == json.dumps(state)
    turns.append([1, True])  # not strings: encoded as they are
    assert _json(state, scrub) == json.dumps(state)
    turns[-1] = ["1", "true"]
    assert _json(state, scrub) == json.dumps(state)


@pytest.mark.parametrize("kind", ["buffer", "window", "tokens"])
def test_messages_are_made_once_yet_follow_every_change(kind: str) -> None:
    from agentcli.memory import make_memory

    rng = random.Random(11)
    memory = make_memory(kind, k=3, max_tokens=40)
    first: Message | None = None
    for i in range(120):
        memory.add_turn(f"q{i} " + "x" * rng.randrange(40), f"a{i}")
        if i == 40:
            memory.load_state(memory.to_state())  # a restore replaces the list
        if i == 60:  # an undo drops the last turn...
            memory.load_state({"turns": memory.to_state()["turns"][:-1]})
            memory.add_turn("again", "a60")  # ...and another takes its place
        if i == 80:
            memory.clear()
        expected = [(m.role, m.content) for q, a in memory.turns[memory._first():]
                    for m in (user(q), assistant(a))]
        shown = memory.messages()
        assert [(m.role, m.content) for m in shown] == expected
        shown.append(user("a caller's own edit"))  # never seen by the next call
        if i == 100:
            first = shown[-3]  # this turn's question
        if i == 101:  # one turn later: the same message object, not a new one
            assert first is not None and any(m is first for m in memory.messages())
