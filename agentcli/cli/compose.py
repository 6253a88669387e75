"""The text ``agent run`` asks: the question, a saved template, fragments and piped stdin.

Fragments are read first (``-f -`` takes stdin, which is then not read again as piped text),
then the question (with a template: its prompt filled in), then the fragments go before it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentcli.cli.question import read_question

if TYPE_CHECKING:
    from agentcli.saved_templates import SavedTemplate


def compose_question(question: str | None, *, template: SavedTemplate | None,
                     params: dict[str, str], fragments: Sequence[str],
                     tool_settings: Mapping[str, object], read_stdin: bool) -> str:
    """The run's question; every bad input is a one-line ConfigError."""
    context = []
    if fragments:
        from agentcli.cli.fragments import read_fragments

        context = read_fragments(fragments, tool_settings)
    read_stdin = read_stdin and "-" not in fragments
    if template is not None:
        from agentcli.cli.template_flags import template_question

        text = template_question(template, question, params, use_stdin=read_stdin)
    else:
        text = read_question(question or "", sys.stdin if read_stdin else None)
    if not context:
        return text
    from agentcli.cli.fragments import with_fragments

    return with_fragments(text, context)
