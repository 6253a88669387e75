"""Rich rendering: the Thought / Action / Observation trace and the final answer."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from agentcli import events as ev
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.cli.consoles import print_line, print_plain
from agentcli.schema import FORCE_STOP_MESSAGE, AgentAction, AgentFinish, stop_words
from agentcli.textsafe import display, safe_text

if TYPE_CHECKING:
    from rich.console import Console

    from agentcli.events import RunEvent, ToolInput

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


def input_text(tool_input: ToolInput) -> str:
    """A tool's input as written: text as is, an object as JSON (not yet neutralised)."""
    return tool_input if isinstance(tool_input, str) else json.dumps(tool_input,
                                                                     ensure_ascii=False)


# The kinds of event the trace draws (one class per kind, events.py); the others, most of a
# run's events (tokens, model calls, start and end), are passed over at once.
_DRAWN = frozenset({"action", "observation", "parse_error", "notice", "limit", "finish", "end"})


class TraceRenderer(BaseCallbackHandler):
    """The one trace renderer (``run``, ``chat``, ``batch``): subscribes to the event stream.

    Thought, action, observation, parse errors, notices, limits and the answer, each in its
    own colour. ``answer`` says what a finish prints: ``full`` (label and answer), ``label``
    (the answer follows on stdout) or ``none`` (the caller prints it). ``streamed`` tells
    whether the thought was already shown as streamed tokens; ``visible`` turns it off.
    """

    def __init__(
        self,
        console: Console,
        *,
        answer: Literal["full", "label", "none"] = "full",
        streamed: Callable[[], bool] = lambda: False,
        visible: Callable[[], bool] = lambda: True,
        said_elsewhere: frozenset[str] = frozenset(),
    ) -> None:
        self.console = console
        self.answer = answer
        self.streamed = streamed
        self.visible = visible
        self.said_elsewhere = said_elsewhere  # notice topics the caller reports itself
        self._stopped: str | None = None  # the limit that stopped this run's loop, if any

    def _line(self, label: str, body: str, style: str) -> None:
        label_style = f"bold {style}" if "bold" not in style else style
        print_line(self.console, (f"{label}: ", label_style), (display(body), style))

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Draw the lines for one event (most events draw nothing)."""
        if event.kind not in _DRAWN or not self.visible():  # a string test, at every event
            return

        if isinstance(event, ev.ActionEvent):
            self.print_action(event.action)
        elif isinstance(event, ev.Observation):
            self._line("Observation", event.step.observation, STYLES["observation"])
        elif isinstance(event, ev.ParseError):
            self._line("Could not parse the reply; told the model", event.step.observation,
                       STYLES["notice"])
        elif isinstance(event, ev.Notice) and event.topic not in self.said_elsewhere:
            self._notice(event.text)
        elif isinstance(event, ev.Limit):
            self._stopped = event.reason
            self._notice(f"Stopped: {stop_words(event.reason)}.")
        elif isinstance(event, ev.Finish):
            stopped, self._stopped = self._stopped, None
            from agentcli.callbacks.trace import is_placeholder, recovered_text

            if stopped is not None and not is_placeholder(event.finish.output):
                self._notice(recovered_text(stopped))  # the answer below came after the stop
            self.print_finish(event.finish)
        elif isinstance(event, ev.End):
            self._stopped = None  # a chat's next run starts unstopped (no stale "Recovered")

    def _notice(self, text: str) -> None:
        print_line(self.console, (display(text), STYLES["notice"]))

    def print_action(self, action: AgentAction) -> None:
        """The thought behind an action, then the tool and its input."""
        thought = thought_of(action.log)
        if thought and not self.streamed():
            self._line("Thought", thought, STYLES["thought"])
        style = tool_style(action.tool)
        print_line(self.console, ("Action: ", "bold"), (safe_text(action.tool), f"bold {style}"),
                   ("  input: ", "bold"), (display(input_text(action.tool_input)), f"bold {style}"))

    def print_finish(self, finish: AgentFinish) -> None:
        """The last thought and the final answer (or its label when it is printed below)."""
        if self.answer == "none" or (finish.output == FORCE_STOP_MESSAGE and not finish.log):
            return  # a limit's placeholder is not an answer (the stop line says why)
        thought = thought_of(finish.log)
        if thought and thought != finish.output and not self.streamed():
            self._line("Thought", thought, STYLES["thought"])
        if self.answer == "full":
            self._line("Final Answer", finish.output, STYLES["answer"])
        else:
            print_line(self.console, ("Final Answer:", f"bold {STYLES['answer']}"))


def print_answer(console: Console, answer: str, *, markdown: bool | None = None) -> None:
    """The answer as written; as Markdown in a terminal when it has Markdown block structure.

    ``markdown`` True/False (``--markdown/--no-markdown``) overrides the content check.
    Controls are neutralized and secrets redacted either way.
    """
    answer = display(answer)
    if markdown is None and console.is_terminal:
        from agentcli.cli.answer_markdown import has_markdown_blocks

        markdown = has_markdown_blocks(answer)
    if markdown:
        from rich.markdown import Markdown  # markdown-it and pygments: only when drawn

        from agentcli.cli.answer_markdown import protect_inline

        console.print(Markdown(protect_inline(answer)))
    elif not print_plain(console, answer, soft_wrap=True):
        console.print(answer, markup=False, highlight=False, soft_wrap=True)
