"""``agent chat`` reading a pipe (the real entry point, stdin and stdout piped): each question
is answered on the portal while the next lines are read. The transcript is the prompt's, turns
are answered and committed in order, Ctrl-C acts on the turn being answered (and is ignored
between turns, where it used to end the input), a summary memory still folds each turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.store import Store


def _env(server: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
    env.pop("COLUMNS", None)
    return env


def _chat(db: Path, server: Any, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "agentcli", "chat", "-m", "openai/any",
                             "--db", str(db), "--session", "s", *flags],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(server))


def _until(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _collect(stream: Any, into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:
            into.append(line)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_questions_blank_lines_and_commands_keep_their_order(mock_server: Any,
                                                             tmp_path: Path) -> None:
    for answer in ("one", "two", "three"):
        mock_server.add_reply(f"Final Answer: {answer}")
    proc = _chat(tmp_path / "a.db", mock_server)
    out, err = proc.communicate("first\n\n  second  \n/memory\nthird\\\nand more\n", timeout=120)
    assert proc.returncode == 0, err
    assert out == (  # byte for byte the prompt's transcript, the command after both answers
        "Session 's' (new). /help lists the commands.\n"
        "you> first\nFinal Answer: one\nyou> \nyou>   second  \nFinal Answer: two\n"
        "you> /memory\ntokens memory, 4 message(s):\nuser: first\nassistant: one\n"
        "user: second\nassistant: two\n"
        "you> third\nand more\nFinal Answer: three\n")
    store = Store(tmp_path / "a.db")
    assert [t["question"] for t in store.turns("s")] == ["first", "second", "third\nand more"]
    asked = [r.body["messages"][-1]["content"] for r in mock_server.requests]
    assert asked[-1] == "third\nand more" and asked[1] == "second"


def test_ctrl_c_cancels_the_turn_being_answered_and_the_chat_goes_on(
        mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("Final Answer: quick")
    mock_server.add_reply("Final Answer: too slow", delay=30)
    mock_server.add_reply("Final Answer: after")
    proc = _chat(tmp_path / "a.db", mock_server)
    assert proc.stdin is not None and proc.stdout is not None
    out: list[str] = []
    reader = _collect(proc.stdout, out)
    proc.stdin.write("first\nslow one\n")
    proc.stdin.flush()
    _until(lambda: len(mock_server.requests) >= 2, "the slow request")
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends: the turn in flight is cancelled
    _until(lambda: any("this turn was not saved" in line for line in out), "the cancel")
    proc.send_signal(signal.SIGINT)  # no turn is being answered: ignored, input still read
    time.sleep(0.3)
    proc.stdin.write("third\n")
    proc.stdin.close()
    status = proc.wait(timeout=120)
    reader.join(timeout=10)
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert status == 0, err
    text = "".join(out)
    assert "too slow" not in text  # cancelled, not waited out
    assert text.index("quick") < text.index("not saved") < text.index("after")
    store = Store(tmp_path / "a.db")
    assert [t["question"] for t in store.turns("s")] == ["first", "third"]
    assert [r["stop_reason"] for r in reversed(store.runs())] == [
        "finished", "interrupted", "finished"]
    third = mock_server.requests[2].body["messages"]
    assert [m["content"] for m in third[1:3]] == ["first", "quick"]  # memory intact


def test_summary_memory_folds_each_piped_turn(mock_server: Any, tmp_path: Path) -> None:
    for reply in ("Final Answer: Hi Ada", "The user is Ada.", "Final Answer: Ada",
                  "The user is Ada; asked her name."):
        mock_server.add_reply(reply)
    proc = _chat(tmp_path / "a.db", mock_server, "--memory", "summary")
    out, err = proc.communicate("I am Ada\nWho am I?\n", timeout=120)
    assert proc.returncode == 0, err
    assert "Ada" in out and "memory could not" not in out + err
    third = mock_server.requests[2].body["messages"]
    assert any(m["content"] == "Summary of the conversation so far:\nThe user is Ada."
               for m in third)
    info = Store(tmp_path / "a.db").session("s")
    assert info is not None
    assert info.memory_state == {"kind": "summary",
                                 "summary": "The user is Ada; asked her name."}


def test_a_second_ctrl_c_drops_a_turn_that_does_not_end(tmp_path: Path) -> None:
    """A turn that goes on after its cancel is dropped by the next Ctrl-C: nothing more of it
    is shown or kept, and the next question is answered."""
    import asyncio
    from io import StringIO

    from rich.console import Console

    from agentcli.cli.piped import PipedLines, answer_piped

    asked: list[str] = []
    ends: dict[str, bool] = {}  # question -> dropped() when its turn ended
    cancels: list[str] = []
    out = StringIO()

    class Repl:  # the two things answer_piped asks of a ChatRepl for questions
        console = Console(file=out, width=120)

        def echo(self, text: str) -> None:
            out.write(f"you> {text}\n")

        async def aask(self, question: str, dropped: Callable[[], bool]) -> None:
            asked.append(question)
            try:
                if question == "stuck":
                    await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancels.append(question)
                await asyncio.sleep(1)  # a run slow to wind down after its cancel
            ends[question] = dropped()

    def press_ctrl_c_twice() -> None:
        _until(lambda: asked == ["stuck"], "the stuck turn")
        os.kill(os.getpid(), signal.SIGINT)
        _until(lambda: cancels == ["stuck"], "the cancel")
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=press_ctrl_c_twice, daemon=True)
    thread.start()
    answer_piped(Repl(), PipedLines(StringIO("stuck\nnext\n")))  # type: ignore[arg-type]
    thread.join()
    assert asked == ["stuck", "next"]
    assert out.getvalue().splitlines() == [
        "you> stuck", "Cancelled; back at the prompt.", "you> next"]
    _until(lambda: "stuck" in ends, "the dropped turn's end", seconds=10)
    assert ends == {"next": False, "stuck": True}  # the dropped turn was told


def test_a_turn_that_fails_ends_the_chat_even_before_a_slash_command() -> None:
    """A slash command waits for the answers before it; when the answering ended on an error
    instead, that error is the chat's (it used to wait for the command's turn forever)."""
    from io import StringIO

    from rich.console import Console

    from agentcli.cli.piped import PipedLines, answer_piped

    class Repl:
        console = Console(file=StringIO(), width=120)

        def echo(self, text: str) -> None:
            pass

        async def aask(self, question: str, dropped: Callable[[], bool]) -> None:
            raise RuntimeError(f"broken turn: {question}")

    failed: list[BaseException] = []

    def chat() -> None:
        try:
            answer_piped(Repl(), PipedLines(StringIO("q\n/help\n")))  # type: ignore[arg-type]
        except BaseException as err:  # what ended it is the assertion
            failed.append(err)

    thread = threading.Thread(target=chat, daemon=True)
    thread.start()
    thread.join(60)  # a hang is the failure; the chat ends at once when it is fixed
    assert not thread.is_alive(), "the chat waited forever for a turn that had failed"
    assert [str(e) for e in failed] == ["broken turn: q"]
