"""Live rendering for the chat REPL: streamed tokens as they arrive, then the structured trace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.cli.render import (
    _ACTION_START,
    STYLES,
    _input_text,
    print_answer,
    thought_of,
    tool_style,
)
from agentcli.executor import RunEvent
from agentcli.schema import ChatResult

TOKEN_STYLE = "bright_black"
_MARKERS = ("action:", "**action", "```", '{"action"')


class TokenPrinter(BaseCallbackHandler):
    """Prints the model's words the moment they arrive, up to its action (rendered as a step).

    Text that might begin an action marker is held back until it is clear, so the raw action
    blob never flashes on screen; a newline ends each model call.
    """

    def __init__(self, console: Console, visible: Callable[[], bool] = lambda: True) -> None:
        self.console = console
        self.visible = visible  # `/verbose off` hides the streamed thoughts too
        self.streamed = False  # whether the current model call printed anything
        self.answer_streamed = False  # whether it streamed a final answer
        self._text = ""
        self._shown = 0
        self._stopped = False

    def on_llm_start(self, messages: Any, **kw: Any) -> None:
        self.streamed = self.answer_streamed = self._stopped = False
        self._text, self._shown = "", 0

    def _emit(self, upto: int) -> None:
        chunk = self._text[self._shown:upto]
        if not self.streamed:
            chunk = chunk.lstrip()
        if chunk:
            self.console.print(Text(chunk, style=TOKEN_STYLE), end="", soft_wrap=True)
            self.console.file.flush()
            self.streamed = True
        self._shown = max(self._shown, upto)

    def on_llm_new_token(self, token: str, **kw: Any) -> None:
        if self._stopped or not self.visible():
            return
        self._text += token
        match = _ACTION_START.search(self._text)
        if match:
            self._emit(len(self._text[:match.start()].rstrip()))
            self._stopped = True
            return
        self._emit(len(self._text) - _held(self._text))

    def on_llm_end(self, result: ChatResult, **kw: Any) -> None:
        if not self._stopped:
            self._emit(len(self._text))
            self.answer_streamed = "final answer" in self._text.lower()
        if self.streamed:
            self.console.print()

    def on_text(self, text: str, **kw: Any) -> None:
        if kw.get("kind") in ("approval", "interrupted"):
            self.console.print(Text(text, style=STYLES["notice"]))


def _held(text: str) -> int:
    """How many trailing characters could be the start of an action marker."""
    for k in range(min(len(text), 12), 0, -1):
        tail = text[-k:].lstrip()
        if tail and any(m.startswith(tail.lower()) for m in _MARKERS):
            return k
    return 0


def _line(console: Console, label: str, body: str, style: str) -> None:
    text = Text(f"{label}: ", style=f"bold {style}")
    text.append(body, style=style)
    console.print(text)


def render_event(console: Console, event: RunEvent, *, verbose: bool, streamed: bool) -> None:
    """The trace line(s) for one run event; thoughts are skipped when already streamed."""
    if not verbose:
        return
    if event.kind == "action" and event.action is not None:
        thought = thought_of(event.action.log)
        if thought and not streamed:
            _line(console, "Thought", thought, STYLES["thought"])
        text = Text("Action: ", style="bold")
        text.append(event.action.tool, style=f"bold {tool_style(event.action.tool)}")
        text.append("  input: ", style="bold")
        text.append(_input_text(event.action.tool_input), style=tool_style(event.action.tool))
        console.print(text)
    elif event.kind == "observation" and event.step is not None:
        _line(console, "Observation", event.step.observation, STYLES["observation"])
    elif event.kind == "parse_error" and event.step is not None:
        _line(console, "Could not parse the reply; told the model", event.step.observation,
              STYLES["notice"])
    elif event.kind == "limit":
        console.print(Text(f"Stopped: {event.output.replace('_', ' ')} reached",
                           style=STYLES["notice"]))


def render_answer(console: Console, answer: str) -> None:
    """The final answer, set apart from the trace."""
    console.print(Text("Answer:", style=f"bold {STYLES['answer']}"))
    print_answer(console, answer)


def warn(console: Console, message: str) -> None:
    """A loud warning line."""
    console.print(Text(f"WARNING: {message}", style="bold red"))


def note(console: Console, message: str) -> None:
    """A quiet notice line."""
    console.print(Text(message, style=STYLES["notice"]))
