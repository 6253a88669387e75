"""OpenAICompatModel against the local mock server, and against httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentcli.models.openai_compat as oc
from agentcli.errors import ModelOutputError, ProviderError
from agentcli.models.base import StopStream, assemble_chunks, cut_at_stop
from agentcli.models.fake import FakeChatModel
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.models.wire import parse_retry_after
from agentcli.schema import ChatChunk, ChatResult, Message, ToolCall, Usage, user
from tests.support.mock_server import MockOpenAIServer

KEY = "sk-secret-123"
MESSAGES = [Message("system", "You are terse."), user("What is 2 + 2?")]
CALC_TOOL = {
    "type": "function",
    "function": {
        "name": "Calculator",
        "description": "Do math.",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
    },
}


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer() as srv:
        yield srv


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record backoff sleeps instead of sleeping."""
    recorded: list[float] = []

    async def fake_asleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(oc, "_asleep", fake_asleep)
    return recorded


def make(server: MockOpenAIServer, **options: object) -> OpenAICompatModel:
    return OpenAICompatModel("mock-model", base_url=server.base_url, api_key=KEY,
                             **options)  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- plain completions -------------------------------------------------------------------


def test_generate_returns_text_usage_and_sends_the_request(server: MockOpenAIServer) -> None:
    server.add_reply("4")
    result = make(server, temperature=0.2).generate(MESSAGES, max_tokens=50)
    assert (result.text, result.finish_reason, result.model) == ("4", "stop", "mock-model")
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens == 1
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "mock-model"
    assert request.body["messages"][1] == {"role": "user", "content": "What is 2 + 2?"}
    assert request.body["temperature"] == 0.2 and request.body["max_tokens"] == 50
    assert "stream" not in request.body and "stop" not in request.body


def test_usage_comes_from_the_server(server: MockOpenAIServer) -> None:
    server.add_reply("hi", usage={"prompt_tokens": 11, "completion_tokens": 7})
    usage = make(server).generate(MESSAGES).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (11, 7, 18)


def test_name_and_repr_never_show_the_key(server: MockOpenAIServer) -> None:
    model = make(server, provider="dashscope")
    assert model.name == "dashscope/mock-model"
    assert KEY not in repr(model)


def test_model_timeouts(server: MockOpenAIServer) -> None:
    first, other = make(server), make(server, timeout=5.0)
    assert first.timeout.connect == 10.0 and other.timeout.read == 5.0


# -- streaming ---------------------------------------------------------------------------


def test_on_token_streams_several_tokens(server: MockOpenAIServer) -> None:
    text = "The answer is four, as anyone with two hands can check."
    server.add_reply(text)
    tokens: list[str] = []
    result = make(server).generate(MESSAGES, on_token=tokens.append)
    assert len(tokens) > 3 and "".join(tokens) == text == result.text
    assert result.finish_reason == "stop" and result.usage.completion_tokens > 0
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_yields_chunks(server: MockOpenAIServer) -> None:
    server.add_reply("one two three")
    chunks = list(make(server).stream(MESSAGES))
    assert "".join(c.text for c in chunks) == "one two three"
    assert any(c.usage for c in chunks) and chunks[-1].usage is not None


def test_any_model_streams_its_tokens_then_its_tool_calls() -> None:
    call = ToolCall("c1", "Calculator", '{"x": 1}')
    model = FakeChatModel(["one two three", ChatResult("", (call,), "tool_calls")])
    chunks = list(model.stream(MESSAGES))
    assert [c.text for c in chunks] == ["one ", "two ", "three", ""]
    assert chunks[-1].finish_reason == "stop" and chunks[-1].usage is not None
    assert assemble_chunks(model.stream(MESSAGES)).tool_calls == (call,)


def test_stop_is_sent_and_applied_client_side(server: MockOpenAIServer) -> None:
    server.add_reply("Thought: add them\nAction: Calculator\nObservation: 4 (made up)")
    result = make(server).generate(MESSAGES, stop=["\nObservation:"])
    assert result.text == "Thought: add them\nAction: Calculator"
    assert result.finish_reason == "stop"
    assert server.requests[0].body["stop"] == ["\nObservation:"]


