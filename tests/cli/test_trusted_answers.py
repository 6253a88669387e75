"""Answers a user can trust (issue 31), through the real ``agent`` command on the mock server:
tool calls survive small-model noise, the Calculator computes what it is given, and nothing
that is not an answer is printed as one (exit 0 only with an answer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

QUESTION = "What is 120 divided by 4?"


def agent(server: Any, tmp_path: Path, *args: str, question: str = QUESTION,
          agent_type: str = "tool-calling") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "AGENT_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"), HOME=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", "-a", agent_type,
         *args, question], env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, cwd=tmp_path)


def calc(arguments: Any) -> dict[str, Any]:
    return {"name": "Calculator", "arguments": arguments}


def bodies(server: Any) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def observations(out: dict[str, Any]) -> list[str]:
    return [str(s["observation"]) for s in out["steps"]]


def test_schema_keywords_beside_the_argument_are_dropped(mock_server: Any,
                                                         tmp_path: Path) -> None:
    mock_server.add_reply("", tool_calls=[calc({"input": "120 / 4", "required": ["input"],
                                                "type": "object"})])
    mock_server.add_reply("30")
    proc = agent(mock_server, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert observations(out) == ["Answer: 30.0"] and out["answer"] == "30"


def test_a_schema_as_the_value_gets_the_exact_shape_to_send(mock_server: Any,
                                                            tmp_path: Path) -> None:
    mock_server.add_reply("", tool_calls=[calc(
        {"input": {"type": "string", "description": "7 * 250"}})])
    mock_server.add_reply("", tool_calls=[calc({"input": "7 * 250"})])
    mock_server.add_reply("1750")
    proc = agent(mock_server, tmp_path, "--json", question="7 cakes of 250 grams: grams?")
    assert proc.returncode == 0, proc.stderr
    refused, answered = observations(json.loads(proc.stdout))
    assert refused.startswith("Error: Calculator: argument 'input' must be string")
    assert refused.endswith('send the arguments as {"input": "7 * 250"}')
    assert "\n" not in refused and "dict" not in refused  # never a stringified dict
    assert answered == "Answer: 1750"


def test_a_tool_call_as_text_in_the_answer_now_reply_is_no_answer(mock_server: Any,
                                                                  tmp_path: Path) -> None:
    """The blob seen on a real server ('{"name": "Calculator", "arguments": ...}' printed as
    the answer, exit 0) now ends the run without an answer: exit 3, answer null."""
    blob = json.dumps({"name": "Calculator", "arguments": json.dumps({"input": "30.0"})})
    mock_server.add_reply("", tool_calls=[calc({"input": "120 / 4"})])
    for _ in range(8):  # every later reply, answer-now requests included, is the blob
        mock_server.add_reply(blob)
    proc = agent(mock_server, tmp_path, "--json")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] in ("stalled", "no_answer")
    assert observations(out)[0] == "Answer: 30.0"
    sent = bodies(mock_server)
    # the answer is asked for at the first call taking the result as its input, without tools
    assert "tools" not in sent[2] and "You have the result you need" in json.dumps(sent[2])
    mock_server.add_reply("", tool_calls=[calc({"input": "120 / 4"})])
    for _ in range(8):
        mock_server.add_reply(blob)
    plain = agent(mock_server, tmp_path)
    assert plain.returncode == 3 and plain.stdout == ""


def test_the_result_as_input_asks_for_the_answer_at_once(mock_server: Any,
                                                         tmp_path: Path) -> None:
    mock_server.add_reply("", tool_calls=[calc({"input": "120 / 4"})])
    mock_server.add_reply("", tool_calls=[calc({"input": "30.0"})])  # the result as input
    mock_server.add_reply("30")
    proc = agent(mock_server, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] == "30" and out["stop_reason"] == "finished"
    assert observations(out) == ["Answer: 30.0"]  # the second call was not run
    assert len(bodies(mock_server)) == 3


def test_an_empty_reply_after_a_tool_result_is_no_answer(mock_server: Any,
                                                         tmp_path: Path) -> None:
    mock_server.add_reply("", tool_calls=[calc({"input": "2 ** 5 + 3 ** 2"})])
    mock_server.add_reply("")  # empty after the result
    mock_server.add_reply("")  # and empty again when asked for the answer
    proc = agent(mock_server, tmp_path, "--json", question="2 to the power of 5, plus 3 "
                 "squared?")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"
    assert len(bodies(mock_server)) == 3


def test_an_empty_reply_then_the_answer_when_asked_exits_0(mock_server: Any,
                                                           tmp_path: Path) -> None:
    mock_server.add_reply("", tool_calls=[calc({"input": "2 ** 5 + 3 ** 2"})])
    mock_server.add_reply("")
    mock_server.add_reply("41")
    proc = agent(mock_server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "41"


def test_the_question_echoed_is_no_answer(mock_server: Any, tmp_path: Path) -> None:
    """The echo gets the one answer-now request (issue 39), then exit 3."""
    mock_server.add_reply(QUESTION)
    mock_server.add_reply(QUESTION)
    proc = agent(mock_server, tmp_path, "--json")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"
    sent = bodies(mock_server)
    assert len(sent) == 2 and "tools" not in sent[1]


def test_a_bare_number_for_a_two_part_question_is_that_number(mock_server: Any,
                                                              tmp_path: Path) -> None:
    """'15' for 'What is 2 + 3? Multiply that by 10.': the Calculator evaluates 15, never
    the question (which gave 5 before issue 31)."""
    mock_server.add_reply('{"action": "Calculator", "action_input": "15"}')
    mock_server.add_reply('{"action": "Calculator", "action_input": "three cubed plus one"}')
    mock_server.add_reply("```text\n4\n```")  # the translation guesses: refused, not run
    mock_server.add_reply('{"action": "Final Answer", "action_input": "50"}')
    proc = agent(mock_server, tmp_path, "--json", question="What is 2 + 3? Multiply that by 10.",
                 agent_type="chat-zero-shot-react-description")
    assert proc.returncode == 0, proc.stderr
    bare, words = observations(json.loads(proc.stdout))
    assert bare == "Answer: 15"
    assert words.startswith("Error: the Calculator cannot read 'three cubed plus one'")
    assert "Answer" not in words and "\n" not in words


def test_hex_and_big_integers(mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply("", tool_calls=[calc({"input": "0x10 + 1"})])
    mock_server.add_reply("", tool_calls=[calc({"input": "9007199254740993 - 9007199254740992"})])
    mock_server.add_reply("17 and 1")
    proc = agent(mock_server, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert observations(json.loads(proc.stdout)) == ["Answer: 17", "Answer: 1"]


def test_batch_handles_an_empty_reply_after_a_tool_result_the_same(
        mock_server: Any, tmp_path: Path) -> None:
    """``agent batch``: the same contract as ``agent run`` (answer null, the stop reason)."""
    mock_server.add_reply("", tool_calls=[calc({"input": "2 ** 5 + 3 ** 2"})])
    mock_server.add_reply("")
    mock_server.add_reply("")
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "q1", "input": "2**5 + 3**2?"}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "AGENT_"))}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"), HOME=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "batch", "in.jsonl", "-o", "out.jsonl", "-j", "1",
         "-m", "openai/small", "-a", "tool-calling"], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    line = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert line["answer"] is None and line["stop_reason"] == "no_answer", proc.stderr


def test_a_tool_error_copied_as_the_answer_is_no_answer(mock_server: Any,
                                                        tmp_path: Path) -> None:
    """Seen on the bench: the Calculator's error line given back as the final answer."""
    mock_server.add_reply('{"action": "Calculator", "action_input": "hours.txt"}')
    error = "Error: attribute is not allowed in a math expression"
    for _ in range(3):
        mock_server.add_reply(json.dumps({"action": "Final Answer", "action_input": error}))
    proc = agent(mock_server, tmp_path, "--json", agent_type="chat-zero-shot-react-description")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"


