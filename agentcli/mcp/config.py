"""MCP server settings: ``mcp_servers:`` (ours), ``mcpServers`` (other clients), ``.mcp.json``.

Parsing is pure: no server starts and no network. Header and environment values may refer to
variables as ``${NAME}`` or ``${NAME:-default}``; they are expanded only when connecting, so
secrets never enter the tool-list cache or its hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Literal

from agentcli.errors import ConfigError
from agentcli.paths import MCP_PROJECT_FILE
from agentcli.project_files import read_project_file
from agentcli.records import record

Transport = Literal["stdio", "http", "sse"]
INSTALL_HINT = "pip install 'agentcli[mcp]'"
_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio", "http": "http", "streamable-http": "http", "streamable_http": "http",
    "streamableHttp": "http", "sse": "sse",
}
_KEYS = {"command", "args", "env", "cwd", "url", "type", "transport", "headers", "timeout",
         "startup_timeout", "call_timeout", "dangerous", "tools", "resources", "trusted",
         "reconnect_attempts", "reconnect_delay", "roots"}
RECONNECT_ATTEMPTS = 5  # tries to reach an http/sse server that went away (Claude Code's 5)
RECONNECT_DELAY = 0.25  # seconds between the first two tries; doubles after each
MAX_RECONNECT_ATTEMPTS = 20
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


@record
class ServerConfig:
    """One MCP server: how to reach it, its timeouts and its danger overrides."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # values unexpanded (may hold ${VAR})
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # values unexpanded
    startup_timeout: float = 30.0
    call_timeout: float = 60.0
    dangerous: bool | None = None  # None: decide per tool from its annotations
    tool_danger: tuple[tuple[str, bool], ...] = ()  # per-tool override, wins over all
    resources: bool = False  # put SERVER.read_resource in the server's group
    trusted: bool = False  # annotations (readOnlyHint) may ungate tools only when trusted
    project_file: str | None = None  # the .mcp.json it came from: starts only once trusted
    reconnect_attempts: int = RECONNECT_ATTEMPTS  # http/sse; a stdio server restarts once
    reconnect_delay: float = RECONNECT_DELAY  # seconds before the 2nd attempt, doubling
    roots: tuple[str, ...] = ()  # directories declared as the client's roots: only these

    def root_paths(self) -> tuple[Path, ...]:
        """The configured roots as absolute directories (``~`` expanded, a relative one from
        the current directory); none configured, none declared."""
        return tuple(Path(r).expanduser().absolute() for r in self.roots)

    def digest(self) -> str:
        """A stable hash of everything that could change the server's tool list."""
        raw = json.dumps(asdict(self), sort_keys=True, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def reconnect_budget(self) -> float:
        """The longest a reconnect can take: every attempt's start-up and the waits between."""
        attempts = 1 if self.transport == "stdio" else self.reconnect_attempts
        waits = self.reconnect_delay * float(2 ** (attempts - 1) - 1)
        return attempts * self.startup_timeout + waits

    def target(self) -> str:
        """The command line or URL, for listings and error messages."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args])
        return self.url or ""


def expand_vars(value: str, where: str, env: Mapping[str, str] | None = None) -> str:
    """Replace ``${NAME}`` / ``${NAME:-default}``; an unset name without default is an error."""
    env = os.environ if env is None else env

    def sub(m: re.Match[str]) -> str:
        if m.group(1) in env:
            return env[m.group(1)]
        if m.group(2) is not None:
            return m.group(2)
        raise ConfigError(f"{where} uses ${{{m.group(1)}}}, which is not set; export it or "
                          f"write ${{{m.group(1)}:-default}}")

    return _VAR.sub(sub, value)


def _str_map(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
            for k, v in value.items()):
        raise ValueError(f"{what} must be a mapping of name: string")
    return tuple((k, str(v)) for k, v in value.items())


def _seconds(value: object, what: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise ValueError(f"{what} must be a number of seconds > 0")
    return float(value)


def _attempts(value: object) -> int:
    if value is None:
        return RECONNECT_ATTEMPTS
    if isinstance(value, bool) or not isinstance(value, int) or not (
            1 <= value <= MAX_RECONNECT_ATTEMPTS):
        raise ValueError(f"reconnect_attempts must be a whole number from 1 to "
                         f"{MAX_RECONNECT_ATTEMPTS}")
    return value


def _tool_danger(value: object) -> tuple[tuple[str, bool], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and v in ("dangerous", "safe") for k, v in value.items()):
        raise ValueError("tools must be a mapping of tool: dangerous|safe")
    return tuple((k, v == "dangerous") for k, v in value.items())


def _transport(conf: Mapping[str, object]) -> Transport:
    kind = conf.get("type", conf.get("transport"))
    if kind is not None:
        if kind not in _TRANSPORTS:
            raise ValueError(f"type must be one of stdio, http, sse (got {kind!r})")
        return _TRANSPORTS[kind]
    if "command" in conf:
        return "stdio"
    if "url" in conf:
        return "sse" if str(conf["url"]).rstrip("/").endswith("/sse") else "http"
    raise ValueError("needs a 'command' (stdio) or a 'url' (http, sse)")


def parse_server(name: object, conf: object) -> ServerConfig:
    """Validate one server entry; ValueError says what is wrong (the caller adds where)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"server name {name!r} must be 1-40 letters, digits, _ or -")
    if not isinstance(conf, Mapping):
        raise ValueError(f"server {name!r} needs a mapping with a 'command' (stdio) or a 'url'")
    try:
        unknown = sorted(set(conf) - _KEYS)
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown}; allowed: {sorted(_KEYS)}")
        transport = _transport(conf)
        command, url = conf.get("command"), conf.get("url")
        if transport == "stdio":
            if not isinstance(command, str) or not command.strip():
                raise ValueError("needs a 'command' string (stdio)")
        elif not isinstance(url, str) or not re.fullmatch(r"https?://[^/\s]+(/\S*)?", url):
            raise ValueError(f"needs a 'url' like http://127.0.0.1:3001/mcp (got {url!r})")
        args = conf.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a list of strings")
        if conf.get("cwd") is not None and not isinstance(conf["cwd"], str):
            raise ValueError("cwd must be a string")
        if conf.get("dangerous") is not None and not isinstance(conf["dangerous"], bool):
            raise ValueError("dangerous must be true or false")
        if not isinstance(conf.get("trusted", False), bool):
            raise ValueError("trusted must be true or false")
        roots = conf.get("roots") or []
        if not isinstance(roots, list) or not all(isinstance(r, str) and r for r in roots):
            raise ValueError("roots must be a list of directories (strings)")
        legacy = _seconds(conf.get("timeout"), "timeout", 0) or None
        return ServerConfig(
            name, transport, command if transport == "stdio" else None, tuple(args),
            _str_map(conf.get("env"), "env"), conf.get("cwd"),
            url if transport != "stdio" else None, _str_map(conf.get("headers"), "headers"),
            _seconds(conf.get("startup_timeout"), "startup_timeout", legacy or 30.0),
            _seconds(conf.get("call_timeout"), "call_timeout", legacy or 60.0),
            conf.get("dangerous"), _tool_danger(conf.get("tools")),
            bool(conf.get("resources", False)), bool(conf.get("trusted", False)),
            reconnect_attempts=_attempts(conf.get("reconnect_attempts")),
            reconnect_delay=_seconds(conf.get("reconnect_delay"), "reconnect_delay",
                                     RECONNECT_DELAY),
            roots=tuple(roots),
        )
    except ValueError as err:
        raise ValueError(f"server {name!r}: {err}") from None


