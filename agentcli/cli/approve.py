"""The interactive approver: show exactly what will run, then yes / no / always / edit / reject."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli.approval import ApprovalPolicy, Choice, UserChoice
from agentcli.config import Settings
from agentcli.textsafe import safe_text
from agentcli.tools.base import Tool, ToolInput

if TYPE_CHECKING:  # Rich loads only when a person is asked, on a terminal
    from rich.console import Console

CHOICES = "[y]es / [n]o / [a]lways this session / [e]dit / [r]eject with a reason"
_PLAIN: dict[str, Choice] = {"y": "yes", "n": "no", "": "no", "a": "always"}  # no follow-up


def has_terminal() -> bool:
    """True when a person can answer on this terminal."""
    return bool(sys.stdin and sys.stdin.isatty() and sys.stderr.isatty())


def _read(message: str, default: str = "") -> str:
    from prompt_toolkit import prompt

    return prompt(message, default=default)


def make_ask(console: Console, read: Callable[..., str] = _read) -> Callable[..., UserChoice]:
    """An ``ask`` function for :class:`ApprovalPolicy` that prompts on the terminal."""

    def ask(tool: Tool, tool_input: ToolInput, description: str) -> UserChoice:
        why = f" ({tool.danger_reason})" if tool.danger_reason else ""
        from rich.panel import Panel  # drawn only when a tool asks
        from rich.text import Text

        # Escapes are shown, not obeyed: the person sees every byte that will run.
        console.print(Panel(Text(safe_text(description)), title=f"{tool.name} wants to run{why}",
                            border_style="yellow"))
        while True:
            answer = read(f"Allow? {CHOICES}: ").strip().lower()[:1]
            if answer in _PLAIN:
                return UserChoice(_PLAIN[answer])
            if answer == "r":
                return UserChoice("reject", reason=read("Reason (sent to the model): ").strip())
            if answer == "e":
                current = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
                edited = read("Edit the input: ", default=current)
                if isinstance(tool_input, dict):
                    try:
                        return UserChoice("edit", tool_input=json.loads(edited))
                    except ValueError:
                        console.print("The edited input is not valid JSON; try again.")
                        continue
                return UserChoice("edit", tool_input=edited)

    return ask


def build_approver(settings: Settings, yes: bool,
                   console: Console | None = None) -> ApprovalPolicy:
    """The approver for a run: --yes / approve: auto runs everything allowed by policy; a
    terminal gets prompts; anything else denies ``ask`` calls."""
    ask = None
    if has_terminal():
        from rich.console import Console

        ask = make_ask(console or Console(stderr=True))
    return ApprovalPolicy(settings.tool_policy, auto=yes or settings.approve == "auto", ask=ask)


def human_input(console: Console | None = None) -> Callable[[str], str] | None:
    """The ``human`` tool's way to ask the person at the terminal (None without one)."""
    if not has_terminal():
        return None
    from rich.console import Console

    shown = console or Console(stderr=True)

    def ask(question: str) -> str:
        from rich.panel import Panel
        from rich.text import Text

        shown.print(Panel(Text(safe_text(question)), title="The agent asks you",
                            border_style="cyan"))
        return _read("Your answer: ")

    return ask
