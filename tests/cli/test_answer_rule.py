"""The one answer rule (issue 39), through the real ``agent`` command on the mock server: a
reply is an answer when it adds something to what the run was given, never refused for its
value; a non-answer gets the one answer-now request, then exit 3 and ``answer: null``; a bare
calculation is a visible Calculator step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.math_words import ACCEPTED_FORMS

TEXT, CALLING = "zero-shot-react-description", "tool-calling"
BLOBS = "chat-zero-shot-react-description"  # the default type: JSON blobs
MINUTES = "How many minutes are in 4 hours?"


def agent(server: Any, tmp_path: Path, question: str, *args: str,
          agent_type: str = CALLING, model: str = "openai/small",
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_")) and k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"), HOME=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", model, "-a", agent_type, *args,
         question], env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, cwd=tmp_path)


def final(text: str, agent_type: str) -> str:
    """A reply giving ``text`` as the final answer, as this agent type writes one."""
    if agent_type == BLOBS:
        return json.dumps({"action": "Final Answer", "action_input": text})
    return text if agent_type == CALLING else f"Thought: done.\nFinal Answer: {text}"


def call(server: Any, agent_type: str, tool: str, tool_input: str) -> None:
    if agent_type == CALLING:
        server.add_reply("", tool_calls=[{"name": tool, "arguments": {"input": tool_input}}])
    else:
        server.add_reply(f"Thought: I use {tool}.\nAction: {tool}\nAction Input: {tool_input}")


def bodies(server: Any) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def answer_now_asked(body: dict[str, Any]) -> bool:
    """The request is the answer-now one: no tools offered, the model told to answer now."""
    text = json.dumps(body["messages"])
    return "tools" not in body and ("answer the original question now" in text
                                    or "Answer my question now" in text)


@pytest.mark.parametrize("agent_type", [TEXT, CALLING])
def test_a_right_answer_is_never_refused_for_its_value(mock_server: Any, tmp_path: Path,
                                                       agent_type: str) -> None:
    """`10.73` for 'What is 3.7 times 2.9?' ended exit 3 while the prompt's example held
    10.73; the compact prompt (SmolLM2) is the one that held it."""
    call(mock_server, agent_type, "Calculator", "3.7 * 2.9")
    mock_server.add_reply(final("10.73", agent_type))
    proc = agent(mock_server, tmp_path, "What is 3.7 times 2.9?", "--json",
                 agent_type=agent_type, model="openai/SmolLM2-135M")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] == "10.73" and out["stop_reason"] == "finished"
    assert [s["observation"] for s in out["steps"]] == ["Answer: 10.73"]


@pytest.mark.parametrize("agent_type", [TEXT, CALLING])
def test_a_restatement_is_refused_then_exit_3(mock_server: Any, tmp_path: Path,
                                              agent_type: str) -> None:
    for _ in range(2):
        mock_server.add_reply(final("4 hours", agent_type))
    proc = agent(mock_server, tmp_path, MINUTES, "--json", agent_type=agent_type)
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"
    sent = bodies(mock_server)
    assert len(sent) == 2 and answer_now_asked(sent[1])  # the one answer-now request
    for _ in range(2):
        mock_server.add_reply(final("4 hours", agent_type))
    plain = agent(mock_server, tmp_path, MINUTES, agent_type=agent_type)
    assert plain.returncode == 3 and plain.stdout == ""
    assert "Stopped: the model's reply held no answer" in plain.stderr
    assert "The model's reply is no answer: only words of the question." in plain.stderr


def test_a_restatement_then_the_answer_when_asked_exits_0(mock_server: Any,
                                                          tmp_path: Path) -> None:
    mock_server.add_reply("4 hours")
    mock_server.add_reply("240")
    proc = agent(mock_server, tmp_path, MINUTES)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "240\n"


@pytest.mark.parametrize("agent_type", [TEXT, CALLING])
def test_the_calculators_hint_copied_is_refused(mock_server: Any, tmp_path: Path,
                                                agent_type: str) -> None:
    """After an unreadable input the model copied part of the Calculator's hint."""
    call(mock_server, agent_type, "Calculator", "the total of sales")
    mock_server.add_reply("```text\nthe total of sales\n```")  # the Calculator's translation
    copied = ACCEPTED_FORMS[:ACCEPTED_FORMS.index("(") + 1]  # a piece, cut mid-sentence
    for _ in range(2):
        mock_server.add_reply(final(copied, agent_type))
    proc = agent(mock_server, tmp_path, "What is the total of sales?", "--json",
                 agent_type=agent_type)
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"
    assert ACCEPTED_FORMS in out["steps"][0]["observation"]  # what it copied from
    assert answer_now_asked(bodies(mock_server)[-1])


