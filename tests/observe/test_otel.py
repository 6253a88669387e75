"""OpenTelemetry export: the GenAI span tree of a run, in memory and through the front door
(`agent run` sending OTLP/HTTP to a real receiver on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.proto")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from tests.observe.otlp_receiver import OtlpReceiver, ReceivedSpan, draw
from tests.support.zygote import server_command

ECHO_SERVER = str(Path(__file__).parents[1] / "tools" / "fixtures" / "mcp_echo_server.py")
# Words the Calculator cannot evaluate itself, so it asks the model for an expression.
CALC = '{"action": "Calculator", "action_input": "300 apples shared by 4 people"}'
EXPRESSION = "```text\n300 / 4\n```"
FINAL = '{"action": "Final Answer", "action_input": "75"}'
KEYS = ("gen_ai.operation.name", "gen_ai.request.model", "gen_ai.provider.name",
        "gen_ai.request.temperature",
        "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons", "agentcli.tool.status",
        "error.type")


def agent(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real entry point, stdout piped; no OTEL_* variable leaks in from outside."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST", "OTEL_", "AGENT_"))}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=full, timeout=120, stdin=subprocess.DEVNULL)


def otel_env(mock_server: Any, receiver: OtlpReceiver, tmp_path: Path) -> dict[str, str]:
    return {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test-secret-0123456789",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "agent-test",
            "AGENT_DB": str(tmp_path / "a.db")}


TRACED_SERVER = """
import os, runpy
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "echo-mcp-server"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=os.environ["SPANS_TO"])))
trace.set_tracer_provider(provider)  # a span is sent before its reply (SimpleSpanProcessor)
runpy.run_path(os.environ["ECHO_SERVER"], run_name="__main__")
"""


def only(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def test_agent_run_sends_the_genai_span_tree_with_mcp_spans_under_the_tool(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    # the SDK-written echo server, exporting its own spans to the same receiver
    server = tmp_path / "traced_server.py"
    server.write_text(TRACED_SERVER)
    config = tmp_path / "mcp.yaml"
    config.write_text(json.dumps({"mcp_servers": {"ev": {
        **server_command(str(server)), "trusted": True,
        "env": {"SPANS_TO": receiver.endpoint + "/v1/traces", "ECHO_SERVER": ECHO_SERVER}}}}))
    # two MCP calls in one reply: they run concurrently, each in its own task
    mock_server.add_reply("", tool_calls=[
        {"id": "call_e", "name": "ev__echo", "arguments": {"text": "hi"}},
        {"id": "call_s", "name": "ev__shout", "arguments": {"text": "hi"}}])
    mock_server.add_reply("done")
    proc = agent("run", "say hi", "-m", "openai/mock-model", "-c", str(config), "-t", "ev",
                 "-a", "tool-calling", env=otel_env(mock_server, receiver, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    assert receiver.posts and set(receiver.posts) == {"/v1/traces", "/v1/metrics"}
    roots = receiver.roots()
    print("\n".join(line for r in roots for line in draw(r, keys=KEYS)))
    # one root of ours: the MCP server's start-up is in the run's trace, not a trace of its own
    (run,) = [r for r in roots if r.service == "agent-test"]
    assert run.name == "invoke_agent agentcli" and run.scope == "agentcli"
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.usage.input_tokens"] > 0
    names = [c.name for c in run.children]
    assert names[:2] == ["MCP send initialize", "MCP send tools/list"]
    assert names[2] == names[-1] == "chat mock-model"
    assert sorted(names[3:5]) == ["execute_tool ev.echo", "execute_tool ev.shout"]
    assert {s.trace_id for s in receiver.spans if s.service == "agent-test"} == {run.trace_id}
    chat = run.children[2]
    assert chat.kind == 3  # SPAN_KIND_CLIENT
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "mock-model"
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0
    assert chat.attributes["gen_ai.usage.output_tokens"] > 0
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chat.attributes["gen_ai.request.temperature"] == 0.0  # the model's own option
    for tool_name, call_id in (("echo", "call_e"), ("shout", "call_s")):
        tool = only(run.children, f"execute_tool ev.{tool_name}")
        assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool.attributes["gen_ai.tool.name"] == f"ev.{tool_name}"
        assert tool.attributes["gen_ai.tool.call.id"] == call_id
        assert tool.attributes["agentcli.tool.status"] == "ok"
        # the MCP SDK's own span of this call nests under this tool's span (the current one)
        assert [c.name for c in tool.children] == [f"MCP send tools/call {tool_name}"]
        send = tool.children[0]
        assert send.scope == "mcp-python-sdk" and send.service == "agent-test"
        assert send.trace_id == run.trace_id
        # ... and the server, given the context in _meta, answered in the same trace
        assert [(c.name, c.service) for c in send.children] == [
            (f"tools/call {tool_name}", "echo-mcp-server")]
        assert send.children[0].attributes["gen_ai.tool.name"] == tool_name
    # no prompt, reply or tool text unless asked for
    everything = json.dumps([s.attributes for s in receiver.spans])
    assert "say hi" not in everything and "echo: hi" not in everything
    assert "gen_ai.input.messages" not in everything


def test_a_tools_model_call_nests_under_its_tool_span(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    for reply in (CALC, EXPRESSION, FINAL):
        mock_server.add_reply(reply)
    proc = agent("run", "What is a quarter of three hundred? (key sk-test-secret-0123456789)",
                 "-m", "openai/mock-model",
                 "-t", "llm-math", "-a", "chat-zero-shot-react-description",
                 env={**otel_env(mock_server, receiver, tmp_path),
                      "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "75"
    (run,) = receiver.roots()
    print("\n".join(draw(run, keys=KEYS)))
    assert [c.name for c in run.children] == ["chat mock-model", "execute_tool Calculator",
                                              "chat mock-model"]
    tool = only(run.children, "execute_tool Calculator")
    assert [c.name for c in tool.children] == ["chat mock-model"]
    # content on request: the messages are there, the key is not
    everything = json.dumps([s.attributes for s in receiver.spans])
    assert "quarter of three hundred" in run.children[0].attributes["gen_ai.input.messages"]
    assert "75" in tool.attributes["gen_ai.tool.call.result"]
    assert "sk-test-secret-0123456789" not in everything  # the question held it: redacted
    assert "(key ***)" in run.children[0].attributes["gen_ai.input.messages"]


def test_otel_flag_without_an_endpoint_variable_and_sdk_disabled(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    env = otel_env(mock_server, receiver, tmp_path)
    mock_server.add_reply("Final Answer: one")
    proc = agent("run", "q", "-m", "openai/mock-model", "--no-otel", env=env)
    assert proc.returncode == 0, proc.stderr
    mock_server.add_reply("Final Answer: two")
    proc = agent("run", "q", "-m", "openai/mock-model", env={**env, "OTEL_SDK_DISABLED": "true"})
    assert proc.returncode == 0, proc.stderr
    assert receiver.spans == []
    mock_server.add_reply("Final Answer: three")
    traces = receiver.endpoint + "/v1/traces"
    proc = agent("run", "q", "-m", "openai/mock-model", "--otel",
                 env={**env, "OTEL_EXPORTER_OTLP_ENDPOINT": "",
                      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": traces})
    assert proc.returncode == 0, proc.stderr
    assert [s.name for s in receiver.spans if s.scope == "agentcli"][-1] == \
        "invoke_agent agentcli"


def test_grpc_without_its_exporter_and_an_unknown_protocol_are_one_line_errors(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    import importlib.util  # grpc's exporter is not a dev dependency: the error names it

    if importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is not None:
        pytest.skip("the grpc exporter is installed here")
    env = {**otel_env(mock_server, receiver, tmp_path), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    proc = agent("run", "q", "-m", "openai/mock-model", env=env)
    assert proc.returncode == 2, proc.stderr
    assert "needs opentelemetry-exporter-otlp-proto-grpc" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/json"  # the signal's own variable wins
    proc = agent("run", "q", "-m", "openai/mock-model", env=env)
    assert proc.returncode == 2, proc.stderr
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- the Python API, in memory ------------------------------------------------------------


def test_python_api_spans_in_memory_nested_model_call_and_batch_roots() -> None:
    from agentcli.callbacks.otel import OtelHandler
    from agentcli.create import initialize_agent
    from agentcli.models.fake import FakeChatModel
    from agentcli.tools import load_tools

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    llm = FakeChatModel([
        'Thought: compute\nAction:\n```\n{"action": "Calculator", "action_input": "2 '
        'boxes of 3 eggs"}\n```\n', "```text\n2*3\n```", "Final Answer: 6"] * 2)
    ex = initialize_agent(load_tools(["llm-math"], llm=llm), llm,
                          callbacks=[OtelHandler(provider, env={})])
    assert ex.invoke({"input": "two times three"})["output"] == "6"
    assert ex.invoke({"input": "again"})["output"] == "6"
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    agents = [s for s in spans if s.name == "invoke_agent agentcli"]
    assert len(agents) == 2 and all(s.parent is None for s in agents)  # one trace per run
    assert agents[0].context.trace_id != agents[1].context.trace_id
    tools = [s for s in spans if s.name == "execute_tool Calculator"]
    nested = [s for s in spans if s.name.startswith("chat") and s.parent is not None
              and by_id[s.parent.span_id].name == "execute_tool Calculator"]
    assert len(tools) == 2 and len(nested) == 2
    assert all(s.attributes["gen_ai.operation.name"] == "chat" for s in nested)


def test_asking_for_otel_without_the_extra_is_a_one_line_error(tmp_path: Path) -> None:
    blocked = ("import runpy, sys\nsys.modules['opentelemetry'] = None  # as if not installed\n"
               "sys.argv = ['agent', *sys.argv[1:]]\nrunpy.run_module('agentcli', "
               "run_name='__main__')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "OTEL_"))}
    env.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="k")  # never reached
    proc = subprocess.run([sys.executable, "-c", blocked, "run", "q", "-m", "openai/m", "--otel"],
                          capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'agentcli[otel]'" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_an_unreachable_collector_costs_a_warning_line_not_the_answer(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    mock_server.add_reply("Final Answer: still here")
    env = {**otel_env(mock_server, receiver, tmp_path),
           "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_TIMEOUT": "300"}
    proc = agent("run", "q", "-m", "openai/mock-model", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "still here"
    assert "could not be sent to http://127.0.0.1:9/v1/traces" in proc.stderr
    assert "Traceback" not in proc.stderr and "Transient error" not in proc.stderr


def test_chat_sends_one_trace_per_turn_and_batch_one_per_task(
    mock_server: Any, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    env = otel_env(mock_server, receiver, tmp_path)
    for reply in ("Final Answer: one", "Final Answer: two"):
        mock_server.add_reply(reply)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "OTEL_"))}
    chat = subprocess.run([sys.executable, "-m", "agentcli", "chat", "-m", "openai/mock-model",
                           "--no-stream", "--db", str(tmp_path / "c.db")], capture_output=True,
                          text=True, env={**full, **env}, input="first\nsecond\n", timeout=120)
    assert chat.returncode == 0, chat.stderr
    turns = [s for s in receiver.spans if s.name == "invoke_agent agentcli"]
    assert len(turns) == 2 and len({s.trace_id for s in turns}) == 2
    assert all(s.parent_id == "" for s in turns)
    batch_in = tmp_path / "in.jsonl"
    batch_in.write_text('{"id": "a", "input": "q1"}\n{"id": "b", "input": "q2"}\n')
    for reply in ("Final Answer: x", "Final Answer: y"):
        mock_server.add_reply(reply)
    proc = agent("batch", str(batch_in), "-o", str(tmp_path / "out.jsonl"), "-m",
                 "openai/mock-model", "-j", "2", env=env)
    assert proc.returncode == 0, proc.stderr
    runs = [s for s in receiver.spans if s.name == "invoke_agent agentcli"][2:]
    assert len(runs) == 2 and len({s.trace_id for s in runs}) == 2  # one trace per task
    for run in runs:
        chats = [s for s in receiver.spans if s.parent_id == run.span_id]
        assert [s.name for s in chats] == ["chat mock-model"]  # each task's own request


def _blob(tool_name: str) -> str:
    payload = json.dumps({"action": tool_name, "action_input": "x"})
    return f"Thought: go\nAction:\n```\n{payload}\n```\n"


def test_failing_and_unknown_tools_and_a_failed_request_carry_error_type() -> None:
    from opentelemetry import trace

    from agentcli import tool
    from agentcli.callbacks.otel import OtelHandler
    from agentcli.create import initialize_agent
    from agentcli.errors import ProviderError
    from agentcli.models.fake import FakeChatModel

    @tool
    def boom(text: str) -> str:
        """Always fails."""
        raise RuntimeError("kaput")

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handler = OtelHandler(provider, env={})
    llm = FakeChatModel([_blob("boom"), _blob("nope"), "Final Answer: ok"])
    ex = initialize_agent([boom], llm, callbacks=[handler])
    assert ex.invoke({"input": "q"})["output"] == "ok"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    failed = spans["execute_tool boom"]
    assert failed.attributes["error.type"] == "RuntimeError"
    assert failed.attributes["agentcli.tool.status"] == "error"
    assert failed.status.status_code == trace.StatusCode.ERROR
    assert spans["execute_tool nope"].attributes["error.type"] == "invalid"
    assert not trace.get_current_span().get_span_context().is_valid  # nothing left current

    exporter.clear()
    broken = FakeChatModel([ProviderError("HTTP 500 from the provider", status=500)])
    with pytest.raises(ProviderError):
        initialize_agent([boom], broken, callbacks=[handler]).invoke({"input": "q"})
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["chat fake"].attributes["error.type"] == "500"  # the status, not the class
    assert spans["invoke_agent agentcli"].attributes["error.type"] == "500"
    assert spans["invoke_agent agentcli"].status.status_code == trace.StatusCode.ERROR
