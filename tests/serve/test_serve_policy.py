"""`agent serve` policies: sessions, dangerous tools, refused requests, start-up errors."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai_clients import client

ASK = [{"role": "user", "content": "hi"}]




def sent(mock_server: Any) -> list[str]:
    """Each model request's messages, as one JSON text."""
    return [json.dumps(r.body["messages"]) for r in mock_server.requests
            if r.path.endswith("/chat/completions")]


def test_a_session_only_by_the_header_in_its_own_namespace(
        serve: Any, mock_server: Any, tmp_path: Path) -> None:
    served = serve()  # the default agent type reads memory, as in `agent chat`
    ai = client(served)
    mock_server.add_reply("Final Answer: Hello Ann!")
    ai.chat.completions.create(model="agent", extra_headers={"X-Agent-Session": "work"},
                               messages=[{"role": "user", "content": "My name is Ann."}])
    mock_server.add_reply("Final Answer: Your name is Ann.")
    again = ai.chat.completions.create(
        model="agent", extra_headers={"X-Agent-Session": "work"},
        messages=[{"role": "user", "content": "What is my name?"}])
    assert (again.model_extra or {})["agent_session"] == "work"
    # `user` is OpenAI's end-user id, not a session: the client's messages are the conversation.
    mock_server.add_reply("Final Answer: I do not know.")
    other = ai.chat.completions.create(model="agent", user="work", messages=[
        {"role": "system", "content": "You are Zed's helper."},
        {"role": "user", "content": "What is my name?"}])
    assert "agent_session" not in (other.model_extra or {})
    _, second, third = sent(mock_server)
    assert "My name is Ann." in second and "Hello Ann!" in second  # the session's memory
    assert "Ann" not in third and "You are Zed's helper." in third
    # The served session is not the CLI's `agent chat --session work`.
    store = sqlite3.connect(tmp_path / "serve.db")
    try:
        names = {row[0] for row in store.execute("SELECT name FROM sessions")}
    finally:
        store.close()
    assert names == {"served:work"}
    done = _agent("sessions", "show", "work", tmp_path=tmp_path,
                  env={"AGENT_DB": str(tmp_path / "serve.db")})
    assert "Ann" not in done.stdout


def test_dangerous_tools_run_only_where_the_profile_allows(
        serve: Any, mock_server: Any, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    config = tmp_path / "agent.yaml"
    config.write_text("agent: tool-calling\ntools: [terminal]\nallow: [terminal]\n"
                      "approve: auto\n"  # ignored by serve: nobody sees the calls
                      "profiles:\n  trusted:\n    tool_policy: {terminal: allow}\n")
    served = serve("--config", str(config))
    call = {"name": "terminal", "arguments": {"input": f"echo ran > {marker}"}}
    mock_server.add_reply(tool_calls=[call])
    mock_server.add_reply("I could not run it.")
    denied = client(served).chat.completions.create(
        model="agent", messages=ASK, extra_body={"agent_trace": True})
    observations = [e["observation"] for e in (denied.model_extra or {})["agent_trace"]
                    if e["event"] == "tool_end"]
    assert len(observations) == 1 and "tool_policy" in observations[0]
    assert not marker.exists()
    mock_server.add_reply(tool_calls=[call])
    mock_server.add_reply("Done.")
    client(served).chat.completions.create(model="trusted", messages=ASK)
    assert marker.read_text() == "ran\n"


def test_bad_requests_get_openai_errors(serve: Any, mock_server: Any) -> None:
    served = serve("--agent", "tool-calling", "--no-token")  # the checks made without one
    with pytest.raises(openai.BadRequestError, match="runs the agent's own tools"):
        client(served).chat.completions.create(
            model="agent", messages=ASK,
            tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}])
    with pytest.raises(openai.BadRequestError, match="last message must be the user's"):
        client(served).chat.completions.create(
            model="agent", messages=[{"role": "assistant", "content": "hi"}])
    url = f"{served.url}/chat/completions"
    as_form = httpx.post(url, content=json.dumps({"messages": ASK}),
                         headers={"Content-Type": "text/plain"})
    assert as_form.status_code == 415  # what a web page could send without a preflight
    rebound = httpx.post(url, json={"messages": ASK}, headers={"Host": "evil.example:80"})
    assert rebound.status_code == 403  # a DNS-rebound page names its own host
    assert not sent(mock_server)


def _agent(*args: str, code: str = "", tmp_path: Path,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`agent ARGS` with stdout piped; ``code`` runs first (to hide a package)."""
    script = f"{code}\nimport sys\nfrom agentcli.cli.app import main\nsys.argv = ['agent', " \
        f"*{list(args)!r}]\nmain()"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, **(env or {})},
                          stdin=subprocess.DEVNULL)


def test_non_loopback_bind_without_token_refuses_to_start(tmp_path: Path) -> None:
    done = _agent("serve", "-m", "openai/x", "--host", "0.0.0.0", "--port", "0", "--no-token",
                  tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not a loopback address" in done.stderr
    assert "--no-token" in done.stderr and "Traceback" not in done.stderr


# `localhost` resolving to every interface (a hosts file that says so), in the agent's process
_LOCALHOST_IS_ANY = """
import socket
_resolve = socket.getaddrinfo
def _any(host, *args, **kw):
    return _resolve("0.0.0.0" if host == "localhost" else host, *args, **kw)
socket.getaddrinfo = _any
"""


def test_a_loopback_name_bound_to_every_interface_needs_a_token(tmp_path: Path) -> None:
    done = _agent("serve", "-m", "openai/x", "--host", "localhost", "--port", "0",
                  "--no-token", tmp_path=tmp_path, code=_LOCALHOST_IS_ANY)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "--host localhost is bound to 0.0.0.0, not a loopback address" in done.stderr


def test_a_loopback_name_bound_to_loopback_serves_without_a_token(serve: Any) -> None:
    served = serve("--host", "localhost", "--no-token")
    assert any("no token" in line and "127.0.0.1" in line for line in served.lines)


def test_without_the_extra_one_line_names_the_install(tmp_path: Path) -> None:
    done = _agent("serve", "-m", "openai/x", "--port", "0", tmp_path=tmp_path,
                  code="import sys; sys.modules['starlette'] = None")
    assert done.returncode == 2
    assert done.stderr == "error: agent serve needs the serve extra: pip install " \
        "'agentcli[serve]'\n"


def test_help_loads_no_web_stack(tmp_path: Path) -> None:
    done = _agent("--help", tmp_path=tmp_path,
                  code="import atexit, sys\natexit.register(lambda: sys.stderr.write("
                  "'MODULES=' + ' '.join(sorted(sys.modules))))")
    assert "serve" in done.stdout
    modules = done.stderr.rsplit("MODULES=", 1)[1].split()
    assert [m for m in modules if m.split(".")[0] in ("starlette", "uvicorn", "openai")
            or m.startswith("agentcli.serve")] == []


def test_port_in_use_is_one_line(serve: Any, tmp_path: Path) -> None:
    served = serve("--agent", "tool-calling")
    done = _agent("serve", "-m", "openai/x", "--port", str(served.port), tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{served.port}")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(("host", "loopback"), [
    ("localhost", True), ("127.0.0.1", True), ("::1", True), ("0.0.0.0", False), ("", False),
])
def test_the_bound_address_decides_loopback(host: str, loopback: bool) -> None:
    from agentcli.serve.server import bind, bound_loopback

    sock = bind(host, 0)
    try:
        assert bound_loopback(sock) is loopback
    finally:
        sock.close()
