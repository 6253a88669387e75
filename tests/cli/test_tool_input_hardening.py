"""Values a model or the state fills into YAML tools stay inside what the tool allows (issue 20):
a URL path segment never climbs out (``..``, ``/``), an unknown argument is refused clearly."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


class _Paths(BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"page " + self.path.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[tuple[str, list[str]]]:
    """A 127.0.0.1 web server recording the path of every request: (base URL, paths)."""
    seen: list[str] = []
    handler = type("Handler", (_Paths,), {"seen": seen})
    host = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=host.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{host.server_port}", seen
    finally:
        host.shutdown()
        host.server_close()


def agent(server: Any, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(cwd / "a.db"))
    return subprocess.run([sys.executable, "-m", "agentcli", "run", *args, "-m", "openai/any",
                           "--agent", "tool-calling"], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=cwd)


def _config(tmp_path: Path, base: str) -> None:
    (tmp_path / "c.yaml").write_text(f"""
state:
  p: {{type: str}}
yaml_tools:
  - name: page
    kind: http
    url: '{base}/public/{{state.p}}/{{name}}/view?q={{name}}'
    allow_private_network: true
    args: {{name: {{type: string}}}}
""")


def _observations(mock_server: Any) -> list[str]:
    """The tool results the model was sent by the end of the run."""
    last = mock_server.requests[-1].body["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


@pytest.mark.parametrize(("state", "name", "refused"), [
    ("..", "ok", "'..' for {state.p} makes the path segment '..'"),
    (".", "ok", "'.' for {state.p} makes the path segment '.'"),
    ("docs", "..", "'..' for {name} makes the path segment '..'"),
    ("docs", "", "'' for {name} makes the path segment ''"),
    ("docs", "../../secret", "for {name} holds a path separator"),
    ("a/b", "ok", "for {state.p} holds a path separator"),
    ("docs", "..\\secret", "for {name} holds a path separator"),
])
def test_a_filled_value_cannot_change_the_url_path(
    mock_server: Any, tmp_path: Path, site: tuple[str, list[str]], state: str, name: str,
    refused: str
) -> None:
    base, seen = site
    _config(tmp_path, base)
    mock_server.add_reply("", tool_calls=[{"name": "page", "arguments": {"name": name}}])
    mock_server.add_reply("done")
    proc = agent(mock_server, "read it", "-c", "c.yaml", "-t", "page", "--state", f"p={state}",
                 cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert seen == []  # refused before any request
    [observation] = _observations(mock_server)
    assert refused in observation and "give one path segment" in observation


def test_a_plain_segment_and_dots_inside_a_name_still_work(
    mock_server: Any, tmp_path: Path, site: tuple[str, list[str]]
) -> None:
    base, seen = site
    _config(tmp_path, base)
    mock_server.add_reply("", tool_calls=[{"name": "page", "arguments": {"name": "v1..2 a"}}])
    mock_server.add_reply("done")
    proc = agent(mock_server, "read it", "-c", "c.yaml", "-t", "page", "--state", "p=...",
                 cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert seen == ["/public/.../v1..2%20a/view?q=v1..2%20a"]
    [observation] = _observations(mock_server)
    assert observation == "page " + seen[0]


def test_an_unknown_argument_to_a_tool_without_args_is_refused(
    mock_server: Any, tmp_path: Path
) -> None:
    (tmp_path / "c.yaml").write_text("""
state:
  user: {type: str}
yaml_tools:
  - name: whoami
    kind: command
    argv: [echo, "user={state.user}"]
    dangerous: false
""")
    mock_server.add_reply("", tool_calls=[{"name": "whoami", "arguments": {"state.user": "EVIL"}}])
    mock_server.add_reply("", tool_calls=[{"name": "whoami", "arguments": {}}])
    mock_server.add_reply("done")
    proc = agent(mock_server, "who am I?", "-c", "c.yaml", "-t", "whoami", "--state",
                 "user=ada", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    refused, answered = _observations(mock_server)
    assert refused == ("Error: whoami: unknown argument(s) ['state.user']; it takes no "
                       "arguments; send {}")
    assert "EVIL" not in answered and answered.strip() == "user=ada"
    assert "TypeError" not in proc.stderr + refused