def test_stop_in_stream_emits_no_token_past_it(server: MockOpenAIServer) -> None:
    prefix = "I should use the calculator for this one.\nAction: Calculator\nAction Input: 2+2"
    server.add_reply(prefix + "\nObservation: 4\nThought: done\nFinal Answer: 4")
    tokens: list[str] = []
    result = make(server).generate(MESSAGES, stop=["\nObservation:"], on_token=tokens.append)
    assert "".join(tokens) == prefix == result.text
    assert len(tokens) > 1 and not any("Observation" in t for t in tokens)


def test_only_four_stops_reach_the_server_but_all_cut(server: MockOpenAIServer) -> None:
    server.add_reply("abc END def")
    stops = ["\n1", "\n2", "\n3", "\n4", " END"]
    assert make(server).generate(MESSAGES, stop=stops).text == "abc"
    assert server.requests[0].body["stop"] == stops[:4]


# -- native tool calls -------------------------------------------------------------------

TWO_CALLS = [
    {"name": "Calculator", "arguments": {"expression": "2+2"}, "id": "call_a"},
    {"name": "Search", "arguments": {"query": "weather in Hangzhou"}, "id": "call_b"},
]


def test_tool_calls_non_streaming(server: MockOpenAIServer) -> None:
    server.add_reply(tool_calls=TWO_CALLS)
    result = make(server).generate(MESSAGES, tools=[CALC_TOOL])
    assert server.requests[0].body["tools"] == [CALC_TOOL]
    assert [(c.id, c.name) for c in result.tool_calls] == [("call_a", "Calculator"),
                                                           ("call_b", "Search")]
    assert json.loads(result.tool_calls[1].arguments) == {"query": "weather in Hangzhou"}
    assert result.finish_reason == "tool_calls" and result.text == ""


@pytest.mark.parametrize("dashscope_style", [False, True])
def test_parallel_tool_calls_streaming(dashscope_style: bool) -> None:
    with MockOpenAIServer(dashscope_style=dashscope_style) as srv:
        srv.add_reply("Let me check.", tool_calls=TWO_CALLS)
        tokens: list[str] = []
        result = make(srv).generate(MESSAGES, tools=[CALC_TOOL], on_token=tokens.append)
    assert "".join(tokens) == "Let me check." == result.text
    assert [c.name for c in result.tool_calls] == ["Calculator", "Search"]
    assert [c.id for c in result.tool_calls] == ["call_a", "call_b"]
    assert json.loads(result.tool_calls[0].arguments) == {"expression": "2+2"}
    assert json.loads(result.tool_calls[1].arguments) == {"query": "weather in Hangzhou"}
    assert result.finish_reason == "tool_calls"


# -- retries -----------------------------------------------------------------------------


def test_429_honours_retry_after_seconds(server: MockOpenAIServer, waits: list[float]) -> None:
    server.add_fault("status", status=429, retry_after=3)
    server.add_reply("ok")
    assert make(server).generate(MESSAGES).text == "ok"
    assert len(server.requests) == 2 and waits == [3.0]


def test_retry_after_is_capped_at_backoff_max(
    server: MockOpenAIServer, waits: list[float]
) -> None:
    server.add_fault("status", status=429, retry_after=3600)
    server.add_reply("ok")
    make(server, backoff_max=7.0).generate(MESSAGES)
    assert waits == [7.0]


def test_retry_after_http_date() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after(header, now=now.timestamp()) == pytest.approx(30.0)
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_500_then_success_uses_jittered_backoff(
    server: MockOpenAIServer, waits: list[float]
) -> None:
    server.add_fault("status", status=500)
    server.add_reply("recovered")
    assert make(server, backoff_base=0.5).generate(MESSAGES).text == "recovered"
    assert len(server.requests) == 2 and len(waits) == 1 and 0.0 <= waits[0] <= 0.5


def test_backoff_grows_and_stays_under_the_cap(server: MockOpenAIServer) -> None:
    model = make(server, backoff_base=1.0, backoff_max=4.0)
    for attempt in range(6):
        for _ in range(20):
            assert 0.0 <= model._backoff(attempt, None) <= min(4.0, 2.0**attempt)


