"""Opening the SQLite store for commands that only read it."""

from __future__ import annotations

from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.store import Store, default_db_path


def db_path(db: Path | None, env: dict[str, str]) -> Path:
    """``--db``, else ``$AGENT_DB``, else the default file under the user data dir."""
    return db.expanduser() if db is not None else default_db_path(env)


def read_store(db: Path | None, env: dict[str, str]) -> Store:
    """The store to read; a named file that does not exist is an error, never created.

    The default location not existing yet only means nothing was saved: an empty in-memory
    store answers for it, so a first ``agent logs`` prints nothing instead of failing.
    """
    path = db_path(db, env)
    if not path.exists():
        if db is not None or env.get("AGENT_DB"):
            flag = "--db" if db is not None else "$AGENT_DB"
            raise ConfigError(f"no database at {path}; check {flag} (`agent run` and "
                              "`agent chat` create it)")
        return Store(":memory:")
    if not path.is_file():
        raise ConfigError(f"{path} is not a file; pass the SQLite file with --db")
    return Store(path)
