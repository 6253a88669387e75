"""The last tool list of each MCP server, cached per config hash so listing starts nothing.

Files live in ``$XDG_DATA_HOME/agentcli/mcp/`` beside the servers' stderr logs. No SDK import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from agentcli.mcp.config import ServerConfig
from agentcli.paths import data_dir
from agentcli.records import record

_VERSION = 1
LOG_KEEP = 4 << 20  # bytes of a server's log before it is moved aside at its next start


@record
class ToolInfo:
    """One tool as a server lists it (the wire shape, minus SDK types)."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    read_only: bool | None = None  # annotations.readOnlyHint
    destructive: bool | None = None  # annotations.destructiveHint

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ToolInfo:
        """From a tool as dumped by the SDK (camelCase keys, as on the wire)."""
        notes = data.get("annotations") or {}
        schema = data.get("inputSchema") or data.get("input_schema") or {}
        return cls(str(data["name"]), str(data.get("description") or ""),
                   {"type": "object", "properties": {}, **dict(schema)},
                   data.get("title") or notes.get("title"),
                   notes.get("readOnlyHint"), notes.get("destructiveHint"))


def log_path(name: str) -> Path:
    """Where server ``name`` writes its stderr."""
    return data_dir() / "mcp" / "logs" / f"{name}.log"


def log_offset(name: str) -> int:
    """Where the next start's stderr begins in server ``name``'s log. A log past
    :data:`LOG_KEEP` is first moved to ``NAME.log.1`` (replacing the one before), so the logs
    of a server never grow past twice that plus one start's capped output."""
    path = log_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        size = path.stat().st_size
    except OSError:
        return 0
    if size <= LOG_KEEP:
        return size
    import os

    os.replace(path, path.with_name(f"{path.name}.1"))
    return 0


def _cache_file(conf: ServerConfig) -> Path:
    return data_dir() / "mcp" / "tools" / f"{conf.name}-{conf.digest()}.json"


def cached_tools(conf: ServerConfig) -> list[ToolInfo] | None:
    """The cached list for this exact config, or None."""
    try:
        data = json.loads(_cache_file(conf).read_text(encoding="utf-8"))
        if data.get("version") != _VERSION:
            return None
        return [ToolInfo(**t) for t in data["tools"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_tools(conf: ServerConfig, tools: list[ToolInfo]) -> None:
    """Write the list atomically; stale files of the same server are removed."""
    path = _cache_file(conf)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"version": _VERSION, "server": conf.name,
                          "tools": [asdict(t) for t in tools]}, ensure_ascii=False)
    from agentcli.files import write_atomic  # only writers pay for it

    write_atomic(path, payload)
    for old in path.parent.glob(f"{conf.name}-*.json"):
        digest = old.stem[len(conf.name) + 1:]  # "ev-x-<hash>" is another server than "ev"
        if old != path and len(digest) == 16 and "-" not in digest:
            old.unlink(missing_ok=True)
