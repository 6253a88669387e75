"""The bombs of issue 38 through the real `agent`: a catastrophic JSON Schema pattern (in an
output schema and in an MCP tool's input schema) and the Calculator's modulo bomb end in their
own clear lines, and neither holds a run past --max-time or Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.zygote import server_command

BOMB = "((-1) % ((-1) % 10**300) ** 10000) ** 10000"
SLOW_PATTERN = "(a|aa)+$"  # backtracks exponentially on a run of a's that does not match
HOSTILE = "a" * 60 + "!"


def agent(*args: str, server: Any = None, timeout: float = 120,
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    if server is not None:
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
    return subprocess.run([sys.executable, "-m", "agentcli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def tool_messages(server: Any) -> list[str]:
    last = [r.body for r in server.requests if r.path.endswith("/chat/completions")][-1]
    return [m["content"] for m in last["messages"] if m["role"] == "tool"]


def test_the_calculator_bomb_is_its_own_too_large_line() -> None:
    proc = agent("tools", "call", "Calculator", BOMB)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "is too large" in out and "digits" not in out and "Traceback" not in out


def test_two_squared_cubed_is_64() -> None:
    proc = agent("tools", "call", "Calculator", "2 squared cubed")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Answer: 64"


def test_a_model_sending_the_bomb_gets_the_line_and_the_run_goes_on(mock_server: Any) -> None:
    mock_server.add_reply(tool_calls=[{"name": "Calculator", "arguments": {"input": BOMB}}])
    mock_server.add_reply("It is too large to compute.")
    proc = agent("run", "-m", "openai/any", "-a", "tool-calling", "-t", "llm-math",
                 "--max-time", "30", "what is it?", server=mock_server)
    assert proc.returncode == 0, proc.stderr
    [said] = tool_messages(mock_server)
    assert "is too large" in said and "digits" not in said


def test_a_catastrophic_output_pattern_is_a_schema_error_sent_back(
        mock_server: Any, tmp_path: Path) -> None:
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "object", "required": ["code"], "properties": {
        "code": {"type": "string", "pattern": SLOW_PATTERN}}}))
    mock_server.set_responder(
        lambda body: {"text": "Final Answer: " + json.dumps({"code": HOSTILE})})
    proc = agent("run", "-m", "openai/any", "--schema", str(schema), "--max-iterations", "2",
                 "--json", "q", server=mock_server)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 3, proc.stderr  # no valid answer within the limit
    assert json.loads(proc.stdout)["answer"] is None
    bodies = [r.body for r in mock_server.requests if r.path.endswith("/chat/completions")]
    told = json.dumps(bodies[-1]["messages"])
    assert "took over 1 s to check" in told  # the model was told why, in the schema's words


MCP_SERVER = '''
import json, sys
SCHEMA = {"type": "object", "required": ["code"],
          "properties": {"code": {"type": "string", "pattern": sys.argv[1]}}}
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("id") is None:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "pat", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "lookup", "description": "Look a code up.",
                             "inputSchema": SCHEMA, "annotations": {"readOnlyHint": True}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "found"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
    sys.stdout.flush()
'''


def mcp_config(tmp_path: Path) -> str:
    script = tmp_path / "pattern_server.py"
    script.write_text(MCP_SERVER)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"pat": {
        **server_command(str(script), SLOW_PATTERN), "trusted": True}}}))
    return str(config)


def bomb_call(body: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": "pat__lookup", "arguments": {"code": HOSTILE}}]}


def test_an_mcp_tool_pattern_bomb_is_refused_and_max_time_ends_the_run(
        mock_server: Any, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    mock_server.set_responder(bomb_call)  # the model sends the bomb again and again
    proc = agent("run", "-m", "openai/any", "-a", "tool-calling", "-c", mcp_config(tmp_path),
                 "-t", "pat", "--max-time", "30", "--max-iterations", "50", "--json", "q",
                 server=mock_server)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout)["stop_reason"] in {"max_execution_time", "stalled"}
    said = tool_messages(mock_server)
    assert said and all("took over 1 s to check" in text for text in said), said


def test_ctrl_c_ends_a_run_busy_with_pattern_bombs(mock_server: Any, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    mock_server.set_responder(bomb_call)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/any", "-a", "tool-calling",
         "-c", mcp_config(tmp_path), "-t", "pat", "--max-iterations", "200", "--json", "q"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)
    try:
        while len(mock_server.requests) < 2:  # the first bomb was checked and refused
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err
    assert proc.returncode == 130, err
    assert out.strip(), err  # the run's record, even when Ctrl-C came mid-step
    assert json.loads(out)["stop_reason"] == "interrupted"
