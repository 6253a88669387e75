"""``arxiv``: search arXiv through its Atom API."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from agentcli.errors import ToolInputError
from agentcli.events import notify
from agentcli.tools.base import Tool
from agentcli.tools.net import fetch
from agentcli.tools.sandbox import float_setting, int_setting

DESCRIPTION = (
    "A wrapper around Arxiv.org. Useful for when you need to answer questions about Physics, "
    "Mathematics, Computer Science, Quantitative Biology, Quantitative Finance, Statistics, "
    "Electrical Engineering, and Economics from scientific articles on arxiv.org. "
    "Input should be a search query."
)
DEFAULT_URL = "https://export.arxiv.org/api/query"
_NS = {"a": "http://www.w3.org/2005/Atom"}


def parse_feed(xml_text: str, max_summary: int = 1500) -> list[dict[str, Any]]:
    """Entries of an arXiv Atom feed: title, authors, published date, summary, link."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as err:
        raise ToolInputError(f"arXiv returned a malformed feed: {err}") from None
    entries = []
    for entry in root.findall("a:entry", _NS):
        def text(tag: str, node: Any = entry) -> str:
            found = node.find(tag, _NS)
            return " ".join((found.text or "").split()) if found is not None else ""

        entries.append({
            "title": text("a:title"),
            "authors": [text("a:name", a) for a in entry.findall("a:author", _NS)],
            "published": text("a:published")[:10],
            "summary": text("a:summary")[:max_summary],
            "id": text("a:id"),
        })
    return entries


def search(query: str, settings: dict[str, Any]) -> str:
    """Query the arXiv API and format the top entries."""
    query = query.strip()
    if not query:
        raise ToolInputError("arxiv needs a search query")
    notify("tool_text", f"Searching for: {query}", tool="arxiv")
    url = str(settings.get("arxiv_base_url") or DEFAULT_URL)
    top_k = int_setting(settings, "arxiv_top_k", 3)
    resp = fetch("GET", url, params={"search_query": f"all:{query}", "start": 0,
                                     "max_results": top_k},
                 allow_private=True, timeout=float_setting(settings, "arxiv_timeout", 20.0),
                 max_bytes=5_000_000)
    if resp.status >= 400:
        raise ToolInputError(f"arXiv answered HTTP {resp.status}")
    entries = parse_feed(resp.text)[:top_k]
    if not entries:
        return "No good Arxiv Result was found"
    return "\n\n".join(
        f"Published: {e['published']}\nTitle: {e['title']}\nAuthors: {', '.join(e['authors'])}"
        f"\nSummary: {e['summary']}" for e in entries
    )


def _factory(**settings: Any) -> Tool:
    settings.pop("llm", None)
    return Tool("arxiv", DESCRIPTION, func=lambda q: search(q, settings))
