"""Tool calling on servers that leave the model's tool call in the text (issue 22): the
forms open models emit are read as calls, through `agent run` against the mock server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FORMS = {
    "bare": '{"name": "Calculator", "arguments": {"input": "6 * 7"}}',
    "hermes-qwen": '<tool_call>\n{"name": "Calculator", "arguments": {"input": "6 * 7"}}\n'
                   "</tool_call>",
    "llama3": '<|python_tag|>{"name": "Calculator", "parameters": {"input": "6 * 7"}}'
              "<|eom_id|>",
    "mistral": '[TOOL_CALLS] [{"name": "Calculator", "arguments": {"input": "6 * 7"}}]',
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_call_written_in_the_text_runs(form: str, mock_server: Any, tmp_path: Path) -> None:
    mock_server.add_reply(FORMS[form])
    mock_server.add_reply("The answer is 42.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(tmp_path / "a.db"))
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", "-a", "tool-calling",
         "--json", "What is 6 times 7?"], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [s["tool"] for s in out["steps"]] == ["Calculator"]
    assert out["steps"][0]["observation"] == "Answer: 42"
    assert out["answer"] == "The answer is 42."
