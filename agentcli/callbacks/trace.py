"""The JSONL trace writer: one line per callback event, secrets redacted, flushed per line.

Each line: ``{"ts", "event", "run_id", "parent_run_id", ...payload}``, the payload holding
``call_run_id``/``call_parent_run_id``: the chain, model call or tool call the event belongs
to and its parent (:mod:`agentcli.callbacks.run_ids`). Redaction is
:func:`agentcli.redact.redact` (known secret values and key-shaped strings).

A run a limit stopped has no answer: its ``agent_finish`` and ``chain_end`` lines say
``"answer": null`` and the stop reason, never the executor's placeholder sentence. A run
whose model answered when asked once more after the stop gets a ``text`` line of kind
``recovered`` before its answer.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from agentcli.callbacks.base import BaseCallbackHandler, legacy_form
from agentcli.outcome import real_answer
from agentcli.redact import open_word, redact
from agentcli.schema import FORCE_STOP_MESSAGE, stop_words

if TYPE_CHECKING:
    from agentcli.events import RunEvent


def _plain(value: object) -> object:
    """A JSON-ready form of events' arguments (dataclasses, messages, exceptions)."""
    if isinstance(value, BaseException):
        return {"type": type(value).__name__, "message": str(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)


# A line's key for an event's first argument: the name its hook gives that argument
_ARG_NAMES = {name: list(inspect.signature(hook).parameters)[1]
              for name, hook in vars(BaseCallbackHandler).items() if name.startswith("on_")}


def is_placeholder(output: str | None) -> bool:
    """Whether a stopped run's "answer" is only the executor's stand-in (no answer at all)."""
    text = (output or "").strip()
    return not text or text == FORCE_STOP_MESSAGE


def recovered_text(reason: str) -> str:
    """The trace's words for an answer the model gave after a limit stopped the loop."""
    return f"Recovered: {stop_words(reason)}; asked once more, the model gave its answer."


class TraceHandler(BaseCallbackHandler):
    """Writes every callback event to a JSONL file (appending), one flushed line each."""

    def __init__(
        self, path: str | Path | IO[str], *, env: Mapping[str, str] | None = None
    ) -> None:
        if isinstance(path, str | Path):
            self._fh: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
            self._owned = True
        else:
            self._fh = path
            self._owned = False
        self._env = dict(os.environ if env is None else env)
        self._lock = threading.Lock()
        self._tokens: dict[object, str] = {}  # per run: streamed text held until a word ends
        self._stops: dict[object, str] = {}  # per run: the limit that stopped its loop

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Write the event as one line, under its LangChain-style name (the file's format)."""
        form = legacy_form(event)
        if form is None:
            return
        hook, args, extra = form
        run = kw.get("run_id")
        if event.kind == "limit":
            self._stops[run] = event.reason
        elif event.kind == "finish" and run in self._stops:
            reason = self._stops[run]
            if is_placeholder(event.finish.output):
                args = ({"return_values": {"output": None}, "log": ""},)
                extra = {**extra, "answer": None, "stop_reason": reason}
            else:
                self.write("on_text", (recovered_text(reason),),
                           {**kw, "kind": "recovered", "reason": reason})
        elif event.kind == "end":
            self._stops.pop(run, None)
            args = ({**event.result.to_dict(), "answer": real_answer(event.result)},)
        self.write(hook, args, {**kw, **extra})

    def write(self, event: str, args: tuple[object, ...], kw: dict[str, object]) -> None:
        """Write one event line. Tokens are written a whole word at a time, so that a key
        cut across tokens is redacted."""
        run = kw.get("run_id")
        with self._lock:
            held = self._tokens.pop(run, "")
            if event == "on_llm_new_token" and args:
                held += str(args[0])
                ready = len(held) - open_word(held)
                args, self._tokens[run] = (held[:ready],), held[ready:]
                if ready <= 0:
                    return
            elif held:
                self._line("on_llm_new_token", (held,), {"run_id": run})
            self._line(event, args, kw)

    def _line(self, event: str, args: tuple[object, ...], kw: dict[str, object]) -> None:
        record: dict[str, object] = {
            "ts": round(time.time(), 6),
            "event": event.removeprefix("on_"),
            "run_id": kw.pop("run_id", None),
            "parent_run_id": kw.pop("parent_run_id", None),
        }
        if event == "on_tool_start" and len(args) == 2:
            record["tool"], record["tool_input"] = _plain(args[0]), _plain(args[1])
        elif args:
            record[_ARG_NAMES.get(event, "args")] = _plain(args[0])
        record.update({k: _plain(v) for k, v in kw.items()})
        line = redact(json.dumps(record, ensure_ascii=False, default=repr), self._env)
        self._fh.write(line + "\n")  # under the caller's lock
        self._fh.flush()

    def close(self) -> None:
        """Write any held-back tokens; close the file if this handler opened it."""
        with self._lock:
            for run, held in self._tokens.items():
                if held and not self._fh.closed:
                    self._line("on_llm_new_token", (held,), {"run_id": run})
            self._tokens.clear()
        if self._owned and not self._fh.closed:
            self._fh.close()


