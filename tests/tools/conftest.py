"""Local HTTP fixtures for tool tests: a threaded http.server on 127.0.0.1 with routes."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    """Dispatches to ``server.routes[path]``; records every request."""

    server: Any

    def log_message(self, *args: Any) -> None:
        pass

    @property
    def query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}

    def send_json(self, data: Any, status: int = 200) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_text(self, text: str, status: int = 200, ctype: str = "text/plain") -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        self.server.requests.append((self.command, self.path, dict(self.headers), self.body))
        route = self.server.routes.get(path)
        if route is None:
            self.send_text("not found", 404)
        else:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                route(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch


class LocalServer:
    """A started server: ``url``, ``routes`` to fill, ``requests`` seen."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.routes = {}  # type: ignore[attr-defined]
        self.httpd.requests = []  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def routes(self) -> dict[str, Route]:
        return self.httpd.routes  # type: ignore[attr-defined,no-any-return]

    @property
    def requests(self) -> list[Any]:
        return self.httpd.requests  # type: ignore[attr-defined,no-any-return]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    server = LocalServer()
    try:
        yield server
    finally:
        server.stop()


WIKI_PAGES = {
    "Eiffel Tower": "The Eiffel Tower is 330 metres tall and stands in Paris.",
    "Paris": "Paris is the capital of France.",
}


def wiki_route(handler: Handler) -> None:
    """A tiny MediaWiki API: list=search and prop=extracts."""
    q = handler.query
    if q.get("list") == "search":
        term = q["srsearch"].lower()
        hits = [{"title": t} for t in WIKI_PAGES if any(w in t.lower() for w in term.split())]
        handler.send_json({"query": {"search": hits[: int(q.get("srlimit", 3))]}})
    else:
        title = q["titles"]
        handler.send_json({"query": {"pages": {"1": {"title": title,
                                                     "extract": WIKI_PAGES.get(title, "")}}}})


@pytest.fixture
def wiki_server(local_server: LocalServer) -> LocalServer:
    local_server.routes["/w/api.php"] = wiki_route
    return local_server


class PlannedAgent:
    """A stand-in agent: ``plan_fn(steps)`` decides (the library's ScriptedAgent)."""

    @staticmethod
    def build(plan_fn: Callable[[list[Any]], Any], tools: list[Any]) -> Any:
        from tests.support.scripted import ScriptedAgent

        return ScriptedAgent(plan_fn, tools)
