"""`--schema` references are resolved inside the schema only (issue 20): a remote `$ref` is
refused before anything is fetched, circular or too-deep schemas are one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def run(server: Any, tmp_path: Path, schema: Any) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "schema.json"
    path.write_text(schema if isinstance(schema, str) else json.dumps(schema))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/any", "--schema", str(path),
         "q"], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    return proc.stderr


def test_a_remote_ref_is_refused_before_any_connection(
    mock_server: Any, tmp_path: Path
) -> None:
    hits: list[str] = []

    class Metadata(BaseHTTPRequestHandler):  # stands in for a cloud metadata service
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "object"}')

        def log_message(self, *args: Any) -> None:
            pass

    host = ThreadingHTTPServer(("127.0.0.1", 0), Metadata)
    threading.Thread(target=host.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{host.server_port}/latest/meta-data/schema.json"
        proc = run(mock_server, tmp_path, {"type": "object", "properties": {
            "x": {"$ref": url}}})
    finally:
        host.shutdown()
        host.server_close()
    err = one_line_exit_2(proc)
    assert "points outside the schema" in err and url in err
    assert hits == [] and mock_server.requests == []


def test_circular_and_deep_schemas_are_clear_errors(mock_server: Any, tmp_path: Path) -> None:
    err = one_line_exit_2(run(mock_server, tmp_path, {"$ref": "#"}))
    assert "round in a circle" in err
    err = one_line_exit_2(run(mock_server, tmp_path, {
        "$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}))
    assert "round in a circle" in err
    err = one_line_exit_2(run(mock_server, tmp_path, "[" * 3000 + "]" * 3000))
    assert "nested too deeply" in err
    err = one_line_exit_2(run(mock_server, tmp_path, {"$ref": "#/$defs/missing"}))
    assert "names nothing" in err


def test_a_recursive_schema_with_structure_still_works(mock_server: Any, tmp_path: Path) -> None:
    tree = {"type": "object", "properties": {"name": {"type": "string"}, "children": {
        "type": "array", "items": {"$ref": "#"}}}, "required": ["name"]}
    mock_server.add_reply('{"action": "Final Answer", "action_input": {"name": "root", '
                          '"children": [{"name": "leaf"}]}}')
    proc = run(mock_server, tmp_path, tree)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["children"][0]["name"] == "leaf"