def test_503_exhausting_retries_raises_with_status(
    server: MockOpenAIServer, waits: list[float]
) -> None:
    server.add_fault("status", status=503, times=10)
    with pytest.raises(ProviderError) as info:
        make(server, max_retries=3).generate(MESSAGES)
    assert info.value.status == 503 and info.value.provider == "openai"
    assert str(info.value).startswith("openai returned 503 Service Unavailable: mock server")
    assert "gave up after 4 attempts" in str(info.value)
    assert len(server.requests) == 4 and len(waits) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_never_retried(
    server: MockOpenAIServer, waits: list[float], status: int
) -> None:
    server.add_fault("status", status=status, message="you did something wrong", times=5)
    with pytest.raises(ProviderError) as info:
        make(server).generate(MESSAGES)
    assert info.value.status == status
    assert len(server.requests) == 1 and waits == []
    if status != 401:
        assert str(info.value).endswith(": you did something wrong")


def test_401_message_is_clear_and_scrubs_the_echoed_key(server: MockOpenAIServer) -> None:
    server.add_fault("status", status=401)
    with pytest.raises(ProviderError) as info:
        make(server).generate(MESSAGES)
    assert str(info.value) == "openai returned 401 Unauthorized: Incorrect API key provided: ***"
    assert KEY not in str(info.value)


def test_connection_refused_is_clear(waits: list[float]) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = OpenAICompatModel("m", base_url=url, api_key=KEY, max_retries=1)
    with pytest.raises(ProviderError) as info:
        model.generate(MESSAGES)
    assert str(info.value).startswith(
        f"cannot reach openai at {url} (connection refused); is the server running?"
    )
    assert info.value.status is None and len(waits) == 1


def test_read_timeout_is_retried_then_reported(server: MockOpenAIServer) -> None:
    server.add_fault("timeout", delay=1.0, times=2)
    model = make(server, timeout=0.2, max_retries=1, backoff_base=0.0)
    with pytest.raises(ProviderError, match=r"sent nothing for 0.2s \(read timeout\)"):
        model.generate(MESSAGES)
    assert len(server.requests) == 2


def test_read_timeout_then_success(server: MockOpenAIServer, waits: list[float]) -> None:
    server.add_fault("timeout", delay=1.0)
    server.add_reply("late but fine")
    assert make(server, timeout=0.2).generate(MESSAGES).text == "late but fine"
    assert len(waits) == 1


def test_connection_reset_is_retried(server: MockOpenAIServer, waits: list[float]) -> None:
    server.add_fault("reset")
    server.add_reply("ok")
    assert make(server).generate(MESSAGES).text == "ok"
    assert len(server.requests) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_stream_cut_before_content_is_retried(
    server: MockOpenAIServer, waits: list[float], stream: bool
) -> None:
    server.add_fault("stream_cut")
    server.add_reply("complete answer")
    tokens: list[str] = []
    result = make(server).generate(MESSAGES, on_token=tokens.append if stream else None)
    assert result.text == "complete answer" and len(server.requests) == 2
    assert "".join(tokens) == ("complete answer" if stream else "")


def test_stream_cut_after_tokens_is_not_retried(
    server: MockOpenAIServer, waits: list[float]
) -> None:
    server.add_fault("stream_cut", text="half of an answer that")
    server.add_reply("never used")
    tokens: list[str] = []
    with pytest.raises(ProviderError, match="in the middle of the stream"):
        make(server).generate(MESSAGES, on_token=tokens.append)
    assert "".join(tokens) == "half of an answer that"
    assert len(server.requests) == 1 and waits == []


@pytest.mark.parametrize("kind", ["invalid_json", "empty_choices"])
@pytest.mark.parametrize("stream", [False, True])
def test_unusable_200_raises_model_output_error(
    server: MockOpenAIServer, waits: list[float], kind: str, stream: bool
) -> None:
    server.add_fault(kind)  # type: ignore[arg-type]
    with pytest.raises(ModelOutputError, match="openai answered 200 with") as info:
        make(server).generate(MESSAGES, on_token=(lambda t: None) if stream else None)
    assert len(server.requests) == 1 and info.value.status == 200


