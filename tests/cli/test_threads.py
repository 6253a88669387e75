"""`agent run --continue` / `--thread NAME`: runs that are turns of a saved conversation, in the
same store as `agent chat` sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.store import Store

runner = CliRunner()


def final(text: str) -> str:
    blob = json.dumps({"action": "Final Answer", "action_input": text})
    return f"```json\n{blob}\n```"


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def run(server: Any, db: Path, *args: str) -> Any:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-t"}
    return runner.invoke(app, ["run", *args, "-m", "openai/any", "-q", "--db", str(db)],
                         env=env)


def sent(server: Any, i: int) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in server.requests[i].body["messages"]]


def test_continue_after_a_plain_run_sends_the_earlier_turn(mock_server: Any,
                                                           tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    mock_server.add_reply("Final Answer: 75")
    first = run(mock_server, db, "What is 25% of 300?")
    assert first.stdout == "75\n", first.output
    mock_server.add_reply(final("150"))
    second = run(mock_server, db, "--continue", "and double it?")
    assert second.exit_code == 0, second.output
    assert second.stdout == "150\n"
    history = sent(mock_server, 1)
    assert ("user", "What is 25% of 300?") in history and ("assistant", "75") in history
    assert history[-1] == ("user", "and double it?")
    store = Store(db)
    [thread] = store.sessions()
    assert thread.name.startswith("run-") and thread.turns == 2
    assert [t["question"] for t in store.turns(thread.name)] == ["What is 25% of 300?",
                                                                  "and double it?"]
    # -C again continues the same thread, now three turns long
    mock_server.add_reply(final("300"))
    assert run(mock_server, db, "-C", "and again?").stdout == "300\n"
    assert ("assistant", "150") in sent(mock_server, 2)
    assert store.session(thread.name).turns == 3  # type: ignore[union-attr]


def test_thread_is_a_chat_session_and_back(mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    mock_server.add_reply(final("Hello Ada"))
    assert run(mock_server, db, "--thread", "ada", "My name is Ada.").exit_code == 0
    mock_server.add_reply(final("Your name is Ada."))
    result = run(mock_server, db, "--thread", "ada", "--json", "What is my name?")
    data = json.loads(result.stdout)
    assert data["thread"] == "ada" and data["answer"] == "Your name is Ada."
    assert ("user", "My name is Ada.") in sent(mock_server, 1)
    # `agent chat --session ada` loads the same memory: the REPL sees both turns
    from io import StringIO

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from agentcli.cli.repl import ChatRepl
    from agentcli.config import CHAT_AGENT as CHAT_DEFAULT_AGENT
    from agentcli.config import Settings
    from agentcli.models.fake import FakeChatModel

    llm = FakeChatModel([final("Ada, twice")])
    buf = StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("again?\r\x04")
        ChatRepl(Settings(agent=CHAT_DEFAULT_AGENT), Store(db), lambda s: llm, session="ada",
                 console=Console(file=buf, width=120), input=pipe, output=DummyOutput()).loop()
    assert "Resumed session 'ada': 2 earlier turn(s)" in buf.getvalue()
    contents = [m.content for m in llm.requests[0].messages]
    assert "What is my name?" in contents and "Your name is Ada." in contents
    # ... and a run on the thread now sees the chat turn too
    mock_server.add_reply(final("ok"))
    run(mock_server, db, "--thread", "ada", "last one")
    assert ("user", "again?") in sent(mock_server, 2)


def test_continue_without_any_run_and_both_flags_are_usage_errors(mock_server: Any,
                                                                 tmp_path: Path) -> None:
    result = run(mock_server, tmp_path / "a.db", "--continue", "more?")
    assert result.exit_code == 2
    assert "no earlier run is logged" in result.stderr
    both = run(mock_server, tmp_path / "a.db", "--continue", "--thread", "x", "more?")
    assert both.exit_code == 2 and "pass one" in both.stderr
    assert mock_server.requests == []


def test_agent_without_memory_on_a_thread_warns(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: fine")
    result = run(mock_server, tmp_path / "a.db", "--thread", "t", "-a",
                 "chat-zero-shot-react-description", "hi")
    assert result.exit_code == 0
    assert "cannot use memory" in result.stderr


def test_continue_after_the_session_was_deleted_starts_from_that_run(mock_server: Any,
                                                                    tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    mock_server.add_reply(final("first"))
    run(mock_server, db, "--thread", "gone", "q1")
    assert runner.invoke(app, ["sessions", "rm", "gone", "--db", str(db)]).exit_code == 0
    mock_server.add_reply(final("second"))
    assert run(mock_server, db, "-C", "q2").stdout == "second\n"
    assert ("assistant", "first") in sent(mock_server, 1)
    assert [s.name for s in Store(db).sessions()] == ["run-1"]


def test_a_turn_stopped_by_a_limit_is_remembered_as_unanswered(mock_server: Any,
                                                               tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    mock_server.add_reply("Thought: compute\nAction: Calculator\nAction Input: 2+2")
    first = run(mock_server, db, "--thread", "t", "--max-iterations", "1",
                "--early-stopping", "force", "add two and two")
    assert first.exit_code == 3 and first.stdout == ""
    mock_server.add_reply(final("done"))
    assert run(mock_server, db, "--thread", "t", "try again").stdout == "done\n"
    replies = [text for role, text in sent(mock_server, 1) if role == "assistant"]
    assert replies == ["(no answer: the agent used all its steps (--max-iterations) without "
                       "reaching an answer)"]
    assert "Agent stopped" not in json.dumps(mock_server.requests[1].body)


def test_a_summary_memory_call_is_counted_in_the_run(mock_server: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary of a turn is a model call of the run: its tokens are in the run's usage
    (``--json``), its model events in the trace (``--trace``), and the next turn reads it."""
    monkeypatch.setenv("AGENT_MEMORY", "summary")
    db, trace = tmp_path / "a.db", tmp_path / "trace.jsonl"
    mock_server.add_reply(final("Hello Ada"), usage={"prompt_tokens": 11, "completion_tokens": 3})
    mock_server.add_reply("Ada-summary-42", usage={"prompt_tokens": 100, "completion_tokens": 7})
    result = run(mock_server, db, "--thread", "ada", "--json", "--trace", str(trace),
                 "My name is Ada.")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["answer"] == "Hello Ada"
    assert data["usage"] == {"prompt_tokens": 111, "completion_tokens": 10,
                             "total_tokens": 121, "model_calls": 2}
    assert "Progressively summarize" in sent(mock_server, 1)[-1][1]
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    ends = [e for e in events if e["event"] == "llm_end"]
    assert events[-1]["event"] == "chain_end"  # the summary is asked within the run
    assert len(ends) == 2 and "Ada-summary-42" in json.dumps(ends[-1])
    [logged] = Store(db).turns("ada")
    assert logged["answer"] == "Hello Ada"
    mock_server.add_reply(final("Your name is Ada."))
    again = run(mock_server, db, "--thread", "ada", "--json", "Who am I?")
    assert again.exit_code == 0, again.output  # no summary reply (an error): the turn stands
    assert json.loads(again.stdout)["answer"] == "Your name is Ada."
    assert "Ada-summary-42" in json.dumps(mock_server.requests[2].body["messages"])
