"""The JSONL trace writer: one line per callback event, secrets redacted, flushed per line.

Each line: ``{"ts", "event", "run_id", "parent_run_id", ...payload}``. Redaction removes the
value of every environment variable whose name ends in ``_API_KEY``, ``_TOKEN`` or
``_SECRET``, and anything shaped like ``sk-...`` or ``Bearer ...``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from agentcli.callbacks.base import BaseCallbackHandler

_SECRET_NAMES = ("_API_KEY", "_TOKEN", "_SECRET")
_PATTERNS = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+[A-Za-z0-9_\-.=:/+]{6,}")
REDACTED = "***"


def secret_values(env: Mapping[str, str]) -> list[str]:
    """Values of secret-looking environment variables, longest first."""
    values = {v for k, v in env.items() if k.upper().endswith(_SECRET_NAMES) and len(v) >= 4}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    """Replace known secret values and key-shaped strings with ``***``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return _PATTERNS.sub(lambda m: "Bearer ***" if m[0][:1] in "Bb" else REDACTED, text)


def _plain(value: Any) -> Any:
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


_ARG_NAMES = {
    "on_chain_start": "inputs", "on_chain_end": "outputs", "on_chain_error": "error",
    "on_llm_start": "messages", "on_llm_new_token": "token", "on_llm_end": "result",
    "on_llm_error": "error", "on_agent_action": "action", "on_agent_finish": "finish",
    "on_tool_start": "tool", "on_tool_end": "observation", "on_tool_error": "error",
    "on_text": "text",
}


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
        self._secrets = secret_values(os.environ if env is None else env)
        self._lock = threading.Lock()

    def write(self, event: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
        """Write one event line."""
        record: dict[str, Any] = {
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
        line = redact(json.dumps(record, ensure_ascii=False, default=repr), self._secrets)
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()

    def close(self) -> None:
        """Close the file if this handler opened it."""
        if self._owned and not self._fh.closed:
            self._fh.close()


def _hook(name: str) -> Any:
    def hook(self: TraceHandler, *args: Any, **kw: Any) -> None:
        self.write(name, args, dict(kw))

    hook.__name__ = name
    hook.__doc__ = f"Trace ``{name}``."
    return hook


for _name in _ARG_NAMES:
    setattr(TraceHandler, _name, _hook(_name))
