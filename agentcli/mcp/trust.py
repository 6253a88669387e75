"""Consent for a project's ``.mcp.json``: its commands run only once you trust the file.

The trust itself (per path as found and SHA-256 of the content, one store for every project
file) is :mod:`agentcli.project_trust`; ``agent trust`` records it, and ``agent run``/``chat``
ask once on a terminal. ``AGENT_TRUST_PROJECT_MCP=1`` in your own environment trusts it for
one process (CI); a project's ``.env`` can never set it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentcli.project_files import trust_state

TRUST_ENV = "AGENT_TRUST_PROJECT_MCP"


def is_trusted(path: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``path`` (a ``.mcp.json``) was trusted with its current content."""
    env = os.environ if env is None else env
    if env.get(TRUST_ENV, "") in ("1", "true", "yes"):
        return True
    return trust_state(path, env=env) == "trusted"


def refusal(name: str, project_file: str, target: str) -> str:
    """The one-line error for a project server that is not trusted."""
    return (f"MCP server {name!r} comes from {project_file}, which you have not trusted: it "
            f"would run `{target}`; read the file, then run `agent trust` in its "
            f"directory (or set {TRUST_ENV}=1 for this run)")
