"""Run the app with uvicorn on a socket bound here, so ``--port 0`` can report its port."""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

from agentcli.errors import ConfigError


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one), the name resolved here
    once: the address bound is the one :func:`bound_loopback` then checks."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        found = socket.getaddrinfo(host.strip("[]") or None, port, family,  # "": every one
                                   socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except (OSError, UnicodeError) as err:
        raise ConfigError(f"cannot resolve --host {host}: {err}; pass an address such as "
                          "127.0.0.1") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(found[0][4])
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {err.strerror or err}; pick "
                          "another --port or --host") from None
    return sock


def bound_loopback(sock: socket.socket) -> bool:
    """True when ``sock`` is bound to a loopback address (whatever name was asked for: a
    ``localhost`` that resolves to 0.0.0.0 is every interface)."""
    import ipaddress

    return ipaddress.ip_address(sock.getsockname()[0].partition("%")[0]).is_loopback


def url_of(sock: socket.socket) -> str:
    """The base URL of the endpoint served on ``sock``."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(app: Any, sock: socket.socket, *, on_ready: Callable[[], None]) -> None:
    """Serve until SIGINT or SIGTERM, which end in KeyboardInterrupt once requests finish."""
    import uvicorn

    # uvicorn re-raises the signal that stopped it after shutting down gracefully; make a
    # SIGTERM end like Ctrl-C so the caller's cleanup runs.
    signal.signal(signal.SIGTERM, _interrupt)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if server.started:
            on_ready()
        await task

    asyncio.run(main())