@pytest.mark.parametrize("agent_type", [TEXT, CALLING])
def test_a_bare_calculation_is_a_calculator_step(mock_server: Any, tmp_path: Path,
                                                 agent_type: str) -> None:
    expression = "300 - (1/3 * 300) - 20"
    mock_server.add_reply(final(expression, agent_type))
    mock_server.add_reply(final("180", agent_type))
    question = "A tank holds 300 liters; a third leaks out, then 20 are used. How much is left?"
    proc = agent(mock_server, tmp_path, question, "--json", agent_type=agent_type)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] == "180" and out["stop_reason"] == "finished"
    (step,) = out["steps"]
    assert step["tool"] == "Calculator" and step["tool_input"] == expression
    assert step["observation"] == "Answer: 180.0"
    sent = bodies(mock_server)
    assert len(sent) == 2 and answer_now_asked(sent[1])
    assert "Answer: 180.0" in json.dumps(sent[1]["messages"])  # the result given back
    # the trace shows the step, as any other tool call
    plain = tmp_path / "plain"
    plain.mkdir()
    mock_server.add_reply(final(expression, agent_type))
    mock_server.add_reply(final("180", agent_type))
    shown = agent(mock_server, plain, question, agent_type=agent_type)
    assert shown.returncode == 0 and shown.stdout == "180\n", shown.stderr
    assert "Calculator" in shown.stderr and expression in shown.stderr


@pytest.mark.parametrize("expression", ["3 × 4", "$300 - $100", "= 1,000 + 200", "12 ÷ 4"])
def test_a_calculation_in_the_calculators_notations_is_a_step(mock_server: Any, tmp_path: Path,
                                                              expression: str) -> None:
    """What the loaded Calculator reads as arithmetic (×, ÷, $, 1,000, a leading =) is a
    calculation too: the Calculator runs the model's own text, then the answer is asked."""
    mock_server.add_reply(f"Final Answer: {expression}")
    mock_server.add_reply("Final Answer: It comes to that result.")
    proc = agent(mock_server, tmp_path, "How much is it?", "--json",
                 agent_type="zero-shot-react-description")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    (step,) = out["steps"]
    assert step["tool"] == "Calculator" and step["tool_input"] == expression.lstrip("= ")
    assert step["observation"].startswith("Answer: ")
    assert len(bodies(mock_server)) == 2


def test_a_tool_echoing_its_input_lends_a_restatement_nothing(mock_server: Any,
                                                             tmp_path: Path) -> None:
    """The model sends the question's number to the Calculator and gets it back: the echo
    adds nothing, so the number alone stays a restatement (asked once more, then exit 3); a
    computed result (`7` from `7 * 1`) is the answer."""
    question = "A price rose from 50 to 65 dollars. By how many dollars did it rise?"
    call(mock_server, CALLING, "Calculator", "65")
    for _ in range(2):
        mock_server.add_reply("65")
    proc = agent(mock_server, tmp_path, question, "--json")
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout)["answer"] is None and len(bodies(mock_server)) == 3
    computed = tmp_path / "computed"
    computed.mkdir()
    call(mock_server, CALLING, "Calculator", "7 * 1")
    mock_server.add_reply("7")
    proc = agent(mock_server, computed, "What is 7 times 1?", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "7"


def test_a_bare_calculation_without_the_calculator_is_no_answer(mock_server: Any,
                                                                tmp_path: Path) -> None:
    """No Calculator loaded: nothing computes it, so it is no answer (asked once more)."""
    for _ in range(2):
        mock_server.add_reply("300 - (1/3 * 300) - 20")
    proc = agent(mock_server, tmp_path, "How much is left?", "--json", "-t", "current_datetime")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["steps"] == []
    assert len(bodies(mock_server)) == 2


BLOB = json.dumps({"name": "terminal", "arguments": {"command": "ls"}})


@pytest.mark.parametrize("reply", [BLOB, MINUTES])
def test_a_blob_or_an_echo_gets_the_answer_now_request(mock_server: Any, tmp_path: Path,
                                                       reply: str) -> None:
    mock_server.add_reply(reply)
    mock_server.add_reply("240")
    proc = agent(mock_server, tmp_path, MINUTES, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] == "240" and out["recovered"] == "no_answer"
    sent = bodies(mock_server)
    assert len(sent) == 2 and answer_now_asked(sent[1])


HOSTILE = {
    "zero-width only": "\u200b\u2060\ufeff",
    "ANSI only": "\x1b[2K\x1b[1G\x1b]0;t\x07",
    "fence with a tool call": "I will list the files.\n```json\n"
                              '{"name": "terminal", "arguments": {"command": "rm -rf /"}}\n```',
    "the question in quotes": f'"{MINUTES}"',
    "a placeholder": "your answer to the user",
    "a labelled restatement": "Final Answer: 4 hours",  # the label is form, not words
    "a tagged echo": f"Q: <q>{MINUTES}</q>",
}


@pytest.mark.parametrize("agent_type", [TEXT, BLOBS, CALLING])
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_or_broken_replies_are_refused(mock_server: Any, tmp_path: Path,
                                               agent_type: str, kind: str) -> None:
    for _ in range(2):
        mock_server.add_reply(final(HOSTILE[kind], agent_type))
    proc = agent(mock_server, tmp_path, MINUTES, "--json", agent_type=agent_type)
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"
    assert len(bodies(mock_server)) == 2


def test_chat_refuses_a_blob_and_keeps_no_answer(mock_server: Any, tmp_path: Path) -> None:
    """`agent chat` (piped): the blob is never shown (its streamed words are held back until
    they add something) nor kept in the session's history."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_")) and k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               HOME=str(tmp_path))
    for _ in range(2):
        mock_server.add_reply(BLOB)
    mock_server.add_reply("240")
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "chat", "-m", "openai/small", "-a", CALLING,
         "--db", str(tmp_path / "a.db")], input=f"{MINUTES}\n{MINUTES}\n", env=env,
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Final Answer:") == 1 and "Final Answer:\n240\n" in proc.stdout
    assert "terminal" not in proc.stdout  # its streamed words were held back: no answer
    assert "held no answer" in proc.stdout + proc.stderr
    sent = bodies(mock_server)
    assert len(sent) == 3 and answer_now_asked(sent[1])
    assert BLOB not in json.dumps(sent[2]["messages"])  # the history holds no blob


def test_chat_says_recovered_only_of_the_turn_that_recovered(mock_server: Any,
                                                           tmp_path: Path) -> None:
    """A turn that ended with no answer left its stop behind: the next turn, answered at
    once, was labelled "Recovered: ... asked once more"."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_")) and k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               HOME=str(tmp_path))
    for reply in ("4 hours", "4 hours", "60"):
        mock_server.add_reply(reply)
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "chat", "-m", "openai/small", "-a", CALLING,
         "--db", str(tmp_path / "a.db")], input=f"{MINUTES}\nAnd in 1 hour?\n", env=env,
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.split("you> And in 1 hour?")
    assert "held no answer" in first and "Final Answer:" not in first
    assert "Final Answer:\n60\n" in second and "Recovered" not in proc.stdout
    assert len(bodies(mock_server)) == 3


