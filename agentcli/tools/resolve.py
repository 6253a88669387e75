"""One way from tool names to tools, for every command and the Python API.

Sources, all looked up by name: built-ins (:mod:`registry`), specs a caller hands in,
entry-point plugins, ``--tools-module`` files, YAML tools, and MCP servers: each catalog
reads its own, so nothing one command or caller adds is seen by another. MCP servers are
resolved lazily: ``ev.echo`` starts only server ``ev`` and ``ev`` (a server name) loads all
its tools; naming other tools starts no server. A tool answers to its registry name and its
display name (``llm-math`` and ``Calculator``). Bad names fail here, in one line.
"""

from __future__ import annotations

import contextvars
import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import ServerStartError, ToolLoadError
from agentcli.paths import MCP_PROJECT_FILE
from agentcli.records import record
from agentcli.tools.base import Tool
from agentcli.tools.custom import load_plugins, module_specs
from agentcli.tools.naming import check_wire_names
from agentcli.tools.registry import ToolSpec, build_spec, check_settings, registry, renamed_error

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.mcp.config import ServerConfig
    from agentcli.models.base import BaseChatModel
    from agentcli.tools.base import Callbacks


@record(frozen=False)
class Catalog:
    """Every tool name one command can use, without starting anything."""

    specs: dict[str, ToolSpec] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # display name -> registry name
    servers: dict[str, ServerConfig] = field(default_factory=dict)  # MCP server name -> config
    module_tools: list[str] = field(default_factory=list)  # loaded without being named
    warnings: list[str] = field(default_factory=list)  # a broken plugin: said, not fatal

    def spec(self, name: str) -> ToolSpec | None:
        """The spec for a registry name or a display name."""
        return self.specs.get(name) or self.specs.get(self.aliases.get(name, ""))

    def server_tool(self, name: str) -> tuple[str, str | None] | None:
        """``(server, tool)`` for ``server.tool``, ``(server, None)`` for a server name."""
        if name in self.servers:
            return name, None
        server, dot, tool = name.partition(".")
        return (server, tool) if dot and tool and server in self.servers else None

    def cached_names(self) -> list[str]:
        """``server.tool`` for every tool in the servers' cached lists."""
        if not self.servers:
            return []
        from agentcli.tools.mcp import cached_tools

        return [f"{s}.{i.name}" for s, conf in self.servers.items()
                for i in cached_tools(conf) or []]

    def unknown(self, name: str) -> ToolLoadError:
        """The error for a name no source knows, with close matches."""
        renamed_error(name)
        # Case-insensitive; a display name suggests the name to type (calculater: llm-math).
        pool = {n.lower(): n for n in [*self.specs, *self.servers, *self.cached_names()]}
        pool.update({a.lower(): n for a, n in self.aliases.items() if a.lower() not in pool})
        close = difflib.get_close_matches(name.lower(), list(pool), n=3, cutoff=0.5)
        names = list(dict.fromkeys(pool[c] for c in close))
        hint = f"; did you mean {', '.join(names)}?" if names else ""
        server, dot, _ = name.partition(".")
        if dot and server not in self.specs:
            known = ", ".join(sorted(self.servers)) or "none"
            return ToolLoadError(f"unknown tool {name!r}: no MCP server {server!r} is "
                                 f"configured (configured: {known}){hint}")
        return ToolLoadError(f"unknown tool {name!r}{hint} (see `agent tools list` for every "
                             "tool)")


def _where(spec: ToolSpec) -> str:
    return {"YAML": "a YAML tool", "module": "a --tools-module tool",
            "plugin": "a plugin tool", "MCP": "an MCP tool"}.get(spec.source, "a built-in tool")


