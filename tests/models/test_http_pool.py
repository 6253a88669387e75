"""Pooled clients: one per loop, closed with the loop, sharded under load, TLS only for https."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterator

import httpx
import pytest

from agentcli.models import http_pool
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.schema import user
from tests.support.mock_server import MockOpenAIServer

TIMEOUT = httpx.Timeout(5.0)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    http_pool.tls_context.cache_clear()
    yield
    http_pool.tls_context.cache_clear()


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer() as srv:
        yield srv


@pytest.fixture
def no_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any attempt to build an SSL context."""
    def refuse(*_: object, **__: object) -> ssl.SSLContext:
        raise AssertionError("an SSL context was built for an http:// URL")

    monkeypatch.setattr(httpx, "create_ssl_context", refuse)
    monkeypatch.setattr(ssl, "create_default_context", refuse)


def test_calls_on_one_loop_share_one_client_which_the_loop_closes(
    server: MockOpenAIServer,
) -> None:
    server.set_responder(lambda body: {"text": "ok"})
    model = OpenAICompatModel("mock-model", base_url=server.base_url, api_key="k")
    seen: list[httpx.AsyncClient] = []

    async def main() -> None:
        for _ in range(3):
            assert (await model.agenerate([user("hi")])).text == "ok"
        pools = http_pool._loop_pools[asyncio.get_running_loop()]
        seen.extend(shard.client for shard in pools[False].shards)

    asyncio.run(main())
    assert len(seen) == 1  # three calls, one client
    assert seen[0].is_closed  # closed when asyncio.run shut the loop down
    assert len(server.requests) == 3


def test_a_new_loop_gets_a_new_client(server: MockOpenAIServer) -> None:
    server.set_responder(lambda body: {"text": "ok"})
    model = OpenAICompatModel("mock-model", base_url=server.base_url, api_key="k")
    clients: list[httpx.AsyncClient] = []

    async def one() -> None:
        await model.agenerate([user("hi")])
        clients.append(http_pool._loop_pools[asyncio.get_running_loop()][False].shards[0].client)

    asyncio.run(one())
    asyncio.run(one())
    assert clients[0] is not clients[1] and all(c.is_closed for c in clients)


def test_shards_grow_only_when_none_is_idle() -> None:
    async def main() -> tuple[int, bool, int]:
        pool = await http_pool.loop_pool(False)
        leases = [pool.pick() for _ in range(3)]  # 3 calls in flight at once
        pool.give_back(leases[1])
        again = pool.pick()  # the idle one, not a fourth
        for shard in [leases[0], again, leases[2]]:
            pool.give_back(shard)
        assert all(s.busy == 0 for s in pool.shards)  # every lease was given back
        return len(pool.shards), again is leases[1], len(pool.idle)

    assert asyncio.run(main()) == (3, True, 3)


def test_http_urls_never_build_an_ssl_context(server: MockOpenAIServer, no_tls: None) -> None:
    server.set_responder(lambda body: {"text": "ok"})
    model = OpenAICompatModel("mock-model", base_url=server.base_url, api_key="k")
    assert model.generate([user("hi")]).text == "ok"
    assert asyncio.run(model.agenerate([user("hi")])).text == "ok"
    assert "".join(c.text for c in model.stream([user("hi")])) == "ok"


