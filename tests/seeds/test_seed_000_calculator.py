"""Seed 000's program (initialize_agent over llm-math and wikipedia, chat ReAct, the seed's
question), as the seed writes it with only the import lines changed; its model is reached
over real HTTP on the mock server (DASHSCOPE_BASE_URL), since no real model is reachable."""

from __future__ import annotations

import json
from typing import Any

import pytest

ACTION = ('Thought: I need to calculate 25% of 300.\nAction:\n```\n{"action": "Calculator", '
          '"action_input": "300 * 0.25"}\n```')
FINAL = "Thought: I now know the final answer.\nFinal Answer: 75"


def test_seed_000_runs_as_written(mock_server: Any, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    monkeypatch.setenv("DASHSCOPE_BASE_URL", mock_server.base_url)
    mock_server.add_reply(ACTION)
    mock_server.add_reply(FINAL)

    # -- the seed's program; only the imports are agentcli's --------------------------
    from dotenv import find_dotenv, load_dotenv

    # load tongyi 或者 openapi 的 SECRET_KEY
    _ = load_dotenv(find_dotenv())  # read local .env file

    import warnings

    warnings.filterwarnings("ignore")

    # AgentType 保存了所有内置 agent 名称
    from agentcli import AgentType, initialize_agent, load_tools

    # 导入需要使用的大语言模型
    from agentcli.compat import ChatOpenAI, ChatTongyi  # noqa: F401

    # 初始化 tongyi
    llm = ChatTongyi(temperature=0)
    # load 内置 tool
    tools = load_tools(["llm-math", "wikipedia"], llm=llm)

    # 初始化 agent
    agent = initialize_agent(
        tools,
        llm,
        agent=AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION,
        handle_parsing_errors=True,
        verbose=True,
    )
    result = agent.invoke("What is the 25% of 300?")
    # -- what the seed shows: the answer, in two model requests --------------------------
    assert result.output == result["output"] == "75"
    assert len(mock_server.requests) == 2
    assert mock_server.requests[0].body["model"] == "qwen-turbo"
    # the result is LangChain's dict: its echo, isinstance and JSON
    assert repr(result) == "{'input': 'What is the 25% of 300?', 'output': '75'}"
    assert isinstance(result, dict) and json.loads(json.dumps(result))["output"] == "75"
    # verbose=True: LangChain's trace on stdout (a prompt-built agent: Observation/Thought)
    out, err = capsys.readouterr()
    green, blue, end = "\x1b[32;1m\x1b[1;3m", "\x1b[36;1m\x1b[1;3m", "\x1b[0m"
    assert out == ("\n\n\x1b[1m> Entering new AgentExecutor chain...\x1b[0m\n"
                   f"{green}{ACTION}{end}\nObservation: {blue}Answer: 75.0{end}\nThought:"
                   f"{green}{FINAL}{end}\n\n\x1b[1m> Finished chain.\x1b[0m\n")
    assert err == ""
