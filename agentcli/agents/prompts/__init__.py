"""Prompt templates as package data, one file per agent type (snapshot-tested)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def load(name: str) -> str:
    """The text of ``prompts/<name>.txt``."""
    return files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def render(template: str, **values: str) -> str:
    """Fill ``{key}`` placeholders for the given keys only (JSON braces stay untouched)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template
