"""HTTP for tools: an SSRF guard, timeouts and a response-size cap (httpx imported lazily),
and the ``requests_*`` tools, HTTP from the agent through that guard."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from agentcli import deadline
from agentcli.errors import DeadlineExceeded, ToolInputError, ToolLoadError
from agentcli.records import record
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import bool_setting, float_setting, int_setting

if TYPE_CHECKING:  # httpx is imported when a request is sent
    import httpx

DEFAULT_MAX_BYTES = 1_000_000
DEFAULT_TIMEOUT = 15.0
MAX_REDIRECTS = 5
_METADATA = {ipaddress.ip_address(a) for a in (
    "169.254.169.254", "fd00:ec2::254",  # AWS, GCP, Azure, ...
    "100.100.100.200",  # Alibaba Cloud (DashScope is a preset)
)}
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


@record
class Response:
    """A fetched response: status, decoded text (maybe cut), and whether it was cut."""

    status: int
    text: str
    truncated: bool
    url: str


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return "6to4", [ip.sixtofour]
    if ip.teredo is not None:
        return "Teredo", list(ip.teredo)  # the relay server and the client behind it
    if any(ip in net for net in _NAT64):
        return "NAT64", [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return "", []


def _blocked(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``ip`` may not be fetched, or None when it is globally routable.

    Allow-listing by ``is_global`` (rather than listing bad ranges) also refuses ranges
    nobody thought of, such as carrier-grade NAT 100.64.0.0/10. An IPv6 address that wraps
    an IPv4 one is judged by what it wraps, so 6to4 or NAT64 cannot smuggle 127.0.0.1.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        form, inner = _embedded_ipv4(ip)
        if inner:
            for v4 in inner:
                why = _blocked(v4)
                if why:
                    return f"{why} wrapped in a {form} IPv6 address"
            return None
    if ip in _METADATA:
        return "a cloud metadata address"
    if ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified):
        return None
    for label, flag in (
        ("a loopback", ip.is_loopback), ("a link-local", ip.is_link_local),
        ("a multicast", ip.is_multicast), ("an unspecified", ip.is_unspecified),
        ("a reserved", ip.is_reserved), ("a private", ip.is_private),
        ("a shared (carrier-grade NAT)", ip in _CGNAT),
    ):
        if flag:
            return f"{label} address"
    return "a non-global address"


def check_url(url: str, *, allow_private: bool = False) -> list[str]:
    """Refuse non-http(s) URLs and hosts resolving to internal addresses; return the IPs."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolInputError(f"only http:// and https:// URLs are allowed, got {url!r}")
    host = parts.hostname
    try:
        infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80),
                                   type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        raise ToolInputError(f"cannot resolve host {host!r}: {err}") from None
    ips = list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))  # resolver order
    if not allow_private:
        for ip in ips:
            why = _blocked(ipaddress.ip_address(ip))
            if why:
                raise ToolInputError(
                    f"refused: {host} resolves to {ip}, {why}; set tool_settings "
                    "allow_private_network: true to allow internal hosts"
                )
    return ips


def fetch(
    method: str,
    url: str,
    *,
    allow_private: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
    headers: dict[str, str] | None = None,
    params: Mapping[str, str | int | float] | None = None,
    content: str | bytes | None = None,
    json_body: object = None,
) -> Response:
    """Send one request, checking every hop (redirects are re-checked), reading at most
    ``max_bytes`` of the body as a stream so a huge response never sits in memory.

    Unless ``allow_private``, each hop connects to the address that was checked, not to a
    second lookup of the name (which a DNS-rebinding server could point at 127.0.0.1); the
    ``Host`` header and TLS (SNI and certificate check) still use the name.
    """
    import httpx

    run_at = deadline.deadline()  # the run's deadline bounds every wait, body reads included
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            ips = check_url(url, allow_private=allow_private)
            deadline.check(f"{method} {url}")
            try:
                request = client.build_request(method, url, headers=headers, params=params,
                                               content=content, json=json_body,
                                               timeout=deadline.bound(timeout))
                sent_to = str(request.url)  # with the name, as the user would write it
                if not allow_private:
                    _pin(request, ips[0])
                response = client.send(request, stream=True)
            except httpx.HTTPError as err:
                deadline.check(f"{method} {url}")
                raise ToolInputError(
                    f"{method} {url} failed: {type(err).__name__}: {err}"
                ) from None
            try:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    method = "GET" if response.status_code in (301, 302, 303) else method
                    content = json_body = params = None
                    continue
                with deadline.socket_watchdog(response, run_at):
                    body, truncated = _read_capped(response, max_bytes)
                encoding = response.encoding or "utf-8"
                return Response(response.status_code, body.decode(encoding, "replace"),
                                truncated, sent_to)
            except httpx.HTTPError as err:
                deadline.check(f"{method} {url}")
                raise ToolInputError(f"{method} {url} failed while reading: {err}") from None
            finally:
                response.close()
    raise ToolInputError(f"too many redirects (more than {MAX_REDIRECTS}) from {url}")


