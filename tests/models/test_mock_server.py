"""The mock OpenAI server speaks the wire protocol faithfully, faults included."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.mock_server import MockOpenAIServer


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer() as srv:
        yield srv


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as client:
        yield client


def chat(server: MockOpenAIServer, **body: Any) -> dict[str, Any]:
    return {"model": "mock-model", "messages": [{"role": "user", "content": "x" * 40}], **body}


def sse_events(text: str) -> list[Any]:
    """Decode an SSE body into JSON events, with "[DONE]" kept as a string."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: "):]
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


def post(http: httpx.Client, server: MockOpenAIServer, **body: Any) -> httpx.Response:
    return http.post(f"{server.base_url}/chat/completions", json=chat(server, **body))


def test_base_url_and_model_listings(server: MockOpenAIServer, http: httpx.Client) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    models = http.get(f"{server.base_url}/models").json()
    assert models["data"][0]["id"] == "mock-model"
    tags = http.get(f"http://127.0.0.1:{server.port}/api/tags").json()
    assert tags["models"][0]["name"] == "mock-model"
    assert http.get(f"{server.base_url}/nothing").status_code == 404
    assert [r.method for r in server.requests] == ["GET", "GET", "GET"]


def test_plain_completion_shape_and_usage_estimate(
    server: MockOpenAIServer, http: httpx.Client
) -> None:
    server.add_reply("12345678")
    data = post(http, server).json()
    assert data["object"] == "chat.completion" and data["model"] == "mock-model"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "12345678"}
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["usage"] == {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    [request] = server.requests
    assert request.path == "/v1/chat/completions" and request.body == chat(server)


def test_streaming_text_is_real_sse(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.add_reply("one two three four")
    resp = post(http, server, stream=True, stream_options={"include_usage": True})
    assert resp.headers["content-type"] == "text/event-stream"
    events = sse_events(resp.text)
    assert events[-1] == "[DONE]"
    deltas = [e["choices"][0]["delta"].get("content", "") for e in events[:-2]]
    assert "".join(deltas) == "one two three four" and len(deltas) >= 4
    assert events[-3]["choices"][0]["finish_reason"] == "stop"
    assert events[-2]["choices"] == [] and events[-2]["usage"]["completion_tokens"] == 5


def test_usage_chunk_only_when_asked(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.add_reply("hi")
    events = sse_events(post(http, server, stream=True).text)
    assert not any("usage" in e for e in events if isinstance(e, dict))


@pytest.mark.parametrize("dashscope_style", [False, True])
def test_streamed_tool_calls_split_arguments(dashscope_style: bool) -> None:
    calls = [{"name": "Calculator", "arguments": {"expression": "12*7"}},
             {"name": "Search", "arguments": '{"query": "x"}', "id": "call_s"}]
    with MockOpenAIServer(dashscope_style=dashscope_style) as srv, httpx.Client() as http:
        srv.add_reply(tool_calls=calls)
        events = sse_events(post(http, srv, stream=True).text)
    parts = [p for e in events if isinstance(e, dict) and e["choices"]
             for p in e["choices"][0]["delta"].get("tool_calls", [])]
    for index, name, call_id in ((0, "Calculator", "call_mock_0"), (1, "Search", "call_s")):
        mine = [p for p in parts if p["index"] == index]
        assert len(mine) >= 3
        args = "".join(p["function"].get("arguments", "") for p in mine)
        assert json.loads(args) == [{"expression": "12*7"}, {"query": "x"}][index]
        names = [p["function"].get("name") for p in mine]
        ids = [p.get("id") for p in mine]
        if dashscope_style:
            assert set(names) == {name} and set(ids) == {call_id}
        else:
            assert names[0] == name and names[1:] == [None] * (len(mine) - 1)
            assert ids[0] == call_id and ids[1:] == [None] * (len(mine) - 1)
    assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_non_streaming_tool_calls(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.add_reply(tool_calls=[{"name": "Calculator", "arguments": {"e": 1}}])
    message = post(http, server).json()["choices"][0]["message"]
    assert message["content"] is None
    assert message["tool_calls"][0]["function"] == {"name": "Calculator", "arguments": '{"e": 1}'}


def test_stop_is_ignored_unless_honoured(http: httpx.Client) -> None:
    for honour, expected in ((False, "a STOP b"), (True, "a ")):
        with MockOpenAIServer(honour_stop=honour) as srv:
            srv.add_reply("a STOP b")
            assert post(http, srv, stop=["STOP"]).json()["choices"][0]["message"][
                "content"] == expected


def test_nothing_scripted_answers_500(server: MockOpenAIServer, http: httpx.Client) -> None:
    resp = post(http, server)
    assert resp.status_code == 500
    assert resp.json()["error"]["message"] == "mock server: no scripted reply left"


def test_faults_come_first_in_order(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.add_reply("finally")
    server.add_fault("status", status=429, retry_after=2, times=2)
    server.add_fault("empty_choices")
    first, second = post(http, server), post(http, server)
    assert first.status_code == second.status_code == 429
    assert first.headers["retry-after"] == "2" and "429" in first.json()["error"]["message"]
    assert post(http, server).json()["choices"] == []
    assert post(http, server).json()["choices"][0]["message"]["content"] == "finally"


def test_401_echoes_the_bearer_token(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.add_fault("status", status=401)
    resp = http.post(f"{server.base_url}/chat/completions", json=chat(server),
                     headers={"Authorization": "Bearer sk-echo"})
    assert resp.json()["error"]["message"] == "Incorrect API key provided: sk-echo"


def test_reset_and_stream_cut_break_the_connection(
    server: MockOpenAIServer, http: httpx.Client
) -> None:
    server.add_fault("reset")
    with pytest.raises(httpx.RemoteProtocolError):
        post(http, server)
    server.add_fault("stream_cut", text="partial words")
    seen: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError), http.stream(
        "POST", f"{server.base_url}/chat/completions", json=chat(server, stream=True)
    ) as resp:
        seen.extend(line for line in resp.iter_lines() if line)
    contents = [json.loads(line[6:])["choices"][0]["delta"]["content"] for line in seen]
    assert "".join(contents) == "partial words" and "[DONE]" not in seen
    server.add_fault("stream_cut")
    with pytest.raises(httpx.RemoteProtocolError):
        post(http, server)
    assert len(server.requests) == 3


def test_timeout_fault_delays(server: MockOpenAIServer) -> None:
    server.add_fault("timeout", delay=0.5)
    with httpx.Client(timeout=0.1) as http, pytest.raises(httpx.ReadTimeout):
        post(http, server)


def test_invalid_json_fault(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.add_fault("invalid_json")
    resp = post(http, server)
    assert resp.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(resp.text)


def test_responder_answers_by_content(server: MockOpenAIServer, http: httpx.Client) -> None:
    server.set_responder(lambda body: {"text": body["messages"][-1]["content"].upper()})
    server.add_reply("queued first")
    assert post(http, server).json()["choices"][0]["message"]["content"] == "queued first"
    assert post(http, server).json()["choices"][0]["message"]["content"] == "X" * 40


def test_requests_are_recorded_from_many_threads(server: MockOpenAIServer) -> None:
    server.set_responder(lambda body: {"text": "ok"})

    def worker() -> None:
        with httpx.Client() as http:
            for _ in range(5):
                assert post(http, server).status_code == 200

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.requests) == 20


def test_bad_scripts_are_rejected(server: MockOpenAIServer, http: httpx.Client) -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        server.add_fault("explode")  # type: ignore[arg-type]
    server.set_responder(lambda body: {"txt": "typo"})
    resp = post(http, server)
    assert resp.status_code == 500 and "unknown reply keys" in resp.json()["error"]["message"]


def test_main_runs_in_the_foreground(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "from the script"}]), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mock_server", "--port", "0",
         "--script", str(script)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with httpx.Client(timeout=5.0) as http:
            resp = http.post(f"{base_url}/chat/completions", json={"messages": []})
        assert resp.json()["choices"][0]["message"]["content"] == "from the script"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
