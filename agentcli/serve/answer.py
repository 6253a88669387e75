"""The answer's tokens as they arrive: the part of each agent reply that is its final answer.

Fed the run's ``model_start`` / ``token`` events (the agent's own model calls), it returns the
new answer text to send. A chat-native agent (tool calling) answers in the reply's text, so
all of it streams; a text agent's reply streams from its ``Final Answer:`` on, or from the
``action_input`` string of a ``{"action": "Final Answer", ...}`` blob. Its thoughts and actions
never stream. A word still arriving that may become a key is held back, so a key cut across
tokens is redacted whole.
:meth:`AnswerStream.rest` tops the stream up with what the run's answer adds at the end.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from agentcli.answers import Given, settled
from agentcli.redact import open_secret, redact

_MARKER = re.compile(r"final answer\s*:\s*", re.I)
_BLOB = re.compile(r'"action"\s*:\s*"final answer"\s*,\s*"action_input"\s*:\s*"', re.I)
_STRING_BODY = re.compile(r'(?:[^"\\]|\\u[0-9a-fA-F]{4}|\\[^u])*')  # up to a quote or a cut escape
_SEPARATOR = "\n\n"  # between the streamed texts of two replies


class AnswerStream:
    """Turns an agent's streamed replies into answer deltas (redacted)."""

    def __init__(self, *, native: bool, env: Mapping[str, str], given: Given | None = None
                 ) -> None:
        self.native = native
        self.env = env
        # what the answer rule judges against: text streams only once it adds something
        # (agentcli.answers.settled); the rest comes with the run's answer (``rest``)
        self.given = given
        self.sent = ""  # everything sent so far
        self.reply = ""  # what this reply sent (the last reply is the answer's)
        self._raw = ""  # this reply's text so far
        self._done = 0  # characters of this reply's answer part already sent

    def start(self) -> None:
        """A new reply of the agent begins."""
        self._raw, self._done, self.reply = "", 0, ""

    def token(self, text: str) -> str:
        """The answer text this token makes sendable ("" while none is)."""
        self._raw += text
        answer = self._answer()
        if answer is None:
            return ""
        cut = min(len(answer) - open_secret(answer, self.env), self._settled(answer))
        if cut <= self._done:
            return ""
        piece = answer[self._done:cut]
        if not self.reply:  # the first piece of this reply: drop leading space
            piece = piece.lstrip()
            if not piece:
                return ""
        self._done = cut
        return self._send(redact(piece, self.env))

    def end(self) -> str:
        """The reply is complete: what was held back of its answer."""
        answer = self._answer()
        cut = 0 if answer is None else self._settled(answer, whole=True)
        if answer is None or cut <= self._done:
            return ""
        piece = answer[self._done:cut]
        self._done = cut
        return self._send(redact(piece.rstrip() if self.reply else piece.strip(), self.env))

    def rest(self, content: str) -> str:
        """What the run's final ``content`` adds to the streamed last reply: its remainder
        when the reply streamed its beginning, all of it when the reply streamed nothing."""
        if not self.reply:
            return self._send(content) if content else ""
        if content.startswith(self.reply):
            return content[len(self.reply):]
        self.reply = ""  # what streamed was no answer (the rule refused it): set the rest apart
        return self._send(content)

    def _settled(self, answer: str, *, whole: bool = False) -> int:
        return len(answer) if self.given is None else settled(answer, self.given, whole=whole)

    def _send(self, text: str) -> str:
        if not text:
            return ""
        # another reply streamed before this one's first text: set this one apart
        out = _SEPARATOR + text if not self.reply and self.sent else text
        self.reply += text
        self.sent += out
        return out

    def _answer(self) -> str | None:
        """This reply's answer part so far (None: no answer in it yet)."""
        if self.native:
            return self._raw
        blob = _BLOB.search(self._raw)
        if blob is not None:
            return _json_prefix(self._raw[blob.end():])
        marker = _MARKER.search(self._raw)
        if marker is None or self._raw.lstrip().startswith(("{", "```")):
            return None
        return self._raw[marker.end():]


def _json_prefix(text: str) -> str:
    """The decoded part of a JSON string body that has arrived (up to its closing quote; an
    escape still arriving is left for later)."""
    body = _STRING_BODY.match(text)
    try:
        decoded: str = json.loads(f'"{body.group() if body else ""}"')
    except ValueError:
        return ""
    return decoded