def test_no_scripted_reply_fails_loudly(server: MockOpenAIServer, waits: list[float]) -> None:
    with pytest.raises(ProviderError, match="no scripted reply left"):
        make(server, max_retries=0).generate(MESSAGES)


# -- async -------------------------------------------------------------------------------


def test_agenerate_against_the_mock_server(server: MockOpenAIServer) -> None:
    server.add_reply("async hello")
    server.add_reply("streamed async hello", tool_calls=TWO_CALLS[:1])
    model = make(server)

    async def run() -> tuple[str, str, list[str], int]:
        first = await model.agenerate(MESSAGES)
        tokens: list[str] = []
        second = await model.agenerate(MESSAGES, on_token=tokens.append)
        return first.text, second.text, tokens, len(second.tool_calls)

    first, second, tokens, ncalls = asyncio.run(run())
    assert (first, second, ncalls) == ("async hello", "streamed async hello", 1)
    assert "".join(tokens) == second and len(tokens) > 1


def test_async_retries_use_asleep(server: MockOpenAIServer, waits: list[float]) -> None:
    server.add_fault("status", status=429, retry_after=1)
    server.add_fault("stream_cut")
    server.add_reply("ok")
    result = asyncio.run(make(server).agenerate(MESSAGES, stop=["k"], on_token=lambda t: None))
    assert result.text == "o" and waits[0] == 1.0 and len(waits) == 2


def test_async_error_is_a_provider_error(server: MockOpenAIServer, waits: list[float]) -> None:
    server.add_fault("status", status=401)
    with pytest.raises(ProviderError) as info:
        asyncio.run(make(server).agenerate(MESSAGES))
    assert info.value.status == 401 and KEY not in str(info.value)


# -- httpx.MockTransport -----------------------------------------------------------------


def sse(*events: object, done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(e)}\n\n" for e in events]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


def delta(**fields: object) -> dict[str, object]:
    finish = fields.pop("finish_reason", None)
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": finish}]}


def transport_model(handler: object, **options: object) -> tuple[OpenAICompatModel, httpx.Client]:
    client = httpx.Client(transport=httpx.MockTransport(handler))  # type: ignore[arg-type]
    model = OpenAICompatModel("m", base_url="http://testserver/v1", api_key=KEY,
                              async_client=httpx.AsyncClient(transport=httpx.MockTransport(
                                  handler)), **options)  # type: ignore[arg-type]
    return model, client


def test_key_is_scrubbed_even_when_the_server_echoes_headers(waits: list[float]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        echoed = f"bad request; headers were {dict(request.headers)}"
        return httpx.Response(500, json={"error": {"message": echoed}})

    model, client = transport_model(handler, max_retries=1)
    with client, pytest.raises(ProviderError) as info:
        model.generate(MESSAGES)
    assert KEY not in str(info.value) and "***" in str(info.value)
    assert info.value.status == 500


def test_non_json_error_body_is_trimmed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, text="<html>" + "x" * 500 + "</html>")

    model, client = transport_model(handler)
    with client, pytest.raises(ProviderError) as info:
        model.generate(MESSAGES)
    assert str(info.value).startswith("openai returned 404 Not Found: <html>xxx")
    assert len(str(info.value)) < 260


def test_transport_sse_with_qwen_style_parallel_calls_on_one_index() -> None:
    # Some servers number every parallel call 0 and tell them apart only by id.
    def part(call_id: str, name: str, args: str) -> dict[str, object]:
        return delta(tool_calls=[{"index": 0, "id": call_id, "type": "function",
                                  "function": {"name": name, "arguments": args}}])

    body = sse(part("c1", "Calculator", '{"expression"'), part("c1", "Calculator", ': "1+1"}'),
               part("c2", "Calculator", '{"expression": '), part("c2", "Calculator", '"3*3"}'),
               delta(finish_reason="tool_calls"))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    model, client = transport_model(handler)
    with client:
        result = model.generate(MESSAGES, on_token=lambda t: None)
    assert [c.name for c in result.tool_calls] == ["Calculator", "Calculator"]
    assert [json.loads(c.arguments) for c in result.tool_calls] == [
        {"expression": "1+1"}, {"expression": "3*3"}]


