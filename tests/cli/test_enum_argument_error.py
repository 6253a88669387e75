"""A tool argument outside its enum is answered with the allowed values, and the shape to send
again never repeats the refused value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

MODULE = '''
from agentcli.tools import Tool

def _convert(value, unit):
    return f"{value} degrees {unit}"

convert = Tool("convert", "Convert a temperature.", func=_convert, args_schema={
    "type": "object",
    "properties": {"value": {"type": "number"},
                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["value", "unit"]})
'''


def test_a_wrong_enum_value_names_the_allowed_values(mock_server: Any, tmp_path: Path) -> None:
    module = tmp_path / "temps.py"
    module.write_text(MODULE)
    blob = json.dumps({"action": "convert", "action_input": {"value": 20, "unit": "kelvin"}})
    mock_server.add_reply(f"Thought: convert it\nAction:\n```json\n{blob}\n```")
    mock_server.add_reply("Final Answer: could not convert")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-t",
               AGENT_DB=str(tmp_path / "a.db"))
    done = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "20 degrees in kelvin?", "-m", "openai/any",
         "--tools-module", str(module), "-t", "convert",
         "--agent", "structured-chat-zero-shot-react-description"],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    observation = mock_server.requests[1].body["messages"][-1]["content"]
    assert "'unit' must be one of \"celsius\", \"fahrenheit\"" in observation
    assert "must be string" not in observation
    shape = observation.split("send the arguments as", 1)[1]
    assert "kelvin" not in shape and "celsius" in shape and "fahrenheit" in shape
