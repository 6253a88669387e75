"""requests_*: SSRF refusals, the size cap on a streamed 100 MB body, methods and bodies."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.tools import load_tools
from agentcli.tools.net import check_url
from tests.tools.conftest import Handler, LocalServer

ALL = ["requests_all"]


def _tools(**settings: object) -> dict[str, object]:
    return {t.name: t for t in load_tools(ALL, allow=["requests_all"], **settings)}


def test_requests_are_dangerous_at_load_time() -> None:
    with pytest.raises(ToolLoadError, match="--allow requests_all"):
        load_tools(ALL)


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/", "http://localhost:9/", "http://10.0.0.5/", "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/", "http://0.0.0.0/",
    "http://[::ffff:10.1.2.3]/", "http://172.16.0.1/",
])
def test_ssrf_refused_before_connecting(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_connect(*a: object) -> None:
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    tool = _tools()["requests_get"]
    with pytest.raises(ToolInputError, match="refused"):
        tool.run(url)  # type: ignore[attr-defined]


def test_hostname_resolving_to_private_address_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fake_getaddrinfo(host: str, *a: object, **k: object) -> list[object]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 80))]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    with pytest.raises(ToolInputError, match=r"10\.1\.2\.3, a private address"):
        check_url("http://internal.example/")


def test_non_http_scheme_refused() -> None:
    with pytest.raises(ToolInputError, match="only http"):
        check_url("file:///etc/passwd")


def test_redirect_to_internal_address_is_rechecked(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.tools import net

    calls: list[str] = []
    real = net.check_url

    def spy(url: str, *, allow_private: bool = False) -> list[str]:
        calls.append(url)
        if "169.254" in url:
            return real(url, allow_private=False)
        return real(url, allow_private=True)

    server = LocalServer()
    try:
        def redirect(h: Handler) -> None:
            h.send_response(302)
            h.send_header("Location", "http://169.254.169.254/latest")
            h.send_header("Content-Length", "0")
            h.end_headers()

        server.routes["/r"] = redirect
        monkeypatch.setattr(net, "check_url", spy)
        with pytest.raises(ToolInputError, match="metadata"):
            net.fetch("GET", server.url + "/r")
        assert calls == [server.url + "/r", "http://169.254.169.254/latest"]
    finally:
        server.stop()


def test_get_post_put_patch_delete(local_server: LocalServer) -> None:
    def echo(h: Handler) -> None:
        h.send_json({"method": h.command, "body": h.body.decode()})

    local_server.routes["/echo"] = echo
    tools = _tools(allow_private_network=True)
    url = local_server.url + "/echo"
    assert json.loads(tools["requests_get"].run(url))["method"] == "GET"  # type: ignore[attr-defined]
    out = tools["requests_post"].run({"url": url, "data": {"a": 1}})  # type: ignore[attr-defined]
    assert json.loads(out) == {"method": "POST", "body": '{"a":1}'}
    out = tools["requests_put"].run(json.dumps({"url": url, "data": "plain"}))  # type: ignore[attr-defined]
    assert json.loads(out) == {"method": "PUT", "body": "plain"}
    assert "PATCH" in tools["requests_patch"].run({"url": url, "data": "x"})  # type: ignore[attr-defined]
    assert "DELETE" in tools["requests_delete"].run(url)  # type: ignore[attr-defined]


def test_error_status_is_reported(local_server: LocalServer) -> None:
    tools = _tools(allow_private_network=True)
    assert tools["requests_get"].run(local_server.url + "/missing").startswith("HTTP 404")  # type: ignore[attr-defined]


def test_100_mb_response_cut_at_cap(local_server: LocalServer) -> None:
    chunk = b"x" * 65536
    total = 100 * 1024 * 1024

    def huge(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(total))
        h.end_headers()
        for _ in range(total // len(chunk)):
            h.wfile.write(chunk)

    local_server.routes["/huge"] = huge
    tools = _tools(allow_private_network=True, requests_max_bytes=100_000)
    out = tools["requests_get"].run(local_server.url + "/huge")  # type: ignore[attr-defined]
    assert out.split("\n")[0] == "x" * 100_000 and "cut at the requests_max_bytes cap" in out


def test_timeout_becomes_tool_error(local_server: LocalServer) -> None:
    local_server.routes["/slow"] = lambda h: (time.sleep(2), h.send_text("late"))  # type: ignore[func-returns-value]
    tools = _tools(allow_private_network=True, requests_timeout=0.3)
    with pytest.raises(ToolInputError, match="Timeout"):
        tools["requests_get"].run(local_server.url + "/slow")  # type: ignore[attr-defined]


@pytest.mark.parametrize(("address", "why"), [
    ("100.100.100.200", "metadata"),  # Alibaba Cloud metadata
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("2002:7f00:1::", "loopback address wrapped in a 6to4"),  # 6to4 of 127.0.0.1
    ("::ffff:127.0.0.1", "loopback address wrapped in a IPv4-mapped"),
    ("64:ff9b::a9fe:a9fe", "metadata address wrapped in a NAT64"),  # 169.254.169.254
    ("64:ff9b:1::a00:1", "wrapped in a NAT64"),  # local-use NAT64 of 10.0.0.1
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback address wrapped in a Teredo"),
    ("2001:0:a00:1:8000:63bf:3fff:fdd2", "private address wrapped in a Teredo"),  # server 10.0.0.1
    ("::7f00:1", "reserved"),  # IPv4-compatible 127.0.0.1
    ("fd00:ec2::254", "metadata"),
    ("192.0.2.1", "address"),  # documentation range
    ("224.0.0.1", "multicast"),
    ("255.255.255.255", "address"),
])
def test_only_global_addresses_pass(address: str, why: str) -> None:
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(ToolInputError, match=why):
        check_url(f"http://{host}/")  # a literal resolves locally: no connection is made


@pytest.mark.parametrize("address", [
    "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111",
    "2002:808:808::",  # 6to4 of 8.8.8.8
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "::ffff:8.8.8.8",
])
def test_public_addresses_still_pass(address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    assert check_url(f"http://{host}/") != []


def test_ssrf_refusal_through_agent_tools_call() -> None:
    from typer.testing import CliRunner

    from agentcli.cli.app import app

    result = CliRunner().invoke(app, ["tools", "call", "requests_get",
                                      "http://100.100.100.200/latest/meta-data/",
                                      "--allow", "requests_get", "--yes"])
    assert "metadata" in result.output and "refused" in result.output


def test_dns_rebinding_cannot_redirect_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The name is checked once and the connection goes to the checked address: a resolver
    that answers a public address first and 127.0.0.1 afterwards gets nowhere."""
    from http.server import ThreadingHTTPServer

    from agentcli.tools import net

    server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)  # stands in for a public host
    server.routes = {"/": lambda h: h.send_json({"host": h.headers["Host"]})}  # type: ignore[attr-defined]
    server.requests = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    answers = iter(["127.0.0.2"])

    def rebinding(host: str, *a: object, **k: object) -> list[object]:
        if host.startswith("127."):  # an address literal resolves to itself
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (host, port))]
        ip = next(answers, "127.0.0.1")  # every later lookup of the name is internal
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))]

    real_blocked = net._blocked
    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(net, "_blocked", lambda ip: None if str(ip) == "127.0.0.2"
                        else real_blocked(ip))
    try:
        resp = net.fetch("GET", f"http://rebind.example:{port}/")
        assert json.loads(resp.text) == {"host": f"rebind.example:{port}"}
        assert resp.url == f"http://rebind.example:{port}/"
    finally:
        server.shutdown()
        server.server_close()
