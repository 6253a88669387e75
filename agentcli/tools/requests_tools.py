"""``requests_*``: HTTP from the agent, guarded against internal addresses and huge bodies."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from agentcli.tools.base import Tool
from agentcli.tools.net import fetch
from agentcli.tools.sandbox import bool_setting, float_setting, int_setting

_URL_SCHEMA = {"type": "object", "required": ["url"],
               "properties": {"url": {"type": "string", "description": "The URL."}}}
_BODY_SCHEMA = {
    "type": "object", "required": ["url", "data"],
    "properties": {
        "url": {"type": "string", "description": "The URL."},
        "data": {"description": "The body: a JSON object, or text."},
    },
}


def _request(method: str, settings: dict[str, Any], url: str, data: Any = None) -> str:
    headers = {str(k): str(v) for k, v in dict(settings.get("requests_headers") or {}).items()}
    body: dict[str, Any] = {}
    if isinstance(data, (dict, list)):
        body["json_body"] = data
    elif data is not None:
        body["content"] = str(data)
    resp = fetch(
        method, url.strip(),
        allow_private=bool_setting(settings, "allow_private_network"),
        max_bytes=int_setting(settings, "requests_max_bytes", 1_000_000),
        timeout=float_setting(settings, "requests_timeout", 15.0),
        headers=headers, **body,
    )
    note = "\n...[response cut at the requests_max_bytes cap]" if resp.truncated else ""
    return (f"HTTP {resp.status}\n{resp.text}{note}" if resp.status >= 400
            else resp.text + note)


def _make(method: str, with_body: bool) -> Any:
    name = f"requests_{method.lower()}"

    def factory(**settings: Any) -> Tool:
        settings.pop("llm", None)
        if with_body:
            def run_body(url: str, data: Any) -> str:
                if isinstance(data, str):
                    with contextlib.suppress(ValueError):
                        data = json.loads(data)
                return _request(method, settings, url, data)

            return Tool(name, f"A portal to the internet. Use this when you need to make a "
                        f"{method} request. Input: a JSON object with 'url' and 'data' (the "
                        "body).", func=run_body, args_schema=_BODY_SCHEMA)
        return Tool(name, f"A portal to the internet. Use this when you need to make a "
                    f"{method} request to a website. Input should be a URL.",
                    func=lambda url: _request(method, settings, url), args_schema=_URL_SCHEMA)

    return factory

