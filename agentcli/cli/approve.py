"""The interactive approver: show exactly what will run, then yes / no / always / edit / reject."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from agentcli.approval import ApprovalPolicy, Choice, UserChoice
from agentcli.cli.render import input_text
from agentcli.config import Settings
from agentcli.textsafe import safe_text
from agentcli.tools.base import Tool, ToolInput

CHOICES = "[y]es / [n]o / [a]lways this session / [e]dit / [r]eject with a reason"
_PLAIN: dict[str, Choice] = {"y": "yes", "n": "no", "": "no", "a": "always"}  # no follow-up


def has_terminal() -> bool:
    """True when a person can answer on this terminal."""
    return bool(sys.stdin and sys.stdin.isatty() and sys.stderr.isatty())


def _read(message: str, default: str = "") -> str:
    from prompt_toolkit import prompt

    return prompt(message, default=default)


def _ask(tool: Tool, tool_input: ToolInput, description: str) -> UserChoice:
    """Ask the person at the terminal whether ``tool`` may run (``ApprovalPolicy``'s ``ask``)."""
    from rich.console import Console
    from rich.panel import Panel  # drawn only when a tool asks
    from rich.text import Text

    console = Console(stderr=True)
    why = f" ({tool.danger_reason})" if tool.danger_reason else ""
    # Escapes are shown, not obeyed: the person sees every byte that will run.
    console.print(Panel(Text(safe_text(description)), title=f"{tool.name} wants to run{why}",
                        border_style="yellow"))
    while True:
        answer = _read(f"Allow? {CHOICES}: ").strip().lower()[:1]
        if answer in _PLAIN:
            return UserChoice(_PLAIN[answer])
        if answer == "r":
            return UserChoice("reject", reason=_read("Reason (sent to the model): ").strip())
        if answer == "e":
            edited = _read("Edit the input: ", default=input_text(tool_input))
            if isinstance(tool_input, dict):
                try:
                    return UserChoice("edit", tool_input=json.loads(edited))
                except ValueError:
                    console.print("The edited input is not valid JSON; try again.")
                    continue
            return UserChoice("edit", tool_input=edited)


def build_approver(settings: Settings, yes: bool) -> ApprovalPolicy:
    """The approver for a run: --yes / approve: auto runs everything allowed by policy; a
    terminal gets prompts; anything else denies ``ask`` calls."""
    return ApprovalPolicy(settings.tool_policy, auto=yes or settings.approve == "auto",
                          ask=_ask if has_terminal() else None)


def human_input() -> Callable[[str], str] | None:
    """The ``human`` tool's way to ask the person at the terminal (None without one)."""
    if not has_terminal():
        return None

    def ask(question: str) -> str:
        from rich.console import Console
        from rich.panel import Panel
        from rich.text import Text

        Console(stderr=True).print(Panel(Text(safe_text(question)), title="The agent asks you",
                                         border_style="cyan"))
        return _read("Your answer: ")

    return ask
