"""Consent for a project's ``.mcp.json``: its commands run only once you trust the file.

A ``.mcp.json`` found in the working directory comes with the project, not from you, and its
servers are commands to run. Trust is remembered per file path *and* content (SHA-256): a file
that changes asks again. ``agent mcp trust`` records it (and ``agent run``/``chat`` ask once on
a terminal); ``AGENT_TRUST_PROJECT_MCP=1`` trusts it for one process (CI).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

TRUST_ENV = "AGENT_TRUST_PROJECT_MCP"


def _store(env: Mapping[str, str] | None = None) -> Path:
    from agentcli.paths import data_dir

    return data_dir(env) / "mcp_trust.json"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read(env: Mapping[str, str] | None = None) -> dict[str, str]:
    try:
        data = json.loads(_store(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def is_trusted(path: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``path`` (a ``.mcp.json``) was trusted with its current content."""
    env = os.environ if env is None else env
    if env.get(TRUST_ENV, "") in ("1", "true", "yes"):
        return True
    try:
        return _read(env).get(str(path.resolve())) == _digest(path)
    except OSError:
        return False


def set_trust(path: Path, trusted: bool, env: Mapping[str, str] | None = None) -> Path:
    """Record (or forget) trust in ``path`` as it is now; returns the store file."""
    from agentcli.files import write_atomic

    known = _read(env)
    key = str(path.resolve())
    if trusted:
        known[key] = _digest(path)
    else:
        known.pop(key, None)
    store = _store(env)
    write_atomic(store, json.dumps(known, indent=2, sort_keys=True) + "\n")
    return store


def refusal(name: str, project_file: str, target: str) -> str:
    """The one-line error for a project server that is not trusted."""
    return (f"MCP server {name!r} comes from {project_file}, which you have not trusted: it "
            f"would run `{target}`; read the file, then run `agent mcp trust` in its "
            f"directory (or set {TRUST_ENV}=1 for this run)")
