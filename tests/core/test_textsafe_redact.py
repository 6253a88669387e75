"""textsafe (controls shown, not obeyed) and redact (secrets never kept or printed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentcli.batch import read_items, run_batch
from agentcli.create import initialize_agent
from agentcli.models.fake import FakeChatModel
from agentcli.outcome import run_record
from agentcli.redact import is_secret_name, open_word, redact, redact_data, remember
from agentcli.schema import AgentAction, AgentStep, RunResult
from agentcli.store import Store
from agentcli.textsafe import display, safe_json, safe_line, safe_text
from agentcli.tools.sandbox import scrubbed_env


@pytest.mark.parametrize(("raw", "shown"), [
    ("rm -f x #\x1b[2K\x1b[1G echo hi", r"rm -f x #\x1b[2K\x1b[1G echo hi"),
    ("osc \x1b]8;;http://evil\x07link", r"osc \x1b]8;;http://evil\x07link"),
    ("c1 csi \x9b2K", r"c1 csi \x9b2K"),
    ("cr \r overwrite", r"cr \x0d overwrite"),
    ("bs \x08 del \x7f nul \x00", r"bs \x08 del \x7f nul \x00"),
    ("bidi \u202eevil\u202c", r"bidi \u202eevil\u202c"),
    ("keeps\nnewlines\tand tabs, ünïcode, 中文", "keeps\nnewlines\tand tabs, ünïcode, 中文"),
])
def test_safe_text_shows_every_control(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in safe_text(raw))


def test_safe_line_and_safe_json() -> None:
    assert safe_line("a\nb\tc\x1b") == r"a\nb\tc\x1b"
    text = json.dumps({"a": "x\x9by\u202e"}, ensure_ascii=False)
    assert json.loads(safe_json(text)) == {"a": "x\x9by\u202e"}  # same data ...
    assert "\x9b" not in safe_json(text) and "\u202e" not in safe_json(text)  # ... no controls


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD",
                                  "AWS_SECRET_ACCESS_KEY", "X_AUTH"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)
    assert name not in scrubbed_env({name: "v", "PATH": "/bin"})  # the same rule scrubs tools


@pytest.mark.parametrize(("text", "env", "expected"), [
    ("key plainvalue99 here", {"MY_TOKEN": "plainvalue99"}, "key *** here"),
    ("short 1 stays", {"DEBUG_TOKEN": "1"}, "short 1 stays"),
    ("Authorization: Bearer abc.def-123", {}, "Authorization: Bearer ***"),
    ("sk-proj-ABCdef123456 ghp_" + "a" * 36, {}, "*** ***"),
    ("AKIAABCDEFGHIJKLMNOP", {}, "***"),
])
def test_redact(text: str, env: dict[str, str], expected: str) -> None:
    assert redact(text, env) == expected


def test_remembered_values_and_display() -> None:
    remember(["remembered-header-value"])
    assert redact("x remembered-header-value y", {}) == "x *** y"
    assert display("\x1b[31m remembered-header-value") == r"\x1b[31m ***"
    assert redact_data({"a": ["remembered-header-value", 3]}, {}) == {"a": ["***", 3]}


def test_store_keeps_runs_turns_and_memory_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-value-4242")
    store = Store(tmp_path / "a.db")
    step = AgentStep(AgentAction("read_file", ".env", "log"), "SERVICE_TOKEN=tok-value-4242")
    result = RunResult("it is tok-value-4242", (step,), "finished")
    store.ensure_session("s")
    store.add_turn(run_record("show tok-value-4242", result, session="s"),
                   memory_state={"turns": [["q", "tok-value-4242"]]})
    dump = "\n".join(store.db.iterdump())
    assert "tok-value-4242" not in dump and "***" in dump
    assert store.runs()[0]["steps"][0]["observation"] == "SERVICE_TOKEN=***"


def test_batch_output_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-value-4242")
    llm = FakeChatModel(["Final Answer: tok-value-4242"])
    executor = initialize_agent([], llm)
    (tmp_path / "in.jsonl").write_text('{"id": "a", "input": "q"}\n')
    asyncio.run(run_batch(executor, read_items(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"))
    out = (tmp_path / "out.jsonl").read_text()
    assert "tok-value-4242" not in out and json.loads(out)["answer"] == "***"


@pytest.mark.parametrize(("streamed", "held"), [
    ("the key is sk-ab", 5), ("sk-abcdef1234\n", 0), ("done. ", 0), ("auth: Bearer ", 7),
    ("auth: Bearer tok", 10),
])
def test_open_word_holds_back_only_a_word_still_arriving(streamed: str, held: int) -> None:
    assert open_word(streamed) == held  # a line end completes the word: nothing is split


def test_a_secret_variable_set_or_changed_between_writes_is_redacted_at_the_next(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.redact import redact

    assert redact("value-one-123 value-two-456") == "value-one-123 value-two-456"
    monkeypatch.setenv("LATE_API_TOKEN", "value-one-123")
    assert redact("value-one-123 value-two-456") == "*** value-two-456"
    monkeypatch.setenv("LATE_API_TOKEN", "value-two-456")
    assert redact("value-one-123 value-two-456") == "value-one-123 ***"
    monkeypatch.delenv("LATE_API_TOKEN")
    assert redact("value-one-123 value-two-456") == "value-one-123 value-two-456"