def _pin(request: httpx.Request, ip: str) -> None:
    """Send ``request`` to ``ip``, keeping the name for the Host header, SNI and the
    certificate check (httpx set ``Host`` from the name when it built the request)."""
    host = request.url.host
    if host == ip:
        return
    request.extensions["sni_hostname"] = host
    request.url = request.url.copy_with(host=ip)


def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if deadline.expired():  # a trickling server cannot outlast the run
            raise DeadlineExceeded("the HTTP response was cut at the run's time limit")
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def get_json(url: str, params: Mapping[str, str | int | float], *, timeout: float = DEFAULT_TIMEOUT,
             max_bytes: int = 5_000_000) -> Any:
    """GET a JSON API at a user-configured base URL (the URL is not model-controlled)."""
    resp = fetch("GET", url, params=params, allow_private=True, timeout=timeout,
                 max_bytes=max_bytes, headers={"User-Agent": "agentcli (tool)"})
    if resp.status >= 400:
        raise ToolInputError(f"{url} answered HTTP {resp.status}: {resp.text[:200]}")
    try:
        return json.loads(resp.text)
    except ValueError:
        raise ToolInputError(f"{url} did not return JSON: {resp.text[:200]!r}") from None


_URL = {"type": "string", "description": "The URL."}
_URL_SCHEMA = {"type": "object", "required": ["url"], "properties": {"url": _URL}}
_BODY_SCHEMA = {
    "type": "object", "required": ["url", "data"],
    "properties": {"url": _URL, "data": {"description": "The body: a JSON object, or text."}},
}


def make(method: str, with_body: bool, settings: Mapping[str, object]) -> Tool:
    """The ``requests_<method>`` tool: a URL, and for POST/PUT/PATCH a body."""
    raw = settings.get("requests_headers") or {}
    if not isinstance(raw, Mapping):
        raise ToolLoadError(f"tool_settings requests_headers must be a mapping, got {raw!r}")
    headers = {str(k): str(v) for k, v in raw.items()}
    allow_private = bool_setting(settings, "allow_private_network")
    max_bytes = int_setting(settings, "requests_max_bytes", 1_000_000)
    timeout = float_setting(settings, "requests_timeout", 15.0)

    def request(url: str, data: object = None) -> str:
        if isinstance(data, str):
            with contextlib.suppress(ValueError):
                data = json.loads(data)
        resp = fetch(method, url.strip(), allow_private=allow_private, max_bytes=max_bytes,
                     timeout=timeout, headers=headers,
                     json_body=data if isinstance(data, dict | list) else None,
                     content=None if data is None or isinstance(data, dict | list) else str(data))
        note = "\n...[response cut at the requests_max_bytes cap]" if resp.truncated else ""
        return (f"HTTP {resp.status}\n{resp.text}{note}" if resp.status >= 400
                else resp.text + note)

    what = (f"{method} request. Input: a JSON object with 'url' and 'data' (the body)."
            if with_body else f"{method} request to a website. Input should be a URL.")
    return Tool(f"requests_{method.lower()}",
                f"A portal to the internet. Use this when you need to make a {what}",
                func=request if with_body else lambda url: request(url),
                args_schema=_BODY_SCHEMA if with_body else _URL_SCHEMA)
