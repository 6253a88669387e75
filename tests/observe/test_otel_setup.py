"""Where spans go and what they say, through the front door: `agent run` / `chat` / `serve`
against a real OTLP/HTTP receiver decoding protobuf, the console exporter, `none`, a dead
collector, and `opentelemetry-instrument` (opentelemetry-distro's zero-code wrapper)."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.proto")

from tests.observe.otlp_receiver import OtlpReceiver
from tests.observe.test_otel import agent, otel_env

MODEL = ("run", "q", "-m", "openai/mock-model")


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then closed): connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _agent_spans(receiver: OtlpReceiver) -> list[Any]:
    return [s for s in receiver.spans if s.scope == "agentcli"]


def test_run_spans_and_metrics_follow_the_genai_conventions(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: 75")
    proc = agent(*MODEL, "-o", "max_tokens", "64", env=otel_env(mock_server, receiver, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "75"
    (run,) = receiver.roots()
    assert run.name == "invoke_agent agentcli"
    assert {k: run.attributes.get(k) for k in (
        "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.agent.name",
        "gen_ai.request.model")} == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai",
        "gen_ai.agent.name": "agentcli", "gen_ai.request.model": "mock-model"}
    assert "gen_ai.conversation.id" not in run.attributes  # a one-off run is no conversation
    (chat,) = run.children
    assert chat.attributes["server.address"] == "127.0.0.1"
    assert chat.attributes["server.port"] == mock_server.port
    assert re.fullmatch(r"chatcmpl-\w+", chat.attributes["gen_ai.response.id"])
    assert chat.attributes["gen_ai.request.max_tokens"] == 64
    assert mock_server.requests[-1].body["max_tokens"] == 64  # what was sent, not a default
    # the two GenAI client histograms, over OTLP/HTTP too
    by_name: dict[str, list[Any]] = {}
    for point in receiver.points:
        by_name.setdefault(point.name, []).append(point)
    (duration,) = by_name["gen_ai.client.operation.duration"]
    assert duration.unit == "s" and duration.count == 1 and duration.sum > 0
    assert duration.attributes["gen_ai.provider.name"] == "openai"
    assert duration.attributes["gen_ai.request.model"] == "mock-model"
    tokens = {p.attributes["gen_ai.token.type"]: p for p in by_name["gen_ai.client.token.usage"]}
    assert set(tokens) == {"input", "output"}
    assert tokens["input"].sum == chat.attributes["gen_ai.usage.input_tokens"]
    assert tokens["output"].sum == chat.attributes["gen_ai.usage.output_tokens"]


def test_wrapped_models_put_the_sent_options_and_server_on_the_span(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    """--record and --cache wrap the model: the span still reads what the inner model sent,
    from ModelStart alone (no second copy of the options handed to the exporter)."""
    mock_server.add_reply("Final Answer: 75")
    proc = agent(*MODEL, "-o", "max_tokens", "48", "-o", "temperature", "0.25", "--cache",
                 "--record", str(tmp_path / "run.json"),
                 env=otel_env(mock_server, receiver, tmp_path))
    assert proc.returncode == 0, proc.stderr
    body = mock_server.requests[-1].body
    (run,) = receiver.roots()
    chat = run.children[0].attributes
    assert (chat["gen_ai.request.max_tokens"], chat["gen_ai.request.temperature"]) == (
        body["max_tokens"], body["temperature"]) == (48, 0.25)
    assert (chat["server.address"], chat["server.port"]) == ("127.0.0.1", mock_server.port)


def test_a_local_servers_default_max_tokens_is_on_the_span_as_sent(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: 75")
    proc = agent(*MODEL, env=otel_env(mock_server, receiver, tmp_path))
    assert proc.returncode == 0, proc.stderr
    sent = mock_server.requests[-1].body["max_tokens"]  # the model's own, on a local server
    (run,) = receiver.roots()
    assert run.children[0].attributes["gen_ai.request.max_tokens"] == sent


def test_a_refused_key_is_error_type_401_on_the_spans_and_the_metric(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    mock_server.add_fault("status", status=401)
    proc = agent(*MODEL, env=otel_env(mock_server, receiver, tmp_path))
    assert proc.returncode != 0
    (run,) = receiver.roots()
    assert run.attributes["error.type"] == "401"
    assert [c.attributes["error.type"] for c in run.children] == ["401"]
    (duration,) = [p for p in receiver.points if p.name == "gen_ai.client.operation.duration"]
    assert duration.attributes["error.type"] == "401"


def test_console_exporter_writes_spans_to_stderr_never_into_the_answer(
    mock_server: Any, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: 75")
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test",
           "AGENT_DB": str(tmp_path / "a.db"), "OTEL_TRACES_EXPORTER": "console"}
    proc = agent(*MODEL, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "75\n"  # stdout is the answer alone
    assert '"name": "invoke_agent agentcli"' in proc.stderr
    assert '"name": "chat mock-model"' in proc.stderr


def test_none_exports_nothing_even_with_an_endpoint(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: 75")
    proc = agent(*MODEL, env={**otel_env(mock_server, receiver, tmp_path),
                              "OTEL_TRACES_EXPORTER": "none"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "75"
    assert receiver.posts == []


def test_a_dead_collector_costs_a_warning_not_the_run(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: 75")
    dead = f"http://127.0.0.1:{_closed_port()}"
    env = {**otel_env(mock_server, receiver, tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": dead}
    proc = agent(*MODEL, env=env)  # the default timeout: no OTEL_EXPORTER_OTLP_TIMEOUT
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "75"
    assert f"could not be sent to {dead}/v1/traces" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_chat_session_is_the_conversation_id_and_streamed_replies_have_ids(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    for reply in ("Final Answer: one", "Final Answer: two"):
        mock_server.add_reply(reply)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "OTEL_"))}
    chat = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/mock-model",
                           "--session", "trip-plans"], capture_output=True,
                          text=True, env={**full, **otel_env(mock_server, receiver, tmp_path)},
                          input="first\nsecond\n", timeout=120)
    assert chat.returncode == 0, chat.stderr
    turns = [s for s in _agent_spans(receiver) if s.name.startswith("invoke_agent")]
    assert len(turns) == 2
    assert {s.attributes.get("gen_ai.conversation.id") for s in turns} == {"trip-plans"}
    assert {s.attributes.get("session.id") for s in turns} == {"trip-plans"}  # Phoenix's
    assert all(r.body.get("stream") for r in mock_server.requests)  # the replies streamed
    chats = [s for s in _agent_spans(receiver) if s.name.startswith("chat ")]
    assert len(chats) == 2
    assert all(re.fullmatch(r"chatcmpl-\w+", s.attributes["gen_ai.response.id"]) for s in chats)


# -- opentelemetry-instrument ---------------------------------------------------------------

def _instrument() -> str:
    found = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("opentelemetry-distro is not installed")
    return found


def _instrumented(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST", "OTEL_", "AGENT_"))}
    full.update(env)
    return subprocess.run([_instrument(), sys.executable, "-m", "agentcli", *args],
                          capture_output=True, text=True, env=full, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_under_opentelemetry_instrument_one_provider_one_trace(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    for reply in ('{"action": "Calculator", "action_input": "300 * 0.25"}',
                  '{"action": "Final Answer", "action_input": "75"}'):
        mock_server.add_reply(reply)
    env = {**otel_env(mock_server, receiver, tmp_path),
           "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_LOGS_EXPORTER": "none"}
    proc = _instrumented("run", "What is 25% of 300?", "-m", "openai/mock-model",
                         "-t", "llm-math", "-a", "chat-zero-shot-react-description", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "75"
    spans = _agent_spans(receiver)
    assert [s.name for s in spans if s.parent_id == ""] == ["invoke_agent agentcli"]
    assert len({s.trace_id for s in spans}) == 1 and len(spans) == 4  # run, 2 chats, tool
    # every span came through the wrapper's provider (its resource), none through a second
    assert all("telemetry.auto.version" in s.resource for s in receiver.spans)
    assert {s.service for s in receiver.spans} == {"agent-test"}
    assert any(p.name == "gen_ai.client.token.usage" for p in receiver.points)


def test_under_opentelemetry_instrument_its_default_grpc_is_a_one_line_error(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    import importlib.util

    if importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is not None:
        pytest.skip("the grpc exporter is installed here")
    env = {**otel_env(mock_server, receiver, tmp_path), "OTEL_LOGS_EXPORTER": "none",
           "OTEL_METRICS_EXPORTER": "none"}
    proc = _instrumented(*MODEL, env=env)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert lines == ["error: OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs "
                     "opentelemetry-exporter-otlp-proto-grpc: pip install "
                     "opentelemetry-exporter-otlp-proto-grpc "
                     "(or set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)"]
    import agentcli

    ours = str(Path(agentcli.__file__).parent) + os.sep  # (a checkout may itself be "agentcli")
    assert ours not in proc.stderr.split("error:")[0]  # no traceback of ours


# -- agent serve ----------------------------------------------------------------------------

def test_serve_exports_a_trace_per_request_with_the_session_as_conversation(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "OTEL_"))}
    env = {**full, **otel_env(mock_server, receiver, tmp_path), "AGENT_SERVE_TOKEN": "tok-otel"}
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", "serve", "-m",
                             "openai/mock-model", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
                            cwd=tmp_path)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stderr or ()],
                     daemon=True).start()
    try:
        port = None
        while port is None:
            match = re.search(r"Serving .* on http://\S+:(\d+)/v1", lines.get(timeout=60))
            port = match and int(match.group(1))
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        for answer, headers in (("one", {}), ("two", {"X-Agent-Session": "support-42"}),
                                ("three", {"traceparent": TRACEPARENT})):
            mock_server.add_reply(f"Final Answer: {answer}")
            reply = httpx.post(url, json={"model": "agent", "messages": [
                {"role": "user", "content": "q"}]},
                headers={"Authorization": "Bearer tok-otel", **headers}, timeout=60)
            assert reply.status_code == 200, reply.text
            assert reply.json()["choices"][0]["message"]["content"] == answer
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    assert code == 0
    # one HTTP server span per request, the served run's span under it
    requests = sorted((s for s in receiver.spans if s.scope == "agentcli.serve"),
                      key=lambda s: s.start)
    assert [s.name for s in requests] == ["POST /v1/chat/completions"] * 3
    assert all(s.kind == 2 and s.attributes["http.response.status_code"] == 200  # SERVER
               for s in requests)
    runs = sorted(_agent_spans(receiver), key=lambda s: s.start)
    runs = [s for s in runs if s.name.startswith("invoke_agent")]
    assert [s.name for s in runs] == ["invoke_agent agent"] * 3  # the served model id
    assert [s.parent_id for s in runs] == [s.span_id for s in requests]
    assert [s.trace_id for s in runs] == [s.trace_id for s in requests]
    assert len({s.trace_id for s in runs}) == 3
    assert [s.attributes.get("gen_ai.conversation.id") for s in runs] == [
        None, "support-42", None]
    assert all(s.attributes["gen_ai.provider.name"] == "openai" for s in runs)
    # the caller's traceparent: the request and its run join the caller's trace
    assert [s.parent_id for s in requests[:2]] == ["", ""]
    assert (requests[2].trace_id, requests[2].parent_id) == (CALLER_TRACE, CALLER_SPAN)


CALLER_TRACE, CALLER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"


def test_the_closed_port_is_refused() -> None:
    """The dead-collector tests' premise: nothing answers on the port."""
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"http://127.0.0.1:{_closed_port()}/v1/traces", content=b"", timeout=5)
