"""``agent mcp list|tools|resources|read|prompts``: inspect configured MCP servers."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from agentcli.cli.environ import environment
from agentcli.cli.model_flags import CONFIG_OPT
from agentcli.cli.trust_cmd import ask_mcp_trust, set_project_trust
from agentcli.errors import ConfigError, ToolInputError

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.mcp.config import ServerConfig
    from agentcli.mcp.connection import ServerConnection

T = TypeVar("T")

mcp_app = typer.Typer(help="MCP servers: their tools, resources and prompts.",
                      no_args_is_help=True, rich_markup_mode=None)
_JSON = typer.Option(False, "--json", help="Print JSON.")


def _configs(config: Path | None) -> dict[str, ServerConfig]:
    from agentcli.config import load_settings
    from agentcli.mcp.config import server_configs

    return server_configs(load_settings(config, env=environment()))


def _server(config: Path | None, name: str) -> ServerConfig:
    from agentcli.mcp.config import find_server

    return find_server(_configs(config), name)


def _table(title: str, rows: list[dict[str, object]], keys: tuple[str, ...],
           json_out: bool) -> None:
    """Rows as JSON, or as every list command prints them (a table; tab-separated piped)."""
    if json_out:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    from agentcli.cli.consoles import console
    from agentcli.cli.tables import print_rows

    print_rows(console(), title, keys, [[_cell(r.get(k, "")) for k in keys] for r in rows],
               wrap=keys[-1:])


def _cell(value: object) -> str:
    """A table cell: yes/no for a flag, as `agent tools list` prints it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _consent(conf: ServerConfig) -> None:
    """Before starting a server of a project's ``.mcp.json``: on a terminal, ask."""
    if conf.project_file is not None:
        ask_mcp_trust(Path(conf.project_file))


def _run(coro_factory: Callable[[ServerConnection], Awaitable[T]], conf: ServerConfig) -> T:
    from agentcli.mcp.connection import run_sync
    from agentcli.mcp.pool import get_connection

    _consent(conf)
    try:
        return run_sync(coro_factory(get_connection(conf)))
    except ToolInputError as err:  # here the input came from the user: a usage error
        raise ConfigError(str(err)) from None


@mcp_app.command("list")
def mcp_list(config: Path | None = CONFIG_OPT, json_out: bool = _JSON) -> None:
    """List the configured servers (from the config and .mcp.json) without starting them."""
    from agentcli.mcp.cache import cached_tools
    from agentcli.mcp.trust import is_trusted

    rows: list[dict[str, object]] = []
    for name, conf in _configs(config).items():
        cached = cached_tools(conf)
        origin = conf.project_file or "config"
        rows.append({"name": name, "transport": conf.transport,
                     "tools": "?" if cached is None else len(cached),
                     "from": origin, "starts": "yes" if conf.project_file is None
                     or is_trusted(Path(conf.project_file)) else "no (agent trust)",
                     "target": conf.target()})
    _table("MCP servers", rows, ("name", "transport", "tools", "from", "starts", "target"),
           json_out)


@mcp_app.command("trust")
def mcp_trust(directory: Path = typer.Argument(Path("."), help="The project directory.")
              ) -> None:
    """Trust the project's .mcp.json as it is now: its servers may start (asked again if it
    changes)."""
    set_project_trust(directory, True, only_mcp=True)


@mcp_app.command("untrust")
def mcp_untrust(directory: Path = typer.Argument(Path("."), help="The project directory.")
                ) -> None:
    """Forget the trust in a project's .mcp.json: its servers no longer start."""
    set_project_trust(directory, None, only_mcp=True)


@mcp_app.command("tools")
def mcp_tools(
    server: str = typer.Argument(..., help="The server name."),
    refresh: bool = typer.Option(False, "--refresh", help="Ask the server, not the cache."),
    config: Path | None = CONFIG_OPT, json_out: bool = _JSON,
) -> None:
    """A server's tools and whether each is dangerous (cached list unless --refresh)."""
    from agentcli.tools.mcp import list_tools, tool_danger

    conf = _server(config, server)
    _consent(conf)
    rows = []
    for info in list_tools(conf, refresh=refresh):
        dangerous, reason = tool_danger(conf, info)
        rows.append({"name": f"{server}.{info.name}", "dangerous": dangerous,
                     "reason": reason, "description": info.description.split("\n")[0]})
    _table(f"Tools of {server}", rows, ("name", "dangerous", "description"), json_out)


@mcp_app.command("resources")
def mcp_resources(
    server: str = typer.Argument(..., help="The server name."),
    config: Path | None = CONFIG_OPT, json_out: bool = _JSON,
) -> None:
    """List a server's resources and resource templates (starts the server); read one with
    `agent mcp read SERVER URI` (a template's {placeholders} filled in)."""
    conf = _server(config, server)
    items = _run(lambda c: c.list_resources(), conf)
    templates = _run(lambda c: c.list_resource_templates(), conf)
    rows = [{"uri": r.get("uri", ""), "mimeType": r.get("mimeType", ""),
             "name": r.get("title") or r.get("name", "")} for r in items]
    rows += [{"uri": t.get("uriTemplate", ""), "mimeType": t.get("mimeType", ""),
              "name": f"{t.get('title') or t.get('name', '')} (template)"}
             for t in templates]
    _table(f"Resources of {server}", rows, ("uri", "mimeType", "name"), json_out)


@mcp_app.command("read")
def mcp_read(
    server: str = typer.Argument(..., help="The server name."),
    uri: str = typer.Argument(..., help="The resource URI."),
    config: Path | None = CONFIG_OPT,
) -> None:
    """Print one resource (binary contents as a short placeholder)."""
    from agentcli.mcp.text import clean

    text = _run(lambda c: c.read_resource(uri), _server(config, server))
    print(clean(text, 1_000_000))  # server text: control characters neutralized


@mcp_app.command("prompts")
def mcp_prompts(
    server: str = typer.Argument(..., help="The server name."),
    config: Path | None = CONFIG_OPT, json_out: bool = _JSON,
) -> None:
    """List a server's prompts; use one in chat as /mcp:SERVER:PROMPT key=value ..."""
    prompts = _run(lambda c: c.list_prompts(), _server(config, server))
    rows = [{"name": f"/mcp:{server}:{p['name']}",
             "arguments": " ".join(a["name"] + ("" if a.get("required") else "?")
                                   for a in p.get("arguments") or []),
             "description": (p.get("description") or "").split("\n")[0]} for p in prompts]
    _table(f"Prompts of {server}", rows, ("name", "arguments", "description"), json_out)


def ask_project_trust(settings: Settings) -> None:
    """On a terminal, ask once whether to trust an untrusted ``.mcp.json`` this run would start
    (its servers' commands shown, on stderr); the answer is kept for the file as it is, "no"
    too. Off a terminal, say nothing: its servers are refused with a one-line error naming
    ``agent trust``."""
    import sys

    from agentcli.paths import MCP_PROJECT_FILE

    path = Path.cwd() / MCP_PROJECT_FILE
    if not path.is_file() or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return
    from agentcli.mcp.config import server_configs

    wanted = {t.partition(".")[0] for t in settings.tools}
    if any(c.project_file is not None and n in wanted
           for n, c in server_configs(settings).items()):
        ask_mcp_trust(path)
