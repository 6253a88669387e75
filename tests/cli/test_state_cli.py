"""`agent run --state/--state-file/--schema` and YAML `state:` through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TOOLS_MODULE = '''
from typing import Annotated
from agentcli import AgentState, Command, InjectedState, OmitFromInput, OmitFromOutput, tool


class CopyState(AgentState):
    foo: Annotated[str, OmitFromOutput]
    baz: Annotated[str, OmitFromInput]


state_schema = CopyState


@tool
def fake_tool(state: Annotated[dict, InjectedState]) -> Command:
    """Copy foo into baz."""
    return Command(update={"baz": state.get("foo", "N/A")})
'''
CALL = 'Thought: copy it\nAction:\n```json\n{"action": "fake_tool", "action_input": ""}\n```'


def agent(server: Any, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-state-test")
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, timeout=60, stdin=subprocess.DEVNULL, cwd=cwd)


def test_state_flag_reaches_an_injected_tool_and_json_shows_the_output_state(
    mock_server: Any, tmp_path: Path
) -> None:
    (tmp_path / "t.py").write_text(TOOLS_MODULE)
    mock_server.add_reply(CALL)
    mock_server.add_reply("Thought: done\nFinal Answer: copied")
    proc = agent(mock_server, "run", "copy foo", "--state", "foo=Hello", "-t", "fake_tool",
                 "--tools-module", "t.py", "-m", "openai/any", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["state"]["baz"] == "Hello"
    assert "foo" not in out["state"]
    assert out["answer"] == "copied"


def test_state_file_and_unknown_field(mock_server: Any, tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TOOLS_MODULE)
    (tmp_path / "s.json").write_text('{"foo": "From file"}')
    mock_server.add_reply(CALL)
    mock_server.add_reply("Final Answer: ok")
    good = agent(mock_server, "run", "q", "--state-file", "s.json", "--tools-module", "t.py",
                 "-m", "openai/any", "--json", cwd=tmp_path)
    assert json.loads(good.stdout)["state"]["baz"] == "From file"
    bad = agent(mock_server, "run", "q", "--state", "fooo=1", "--tools-module", "t.py",
                "-m", "openai/any", cwd=tmp_path)
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "'fooo' is not in the state schema" in lines[0]
    assert "did you mean 'foo'" in lines[0] and "Traceback" not in bad.stderr
    output_only = agent(mock_server, "run", "q", "--state", "baz=x", "--tools-module", "t.py",
                        "-m", "openai/any", cwd=tmp_path)
    assert output_only.returncode == 2 and "output only" in output_only.stderr


def test_yaml_declared_state_fields(mock_server: Any, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "state:\n  topic: {type: str, output: false}\n  count: {type: int, default: 2}\n")
    mock_server.add_reply("Final Answer: fine")
    proc = agent(mock_server, "run", "q", "-c", "c.yaml", "--state", "count=5", "-m",
                 "openai/any", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    state = json.loads(proc.stdout)["state"]
    assert state["count"] == 5 and "topic" not in state
    wrong = agent(mock_server, "run", "q", "-c", "c.yaml", "--state", "count=many", "-m",
                  "openai/any", cwd=tmp_path)
    assert wrong.returncode == 2 and "'count' must be int" in wrong.stderr


def test_schema_prints_the_validated_json_object(mock_server: Any, tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text(json.dumps({
        "type": "object", "properties": {"percent": {"type": "number"}},
        "required": ["percent"]}))
    mock_server.add_reply('Final Answer: {"percent": "lots"}')
    mock_server.add_reply('Final Answer: {"percent": 75}')
    proc = agent(mock_server, "run", "What is 25% of 300?", "--schema", "schema.json", "-m",
                 "openai/any", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"percent": 75}
    system = mock_server.requests[0].body["messages"][0]["content"]
    assert '"percent"' in system
    retry = mock_server.requests[1].body["messages"][-1]["content"]
    assert "does not match the required JSON Schema" in retry
    (tmp_path / "bad.json").write_text('{"type": 5}')
    bad = agent(mock_server, "run", "q", "--schema", "bad.json", "-m", "openai/any",
                cwd=tmp_path)
    assert bad.returncode == 2 and "not a valid JSON Schema" in bad.stderr


YAML_STATE_TOOL = """
state:
  user: {type: str}
yaml_tools:
  - name: greet
    kind: command
    argv: [echo, "hello {state.user}", "{text}"]
    dangerous: false
    args: {text: {type: string}}
"""


def test_yaml_command_tool_reads_state_placeholders(mock_server: Any, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(YAML_STATE_TOOL)
    mock_server.add_reply("", tool_calls=[{"name": "greet", "arguments": {"text": "and hi"}}])
    mock_server.add_reply("greeted")
    proc = agent(mock_server, "run", "greet", "-c", "c.yaml", "--state", "user=Ada", "-t",
                 "greet", "--agent", "tool-calling", "-m", "openai/any", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Observation: hello Ada and hi" in proc.stderr
    [schema] = [t["function"]["parameters"] for t in mock_server.requests[0].body["tools"]]
    assert list(schema["properties"]) == ["text"]  # the model never sees the state field
    bad = tmp_path / "bad.yaml"
    bad.write_text(YAML_STATE_TOOL.replace("{state.user}", "{state.nobody}"))
    proc = agent(mock_server, "run", "greet", "-c", str(bad), "-t", "greet",
                 "-m", "openai/any", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "tool 'greet' injects state field 'nobody'" in proc.stderr
    assert len(mock_server.requests) == 2  # refused before any model call