@pytest.mark.parametrize("copied", ["<the result>", "the result", "your answer to the user"])
def test_the_prompt_examples_placeholder_copied_is_no_answer(mock_server: Any, tmp_path: Path,
                                                             copied: str) -> None:
    """SmolLM2 copied the compact prompt's worked example (`42`) as its answer: the example
    now shows no result, only a placeholder, and a copied placeholder is never an answer."""
    copied = json.dumps({"action": "Final Answer", "action_input": copied})
    for _ in range(4):
        mock_server.add_reply(copied)
    proc = agent(mock_server, tmp_path, "--json", "-m", "openai/SmolLM2-135M",  # compact
                 agent_type="chat-zero-shot-react-description",
                 question="How many legs does a spider have?")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] is None and out["stop_reason"] == "no_answer"
    assert "Final Answer: " not in proc.stderr  # nothing shown as an answer
    prompt = json.dumps(bodies(mock_server)[0]["messages"])
    assert "Answer: <the result>" in prompt  # the compact prompt was sent
    assert len(bodies(mock_server)) == 2  # the reply, then the one answer-now request


def test_a_broken_final_answer_blob_is_no_answer(mock_server: Any, tmp_path: Path) -> None:
    """Seen on the bench (chat-conversational, SmolLM2, main 697f723): after the result, an
    unclosed blob that ran on into a copy of the prompt was printed as the answer, exit 0."""
    mock_server.add_reply(json.dumps({"action": "Calculator", "action_input": "17 + 38"}))
    broken = ('{ "action": "Final Answer", "action_input": "55 }\nYou are a helpful '
              "assistant. Tools:\nCalculator: A calculator.\n\nQuestion: What is 17 + 38?")
    for _ in range(4):
        mock_server.add_reply(broken)
    proc = agent(mock_server, tmp_path, "--json", "-m", "openai/SmolLM2-135M",
                 agent_type="chat-conversational-react-description", question="What is 17 + 38?")
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout)["answer"] is None
