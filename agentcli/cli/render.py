"""Rich rendering: the Thought / Action / Observation trace and the final answer."""

from __future__ import annotations

import json
import re
import zlib
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.schema import AgentAction, AgentFinish

if TYPE_CHECKING:
    from agentcli.executor import RunEvent

STYLES = {
    "thought": "italic bright_black",
    "action": "bold",
    "observation": "green",
    "answer": "bold magenta",
    "notice": "yellow",
}
TOOL_PALETTE = ("cyan", "blue", "bright_magenta", "dark_orange", "bright_blue", "orchid",
                "deep_sky_blue1", "gold3")
_ACTION_START = re.compile(r"(?:\*\*)?Action(?:\s*\d+)?\s*:|```|\{\s*\"action\"", re.I)


def tool_style(name: str) -> str:
    """A colour for a tool that stays the same across runs."""
    return TOOL_PALETTE[zlib.crc32(name.encode()) % len(TOOL_PALETTE)]


def thought_of(log: str) -> str:
    """The model's reasoning before its action or answer."""
    match = _ACTION_START.search(log)
    text = log[: match.start()] if match else log
    text = re.split(r"Final Answer\s*:", text, flags=re.I)[0]
    return re.sub(r"^\s*Thought\s*:\s*", "", text.strip(), flags=re.I).strip()


def _input_text(tool_input: str | dict[str, Any]) -> str:
    return tool_input if isinstance(tool_input, str) else json.dumps(tool_input, ensure_ascii=False)


class VerboseHandler(BaseCallbackHandler):
    """Prints the trace, each part in its own colour.

    With ``events=True`` the action / observation / finish lines come from the executor's
    event stream through :meth:`render` (the CLI's way); the callbacks then print only
    notices. Without it the callbacks print everything, for callers that only invoke.
    """

    def __init__(self, console: Console, *, show_answer: bool = True, events: bool = False):
        self.console = console
        self.show_answer = show_answer  # False when the answer is rendered right below
        self.events = events

    def _line(self, label: str, body: str, style: str) -> None:
        text = Text()
        text.append(f"{label}: ", style=f"bold {style}" if "bold" not in style else style)
        text.append(body, style=style)
        self.console.print(text)

    def render(self, event: RunEvent) -> None:
        """Print one event of :meth:`AgentExecutor.stream`."""
        if event.kind == "action" and event.action is not None:
            self.print_action(event.action)
        elif event.kind == "observation" and event.step is not None:
            self.print_observation(event.step.observation)
        elif event.kind == "finish":
            self.print_finish(event.finish or AgentFinish({"output": event.output}, ""))

    def print_action(self, action: AgentAction) -> None:
        """The thought behind an action, then the tool and its input."""
        thought = thought_of(action.log)
        if thought:
            self._line("Thought", thought, STYLES["thought"])
        style = tool_style(action.tool)
        text = Text("Action: ", style="bold")
        text.append(action.tool, style=f"bold {style}")
        text.append("  input: ", style="bold")
        text.append(_input_text(action.tool_input), style=style)
        self.console.print(text)

    def print_observation(self, observation: str) -> None:
        """What a tool returned."""
        self._line("Observation", observation, STYLES["observation"])

    def print_finish(self, finish: AgentFinish) -> None:
        """The last thought and the final answer (or its label when it is printed below)."""
        thought = thought_of(finish.log)
        if thought and thought != finish.output:
            self._line("Thought", thought, STYLES["thought"])
        if self.show_answer:
            self._line("Final Answer", finish.output, STYLES["answer"])
        else:
            self.console.print(Text("Final Answer:", style=f"bold {STYLES['answer']}"))

    def on_agent_action(self, action: AgentAction, **kw: Any) -> None:
        if not self.events:
            self.print_action(action)

    def on_tool_end(self, observation: str, **kw: Any) -> None:
        if not self.events:
            self.print_observation(observation)

    def on_agent_finish(self, finish: AgentFinish, **kw: Any) -> None:
        if not self.events:
            self.print_finish(finish)

    def on_text(self, text: str, **kw: Any) -> None:
        self.console.print(Text(text, style=STYLES["notice"]))


def print_answer(console: Console, answer: str, *, markdown: bool | None = None) -> None:
    """The answer as written; as Markdown in a terminal when it has Markdown block structure.

    ``markdown`` True/False (``--markdown/--no-markdown``) overrides the content check.
    """
    from agentcli.cli.answer_markdown import has_markdown_blocks, protect_inline

    if markdown is None:
        markdown = console.is_terminal and has_markdown_blocks(answer)
    if markdown:
        console.print(Markdown(protect_inline(answer)))
    else:
        console.print(answer, markup=False, highlight=False, soft_wrap=True)
