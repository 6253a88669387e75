"""Web search: ``ddg-search`` (DuckDuckGo via the optional ``ddgs`` package) and
``searx-search`` (a SearxNG instance's JSON API)."""

from __future__ import annotations

import importlib
from typing import Any

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.events import notify
from agentcli.tools.base import Tool
from agentcli.tools.net import get_json
from agentcli.tools.sandbox import float_setting, int_setting

DDG_DESCRIPTION = (
    "A wrapper around DuckDuckGo Search. Useful for when you need to answer questions about "
    "current events. Input should be a search query."
)
SEARX_DESCRIPTION = (
    "A meta search engine (SearxNG). Useful for when you need to answer questions about "
    "current events. Input should be a search query."
)


def _format(results: list[dict[str, Any]]) -> str:
    if not results:
        return "No good search result was found"
    return "\n\n".join(
        f"Title: {r.get('title', '')}\nLink: {r.get('url') or r.get('href', '')}\n"
        f"Snippet: {r.get('content') or r.get('body', '')}" for r in results
    )


def _ddg_factory(**settings: Any) -> Tool:
    try:
        module = importlib.import_module("ddgs")
    except ImportError:
        raise ToolLoadError(
            "tool 'ddg-search' needs the optional package ddgs: pip install 'agentcli[ddg]'"
        ) from None
    top_k = int_setting(settings, "ddg_top_k", 5)

    def run(query: str) -> str:
        if not query.strip():
            raise ToolInputError("ddg-search needs a search query")

        notify("tool_text", f"Searching for: {query.strip()}", tool="ddg-search")
        try:
            results = list(module.DDGS().text(query.strip(), max_results=top_k))
        except Exception as err:  # the package raises its own exception types
            raise ToolInputError(f"DuckDuckGo search failed: {err}") from None
        return _format(results[:top_k])

    return Tool("ddg-search", DDG_DESCRIPTION, func=run)


def searx(query: str, settings: dict[str, Any]) -> str:
    """Query ``{searx_host}/search?format=json``."""
    if not query.strip():
        raise ToolInputError("searx-search needs a search query")
    host = str(settings["searx_host"]).rstrip("/")
    top_k = int_setting(settings, "searx_top_k", 5)
    data = get_json(f"{host}/search", {"q": query.strip(), "format": "json"},
                    timeout=float_setting(settings, "searx_timeout", 15.0))
    answers = [str(a) for a in data.get("answers", [])]
    body = _format(list(data.get("results", []))[:top_k])
    return "\n".join(f"Answer: {a}" for a in answers) + ("\n\n" if answers else "") + body


def _searx_factory(**settings: Any) -> Tool:
    settings.pop("llm", None)
    return Tool("searx-search", SEARX_DESCRIPTION, func=lambda q: searx(q, settings))
