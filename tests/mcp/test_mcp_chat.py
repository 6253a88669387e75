"""MCP prompts as chat slash commands: /mcp:SERVER:PROMPT args asks the prompt's text."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agentcli.cli.mcp_prompts import prompt_arguments
from agentcli.cli.repl import ChatRepl
from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.models.fake import FakeChatModel
from agentcli.store import Store
from tests.support.zygote import server_command

SERVER = str(Path(__file__).parents[1] / "tools" / "fixtures" / "mcp_server.py")


def test_prompt_as_slash_command(tmp_path: Path) -> None:
    from agentcli.mcp import pool

    llm = FakeChatModel(["Final Answer: reviewed", "Final Answer: again"])
    settings = Settings(agent="chat-zero-shot-react-description", tools=[], memory="none",
                        mcp_servers={"calc": {**server_command(SERVER)}})
    keys = ("/mcp:calc:review the tests\r/mcp:calc:review topic=docs\r/mcp:calc:nope\r"
            "/mcp:nosuch:x\r/mcp:calc:review\r/exit\r")
    buf = StringIO()
    try:
        with create_pipe_input() as pipe:
            pipe.send_text(keys)
            repl = ChatRepl(settings, Store(tmp_path / "c.db"), lambda s: llm, session="s",
                            console=Console(file=buf, width=200), input=pipe,
                            output=DummyOutput())
            repl.loop()
    finally:
        pool.close_all()
    out = buf.getvalue()
    asked = [str(r.messages) for r in llm.requests]
    assert "Please review the tests briefly." in asked[0]
    assert "Please review docs briefly." in asked[1]
    assert "has no prompt 'nope' (it has: review)" in out
    assert "unknown MCP server 'nosuch'; configured: calc" in out
    assert "prompt 'review' takes topic; missing topic" in out
    assert "reviewed" in out and "Traceback" not in out


def test_prompt_arguments() -> None:
    spec = {"name": "p", "arguments": [{"name": "city", "required": True}, {"name": "state"}]}
    assert prompt_arguments(spec, "city='New York' state=NY") == {"city": "New York",
                                                                   "state": "NY"}
    with pytest.raises(ConfigError, match="key=value"):
        prompt_arguments(spec, "New York")
    with pytest.raises(ConfigError, match="unknown zip"):
        prompt_arguments(spec, "city=a zip=1")
