"""The environment a command reads: yours, what the project's ``.env`` may set, stored keys."""

from __future__ import annotations

import os

from agentcli.cli.trust_cmd import load_project_env


def environment() -> dict[str, str]:
    """Your environment, plus what the project's ``.env`` may set (agentcli/project_trust.py;
    a line on stderr for each thing ignored), plus stored keys."""
    load_project_env()
    from agentcli.keys import apply_stored_keys  # last: env and .env win over stored keys

    return apply_stored_keys(dict(os.environ))
