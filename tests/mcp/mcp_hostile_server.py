"""A raw JSON-RPC stdio MCP server that misbehaves as its arguments say, for the tests of
what a run does about it (issue 38). ``argv[1]`` is a file where it records ``pid N`` (and
``child N``, ``call`` when a tool call comes, ``eof``); ``argv[2:]`` are behaviours:

- ``setsid``: at start, starts a child that leaves its process group (``setsid()``) and sleeps;
- ``deaf``: ignores SIGTERM and stdin EOF (only SIGKILL ends it);
- ``slow-call``: its tool call never answers;
- ``err-call=MB``: writes MB megabytes to stderr during a tool call, then answers;
- ``err-start=MB``: writes MB megabytes to stderr before reading anything;
- ``err-eof=MB``: on stdin EOF, writes MB megabytes to stderr and a last line, records ``bye``;
- ``junk-start=MB``: writes MB megabytes to stdout, without a newline, before anything;
- ``huge-call=MB``: answers its tool call with one JSON line of MB megabytes;
- ``silent``: never answers ``initialize``;
- ``roots``: once initialised, records ``roots none`` when the client declared no roots
  capability, else asks for the roots and records ``roots ["URI", ...]``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import TextIO

RECORD = sys.argv[1]
MODES = {m.partition("=")[0]: m.partition("=")[2] for m in sys.argv[2:]}
MB = 1 << 20


def record(event: str) -> None:
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(event + "\n")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def flood(stream: TextIO, megabytes: str, line: bytes) -> None:
    out = stream.buffer
    for _ in range(int(float(megabytes) * MB) // len(line)):
        out.write(line)
    out.flush()


record(f"pid {os.getpid()}")
if "deaf" in MODES:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "setsid" in MODES:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)
    record(f"child {child.pid}")
if "err-start" in MODES:
    flood(sys.stderr, MODES["err-start"], b"starting up, very loudly " * 40 + b"\n")
if "junk-start" in MODES:
    flood(sys.stdout, MODES["junk-start"], b"x" * 65536)
CLIENT_CAPABILITIES: dict[str, object] = {}
TOOL = {"name": "ping", "description": "Answer pong.", "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {}}}
for line in sys.stdin:
    msg = json.loads(line)
    method, ident = msg.get("method"), msg.get("id")
    if method is None and ident == "roots-1":
        record("roots " + json.dumps([r["uri"] for r in msg.get("result", {}).get("roots", [])]))
    elif method == "notifications/initialized" and "roots" in MODES:
        if "roots" in CLIENT_CAPABILITIES:
            send({"id": "roots-1", "method": "roots/list"})
        else:
            record("roots none")
    elif method == "initialize":
        CLIENT_CAPABILITIES = msg["params"].get("capabilities") or {}
        if "silent" in MODES:
            continue
        send({"id": ident, "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}}})
    elif method == "tools/list":
        send({"id": ident, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        record("call")
        if "slow-call" in MODES:
            continue
        if "err-call" in MODES:
            flood(sys.stderr, MODES["err-call"], b"working, very loudly " * 50 + b"\n")
        text = "pong" + "!" * int(float(MODES.get("huge-call") or 0) * MB)
        send({"id": ident, "result": {"content": [{"type": "text", "text": text}]}})
    elif ident is not None and method is not None:
        send({"id": ident, "result": {}})
record("eof")
if "err-eof" in MODES:
    flood(sys.stderr, MODES["err-eof"], b"saying goodbye at length " * 40 + b"\n")
    sys.stderr.write("goodbye for good\n")
    sys.stderr.flush()
    record("bye")
while "deaf" in MODES:
    time.sleep(0.05)