def build_catalog(settings: object = None, specs: Iterable[ToolSpec] = ()) -> Catalog:
    """Collect every source's names: built-ins, plugins, ``specs`` (a caller's own), YAML
    tools, modules, MCP servers."""
    plugins = load_plugins()  # read for this catalog: plugins register nowhere else
    if plugins.clashes:
        raise ToolLoadError(plugins.clashes[0])
    cat = Catalog(specs={**registry(), **{s.name: s for s in plugins.specs}},
                  warnings=list(plugins.warnings))

    def add(spec: ToolSpec) -> None:
        old = cat.specs.get(spec.name)
        if old is not None and old.source != spec.source:
            raise ToolLoadError(f"tool name {spec.name!r} is defined twice, as {_where(old)} "
                                f"and as {_where(spec)}; rename one of them")
        cat.specs[spec.name] = spec

    for spec in specs:  # a caller's own: may stand in for a built-in of the same name
        cat.specs[spec.name] = spec
    definitions = list(getattr(settings, "yaml_tools", None) or [])
    if definitions:  # the YAML tool builders load only for a config that defines some
        from agentcli.tools.yaml_tools import yaml_specs

        for spec in yaml_specs(definitions):
            add(spec)
    for path in getattr(settings, "tools_module", None) or []:
        for spec in module_specs(path):
            add(spec)
            cat.module_tools.append(spec.name)
    cat.servers = _servers(settings)
    for server in cat.servers:
        if server in cat.specs:
            raise ToolLoadError(f"MCP server name {server!r} is also the name of "
                                f"{_where(cat.specs[server])}; rename the server")
    cat.aliases = {a: n for n, s in cat.specs.items() for a in s.also_known_as
                   if a not in cat.specs}
    return cat


def _servers(settings: object) -> dict[str, ServerConfig]:
    """The configured MCP servers by name: parsed and checked, nothing started."""
    if settings is None or not (isinstance(settings, Mapping)
                                or getattr(settings, "mcp_servers", None)
                                or (Path.cwd() / MCP_PROJECT_FILE).is_file()):
        return {}  # none configured: the MCP modules are not even imported
    from agentcli.mcp.config import server_configs

    return server_configs(settings)


def check_names(names: Iterable[str], settings: object = None) -> None:
    """Fail fast on names no source knows, without building tools or starting servers."""
    cat = build_catalog(settings)
    for raw in names:
        name = raw.strip()
        if name and cat.spec(name) is None and cat.server_tool(name) is None:
            raise cat.unknown(name)


@record
class _Want:
    """One tool name asked for: a built-in or plugin tool, a group, or MCP tools."""

    name: str
    group: str | None = None
    server: str | None = None  # an MCP tool: which server
    tool: str | None = None  # ... and which of its tools (None: all)


def _plan(names: Sequence[str], cat: Catalog) -> tuple[list[_Want], dict[str, set[str] | None]]:
    wants: list[_Want] = []
    servers: dict[str, set[str] | None] = {}  # None: every tool of the server
    for name in names:
        spec = cat.spec(name)
        if spec is not None:
            group = spec.name if spec.members else None
            wants += [_Want(m, group) for m in spec.members or (spec.name,)]
            continue
        found = cat.server_tool(name)
        if found is None:
            raise cat.unknown(name)
        server, tool = found
        wants.append(_Want(name, None, server, tool))
        if tool is None:
            servers[server] = None
        elif server not in servers or servers[server] is not None:
            servers.setdefault(server, set()).add(tool)  # type: ignore[union-attr]
    return wants, servers


def _start(
    servers: dict[str, set[str] | None], cat: Catalog
) -> dict[str, list[Tool] | ServerStartError]:
    """Each named server's tools, or why it did not start (the others are not held up)."""
    if not servers:
        return {}
    from agentcli.tools.mcp import load_server_tools

    def one(server: str, only: set[str] | None) -> list[Tool] | ServerStartError:
        try:
            return load_server_tools(server, cat.servers[server], only)
        except ServerStartError as err:
            return err

    if len(servers) <= 1:
        return {s: one(s, only) for s, only in servers.items()}
    with ThreadPoolExecutor(max_workers=len(servers)) as pool:  # start them side by side
        # each in a copy of this context: the run's time limit bounds every start-up
        futures = {s: pool.submit(contextvars.copy_context().run, one, s, only)
                   for s, only in servers.items()}
        return {s: f.result() for s, f in futures.items()}


