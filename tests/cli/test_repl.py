"""`agent chat` driven for real through prompt-toolkit's pipe input (slash commands, memory,
sessions, errors, Ctrl-C), plus `agent sessions` and `agent logs` over the same store."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import memory_agent
import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner

from agentcli import agents
from agentcli.cli.app import app
from agentcli.cli.repl import ChatRepl
from agentcli.cli.slash import SlashCompleter
from agentcli.config import Settings
from agentcli.errors import ProviderError
from agentcli.models.base import BaseChatModel
from agentcli.models.fake import FakeChatModel
from agentcli.store import Store


@pytest.fixture(autouse=True)
def _memory_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in table with the test type's line added, for this file's tests only."""
    monkeypatch.setattr(agents, "BUILTIN_AGENTS", memory_agent.table())


ACTION = ('Thought: I need to compute.\nAction:\n```\n'
          '{"action": "Calculator", "action_input": "300 * 0.25"}\n```\n')
MEMORY_AGENT = memory_agent.NAME


def chat(
    db: Path,
    keys: str,
    llm: BaseChatModel | Callable[[Settings], BaseChatModel],
    *,
    session: str = "s",
    **settings: Any,
) -> tuple[str, ChatRepl]:
    """Type ``keys`` into a REPL and return what it printed."""
    factory = llm if callable(llm) and not isinstance(llm, BaseChatModel) else (
        lambda s: llm)
    buf = StringIO()
    options = {"agent": MEMORY_AGENT, "stream": True} | settings
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        repl = ChatRepl(Settings(**options), Store(db), factory, session=session,
                        console=Console(file=buf, width=120), input=pipe, output=DummyOutput())
        repl.loop()
    return buf.getvalue(), repl


def test_turn_with_tool_streams_and_traces_then_exits(tmp_path: Path) -> None:
    llm = FakeChatModel([ACTION, "Final Answer: 75"])
    out, _ = chat(tmp_path / "a.db", "What is 25% of 300?\r/exit\r", llm)
    assert "Action: Calculator  input: 300 * 0.25" in out
    assert "Observation: Answer: 75.0" in out
    assert "Final Answer: 75" in out  # the streamed tokens
    assert out.rstrip().endswith("75")


