"""``agent tools list`` and ``agent agents list``."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table


def print_tools(json_out: bool) -> None:
    """The tool registry as a table or JSON."""
    from agentcli.tools.registry import registry

    specs = sorted(registry().values(), key=lambda s: s.name)
    rows: list[dict[str, Any]] = [
        {
            "name": s.name,
            "description": s.summary,
            "needs_llm": s.needs.llm,
            "needs": s.needs.describe(),
            "dangerous": s.dangerous,
            "source": s.source,
        }
        for s in specs
    ]
    console = Console()
    if json_out:
        console.print_json(json.dumps(rows))
        return
    table = Table(title="Tools", show_lines=False)
    for col in ("name", "description", "needs LLM", "needs", "dangerous", "source"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(
            r["name"], r["description"], "yes" if r["needs_llm"] else "no", r["needs"],
            "[bold red]yes[/]" if r["dangerous"] else "no", r["source"],
        )
    console.print(table)


def print_agents(json_out: bool) -> None:
    """The agent types as a table or JSON."""
    from agentcli.agents import DEFAULT_AGENT, agent_class, agent_names

    rows = []
    for name in agent_names():
        cls = agent_class(name)
        rows.append({"name": name, "summary": cls.summary, "accepts": cls.accepts,
                     "default": name == DEFAULT_AGENT})
    console = Console()
    if json_out:
        console.print_json(json.dumps(rows))
        return
    table = Table(title="Agent types")
    for col in ("name", "suits", "tools it accepts", "default"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["name"], r["summary"], r["accepts"], "yes" if r["default"] else "")
    console.print(table)
