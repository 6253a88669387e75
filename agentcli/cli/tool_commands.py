"""``agent tools list | show | call``: the registry with sources, schemas, and a direct call."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from agentcli import exit_codes
from agentcli.cli.consoles import console
from agentcli.config import Settings
from agentcli.errors import ConfigError, ToolInputError
from agentcli.textsafe import display, safe_line, safe_text
from agentcli.tools.registry import ToolSpec, registry

if TYPE_CHECKING:
    from rich.console import Console


def _prepare(settings: Settings, err: Console | None = None) -> dict[str, ToolSpec]:
    from agentcli.tools.custom import prepare_registry, warnings_seen

    prepare_registry(settings)
    if warnings_seen:
        from rich.text import Text

        err = err or console(stderr=True)
        for line in warnings_seen:
            err.print(Text("warning: " + line, style="yellow"))
    warnings_seen.clear()
    return registry()


def _row(s: ToolSpec) -> dict[str, Any]:
    return {"name": s.name, "description": s.summary, "needs_llm": s.needs.llm,
            "needs": s.needs.describe(), "dangerous": s.dangerous,
            "danger_reason": s.danger_reason, "source": s.source,
            "members": list(s.members)}


def _print_plain(rows: list[dict[str, Any]]) -> None:
    from agentcli.cli.tables import tsv_lines

    header = ("name", "needs LLM", "dangerous", "source", "needs", "description")
    lines = tsv_lines(header, [
        (r["name"], "yes" if r["needs_llm"] else "no", "yes" if r["dangerous"] else "no",
         r["source"], r["needs"], safe_line(r["description"]))
        for r in rows
    ])
    print("\n".join(lines))


def print_tools(settings: Settings, json_out: bool) -> None:
    """Every tool: source (built-in, plugin, module, YAML, MCP), danger, needs."""
    rows = [_row(s) for s in sorted(_prepare(settings).values(), key=lambda s: s.name)]
    if not json_out and not sys.stdout.isatty() and not os.environ.get("FORCE_TERMINAL"):
        _print_plain(rows)  # piped: no Rich at all (start-up is a feature)
        return
    out = console()
    if json_out:
        out.print_json(json.dumps(rows))
        return
    if not out.is_terminal:  # piped: tab-separated rows, grep-friendly and fast
        _print_plain(rows)
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"Tools ({len(rows)})")
    for col in ("name", "description", "needs LLM", "needs", "dangerous", "source"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["name"], Text(safe_text(r["description"])),
                      "yes" if r["needs_llm"] else "no", r["needs"],
                      "[bold red]yes[/]" if r["dangerous"] else "no", r["source"])
    out.print(table)


def show_tool(settings: Settings, name: str, json_out: bool) -> None:
    """One tool's description, argument schema, danger and needs."""
    out, err = console(), console(stderr=True)
    specs = _prepare(settings, err)
    if name not in specs:
        from agentcli.tools.registry import expand

        expand([name])  # raises with close matches
    spec = specs[name]
    info = _row(spec)
    schema: Any = None
    if spec.factory is not None and not spec.needs.settings:
        try:
            from agentcli.models.unconfigured import UnconfiguredModel
            from agentcli.tools.registry import load_tools

            # Building the tool never calls the model, so a stand-in is enough to show it.
            [tool] = load_tools([name], llm=UnconfiguredModel(name), allow_dangerous_tools=True,
                                **settings.tool_settings)
            info["description"] = tool.description
            info["model_name"] = tool.name
            schema = tool.to_openai()["function"]["parameters"]  # as function calling sends it
        except Exception as error:  # a need is missing: show what we know
            schema = f"(unavailable: {error})"
    info["schema"] = schema
    if json_out:
        out.print_json(json.dumps(info, default=str))
        return
    from rich.text import Text

    out.print(Text(spec.name, style="bold"))
    if "model_name" in info:
        out.print(Text(f"the model sees it as {info['model_name']}:", style="dim"))
    out.print(Text(safe_text(info["description"])))  # MCP / YAML text: no escapes
    out.print(f"source: {spec.source}    needs: {info['needs']}")
    danger = f"yes - {spec.danger_reason}" if spec.dangerous else "no"
    out.print(f"dangerous: {danger}")
    if spec.members:
        out.print("members: " + ", ".join(spec.members))
    if schema is not None:
        out.print("arguments:")
        out.print_json(json.dumps(schema)) if isinstance(schema, dict) else out.print(schema)


def call_tool(settings: Settings, name: str, raw_input: str, *, yes: bool, llm: Any) -> int:
    """Run one tool directly under the same load-time gate and call-time approval."""
    from rich.text import Text

    from agentcli.cli.approve import build_approver, human_input
    from agentcli.tools.custom import load_configured_tools

    out, err = console(), console(stderr=True)
    _prepare(settings, err)
    if name in registry() and registry()[name].members:
        raise ConfigError(f"{name!r} is a group; call one of its tools: "
                          + ", ".join(registry()[name].members))
    settings = _with_tools(settings, [name])
    if llm is None:  # the tool may not need one for this input (the Calculator on 300 * 0.25)
        from agentcli.models.unconfigured import UnconfiguredModel

        llm = UnconfiguredModel(name)
    tools = load_configured_tools(settings, llm, {"human_input": human_input()})
    tool = next((t for t in tools if t.name == name), tools[0])
    tool_input: Any = raw_input
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


def _with_tools(settings: Settings, names: list[str]) -> Settings:
    from dataclasses import replace

    return replace(settings, tools=names)
