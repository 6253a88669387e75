"""A lean OpenAI-compatible mock server for benchmarks, run in its own process.

The test suite's ``MockOpenAIServer`` is a thread-per-request stdlib server (~3 ms CPU per
request): in a benchmark it, not the client, would be the bottleneck. This one is a single
asyncio loop with keep-alive HTTP/1.1 and no JSON parsing of requests (replies are chosen by
substring), so one request costs it ~0.1 ms of CPU. It also timestamps every request, so a
client's overhead between two calls can be read from the server side without touching the
client.

    python bench/server.py            # prints "PORT <n>", then serves until killed

Control (plain HTTP on the same port): ``POST /_mode`` with ``{"mode", "delay", "record"}``
(modes: seed, final, step, chat, big; ``record: true`` keeps every request body, ``GET /_bodies``
returns them, so a bare client can replay the very same bytes), ``GET /_stats`` ->
``{"cpu", "requests", "gaps"}`` where ``gaps`` are the seconds between each response sent and
the next request received, and ``POST /_reset`` clears the log.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

SEED_ACTION = (
    "Thought: I need to calculate 25% of 300. I can use the Calculator tool for this.\n"
    "Action:\n```\n{\n  \"action\": \"Calculator\",\n  \"action_input\": \"300 * 0.25\"\n}\n```\n"
)
SEED_FINAL = "The calculation shows that 25% of 300 is 75. \n\nFinal Answer: 75"
MATH_REPLY = '```text\n300 * 0.25\n```\n...numexpr.evaluate("300 * 0.25")...\n'
STEP_ACTION = 'Thought: again\nAction:\n```\n{"action": "echo", "action_input": "x"}\n```\n'
CHAT_FINAL = '```json\n{"action": "Final Answer", "action_input": "ok"}\n```'
BIG_ACTION = 'Thought: read it\nAction:\n```\n{"action": "big", "action_input": "x"}\n```\n'

state: dict[str, object] = {"mode": "seed", "delay": 0.0}
log: list[tuple[float, float]] = []  # (request received, response sent), monotonic seconds
bodies: list[str] = []  # request bodies, kept while state["record"] is on


def reply_text(body: bytes) -> str:
    """The reply for this request body in the current mode."""
    mode = state["mode"]
    if mode == "final":
        return "Final Answer: ok"
    if mode == "step":
        return STEP_ACTION
    if mode == "chat":
        return CHAT_FINAL
    if mode == "big":  # bench/regress.py: a tool whose output starts with BIG-START
        return "Final Answer: done" if b"BIG-START" in body else BIG_ACTION
    if b"Translate a math problem" in body:
        return MATH_REPLY
    if b"Answer: 75" in body:
        return SEED_FINAL
    return SEED_ACTION


def completion(text: str, stream: bool) -> tuple[bytes, bytes]:
    """(content type, body) of a chat completion, plain or as server-sent events."""
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not stream:
        data = {"id": "c", "object": "chat.completion", "created": 0, "model": "mock-model",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": usage}
        return b"application/json", json.dumps(data).encode()
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": usage},
    ]
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "mock-model"}
    body = "".join(f"data: {json.dumps(base | e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return b"text/event-stream", body.encode()


def control(method: str, path: str, body: bytes) -> bytes:
    """Answer a control request."""
    if path == "/_mode":
        state.update(json.loads(body))
    elif path == "/_reset":
        log.clear()
        bodies.clear()
    elif path == "/_bodies":
        return json.dumps(bodies).encode()
    elif path == "/_stats":
        cpu = os.times()
        gaps = [log[i][0] - log[i - 1][1] for i in range(1, len(log))]
        return json.dumps({"cpu": cpu.user + cpu.system, "requests": len(log),
                           "gaps": gaps}).encode()
    return b"{}"


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve one keep-alive connection."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            received = time.monotonic()
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                if line[:15].lower() == "content-length:":
                    length = int(line[15:])
            body = await reader.readexactly(length) if length else b""
            if path.startswith("/_"):
                ctype, payload = b"application/json", control(method, path, body)
            else:
                delay = float(state["delay"])  # type: ignore[arg-type]
                if delay:
                    await asyncio.sleep(delay)
                if state.get("record"):
                    bodies.append(body.decode("utf-8"))
                stream = b'"stream": true' in body or b'"stream":true' in body
                ctype, payload = completion(reply_text(body), stream)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: " + ctype
                         + b"\r\nContent-Length: " + str(len(payload)).encode()
                         + b"\r\n\r\n" + payload)
            await writer.drain()
            if not path.startswith("/_"):
                log.append((received, time.monotonic()))
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    """Bind a free loopback port, print it, serve forever."""
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print("PORT", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