def test_transport_sse_error_event_and_stop_across_events(waits: list[float]) -> None:
    bodies = [
        sse({"error": {"message": "overloaded"}}, done=False),
        sse(delta(content="Answer: 4\nObs"), delta(content="ervation: no"), delta(content="pe")),
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=bodies.pop(0))

    model, client = transport_model(handler, max_retries=0)
    tokens: list[str] = []
    with client:
        with pytest.raises(ProviderError, match="sent an error in the stream: overloaded"):
            model.generate(MESSAGES, on_token=tokens.append)
        result = model.generate(MESSAGES, stop=["\nObservation:"], on_token=tokens.append)
    assert result.text == "Answer: 4" == "".join(tokens)


def test_transport_async_client_is_used() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {KEY}"
        return httpx.Response(200, json={"choices": [{"message": {"content": "hi"}}]})

    async def run() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            model = OpenAICompatModel("m", base_url="http://testserver/v1", api_key=KEY,
                                      async_client=client)
            return (await model.agenerate(MESSAGES)).text

    assert asyncio.run(run()) == "hi"


def test_200_with_error_object_is_a_provider_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"error": {"message": "model overloaded"}})

    model, client = transport_model(handler)
    with client, pytest.raises(ProviderError, match="returned an error: model overloaded"):
        model.generate(MESSAGES)


# -- assemble_chunks and StopStream (base.py) --------------------------------------------


def test_assemble_dashscope_repeats_name_and_id_without_gluing() -> None:
    chunks = [
        ChatChunk(tool_call_index=0, tool_call_id="a", tool_call_name="Calculator"),
        ChatChunk(tool_call_index=0, tool_call_id="a", tool_call_name="Calculator",
                  tool_call_arguments='{"x"'),
        ChatChunk(tool_call_index=0, tool_call_id="a", tool_call_name="Calculator",
                  tool_call_arguments=": 1}"),
        ChatChunk(tool_call_index=1, tool_call_id="b", tool_call_name="Search",
                  tool_call_arguments='{"q": "y"}'),
        ChatChunk(tool_call_index=1, tool_call_id="", tool_call_name=""),
        ChatChunk(finish_reason="tool_calls", usage=Usage(3, 4)),
    ]
    result = assemble_chunks(chunks)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("a", "Calculator", '{"x": 1}'), ("b", "Search", '{"q": "y"}')]
    assert result.finish_reason == "tool_calls" and result.usage == Usage(3, 4)


def test_assemble_without_index_uses_ids_then_the_latest_call() -> None:
    chunks = [
        ChatChunk(tool_call_id="a", tool_call_name="One", tool_call_arguments="{"),
        ChatChunk(tool_call_id="b", tool_call_name="Two", tool_call_arguments="["),
        ChatChunk(tool_call_id="a", tool_call_arguments="}"),
        ChatChunk(tool_call_arguments="]"),
        ChatChunk(tool_call_name="Three", tool_call_arguments="()"),
    ]
    calls = assemble_chunks(chunks).tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("One", "{}"), ("Two", "[]"),
                                                      ("Three", "()")]
    assert calls[2].id == "call_2"


def test_assemble_sparse_indices_do_not_collide() -> None:
    chunks = [
        ChatChunk(tool_call_index=1, tool_call_id="x", tool_call_name="A"),
        ChatChunk(tool_call_id="y", tool_call_name="B"),
        ChatChunk(tool_call_index=1, tool_call_arguments="{}"),
    ]
    calls = assemble_chunks(chunks).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("x", "A", "{}"), ("y", "B", "")]


def test_assemble_text_only() -> None:
    result = assemble_chunks(iter([ChatChunk(text="a"), ChatChunk(text="b")]))
    assert (result.text, result.tool_calls, result.finish_reason) == ("ab", (), None)


def test_stop_stream_holds_back_a_possible_stop_prefix() -> None:
    stopper = StopStream(["\nObservation:"])  # 13 chars: hold back the last 12
    assert stopper.feed("Thought: x") == ""
    assert stopper.feed(" and y and more text") == "Thought: x and y a"
    assert stopper.feed("\nObs") == "nd m"
    assert stopper.feed("ervation: 4") == "ore text"
    assert stopper.stopped and stopper.text == "Thought: x and y and more text"
    assert stopper.feed("late") == "" and stopper.flush() == ""


