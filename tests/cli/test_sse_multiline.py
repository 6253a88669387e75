"""A model server whose SSE events spread their JSON over several ``data:`` lines (valid SSE:
the lines of one event are joined with newlines) is read like any other, through the real
`agent run` (AGENT_STREAM=1); an event that never becomes JSON is still one clear line."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest


def event(payload: dict[str, Any], *, split: bool) -> bytes:
    text = json.dumps(payload, indent=1 if split else None)  # indent: one key a line
    return "".join(f"data: {line}\n" for line in text.splitlines()).encode() + b"\n"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def serve(body: bytes) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def multiline() -> Iterator[str]:
    body = b": a comment\n\n" + b"".join([
        event(chunk({"role": "assistant", "content": ""}), split=True),
        event(chunk({"content": "Final Answer: forty"}), split=True),
        event(chunk({"content": "-two"}), split=False),  # one line, blank line after
        event(chunk({}, "stop"), split=True),
    ]) + b"data: [DONE]\n\n"
    yield from serve(body)


@pytest.fixture
def broken() -> Iterator[str]:
    yield from serve(b'data: {"choices": [\ndata: not json\n\ndata: [DONE]\n\n')


def agent(url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {
        "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-t", "AGENT_STREAM": "1"}
    return subprocess.run([sys.executable, "-m", "agentcli", "run", "q", "-m", "openai/m",
                           "-q", "--no-log"], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


def test_an_event_split_over_data_lines_is_read(multiline: str) -> None:
    proc = agent(multiline)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "forty-two"


def test_an_event_that_is_not_json_is_one_line(broken: str) -> None:
    proc = agent(broken)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "a stream event that is not JSON" in " ".join(proc.stderr.split())
