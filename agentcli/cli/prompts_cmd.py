"""``agent prompts show TYPE``: the template an agent type uses, and what it must contain."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.environ import environment
from agentcli.cli.model_flags import CONFIG_OPT
from agentcli.textsafe import safe_text

prompts_app = typer.Typer(help="Inspect the agent prompt templates.", no_args_is_help=True,
                          rich_markup_mode=None)


@prompts_app.command("show")
def prompts_show(
    agent_type: str = typer.Argument(..., metavar="TYPE", help="Agent type."),
    prompt: str | None = typer.Option(None, "--prompt", help="Show this template file instead "
                                      "(validated as --prompt is)."),
    config: Path | None = CONFIG_OPT,
) -> None:
    """Print the template in force for TYPE (built-in, or --prompt / prompt_file:)."""
    from agentcli.agents import agent_class
    from agentcli.agents.prompts import braced, required_variables, template_in_force
    from agentcli.config import load_settings

    agent = agent_class(agent_type)  # unknown types fail with close matches
    settings = load_settings(config, flags={"prompt_file": prompt}, env=environment())
    configured = settings.agent is None or settings.agent == agent_type
    text, source = template_in_force(agent, settings.prompt_file if configured else None)
    needed = braced(required_variables(agent)) or "none"
    typer.echo(f"# {agent_type}: {source}; variables: {needed}", err=True)
    if settings.system:
        typer.echo(f"# --system / system: adds to the system prompt: {settings.system}",
                   err=True)
    typer.echo(safe_text(text), nl=not text.endswith("\n"))
