"""What LangChain's ``verbose=True`` prints, on stdout: the library's trace
(``initialize_agent(..., verbose=True)``); the CLI draws its own on stderr.

    > Entering new AgentExecutor chain...        (bold)
    <the reply that chose a tool>                (green)
    Observation: <what the tool returned>        (a colour per tool)
    Thought:<the final reply>                    (green)
    > Finished chain.                            (bold)

Text agents print the ``Observation: ``/``Thought:`` prefixes between the reply and the tool's
result, as LangChain's prompt-built agents do; chat-native agents and ``create_react_agent``'s
print the result right after the reply, as LangChain's runnable agents do. What a built-in
tool says it runs is not printed (a chain inside a LangChain tool is not verbose); what a
LangChain-style tool says through its ``run_manager.on_text`` (a ``TOOL_SAYS`` notice) is, as
there.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from agentcli import events as ev
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.textsafe import safe_text

if TYPE_CHECKING:
    from agentcli.events import RunEvent

# LangChain's colours (ANSI) and the order tools get them (green and red are the agent's own)
COLORS = {"blue": "36;1", "yellow": "33;1", "pink": "38;5;200", "green": "32;1", "red": "31;1"}
_TOOL_COLORS = ("blue", "yellow", "pink")
_BOLD, _RESET = "\033[1m", "\033[0m"
TOOL_SAYS = "tool_says"  # the notice of a tool's own run_manager.on_text (agentcli.compat)


def colored(text: str, color: str | None) -> str:
    """``text`` in LangChain's ``color`` (bold italic, as its ``print_text`` draws it)."""
    if color not in COLORS:
        return text
    return f"\u001b[{COLORS[color]}m\033[1;3m{text}\u001b[0m"


class StdOutCallbackHandler(BaseCallbackHandler):
    """Prints a run as LangChain's ``StdOutCallbackHandler`` does (model and tool text made
    safe for a terminal first)."""

    def __init__(self, *, prefixes: bool | tuple[str, str] = True,
                 tools: list[str] | None = None, name: str = "AgentExecutor",
                 color: str | None = None) -> None:
        # around each tool result: Observation:/Thought:, none, or an agent's own pair
        self.prefixes = ("Observation: ", "Thought:") if prefixes is True else prefixes or None
        self.name = name
        self.color = color  # a tool's result without a colour of its own
        self._colors = {t: _TOOL_COLORS[n % len(_TOOL_COLORS)] for n, t in enumerate(tools or [])}
        self._limited: set[object] = set()  # runs a limit stopped (their answer is LangChain's)

    def _print(self, text: str, color: str | None = None, end: str = "") -> None:
        """Model or tool text, made safe, in ``color``."""
        self._line(colored(safe_text(text), color), end)

    def _line(self, text: str, end: str = "\n") -> None:
        print(text, end=end, file=sys.stdout, flush=True)

    def _observed(self, text: str, color: str | None) -> None:
        """A tool's result, between LangChain's prefixes when the agent writes them."""
        if self.prefixes:
            self._print(f"\n{self.prefixes[0]}")
        self._print(text, color)
        if self.prefixes:
            self._print(f"\n{self.prefixes[1]}")

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """The run's start and end, each reply that chose a tool, each result, the answer."""
        if isinstance(event, ev.Start):
            name = safe_text(event.name or self.name)
            self._line(f"\n\n{_BOLD}> Entering new {name} chain...{_RESET}")
        elif isinstance(event, ev.ActionEvent):
            action = event.action  # a native tool call has no text: LangChain's wording
            self._print(action.log or f"\nInvoking: `{action.tool}` with "
                        f"`{action.tool_input}`\n\n\n", "green")
        elif isinstance(event, ev.Observation):
            self._observed(str(event.step.observation), self._colors.get(
                event.step.action.tool, self.color) if event.status == "ok" else None)
        elif isinstance(event, ev.ParseError):  # LangChain's _Exception step: reply, result
            self._print(event.step.action.log, "green")
            self._observed(str(event.step.observation), None)
        elif isinstance(event, ev.Notice) and event.topic == TOOL_SAYS:
            color, end = event.data.get("color"), event.data.get("end")
            self._print(event.text, color if isinstance(color, str) else None,
                        end if isinstance(end, str) else "")
        elif isinstance(event, ev.Limit):
            self._limited.add(kw.get("run_id"))
        elif isinstance(event, ev.Finish):  # after a limit, its log (a forced stop's is empty)
            stopped = kw.get("run_id") in self._limited
            self._limited.discard(kw.get("run_id"))
            self._print(event.finish.log if stopped else event.finish.log or event.output,
                        "green", end="\n")
        elif isinstance(event, ev.End):
            self._line(f"\n{_BOLD}> Finished chain.{_RESET}")
