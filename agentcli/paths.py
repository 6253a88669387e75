"""Where agentcli keeps its files: the XDG config, data and cache directories.

Every path the project derives from ``$XDG_*_HOME`` is built here, so the layout is written
down once: ``config.yaml`` and ``keys.json`` in the config dir, the SQLite store, chat history
and the model-list cache in the data dir, the response cache in the cache dir.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "agentcli"
MCP_PROJECT_FILE = ".mcp.json"  # a project's MCP servers, as other MCP clients read them


def _base(env: Mapping[str, str] | None, variable: str, *fallback: str) -> Path:
    env = os.environ if env is None else env
    value = env.get(variable)
    return Path(value).expanduser() if value else Path.home().joinpath(*fallback)


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/agentcli`` (``~/.config/agentcli`` by default)."""
    return _base(env, "XDG_CONFIG_HOME", ".config") / APP


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/agentcli`` (``~/.local/share/agentcli`` by default)."""
    return _base(env, "XDG_DATA_HOME", ".local", "share") / APP


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/agentcli`` (``~/.cache/agentcli`` by default)."""
    return _base(env, "XDG_CACHE_HOME", ".cache") / APP


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The user config file, read under any ``--config`` file: ``<config dir>/config.yaml``."""
    return config_dir(env) / "config.yaml"


def keys_file(env: Mapping[str, str] | None = None) -> Path:
    """The stored API keys (mode 0600): ``<config dir>/keys.json``."""
    return config_dir(env) / "keys.json"


def secret_file(path: str | Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The agentcli file holding secrets (the keys file) that ``path`` is, through any symlink
    or hard link (same device and inode), or None: such a file is never read as input."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    for secret in (keys_file(env),):
        try:
            known = os.stat(secret)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (known.st_dev, known.st_ino):
            return secret
    return None
