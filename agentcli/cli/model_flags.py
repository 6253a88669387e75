"""The flags several commands share, each defined once (one help text, one set of names);
a Typer option object can be the default of many commands' parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperCommand

CONFIG_OPT = typer.Option(None, "--config", "-c", help="YAML config file.")
MODEL_OPT = typer.Option(None, "--model", "-m", help="provider/model, replay:FILE")
AGENT_OPT = typer.Option(None, "--agent", "-a", help="Agent type.")
TOOLS_OPT = typer.Option(None, "--tools", "-t", help="Comma-separated tool names.")
PROFILE_OPT = typer.Option(None, "--profile", help="Profile from the config.")
MAX_ITERATIONS_OPT = typer.Option(None, "--max-iterations", help="Step limit.")
YES_OPT = typer.Option(False, "--yes", "-y", help="Run dangerous calls without asking.")
DANGEROUS_OPT = typer.Option(None, "--allow-dangerous-tools",
                             help="Allow every dangerous tool to load.")
ALLOW_OPT = typer.Option(None, "--allow",
                         help="Dangerous tools (or MCP servers) to allow, by name.")
MODULE_OPT = typer.Option(None, "--tools-module",
                          help="Python file(s) with @tool functions, comma-separated.")
DB_OPT = typer.Option(None, "--db", help="SQLite file for sessions and logs (default: "
                      "$AGENT_DB or the user data dir).")
CACHE_OPT = typer.Option(None, "--cache/--no-cache", help="Cache model replies.")
STATS_OPT = typer.Option(False, "--stats", help="Print calls, tokens, latency, cost.")
TRACE_OPT = typer.Option(None, "--trace", help="Append a JSONL event trace here.")
OTEL_OPT = typer.Option(None, "--otel/--no-otel",
                        help="Export OpenTelemetry traces (OTLP/HTTP, OTEL_* vars).")
BASE_URL_OPT = typer.Option(None, "--base-url",
                            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
OPTION_HELP = ("Model option KEY VALUE, repeatable: temperature, top_p, max_tokens, seed, "
               "frequency_penalty, presence_penalty; other body fields as extra.NAME.")
PROMPT_OPT = typer.Option(None, "--prompt", help="Template file replacing the agent type's prompt.")
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
                system: str | None, prompt: str | None) -> dict[str, object]:
    """These flags as settings values (None: not given)."""
    from agentcli.models.options import parse_pairs

    pairs = [(str(k), str(v)) for k, v in option or ()]
    return {"base_url": base_url, "model_options": parse_pairs(pairs), "system": system,
            "prompt_file": prompt}
