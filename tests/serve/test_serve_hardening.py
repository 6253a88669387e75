"""`agent serve` hardening and streaming, through the real command on a loopback port: the body
limit, the token by default, deep JSON, JSON 404/405, token deltas, a client that leaves."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai_clients import client

ASK = [{"role": "user", "content": "hi"}]


def _raw(served: Any, head: str, body_parts: list[bytes]) -> tuple[str, int]:
    """Send a request by hand (headers, then body parts from a thread until the server
    answers or hangs up); the response, and how many body parts had been sent by then."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(head.encode())
        sent = [0]
        answered = threading.Event()

        def send() -> None:
            for part in body_parts:
                if answered.is_set():
                    return
                try:
                    sock.sendall(part)
                except OSError:  # the server answered and closed
                    return
                sent[0] += 1

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        reply = b""
        while not (b"\r\n\r\n" in reply and reply.rstrip().endswith(b"}")):
            more = sock.recv(65536)
            if not more:
                break
            reply += more
        answered.set()
        count = sent[0]
        sock.shutdown(socket.SHUT_RDWR)
        sender.join(30)
    return reply.decode("latin-1"), count


def _head(served: Any, extra: str) -> str:
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            f"Authorization: Bearer {served.token}\r\nContent-Type: application/json\r\n{extra}"
            "\r\n")


def test_an_oversized_body_is_refused_before_it_is_read(serve: Any, mock_server: Any) -> None:
    served = serve("--agent", "tool-calling")
    # Declared too big: refused on the header, before any byte of the body.
    reply, _ = _raw(served, _head(served, "Content-Length: 300000000\r\n"), [])
    assert reply.startswith("HTTP/1.1 413") and "request_too_large" in reply
    # Chunked, no length: refused once 4 MiB arrived, long before the 64 MiB are sent.
    part = b"100000\r\n" + b" " * 0x100000 + b"\r\n"  # 1 MiB per chunk
    reply, sent = _raw(served, _head(served, "Transfer-Encoding: chunked\r\n"), [part] * 64)
    assert reply.startswith("HTTP/1.1 413")
    assert sent < 64
    mock_server.add_reply("Still serving.")  # the server is still up and answers
    done = client(served).chat.completions.create(model="agent", messages=ASK)
    assert done.choices[0].message.content == "Still serving."


def test_a_token_is_required_by_default(serve: Any, mock_server: Any) -> None:
    served = serve("--agent", "tool-calling")
    assert served.token and len(served.token) >= 24
    assert f"OPENAI_API_KEY={served.token}" in served.lines[-1]  # printed, ready to copy
    refused = httpx.get(f"{served.url}/models", timeout=10)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        client(served, key="a-guess").chat.completions.create(model="agent", messages=ASK)
    assert not mock_server.requests
    mock_server.add_reply("With the token.")
    done = client(served).chat.completions.create(model="agent", messages=ASK)
    assert done.choices[0].message.content == "With the token."
    # --no-token: a single-user machine's choice; nothing is printed, nothing is asked.
    open_one = serve("--agent", "tool-calling", "--no-token")
    assert open_one.token is None and "OPENAI_API_KEY" not in "".join(open_one.lines)
    assert httpx.get(f"{open_one.url}/models", timeout=10).status_code == 200


def test_deep_json_is_a_400(serve: Any, mock_server: Any) -> None:
    served = serve("--agent", "tool-calling")
    deep = "[" * 100_000 + "]" * 100_000
    resp = httpx.post(f"{served.url}/chat/completions", content=deep, timeout=30,
                      headers={**served.auth, "Content-Type": "application/json"})
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_json"
    assert "Traceback" not in "".join(served.lines)


def test_unknown_paths_and_wrong_methods_answer_json(serve: Any) -> None:
    served = serve("--agent", "tool-calling")
    missing = httpx.get(f"{served.url}/embeddings", headers=served.auth, timeout=10)
    assert missing.status_code == 404
    assert missing.json()["error"]["message"].startswith("no such endpoint: /v1/embeddings")
    wrong = httpx.get(f"{served.url}/chat/completions", headers=served.auth, timeout=10)
    assert wrong.status_code == 405 and "POST" in wrong.headers["allow"]
    assert wrong.json()["error"]["message"] == "GET is not allowed on /v1/chat/completions"
    with pytest.raises(openai.NotFoundError):
        client(served).embeddings.create(model="agent", input="hi")


def _contents(chunks: list[Any]) -> list[str]:
    return [c.choices[0].delta.content for c in chunks
            if c.choices and c.choices[0].delta.content]


