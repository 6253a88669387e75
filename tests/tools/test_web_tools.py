"""wikipedia, arxiv, searx-search and ddg-search against local fixtures."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from agentcli.errors import ToolLoadError
from agentcli.tools import load_tools
from tests.tools.conftest import LocalServer

ATOM = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <entry>
    <id>http://arxiv.org/abs/1706.03762v7</id>
    <published>2017-06-12T17:57:34Z</published>
    <title>Attention Is All
      You Need</title>
    <summary>The dominant sequence transduction models are based on recurrence.</summary>
    <author><name>Ashish Vaswani</name></author>
    <author><name>Noam Shazeer</name></author>
  </entry>
</feed>"""


def test_wikipedia_search_and_summaries(wiki_server: LocalServer) -> None:
    [wiki] = load_tools(["wikipedia"], wikipedia_base_url=wiki_server.url + "/w/api.php",
                        wikipedia_top_k=2)
    out = wiki.run("Eiffel Tower")
    assert "Page: Eiffel Tower" in out and "330 metres" in out
    assert wiki.run("zzz nothing") == "No good Wikipedia Search Result was found"
    first = wiki_server.requests[0][1]
    assert "srlimit=2" in first and "srsearch=Eiffel+Tower" in first


def test_wikipedia_lang_builds_public_url() -> None:
    from agentcli.tools.search import wikipedia_url

    assert wikipedia_url({"wikipedia_lang": "de"}) == "https://de.wikipedia.org/w/api.php"


def test_arxiv_parses_atom(local_server: LocalServer) -> None:
    local_server.routes["/api/query"] = lambda h: h.send_text(ATOM, ctype="application/atom+xml")
    [tool] = load_tools(["arxiv"], arxiv_base_url=local_server.url + "/api/query")
    out = tool.run("attention")
    assert "Title: Attention Is All You Need" in out
    assert "Authors: Ashish Vaswani, Noam Shazeer" in out and "Published: 2017-06-12" in out
    assert "search_query=all%3Aattention" in local_server.requests[0][1]


def test_searx_json_api(local_server: LocalServer) -> None:
    local_server.routes["/search"] = lambda h: h.send_json({
        "answers": ["42"],
        "results": [{"title": "T1", "url": "http://x/1", "content": "first"}],
    })
    [tool] = load_tools(["searx-search"], searx_host=local_server.url)
    out = tool.run("meaning of life")
    assert "Answer: 42" in out and "Title: T1" in out and "Snippet: first" in out
    assert "format=json" in local_server.requests[0][1]


def test_searx_needs_host() -> None:
    with pytest.raises(ToolLoadError, match="searx_host"):
        load_tools(["searx-search"])


def test_ddg_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ddgs", None)
    with pytest.raises(ToolLoadError, match=r"pip install 'agentcli\[ddg\]'"):
        load_tools(["ddg-search"])


def test_ddg_with_fake_package(monkeypatch: pytest.MonkeyPatch) -> None:
    class DDGS:
        def text(self, query: str, max_results: int) -> list[dict[str, Any]]:
            return [{"title": f"About {query}", "href": "https://e.x", "body": "snippet"}]

    monkeypatch.setitem(sys.modules, "ddgs", types.SimpleNamespace(DDGS=DDGS))
    [tool] = load_tools(["ddg-search"])
    assert "Title: About cats" in tool.run("cats")
