"""``requests_*``: HTTP from the agent, guarded against internal addresses and huge bodies."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping

from agentcli.errors import ToolLoadError
from agentcli.tools.base import Tool
from agentcli.tools.net import fetch
from agentcli.tools.sandbox import bool_setting, float_setting, int_setting

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
