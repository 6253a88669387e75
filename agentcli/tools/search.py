"""Search tools: ``wikipedia`` (MediaWiki API), ``arxiv`` (Atom API), ``ddg-search``
(DuckDuckGo via the optional ``ddgs`` package) and ``searx-search`` (a SearxNG instance's
JSON API)."""

from __future__ import annotations

import importlib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.events import notify
from agentcli.tools.base import Tool
from agentcli.tools.net import fetch, get_json
from agentcli.tools.sandbox import float_setting, int_setting

_INPUT = "Input should be a search query."
WIKIPEDIA_DESCRIPTION = (
    "A wrapper around Wikipedia. Useful for when you need to answer general questions about "
    f"people, places, companies, facts, historical events, or other subjects. {_INPUT}"
)
ARXIV_DESCRIPTION = (
    "A wrapper around Arxiv.org. Useful for when you need to answer questions about Physics, "
    "Mathematics, Computer Science, Quantitative Biology, Quantitative Finance, Statistics, "
    "Electrical Engineering, and Economics from scientific articles on arxiv.org. "
    f"{_INPUT}"
)
DDG_DESCRIPTION = ("A wrapper around DuckDuckGo Search. Useful for when you need to answer "
                   f"questions about current events. {_INPUT}")
SEARX_DESCRIPTION = ("A meta search engine (SearxNG). Useful for when you need to answer "
                     f"questions about current events. {_INPUT}")
ARXIV_URL = "https://export.arxiv.org/api/query"
_ATOM = {"a": "http://www.w3.org/2005/Atom"}
Settings = Mapping[str, object]


def _search_tool(name: str, description: str, search: Callable[[str], str]) -> Tool:
    """A tool that refuses an empty query, says what it searches for, then searches."""
    def run(query: str) -> str:
        query = query.strip()
        if not query:
            raise ToolInputError(f"{name} needs a search query")
        notify("tool_text", f"Searching for: {query}", tool=name)
        return search(query)

    return Tool(name, description, func=run)


def wikipedia_url(settings: Settings) -> str:
    """``wikipedia_base_url`` (an api.php URL) or the public API for ``wikipedia_lang``."""
    lang = str(settings.get("wikipedia_lang") or "en")
    return str(settings.get("wikipedia_base_url") or f"https://{lang}.wikipedia.org/w/api.php")


def wikipedia(settings: Settings) -> Tool:
    """Search, then fetch the intro of the top pages."""
    url = wikipedia_url(settings)
    top_k = int_setting(settings, "wikipedia_top_k", 3)
    max_chars = int_setting(settings, "wikipedia_max_chars", 4000)
    timeout = float_setting(settings, "wikipedia_timeout", 15.0)
    none = "No good Wikipedia Search Result was found"

    def search(query: str) -> str:
        found = get_json(url, {"action": "query", "list": "search", "srsearch": query,
                               "srlimit": top_k, "format": "json"}, timeout=timeout)
        pages = []
        for hit in found.get("query", {}).get("search", [])[:top_k]:
            title = hit["title"]
            data = get_json(url, {"action": "query", "prop": "extracts", "exintro": 1,
                                  "explaintext": 1, "redirects": 1, "titles": title,
                                  "format": "json"}, timeout=timeout)
            for page in data.get("query", {}).get("pages", {}).values():
                extract = (page.get("extract") or "").strip()
                if extract:
                    pages.append(f"Page: {page.get('title', title)}\nSummary: {extract}")
        return ("\n\n".join(pages) or none)[:max_chars]

    return _search_tool("wikipedia", WIKIPEDIA_DESCRIPTION, search)


def arxiv(settings: Settings) -> Tool:
    """Query the arXiv API and format the top entries."""
    url = str(settings.get("arxiv_base_url") or ARXIV_URL)
    top_k = int_setting(settings, "arxiv_top_k", 3)
    timeout = float_setting(settings, "arxiv_timeout", 20.0)

    def search(query: str) -> str:
        resp = fetch("GET", url, params={"search_query": f"all:{query}", "start": 0,
                                         "max_results": top_k},
                     allow_private=True, timeout=timeout, max_bytes=5_000_000)
        if resp.status >= 400:
            raise ToolInputError(f"arXiv answered HTTP {resp.status}")
        try:
            root = ET.fromstring(resp.text)
        except ET.ParseError as err:
            raise ToolInputError(f"arXiv returned a malformed feed: {err}") from None

        def text(node: ET.Element, tag: str) -> str:
            found = node.find(tag, _ATOM)
            return " ".join((found.text or "").split()) if found is not None else ""

        entries = [
            f"Published: {text(e, 'a:published')[:10]}\nTitle: {text(e, 'a:title')}\n"
            f"Authors: {', '.join(text(a, 'a:name') for a in e.findall('a:author', _ATOM))}\n"
            f"Summary: {text(e, 'a:summary')[:1500]}"
            for e in root.findall("a:entry", _ATOM)[:top_k]
        ]
        return "\n\n".join(entries) or "No good Arxiv Result was found"

    return _search_tool("arxiv", ARXIV_DESCRIPTION, search)


def _results(results: list[Mapping[str, object]]) -> str:
    if not results:
        return "No good search result was found"
    return "\n\n".join(
        f"Title: {r.get('title', '')}\nLink: {r.get('url') or r.get('href', '')}\n"
        f"Snippet: {r.get('content') or r.get('body', '')}" for r in results
    )


def ddg(settings: Settings) -> Tool:
    """DuckDuckGo through the optional ``ddgs`` package (a load error without it)."""
    try:
        module = importlib.import_module("ddgs")
    except ImportError:
        raise ToolLoadError(
            "tool 'ddg-search' needs the optional package ddgs: pip install 'agentcli[ddg]'"
        ) from None
    top_k = int_setting(settings, "ddg_top_k", 5)

    def search(query: str) -> str:
        try:
            results = list(module.DDGS().text(query, max_results=top_k))
        except Exception as err:  # the package raises its own exception types
            raise ToolInputError(f"DuckDuckGo search failed: {err}") from None
        return _results(results[:top_k])

    return _search_tool("ddg-search", DDG_DESCRIPTION, search)


def searx(settings: Settings) -> Tool:
    """Query ``{searx_host}/search?format=json``: its answers, then its top results."""
    host = str(settings["searx_host"]).rstrip("/")
    top_k = int_setting(settings, "searx_top_k", 5)
    timeout = float_setting(settings, "searx_timeout", 15.0)

    def search(query: str) -> str:
        data = get_json(f"{host}/search", {"q": query, "format": "json"}, timeout=timeout)
        answers = "".join(f"Answer: {a}\n" for a in data.get("answers", []))
        body = _results(list(data.get("results", []))[:top_k])
        return answers + ("\n" if answers else "") + body

    return _search_tool("searx-search", SEARX_DESCRIPTION, search)