@pytest.mark.parametrize(("reply", "answer"), [
    ("Thought: I know this one.\nFinal Answer: Paris is the capital of France, of course.",
     "Paris is the capital of France, of course."),
    ('```json\n{"action": "Final Answer", "action_input": "It is \\"42\\", said the '
     'calculator."}\n```', 'It is "42", said the calculator.'),
])
def test_a_stream_carries_the_answers_tokens(serve: Any, mock_server: Any, reply: str,
                                             answer: str) -> None:
    served = serve()  # the default (text) agent: its thoughts never stream
    mock_server.add_reply(reply)
    chunks = list(client(served).chat.completions.create(
        model="agent", stream=True, messages=[{"role": "user", "content": "Tell me"}]))
    pieces = _contents(chunks)
    assert "".join(pieces) == answer
    assert len(pieces) > 3  # token by token, not one chunk at the end
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_a_key_cut_across_streamed_tokens_is_redacted(serve: Any, mock_server: Any) -> None:
    served = serve("--agent", "tool-calling")  # its model key is sk-test (conftest)
    mock_server.add_reply("The key in the file is sk-test, and nothing else is secret.")
    pieces = _contents(list(client(served).chat.completions.create(
        model="agent", stream=True, messages=ASK)))
    assert "".join(pieces) == "The key in the file is ***, and nothing else is secret."
    assert len(pieces) > 3


