"""A raw JSON-RPC stdio MCP server for the shutdown tests, recording what happens to it in the
file ``argv[1]`` (one event a line): ``pid N``, ``child N``, ``eof``, ``sigterm``, and
``late`` once ``argv[3]`` seconds (most of the SDK stdio_client's wait) have passed since ``eof``
without a SIGTERM: a client that waits that long before ending it records ``late`` first.

``linger`` (``argv[2]``) behaves like the npm server-everything when it is closed soon after
start-up: once initialised it asks the client for its roots and, waiting for that answer,
does not exit when its stdin closes; it starts a child (its own process group's member) that
sleeps. ``ask`` lingers too, having sent a request after its stdin closed (as
server-everything does when its client closes it before its roots request, 350 ms after
start-up): it records ``asked``. ``exit`` exits as soon as its stdin closes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

RECORD, MODE, LATE = sys.argv[1], sys.argv[2], float(sys.argv[3])


def record(event: str) -> None:
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(event + "\n")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def on_term(signum: int, frame: object) -> None:
    record("sigterm")
    os._exit(0)


signal.signal(signal.SIGTERM, on_term)
record(f"pid {os.getpid()}")
if MODE == "linger":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    record(f"child {child.pid}")
TOOL = {"name": "ping", "description": "Answer pong.", "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {}}}
for line in sys.stdin:
    msg = json.loads(line)
    method, ident = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"id": ident, "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "lingering", "version": "1"}}})
    elif method == "notifications/initialized" and MODE == "linger":
        send({"id": "roots-1", "method": "roots/list"})  # its answer may never come
    elif method == "tools/list":
        send({"id": ident, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        send({"id": ident, "result": {"content": [{"type": "text", "text": "pong"}]}})
    elif ident is not None and method is not None:
        send({"id": ident, "result": {}})
record("eof")
if MODE == "ask":
    record("asked")
    send({"id": "roots-2", "method": "roots/list"})
late = time.monotonic() + LATE
while MODE != "exit":  # as a server with a request of its own in flight does
    time.sleep(0.05)
    if late and time.monotonic() > late:
        record("late")
        late = 0