def test_https_clients_share_one_ssl_context(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[ssl.SSLContext] = []
    real = httpx.create_ssl_context

    def counting(*args: object, **kw: object) -> ssl.SSLContext:
        ctx = real()
        built.append(ctx)
        return ctx

    monkeypatch.setattr(httpx, "create_ssl_context", counting)
    async def lease() -> None:
        pool = await http_pool.loop_pool(True)
        shards = [pool.pick(), pool.pick()]  # two clients, one context
        assert len(pool.shards) == 2
        for shard in shards:
            pool.give_back(shard)

    asyncio.run(lease())
    assert len(built) == 1


def test_streamed_calls_reuse_one_connection(server: MockOpenAIServer,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    server.set_responder(lambda body: {"text": "ok"})
    model = OpenAICompatModel("mock-model", base_url=server.base_url, api_key="k")
    connects: list[object] = []
    real_connect = socket.socket.connect

    def counting(sock: socket.socket, address: object) -> object:
        if isinstance(address, tuple) and address[1] == server.port:
            connects.append(address)
        return real_connect(sock, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", counting)

    async def main() -> list[str]:
        texts = []
        for _ in range(3):
            chunks = [c.text async for c in model.astream([user("hi")])]
            texts.append("".join(chunks))
        return texts

    assert asyncio.run(main()) == ["ok", "ok", "ok"]
    assert len(server.requests) == 3
    assert len(connects) == 1  # the stream was read to its end, so its connection was kept


def test_a_pooled_call_sends_what_client_post_would(server: MockOpenAIServer) -> None:
    # The pooled path builds its request directly (headers merged once per model): the
    # server must see the very headers an httpx client's post() sends.
    server.set_responder(lambda body: {"text": "ok"})
    model = OpenAICompatModel("mock-model", base_url=server.base_url, api_key="sk-pool-123",
                              extra_headers={"X-Team": "t1"})
    asyncio.run(model.agenerate([user("hi")]))

    async def by_post() -> None:
        async with httpx.AsyncClient() as client:
            await client.post(model.url, content=b"{}", headers=model._json_headers)

    asyncio.run(by_post())
    pooled, posted = server.requests[0].headers, server.requests[1].headers
    assert {k.lower(): v for k, v in pooled.items() if k.lower() != "content-length"} == {
        k.lower(): v for k, v in posted.items() if k.lower() != "content-length"}
    assert pooled["Authorization"] == "Bearer sk-pool-123" and pooled["X-Team"] == "t1"


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux's")
def test_a_streamed_reply_is_acknowledged_as_soon_as_it_begins() -> None:
    """A server writing without TCP_NODELAY holds its first chunk until its headers are
    acknowledged, and a client that has just sent a request delays that ACK: back-to-back
    streamed calls waited ~40 ms each for their first token (bench/serve_first_token.py
    --gap 0). The client asks its kernel to acknowledge at once; a plain reply is not
    touched."""
    options: list[tuple[int, int, int]] = []

    class Socket:
        def setsockopt(self, level: int, name: int, value: int) -> None:
            options.append((level, name, value))

    class Stream:
        def get_extra_info(self, info: str) -> object:
            return Socket() if info == "socket" else None

    def handler(request: httpx.Request) -> httpx.Response:
        if b'"stream":true' not in request.content:
            return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]},
                                  extensions={"network_stream": Stream()})
        body = (b'data: {"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}'
                b"\n\ndata: [DONE]\n\n")
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=body, extensions={"network_stream": Stream()})

    model = OpenAICompatModel("m", base_url="http://testserver/v1", api_key="k",
                              async_client=httpx.AsyncClient(
                                  transport=httpx.MockTransport(handler)))
    assert model.generate([user("hi")]).text == "ok"
    assert options == []
    tokens: list[str] = []
    assert model.generate([user("hi")], on_token=tokens.append).text == "ok"
    assert tokens == ["ok"]
    assert options == [(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)]


def test_a_request_sent_listener_is_told_once_per_request_before_its_reply(
    server: MockOpenAIServer,
) -> None:
    """``agent serve`` starts a stream's response when its model request is out: the
    listener set in the context hears of each request once, after it was written and before
    a byte of its reply was read; a context without one adds nothing to the request."""
    server.set_responder(lambda body: {"text": "one two three"})
    model = OpenAICompatModel("mock-model", base_url=server.base_url, api_key="k")
    seen: list[str] = []

    async def main() -> None:
        assert (await model.agenerate([user("hi")], on_token=seen.append)).text == \
            "one two three"
        assert seen and "sent" not in seen  # nobody listening: nobody told
        seen.clear()
        http_pool.request_sent.set(lambda: seen.append("sent"))
        for _ in range(2):
            await model.agenerate([user("hi")], on_token=seen.append)
            seen.append("end")
        await model.agenerate([user("hi")])  # a whole reply too
        seen.append("end")

    asyncio.run(main())
    replies = "".join(seen).split("end")[:-1]
    assert len(replies) == 3
    assert [r.startswith("sent") and r.count("sent") == 1 for r in replies] == [True] * 3
    assert [r.removeprefix("sent") for r in replies] == ["one two three"] * 2 + [""]


def test_no_listener_no_trace_extension() -> None:
    extensions: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        extensions.append(dict(request.extensions))
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    model = OpenAICompatModel("m", base_url="http://testserver/v1", api_key="k",
                              async_client=httpx.AsyncClient(
                                  transport=httpx.MockTransport(handler)))
    assert model.generate([user("hi")]).text == "ok"
    assert "trace" not in extensions[0]
