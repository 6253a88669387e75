"""`agent serve` through the official `openai` client: the real command on a free loopback
port, the mock model server behind it."""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai_clients import client

README = Path(__file__).resolve().parents[2] / "README.md"
CALC = {"name": "Calculator", "arguments": {"input": "6*7"}}




def questions(mock_server: Any) -> list[str]:
    """The last user message of each model request the mock server received."""
    return [r.body["messages"][-1]["content"] for r in mock_server.requests
            if r.path.endswith("/chat/completions")]


def test_completion_is_the_agents_answer(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply("Paris is the capital of France.")
    served = serve("--agent", "tool-calling")
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "Capital of France?"}])
    assert done.choices[0].message.content == "Paris is the capital of France."
    assert done.choices[0].finish_reason == "stop"
    assert done.usage is not None and done.usage.total_tokens > 0
    assert questions(mock_server) == ["Capital of France?"]
    assert "agent_trace" not in (done.model_extra or {})  # the trace is opt-in


def test_streamed_completion(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply("Streaming works.")
    served = serve("--agent", "tool-calling")
    stream = client(served).chat.completions.create(
        model="agent", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Say something"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Streaming works."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


def test_tool_call_in_the_trace(serve: Any, mock_server: Any) -> None:
    served = serve("--agent", "tool-calling")
    # Non-streamed: the trace is a field, on request.
    mock_server.add_reply(tool_calls=[CALC])
    mock_server.add_reply("It is 42.")
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "What is 6 times 7?"}],
        extra_body={"agent_trace": True})
    assert done.choices[0].message.content == "It is 42."
    trace = (done.model_extra or {})["agent_trace"]
    starts = [e for e in trace if e["event"] == "tool_start"]
    assert [(e["tool"], e["tool_input"]) for e in starts] == [
        ("Calculator", {"input": "6*7"})]
    assert [e["observation"] for e in trace if e["event"] == "tool_end"] == ["Answer: 42"]
    # Streamed: the same events as SSE comments before the answer, when asked for.
    mock_server.add_reply(tool_calls=[CALC])
    mock_server.add_reply("Still 42.")
    body = {"model": "agent", "stream": True,
            "messages": [{"role": "user", "content": "And again?"}]}
    with httpx.stream("POST", f"{served.url}/chat/completions", json=body, timeout=60,
                      headers={**served.auth, "X-Agent-Trace": "1"}) as resp:
        lines = [line for line in resp.iter_lines() if line]
    comments = [json.loads(line.split(" ", 2)[2]) for line in lines
                if line.startswith(": agent_trace ")]
    assert any(e["event"] == "tool_start" and e["tool"] == "Calculator" for e in comments)
    answer_at = next(i for i, line in enumerate(lines) if "Still" in line)
    tool_at = next(i for i, line in enumerate(lines) if '"tool_start"' in line)
    assert tool_at < answer_at
    assert lines[-1] == "data: [DONE]"
    # Not asked for: no comments at all.
    mock_server.add_reply(tool_calls=[CALC])
    mock_server.add_reply("Quiet 42.")
    with httpx.stream("POST", f"{served.url}/chat/completions", json=body, timeout=60,
                      headers=served.auth) as resp:
        lines = [line for line in resp.iter_lines() if line]
    assert [line for line in lines if not line.startswith("data: ")] == []


def test_models_list_the_config_profiles(serve: Any, tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent: tool-calling\nprofiles:\n  careful:\n    max_iterations: 2\n"
                      "  research:\n    agent: chat-conversational-react-description\n")
    served = serve("--config", str(config))
    models = {m.id: m for m in client(served).models.list()}
    assert list(models) == ["agent", "careful", "research"]
    assert (models["research"].model_extra or {})["agent_type"] == \
        "chat-conversational-react-description"
    with pytest.raises(openai.NotFoundError, match="not served here; models: agent, careful"):
        client(served).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}])


def test_a_non_loopback_bind_needs_the_token(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply("Authorised answer.")
    served = serve("--host", "0.0.0.0", "--agent", "tool-calling",
                   extra_env={"AGENT_SERVE_TOKEN": "s3cret-token-1"})
    with pytest.raises(openai.AuthenticationError, match="missing or wrong API key"):
        client(served, key="wrong-token").chat.completions.create(
            model="agent", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.AuthenticationError):
        client(served, key="wrong-token").models.list()
    no_header = httpx.get(f"{served.url}/models", timeout=10)
    assert no_header.status_code == 401 and no_header.headers["www-authenticate"] == "Bearer"
    assert not mock_server.requests  # nothing reached the model
    done = client(served, key="s3cret-token-1").chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "hi"}])
    assert done.choices[0].message.content == "Authorised answer."
    assert "s3cret-token-1" not in "".join(served.lines)


