"""``agent tools list | show | call``: the registry with sources, schemas, and a direct call."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from agentcli import exit_codes
from agentcli.cli.consoles import console
from agentcli.cli.tables import tsv_lines
from agentcli.config import Settings
from agentcli.errors import AgentCliError, ConfigError, ToolInputError
from agentcli.textsafe import display, safe_line, safe_text
from agentcli.tools.base import Tool, ToolInput, ToolNeeds
from agentcli.tools.mcp import MCPToolInfo, cached_tool, cached_tools, refresh_tools
from agentcli.tools.registry import ToolSpec
from agentcli.tools.resolve import Catalog, build_catalog, resolve_tools

if TYPE_CHECKING:
    from rich.console import Console

    from agentcli.models.base import BaseChatModel


class _Stderr:
    """A stderr console made on first use: piped listings print without importing Rich."""

    def __init__(self) -> None:
        self._console: Console | None = None

    def print(self, *objects: Any, **kw: Any) -> None:
        """Print on stderr (the console is made now if it was not)."""
        if self._console is None:
            self._console = console(stderr=True)
        self._console.print(*objects, **kw)

    def warn(self, text: str) -> None:
        """One yellow warning line, never wrapped."""
        self.print(text, style="yellow", markup=False, highlight=False, soft_wrap=True)


def _prepare(settings: Settings, err: _Stderr) -> Catalog:
    catalog = build_catalog(settings)
    for line in catalog.warnings:
        err.warn("warning: " + safe_text(line))
    return catalog


def _row(s: ToolSpec) -> dict[str, Any]:
    return {"name": safe_text(s.name), "description": safe_text(s.summary),
            "needs_llm": s.needs.llm, "needs": s.needs.describe(), "dangerous": s.dangerous,
            "danger_reason": s.danger_reason, "source": s.source,
            "members": list(s.members)}


def _mcp_infos(
    catalog: Catalog, mode: str, err: _Stderr, only: str | None = None
) -> tuple[dict[str, list[MCPToolInfo] | None], set[str]]:
    """Each server's tool list: from the cache, or (``all``/``refresh``) from the server;
    and the servers that failed to start (each reported in one warning line)."""
    from concurrent.futures import ThreadPoolExecutor

    found = {s: cached_tools(conf) for s, conf in catalog.servers.items()
             if only is None or s == only}
    failed: set[str] = set()
    start = [s for s, infos in found.items()
             if mode == "refresh" or (mode == "all" and infos is None)]
    if start:
        with ThreadPoolExecutor(max_workers=len(start)) as pool:
            futures = {s: pool.submit(refresh_tools, catalog.servers[s]) for s in start}
        for s, fut in futures.items():
            try:
                found[s] = fut.result()
            except AgentCliError as error:
                text = safe_text(str(error))
                text = text if repr(s) in text else f"MCP server {s!r}: {text}"
                err.warn(f"warning: {text}")
                failed.add(s)
    return found, failed


_MCP_NEEDS = ToolNeeds(extra="mcp")


def _mcp_specs(
    catalog: Catalog, mode: str, err: _Stderr, only: str | None = None
) -> list[ToolSpec]:
    """Listing specs of each MCP server (a group) and its tools."""
    specs = []
    found, failed = _mcp_infos(catalog, mode, err, only)
    for server, infos in found.items():
        members = [f"{server}.{i.name}" for i in infos or []]
        text = (f"MCP server: {len(members)} tools (last seen list)" if infos is not None
                else "MCP server, not started yet: `agent tools list --all` lists its tools")
        if server in failed:
            text = "MCP server: failed to start (see the warning above)" + (
                f"; last seen list: {len(members)} tools" if members else "")
        specs.append(ToolSpec(server, None, text, needs=_MCP_NEEDS, source="MCP",
                              members=tuple(members)))
        specs += [ToolSpec(f"{server}.{i.name}", None, i.description.split("\n")[0],
                           needs=_MCP_NEEDS, dangerous=i.dangerous,
                           danger_reason=i.danger_reason, source="MCP")
                  for i in infos or []]
    return specs


def print_tools(settings: Settings, json_out: bool, *, mcp: str = "cached") -> None:
    """Every tool: source (built-in, plugin, module, YAML, MCP), danger, needs.

    ``mcp`` is ``cached`` (start no server), ``all`` (start servers never listed) or
    ``refresh`` (start every server and update the cache).
    """
    err = _Stderr()
    catalog = _prepare(settings, err)
    rows = [_row(s) for s in [*catalog.specs.values(), *_mcp_specs(catalog, mcp, err)]]
    rows.sort(key=lambda r: r["name"])
    if not json_out and not sys.stdout.isatty() and not os.environ.get("FORCE_TERMINAL"):
        # piped: tab-separated rows, and no Rich at all (start-up)
        print("\n".join(tsv_lines(
            ("name", "needs LLM", "dangerous", "source", "needs", "description"),
            [(r["name"], "yes" if r["needs_llm"] else "no", "yes" if r["dangerous"] else "no",
              r["source"], r["needs"], safe_line(r["description"])) for r in rows])))
        return
    out = console()
    if json_out:
        out.print_json(json.dumps(rows))
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"Tools ({len(rows)})")
    for col in ("name", "description", "needs LLM", "needs", "dangerous", "source"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(Text(r["name"]), Text(r["description"]),
                      "yes" if r["needs_llm"] else "no", r["needs"],
                      "[bold red]yes[/]" if r["dangerous"] else "no", r["source"])
    out.print(table)


def show_tool(settings: Settings, name: str, json_out: bool) -> None:
    """One tool's description, argument schema, danger and needs."""
    from rich.text import Text

    out, err = console(), _Stderr()
    catalog = _prepare(settings, err)
    spec = catalog.spec(name)
    if spec is None:
        spec = _mcp_spec(catalog, name, err)
    info = _row(spec)
    schema: object = None
    if (spec.source == "MCP" and not spec.members) or (
            spec.factory is not None and not spec.needs.settings):
        # An MCP tool from its server's cached list is shown without starting the server.
        server, bare = catalog.server_tool(spec.name) or (spec.name, None)
        try:
            cached = None if bare is None else cached_tool(catalog.servers[server], bare)
            tool = cached or _built(settings, spec.name)
            info["description"] = tool.description
            info["model_name"] = tool.name
            info["function_name"] = tool.to_openai()["function"]["name"]  # tool-calling models
            schema = tool.to_openai()["function"]["parameters"]  # as function calling sends it
        except Exception as error:  # a need is missing: show what we know
            schema = f"(unavailable: {error})"
    info["schema"] = schema
    if json_out:
        out.print_json(json.dumps(info, default=str))
        return
    out.print(Text(safe_text(spec.name), style="bold"))
    if "model_name" in info:
        out.print(Text(f"the model sees it as {safe_text(info['model_name'])}; a tool-calling "
                       f"model calls the function {safe_text(info['function_name'])}:",
                       style="dim"))
    out.print(Text(safe_text(info["description"])))
    out.print(Text(f"source: {spec.source}    needs: {info['needs']}"))
    danger = f"yes - {safe_text(spec.danger_reason)}" if spec.dangerous else "no"
    out.print(Text(f"dangerous: {danger}"))
    if spec.members:
        out.print(Text(safe_text("members: " + ", ".join(spec.members))))
    if schema is not None:
        out.print("arguments:")
        out.print_json(json.dumps(schema)) if isinstance(schema, dict) else out.print(schema)


