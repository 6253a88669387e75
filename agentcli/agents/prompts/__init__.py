"""Prompt templates as package data, one file per agent type (snapshot-tested).

A user can replace an agent type's main template (``--prompt FILE`` / ``prompt_file:``):
:func:`template_in_force` reads and validates it against the variables the built-in template
uses, and the factory hands it to that one agent (``templates={name: text}``). Nothing here is
process-wide: two agents built with different templates in one process keep their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import ConfigError
from agentcli.files import read_small_text

if TYPE_CHECKING:
    from agentcli.agents.base import Agent

_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Where a prompt shows the format with words in place of content: a label's value
# (``Final Answer: your answer to the user``), an action blob's value, an angle-bracket slot.
_LABELLED = re.compile(r"^[A-Z][A-Za-z ]{0,40}:[ \t]*([^{}\n]+?)[ \t]*$", re.MULTILINE)
_BLOB_VALUE = re.compile(r'"action(?:_input)?"\s*:\s*"([^"{}\n]+)"')
_SLOT = re.compile(r"<([^<>{}\n]+)>")


@cache
def load(name: str) -> str:
    """The built-in text of ``prompts/<name>.txt``."""
    return files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def placeholders(*texts: str) -> frozenset[str]:
    """The placeholder phrases (what a model copies instead of answering) of every built-in
    prompt and of ``texts`` (an agent's own templates), as
    :func:`agentcli.answers.placeholder_key` compares them."""
    return _builtin_placeholders().union(*map(_placeholders_in, texts))


@cache
def _builtin_placeholders() -> frozenset[str]:
    from agentcli.answers import placeholder_key

    # placeholders.txt: what models write in place of an answer that no prompt of ours shows
    # (LangChain's ReAct prompt, "your final answer here"), one a line
    listed = {placeholder_key(line) for line in load("placeholders").splitlines()}
    return frozenset(listed - {""}).union(*(
        _placeholders_in(p.read_text(encoding="utf-8")) for p in files(__name__).iterdir()
        if p.name.endswith(".txt") and p.name != "placeholders.txt"))


@cache
def _placeholders_in(text: str) -> frozenset[str]:
    from agentcli.answers import placeholder_key

    found = {placeholder_key(m) for pattern in (_LABELLED, _BLOB_VALUE, _SLOT)
             for m in pattern.findall(text)}
    # words only: a lone word ("Yes.") is an answer, an example's numbers are its content
    return frozenset(k for k in found if " " in k and not any(c.isdigit() for c in k))


def render(template: str, **values: str) -> str:
    """Fill ``{key}`` placeholders for the given keys only (JSON braces stay untouched)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def template_name(agent: type[Agent]) -> str:
    """The main template of an agent class (``main_template``); a ConfigError if it has none."""
    if agent.main_template is None:
        raise ConfigError(f"agent type {agent.agent_type!r} has no replaceable prompt")
    return agent.main_template


def builtin_text(agent: type[Agent], name: str) -> str:
    """Template ``name`` as the class ships it: its own text (``prompts``) or package data."""
    return agent.prompts.get(name) or load(name)


def variables(text: str) -> set[str]:
    """The ``{name}`` placeholders in a template (JSON such as ``{"a": 1}`` is not one)."""
    return set(_VARIABLE.findall(text))


def required_variables(agent: type[Agent]) -> set[str]:
    """The variables an agent type's template must use: those of its built-in template."""
    return variables(builtin_text(agent, template_name(agent)))


def check_template(agent: type[Agent], text: str, where: str) -> None:
    """Raise a one-line ConfigError naming missing and unknown variables."""
    required = required_variables(agent)
    found = variables(text)
    missing, unknown = sorted(required - found), sorted(found - required)
    if not missing and not unknown:
        return
    parts = [f"{word} {braced(names)}" for word, names in (("missing", missing),
                                                          ("unknown", unknown)) if names]
    raise ConfigError(f"prompt file {where} for {agent.agent_type}: {'; '.join(parts)} "
                      f"(this type uses exactly: {braced(required) or 'none'})")


def braced(names: Iterable[str]) -> str:
    """Variable names as a template writes them: ``{a}, {b}`` (sorted)."""
    return ", ".join("{" + v + "}" for v in sorted(names))


def user_templates(agent: type[Agent], path: str | Path | None) -> dict[str, str]:
    """The ``templates`` an agent type takes for a ``--prompt`` file (or none)."""
    if path is None:
        return {}
    return {template_name(agent): template_in_force(agent, path)[0]}


def template_in_force(agent: type[Agent], path: str | Path | None = None) -> tuple[str, str]:
    """The template an agent type uses with ``path`` (read and checked; or none) and where it
    comes from."""
    name = template_name(agent)
    if path is not None:
        text = read_small_text(path, "prompt file", "give a text file with the template")
        check_template(agent, text, str(path))
        return text, str(path)
    if name in agent.prompts:
        return agent.prompts[name], f"built-in ({agent.__name__}.prompts[{name!r}])"
    return load(name), f"built-in ({name}.txt)"
