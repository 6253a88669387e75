"""``/mcp:SERVER:PROMPT args`` in ``agent chat``: fetch an MCP prompt and ask it as a turn."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.mcp.config import find_server, server_configs
from agentcli.mcp.connection import run_sync
from agentcli.mcp.pool import get_connection

if TYPE_CHECKING:
    from agentcli.cli.repl import ChatRepl
    from agentcli.config import Settings

USAGE = "/mcp:SERVER:PROMPT [key=value ...] (a prompt with one argument takes the rest as is)"


def prompt_arguments(spec: dict[str, Any], raw: str) -> dict[str, str]:
    """``key=value`` words, or the whole text for a one-argument prompt; required ones checked."""
    wanted = spec.get("arguments") or []
    names = [a["name"] for a in wanted]
    words = shlex.split(raw) if raw.strip() else []
    if words and all("=" in w for w in words):
        args = dict(w.split("=", 1) for w in words)
    elif raw.strip() and len(names) == 1:
        args = {names[0]: raw.strip()}
    elif raw.strip():
        raise ConfigError(f"give the arguments as key=value ({', '.join(names) or 'none'})")
    else:
        args = {}
    unknown = sorted(set(args) - set(names))
    missing = [a["name"] for a in wanted if a.get("required") and a["name"] not in args]
    if unknown or missing:
        raise ConfigError(f"prompt {spec['name']!r} takes {', '.join(names) or 'no arguments'}"
                          + (f"; missing {', '.join(missing)}" if missing else "")
                          + (f"; unknown {', '.join(unknown)}" if unknown else ""))
    return args


def prompt_text(settings: Settings, target: str, raw: str) -> str:
    """The text of prompt ``SERVER:PROMPT`` with its arguments filled in by the server."""
    server, _, name = target.partition(":")
    if not server or not name:
        raise ConfigError(f"usage: {USAGE}")
    conn = get_connection(find_server(server_configs(settings), server))
    prompts = {p["name"]: p for p in run_sync(conn.list_prompts())}
    if name not in prompts:
        raise ConfigError(f"MCP server {server!r} has no prompt {name!r} (it has: "
                          f"{', '.join(sorted(prompts)) or 'none'})")
    messages = run_sync(conn.get_prompt(name, prompt_arguments(prompts[name], raw)))
    if all(m["role"] == "user" for m in messages):
        return "\n\n".join(m["text"] for m in messages)
    return "\n\n".join(f"{m['role']}: {m['text']}" for m in messages)


def run_prompt(repl: ChatRepl, arg: str) -> None:
    """The slash command: ``arg`` is ``SERVER:PROMPT rest``."""
    target, _, raw = arg.partition(" ")
    repl.ask(prompt_text(repl.settings, target, raw))
