"""Saved run templates (``llm -t``): a prompt, system text, model, options and tools by name.

``agent run --save NAME ...`` writes ``<config dir>/templates/NAME.yaml``; ``agent run -T
NAME`` uses it, flags winning over its values. ``$input`` in the prompt is the question (or
piped text); a prompt without it gets the question appended. Other ``$key`` parameters come
from ``-p key value`` or the template's ``defaults``; a missing one is a usage error.
(Not to be confused with ``--prompt``, which replaces an agent type's prompt template.)
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError
from agentcli.files import read_small_text, write_atomic
from agentcli.paths import config_dir
from agentcli.records import record

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
KEYS = ("prompt", "system", "model", "options", "tools", "agent", "defaults")


def templates_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<config dir>/templates``: one YAML file a template."""
    return config_dir(env) / "templates"


def template_path(name: str, env: Mapping[str, str] | None = None) -> Path:
    """The file of template ``name`` (a checked name: no path tricks)."""
    if not _NAME.fullmatch(name) or name.endswith(".yaml"):
        raise ConfigError(f"template name {name!r} must be letters, digits, '-', '_' or '.' "
                          "(at most 64), e.g. summarize")
    return templates_dir(env) / f"{name}.yaml"


@record
class SavedTemplate:
    """One saved template; every field is optional."""

    name: str
    prompt: str | None = None
    system: str | None = None
    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    tools: str | None = None
    agent: str | None = None
    defaults: dict[str, str] = field(default_factory=dict)

    def to_yaml(self) -> str:
        """The file's text: only the fields that are set."""
        import yaml

        data = {k: getattr(self, k) for k in KEYS if getattr(self, k)}
        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                                  default_flow_style=False))

    def question(self, user_input: str, params: Mapping[str, str]) -> str:
        """The question to ask: the prompt with ``$input`` and parameters filled in."""
        if not self.prompt:
            return user_input
        text = self.prompt
        if "$input" not in text and "${input}" not in text and user_input:
            text = f"{text}\n\n{user_input}"
        return self._fill(text, {"input": user_input}, params)

    def system_text(self, params: Mapping[str, str]) -> str | None:
        """The system text with parameters filled in."""
        return self._fill(self.system, {}, params) if self.system else None

    def _fill(self, text: str, fixed: Mapping[str, str], params: Mapping[str, str]) -> str:
        values = {**self.defaults, **params, **fixed}
        try:
            return string.Template(text).substitute(values)
        except KeyError as err:
            key = err.args[0]
            raise ConfigError(f"template {self.name} needs parameter {key!r}; pass "
                              f"-p {key} VALUE") from None
        except ValueError as err:
            raise ConfigError(f"template {self.name}: {err}; write a literal $ as $$") from None


def parse_template(name: str, text: str, where: str) -> SavedTemplate:
    """A template from its YAML text; errors name the file and the key."""
    from agentcli.yaml_loader import load_mapping

    data = load_mapping(text, where, f"fix it with agent templates edit {name}")
    unknown = sorted(set(map(str, data)) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(KEYS)}")
    for key in ("prompt", "system", "model", "tools", "agent"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise ConfigError(f"{where}: {key!r} must be text")
    for key in ("options", "defaults"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise ConfigError(f"{where}: {key!r} must be a mapping")
    defaults = {str(k): str(v) for k, v in (data.get("defaults") or {}).items()}
    return SavedTemplate(name, data.get("prompt"), data.get("system"), data.get("model"),
                         dict(data.get("options") or {}), data.get("tools"), data.get("agent"),
                         defaults)


def load_template(name: str, env: Mapping[str, str] | None = None) -> SavedTemplate:
    """Template ``name``; a missing one lists those that exist."""
    path = template_path(name, env)
    if not path.is_file():
        known = ", ".join(template_names(env)) or "none saved"
        raise ConfigError(f"no template {name!r} (templates: {known}); save one with "
                          f"agent run --save {name} \"PROMPT\"")
    text = read_small_text(path, "template", f"fix it with agent templates edit {name}")
    return parse_template(name, text, str(path))


def save_template(template: SavedTemplate, env: Mapping[str, str] | None = None) -> Path:
    """Write the template's file whole (temp file, then rename)."""
    path = template_path(template.name, env)
    write_atomic(path, template.to_yaml())
    return path


def template_names(env: Mapping[str, str] | None = None) -> list[str]:
    """The saved templates' names, sorted."""
    folder = templates_dir(env)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.yaml") if _NAME.fullmatch(p.stem))
