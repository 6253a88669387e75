"""The run deadline: scopes, threads, the executor's drivers and the provider paths."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from agentcli import deadline
from agentcli.errors import AgentCliError, DeadlineExceeded, ProviderError
from agentcli.executor import AgentExecutor
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.schema import AgentAction, Message
from agentcli.tools.base import Tool
from tests.support.scripted import ScriptedAgent, silent_model


def test_no_scope_means_no_deadline() -> None:
    assert deadline.remaining() is None and deadline.bound(7.0) == 7.0
    assert not deadline.expired()
    deadline.check()


def test_nested_scopes_keep_the_earlier_deadline() -> None:
    with deadline.deadline_scope(100) as outer:
        with deadline.deadline_scope(1000) as inner:
            assert inner == outer
        with deadline.deadline_scope(10) as earlier:
            assert earlier is not None and outer is not None and earlier < outer
            left = deadline.remaining()
            assert left is not None and left <= 10
            assert deadline.bound(None) == left or deadline.bound(None) <= 10
        with deadline.deadline_scope(None) as same:
            assert same == outer
    assert deadline.remaining() is None


def test_expired_scope_raises_and_is_an_agentcli_error() -> None:
    assert issubclass(DeadlineExceeded, AgentCliError)
    assert not issubclass(DeadlineExceeded, ProviderError)  # fallbacks must not swallow it
    with deadline.deadline_scope(0), pytest.raises(DeadlineExceeded):
        deadline.check()


def sleeper(seen: list[float | None]) -> Tool:
    def nap(seconds: str) -> str:
        seen.append(deadline.remaining())
        time.sleep(deadline.bound(float(seconds)) or 0.0)
        deadline.check("nap")
        return "rested"

    return Tool("nap", "Sleep.", func=nap)


def test_parallel_tool_threads_see_the_run_deadline() -> None:
    seen: list[float | None] = []
    tools = [sleeper(seen)]
    agent = ScriptedAgent([[AgentAction("nap", "30", ""), AgentAction("nap", "30", "")]], tools)
    result = AgentExecutor(agent, tools, llm=silent_model(), max_execution_time=1).invoke("q")
    assert result.stop_reason == "max_execution_time"
    assert len(seen) == 2 and all(s is not None and s <= 1 for s in seen)


def test_async_driver_cancels_a_blocking_await_at_the_deadline() -> None:
    started = asyncio.Event()

    async def forever(_: str) -> str:
        started.set()
        await asyncio.sleep(3600)
        return "never"

    tools = [Tool("wait", "Wait.", coroutine=forever)]
    agent = ScriptedAgent([AgentAction("wait", "x", "")], tools)
    executor = AgentExecutor(agent, tools, llm=silent_model(), max_execution_time=0.5)
    result = asyncio.run(executor.ainvoke("q"))
    assert started.is_set() and result.stop_reason == "max_execution_time"


def test_sync_driver_maps_a_model_deadline_to_the_stop_reason() -> None:
    from agentcli.models.fake import FakeChatModel

    agent = ScriptedAgent([], [])
    cut = FakeChatModel([DeadlineExceeded("model cut")])
    result = AgentExecutor(agent, [], llm=cut, max_execution_time=60).invoke("q")
    assert result.stop_reason == "max_execution_time"


def model(server: Any, **kw: Any) -> OpenAICompatModel:
    return OpenAICompatModel("m", base_url=server.base_url, api_key="k", max_retries=0, **kw)


MESSAGES = [Message("user", "hi")]


@pytest.mark.parametrize("kind", ["trickle", "endless_sse", "slow_first_byte"])
def test_async_paths_end_at_the_run_deadline(mock_server: Any, kind: str) -> None:
    async def go(stream: bool) -> None:
        with deadline.deadline_scope(1):
            if stream:
                async for _ in model(mock_server).astream(MESSAGES):
                    pass
            else:
                await model(mock_server).agenerate(MESSAGES)

    for stream in (False, True):
        mock_server.add_fault(kind, delay=0.2 if kind != "slow_first_byte" else 20)
        with pytest.raises(DeadlineExceeded):
            asyncio.run(go(stream))


@pytest.mark.parametrize("kind", ["trickle", "endless_sse", "slow_first_byte"])
def test_sync_paths_end_at_the_run_deadline(mock_server: Any, kind: str) -> None:
    for stream in (False, True):
        mock_server.add_fault(kind, delay=0.2 if kind != "slow_first_byte" else 20)
        with deadline.deadline_scope(1), pytest.raises(DeadlineExceeded):
            if stream:
                list(model(mock_server).stream(MESSAGES))
            else:
                model(mock_server).generate(MESSAGES)


def test_request_timeout_without_a_run_deadline_is_a_provider_error(mock_server: Any) -> None:
    mock_server.add_fault("trickle", delay=0.2)
    with pytest.raises(ProviderError, match="request_timeout"):
        model(mock_server, request_timeout=1).generate(MESSAGES)


def test_retry_sleep_never_exceeds_the_time_left(mock_server: Any) -> None:
    mock_server.add_fault("status", status=503, retry_after=30)
    slept: list[float] = []
    llm = OpenAICompatModel("m", base_url=mock_server.base_url, api_key="k", max_retries=2,
                            backoff_max=60, on_retry=lambda info: slept.append(info["delay"]))
    with deadline.deadline_scope(5), pytest.raises(DeadlineExceeded, match="Retry-After"):
        llm.generate(MESSAGES)
    assert slept == [] and len(mock_server.requests) == 1


def test_watchdog_is_disarmed_after_the_block() -> None:
    before = threading.active_count()

    class Resp:
        def __init__(self) -> None:
            self.extensions: dict[str, Any] = {}

    with deadline.socket_watchdog(Resp(), time.monotonic() + 100):
        pass
    assert threading.active_count() == before
