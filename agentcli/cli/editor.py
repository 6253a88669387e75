"""Opening a file in the user's editor (``$VISUAL``, ``$EDITOR``, else ``vi``)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from agentcli.errors import ConfigError


def edit_file(path: Path) -> None:
    """Run the editor on ``path`` and wait; a missing or failing editor is a usage error."""
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = [*shlex.split(command), str(path)]
        code = subprocess.call(argv)
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot start the editor {command!r} ({err}); set $EDITOR, or edit "
                          f"{path} by hand") from None
    if code != 0:
        raise ConfigError(f"the editor {command!r} exited with {code}; {path} is as it left it")
