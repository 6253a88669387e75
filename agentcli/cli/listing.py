"""``agent agents list``: the agent types, what each suits and accepts, and the defaults."""

from __future__ import annotations

import json

from agentcli.agents import DEFAULT_AGENT, agent_class, agent_names
from agentcli.cli.consoles import console as make_console
from agentcli.cli.tables import print_rows
from agentcli.config import CHAT_AGENT


def print_agents(json_out: bool) -> None:
    """The agent types as a table or JSON."""
    rows = []
    for name in agent_names():
        cls = agent_class(name)
        default_for = [*(["run", "batch"] if name == DEFAULT_AGENT else []),
                       *(["chat"] if name == CHAT_AGENT else [])]
        rows.append((name, cls.summary, cls.accepts, default_for))

    console = make_console()
    if json_out:
        console.print_json(json.dumps([
            {"name": name, "summary": summary, "accepts": accepts,
             "default": name == DEFAULT_AGENT, "default_for": default_for}
            for name, summary, accepts, default_for in rows]))
        return

    print_rows(console, "Agent types", ("name", "suits", "tools it accepts", "default for"),
               [(*row[:3], ", ".join(row[3])) for row in rows])
