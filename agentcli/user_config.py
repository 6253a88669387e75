"""Changing one top-level key of the user config file, keeping the rest (and its comments).

A value is written on one line as JSON (valid YAML): a mapping such as ``aliases`` becomes a
flow mapping that replaces the key's whole block (the comments inside that block go with it).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.config import _checked, read_yaml
from agentcli.errors import ConfigError
from agentcli.paths import user_config_file


def read_user_value(key: str, env: Mapping[str, str] | None = None) -> Any:
    """The value of ``key`` in the user config file (None when the file or key is absent)."""
    path = user_config_file(env)
    return read_yaml(path).get(key) if path.is_file() else None


def _with_line(text: str, key: str, line: str) -> str:
    """``text`` with the top-level ``key`` (its line and indented block) replaced by ``line``,
    or ``line`` appended."""
    lines = text.splitlines()
    pattern = re.compile(rf"{re.escape(key)}\s*:")
    start = next((i for i, old in enumerate(lines) if pattern.match(old)), None)
    if start is None:
        return text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"
    end = start + 1
    while end < len(lines) and (lines[end][:1] in (" ", "\t") or (
            not lines[end].strip() and end + 1 < len(lines)
            and lines[end + 1][:1] in (" ", "\t"))):
        end += 1
    return "\n".join([*lines[:start], line, *lines[end:]]) + "\n"


def set_user_value(key: str, value: Any, env: Mapping[str, str] | None = None) -> Path:
    """Write ``key: value`` in the user config file (atomically); other lines are kept."""
    path = user_config_file(env)
    _checked(key, value, str(path))  # the same check a later load applies
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    line = f"{key}: {json.dumps(value, ensure_ascii=False)}"  # JSON values are valid YAML
    text = _with_line(text, key, line)
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
