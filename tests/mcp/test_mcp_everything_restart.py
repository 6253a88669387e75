"""The real server-everything over Streamable HTTP, restarted between two calls of one run:
it answers the old session id with 400 "No valid session ID provided", and the client starts
a new session and sends the call again. Real `agent run`, the mock model server on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import agent

from tests.mcp.conftest import free_port


class Everything:
    """server-everything (streamableHttp) on one fixed port, restartable."""

    def __init__(self, script: Path, tmp_path: Path) -> None:
        self.script, self.port, self.log = script, free_port(), tmp_path / "ev.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(["node", str(self.script), "streamableHttp"],
                                         env={**os.environ, "PORT": str(self.port)},
                                         stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        pytest.fail(f"server-everything did not listen on {self.port}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


def test_a_restarted_server_everything_gets_a_new_session(
        npm_servers: dict[str, Path], tmp_path: Path, mock_server: Any) -> None:
    server = Everything(npm_servers["everything"], tmp_path)
    asked = [0]

    def model(body: dict[str, Any]) -> dict[str, Any]:
        asked[0] += 1
        if asked[0] == 2:  # between the two calls: the server restarts, forgetting sessions
            server.stop()
            server.start()
        if asked[0] <= 2:
            word = "one" if asked[0] == 1 else "two"
            return {"tool_calls": [{"name": "ev__echo", "arguments": {"message": word}}]}
        return {"text": "echoed twice"}

    mock_server.set_responder(model)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"mcp_servers": {"ev": {
        "type": "http", "url": f"http://127.0.0.1:{server.port}/mcp", "trusted": True,
        "reconnect_delay": 0.05}}}))
    try:
        proc = agent("run", "echo twice", "-m", "openai/any", "-a", "tool-calling", "-c",
                     str(cfg), "-t", "ev.echo", "--no-log",
                     env={"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"})
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    results = [m["content"] for m in mock_server.requests[-1].body["messages"]
               if m["role"] == "tool"]
    assert results == ["Echo: one", "Echo: two"], results
    assert "No valid session" not in proc.stdout + proc.stderr
