"""Stored API keys: ``agent keys set NAME`` writes them to a 0600 JSON file in the config dir.

A key is stored under a provider name (``openai``, which fills ``OPENAI_API_KEY``) or under an
environment variable name (``SERPAPI_API_KEY``). Stored keys are the last resort: a flag, the
environment and ``.env`` all win (:func:`apply_stored_keys` only fills unset variables). A keys
file that other users can read is refused, not used.
"""

from __future__ import annotations

import difflib
import json
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.files import write_atomic
from agentcli.paths import keys_file
from agentcli.redact import remember

_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def key_variable(name: str) -> str:
    """The environment variable a stored key named ``name`` stands for."""
    from agentcli.models.presets import PRESETS

    if _ENV_NAME.match(name):
        return name
    preset = PRESETS.get(name.lower())
    if preset is not None and preset.key_env:
        return preset.key_env
    with_keys = sorted(n for n, p in PRESETS.items() if p.key_env)
    if preset is not None:
        raise ConfigError(f"{preset.name} takes no API key; providers with keys: "
                          + ", ".join(with_keys))
    close = difflib.get_close_matches(name.lower(), with_keys, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"unknown key name {name!r}{hint}; use a provider ("
                      + ", ".join(with_keys) + ") or a variable name such as SERPAPI_API_KEY")


def canonical_name(name: str) -> str:
    """How ``name`` is stored: a provider in lower case, a variable name as given."""
    name = name.strip()
    key_variable(name)  # validates
    return name if _ENV_NAME.match(name) else name.lower()


def _check_private(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"keys file {path} is readable by other users (mode {mode:04o}), so it was not "
            f"used; run: chmod 600 {path}"
        )


def read_keys(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The stored keys by name ({} when there is no file); a shared file is refused."""
    path = keys_file(env)
    if not path.is_file():
        return {}
    _check_private(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot read keys file {path}: {err}; fix it or delete it and "
                          "run agent keys set again") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"keys file {path} must be a JSON object of name: key")
    return data


def stored_key(name: str, env: Mapping[str, str] | None = None) -> str:
    """The stored key for ``name`` (a provider or its variable name, either spelling)."""
    wanted = key_variable(name.strip())
    keys = read_keys(env)
    for stored, value in keys.items():
        try:
            if stored == name.strip() or key_variable(stored) == wanted:
                return value
        except ConfigError:  # a provider no longer registered
            continue
    raise ConfigError(f"no stored key {name.strip()!r}; store one with agent keys set "
                      f"{canonical_name(name)} (stored: {', '.join(sorted(keys)) or 'none'})")


def save_key(name: str, value: str, env: Mapping[str, str] | None = None) -> Path:
    """Store ``value`` under ``name``: the whole file is rewritten atomically, mode 0600."""
    value = value.strip()
    if not value:
        raise ConfigError("the key is empty; nothing was stored")
    name = canonical_name(name)
    path = keys_file(env)
    keys = read_keys(env) if path.is_file() else {}
    keys[name] = value
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    write_atomic(path, json.dumps(keys, indent=2, sort_keys=True) + "\n")  # mkstemp: 0600
    return path


def apply_stored_keys(env: dict[str, str]) -> dict[str, str]:
    """Fill unset key variables in ``env`` from the keys file (everything else wins).

    Every stored value is registered with the redactor, used or shadowed.
    """
    keys = read_keys(env)
    remember(keys.values())
    for name, value in keys.items():
        try:
            variable = key_variable(name)
        except ConfigError:
            continue  # a provider that is no longer registered
        if not env.get(variable):
            env[variable] = value
    return env