def test_stop_stream_without_stops_passes_everything() -> None:
    stopper = StopStream(None)
    assert [stopper.feed(t) for t in ("a", "b")] == ["a", "b"] and stopper.flush() == ""


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\nO:", max_size=40), st.lists(st.integers(1, 6), max_size=20),
       st.sampled_from(["\nO:", "ab", "b", ":"]))
def test_stop_stream_matches_cut_at_stop(text: str, sizes: list[int], stop: str) -> None:
    stopper = StopStream([stop])
    out, pos = [], 0
    for size in [*sizes, len(text)]:
        out.append(stopper.feed(text[pos: pos + size]))
        pos += size
    out.append(stopper.flush())
    assert "".join(out) == cut_at_stop(text, [stop])[0]


@pytest.mark.parametrize(("events", "words"), [
    ([{"choices": "nope"}], "'choices' are not objects"),
    ([{"choices": [{"delta": "text"}]}], "'delta' that is a str"),
    ([delta(content={"odd": 1})], "'content' that is not text"),
    ([delta(tool_calls="call it")], "'tool_calls' that are not a list"),
    ([delta(tool_calls=[{"index": 0, "function": "f"}])], "'tool_calls' that are not a list"),
])
def test_malformed_stream_events_are_model_output_errors(
    events: list[object], words: str, waits: list[float]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=sse(*events),
                              headers={"Content-Type": "text/event-stream"})

    model, client = transport_model(handler, max_retries=0)
    with client, pytest.raises(ModelOutputError, match=words) as info:
        model.generate(MESSAGES, on_token=lambda t: None)
    assert info.value.exit_code == 4


def test_content_as_text_parts_and_usage_as_strings_are_read(waits: list[float]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={
            "choices": [{"message": {"content": [{"type": "text", "text": "Final "},
                                                 {"type": "text", "text": "Answer: 4"}]}}],
            "usage": {"prompt_tokens": "7", "completion_tokens": None}})

    model, client = transport_model(handler)
    with client:
        result = model.generate(MESSAGES)
    assert result.text == "Final Answer: 4"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 0)


def test_a_host_that_does_not_resolve_is_not_retried(waits: list[float]) -> None:
    calls: list[int] = []

    def unknown_host(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    model, _ = transport_model(unknown_host, max_retries=3)
    with pytest.raises(ProviderError) as info:
        model.generate(MESSAGES)
    assert len(calls) == 1 and waits == []
    assert "(host not found)" in str(info.value) and "gave up" not in str(info.value)


def test_a_reply_in_the_charset_its_server_declares_is_read_in_it() -> None:
    # Replies are parsed from their bytes (JSON is UTF-8); bytes that are not UTF-8 are read
    # as the declared charset says, as before.
    body = '{"choices": [{"message": {"content": "caf\u00e9"}}]}'.encode("latin-1")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body,
                              headers={"Content-Type": "application/json; charset=latin-1"})

    model, client = transport_model(handler)
    with client:
        assert model.generate(MESSAGES).text == "caf\u00e9"


def test_a_token_is_handled_before_the_next_chunk_is_read() -> None:
    """Whoever a token wakes (serve's stream, writing it to its client) runs before the
    stream reads on: the next read is ~0.2 ms of httpx and httpcore, on the token's path."""
    order: list[str] = []

    class Chunks(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for i, word in enumerate(["one", " two", " three"]):
                order.append(f"read {i}")
                yield sse(delta(content=word), done=False)
            yield sse(delta(finish_reason="stop"))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              stream=Chunks())

    model, client = transport_model(handler)

    async def main() -> str:
        woken: asyncio.Queue[str] = asyncio.Queue()

        async def consumer() -> None:
            while True:
                order.append(f"sent {await woken.get()}")

        task = asyncio.ensure_future(consumer())
        result = await model.agenerate(MESSAGES, on_token=woken.put_nowait)
        task.cancel()
        return result.text

    with client:
        assert asyncio.run(main()) == "one two three"
    assert order == ["read 0", "sent one", "read 1", "sent  two", "read 2", "sent  three"]
