"""The built-in tool specs, registered (by the registry) through the same call a plugin uses.

The specs are plain data (name, summary, needs, danger) so that listing or resolving tools
imports no tool module; each factory imports its family module (``agentcli.tools.<family>``)
only when one of its tools is built.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentcli.tools.base import Tool, ToolNeeds
from agentcli.tools.spec import ToolFactory, ToolSpec

SHELL_DANGER = "it runs any shell command the model writes, with your permissions"
PYTHON_DANGER = "it runs any Python code the model writes, with your permissions"
REQUESTS_DANGER = ("it sends HTTP requests to any URL the model picks "
                   "(data can leave your machine)")
FILE_WRITE_DANGER = "it changes files under the tool root"
_SQL_NEEDS = ToolNeeds(settings=("sqlite_path",))
_HTTP_METHODS = (("GET", False), ("POST", True), ("PUT", True), ("PATCH", True),
                 ("DELETE", False))
_SAFE_FILES = {"read_file": "Read a file under the root.",
               "list_directory": "List a directory under the root.",
               "file_search": "Find files by name pattern under the root."}
_WRITE_FILES = {"write_file": "Write a file under the root.", "copy_file": "Copy a file.",
                "move_file": "Move or rename a file.", "file_delete": "Delete a file."}


def _lazy(family: str, attr: str, *args: Any) -> ToolFactory:
    """A factory that imports ``agentcli.tools.<family>`` only when the tool is built.

    ``attr`` names the family's factory, or with ``args`` a function returning one.
    """
    def factory(**settings: Any) -> Tool | list[Tool]:
        target = getattr(importlib.import_module(f"agentcli.tools.{family}"), attr)
        built: Tool | list[Tool] = (target(*args) if args else target)(**settings)
        return built

    return factory


def _llm_math(llm: Any = None, **_: Any) -> Tool:
    from agentcli.tools.calculator import make_calculator

    return make_calculator(llm)


BUILTINS: tuple[ToolSpec, ...] = (
    ToolSpec("llm-math", _llm_math,
             "Calculator: evaluates arithmetic safely; asks the model to translate word "
             "problems.", needs=ToolNeeds(llm=True), also_known_as=("Calculator",)),
    ToolSpec("wikipedia", _lazy("wikipedia", "_factory"),
             "Wikipedia search and page summaries (MediaWiki API)."),
    ToolSpec("arxiv", _lazy("arxiv", "_factory"),
             "arXiv paper search: title, authors, summary (Atom API)."),
    ToolSpec("ddg-search", _lazy("search", "_ddg_factory"), "DuckDuckGo web search.",
             needs=ToolNeeds(extra="ddg")),
    ToolSpec("searx-search", _lazy("search", "_searx_factory"),
             "Web search through a SearxNG instance.",
             needs=ToolNeeds(settings=("searx_host",))),
    *(ToolSpec(f"requests_{m.lower()}", _lazy("requests_tools", "_make", m, body),
               f"HTTP {m} (SSRF-guarded, size-capped).", dangerous=True,
               danger_reason=REQUESTS_DANGER) for m, body in _HTTP_METHODS),
    ToolSpec("requests_all", None, "Group: every requests_* tool.", dangerous=True,
             danger_reason=REQUESTS_DANGER,
             members=tuple(f"requests_{m.lower()}" for m, _ in _HTTP_METHODS)),
    ToolSpec("terminal", _lazy("shell", "_factory"),
             "Shell commands (timeout, output cap, scrubbed env).",
             dangerous=True, danger_reason=SHELL_DANGER),
    ToolSpec("python_repl", _lazy("python_repl", "_factory"),
             "Python in a subprocess, state kept for the run.",
             dangerous=True, danger_reason=PYTHON_DANGER),
    *(ToolSpec(n, _lazy("files", "_factory", n), s) for n, s in _SAFE_FILES.items()),
    *(ToolSpec(n, _lazy("files", "_factory", n), s, dangerous=True,
               danger_reason=FILE_WRITE_DANGER) for n, s in _WRITE_FILES.items()),
    ToolSpec("sql_db_list_tables", _lazy("sql", "_list"), "SQLite: list tables.",
             needs=_SQL_NEEDS),
    ToolSpec("sql_db_schema", _lazy("sql", "_schema"), "SQLite: schemas and sample rows.",
             needs=_SQL_NEEDS),
    ToolSpec("sql_db_query", _lazy("sql", "_query"),
             "SQLite: run a query (read-only; sql_allow_writes makes it dangerous).",
             needs=_SQL_NEEDS),
    ToolSpec("human", _lazy("misc", "_human"),
             "Ask the person at the terminal (refused without one)."),
    ToolSpec("current_datetime", _lazy("misc", "_datetime"), "The current date and time."),
    ToolSpec("sleep", _lazy("misc", "_sleep"), "Wait a number of seconds (capped by sleep_max)."),
)
