"""Who may talk to ``agent serve``: loopback binds, bearer tokens, browser-borne requests.

A pure ASGI middleware in front of every route. With a token, each request needs
``Authorization: Bearer TOKEN`` (compared in constant time). Without one (loopback only) the
Host header must name a loopback address or ``localhost``, so a web page that rebinds its
own domain to 127.0.0.1 is refused; and a POST must be ``application/json``, which a browser
cannot send cross-site without a CORS preflight this server never grants.
"""

from __future__ import annotations

import hmac
import ipaddress

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agentcli.serve.wire import error_body


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ::1 (a bind needing no token)."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of two tokens."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _host_name(header: str) -> str:
    """The host of a Host header, without its port (``[::1]:80`` -> ``::1``)."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


class Guard:
    """Refuses requests without the token, with a foreign Host, or POSTs that are not JSON."""

    def __init__(self, app: ASGIApp, *, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refusal(scope, Headers(scope=scope)) if scope["type"] == "http" else None
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, code = refusal
        await JSONResponse(error_body(message, type="invalid_request_error", code=code),
                           status_code=status,
                           headers={"www-authenticate": "Bearer"} if status == 401 else None,
                           )(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str, str] | None:
        if self.token is not None:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not token_matches(given.strip(), self.token):
                return 401, ("missing or wrong API key: send `Authorization: Bearer TOKEN` "
                             "with the token `agent serve` was started with"), "invalid_api_key"
        elif not is_loopback(_host_name(headers.get("host", ""))):
            return 403, ("this server only answers requests addressed to a loopback host; "
                         "start it with --token to serve other names"), "forbidden_host"
        if scope.get("method") == "POST":
            kind = headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind != "application/json":
                return 415, "send the request body as JSON (Content-Type: application/json)", \
                    "unsupported_media_type"
        return None
