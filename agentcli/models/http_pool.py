"""Pooled httpx clients: one sharded async pool per event loop.

Every model call outside a test goes through here, so connections are kept alive across
calls, turns and batch items instead of being opened (and TLS-configured) per request. Sync
callers reach the models through the portal loop (``agentcli._sync``), so they share its pool.

- **Async**: an ``httpx.AsyncClient`` is bound to the event loop it first ran on, so each loop
  gets its own :class:`_LoopPool`, created on first use and closed by the loop itself when it
  shuts down (``asyncio.run`` and ``asyncio.Runner`` finalise async generators; the pool parks
  one that closes it).
- **Shards**: httpcore's pool does O(connections²) bookkeeping on every request event, so one
  pool with 256 connections spends its CPU on itself. A loop's pool is a list of clients of
  one connection each; a request takes the idle one given back last (its connection is the
  warmest), and a client is added only when none is idle. One run uses one client; a batch
  with 256 requests in flight uses 256, as a bare client per worker would.
- **TLS**: a verified SSL context (the CA bundle, ~40 ms to load) is built once per process and
  only for ``https://`` URLs; ``http://`` clients get one that loads no CA bundle.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import ssl
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextvars import ContextVar

import httpx

# Requests go out as two writes (headers, then body): without TCP_NODELAY, Nagle's algorithm
# holds the body back until the headers are acknowledged, a delay on every model call.
SOCKET_OPTIONS = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
# Linux's "acknowledge now" option (see ack_now); None elsewhere.
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)
# One connection per async client. httpcore may hand one idle connection to several waiting
# requests, and all but one then retry; the retries grow with the pool, and even an idle
# pool's bookkeeping checks each connection on every request, so pools stay tiny (measured at
# 256 in flight, connections per client: 16 -> 3.1 s CPU, 4 -> 1.8 s, 1 -> 1.7 s for 1,536
# calls).
MAX_SHARDS = 1024  # past 1,024 connections per loop, requests wait for a free connection

_loop_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, _LoopPool]] = (
    weakref.WeakKeyDictionary()
)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The verified SSL context (system CA bundle), built once per process on first https use."""
    return httpx.create_ssl_context()


@functools.cache
def _no_ca_context() -> ssl.SSLContext:
    """For ``http://`` pools: a context that loads no CA bundle (the ~40 ms), yet still
    verifies, so an ``https`` URL could never pass through one unverified."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class _NoCookies(httpx.Cookies):
    """A cookie store that keeps nothing: model APIs set no cookies, and reading every
    response's headers for them costs time on each request."""

    def extract_cookies(self, response: httpx.Response) -> None:
        """Keep no cookie."""


class _CookielessClient(httpx.AsyncClient):
    """An ``AsyncClient`` whose ``cookies`` (the store httpx reads and fills) keeps nothing."""

    @property
    def cookies(self) -> httpx.Cookies:
        return _NO_COOKIES

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        """Set none."""


_NO_COOKIES = _NoCookies()


def _async_client(https: bool) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    # No client-wide timeout: each request passes its model's own.
    transport = httpx.AsyncHTTPTransport(verify=tls_context() if https else _no_ca_context(),
                                         limits=limits, socket_options=SOCKET_OPTIONS)
    return _CookielessClient(timeout=None, follow_redirects=False, transport=transport)


class _Shard:
    """One async client (one connection) and how many calls are using it now."""

    __slots__ = ("busy", "client")

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.busy = 0


class _LoopPool:
    """The shards of one event loop, for one scheme."""

    def __init__(self, https: bool) -> None:
        self.https = https
        self.shards: list[_Shard] = []
        self.idle: list[_Shard] = []  # the one given back last at the end
        self.closed = False
        self._closer: AsyncGenerator[None, None] | None = None

    async def start(self) -> None:
        """Park an async generator the loop will finalise at shutdown; it closes the pool."""
        self._closer = self._close_at_shutdown()
        await self._closer.__anext__()

    async def _close_at_shutdown(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            # Forget the loop too: the parked generator would otherwise keep it alive.
            _loop_pools.pop(asyncio.get_running_loop(), None)
            await self.aclose()

    def pick(self) -> _Shard:
        """An idle shard (the one given back last), a new one when none is idle; the caller
        holds it until :meth:`give_back`."""
        if self.idle:
            shard = self.idle.pop()
        elif len(self.shards) < MAX_SHARDS:
            shard = _Shard(_async_client(self.https))
            self.shards.append(shard)
        else:  # every shard busy and no more allowed: queue on the least busy
            shard = min(self.shards, key=lambda s: s.busy)
        shard.busy += 1
        return shard

    def give_back(self, shard: _Shard) -> None:
        """Free the shard :meth:`pick` handed out."""
        shard.busy -= 1
        if shard.busy == 0 and not self.closed:
            self.idle.append(shard)

    async def aclose(self) -> None:
        """Close every shard's client."""
        self.closed = True
        shards, self.shards, self.idle = self.shards, [], []
        for shard in shards:
            with contextlib.suppress(Exception):  # a dead connection must not block the rest
                await shard.client.aclose()


def running_pool(https: bool) -> _LoopPool | None:
    """The running loop's open pool for this scheme, if it has one yet."""
    pools = _loop_pools.get(asyncio.get_running_loop())
    pool = pools.get(https) if pools is not None else None
    return pool if pool is not None and not pool.closed else None


async def loop_pool(https: bool) -> _LoopPool:
    """The running loop's pool for this scheme, made on first use."""
    pool = running_pool(https)
    if pool is None:
        pool = _loop_pools.setdefault(asyncio.get_running_loop(), {})[https] = _LoopPool(https)
        await pool.start()
    return pool


# Told each time a model request of this context has been written out (``agent serve``'s
# stream starts its response then, while the model works); None adds nothing to a request.
request_sent: ContextVar[Callable[[], None] | None] = ContextVar("request_sent", default=None)


def sent_hook() -> dict[str, object]:
    """The request extension (httpcore's ``trace``) that tells :data:`request_sent`'s listener
    when the request's body is out; none when nobody listens."""
    told = request_sent.get()
    if told is None:
        return {}

    async def trace(name: str, info: object) -> None:  # httpcore awaits it
        if name.endswith("send_request_body.complete"):
            told()

    return {"trace": trace}


def ack_now(resp: httpx.Response) -> None:
    """Acknowledge at once what the server has sent so far (Linux; elsewhere nothing).

    A server that writes without TCP_NODELAY (Python's ``http.server``, some local model
    servers) holds a small write, such as a stream's first chunk after its headers, until its
    last one is acknowledged; a client that has just sent a request delays that ACK by up to
    40 ms (delayed ACK in "ping-pong" mode). Every streamed call sent right after another (a
    run's next step, ``agent serve``'s next request) then got its first token ~40 ms late.
    Leaving ping-pong mode once the response has begun lets the kernel acknowledge each
    chunk as it is read, for the rest of the response."""
    stream = resp.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None and _QUICKACK is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)


async def finish_body(lines: AsyncIterator[str], timeout: float = 0.05) -> None:
    """Read what follows a stream's ``[DONE]`` (normally just the end of the body).

    A response closed before its end takes its connection down with it, so every streamed
    call would open a new one. A server that keeps the stream open after ``[DONE]`` only
    costs ``timeout``, and then the connection is dropped as before.
    """
    with contextlib.suppress(Exception):  # the answer is complete: nothing here may fail it
        async with asyncio.timeout(timeout):  # no task of its own (wait_for makes one)
            async for _ in lines:
                pass