def check_servers(value: object) -> dict[str, dict[str, object]]:
    """The ``mcp_servers`` config check: validate every entry, keep the raw mappings."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("a mapping of server name: {command, args, env} or {url, headers}")
    for name, conf in value.items():
        parse_server(name, conf)
    return {str(k): dict(v) for k, v in value.items()}


def merge_config_keys(data: dict[str, object], where: str) -> dict[str, object]:
    """Accept ``mcpServers`` (the format other MCP clients use) as ``mcp_servers``."""
    if "mcpServers" not in data:
        return data
    data = dict(data)
    theirs, ours = data.pop("mcpServers"), data.get("mcp_servers") or {}
    if not isinstance(theirs, Mapping) or not isinstance(ours, Mapping):
        return {**data, "mcp_servers": theirs}  # the field check reports the bad type
    twice = sorted(set(theirs) & set(ours))
    if twice:
        raise ConfigError(f"{where}: MCP server(s) {twice} appear in both mcp_servers and "
                          "mcpServers; keep one")
    return {**data, "mcp_servers": {**ours, **theirs}}


def project_servers(directory: Path | None = None) -> dict[str, object]:
    """The ``mcpServers`` of ``.mcp.json`` in ``directory`` (default: the current one); a
    symlinked, foreign, oversized or non-regular file is refused (agentcli/project_trust.py)."""
    path = (directory or Path.cwd()) / MCP_PROJECT_FILE
    if not os.path.lexists(path):
        return {}
    data = read_project_file(path)
    try:
        parsed = json.loads(data.decode("utf-8"))
    except ValueError as err:
        raise ConfigError(f"{path}: not valid JSON ({err}); fix or remove it") from None
    servers = parsed.get("mcpServers") if isinstance(parsed, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: expected {{\"mcpServers\": {{name: {{...}}}}}}")
    return servers


def server_configs(settings_or_mapping: object) -> dict[str, ServerConfig]:
    """Parsed server configs from settings (plus ``.mcp.json``; the YAML wins) or a mapping."""
    project: dict[str, object] = {}
    if isinstance(settings_or_mapping, Mapping):
        raw, where = dict(settings_or_mapping), "mcp_servers"
    else:
        ours = getattr(settings_or_mapping, "mcp_servers", None) or {}
        project = {k: v for k, v in project_servers().items() if k not in ours}
        raw, where = {**project, **ours}, "mcp_servers (config or .mcp.json)"
    out = {}
    for name, conf in raw.items():
        try:
            parsed = parse_server(name, conf)
        except ValueError as err:
            raise ConfigError(f"{where}: {err}") from None
        if name in project:  # the project's file cannot vouch for itself, mark tools safe
            # nor widen a server's reach with roots
            parsed = replace(parsed, trusted=False, dangerous=None, tool_danger=(), roots=(),
                             project_file=str(Path.cwd() / MCP_PROJECT_FILE))
        out[str(name)] = parsed
    return out


def find_server(configs: Mapping[str, ServerConfig], name: str) -> ServerConfig:
    """The named server, or a ConfigError listing the configured ones."""
    if name not in configs:
        known = ", ".join(sorted(configs)) or "none configured (mcp_servers: in the config)"
        raise ConfigError(f"unknown MCP server {name!r}; configured: {known}")
    return configs[name]
