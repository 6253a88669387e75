"""Live rendering for the chat REPL: streamed tokens as they arrive (the trace is render.py's)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from rich.console import Console
from rich.text import Text

from agentcli.answers import Given, settled
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.cli.consoles import plain_file, print_plain, unchanged_by_rich
from agentcli.cli.render import _ACTION_START, STYLES, print_answer
from agentcli.redact import open_word
from agentcli.textsafe import display, safe_text

if TYPE_CHECKING:
    from agentcli.events import ModelEnd, ModelStart, ModelToken, RunEvent

TOKEN_STYLE = "bright_black"
_MARKERS = ("action:", "**action", "```", '{"action"', "final answer:")
_FINAL = re.compile(r"(?:\*\*)?Final Answer\s*:\**", re.I)


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
        # what the answer rule judges this turn against (set per turn; None: no hold-back) and
        # whether the whole reply is the answer (a tool-calling agent): the answer's words
        # show only once they add something (agentcli.answers.settled)
        self.given: Given | None = None
        self.native = False

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Follow the agent's model calls (not those a tool makes): start, tokens, end."""
        kind = event.kind  # one class per kind (events.py): a string test, at every event
        if kind == "token":
            self._token(cast("ModelToken", event).text)
        elif kind == "model_start" and cast("ModelStart", event).parent is None:
            self.streamed = self.answer_streamed = self._stopped = False
            self._text, self._shown = "", 0
        elif kind == "model_end" and cast("ModelEnd", event).parent is None:
            self._end()

    def _emit(self, upto: int) -> None:
        chunk = self._text[self._shown:upto]
        if not self.streamed:
            chunk = chunk.lstrip()
        if chunk:
            self.console.print(Text(display(chunk), style=TOKEN_STYLE), end="", soft_wrap=True)
            self.console.file.flush()
            self.streamed = True
        self._shown = max(self._shown, upto)

    def _token(self, token: str) -> None:
        if self._stopped or not self.visible():
            return
        self._text += token
        match = _ACTION_START.search(self._text)
        if match:
            self._emit(len(self._text[:match.start()].rstrip()))
            self._stopped = True
            return
        self._emit(self._judged(len(self._text) - _held(self._text), end=False))

    def _judged(self, upto: int, *, end: bool) -> int:
        """``upto``, or less: where the answer begins until the rule would keep its words."""
        if self.given is None:
            return upto
        label = None if self.native else _FINAL.search(self._text)
        if label is None and not self.native:
            return upto  # thoughts, before any answer
        start, body = (label.start(), label.end()) if label else (0, 0)
        keep = settled(self._text[body:], self.given, whole=end)
        return min(upto, body + keep if keep else start)

    def _end(self) -> None:
        if not self._stopped:
            self._emit(self._judged(len(self._text), end=True))
            self.answer_streamed = ("final answer" in self._text.lower()
                                    and self._shown >= len(self._text.rstrip()))
        if self.streamed:
            self.console.print()


def _held(text: str) -> int:
    """How many trailing characters to hold back: the start of an action marker, or a word
    still arriving (a key split across tokens is redacted only once it is whole)."""
    held = open_word(text)
    for k in range(min(len(text), 12), held, -1):
        tail = text[-k:].lstrip()
        if tail and any(m.startswith(tail.lower()) for m in _MARKERS):
            return k
    return held


def render_answer(console: Console, answer: str) -> None:
    """The final answer, set apart from the trace."""
    file = plain_file(console)
    if file is not None:  # piped: the label and the answer in one write, when Rich would
        shown = display(answer)  # print both unchanged (see print_answer)
        if (unchanged_by_rich(console, "Final Answer:", emoji_codes=False)
                and unchanged_by_rich(console, shown, soft_wrap=True)):
            file.write(f"Final Answer:\n{shown}\n")
            file.flush()
            return
    if not print_plain(console, "Final Answer:", emoji_codes=False):
        console.print(Text("Final Answer:", style=f"bold {STYLES['answer']}"))
    print_answer(console, answer)


def warn(console: Console, message: str) -> None:
    """A loud warning line."""
    console.print(Text(f"WARNING: {safe_text(message)}", style="bold red"))


def note(console: Console, message: str) -> None:
    """A quiet notice line."""
    console.print(Text(safe_text(message), style=STYLES["notice"]))
