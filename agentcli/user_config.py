"""Changing one top-level key of the user config file, keeping the rest (and its comments).

A value is written on one line as JSON (valid YAML): a mapping such as ``aliases`` becomes a
flow mapping that replaces the key's whole block (the comments inside that block go with it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from agentcli.config import _checked, read_yaml
from agentcli.errors import ConfigError
from agentcli.files import write_atomic
from agentcli.paths import user_config_file
from agentcli.yaml_loader import load_yaml


def read_user_value(key: str, env: Mapping[str, str] | None = None) -> object:
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


def set_user_value(key: str, value: object, env: Mapping[str, str] | None = None) -> Path:
    """Write ``key: value`` in the user config file (atomically); other lines are kept."""
    path = user_config_file(env)
    _checked(key, value, str(path))  # the same check a later load applies
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    line = f"{key}: {json.dumps(value, ensure_ascii=False)}"  # JSON values are valid YAML
    text = _with_line(text, key, line)
    try:  # the file as written must read back as this value (not so after a block value)
        same = load_yaml(text)[key] == value
    except (yaml.YAMLError, TypeError, KeyError):
        same = False
    if not same:
        raise ConfigError(f"could not set {key} in {path}: edit the file by hand")
    write_atomic(path, text)
    return path
