"""Model requests start no thread (deadlines are the event loop's own timeouts) and keep no
cookies (issue 23, item 1)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agentcli import deadline
from agentcli.models import http_pool
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.schema import ChatRequest, user
from tests.support.mock_server import MockOpenAIServer


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer() as srv:
        yield srv


def test_requests_under_a_run_deadline_start_no_thread(server: MockOpenAIServer,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for _ in range(6):
        server.add_reply("Final Answer: ok")
    started: list[str] = []
    real_start = threading.Thread.start
    caller = threading.current_thread()

    def start(self: threading.Thread) -> None:
        if threading.current_thread() is caller:  # the mock server starts its own threads
            started.append(self.name)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    llm = OpenAICompatModel("m", base_url=server.base_url, api_key="k", max_retries=0)

    async def run() -> list[str]:
        texts = []
        with deadline.deadline_scope(30):
            for i in range(3):
                texts.append((await llm.arequest(ChatRequest((user(f"q{i}"),)))).text)
                chunks: list[str] = []
                texts.append((await llm.arequest(ChatRequest((user("s"),)), chunks.append)).text)
        return texts

    assert asyncio.run(run()) == ["Final Answer: ok"] * 6
    assert started == []


def test_pooled_model_clients_keep_no_cookies() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(200, headers={"set-cookie": "session=abc; Path=/"},
                              request=request)
    aclient = http_pool._async_client(False)
    aclient.cookies.extract_cookies(response)
    assert dict(aclient.cookies) == {}
    jar: Any = httpx.Cookies()
    jar.extract_cookies(response)
    assert dict(jar) == {"session": "abc"}  # what an ordinary client would have kept
    asyncio.run(aclient.aclose())
