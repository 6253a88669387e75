"""Images an MCP tool returns reach a vision model (as a user message after the tool results),
and only then: `agent run` end to end against the mock server and a real stdio MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.agents.tool_calling import with_media
from agentcli.schema import Message, assistant, user
from tests.support.zygote import server_command

pytest.importorskip("mcp")
SERVER = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_server.py"
PART = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def _run(server: Any, tmp_path: Path, model: str, **env: str) -> list[dict[str, Any]]:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"calc": {
        **server_command(str(SERVER)), "trusted": True}}}))
    server.add_reply("", tool_calls=[{"name": "calc.snapshot", "arguments": {}}])
    server.add_reply("A red pixel.")
    full_env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    full_env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-media", **env)
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "what is on the screen?", "-m", model,
         "--agent", "tool-calling", "-t", "calc.snapshot", "-c", str(config), "--db",
         str(tmp_path / "a.db")], capture_output=True, text=True, env=full_env, timeout=90,
        stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "A red pixel."
    return list(server.requests[-1].body["messages"])


def _image_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if isinstance(m["content"], list)]


def test_a_vision_model_sees_the_image_after_the_tool_result(mock_server: Any,
                                                             tmp_path: Path) -> None:
    messages = _run(mock_server, tmp_path, "openai/gpt-4o")
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["content"] == "the screen:\n[image/png, 70 B]"  # the text keeps a placeholder
    [media] = _image_messages(messages)
    assert media["role"] == "user" and messages.index(media) == messages.index(tool) + 1
    assert media["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


@pytest.mark.parametrize(("model", "env"), [("openai/gpt-3.5-turbo", {}),
                                            ("openai/gpt-4o", {"AGENT_TOOL_MEDIA": "off"})])
def test_no_image_for_a_text_model_or_when_off(mock_server: Any, tmp_path: Path, model: str,
                                               env: dict[str, str]) -> None:
    messages = _run(mock_server, tmp_path, model, **env)
    assert _image_messages(messages) == []
    assert "[image/png, 70 B]" in json.dumps(messages)


def test_media_follows_the_whole_group_of_tool_results() -> None:
    calls = [assistant("", ()), Message("tool", "a [image]", tool_call_id="1", parts=(PART,)),
             Message("tool", "b", tool_call_id="2"), user("next")]
    out = with_media(calls)
    assert [m.role for m in out] == ["assistant", "tool", "tool", "user", "user"]
    assert out[3].parts == (PART,) and out[3].to_openai()["content"][1] == PART
    assert out[1].to_openai()["content"] == "a [image]"  # tool messages never carry parts
    assert with_media(calls[:3])[-1].parts == (PART,)  # media at the very end too
