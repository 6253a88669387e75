"""``agent aliases set | list | remove``: short model names, kept in the user config file.

``agent run -m NAME``, ``agent chat -m NAME``, chat's ``/model NAME`` and ``agent models
default NAME`` all accept them. Aliases from a project config (``--config``,
``$AGENT_CONFIG``) are listed too; only the user config's are changed here.
"""

from __future__ import annotations

import typer

from agentcli.cli.environ import environment
from agentcli.errors import AgentCliError, ConfigError
from agentcli.textsafe import safe_line

aliases_app = typer.Typer(help="Short model names: agent aliases set fast openai/gpt-4o-mini.",
                          no_args_is_help=True, rich_markup_mode=None)


def _user_aliases() -> dict[str, str]:
    from agentcli.user_config import read_user_value

    value = read_user_value("aliases")
    return dict(value) if isinstance(value, dict) else {}


def _check_target(target: str) -> None:
    """A known provider (or a ``replay:``/``fake:`` model) before anything is saved; a URL
    is no model, and one naming an internal host is refused with the reason the fragments'
    SSRF guard gives (:func:`agentcli.tools.net.check_url`)."""
    if target.startswith(("replay:", "fake:")):
        return
    url = target[target.find("http"):] if "://" in target else ""
    if url:
        from agentcli.tools.net import check_url

        try:
            check_url(url)
        except AgentCliError as err:
            raise ConfigError(f"alias target {target!r}: {err}") from None
        raise ConfigError(f"alias target {target!r} is a URL, not a model: write "
                          "provider/model (a server's URL is a base URL: --base-url)")
    from agentcli.models.presets import CUSTOM, get_preset, parse_spec

    provider, _ = parse_spec(target)
    if provider != CUSTOM:
        get_preset(provider)


@aliases_app.command("set")
def aliases_set(
    name: str = typer.Argument(..., help="The short name, e.g. fast (no '/' or ':')."),
    model: str = typer.Argument(..., help="provider/model it stands for."),
) -> None:
    """Add or change an alias in the user config file."""
    from agentcli.user_config import set_user_value

    name, model = name.strip(), model.strip()
    if not name or "/" in name or ":" in name or any(c.isspace() for c in name):
        raise ConfigError(f"alias {name!r} must be one word without '/' or ':', e.g. fast")
    _check_target(model)
    path = set_user_value("aliases", {**_user_aliases(), name: model})
    typer.echo(f"alias {safe_line(name)} -> {safe_line(model)} (saved in {path})", err=True)


@aliases_app.command("list")
def aliases_list(
    json_out: bool = typer.Option(False, "--json", help="Print a JSON object."),
) -> None:
    """Every alias in effect: NAME<TAB>MODEL, one a line."""
    from agentcli.config import load_settings

    env = environment()
    aliases = load_settings(None, env={k: v for k, v in env.items()
                                       if k != "AGENT_MODEL"}).aliases
    if json_out:
        import json

        typer.echo(json.dumps(aliases, indent=2, sort_keys=True))
        return
    for name in sorted(aliases):
        typer.echo(f"{safe_line(name)}\t{safe_line(aliases[name])}")
    if not aliases:
        typer.echo("no aliases; add one with agent aliases set NAME PROVIDER/MODEL", err=True)


@aliases_app.command("remove")
def aliases_remove(name: str = typer.Argument(..., help="The alias to remove.")) -> None:
    """Remove an alias from the user config file."""
    from agentcli.user_config import read_user_value, set_user_value

    aliases = _user_aliases()
    if name not in aliases:
        known = ", ".join(sorted(aliases)) or "none"
        raise ConfigError(f"no alias {name!r} in the user config (its aliases: {known}); "
                          "see agent aliases list")
    if read_user_value("model") == name:
        raise ConfigError(f"alias {name!r} is the default model; change it first with "
                          "agent models default MODEL")
    del aliases[name]
    path = set_user_value("aliases", aliases)
    typer.echo(f"removed alias {safe_line(name)} (from {path})", err=True)
