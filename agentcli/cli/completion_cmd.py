"""``agent completion SHELL``: print the completion script for a named shell."""

from __future__ import annotations

import typer

from agentcli.errors import ConfigError


def completion(
    shell: str = typer.Argument(..., help="bash, zsh or fish."),
) -> None:
    """Print the shell completion script for SHELL (--install-completion installs it)."""
    from agentcli.cli.completion import SHELLS, completion_script

    if shell not in SHELLS:
        raise ConfigError(f"unknown shell {shell!r}; choose bash, zsh or fish")
    typer.echo(completion_script(shell))
