"""The built-in tools by name (:func:`registry`), and the dangerous-tools gate.

The built-in table is read-only plain data (name, summary, needs, danger), so listing or
resolving tools imports no tool module: each factory imports its family module
(``agentcli.tools.<family>``) only when one of its tools is built. Every other tool (a
plugin's, a ``--tools-module`` file's, a YAML tool, an MCP server's, or specs handed to
``load_tools(specs=...)``) joins the catalog of the command or call that reads it
(``tools/resolve.py``), never a process-wide table.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from agentcli.errors import ToolLoadError
from agentcli.tools.base import Tool, ToolFactory, ToolNeeds, ToolSpec

__all__ = ["ToolFactory", "ToolSpec", "registry"]

if TYPE_CHECKING:  # listing or resolving tools must not import the model layer
    from agentcli.models.base import BaseChatModel

SHELL_DANGER = "it runs any shell command the model writes, with your permissions"
PYTHON_DANGER = "it runs any Python code the model writes, with your permissions"
REQUESTS_DANGER = ("it sends HTTP requests to any URL the model picks "
                   "(data can leave your machine)")
FILE_WRITE_DANGER = "it changes files under the tool root"
_SQL_NEEDS = ToolNeeds(settings=("sqlite_path",))
_SQL = {"sql_db_list_tables": "SQLite: list tables.",
        "sql_db_schema": "SQLite: schemas and sample rows.",
        "sql_db_query": "SQLite: run a query (read-only; sql_allow_writes makes it dangerous)."}
_HTTP_METHODS = (("GET", False), ("POST", True), ("PUT", True), ("PATCH", True),
                 ("DELETE", False))
_SAFE_FILES = {"read_file": "Read a file under the root.",
               "list_directory": "List a directory under the root.",
               "file_search": "Find files by name pattern under the root."}
_WRITE_FILES = {"write_file": "Write a file under the root.", "copy_file": "Copy a file.",
                "move_file": "Move or rename a file.", "file_delete": "Delete a file."}


def _lazy(family: str, attr: str, *args: object) -> ToolFactory:
    """A factory that imports ``agentcli.tools.<family>`` only when the tool is built and
    calls its ``attr`` with ``args`` and the tool settings."""
    def factory(llm: object = None, **settings: object) -> Tool | list[Tool]:
        make = getattr(importlib.import_module(f"agentcli.tools.{family}"), attr)
        built: Tool | list[Tool] = make(*args, settings)
        return built

    return factory


def _llm_math(llm: BaseChatModel | None = None, **_: object) -> Tool:
    from agentcli.tools.calculator import make_calculator

    return make_calculator(llm)


_BUILTINS: tuple[ToolSpec, ...] = (
    ToolSpec("llm-math", _llm_math,
             "Calculator: evaluates arithmetic safely; asks the model to translate word "
             "problems.", needs=ToolNeeds(llm=True), also_known_as=("Calculator",)),
    ToolSpec("wikipedia", _lazy("search", "wikipedia"),
             "Wikipedia search and page summaries (MediaWiki API)."),
    ToolSpec("arxiv", _lazy("search", "arxiv"),
             "arXiv paper search: title, authors, summary (Atom API)."),
    ToolSpec("ddg-search", _lazy("search", "ddg"), "DuckDuckGo web search.",
             needs=ToolNeeds(extra="ddg")),
    ToolSpec("searx-search", _lazy("search", "searx"),
             "Web search through a SearxNG instance.",
             needs=ToolNeeds(settings=("searx_host",))),
    *(ToolSpec(f"requests_{m.lower()}", _lazy("net", "make", m, body),
               f"HTTP {m} (SSRF-guarded, size-capped).", dangerous=True,
               danger_reason=REQUESTS_DANGER) for m, body in _HTTP_METHODS),
    ToolSpec("requests_all", None, "Group: every requests_* tool.", dangerous=True,
             danger_reason=REQUESTS_DANGER,
             members=tuple(f"requests_{m.lower()}" for m, _ in _HTTP_METHODS)),
    ToolSpec("terminal", _lazy("processes", "terminal"),
             "Shell commands (timeout, output cap, scrubbed env).",
             dangerous=True, danger_reason=SHELL_DANGER),
    ToolSpec("python_repl", _lazy("processes", "python_repl"),
             "Python in a subprocess, state kept for the run.",
             dangerous=True, danger_reason=PYTHON_DANGER),
    *(ToolSpec(n, _lazy("files", "make", n), s) for n, s in _SAFE_FILES.items()),
    *(ToolSpec(n, _lazy("files", "make", n), s, dangerous=True,
               danger_reason=FILE_WRITE_DANGER) for n, s in _WRITE_FILES.items()),
    *(ToolSpec(n, _lazy("sql", "make", n), s, needs=_SQL_NEEDS) for n, s in _SQL.items()),
    ToolSpec("human", _lazy("misc", "human"),
             "Ask the person at the terminal (refused without one)."),
    ToolSpec("current_datetime", _lazy("misc", "current_datetime"),
             "The current date and time."),
    ToolSpec("sleep", _lazy("misc", "sleep"), "Wait a number of seconds (capped by sleep_max)."),
)


@functools.cache
def registry() -> Mapping[str, ToolSpec]:
    """The built-in tool specs by name: a constant, read-only table (made on first use)."""
    return MappingProxyType({spec.name: spec for spec in _BUILTINS})


# The ``tool_settings`` keys the built-in tools read (one list, checked by a test). A plugin's
# tool declares the settings it needs in its ``ToolNeeds``; a key that neither lists is
# refused by ``load_tools`` with a suggestion, instead of being silently ignored.
BUILTIN_TOOL_SETTINGS = frozenset({
    "allow_private_network", "arxiv_base_url", "arxiv_timeout", "arxiv_top_k", "ddg_top_k",
    "files_max_bytes", "files_root", "python_cwd", "python_max_output", "python_timeout",
    "requests_headers", "requests_max_bytes", "requests_timeout", "searx_host", "searx_timeout",
    "searx_top_k", "sleep_max", "sql_allow_writes", "sql_max_chars", "sql_max_rows",
    "sql_timeout", "sqlite_path", "terminal_cwd", "terminal_max_output", "terminal_timeout",
    "wikipedia_base_url", "wikipedia_lang", "wikipedia_max_chars", "wikipedia_timeout",
    "wikipedia_top_k",
    "human_input",  # not a YAML setting: the function the human tool asks with
})


def check_settings(given: Iterable[str], declared: Iterable[str], where: str) -> None:
    """Raise a TypeError naming each key no tool reads, with the closest known key."""
    known = BUILTIN_TOOL_SETTINGS | set(declared)
    hints = []
    for key in sorted(set(given) - known):
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    if hints:
        raise TypeError(f"{where} got unknown argument(s) {', '.join(hints)}; it takes names, "
                        "llm, allow_dangerous_tools, allow, config, callbacks and tool settings "
                        "such as sqlite_path (see docs/tools.md)")


# LangChain's deprecated tool names, and what to load instead
_RENAMED = {"requests": "requests_get (GET only) or the group requests_all (every method)"}


def renamed_error(name: str) -> None:
    """Raise the hint for a LangChain tool name that is gone (``requests``), if it is one."""
    if name in _RENAMED:
        raise ToolLoadError(f"tool {name!r} is LangChain's old name; use {_RENAMED[name]}")


def refuse_dangerous(name: str, reason: str, group: str | None) -> ToolLoadError:
    """The load-time refusal: which tool, why it is dangerous, and the flag that opts in."""
    what = f"{name!r} (from group {group!r})" if group else repr(name)
    return ToolLoadError(
        f"tool {what} is dangerous: {reason or 'it can change your system'}. "
        f"Opt in with --allow {group or name} or --allow-dangerous-tools"
    )


def build_spec(
    spec: ToolSpec, *, llm: BaseChatModel | None, permitted: bool, group: str | None,
    settings: Mapping[str, object],
) -> list[Tool]:
    """Build one spec's tool(s) through the load-time gate (danger, LLM, settings)."""
    name = spec.name
    if spec.dangerous and not permitted:
        raise refuse_dangerous(name, spec.danger_reason, group)
    if spec.needs.llm and llm is None:
        raise ToolLoadError(f"tool {name!r} needs a language model; configure --model")
    missing = [s for s in spec.needs.settings if settings.get(s) in (None, "")]
    if missing:
        raise ToolLoadError(
            f"tool {name!r} needs the setting(s) {', '.join(missing)}; set them under "
            f"tool_settings in your config"
        )
    assert spec.factory is not None
    from agentcli.models.base import observed

    built = spec.factory(llm=observed(llm), **settings)
    tools = []
    for t in built if isinstance(built, list) else [built]:
        if t.dangerous and not permitted:  # dangerous because of a setting or by its author
            raise refuse_dangerous(name, t.danger_reason, group)
        tools.append(replace(
            t, dangerous=t.dangerous or spec.dangerous,
            danger_reason=t.danger_reason or spec.danger_reason,
            needs=spec.needs, source=spec.source,
        ))
    return tools
