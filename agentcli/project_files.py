"""Project files (``.env``, ``.mcp.json``): reading one safely, and the per-file trust store.

What a trusted or untrusted project file may set is :mod:`agentcli.project_trust`'s policy;
this module only reads the files and remembers the user's answer per path and content.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from agentcli.errors import ConfigError
from agentcli.files import MAX_INPUT_FILE_BYTES, write_atomic
from agentcli.paths import data_dir

ENV_FILE = ".env"
_DECLINED = "declined:"  # prefix of the digest of a file the user said no to
TrustState = Literal["trusted", "declined", "unknown"]


def read_project_file(path: str | Path) -> bytes:
    """The bytes of a project file: a regular file you own, not a symlink, FIFO or device, at
    most :data:`MAX_INPUT_FILE_BYTES`; a one-line ConfigError otherwise (never a hang)."""
    link = (f"{path} is a symbolic link, which a project file may not be (it could borrow "
            "another project's trust); copy the file instead")
    if os.path.islink(path):
        raise ConfigError(link)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise ConfigError(link) from None
        raise ConfigError(f"cannot read {path}: {err.strerror or err}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path} is not a regular file (a FIFO, device or directory); "
                              "remove it or make it a file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise ConfigError(f"{path} belongs to another user (uid {info.st_uid}); agentcli "
                              "reads only project files you own")
        data = fh.read(MAX_INPUT_FILE_BYTES + 1)
    if len(data) > MAX_INPUT_FILE_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_INPUT_FILE_BYTES // 1024} KiB; a "
                          "project file that big is refused")
    return data


def find_env_file(start: str | Path | None = None) -> str:
    """The nearest ``.env`` from ``start`` (the working directory) up to the repository root
    (a directory holding ``.git``) or your home, whichever comes first, or ''."""
    home = os.path.abspath(os.path.expanduser("~"))
    current = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(current, ENV_FILE)
        try:
            if not stat.S_ISDIR(os.lstat(candidate).st_mode):
                return candidate  # a FIFO or a link too: refused when read, with a reason
        except OSError:
            pass
        parent = os.path.dirname(current)
        if current == home or os.path.exists(os.path.join(current, ".git")) or (
                parent == current):
            return ""
        current = parent


# --- the trust store --------------------------------------------------------------------

def _store(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "project_trust.json"


def _known(env: Mapping[str, str] | None = None) -> dict[str, str]:
    try:
        data = json.loads(_store(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _key(path: str | Path) -> str:
    return os.path.abspath(os.fspath(path))  # as found: a symlink is not its target


def digest(data: bytes) -> str:
    """The SHA-256 a file's trust is kept under."""
    return hashlib.sha256(data).hexdigest()


def trust_state(path: str | Path, data: bytes | None = None,
                env: Mapping[str, str] | None = None) -> TrustState:
    """Whether ``path`` with its current content (``data``, read if not given) was trusted,
    declined, or never answered."""
    try:
        data = read_project_file(path) if data is None else data
    except ConfigError:
        return "unknown"
    kept = _known(env).get(_key(path))
    if kept == digest(data):
        return "trusted"
    return "declined" if kept == _DECLINED + digest(data) else "unknown"


def set_trust(path: str | Path, trusted: bool | None,
              env: Mapping[str, str] | None = None) -> Path:
    """Record trust in ``path`` as it is now (True), a "no" to it (False), or forget both
    (None); returns the store file."""
    known = _known(env)
    if trusted is None:
        known.pop(_key(path), None)
    else:
        known[_key(path)] = ("" if trusted else _DECLINED) + digest(read_project_file(path))
    store = _store(env)
    write_atomic(store, json.dumps(known, indent=2, sort_keys=True) + "\n")
    return store