def _refusal(label: str | None, server: str, why: str) -> str:
    """The gate's refusal of MCP tool ``label`` (None: of the server's tools)."""
    why = why or "it can change your system"
    if label is None:
        return (f"the tools of MCP server {server!r} are dangerous: {why}. Opt in with --allow "
                f"{server} or --allow-dangerous-tools")
    return (f"tool {label!r} (from MCP server {server!r}) is dangerous: {why}. Opt in with "
            f"--allow {label}, --allow {server} (every dangerous tool of that server) or "
            "--allow-dangerous-tools")


def _refused_unstarted(wants: list[_Want], cat: Catalog,
                       permitted: Callable[[_Want], bool]) -> dict[str, str]:
    """The MCP tools wanted (by name) that the gate refuses before their server starts: known
    dangerous (:func:`~agentcli.tools.mcp.known_danger`) and not allowed."""
    refused: dict[str, str] = {}
    for want in wants:
        if want.server is None or permitted(want):
            continue
        from agentcli.tools.mcp import known_danger  # (only where an MCP tool is wanted)

        why = known_danger(cat.servers[want.server], want.tool)
        if why is not None:
            label = f"{want.server}.{want.tool}" if want.tool else None
            refused[want.name] = _refusal(label, want.server, why)
    return refused


def _server_tools(want: _Want, tools: list[Tool]) -> list[Tool]:
    """The tool ``want`` names among its server's (all of them, when the server is named too:
    ``-t ev,ev.nope`` gets here with every tool of ``ev``)."""
    if want.tool is None:
        return tools
    chosen = [t for t in tools if t.name == want.name]
    if not chosen:
        close = difflib.get_close_matches(want.name, [t.name for t in tools], n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ToolLoadError(f"MCP server {want.server!r} has no tool {want.tool!r}{hint} "
                            f"(see `agent tools list --refresh`)")
    return chosen


def resolve_tools(
    names: Sequence[str],
    settings: object = None,
    *,
    llm: BaseChatModel | None = None,
    allow_dangerous_tools: bool | None = None,
    allow: Iterable[str] | None = None,
    tool_settings: Mapping[str, object] | None = None,
    extras: Mapping[str, object] | None = None,
    with_module_tools: bool = True,
    held: list[str] | None = None,
    warnings: list[str] | None = None,
    specs: Iterable[ToolSpec] = (),
) -> list[Tool]:
    """Build the tools named (plus ``--tools-module`` tools) from every source.

    ``settings`` (a Settings object, or None for registry tools only) supplies the sources,
    ``allow``/``allow_dangerous_tools`` and ``tool_settings`` unless they are given here.
    Dangerous tools need ``allow_dangerous_tools`` or their name, group or MCP server in
    ``allow``. Only the MCP servers whose tools are named are started. With ``held`` (a
    running agent's refresh), a dangerous MCP tool not allowed is left out and the reason
    appended there, instead of failing the whole list. ``warnings`` receives one line per
    broken plugin and per MCP server that did not start (loading goes on without them).
    ``specs`` are tools of the caller's own, looked up by name like the built-ins.
    """
    cat = build_catalog(settings, specs)
    allow_all = bool(getattr(settings, "allow_dangerous_tools", False)
                     if allow_dangerous_tools is None else allow_dangerous_tools)
    allowed = set(getattr(settings, "allow", None) or () if allow is None else allow)
    options = {**(getattr(settings, "tool_settings", None) or {}
                  if tool_settings is None else tool_settings), **(extras or {})}
    wanted = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    if with_module_tools:
        wanted += [n for n in cat.module_tools if n not in wanted]
    wants, servers = _plan(wanted, cat)
    # the gate first: a tool refused for what the config or the cache already tells starts
    # no server (a refusal otherwise waited for a whole start-up)
    refused = _refused_unstarted(wants, cat, lambda w: allow_all or w.server in allowed or (
        f"{w.server}.{w.tool}" in allowed if w.tool is not None  # a whole server: any of its
        else any(a.startswith(f"{w.server}.") for a in allowed)))  # tools allowed may be all
    if refused and held is None:
        raise ToolLoadError(next(iter(refused.values())))
    if held is not None:
        held += refused.values()
    wants = [w for w in wants if w.name not in refused]
    servers = {s: only for s, only in servers.items() if any(w.server == s for w in wants)}
    started = _start(servers, cat)
    tools: list[Tool] = []
    origin: dict[str, str] = {}  # tool name -> where it came from, to catch duplicates
    failed: dict[str, ServerStartError] = {}  # MCP servers that did not start

    def keep(t: Tool, where: str) -> None:
        if t.name in origin:
            if origin[t.name] != where:
                raise ToolLoadError(f"two tools are named {t.name!r}: {origin[t.name]} and "
                                    f"{where}; rename one or leave one out of --tools")
            return
        origin[t.name] = where
        tools.append(t)

    for want in wants:
        if want.server is None:
            spec = cat.specs[want.name]
            permitted = allow_all or bool(allowed & {want.name, *spec.also_known_as}) or (
                want.group is not None and want.group in allowed)
            for t in build_spec(spec, llm=llm, permitted=permitted, group=want.group,
                                settings=options):
                keep(t, _where(spec))
            continue
        result = started[want.server]
        if isinstance(result, ServerStartError):
            failed.setdefault(want.server, result)
            continue
        for t in _server_tools(want, result):
            if t.dangerous and not (allow_all or t.name in allowed or want.server in allowed):
                refusal = _refusal(t.name, want.server, t.danger_reason)
                if held is None:
                    raise ToolLoadError(refusal)
                held.append(refusal)
                continue
            keep(t, f"MCP server {want.server!r}")
    if failed and not tools:  # nothing else to work with: the run cannot do what was asked
        raise next(iter(failed.values()))
    if warnings is not None:
        warnings += cat.warnings
        warnings += [f"{err}; continuing without its tools" for err in failed.values()]
    check_wire_names(t.name for t in tools)
    return tools


def load_tools(
    names: Sequence[str],
    llm: BaseChatModel | None = None,
    allow_dangerous_tools: bool = False,
    *,
    allow: Iterable[str] = (),
    config: object = None,
    callbacks: Callbacks = None,
    specs: Iterable[ToolSpec] = (),
    **settings: object,
) -> list[Tool]:
    """Build tools by name. Dangerous tools need ``allow_dangerous_tools`` or a per-name ``allow``.

    ``settings`` are passed to factories that need them (e.g. a base URL); a missing
    setting or a missing LLM is an error naming it, and an unknown keyword a TypeError.
    ``callbacks`` (handlers) are told of every call of these tools. ``config`` (a Settings
    object) adds the tool sources it names: ``--tools-module`` files, YAML tools and MCP
    servers. ``specs`` (:class:`ToolSpec`) are tools of the caller's own, by name and through
    the same gate: they belong to this call only. This is the same resolution path the CLI
    uses (:func:`resolve_tools`).
    """
    specs = list(specs)
    check_settings(settings, (s for spec in [*registry().values(), *specs]
                              for s in spec.needs.settings), "load_tools")
    tools = resolve_tools(names, config, llm=llm, allow_dangerous_tools=allow_dangerous_tools,
                          allow=allow, tool_settings=settings, with_module_tools=False,
                          specs=specs)
    return [t.with_callbacks(callbacks) for t in tools] if callbacks else tools


def load_configured_tools(
    settings: Settings, llm: BaseChatModel | None = None,
    extras: Mapping[str, object] | None = None,
    *, held: list[str] | None = None, warnings: list[str] | None = None,
) -> list[Tool]:
    """Everything ``agent run`` loads: named tools plus module tools, with the policy gate
    (``held``, ``warnings``: see :func:`resolve_tools`)."""
    from agentcli.approval import gate_by_policy

    tools = resolve_tools(list(settings.tools), settings, llm=llm, extras=extras, held=held,
                          warnings=warnings)
    gate_by_policy(tools, settings.tool_policy)
    return tools
