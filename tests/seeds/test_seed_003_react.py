"""Seed 003's program (a weather Tool, create_react_agent over the hub's ReAct prompt, an
AgentExecutor with verbose=True, invoke with a dict), as the seed writes it with only the
import lines changed; its model is reached over real HTTP on the mock server."""

from __future__ import annotations

from typing import Any

import pytest

ACTION = "I need to find out the weather in Beijing\nAction: search_weather\nAction Input: Beijing"
FINAL = ("30 degrees Celsius with a UV index of 9 means I need to bring strong sunscreen\n"
         "Final Answer: Based on the weather in Beijing, I should plan for hot weather and "
         "bring strong sunscreen.")


def test_seed_003_runs_as_written(mock_server: Any, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", mock_server.base_url)
    mock_server.add_reply(ACTION)
    mock_server.add_reply(FINAL)

    # -- the seed's program; only the imports are agentcli's --------------------------
    # Simulate getting the weather for a specific city
    def GetWeather(city):  # type: ignore[no-untyped-def]
        return 30

    from agentcli import Tool

    # Encapsulate as a Tool
    weather_tool = Tool(
        name="search_weather",
        func=GetWeather,
        description="useful for when you need to search for weather",
    )

    tools = [weather_tool]

    from agentcli.compat import OpenAI, create_react_agent, hub

    llm = OpenAI()
    prompt = hub.pull("hwchase17/react")
    agent = create_react_agent(llm, tools, prompt)

    from agentcli import AgentExecutor

    agent_executor = AgentExecutor(agent=agent, tools=tools, verbose=True)

    print(agent_executor.invoke({"input": "根据北京的天气情况,制定一个出游计划"}))
    # -- what the seed shows --------------------------------------------------------------
    out, err = capsys.readouterr()
    assert "hot weather and bring strong sunscreen" in out  # the printed result
    # verbose=True: LangChain's trace, on stdout, in its colours (a runnable agent's tool
    # result follows the reply directly: "Action Input: Beijing30", as LangChain prints it)
    green, blue = "\x1b[32;1m\x1b[1;3m", "\x1b[36;1m\x1b[1;3m"
    trace = ("\n\n\x1b[1m> Entering new AgentExecutor chain...\x1b[0m\n"
             f"{green}{ACTION}\x1b[0m{blue}30\x1b[0m{green}{FINAL}\x1b[0m\n"
             "\n\x1b[1m> Finished chain.\x1b[0m\n")
    assert out.startswith(trace), out
    assert "{'input': '根据北京的天气情况,制定一个出游计划', 'output': 'Based on" in out
    assert err == ""
    assert len(mock_server.requests) == 2
    second = mock_server.requests[1].body["messages"][-1]["content"]
    assert "Action Input: Beijing\nObservation: 30" in second  # the tool's answer went back
    assert "search_weather: useful for when you need to search for weather" in \
        mock_server.requests[0].body["messages"][0]["content"]
