"""``agent run --save NAME``, ``-T/--template NAME`` and ``-p KEY VALUE``: saved templates
on the command line (the files themselves: :mod:`agentcli.saved_templates`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.cli.question import piped_text, read_question
from agentcli.errors import ConfigError

if TYPE_CHECKING:  # the files are read only when a run names a template (or saves one)
    from agentcli.saved_templates import SavedTemplate


def param_values(pairs: Sequence[Any] | None) -> dict[str, str]:
    """``-p KEY VALUE`` pairs as a mapping; a key must be a ``$name`` identifier."""
    values: dict[str, str] = {}
    for key, value in pairs or ():
        if not str(key).isidentifier():
            raise ConfigError(f"-p {key!r}: a parameter name is letters, digits and _, "
                              "e.g. -p lang French for $lang")
        values[str(key)] = str(value)
    return values


def save_from_flags(name: str, question: str | None, flags: dict[str, Any],
                    params: dict[str, str], *, base: str | None = None) -> Path:
    """Save the prompt and the given flags as template ``name``; nothing is run.

    With ``base`` (``-T BASE --save NAME``) the new template starts as a copy of BASE and each
    flag given replaces that one value (options and parameters merge key by key)."""
    from agentcli.saved_templates import SavedTemplate, load_template, save_template

    if question == "-":
        raise ConfigError("--save stores the prompt as written; pass it as an argument, "
                          "not as - (stdin)")
    old = load_template(base) if base is not None else SavedTemplate(name)
    template = SavedTemplate(
        name, prompt=question or old.prompt, system=flags.get("system") or old.system,
        model=flags.get("model") or old.model,
        options={**old.options, **(flags.get("model_options") or {})},
        tools=flags.get("tools") or old.tools, agent=flags.get("agent") or old.agent,
        defaults={**old.defaults, **params})
    if not (template.prompt or template.system):
        raise ConfigError("--save needs a prompt or --system to save, e.g. agent run --save "
                          "summarize \"Summarize: $input\"")
    return save_template(template)


def with_template(name: str, flags: dict[str, Any], params: dict[str, str]
                  ) -> tuple[SavedTemplate, dict[str, Any]]:
    """The template and ``flags`` with its values filled in where no flag was given."""
    from agentcli.saved_templates import load_template

    template = load_template(name)
    filled = dict(flags)
    for key, value in (("model", template.model), ("tools", template.tools),
                       ("agent", template.agent), ("system", template.system_text(params))):
        if filled.get(key) is None and value is not None:
            filled[key] = value
    if template.options:
        filled["model_options"] = {**template.options, **(flags.get("model_options") or {})}
    return template, filled


def template_question(template: SavedTemplate, question: str | None, params: dict[str, str],
                      *, use_stdin: bool) -> str:
    """The question a template run asks: its prompt, filled with the question or piped text."""
    stream = sys.stdin if use_stdin else None
    # With a question, piped text comes first (as without a template); else it is the input.
    user_input = (read_question(question, stream) if question
                  else (piped_text(stream) or "").strip())
    text = template.question(user_input, params).strip()
    if not text:
        raise ConfigError(f"template {template.name} has no prompt and no question was given; "
                          f"pass one, e.g. agent run -T {template.name} \"QUESTION\"")
    return text
