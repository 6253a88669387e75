"""Files a user names: read bounded (config, prompt, schema, state), written whole.

Each is a regular file of at most :data:`MAX_INPUT_FILE_BYTES`; ``/dev/zero``, a FIFO or a
directory is refused before anything is read, so is agentcli's keys file under any name or
link (:func:`refuse_secret`), and a file that grows while it is read is cut
off at the limit and refused, never read on.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.paths import secret_file

MAX_INPUT_FILE_BYTES = 1024 * 1024  # a config, prompt, schema or state file larger is refused


def read_small_text(path: str | Path, what: str, fix: str,
                    limit: int = MAX_INPUT_FILE_BYTES) -> str:
    """The UTF-8 text of ``path``; a one-line ConfigError naming ``what`` it is otherwise.

    ``fix`` says what to give instead (e.g. "give a JSON file").
    """
    file = Path(path).expanduser()
    try:
        if not file.exists():
            raise ConfigError(f"{what} {path} does not exist; {fix}")
        if not file.is_file():
            raise ConfigError(f"{what} {path} is not a regular file; {fix}")
        refuse_secret(file, what)
        with file.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as err:
        raise ConfigError(f"cannot read {what} {path}: {err.strerror or err}") from None
    if len(data) > limit:
        raise ConfigError(f"{what} {path} is larger than {limit // 1024} KiB; {fix}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{what} {path} is not UTF-8 text (byte {err.start + 1}); "
                          "save it as UTF-8") from None


def refuse_secret(path: Path, what: str) -> None:
    """Refuse ``path`` when it is agentcli's keys file (or another of its secret files),
    whatever it is named or linked as: its content would reach a model."""
    secret = secret_file(path)
    if secret is not None:
        raise ConfigError(f"{what} {path} is agentcli's secret file {secret}; it is never "
                          "read as input")


def write_atomic(path: Path, text: str) -> None:
    """Write a file whole or not at all (temp file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
