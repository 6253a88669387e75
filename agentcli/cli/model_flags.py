"""The model flags shared by ``run``, ``chat`` and ``batch``: endpoint, options, prompts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperCommand

BASE_URL_OPT: Any = typer.Option(
    None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
OPTION_HELP = ("Model option KEY VALUE, repeatable: temperature, top_p, max_tokens, seed, "
               "frequency_penalty, presence_penalty; other body fields as extra.NAME.")
PROMPT_OPT: Any = typer.Option(
    None, "--prompt", help="Template file replacing the agent type's prompt.")
SYSTEM_HELP = "Instructions added to the agent's system prompt."


class PairCommand(TyperCommand):
    """A command whose ``option`` flag takes two values (``-o KEY VALUE``), as ``llm`` does.

    Typer cannot declare a repeatable two-value option, so the parameter is adjusted after
    Typer builds it (importing click itself would load a second copy: Typer vendors its own);
    the function receives a list of ``(key, value)`` tuples.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.name in ("option", "param"):
                param.nargs = 2  # each value is converted as text: (key, value) tuples


def option_opt(*names: str) -> Any:
    """The repeatable ``KEY VALUE`` model-option flag under ``names``."""
    return typer.Option(None, *names, help=OPTION_HELP, metavar="KEY VALUE")


def system_opt(*names: str) -> Any:
    """The ``--system TEXT`` flag under ``names``."""
    return typer.Option(None, *names, help=SYSTEM_HELP)


def model_flags(base_url: str | None, option: Sequence[Any] | None,
                system: str | None, prompt: str | None) -> dict[str, Any]:
    """These flags as settings values (None: not given)."""
    from agentcli.models.options import parse_pairs

    pairs = [(str(k), str(v)) for k, v in option or ()]
    return {"base_url": base_url, "model_options": parse_pairs(pairs), "system": system,
            "prompt_file": prompt}
