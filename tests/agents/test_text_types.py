"""Structured chat, the conversational types and self-ask: prompts, parsers, configuration."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.agents.conversational import ConversationalOutputParser
from agentcli.agents.self_ask import SelfAskOutputParser
from agentcli.cli.app import app
from agentcli.create import initialize_agent
from agentcli.errors import ConfigError, OutputParserError
from agentcli.models.fake import FakeChatModel
from agentcli.schema import AgentAction, AgentFinish, assistant, user
from agentcli.tools import tool
from agentcli.tools.base import Tool

HISTORY = [user("My name is Ada."), assistant("Hello Ada!")]


@tool
def book(city: str, nights: int) -> str:
    """Book a hotel in a city for a number of nights."""
    return f"booked {nights} nights in {city}"


def search() -> Tool:
    return Tool("search", "Search the web.", func=lambda q: f"found: {q}")


def test_structured_chat_runs_a_multi_argument_tool(llm: Any, mock_server: Any) -> None:
    mock_server.add_reply('Action:\n```json\n{"action": "book", "action_input": '
                          '{"city": "Oslo", "nights": "2"}}\n```')
    mock_server.add_reply('```json\n{"action": "Final Answer", "action_input": "Booked."}\n```')
    executor = initialize_agent([book], llm, "structured-chat-zero-shot-react-description",
                                return_intermediate_steps=True)
    result = executor.invoke("Book Oslo for two nights")
    assert result.output == "Booked."
    assert result.steps[0].observation == "booked 2 nights in Oslo"
    prompt = mock_server.requests[0].body["messages"][0]["content"]
    assert '"city": {"type": "string"' in prompt and '"nights": {"type": "integer"' in prompt
    assert '"Final Answer"' in prompt


@pytest.mark.parametrize("agent", [
    "zero-shot-react-description", "chat-zero-shot-react-description",
    "conversational-react-description", "chat-conversational-react-description",
])
def test_text_types_refuse_multi_argument_tools(agent: str) -> None:
    with pytest.raises(ConfigError, match="structured-chat-zero-shot-react-description"):
        initialize_agent([book], FakeChatModel([]), agent)


def test_conversational_answers_from_history_without_tools() -> None:
    llm = FakeChatModel(["Thought: Do I need to use a tool? No\nAI: Your name is Ada."])
    executor = initialize_agent([search()], llm, "conversational-react-description")
    result = executor.invoke({"input": "What is my name?", "chat_history": HISTORY})
    assert result.output == "Your name is Ada."
    prompt = llm.requests[0].messages[0].content
    assert "Human: My name is Ada.\nAI: Hello Ada!" in prompt
    assert prompt.rstrip().endswith("Thought:")
    assert llm.requests[0].stop == ["\nObservation:", "\nHuman:"]


def test_chat_conversational_history_as_messages_and_tool_response() -> None:
    llm = FakeChatModel([
        '```json\n{"action": "search", "action_input": "Ada Lovelace"}\n```',
        '```json\n{"action": "Final Answer", "action_input": "A mathematician."}\n```',
    ])
    executor = initialize_agent([search()], llm, "chat-conversational-react-description")
    result = executor.invoke({"input": "Who was she?", "chat_history": HISTORY})
    assert result.output == "A mathematician."
    roles = [m.role for m in llm.requests[1].messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "found: Ada Lovelace" in llm.requests[1].messages[-1].content


@pytest.mark.parametrize(("text", "expected"), [
    ("Thought: Do I need to use a tool? No\nAI: Hi there!", AgentFinish({"output": "Hi there!"})),
    ("Thought: Do I need to use a tool? No\n**AI:** Hi\nHuman: more?",
     AgentFinish({"output": "Hi"})),
    ("Thought: Do I need to use a tool? Yes\nAction: search\nAction Input: cats",
     AgentAction("search", "cats")),
    ("Thought: Do I need to use a tool? No\nFinal Answer: 42", AgentFinish({"output": "42"})),
    ("Thought: Do I need to use a tool? No. Hello, Ada!", AgentFinish({"output": "Hello, Ada!"})),
    ("Action: search\nAction Input: dogs\nObservation: x\nAI: done",
     AgentAction("search", "dogs")),
])
def test_conversational_parser(text: str, expected: Any) -> None:
    got = ConversationalOutputParser().parse(text)
    assert type(got) is type(expected)
    if isinstance(got, AgentFinish):
        assert got.return_values == expected.return_values
    else:
        assert (got.tool, got.tool_input) == (expected.tool, expected.tool_input)


def test_conversational_parser_error() -> None:
    with pytest.raises(OutputParserError) as info:
        ConversationalOutputParser().parse("Well, maybe.")
    assert "Do I need to use a tool?" in info.value.observation


@pytest.mark.parametrize(("text", "expected"), [
    (" Yes.\nFollow up: Who directed Alien?", ("search", "Who directed Alien?")),
    (" Yes.\nFollow up: a?\nIntermediate answer: b\nFollow up: c?", ("search", "c?")),
    (" No.\nSo the final answer is: Au", "Au"),
    ("So the final answer is: Ridley Scott\nFollow up: more?", "Ridley Scott"),
    ("**Follow-up:** How tall is it?", ("search", "How tall is it?")),
    ("Final Answer: 7", "7"),
])
def test_self_ask_parser(text: str, expected: Any) -> None:
    got = SelfAskOutputParser("search").parse(text)
    if isinstance(expected, tuple):
        assert isinstance(got, AgentAction) and (got.tool, got.tool_input) == expected
    else:
        assert isinstance(got, AgentFinish) and got.output == expected


def test_self_ask_parser_error() -> None:
    with pytest.raises(OutputParserError):
        SelfAskOutputParser("search").parse("I don't know.")


def test_self_ask_replays_intermediate_answers() -> None:
    llm = FakeChatModel([" Yes.\nFollow up: Who directed Alien?",
                         "So the final answer is: Ridley Scott"])
    executor = initialize_agent([search()], llm, "self-ask-with-search")
    assert executor.invoke("Who directed Alien?").output == "Ridley Scott"
    prompt = llm.requests[1].messages[0].content
    assert prompt.endswith("Follow up: Who directed Alien?\n"
                           "Intermediate answer: found: Who directed Alien?\n")
    assert llm.requests[0].stop == ["\nIntermediate answer:"]


def test_self_ask_needs_exactly_one_tool() -> None:
    other = Tool("other", "Other.", func=lambda q: q)
    with pytest.raises(ConfigError, match="exactly one search tool"):
        initialize_agent([search(), other], FakeChatModel([]), "self-ask-with-search")
    with pytest.raises(ConfigError, match="not among the loaded tools"):
        initialize_agent([search()], FakeChatModel([]), "self-ask-with-search",
                         agent_kwargs={"self_ask_tool": "nope"})
    executor = initialize_agent([search(), other], FakeChatModel([]), "self-ask-with-search",
                                agent_kwargs={"self_ask_tool": "other"})
    assert executor.agent.allowed_tools == ["other"]


def test_self_ask_tool_from_config(mock_server: Any, tmp_path: Any) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("agent: self-ask-with-search\nself_ask_tool: Calculator\n"
                      "tools: [llm-math]\n")
    mock_server.add_reply(" Yes.\nFollow up: 6*7")
    mock_server.add_reply("So the final answer is: 42")
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = CliRunner().invoke(app, ["run", "6 times 7?", "-m", "openai/any", "--config",
                                      str(config), "--json"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answer"] == "42" and data["steps"][0]["observation"] == "Answer: 42"


def test_memory_flags() -> None:
    from agentcli.agents import agent_class

    flags = {name: agent_class(name).uses_memory for name in (
        "zero-shot-react-description", "conversational-react-description",
        "chat-conversational-react-description", "tool-calling",
        "structured-chat-zero-shot-react-description")}
    assert flags == {"zero-shot-react-description": False,
                     "conversational-react-description": True,
                     "chat-conversational-react-description": True, "tool-calling": True,
                     "structured-chat-zero-shot-react-description": True}


def test_json_output_names_the_limit(mock_server: Any) -> None:
    mock_server.set_responder(lambda body: {"text": "Action: Calculator\nAction Input: 1+1"})
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-x"}
    result = CliRunner().invoke(app, ["run", "loop", "-m", "openai/any", "--agent",
                                      "zero-shot-react-description", "--max-iterations", "2",
                                      "--json"], env=env, catch_exceptions=False)
    data = json.loads(result.stdout)
    assert result.exit_code == 3
    assert data["limit"] == data["stop_reason"] == "max_iterations"
