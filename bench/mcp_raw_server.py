"""A stdio MCP server without the SDK (newline-delimited JSON-RPC, one ``echo`` tool), so a
start-up bench measures the client, not the server's own imports (``mcp_first_tool.py``)."""

from __future__ import annotations

import json
import sys

TOOL = {"name": "echo", "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]},
        "annotations": {"readOnlyHint": True}}


def answer(request: dict[str, object]) -> dict[str, object] | None:
    method, params = request.get("method"), request.get("params") or {}
    assert isinstance(params, dict)
    if "id" not in request:
        return None  # a notification
    if method == "initialize":
        result: object = {"protocolVersion": params.get("protocolVersion"),
                          "capabilities": {"tools": {"listChanged": False}},
                          "serverInfo": {"name": "raw-echo", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")  # type: ignore[union-attr]
        result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


for line in sys.stdin:
    if line.strip():
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
