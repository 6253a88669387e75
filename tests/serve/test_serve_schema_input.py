"""`agent serve`: a request's ``response_format`` is an input of the run on the agent's one
executor (issue 38: a profile with an MCP tool answered HTTP 500, because the handler built a
second executor per schema on the server's loop), and a structured answer that fails its
schema is never sent with ``finish_reason: stop`` (issue 39), whichever path produced it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from openai_clients import client
from pydantic import BaseModel

from tests.support.zygote import server_command

MCP_SERVER = '''
try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server
from mcp.types import ToolAnnotations

server = Server("cities")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def population(city: str) -> str:
    """The population of a city."""
    return {"Paris": "2100000"}.get(city, "unknown")


server.run()
'''


class City(BaseModel):
    name: str
    population: int


def _config(tmp_path: Path, *, mcp: bool = True) -> str:
    """A config whose profile ``cities`` has one stdio MCP tool (a server written here), or
    the Calculator only."""
    script = tmp_path / "cities_server.py"
    script.write_text(MCP_SERVER)
    profile: dict[str, Any] = {"agent": "tool-calling", "tools": ["Calculator"],
                               "max_iterations": 2, "early_stopping_method": "auto"}
    if mcp:
        profile.update(tools=["cities"], mcp_servers={"cities": {
            **server_command(str(script)), "trusted": True}})
    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump({"profiles": {"cities": profile}}))
    return str(config)


def _lookup(mcp: bool) -> list[dict[str, Any]]:
    """The model's one useful call: the MCP tool, or the Calculator."""
    return (_call("cities.population", {"city": "Paris"}) if mcp
            else _call("Calculator", {"input": "2100 * 1000"}))


def _call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": json.dumps(arguments)}]


def test_response_format_on_a_profile_with_an_mcp_tool(serve: Any, mock_server: Any,
                                                      tmp_path: Path) -> None:
    served = serve("-c", _config(tmp_path), "--profile", "cities")
    mock_server.add_reply(tool_calls=_call("cities.population", {"city": "Paris"}))
    mock_server.add_reply(tool_calls=_call("final_response",
                                           {"name": "Paris", "population": 2100000}))
    parsed = client(served).chat.completions.parse(
        model="cities", response_format=City,
        messages=[{"role": "user", "content": "How many people live in Paris?"}])
    choice = parsed.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.parsed == City(name="Paris", population=2100000)
    bodies = [r.body for r in mock_server.requests]
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert "cities__population" in offered or "cities.population" in offered
    assert "final_response" in offered  # the run asked for the schema
    tool_results = [m for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_results and "2100000" in tool_results[0]["content"]  # the MCP tool ran
    # the same executor, a run without a schema: a plain answer, no answer tool offered
    mock_server.add_reply("About two million.")
    plain = client(served).chat.completions.create(
        model="cities", messages=[{"role": "user", "content": "Roughly?"}])
    assert plain.choices[0].finish_reason == "stop"
    assert "final_response" not in [t["function"]["name"]
                                    for t in mock_server.requests[-1].body["tools"]]


@pytest.mark.parametrize(("stream", "mcp"), [(False, True), (True, True), (False, False)],
                         ids=["mcp", "mcp-stream", "calculator"])
def test_an_answer_that_fails_its_schema_is_never_a_stop(
        serve: Any, mock_server: Any, tmp_path: Path, stream: bool, mcp: bool) -> None:
    served = serve("-c", _config(tmp_path, mcp=mcp), "--profile", "cities")
    mock_server.add_reply(tool_calls=_lookup(mcp))
    # the answer misses a field: sent back to the model (the normal path)...
    mock_server.add_reply(tool_calls=_call("final_response", {"name": "Paris"}))
    # ...then the step limit, and the one answer-now request: still not the schema
    mock_server.add_reply('{"name": "Paris"}')
    ask = [{"role": "user", "content": "How many people live in Paris?"}]
    if stream:
        chunks = list(client(served).chat.completions.create(
            model="cities", messages=ask, stream=True,
            response_format={"type": "json_schema", "json_schema": {
                "name": "City", "schema": City.model_json_schema()}}))
        finishes = [c.choices[0].finish_reason for c in chunks
                    if c.choices and c.choices[0].finish_reason]
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        with pytest.raises(openai.LengthFinishReasonError):  # never a ValidationError
            client(served).chat.completions.parse(model="cities", messages=ask,
                                                  response_format=City)
        done = client(served)  # the same request again, read raw
        for reply in (_lookup(mcp), _call("final_response", {"name": "Paris"})):
            mock_server.add_reply(tool_calls=reply)
        mock_server.add_reply('{"name": "Paris"}')
        raw = done.chat.completions.create(
            model="cities", messages=ask, response_format={"type": "json_schema", "json_schema": {
                "name": "City", "schema": City.model_json_schema()}})
        finishes = [raw.choices[0].finish_reason]
        content = raw.choices[0].message.content or ""
    assert finishes == ["length"]
    assert '{"name": "Paris"}' not in content
    answer_now = mock_server.requests[-1].body
    assert "tools" not in answer_now and "response_format" in answer_now


def _schema_of(properties: int) -> dict[str, Any]:
    """A schema that is slow to check (every property a pattern) but wrong at its root."""
    return {"type": "object", "required": "not a list", "properties": {
        f"field{i}": {"type": "string", "pattern": "^[a-z]+$"} for i in range(properties)}}


def test_a_response_format_schema_is_bounded_and_checked_off_the_loop(
        serve: Any, mock_server: Any) -> None:
    import threading

    import httpx

    from agentcli.serve.wire import MAX_SCHEMA_CHARS

    served = serve()
    with pytest.raises(openai.BadRequestError, match=r"response_format.*64 KB"):
        client(served).chat.completions.create(
            model="agent", messages=[{"role": "user", "content": "q"}],
            response_format={"type": "json_schema", "json_schema": {
                "name": "big", "schema": _schema_of(3000)}})
    # Under the bound, a schema still takes seconds of CPU to check: meanwhile the server
    # goes on answering others (the check runs off its loop). Counted, not timed: requests
    # answered while the slow one is in flight (a blocked loop answers none of them).
    body = json.dumps({"model": "agent", "messages": [{"role": "user", "content": "q"}],
                       "response_format": {"type": "json_schema", "json_schema": {
                           "name": "slow", "schema": _schema_of(1000)}}}).encode()
    assert len(body) < MAX_SCHEMA_CHARS
    slow: list[int] = []
    with httpx.Client(base_url=served.url, headers=served.auth, timeout=300) as http:
        worker = threading.Thread(target=lambda: slow.append(http.post(
            "/chat/completions", content=body,
            headers={"Content-Type": "application/json"}).status_code))
        worker.start()
        answered = 0
        while worker.is_alive():
            answered += http.get("/models").status_code == 200
        worker.join()
    assert slow == [400]
    assert answered >= 5, answered
