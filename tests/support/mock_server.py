"""A real local HTTP server that speaks the OpenAI chat-completions API, for tests and demos.

Replies and faults are scripted; faults are consumed first, in order, then replies, then the
responder function. With nothing scripted the server answers 500 so a test fails loudly.
Stdlib only: ``python -m tests.support.mock_server --port 0 --script replies.json``.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.support.mock_replies import (
    Fault,
    Reply,
    prompt_chars,
    split_args,
    split_text,
    tokens,
    tool_call,
)

FaultKind = Literal["status", "reset", "timeout", "stream_cut", "invalid_json", "empty_choices",
                   "trickle", "endless_sse", "slow_first_byte"]
FAULT_KINDS: tuple[str, ...] = (
    "status", "reset", "timeout", "stream_cut", "invalid_json", "empty_choices",
    "trickle", "endless_sse", "slow_first_byte",
)
# Slow faults (deadline tests): trickle sends a valid reply one byte every ``delay`` (0.5 s);
# endless_sse streams a content delta every ``delay`` (0.1 s) and never finishes;
# slow_first_byte waits ``delay`` (20 s) before answering ``text``. A 429 with ``retry_after``
# is the "status" fault. Each stops when the client goes away or the server stops.
_SLOW_FAULT_CAP = 300.0  # seconds; no slow fault outlives this even if nobody disconnects
Responder = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received (body is ``{}`` for GET)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    method: str = "POST"


class MockOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 with scripted replies and faults."""

    def __init__(
        self,
        *,
        dashscope_style: bool = False,
        honour_stop: bool = False,
        models: tuple[str, ...] = ("mock-model",),
        port: int = 0,
    ) -> None:
        self.dashscope_style = dashscope_style
        self.honour_stop = honour_stop
        self.models = models
        self._port = port
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._replies: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._fault_rate = 0.0
        self._fault_menu: list[Fault] = []
        self._rng = random.Random(0)
        self.injected: Counter[str] = Counter()  # random faults served, by kind
        self._requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()  # ends slow faults still being served

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> MockOpenAIServer:
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self.stopping.clear()
        handler = type("_BoundHandler", (_Handler,), {"mock": self})
        self._httpd = _Server(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name="mock-openai", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (safe to call twice)."""
        if self._httpd is None:
            return
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> MockOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        if self._httpd is None:
            raise RuntimeError("mock server is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------

    def add_reply(
        self,
        text: str | None = None,
        *,
        tool_calls: list[dict[str, Any]] | None = None,
        delay: float = 0.0,
        usage: dict[str, int] | None = None,
        chunk_delay: float = 0.0,
    ) -> None:
        """Queue one reply: text and/or tool calls ``{"name", "arguments", "id"?}``."""
        with self._lock:
            self._replies.append(Reply(text, list(tool_calls or []), delay, usage, chunk_delay))

    def set_responder(self, fn: Responder | None) -> None:
        """Answer from ``fn(body) -> reply spec`` once the queued replies are used up."""
        with self._lock:
            self._responder = fn

    def add_fault(
        self,
        kind: FaultKind,
        *,
        times: int = 1,
        status: int | None = None,
        retry_after: float | str | None = None,
        delay: float | None = None,
        message: str | None = None,
        text: str | None = None,
    ) -> None:
        """Queue a fault for the next ``times`` requests (``text``: content sent before a cut)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
        after = None if retry_after is None else str(retry_after)
        with self._lock:
            self._faults.append(Fault(kind, times, status, after, delay, message, text))

    def set_fault_rate(
        self, rate: float, faults: list[dict[str, Any]] | None = None, *, seed: int = 0
    ) -> None:
        """Inject a random fault into ``rate`` of the requests not taken by queued faults.

        ``faults`` lists ``add_fault`` keyword dicts to pick from uniformly (default: 429 with
        ``Retry-After: 0``, 500, 503, reset, stream cut, invalid JSON, empty choices).
        """
        menu: list[dict[str, Any]] = faults if faults is not None else [
            {"kind": "status", "status": 429, "retry_after": 0},
            {"kind": "status", "status": 500}, {"kind": "status", "status": 503},
            {"kind": "reset"}, {"kind": "stream_cut"}, {"kind": "invalid_json"},
            {"kind": "empty_choices"},
        ]
        built = []
        for entry in menu:
            spec = dict(entry)
            kind = spec.pop("kind")
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
            after = spec.pop("retry_after", None)
            built.append(Fault(kind, 1, retry_after=None if after is None else str(after),
                                **spec))
        with self._lock:
            self._fault_rate = rate
            self._fault_menu = built
            self._rng = random.Random(seed)
            self.injected = Counter()

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far."""
        with self._lock:
            return list(self._requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self, body: dict[str, Any]) -> Fault | Reply | None:
        with self._lock:
            if self._faults:
                fault = self._faults[0]
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.popleft()
                return fault
            if self._fault_rate and self._rng.random() < self._fault_rate:
                fault = self._rng.choice(self._fault_menu)
                self.injected[fault.kind + (f" {fault.status}" if fault.status else "")] += 1
                return fault
            if self._replies:
                return self._replies.popleft()
            responder = self._responder
        return None if responder is None else Reply.from_spec(responder(body))


class _Server(ThreadingHTTPServer):
    # The stdlib default backlog of 5 drops SYNs when a batch opens 16+ connections at once,
    # and the client then waits a full second to retry: a fake slowness no real server has.
    request_queue_size = 256


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections end after this many seconds
    mock: MockOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a timeout or a stop cut)

    def do_GET(self) -> None:
        self.mock._record(RecordedRequest(self.path, dict(self.headers), {}, "GET"))
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "owned_by": "mock"} for m in self.mock.models]
            self._send_json(200, {"object": "list", "data": data})
        elif self.path.rstrip("/") == "/api/tags":
            self._send_json(200, {"models": [{"name": m, "model": m} for m in self.mock.models]})
        else:
            self._send_error(404, f"mock server: no route GET {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        self.mock._record(RecordedRequest(self.path, dict(self.headers),
                                          body if isinstance(body, dict) else {}))
        if not isinstance(body, dict):
            self._send_error(400, "mock server: request body is not a JSON object")
            return
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(404, f"mock server: no route POST {self.path}")
            return
        try:
            action = self.mock._next(body)
        except Exception as err:  # a responder bug must reach the test as a 500
            self._send_error(500, f"mock server: responder failed: {err!r}")
            return
        if action is None:
            self._send_error(500, "mock server: no scripted reply left")
        elif isinstance(action, Fault):
            self._fault(action, body)
        else:
            self._reply(action, body)

    # -- faults ---------------------------------------------------------------------------

    def _fault(self, fault: Fault, body: dict[str, Any]) -> None:
        streaming = bool(body.get("stream"))
        if fault.kind == "status":
            status = fault.status or 500
            message = fault.message or self._status_message(status)
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            self._send_error(status, message, headers)
        elif fault.kind in ("reset", "timeout"):
            if fault.kind == "timeout":
                time.sleep(1.0 if fault.delay is None else fault.delay)
            self.close_connection = True  # no response at all
        elif fault.kind == "stream_cut":
            self._stream_cut(fault, body, streaming)
        elif fault.kind == "invalid_json":
            if streaming:
                self._start_stream()
                self._chunk(b"data: <html>not json</html>\n\n")
                self._chunk(b"")
            else:
                self._send_raw(200, b"<html>502 Bad Gateway</html>", "text/html")
        elif fault.kind in ("trickle", "endless_sse", "slow_first_byte"):
            self._slow(fault, body, streaming)
        else:  # empty_choices
            empty = {"id": "chatcmpl-mock", "object": "chat.completion", "choices": []}
            if streaming:
                self._start_stream()
                self._event({**empty, "object": "chat.completion.chunk"})
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")
            else:
                self._send_json(200, empty)

    def _slow(self, fault: Fault, body: dict[str, Any], streaming: bool) -> None:
        """Serve one of the slow faults; a client that hangs up ends it (BrokenPipe)."""
        stop = self.mock.stopping
        if fault.kind == "slow_first_byte":
            stop.wait(20.0 if fault.delay is None else fault.delay)
            self._reply(Reply(fault.text or "Final Answer: late"), body)
            return
        ends = time.monotonic() + _SLOW_FAULT_CAP
        self.close_connection = True
        if fault.kind == "endless_sse":
            base = self._base(body)
            self._start_stream()
            self._event(self._delta(base, {"role": "assistant", "content": ""}))
            while not stop.wait(0.1 if fault.delay is None else fault.delay):
                if time.monotonic() > ends:
                    return
                self._event(self._delta(base, {"content": fault.text or " tick"}))
            return
        # trickle: a well-formed reply, one byte at a time
        text = fault.text or "Final Answer: " + "slow " * 20_000
        if streaming:
            base = self._base(body)
            data = b"".join(
                f"data: {json.dumps(self._delta(base, {'content': piece}))}\n\n".encode()
                for piece in split_text(text)) + b"data: [DONE]\n\n"
            self._start_stream()
            send: Callable[[bytes], None] = self._chunk
        else:
            message = {"role": "assistant", "content": text}
            data = json.dumps({**self._base(body), "object": "chat.completion", "choices": [
                {"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.flush()

            def raw(piece: bytes) -> None:
                self.wfile.write(piece)
                self.wfile.flush()

            send = raw
        for i in range(len(data)):
            if stop.wait(0.5 if fault.delay is None else fault.delay) or time.monotonic() > ends:
                return
            send(data[i:i + 1])

    def _status_message(self, status: int) -> str:
        if status == 401:  # like a real server, echo the credential: the client must scrub it
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            return f"Incorrect API key provided: {token}"
        return f"mock server: injected {status} {self.responses.get(status, ('',))[0]}".strip()

    def _stream_cut(self, fault: Fault, body: dict[str, Any], streaming: bool) -> None:
        if not streaming:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write(b'{"id": "chatcmpl-mock", "choices": [')
        else:
            self._start_stream()
            base = self._base(body)
            self._event(self._delta(base, {"role": "assistant", "content": ""}))
            for piece in split_text(fault.text or ""):
                self._event(self._delta(base, {"content": piece}))
        self.wfile.flush()
        self.close_connection = True  # no terminating chunk, no [DONE]

    # -- replies --------------------------------------------------------------------------

    def _reply(self, reply: Reply, body: dict[str, Any]) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        text = reply.text or ""
        if self.mock.honour_stop and body.get("stop"):
            stops = [body["stop"]] if isinstance(body["stop"], str) else body["stop"]
            cuts = [i for s in stops if s and (i := text.find(s)) >= 0]
            text = text[: min(cuts)] if cuts else text
        calls = [tool_call(c, i) for i, c in enumerate(reply.tool_calls)]
        args_chars = sum(len(c["function"]["arguments"]) for c in calls)
        usage = reply.usage or {
            "prompt_tokens": tokens(prompt_chars(body)),
            "completion_tokens": tokens(len(text) + args_chars),
        }
        usage = {**usage, "total_tokens": usage.get("prompt_tokens", 0)
                 + usage.get("completion_tokens", 0)}
        finish = "tool_calls" if calls else "stop"
        if body.get("stream"):
            self._stream_reply(reply, body, text, calls, finish, usage)
            return
        message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls
                                   else None}
        if calls:
            message["tool_calls"] = calls
        self._send_json(200, {
            **self._base(body), "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        })

    def _stream_reply(self, reply: Reply, body: dict[str, Any], text: str,
                      calls: list[dict[str, Any]], finish: str, usage: dict[str, int]) -> None:
        base = self._base(body)
        self._start_stream()
        events = [self._delta(base, {"role": "assistant", "content": ""})]
        events += [self._delta(base, {"content": piece}) for piece in split_text(text)]
        for index, call in enumerate(calls):
            events += [self._delta(base, {"tool_calls": [part]})
                       for part in self._call_parts(index, call)]
        events.append(self._delta(base, {}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": usage})
        for event in events:
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            self._event(event)
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _call_parts(self, index: int, call: dict[str, Any]) -> Iterator[dict[str, Any]]:
        fn = call["function"]
        head = {"index": index, "id": call["id"], "type": "function"}
        yield {**head, "function": {"name": fn["name"], "arguments": ""}}
        for piece in split_args(fn["arguments"]):
            if self.mock.dashscope_style:  # DashScope resends id and name in every chunk
                yield {**head, "function": {"name": fn["name"], "arguments": piece}}
            else:
                yield {"index": index, "function": {"arguments": piece}}

    # -- wire helpers ---------------------------------------------------------------------

    def _base(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model") or self.mock.models[0]}

    @staticmethod
    def _delta(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None
               ) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def _send_error(self, status: int, message: str, headers: dict[str, str] | None = None
                    ) -> None:
        error = {"error": {"message": message, "type": "mock_error", "code": status}}
        self._send_raw(status, json.dumps(error).encode(), "application/json", headers)

    def _send_json(self, status: int, data: dict[str, Any]) -> None:
        self._send_raw(status, json.dumps(data).encode(), "application/json")

    def _send_raw(self, status: int, data: bytes, content_type: str,
                  headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _event(self, event: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(event)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        """Write one HTTP chunk; an empty one ends the body."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


if __name__ == "__main__":
    from tests.support.mock_cli import main

    main()
