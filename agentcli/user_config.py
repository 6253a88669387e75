"""Changing one top-level key of the user config file, keeping the rest (and its comments)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError
from agentcli.paths import user_config_file


def read_user_value(key: str, env: Mapping[str, str] | None = None) -> Any:
    """The value of ``key`` in the user config file (None when the file or key is absent)."""
    from agentcli.config import read_yaml

    path = user_config_file(env)
    return read_yaml(path).get(key) if path.is_file() else None


def set_user_value(key: str, value: Any, env: Mapping[str, str] | None = None) -> Path:
    """Write ``key: value`` in the user config file (atomically); other lines are kept."""
    from agentcli.config import _checked, read_yaml

    path = user_config_file(env)
    _checked(key, value, str(path))  # the same check a later load applies
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    line = f"{key}: {json.dumps(value, ensure_ascii=False)}"  # JSON scalars are valid YAML
    pattern = re.compile(rf"^{re.escape(key)}\s*:.*$", re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: line, text, count=1)
    else:
        text = text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if read_yaml(Path(tmp)).get(key) != value:  # a block value spanning lines, say
            raise ConfigError(f"could not set {key} in {path}: edit the file by hand")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
