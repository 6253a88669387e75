"""Structured actions on the provider side, and single-slot local servers (issue 14)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from agentcli.agents import agent_class
from agentcli.agents.action_schema import action_schema, schema_for_agent
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.errors import ProviderError
from agentcli.events import Notice, RunEvent, notifying
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.models.presets import create_model
from agentcli.models.structured import choose_mechanism, is_local_url, schema_fields
from agentcli.schema import ChatRequest, user
from agentcli.tools.base import Tool

MESSAGES = [user("What is 2 * 3?")]
BLOB = '{"action": "Final Answer", "action_input": "6"}'


def calc() -> Tool:
    return Tool("Calculator", "Evaluate a math expression.", lambda s: s)


def reply(text: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}], "usage": {}}


class Notices(BaseCallbackHandler):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def on_text(self, text: str, **kw: Any) -> None:
        self.texts.append(text)


def model_with(handler: Any, **kw: Any) -> tuple[OpenAICompatModel, list[dict[str, Any]]]:
    bodies: list[dict[str, Any]] = []

    def record(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        return handler(body)  # type: ignore[no-any-return]

    client = httpx.AsyncClient(transport=httpx.MockTransport(record))
    options: dict[str, Any] = {"structured_mechanism": "llamacpp", **kw}
    return OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", api_key=None,
                             async_client=client, max_retries=0, **options), bodies


# -- the schema ---------------------------------------------------------------------------


def test_schema_enumerates_tools_and_final_answer() -> None:
    schema = action_schema([calc(), Tool("Search", "Look it up.", lambda s: s)])
    assert schema["properties"]["action"]["enum"] == ["Calculator", "Search", "Final Answer"]
    assert list(schema["properties"]) == ["action", "action_input"]  # the tool comes first
    assert schema["required"] == ["action", "action_input"]
    assert schema["additionalProperties"] is False


def test_multi_argument_tool_gets_its_own_branch_with_its_arguments() -> None:
    args = {"type": "object", "title": "Args", "properties": {
        "title": {"type": "string", "title": "Title"}, "count": {"type": "integer"}},
        "required": ["title", "count"]}
    tool = Tool("Post", "Publish.", lambda **kw: "ok", args_schema=args)
    schema = action_schema([calc(), tool])
    branches = {b["properties"]["action"]["enum"][0]: b for b in schema["anyOf"]}
    assert set(branches) == {"Calculator", "Post", "Final Answer"}
    post_input = branches["Post"]["properties"]["action_input"]
    # decorative keywords go, an argument that happens to be called "title" stays
    assert "title" not in post_input and set(post_input["properties"]) == {"title", "count"}
    assert "title" not in post_input["properties"]["title"]
    assert branches["Calculator"]["properties"]["action_input"]["type"] == "string"
    assert branches["Calculator"]["properties"]["action_input"]["maxLength"] > 0


def test_only_json_blob_agent_types_get_a_schema() -> None:
    chat, native = agent_class("chat-zero-shot-react-description"), agent_class("tool-calling")
    assert schema_for_agent(chat, [calc()]) is not None
    assert schema_for_agent(chat, [calc()], "off") is None
    assert schema_for_agent(native, [calc()]) is None


# -- mechanisms ---------------------------------------------------------------------------


def test_each_server_kind_gets_its_own_field() -> None:
    schema = {"type": "object"}
    assert schema_fields("json_schema", schema)["response_format"]["json_schema"]["schema"] \
        == schema
    assert schema_fields("llamacpp", schema) == {
        "response_format": {"type": "json_object", "schema": schema}}
    assert schema_fields("guided_json", schema) == {"guided_json": schema}


@pytest.mark.parametrize(("spec", "base_url", "field"), [
    ("openai/gpt-4o-mini", None, "response_format"),
    ("ollama/qwen2.5", None, "response_format"),
    ("lmstudio/x", None, "response_format"),
    ("vllm/x", None, "guided_json"),
    ("llamacpp/x", None, "response_format"),
    ("custom/x", "http://127.0.0.1:8080/v1", "response_format"),
    ("custom/x", "https://example.com/v1", None),
    ("dashscope/qwen-turbo", None, None),
])
def test_auto_decides_per_preset(spec: str, base_url: str | None, field: str | None) -> None:
    model = create_model(spec, env={"OPENAI_API_KEY": "k", "DASHSCOPE_API_KEY": "k"},
                         base_url=base_url)
    payload = model._fields(ChatRequest((), response_format={"type": "object"}), stream=False)
    assert "response_schema" not in payload
    if field is None:
        assert "response_format" not in payload and "guided_json" not in payload
    else:
        assert field in payload


def test_off_sends_nothing_and_on_forces_a_mechanism() -> None:
    assert choose_mechanism("off", "json_schema", "http://127.0.0.1/v1") is None
    assert choose_mechanism("on", None, "https://example.com/v1") == "llamacpp"
    assert choose_mechanism("auto", None, "https://example.com/v1") is None


def test_llamacpp_preset_and_local_urls() -> None:
    model = create_model("llamacpp/smollm2", env={})
    assert model.base_url == "http://127.0.0.1:8080/v1" and model.local
    assert is_local_url("http://localhost:1234/v1") and is_local_url("http://127.0.0.5/v1")
    assert not is_local_url("https://api.openai.com/v1")
    assert not create_model("openai/gpt-4o-mini", env={"OPENAI_API_KEY": "k"}).local


# -- a server that refuses the field ------------------------------------------------------


def refuse_schema(body: dict[str, Any]) -> httpx.Response:
    if "response_format" in body:
        return httpx.Response(400, json={"error": {
            "message": "Unrecognized request argument supplied: response_format"}})
    return httpx.Response(200, json=reply(BLOB))


def test_a_refused_schema_is_dropped_for_the_session_with_one_notice() -> None:
    model, bodies = model_with(refuse_schema)
    seen: list[RunEvent] = []
    with notifying(seen.append):
        for _ in range(2):
            result = model.generate(MESSAGES, response_schema=action_schema([calc()]))
            assert result.text == BLOB
    assert ["response_format" in b for b in bodies] == [True, False, False]
    texts = [e.text for e in seen if isinstance(e, Notice)]
    assert len(texts) == 1 and "continuing without structured actions" in texts[0]


def test_a_refused_schema_when_streaming() -> None:
    def refuse_or_stream(body: dict[str, Any]) -> httpx.Response:
        if "response_format" in body:
            return refuse_schema(body)
        event = {"choices": [{"index": 0, "delta": {"content": "6"}, "finish_reason": "stop"}]}
        return httpx.Response(200, text=f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n",
                              headers={"content-type": "text/event-stream"})

    # json_schema: the llama.cpp form is asked whole (llama-cpp-python streams nothing under it)
    model, bodies = model_with(refuse_or_stream, structured_mechanism="json_schema")
    chunks = list(model.stream(MESSAGES, response_schema={"type": "object"}))
    assert "".join(c.text for c in chunks) == "6"
    assert ["response_format" in b for b in bodies] == [True, False]


def test_a_refused_schema_async() -> None:
    bodies: list[dict[str, Any]] = []

    def record(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return refuse_schema(bodies[-1])

    async def run() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
            model = OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", api_key=None,
                                      async_client=client, max_retries=0,
                                      structured_mechanism="llamacpp")
            return (await model.agenerate(MESSAGES, response_schema={"type": "object"})).text

    assert asyncio.run(run()) == BLOB
    assert ["response_format" in b for b in bodies] == [True, False]


def test_on_makes_a_refusal_one_clear_error() -> None:
    model, bodies = model_with(refuse_schema, structured_actions="on")
    with pytest.raises(ProviderError) as info:
        model.generate(MESSAGES, response_schema={"type": "object"})
    message = str(info.value)
    assert "response_format" in message and "structured_actions: off" in message
    assert message.count("structured_actions") == 2 and len(bodies) == 1


def test_other_400s_are_not_mistaken_for_a_refused_schema() -> None:
    model, bodies = model_with(
        lambda body: httpx.Response(400, json={"error": {"message": "context too long"}}))
    with pytest.raises(ProviderError, match="context too long"):
        model.generate(MESSAGES, response_schema={"type": "object"})
    assert len(bodies) == 1 and model.structured_mechanism == "llamacpp"


# -- local servers ------------------------------------------------------------------------


def test_local_requests_are_capped_unless_the_caller_sets_max_tokens() -> None:
    model, bodies = model_with(lambda body: httpx.Response(200, json=reply("hi")), local=True,
                               local_max_tokens=256)
    model.generate(MESSAGES)
    model.generate(MESSAGES, max_tokens=9)
    assert [b["max_tokens"] for b in bodies] == [256, 9]
    remote, bodies = model_with(lambda body: httpx.Response(200, json=reply("hi")))
    remote.generate(MESSAGES)
    assert "max_tokens" not in bodies[0]


class _Endless(BaseHTTPRequestHandler):
    """Streams tokens until the client goes away (a server that ignores ``stop``)."""

    sent: list[int]
    closed: threading.Event

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        tokens = ["The", " answer", " is", " 6", ".", "\nObservation:", " more"] + [" x"] * 5000
        try:
            for i, token in enumerate(tokens):
                event = {"choices": [{"index": 0, "delta": {"content": token}}]}
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
                self.sent.append(i)
                threading.Event().wait(0.002)
            self.wfile.write(b"data: [DONE]\n\n")
        except (BrokenPipeError, ConnectionResetError):
            self.closed.set()


@pytest.fixture
def endless() -> Iterator[type[_Endless]]:
    handler = type("Handler", (_Endless,), {"sent": [], "closed": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}/v1"  # type: ignore[attr-defined]
    yield handler
    server.shutdown()
    server.server_close()


def test_a_stop_string_closes_the_stream_so_the_server_stops(endless: type[_Endless]) -> None:
    model = create_model("custom/m", base_url=endless.url, env={})  # type: ignore[attr-defined]
    assert model.local
    result = model.generate(MESSAGES, stop=["\nObservation:"])  # not streaming: cut anyway
    assert result.text == "The answer is 6." and result.finish_reason == "stop"
    assert endless.closed.wait(30)  # the server noticed the client leave...
    assert len(endless.sent) < 5000  # ...long before it finished generating


def test_local_read_timeout_is_not_retried_and_names_the_setting() -> None:
    calls: list[int] = []

    def slow(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ReadTimeout("timed out", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(slow))
    model = OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", api_key=None,
                              async_client=client, max_retries=3, local=True, backoff_base=0.0)
    with pytest.raises(ProviderError) as info:
        model.generate(MESSAGES)
    assert len(calls) == 1
    assert "read_timeout" in str(info.value) and "AGENT_READ_TIMEOUT" in str(info.value)
    assert "not retried" in str(info.value)


def _sse(*pieces: str) -> httpx.Response:
    events = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
              for p in pieces]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


def test_constrained_llamacpp_requests_stream_token_by_token() -> None:
    # llama.cpp's server streams under a grammar: the tokens come as they are written
    model, bodies = model_with(lambda body: _sse(BLOB[:10], BLOB[10:]), local=True)
    tokens: list[str] = []
    result = model.generate(MESSAGES, stop=["Observation:"], on_token=tokens.append,
                            response_schema={"type": "object"})
    assert result.text == BLOB and "".join(tokens) == BLOB and len(tokens) == 2
    assert bodies[0]["stream"] is True and "response_format" in bodies[0]


def test_a_server_that_streams_nothing_under_a_schema_is_asked_whole() -> None:
    # llama-cpp-python 0.3 sends no content when it streams under a grammar (seen live)
    def server(body: dict[str, Any]) -> httpx.Response:
        return _sse() if body.get("stream") else httpx.Response(200, json=reply(BLOB))

    model, bodies = model_with(server, local=True)
    for _ in range(2):
        tokens: list[str] = []
        result = model.generate(MESSAGES, on_token=tokens.append,
                                response_schema={"type": "object"})
        assert result.text == BLOB and tokens == [BLOB]
    # the first stream came back empty: asked whole then, and whole from then on
    assert [b.get("stream", False) for b in bodies] == [True, False, False]
    assert all("response_format" in b for b in bodies)


def test_a_500_naming_response_format_drops_the_field_without_retrying() -> None:
    """llama-cpp-python answers an unsupported response_format with 500, not 400."""

    def llamacpp_500(body: dict[str, Any]) -> httpx.Response:
        if "response_format" in body:
            return httpx.Response(500, json={"error": {
                "message": "response_format type json_object with schema is not supported"}})
        return httpx.Response(200, json=reply(BLOB))

    model, bodies = model_with(llamacpp_500)
    assert model.generate(MESSAGES, response_schema={"type": "object"}).text == BLOB
    assert ["response_format" in b for b in bodies] == [True, False]  # no retry of the refusal


def test_a_500_that_names_no_field_is_still_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.models import openai_compat

    async def no_wait(_s: float) -> None:
        return None

    monkeypatch.setattr(openai_compat, "_asleep", no_wait)
    bodies: list[dict[str, Any]] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        if len(bodies) < 3:
            return httpx.Response(500, json={"error": {"message": "overloaded"}})
        return httpx.Response(200, json=reply(BLOB))

    model = OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", api_key=None,
                              async_client=httpx.AsyncClient(transport=httpx.MockTransport(flaky)),
                              max_retries=2, structured_mechanism="llamacpp")
    assert model.generate(MESSAGES, response_schema={"type": "object"}).text == BLOB
    assert len(bodies) == 3 and all("response_format" in b for b in bodies)
