"""Prompt templates as package data, one file per agent type (snapshot-tested).

A user can replace an agent type's main template (``--prompt FILE`` / ``prompt_file:``):
:func:`read_template` validates it against the variables the built-in template uses, and the
factory hands it to that one agent (``templates={name: text}``). Nothing here is process-wide:
two agents built with different templates in one process keep their own.
"""

from __future__ import annotations

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


@cache
def _builtin(name: str) -> str:
    return files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def load(name: str) -> str:
    """The built-in text of ``prompts/<name>.txt``."""
    return _builtin(name)


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
    from agentcli.files import read_small_text

    text = read_small_text(path, "prompt file", "give a text file with the template")
    check_template(agent_type, text, str(path))
    return text


def user_templates(agent_type: str, path: str | Path | None) -> dict[str, str]:
    """The ``templates`` an agent of ``agent_type`` takes for a ``--prompt`` file (or none)."""
    if path is None:
        return {}
    return {template_name(agent_type): read_template(agent_type, path)}


def template_in_force(agent_type: str, path: str | Path | None = None) -> tuple[str, str]:
    """The template ``agent_type`` uses with ``path`` (or none) and where it comes from."""
    if path is not None:
        return read_template(agent_type, path), str(path)
    name = template_name(agent_type)
    return _builtin(name), f"built-in ({name}.txt)"