def test_batch_applies_the_rule(mock_server: Any, tmp_path: Path) -> None:
    """`agent batch`: a restatement, refused twice, is a row with no answer and `no_answer`."""
    for _ in range(2):
        mock_server.add_reply("4 hours")
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "q1", "input": MINUTES}) + "\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_")) and k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"), HOME=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "batch", "in.jsonl", "-o", "out.jsonl", "-j", "1",
         "-m", "openai/small", "-a", CALLING], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    line = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert line["answer"] is None and line["stop_reason"] == "no_answer", proc.stderr
    assert len(bodies(mock_server)) == 2


def test_a_reply_drawn_from_piped_text_or_a_fragment_is_an_answer(mock_server: Any,
                                                                  tmp_path: Path) -> None:
    """`cat report | agent "What is the total?"` answered `42` (a number of the piped report)
    was refused as a restatement: piped text and fragments are material given to work on, and
    a reply drawn from them picks a part out, as a tool's result does."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "AGENT_")) and k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"), HOME=str(tmp_path))
    (tmp_path / "notes.txt").write_text("Meeting with Alice on Monday.\n", encoding="utf-8")
    runs = [(["What is the total?"], "Report\nTotal: 42\nEnd\n", "42"),
            (["-f", "notes.txt", "Who is the meeting with?"], None, "Alice"),
            (["What is the largest of 3, 9 and 4?"], None, "9")]  # one item of a list
    for args, piped, reply in runs:
        mock_server.add_reply(reply)  # refused, it would meet no reply for the answer-now
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", "-a", CALLING,
             "-t", "current_datetime", *args], env=env, capture_output=True, text=True,
            timeout=120, input=piped, stdin=None if piped else subprocess.DEVNULL, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"{reply}\n"
    assert len(bodies(mock_server)) == len(runs)  # one request each: no answer-now request
    mock_server.add_reply("4 hours")
    mock_server.add_reply("4 hours")
    still = agent(mock_server, tmp_path, f"Context: none.\n\n{MINUTES}")
    assert still.returncode == 3  # the question's own words are still a restatement
    for _ in range(2):
        mock_server.add_reply("4 hours")
    asked = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", "-a", CALLING,
         "Answer briefly."], env=env, capture_output=True, text=True, timeout=120,
        input=f"{MINUTES}\n", cwd=tmp_path)
    assert asked.returncode == 3 and asked.stdout == ""  # a question piped in is asked
