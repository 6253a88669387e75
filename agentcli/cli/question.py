"""The question of ``agent run``: the argument, stdin (``-``), or both (piped text + question).

With no question at all, piped text is the question (``echo "2+2?" | agent``, as ``llm``).

``cat notes.txt | agent run "summarize this"`` sends the piped text followed by the question,
as ``llm`` does. Piped input is context the user gave: it is read to its end however slowly it
comes (``pytest 2>&1 | agent run "why did this fail?"``; Ctrl-C still stops), and never past
:data:`MAX_STDIN_BYTES`. Stdin is not read when it is a terminal, and ``--no-stdin`` runs with
an open stdin left unread (a CI runner's, say).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from typing import IO

from agentcli.errors import ConfigError

MAX_STDIN_BYTES = 1024 * 1024  # piped input beyond this is refused, never read on
_CHUNK = 64 * 1024
# A pipe still open after this many seconds gets one line on a terminal's stderr saying what
# agentcli waits for (as `sort` or `jq` would be silent, but they are not about to call a model)
HINT_AFTER = 2.0
WAITING_HINT = ("Reading stdin until it ends (piped input comes before the question); "
                "Ctrl-C cancels, --no-stdin skips it.")


def read_text(stream: IO[str], limit: int = MAX_STDIN_BYTES) -> str:
    """``stream`` to its end as text, at most ``limit`` bytes: more, binary data (a NUL, seen
    as it arrives) or invalid UTF-8 is a usage error, not a crash or an endless read."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # an in-memory text stream (tests, embedding)
        text = stream.read(limit + 1)
        if len(text.encode("utf-8")) > limit:
            raise _too_long(limit)
        return text
    chunks: list[bytes] = []
    size = 0
    hint = _waiting_hint()
    try:
        while True:
            chunk = buffer.read1(_CHUNK) if hasattr(buffer, "read1") else buffer.read(_CHUNK)
            if not chunk:
                break
            if b"\0" in chunk:
                raise ConfigError("stdin holds binary data (NUL bytes), not a question; "
                                  "pipe text")
            size += len(chunk)
            if size > limit:
                raise _too_long(limit)
            chunks.append(chunk)
    finally:
        if hint is not None:
            hint.cancel()
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"stdin is not UTF-8 text (byte {err.start + 1}); convert it, e.g. "
                          "with iconv -t utf-8") from None


def _waiting_hint() -> threading.Timer | None:
    """A timer that says :data:`WAITING_HINT` once if stdin is still open after
    :data:`HINT_AFTER` seconds; only for a person watching (stderr a terminal), never into a
    log or a pipe."""
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):
        return None

    def say() -> None:
        sys.stderr.write(WAITING_HINT + "\n")
        sys.stderr.flush()

    timer = threading.Timer(HINT_AFTER, say)
    timer.daemon = True
    timer.start()
    return timer


def _too_long(limit: int) -> ConfigError:
    return ConfigError(f"stdin sent more than {limit // 1024 // 1024} MiB; pipe less (e.g. "
                       "through tail -c 500000), or pass --no-stdin to leave it unread")


def stdin_is_piped(stream: IO[str] | None = None) -> bool:
    """Whether stdin is a pipe or a redirected file (not a terminal, not ``/dev/null``).

    This decides whether a bare ``agent`` (no question) asks the piped text or shows help.
    """
    stream = sys.stdin if stream is None else stream
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no real file: an in-memory stream
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def piped_text(stream: IO[str] | None) -> str | None:
    """What was piped into ``stream`` (read to its end), or None for a terminal or no stream."""
    try:
        if stream is None or stream.closed or stream.isatty():
            return None
    except ValueError:  # a stream closed under us
        return None
    text = read_text(stream)
    return text if text.strip() else None


def read_question(question: str, stream: IO[str] | None) -> str:
    """The question to ask: ``-`` reads it from ``stream``; otherwise piped text comes first.

    ``stream`` is None when stdin is not to be read (``--no-stdin``).
    """
    if question == "-":
        if stream is None or stream.isatty():
            raise ConfigError("QUESTION is '-' but nothing is piped in; pipe a question or "
                              "pass it as an argument")
        question = read_text(stream)
    elif question.strip():
        piped = piped_text(stream)
        if piped is not None:
            question = f"{piped.strip()}\n\n{question.strip()}"
    if not question.strip():
        raise ConfigError("the question is empty; pass one, e.g. agent run \"What is 2+2?\"")
    return question.strip()