def _built(settings: Settings, name: str) -> Tool:
    from agentcli.models.unconfigured import UnconfiguredModel

    # Building the tool never calls the model, so a stand-in is enough to show it.
    [tool] = resolve_tools([name], settings, llm=UnconfiguredModel(name),
                           allow_dangerous_tools=True, with_module_tools=False)
    return tool


def _mcp_spec(catalog: Catalog, name: str, err: _Stderr) -> ToolSpec:
    """A listing spec for an MCP server or one of its tools (cached list first)."""
    found = catalog.server_tool(name)
    if found is None:
        raise catalog.unknown(name)
    server = found[0]
    specs = {s.name: s for s in _mcp_specs(catalog, "all", err, only=server)}
    return specs.get(name) or ToolSpec(name, None, f"a tool of MCP server {server}",
                                       source="MCP", needs=_MCP_NEEDS)


def call_tool(settings: Settings, name: str, raw_input: str, *, yes: bool,
              llm: BaseChatModel | None) -> int:
    """Run one tool directly under the same load-time gate and call-time approval."""
    from rich.text import Text

    from agentcli.approval import gate_by_policy
    from agentcli.cli.approve import build_approver, human_input

    out, err = console(), _Stderr()
    catalog = _prepare(settings, err)
    spec = catalog.spec(name)
    members = spec.members if spec is not None else ()
    if spec is None and name in catalog.servers:
        members = (f"{name}.*",)
    if members:
        raise ConfigError(f"{name!r} is a group; call one of its tools: " + ", ".join(members))
    if llm is None:  # the tool may not need one for this input (the Calculator on 300 * 0.25)
        from agentcli.models.unconfigured import UnconfiguredModel

        llm = UnconfiguredModel(name)
    tools = resolve_tools([name], settings, llm=llm, extras={"human_input": human_input()},
                          with_module_tools=False)
    gate_by_policy(tools, settings.tool_policy)
    tool = tools[0]
    tool_input: ToolInput = raw_input
    if tool.is_structured and raw_input.strip().startswith("{"):
        with contextlib.suppress(ValueError):
            tool_input = json.loads(raw_input)
    if tool.dangerous:
        verdict = build_approver(settings, yes)(tool, tool_input)
        err.print(Text(f"{'approved' if verdict.allowed else 'denied'} {tool.name}: "
                       f"{safe_text(verdict.reason)}", style="green" if verdict.allowed else "red"),
                  soft_wrap=True)
        if not verdict.allowed:
            return exit_codes.TOOL_FAILED
        if verdict.tool_input is not None:
            tool_input = verdict.tool_input
    try:
        observation = tool.run(tool_input)
    except ToolInputError as error:
        err.print(Text(f"Error: {safe_text(str(error))}", style="red"), soft_wrap=True)
        return exit_codes.TOOL_FAILED
    out.print(display(observation), markup=False, highlight=False, soft_wrap=True)
    return exit_codes.OK

