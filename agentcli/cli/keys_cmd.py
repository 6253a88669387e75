"""``agent keys set | get | list | path``: API keys stored in a private file in the config dir."""

from __future__ import annotations

import sys

import typer

from agentcli.errors import ConfigError
from agentcli.textsafe import safe_line

keys_app = typer.Typer(help="Store API keys (a 0600 file in the config dir).",
                       no_args_is_help=True, rich_markup_mode=None)


@keys_app.command("set")
def keys_set(
    name: str = typer.Argument(..., help="A provider (openai, dashscope, ...) or a variable "
                               "name such as SERPAPI_API_KEY."),
) -> None:
    """Store a key, read from a hidden prompt or from stdin; never printed."""
    from agentcli.keys import canonical_name, key_variable, save_key

    canonical = canonical_name(name)  # a bad name fails before the key is asked for
    if sys.stdin is not None and sys.stdin.isatty():  # a hidden prompt, else one stdin line
        import getpass

        secret = getpass.getpass(f"Enter key for {canonical}: ")
    else:
        secret = sys.stdin.readline() if sys.stdin is not None else ""
    path = save_key(canonical, secret)
    typer.echo(f"stored key {canonical} ({key_variable(canonical)}) in {path}", err=True)


@keys_app.command("get")
def keys_get(
    name: str = typer.Argument(..., help="The stored name (openai, SERPAPI_API_KEY, ...)."),
) -> None:
    """Print a stored key for a script, e.g. export OPENAI_API_KEY=$(agent keys get openai).

    Only to a pipe or a file: in a terminal it is refused, so a key is not left on screen."""
    import os

    from agentcli.keys import stored_key

    value = stored_key(name, dict(os.environ))
    if sys.stdout.isatty():
        raise ConfigError(f"not printing key {name} to a terminal; use it in a pipe or a "
                          f"command substitution, e.g. export VAR=$(agent keys get {name})")
    sys.stdout.write(value + "\n")  # the key itself: the one output never redacted


@keys_app.command("list")
def keys_list() -> None:
    """The names of the stored keys (never the keys)."""
    import os

    from agentcli.keys import read_keys

    for name in sorted(read_keys(dict(os.environ))):
        typer.echo(safe_line(name))


@keys_app.command("path")
def keys_path() -> None:
    """Where the keys file is (it may not exist yet)."""
    from agentcli.paths import keys_file

    typer.echo(str(keys_file()))