def test_concurrent_requests_are_independent(serve: Any, mock_server: Any) -> None:
    """Alpha's model reply is held until beta's whole request has been answered: run one
    after another, beta would wait behind alpha and alpha would give up first."""
    beta_answered = threading.Event()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        question = body["messages"][-1]["content"]
        if "alpha" in question:
            if not beta_answered.wait(60):
                return {"text": "alpha gave up waiting: the requests were not concurrent"}
            return {"text": "answer to alpha"}
        return {"text": "answer to beta"}

    mock_server.set_responder(respond)
    served = serve("--agent", "tool-calling")
    finished: list[str] = []
    answers: dict[str, str] = {}

    def ask(name: str) -> None:
        done = client(served).chat.completions.create(
            model="agent", messages=[{"role": "user", "content": f"question {name}"}])
        answers[name] = done.choices[0].message.content or ""
        finished.append(name)

    alpha = threading.Thread(target=ask, args=("alpha",))
    alpha.start()
    while "question alpha" not in questions(mock_server):  # alpha's run is at its model call
        assert alpha.is_alive(), answers
        time.sleep(0.01)
    beta = threading.Thread(target=ask, args=("beta",))
    beta.start()
    beta.join(120)
    beta_answered.set()
    alpha.join(120)
    assert finished == ["beta", "alpha"]
    assert answers == {"alpha": "answer to alpha", "beta": "answer to beta"}
    for request in mock_server.requests:  # neither run saw the other's question
        sent = json.dumps(request.body["messages"])
        assert ("question alpha" in sent) != ("question beta" in sent)


def test_each_request_has_its_own_limits(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply(tool_calls=[CALC])  # the first request's one step
    mock_server.add_reply("Fresh budget.")
    served = serve("--agent", "tool-calling", "--max-iterations", "1",
                   extra_env={"AGENT_EARLY_STOPPING": "force"})
    stopped = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "loop"}])
    assert stopped.choices[0].finish_reason == "length"
    assert stopped.choices[0].message.content == (
        "Stopped: the agent used all its steps (--max-iterations) without reaching an answer. "
        "The last result was: Answer: 42")  # issue 31: the last observation with a result
    assert (stopped.model_extra or {})["agent_stop_reason"] == "max_iterations"
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "answer"}])
    assert done.choices[0].message.content == "Fresh budget."


def test_readme_example_runs_as_written(serve: Any, mock_server: Any) -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Serve an agent"):].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None and "OpenAI()" in code.group(1)
    served = serve()  # as the README starts it: the default agent type
    assert served.token  # it printed the line the example's client reads from the environment
    mock_server.add_reply("Final Answer: 25% of 300 is 75.")
    out = io.StringIO()
    printed = dict(part.split("=", 1) for part in served.lines[-1].split())
    with contextlib.redirect_stdout(out), pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", printed["OPENAI_BASE_URL"])
        patch.setenv("OPENAI_API_KEY", printed["OPENAI_API_KEY"])
        exec(code.group(1), {})
    assert out.getvalue() == "25% of 300 is 75.\n"
    assert questions(mock_server) == ["What is 25% of 300?"]


def test_a_summary_memory_call_does_not_hold_up_other_requests(
    serve: Any, mock_server: Any
) -> None:
    """Alpha's session keeps a summary memory: after its answer, the model is asked for the
    summary, and that reply is held until beta (another request) is answered. On the server's
    loop, the summary call would hold beta up and alpha would give up first."""
    beta_answered = threading.Event()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        question = body["messages"][-1]["content"]
        if "Progressively summarize" in question:
            if not beta_answered.wait(60):
                return {"text": "the summary gave up waiting: it blocked the server"}
            return {"text": "alpha-summary-7"}
        return {"text": f"answer {question.split()[-1]}"}

    mock_server.set_responder(respond)
    served = serve("--agent", "tool-calling", extra_env={"AGENT_MEMORY": "summary"})
    finished: list[str] = []

    def ask(name: str, **extra: Any) -> None:
        client(served).chat.completions.create(
            model="agent", messages=[{"role": "user", "content": f"question {name}"}], **extra)
        finished.append(name)

    session = {"extra_headers": {"X-Agent-Session": "alpha-s"}}
    alpha = threading.Thread(target=ask, args=("alpha",), kwargs=session)
    alpha.start()
    while not any("Progressively summarize" in q for q in questions(mock_server)):
        assert alpha.is_alive(), finished  # alpha's answer is in; its summary is being asked
        time.sleep(0.01)
    ask("beta")
    beta_answered.set()
    alpha.join(120)
    assert finished == ["beta", "alpha"]
    ask("again", **session)  # the held summary was saved with alpha's session
    assert "alpha-summary-7" in json.dumps(mock_server.requests[-1].body["messages"])