def test_resumed_session_remembers_an_earlier_turn(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    chat(db, "My name is Ada.\r\x04", FakeChatModel(["Final Answer: Hello Ada!"]))
    llm = FakeChatModel(["Final Answer: Your name is Ada."])
    out, _ = chat(db, "What is my name?\r\x04", llm)
    assert "Resumed session 's': 1 earlier turn(s)" in out
    sent = [(m.role, m.content) for m in llm.requests[0].messages]
    assert sent[1:3] == [("user", "My name is Ada."), ("assistant", "Hello Ada!")]
    assert sent[-1] == ("user", "What is my name?")
    other = FakeChatModel(["Final Answer: who?"])
    chat(db, "What is my name?\r\x04", other, session="fresh")
    assert len(other.requests[0].messages) == 2  # another session starts empty


def test_memory_clear_and_window(tmp_path: Path) -> None:
    llm = FakeChatModel(["Final Answer: a1", "Final Answer: a2", "Final Answer: a3"])
    out, _repl = chat(tmp_path / "a.db", "q1\rq2\r/memory\r/clear\r/memory\rq3\r\x04", llm,
                     memory="window", memory_k=1)
    assert "window memory, 2 message(s):\nuser: q2\nassistant: a2" in out
    assert "window memory, 0 message(s):" in out
    assert len(llm.requests[2].messages) == 2  # cleared before q3
    assert Store(tmp_path / "a.db").session("s").memory_state["turns"] == [["q3", "a3"]]


def test_agent_without_memory_warns_loudly(tmp_path: Path) -> None:
    llm = FakeChatModel(["Final Answer: one", "Final Answer: two"])
    out, _ = chat(tmp_path / "a.db", "q1\r/memory\rq2\r\x04", llm,
                  agent="chat-zero-shot-react-description")
    assert "WARNING: agent type chat-zero-shot-react-description cannot use memory" in out
    assert "does not read memory; the model sees none of this" in out
    out, _ = chat(tmp_path / "b.db", "\x04", llm, agent="chat-zero-shot-react-description",
                  memory="none")
    assert "WARNING" not in out


def test_slash_commands(tmp_path: Path) -> None:
    built: list[str | None] = []

    def factory(s: Settings) -> BaseChatModel:
        built.append(s.model)
        return FakeChatModel(["Final Answer: first", "Final Answer: again"], name=s.model or "x")

    save = tmp_path / "chat.md"
    keys = ("/help\r/tools\r/tools add nosuch\r/tools rm llm-math\r/tools\r/tools rm llm-math\r"
            "/tools add llm-math\r/verbose off\r/model openai/other\r"
            "/agent zero-shot-react-description\r"
            f"/agent {MEMORY_AGENT}\r/agent nope\r/nonsense\r/sesions\r"
            "hello\r/retry\r/session other\r/sessions\r/session s\r"
            f"/save {save}\r/exit\r")
    out, repl = chat(tmp_path / "a.db", keys, factory, model="fake/one")
    assert "/tools [add|rm|allow NAME]" in out and "Ctrl-C cancels a run" in out
    assert "error: unknown tool 'nosuch'" in out
    assert "no tools loaded" in out and "WARNING: llm-math is not loaded" in out
    assert repl.settings.tools == ["llm-math"]
    assert built == ["fake/one", "openai/other"]
    assert "WARNING: agent type zero-shot-react-description cannot use memory" in out
    assert "unknown agent type 'nope'" in out
    assert "unknown command /nonsense" in out and "did you mean /sessions?" in out
    assert "Observation" not in out  # verbose off
    assert "  s  (1 turns)" in out and "* other  (0 turns)" in out
    text = save.read_text()
    assert text.count("**You:** hello") == 1 and "**Agent:** again" in text  # retried once


def test_run_error_is_one_line_and_repl_goes_on(tmp_path: Path) -> None:
    llm = FakeChatModel([ProviderError("HTTP 500 from mock", provider="openai"),
                         "Final Answer: fine"])
    out, _repl = chat(tmp_path / "a.db", "q1\rq2\r\x04", llm)
    assert "error: HTTP 500 from mock" in out
    assert "Traceback" not in out
    assert [t["question"] for t in Store(tmp_path / "a.db").turns("s")] == ["q2"]


def test_multiline_input_with_trailing_backslash(tmp_path: Path) -> None:
    llm = FakeChatModel(["Final Answer: ok"])
    chat(tmp_path / "a.db", "line one\\\rline two\r\x04", llm)
    assert llm.requests[0].messages[-1].content == "line one\nline two"


def test_completion_of_commands_tools_and_agents(tmp_path: Path) -> None:
    _, repl = chat(tmp_path / "a.db", "\x04", FakeChatModel([]))
    completer = SlashCompleter(repl)

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/se") == ["/session", "/sessions"]
    assert "llm-math" in complete("/tools add l")
    assert complete("/tools ") == ["add", "rm", "allow"]
    assert MEMORY_AGENT in complete("/agent test")
    assert "openai/" in complete("/model o")
    assert complete("/verbose o") == ["on", "off"]
    assert complete("hello") == []


def test_ctrl_c_cancels_a_slow_run_and_keeps_state(tmp_path: Path, mock_server: Any) -> None:
    from agentcli.runtime import build_model

    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test"}
    mock_server.add_reply("Final Answer: quick")
    mock_server.add_reply("Final Answer: too slow", delay=5)
    mock_server.add_reply("Final Answer: after")
    cancelled_at: list[float] = []

    def interrupt_when_the_slow_request_is_in() -> None:
        deadline = time.monotonic() + 10
        while len(mock_server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        cancelled_at.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C in a terminal sends

    thread = threading.Thread(target=interrupt_when_the_slow_request_is_in, daemon=True)
    thread.start()
    out, _repl = chat(tmp_path / "a.db", "first\rslow one\rthird\r\x04",
                      lambda s: build_model(s, env), model="openai/any")
    thread.join()
    assert cancelled_at  # the interrupt came while the slow reply was pending ...
    assert "Cancelled; back at the prompt" in out
    assert "too slow" not in out  # ... and the run was cancelled, not waited out
    store = Store(tmp_path / "a.db")
    assert [t["question"] for t in store.turns("s")] == ["first", "third"]
    assert [r["stop_reason"] for r in store.runs()] == ["finished", "interrupted", "finished"]
    third = mock_server.requests[2].body["messages"]
    assert [m["content"] for m in third[1:3]] == ["first", "quick"]  # memory intact


def test_run_is_logged_and_searchable(tmp_path: Path, mock_server: Any) -> None:
    runner = CliRunner()
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test"}
    mock_server.add_reply(ACTION)
    mock_server.add_reply("Final Answer: 75")
    result = runner.invoke(app, ["run", "What is 25% of 300?", "-m", "openai/any", "-q"],
                           env=env)
    assert result.exit_code == 0, result.stderr
    chat(tmp_path / "unused.db", "\x04", FakeChatModel([]))
    logs = runner.invoke(app, ["logs", "--jsonl", "-q", "75.0"])  # found in a step
    rows = [json.loads(line) for line in logs.stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["question"] == "What is 25% of 300?"
    assert rows[0]["steps"][0]["observation"] == "Answer: 75.0"
    assert rows[0]["model"] and rows[0]["prompt_tokens"] > 0
    table = runner.invoke(app, ["logs", "-n", "5"])
    assert "What is 25% of 300?" in table.stdout
    assert runner.invoke(app, ["logs", "-q", "nothing-like-this"]).exit_code == 0


def test_sessions_commands(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    chat(db, "q1\r\x04", FakeChatModel([ACTION, "Final Answer: a1"]), session="work")
    runner = CliRunner()
    listed = runner.invoke(app, ["sessions", "list", "--json", "--db", str(db)])
    assert [r["name"] for r in json.loads(listed.stdout)] == ["work"]
    shown = runner.invoke(app, ["sessions", "show", "work", "--db", str(db)])
    assert "**You:** q1" in shown.stdout and "Calculator" in shown.stdout
    exported = runner.invoke(app, ["sessions", "export", "work", "--json", "--db", str(db)])
    assert json.loads(exported.stdout)["memory"]["turns"] == [["q1", "a1"]]
    assert runner.invoke(app, ["sessions", "rm", "work", "--db", str(db)]).exit_code == 0
    missing = runner.invoke(app, ["sessions", "show", "work", "--db", str(db)])
    assert missing.exit_code == 2 and "no session named 'work'" in missing.stderr


@pytest.mark.parametrize("value", ["forever", "BUFFER"])
def test_bad_memory_setting_is_a_usage_error(value: str) -> None:
    result = CliRunner().invoke(app, ["chat", "--memory", value])
    assert result.exit_code == 2
    assert "'memory' must be one of auto, none, buffer" in result.stderr


def test_summary_memory_in_the_repl_and_toolbar(tmp_path: Path) -> None:
    llm = FakeChatModel(["Final Answer: Hi Ada", "The user is Ada.", "Final Answer: Ada",
                         "The user is Ada; asked her name."], name="fake-model")
    _, repl = chat(tmp_path / "a.db", "I am Ada\rWho am I?\r\x04", llm, memory="summary")
    assert llm.requests[2].messages[1].content == (
        "Summary of the conversation so far:\nThe user is Ada.")
    assert "Progressively summarize" in llm.requests[1].messages[0].content
    toolbar = repl.toolbar(200)
    for part in ("model fake-model", f"agent {MEMORY_AGENT}", "session s", "memory summary",
                 "tokens"):
        assert part in toolbar
    assert repl.tokens > 0
    narrow = repl.toolbar(80)  # an 80-column terminal: nothing important is cut
    assert len(narrow) <= 80 and "memory summary" in narrow and f"{repl.tokens:,} tokens" in narrow
    assert "fake-model" in narrow
    assert len(repl.toolbar(40)) <= 40


def test_run_log_failure_is_a_warning_not_a_failed_run(tmp_path: Path, mock_server: Any) -> None:
    mock_server.add_reply("Final Answer: fine")
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test",
           "AGENT_DB": str(tmp_path)}  # a directory: SQLite cannot open it
    result = CliRunner().invoke(app, ["run", "q", "-m", "openai/any", "-q"], env=env)
    assert result.exit_code == 0
    assert result.stdout == "fine\n"
    assert result.stderr.startswith("warning: could not log this run:")
    assert result.stderr.count("\n") == 1


def test_real_conversational_agent_remembers(tmp_path: Path) -> None:
    def final(text: str) -> str:
        return f'```json\n{{"action": "Final Answer", "action_input": "{text}"}}\n```'

    db = tmp_path / "c.db"
    agent = "chat-conversational-react-description"
    chat(db, "My name is Ada.\r\x04", FakeChatModel([final("Hello Ada!")]), agent=agent)
    llm = FakeChatModel([final("Your name is Ada.")])
    out, repl = chat(db, "What is my name?\r\x04", llm, agent=agent)
    assert "cannot use memory" not in out
    assert repl.uses_memory
    sent = "\n".join(m.content for m in llm.requests[0].messages)
    assert "My name is Ada." in sent and "Hello Ada!" in sent
    assert "Your name is Ada." in out


def test_chat_defaults_to_a_memory_agent_type() -> None:
    from agentcli.agents import agent_class
    from agentcli.config import CHAT_AGENT as CHAT_DEFAULT_AGENT

    assert agent_class(CHAT_DEFAULT_AGENT).uses_memory


def test_memory_none_is_reported_as_none(tmp_path: Path) -> None:
    llm = FakeChatModel(["Final Answer: a1", "Final Answer: a2"])
    out, repl = chat(tmp_path / "a.db", "q1\rq2\r/memory\r\x04", llm, memory="none")
    assert "memory none: the model sees no earlier turns" in out
    assert "buffer memory" not in out
    assert repl.memory_label == "none" and "memory none" in repl.toolbar()
    assert "q1" not in "\n".join(m.content for m in llm.requests[1].messages)
    out, _ = chat(tmp_path / "a.db", "\x04", llm, memory="none")
    assert "(memory: none)" in out
