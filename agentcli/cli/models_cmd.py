"""``agent models list | default``: presets, the models endpoints report, keys, the default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import typer

from agentcli.cli.environ import environment
from agentcli.cli.model_flags import CONFIG_OPT
from agentcli.errors import ConfigError
from agentcli.textsafe import safe_line

models_app = typer.Typer(help="List models and set the default one.", no_args_is_help=True,
                         rich_markup_mode=None)


def _rows(data: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(model, provider, url, key, status) rows: each reported model, else one row per
    provider; the url is where a request for that model goes (and its key with it)."""
    rows = []
    for ep in data["providers"]:
        key = ep["key"] + (f" ({ep['key_source']})" if ep["key_source"] else "")
        status = ep["status"] + ("" if ep["status"] not in ("ok", "cached") else
                                 f": {len(ep['models'])} models")
        for model in ep["models"] or ["*"]:
            rows.append((safe_line(f"{ep['provider']}/{model}"), ep["provider"],
                         safe_line(ep["base_url"]), key, safe_line(status)))
    for alias, target in data["aliases"].items():
        rows.append((safe_line(alias), "alias", safe_line(target), "-", "alias"))
    return rows


@models_app.command("list")
def models_list(
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    refresh: bool = typer.Option(False, "--refresh", help="Ask the endpoints again now."),
    base_url: str | None = typer.Option(None, "--base-url", help="Also query this endpoint."),
    config: Path | None = CONFIG_OPT,
) -> None:
    """The presets and the models each configured endpoint reports; which have a key."""
    from agentcli.cli.consoles import console
    from agentcli.cli.tables import print_rows
    from agentcli.config import load_settings
    from agentcli.keys import key_variable, read_keys
    from agentcli.models.catalog import list_endpoints

    env = environment()
    settings = load_settings(config, flags={"base_url": base_url}, env=env)
    stored = set()
    for name in read_keys(env):
        try:
            stored.add(key_variable(name))
        except Exception:  # a provider no longer registered
            continue
    found = list_endpoints(env, stored=stored, base_url=settings.base_url,
                           owner=settings.base_url_owner, refresh=refresh)
    data = {"default": settings.model, "aliases": settings.aliases,
            "providers": [ep.to_dict() for ep in found]}
    out = console()
    if json_out:
        out.print_json(json.dumps(data))  # ASCII escapes: nothing to obey
        return
    default = settings.model
    if not out.is_terminal:  # piped: one model a line, with its provider and whole URL
        print_rows(out, "Models", ("model", "provider", "url", "key", "status", "default"),
                   [(*row, "yes" if row[0] == default else "") for row in _rows(data)])
        return
    # In a terminal the provider is the model's prefix and the host is enough; the model
    # name (one to copy) is never folded.
    print_rows(out, "Models", ("model", "host", "key", "status", "default"),
               [(model, urlparse(url).netloc or url, key, status,
                 "yes" if model == default else "") for model, _, url, key, status in _rows(data)],
               wrap=("host", "key", "status"))


@models_app.command("default")
def models_default(
    name: str | None = typer.Argument(None, help="provider/model or an alias; omit to show."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Also save this endpoint (needed for custom/MODEL)."),
) -> None:
    """Show the default model, or set it in the user config file."""
    from agentcli.config import load_settings, resolve_alias
    from agentcli.user_config import read_user_value, set_user_value

    env = environment()
    if name is None:
        current = read_user_value("model", env)
        typer.echo(safe_line(str(current)) if current else "(none)")
        if env.get("AGENT_MODEL"):
            typer.echo(f"note: AGENT_MODEL={safe_line(env['AGENT_MODEL'])} overrides it "
                       "in this environment", err=True)
        return
    settings = load_settings(None, env={k: v for k, v in env.items() if k != "AGENT_MODEL"})
    target = resolve_alias(name, settings.aliases)
    if ":" not in target:
        from agentcli.models.presets import CUSTOM, get_preset, parse_spec

        provider, _ = parse_spec(target)
        if provider != CUSTOM:
            get_preset(provider)
        elif not (base_url or settings.base_url):
            raise ConfigError(
                f"{target} needs a base URL for the custom provider and none is configured; "
                f"run agent models default {name.strip()} --base-url "
                "http://127.0.0.1:8000/v1 (your endpoint), or set AGENT_BASE_URL")
    if base_url is not None:
        if not base_url.strip().startswith(("http://", "https://")):
            raise ConfigError(f"--base-url {base_url!r} must start with http:// or https://")
        set_user_value("base_url", base_url.strip(), env)
    path = set_user_value("model", name.strip(), env)
    shown = name if target == name else f"{name} ({target})"
    typer.echo(f"default model: {safe_line(shown)} (saved in {path})", err=True)
