"""A tool result answers the call that produced it (issue 31 item 1): per built-in tool
family, two different inputs give two observations, each about its own input (the tools have
no question to fall back on: nothing but the input reaches them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.models.fake import FakeChatModel
from agentcli.tools import load_tools
from tests.tools.conftest import LocalServer


def _pair(tool: Any, first: Any, second: Any) -> tuple[str, str]:
    return tool.run(first), tool.run(second)


def test_calculator() -> None:
    [tool] = load_tools(["llm-math"], llm=FakeChatModel([]))
    assert _pair(tool, "15", "2 + 3") == ("Answer: 15", "Answer: 5")


def test_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.txt").write_text("beta")
    [read] = load_tools(["read_file"], files_root=str(tmp_path))
    assert _pair(read, "a.txt", {"file_path": "b.txt"}) == ("alpha", "beta")
    [search] = load_tools(["file_search"], files_root=str(tmp_path))
    one, two = _pair(search, {"pattern": "a.*"}, {"pattern": "b.*"})
    assert "a.txt" in one and "b.txt" not in one and "b.txt" in two and "a.txt" not in two


def test_shell_and_python(tmp_path: Path) -> None:
    [shell] = load_tools(["terminal"], allow=["terminal"], files_root=str(tmp_path))
    one, two = _pair(shell, "echo first-input", "echo second-input")
    assert "first-input" in one and "second" not in one and "second-input" in two
    [python] = load_tools(["python_repl"], allow=["python_repl"], files_root=str(tmp_path))
    one, two = _pair(python, "print(6 * 7)", "print(6 * 8)")
    assert one.strip() == "42" and two.strip() == "48"


def test_requests(local_server: LocalServer) -> None:
    local_server.routes["/one"] = lambda h: h.send_json({"page": "one"})
    local_server.routes["/two"] = lambda h: h.send_json({"page": "two"})
    [get] = load_tools(["requests_get"], allow=["requests_get"],
                       allow_private_network=True)
    one, two = _pair(get, local_server.url + "/one", {"url": local_server.url + "/two"})
    assert '"one"' in one and '"two"' not in one and '"two"' in two


def test_wikipedia(wiki_server: LocalServer) -> None:
    [wiki] = load_tools(["wikipedia"], wikipedia_base_url=wiki_server.url + "/w/api.php")
    one, two = _pair(wiki, "Eiffel Tower", "Paris")
    assert "330 metres" in one and "capital of France" in two and "330" not in two


def test_search(local_server: LocalServer) -> None:
    local_server.routes["/search"] = lambda h: h.send_json({
        "results": [{"title": h.query["q"], "url": "http://x/1", "content": "c"}]})
    [tool] = load_tools(["searx-search"], searx_host=local_server.url)
    one, two = _pair(tool, "tides", {"query": "moons"})
    assert "tides" in one and "moons" not in one and "moons" in two


@pytest.mark.parametrize("noise", [{"required": ["input"]}, {"type": "object"}])
def test_schema_noise_never_changes_what_a_tool_computes(noise: dict[str, Any]) -> None:
    [tool] = load_tools(["llm-math"], llm=FakeChatModel([]))
    assert tool.run({"input": "6 * 7", **noise}) == "Answer: 42"
