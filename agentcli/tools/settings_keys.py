"""The ``tool_settings`` keys the built-in tools read (one list, checked by a test).

A plugin's tool declares the settings it needs in its ``ToolNeeds``; a key that neither
lists is refused by ``load_tools`` with a suggestion, instead of being silently ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

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
    unknown = sorted(set(given) - known)
    if not unknown:
        return
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise TypeError(f"{where} got unknown argument(s) {', '.join(hints)}; it takes names, llm, "
                    "allow_dangerous_tools, allow, config, callbacks and tool settings such as "
                    "sqlite_path (see docs/tools.md)")
