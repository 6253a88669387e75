"""``wikipedia``: search and page summaries through the MediaWiki API."""

from __future__ import annotations

from typing import Any

from agentcli.errors import ToolInputError
from agentcli.events import notify
from agentcli.tools.base import Tool
from agentcli.tools.net import get_json
from agentcli.tools.sandbox import float_setting, int_setting

DESCRIPTION = (
    "A wrapper around Wikipedia. Useful for when you need to answer general questions about "
    "people, places, companies, facts, historical events, or other subjects. "
    "Input should be a search query."
)


def api_url(settings: dict[str, Any]) -> str:
    """``wikipedia_base_url`` (an api.php URL) or the public API for ``wikipedia_lang``."""
    lang = str(settings.get("wikipedia_lang") or "en")
    return str(settings.get("wikipedia_base_url") or f"https://{lang}.wikipedia.org/w/api.php")


def search(query: str, settings: dict[str, Any]) -> str:
    """Search, then fetch the intro of the top pages."""
    query = query.strip()
    if not query:
        raise ToolInputError("wikipedia needs a search query")
    notify("tool_text", f"Searching for: {query}", tool="wikipedia")
    url = api_url(settings)
    top_k = int_setting(settings, "wikipedia_top_k", 3)
    max_chars = int_setting(settings, "wikipedia_max_chars", 4000)
    timeout = float_setting(settings, "wikipedia_timeout", 15.0)
    found = get_json(url, {"action": "query", "list": "search", "srsearch": query,
                           "srlimit": top_k, "format": "json"}, timeout=timeout)
    titles = [hit["title"] for hit in found.get("query", {}).get("search", [])][:top_k]
    if not titles:
        return "No good Wikipedia Search Result was found"
    pages = []
    for title in titles:
        data = get_json(url, {"action": "query", "prop": "extracts", "exintro": 1,
                              "explaintext": 1, "redirects": 1, "titles": title,
                              "format": "json"}, timeout=timeout)
        for page in data.get("query", {}).get("pages", {}).values():
            extract = (page.get("extract") or "").strip()
            if extract:
                pages.append(f"Page: {page.get('title', title)}\nSummary: {extract}")
    text = "\n\n".join(pages) or "No good Wikipedia Search Result was found"
    return text[:max_chars]


def _factory(**settings: Any) -> Tool:
    settings.pop("llm", None)
    return Tool("wikipedia", DESCRIPTION, func=lambda q: search(q, settings))
