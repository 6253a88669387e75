"""The question of ``agent run``: the argument, stdin (``-``), or both (piped text + question).

``cat notes.txt | agent run "summarize this"`` sends the piped text followed by the question,
as ``llm`` does. Stdin is read only when it is not a terminal, and a pipe that sends nothing
(a CI runner's stdin left open, say) is given up on after :data:`STDIN_WAIT` seconds, so a run
never hangs waiting for input nobody will send.
"""

from __future__ import annotations

import io
import os
import select
import stat
from collections.abc import Callable
from typing import IO

from agentcli.errors import ConfigError

STDIN_WAIT = 1.0  # seconds a silent pipe gets to send its first byte


def _pipe_is_silent(stream: IO[str], wait: float) -> bool:
    """True when ``stream`` is a pipe or socket that sent nothing (not even EOF) in ``wait``."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return False  # an in-memory stream (tests, embedding): reading it cannot block
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return True
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False  # a file or /dev/null: read it, it ends
    ready, _, _ = select.select([fd], [], [], wait)
    return not ready


def read_text(stream: IO[str]) -> str:
    """All of ``stream`` as text: invalid UTF-8 or binary data is a usage error, not a crash."""
    buffer = getattr(stream, "buffer", None)
    data: str | bytes = buffer.read() if buffer is not None else stream.read()
    if isinstance(data, str):
        return data
    if b"\0" in data:
        raise ConfigError("stdin holds binary data (NUL bytes), not a question; pipe text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"stdin is not UTF-8 text (byte {err.start + 1}); convert it, e.g. "
                          "with iconv -t utf-8") from None


def piped_text(
    stream: IO[str] | None, *, wait: float = STDIN_WAIT,
    notice: Callable[[str], None] | None = None,
) -> str | None:
    """What was piped into ``stream``, or None for a terminal, no stream or a silent pipe."""
    if stream is None or stream.closed:
        return None
    try:
        if stream.isatty():
            return None
    except ValueError:
        return None
    if _pipe_is_silent(stream, wait):
        if notice is not None:
            notice(f"stdin is a pipe that sent nothing in {wait:g} s; asking without it "
                   "(use `agent run -` to wait for the question on stdin)")
        return None
    text = read_text(stream)
    return text if text.strip() else None


def read_question(
    question: str, stream: IO[str] | None, notice: Callable[[str], None] | None = None
) -> str:
    """The question to ask: ``-`` reads it from ``stream``; otherwise piped text comes first."""
    if question == "-":
        if stream is None or stream.isatty():
            raise ConfigError("QUESTION is '-' but nothing is piped in; pipe a question or "
                              "pass it as an argument")
        question = read_text(stream)
    elif question.strip():
        piped = piped_text(stream, notice=notice)
        if piped is not None:
            question = f"{piped.strip()}\n\n{question.strip()}"
    if not question.strip():
        raise ConfigError("the question is empty; pass one, e.g. agent run \"What is 2+2?\"")
    return question.strip()
