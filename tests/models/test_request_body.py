"""The request body is assembled from each message's JSON, encoded once (issue 23)."""

from __future__ import annotations

import asyncio
import json

import httpx

from agentcli.agents.base import work_as_turns
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.schema import AgentAction, AgentStep, ChatRequest, Message, assistant, system, user

TOOL = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}


def model(**kw: object) -> OpenAICompatModel:
    return OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", api_key="k",
                             temperature=0.0, **kw)  # type: ignore[arg-type]


def test_body_is_the_payload_as_json() -> None:
    msgs = [system("sys"), user("naïve ☃ \"q\""), assistant("a\nb"),
            Message("tool", "r", tool_call_id="c1")]
    m = model(options={"top_p": 0.5}, local=True)
    for stream in (False, True):
        request = ChatRequest.of(msgs, ["\nObservation:"], [TOOL], seed=3)
        body = m._body(request, stream=stream)
        assert json.loads(body) == {
            "messages": [x.to_openai() for x in msgs], **m._fields(request, stream=stream)}
        assert "☃".encode() in body  # not escaped, as httpx's json= sends it


def test_wire_json_is_encoded_once_and_matches_to_openai() -> None:
    msg = user("hello")
    first = msg.wire_json()
    assert json.loads(first) == msg.to_openai()
    assert msg.wire_json() is first


def test_the_request_sent_carries_the_body_and_content_type() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    m = OpenAICompatModel("m", base_url="http://127.0.0.1:9/v1", api_key="k",
                          async_client=client)
    result = asyncio.run(m.arequest(ChatRequest((user("hi"),), ("STOP",))))
    assert result.text == "ok"
    assert seen[0].headers["content-type"] == "application/json"
    assert json.loads(seen[0].content) == {"model": "m", "stop": ["STOP"],
                                           "messages": [{"role": "user", "content": "hi"}]}


def test_a_step_becomes_the_same_two_turns_every_request() -> None:
    steps = [AgentStep(AgentAction("echo", "x", "Thought: t\nAction: echo"), "x"),
             AgentStep(AgentAction("_Exception", "", "junk"), "Invalid format")]
    first = work_as_turns(steps, "q")
    again = work_as_turns(steps, "q", final=True)
    assert [m.content for m in first] == ["q", "Thought: t\nAction: echo", "Observation: x",
                                          "junk", "Invalid format"]
    assert first[1] is again[1] and first[3] is again[3]  # built once per step
    assert again[-1].content.startswith("Invalid format\n\n")  # the answer-now turn is new
    assert first[-1].content == "Invalid format"


def test_a_system_prompt_is_one_message_encoded_once() -> None:
    first, again = system("You are terse."), system("You are terse.")
    assert first is again and first.wire_json() is again.wire_json()
    assert system("other") is not first and system("other") == Message("system", "other")


def test_a_growing_history_reuses_its_joined_json_and_any_change_is_sent() -> None:
    m = model()
    history = [system("s"), user("q")]
    for i in range(5):
        history += [assistant(f"a{i}"), user(f"o{i}")]
        body = json.loads(m._body(ChatRequest.of(history), stream=False))
        assert body["messages"] == [x.to_openai() for x in history]
    history[3] = user("changed")  # a trimmed or edited history is encoded again
    assert json.loads(m._body(ChatRequest.of(history), stream=False))["messages"][3] == {
        "role": "user", "content": "changed"}
    short = history[:2]
    assert len(json.loads(m._body(ChatRequest.of(short), stream=False))["messages"]) == 2
    assert json.loads(m._body(ChatRequest.of([]), stream=False))["messages"] == []


def test_turns_built_incrementally_equal_a_full_build_for_edited_and_trimmed_steps() -> None:
    steps = [AgentStep(AgentAction("echo", str(i), f"log {i}"), f"obs {i}") for i in range(6)]

    def full(ss: list[AgentStep]) -> list[str]:
        return ["q"] + [t for s in ss for t in (s.action.log, f"Observation: {s.observation}")]

    for n in range(1, 7):  # a growing run
        assert [m.content for m in work_as_turns(steps[:n], "q")] == full(steps[:n])
    trimmed = steps[3:]
    assert [m.content for m in work_as_turns(trimmed, "q")] == full(trimmed)
    edited = [steps[0], AgentStep(AgentAction("echo", "z", "other"), "new"), *steps[2:]]
    assert [m.content for m in work_as_turns(edited, "q")] == full(edited)
    assert [m.content for m in work_as_turns(steps, "q")] == full(steps)