def _runs(tmp_path: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(tmp_path / "serve.db")
    try:
        return list(db.execute("SELECT question, stop_reason FROM runs ORDER BY id"))
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        db.close()


def _wait_for(check: Any) -> None:
    """Until ``check()`` holds (a bound on waiting, not a timing assertion)."""
    for _ in range(600):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("the condition never held")


def test_tokens_arrive_before_the_end_and_leaving_cancels_the_run(
        serve: Any, mock_server: Any, tmp_path: Path) -> None:
    served = serve("--agent", "tool-calling", "--log")
    mock_server.add_fault("endless_sse", text=" tick")  # a model reply that never ends
    stream = client(served).chat.completions.create(
        model="agent", stream=True, messages=[{"role": "user", "content": "Count"}])
    seen: list[str] = []
    for chunk in stream:  # tokens arrive although the model's reply has not ended
        if chunk.choices and chunk.choices[0].delta.content:
            seen.append(chunk.choices[0].delta.content)
        if len(seen) == 3:
            break
    stream.close()  # the client leaves
    assert "".join(seen).split() == ["tick"] * 3
    _wait_for(lambda: _runs(tmp_path) == [("Count", "interrupted")])
    assert "disconnected before its answer" in served.wait_line("disconnected")
    assert len(mock_server.requests) == 1


def test_a_non_streamed_client_leaving_cancels_its_run(
        serve: Any, mock_server: Any, tmp_path: Path) -> None:
    release = threading.Event()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if "loop" in body["messages"][-1].get("content", "") or body["messages"][-1].get(
                "role") == "tool":
            release.wait(60)  # held until the client has gone and the run was cancelled
            return {"tool_calls": [{"name": "Calculator", "arguments": {"input": "1+1"}}]}
        return {"text": "Second question answered."}

    mock_server.set_responder(respond)
    served = serve("--agent", "tool-calling", "--log", "--max-iterations", "50")
    body = json.dumps({"model": "agent", "messages": [{"role": "user", "content": "loop"}]})
    head = _head(served, f"Content-Length: {len(body)}\r\n")
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(head.encode() + body.encode())
        _wait_for(lambda: len(mock_server.requests) == 1)  # the run is at its model call
    # The client has gone: the run ends as interrupted, after that one model request.
    _wait_for(lambda: _runs(tmp_path) == [("loop", "interrupted")])
    said = served.wait_line("disconnected")  # the server's console says so, in one line
    assert re.fullmatch(r"client 127\.0\.0\.1:\d+ disconnected before its answer: its run "
                        r"of 'agent' was stopped", said.strip()), said
    release.set()
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": "next"}])
    assert done.choices[0].message.content == "Second question answered."
    assert [r.body["messages"][-1]["content"] for r in mock_server.requests] == [
        "loop", "next"]


def test_served_steps_log_status_and_duration(serve: Any, mock_server: Any,
                                              tmp_path: Path) -> None:
    served = serve("--agent", "tool-calling", "--log")
    mock_server.add_reply(tool_calls=[{"name": "Calculator", "arguments": {"input": "6*7"}}])
    mock_server.add_reply("It is 42.")
    client(served).chat.completions.create(model="agent", messages=ASK)
    db = sqlite3.connect(tmp_path / "serve.db")
    try:
        steps = list(db.execute("SELECT tool, status, duration FROM run_steps"))
    finally:
        db.close()
    assert len(steps) == 1
    tool, status, duration = steps[0]
    assert (tool, status) == ("Calculator", "ok") and duration is not None and duration >= 0


def test_response_format_gives_the_runs_structured_output(serve: Any,
                                                          mock_server: Any) -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        population: int

    served = serve()
    mock_server.add_reply('Final Answer: {"name": "Paris", "population": 2100000}')
    parsed = client(served).chat.completions.parse(
        model="agent", response_format=City,
        messages=[{"role": "user", "content": "The capital of France?"}])
    assert parsed.choices[0].message.parsed == City(name="Paris", population=2100000)
    sent = mock_server.requests[-1].body["messages"]
    assert "population" in json.dumps(sent)  # the schema reached the agent's prompt
    # A reply that does not match goes back to the model, as for `agent run --schema`.
    mock_server.add_reply('Final Answer: {"name": "Lyon"}')
    mock_server.add_reply('Final Answer: {"name": "Lyon", "population": 520000}')
    streamed = list(client(served).chat.completions.create(
        model="agent", stream=True, messages=[{"role": "user", "content": "And Lyon?"}],
        response_format={"type": "json_schema", "json_schema": {
            "name": "City", "schema": City.model_json_schema()}}))
    text = "".join(_contents(streamed))
    assert City.model_validate_json(text) == City(name="Lyon", population=520000)
    with pytest.raises(openai.BadRequestError, match="response_format"):
        client(served).chat.completions.create(
            model="agent", messages=ASK, response_format={"type": "json_schema"})


def test_a_bare_string_response_format_is_a_400_not_a_crash() -> None:
    from agentcli.serve.wire import WireError, parse_chat

    body = {"messages": [{"role": "user", "content": "q"}], "response_format": "json_schema"}
    with pytest.raises(WireError) as info:
        parse_chat(body, {})
    assert info.value.status == 400 and info.value.param == "response_format"


def _events(served: Any) -> list[str]:
    """The data lines of one streamed request, as sent (raw SSE)."""
    with httpx.Client(timeout=60) as http, http.stream(
            "POST", f"{served.url}/chat/completions", headers=served.auth,
            json={"model": "agent", "stream": True, "messages": ASK}) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        return [line[6:] for line in resp.iter_lines() if line.startswith("data: ")]


@pytest.mark.parametrize("model", ["refuses", "unreachable"])
def test_a_stream_opens_with_the_role_whatever_the_model_does(
        serve: Any, mock_server: Any, model: str) -> None:
    """The response starts once the run's model request is out (or the run has anything to
    say): a model that refuses the request (sent) and one never reached (nothing sent) both
    give the role chunk first, then the error, then [DONE]."""
    extra: dict[str, str] = {"AGENT_MAX_RETRIES": "0"}
    if model == "unreachable":
        with socket.socket() as free:  # a port nothing listens on
            free.bind(("127.0.0.1", 0))
            extra["OPENAI_BASE_URL"] = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    else:
        mock_server.add_fault("status", status=400, message="no such model")
    served = serve("--agent", "tool-calling", extra_env=extra)
    events = _events(served)
    assert [json.loads(e)["choices"][0]["delta"] for e in events[:1]] == [
        {"role": "assistant", "content": ""}]
    assert json.loads(events[1])["error"]["type"] == "provider_error"
    assert events[2:] == ["[DONE]"]
    assert len(mock_server.requests) == (model == "refuses")


def test_a_client_leaving_before_the_first_token_cancels_the_run(
        serve: Any, mock_server: Any, tmp_path: Path) -> None:
    served = serve("--agent", "tool-calling", "--log")
    mock_server.add_fault("slow_first_byte", text="too late")  # the model thinks for 20 s
    with httpx.Client(timeout=60) as http, http.stream(
            "POST", f"{served.url}/chat/completions", headers=served.auth,
            json={"model": "agent", "stream": True, "messages": ASK}) as resp:
        assert resp.status_code == 200  # the response began: the model request is out
        _wait_for(lambda: len(mock_server.requests) == 1)
    # the client has gone before any token: its run is stopped, the server goes on
    _wait_for(lambda: _runs(tmp_path) == [("hi", "interrupted")])
    assert "disconnected before its answer" in served.wait_line("disconnected")
    mock_server.add_reply("Still here.")
    assert "".join(_contents(list(client(served).chat.completions.create(
        model="agent", stream=True, messages=ASK)))) == "Still here."
