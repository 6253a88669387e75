"""Prompt templates as package data, one file per agent type (snapshot-tested).

A user can replace an agent type's main template (``--prompt FILE`` / ``prompt_file:``):
:func:`use_template_file` validates it against the variables the built-in template uses and
registers it, and :func:`load` returns it from then on.
"""

from __future__ import annotations

import contextlib
import re
from functools import cache
from importlib.resources import files
from pathlib import Path

from agentcli.errors import ConfigError

# The template each agent type builds its prompt from (the one --prompt replaces).
TEMPLATES: dict[str, str] = {
    "zero-shot-react-description": "react",
    "chat-zero-shot-react-description": "chat_system",
    "structured-chat-zero-shot-react-description": "structured_chat_system",
    "conversational-react-description": "conversational",
    "chat-conversational-react-description": "chat_conversational_system",
    "tool-calling": "tool_calling_system",
    "self-ask-with-search": "self_ask",
}
_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_overrides: dict[str, tuple[str, str]] = {}  # template name -> (text, where it came from)


@cache
def _builtin(name: str) -> str:
    return files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def load(name: str) -> str:
    """The text of ``prompts/<name>.txt``, or the user's replacement registered for it."""
    override = _overrides.get(name)
    return override[0] if override is not None else _builtin(name)


def render(template: str, **values: str) -> str:
    """Fill ``{key}`` placeholders for the given keys only (JSON braces stay untouched)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def template_name(agent_type: str) -> str:
    """The main template of an agent type; unknown types raise a ConfigError.

    An agent class may name it itself (``template = "react"``), so a new type needs no entry
    in :data:`TEMPLATES`.
    """
    from agentcli.agents import agent_class

    name = getattr(agent_class(agent_type), "template", None) or TEMPLATES.get(agent_type)
    if name is None:
        raise ConfigError(f"agent type {agent_type!r} has no replaceable prompt; types: "
                          + ", ".join(TEMPLATES))
    return name


def variables(text: str) -> set[str]:
    """The ``{name}`` placeholders in a template (JSON such as ``{"a": 1}`` is not one)."""
    return set(_VARIABLE.findall(text))


def required_variables(agent_type: str) -> set[str]:
    """The variables an agent type's template must use: those of its built-in template."""
    return variables(_builtin(template_name(agent_type)))


def check_template(agent_type: str, text: str, where: str) -> None:
    """Raise a one-line ConfigError naming missing and unknown variables."""
    required = required_variables(agent_type)
    found = variables(text)
    missing, unknown = sorted(required - found), sorted(found - required)
    if not missing and not unknown:
        return
    parts = []
    if missing:
        parts.append("missing " + ", ".join("{" + v + "}" for v in missing))
    if unknown:
        parts.append("unknown " + ", ".join("{" + v + "}" for v in unknown))
    allowed = ", ".join("{" + v + "}" for v in sorted(required)) or "none"
    raise ConfigError(f"prompt file {where} for {agent_type}: {'; '.join(parts)} "
                      f"(this type uses exactly: {allowed})")


def read_template(agent_type: str, path: str | Path) -> str:
    """Read and validate a replacement template for ``agent_type``."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read prompt file {path}: {err.strerror or err}") from None
    check_template(agent_type, text, str(path))
    return text


def use_template_file(agent_type: str, path: str | Path | None) -> None:
    """Make ``path`` the template of ``agent_type`` for this process (None: the built-in)."""
    if path is None:
        with contextlib.suppress(ConfigError):  # a type with no replaceable template: no-op
            _overrides.pop(template_name(agent_type), None)
        return
    name = template_name(agent_type)
    _overrides[name] = (read_template(agent_type, path), str(path))


def template_in_force(agent_type: str) -> tuple[str, str]:
    """The template ``agent_type`` uses now and where it comes from (a file or built-in)."""
    name = template_name(agent_type)
    override = _overrides.get(name)
    if override is not None:
        return override
    return _builtin(name), f"built-in ({name}.txt)"
