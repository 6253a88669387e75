"""Whether ``agent run`` is logged: a persisted switch (``agent logs on|off``), like ``llm``'s.

The switch is a marker file next to the default database, so it costs one ``stat`` a run and
needs no config file rewrite. Chat sessions and named threads are saved either way: keeping
their turns is what the user asked for by naming them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.paths import data_dir


def logs_off_path(env: Mapping[str, str] | None = None) -> Path:
    """The marker file whose presence turns run logging off."""
    return data_dir(env) / "logs-off"


def logging_enabled(env: Mapping[str, str] | None = None) -> bool:
    """True unless ``agent logs off`` was run (and not undone by ``agent logs on``)."""
    return not logs_off_path(env).exists()


def set_logging(on: bool, env: Mapping[str, str] | None = None) -> None:
    """Turn run logging on or off for every later ``agent run``."""
    path = logs_off_path(env)
    try:
        if on:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    except OSError as err:
        raise ConfigError(f"cannot change the logging switch at {path}: {err.strerror}") from None
