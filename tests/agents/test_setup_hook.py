"""Text agent types build their prompt and parser in ``setup()``: a directly constructed
agent moved onto other tools (``with_tools``) prompts with those tools, not the old ones."""

from __future__ import annotations

import pytest

from agentcli.agents import agent_class
from agentcli.agents.base import TextAgent
from agentcli.errors import ConfigError
from agentcli.tools import Tool

TEXT_TYPES = ["zero-shot-react-description", "chat-zero-shot-react-description",
              "structured-chat-zero-shot-react-description",
              "conversational-react-description", "chat-conversational-react-description"]


def echo(name: str) -> Tool:
    return Tool(name, f"Echoes for {name}.", func=lambda text: text)


def prompt_text(agent: TextAgent) -> str:
    messages = agent.request({"input": "hi", "intermediate_steps": []}).messages
    return "\n".join(m.content for m in messages)


@pytest.mark.parametrize("name", TEXT_TYPES)
def test_with_tools_on_a_directly_built_agent_prompts_with_the_new_tools(name: str) -> None:
    agent = agent_class(name)([echo("alpha_tool")])
    assert isinstance(agent, TextAgent)
    moved = agent.with_tools([echo("beta_tool")])
    assert isinstance(moved, TextAgent)
    assert "alpha_tool" in prompt_text(agent)  # the original is untouched
    assert "beta_tool" in prompt_text(moved) and "alpha_tool" not in prompt_text(moved)


@pytest.mark.parametrize("name", ["zero-shot-react-description",
                                  "chat-zero-shot-react-description"])
def test_single_input_types_still_refuse_multi_argument_tools(name: str) -> None:
    multi = Tool("pair", "Two args.", func=lambda a, b: a + b, args_schema={
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}})
    with pytest.raises(ConfigError, match=r"takes several arguments \(a, b\)"):
        agent_class(name)([multi])
    agent_class("structured-chat-zero-shot-react-description")([multi])  # shows schemas: fine
