"""``agent tools list`` and ``agent agents list``."""

from __future__ import annotations

import json
from typing import Any

from agentcli.agents import DEFAULT_AGENT, agent_class, agent_names
from agentcli.cli.consoles import console as make_console
from agentcli.cli.tables import print_rows
from agentcli.config import CHAT_AGENT


def print_agents(json_out: bool) -> None:
    """The agent types as a table or JSON."""
    rows: list[dict[str, Any]] = []
    for name in agent_names():
        cls = agent_class(name)
        default_for = [*(["run", "batch"] if name == DEFAULT_AGENT else []),
                       *(["chat"] if name == CHAT_AGENT else [])]
        rows.append({"name": name, "summary": cls.summary, "accepts": cls.accepts,
                     "default": name == DEFAULT_AGENT, "default_for": default_for})

    console = make_console()
    if json_out:
        console.print_json(json.dumps(rows))
        return

    print_rows(console, "Agent types", ("name", "suits", "tools it accepts", "default for"),
               [(r["name"], r["summary"], r["accepts"], ", ".join(r["default_for"]))
                for r in rows])
