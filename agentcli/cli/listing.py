"""``agent tools list`` and ``agent agents list``."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table


def print_agents(json_out: bool) -> None:
    """The agent types as a table or JSON."""
    from agentcli.agents import DEFAULT_AGENT, agent_class, agent_names

    rows: list[dict[str, Any]] = []
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
