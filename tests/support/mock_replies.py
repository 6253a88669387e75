"""What the mock server sends: scripted replies and faults, and how a reply is cut into
stream chunks the way real servers cut them."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    delay: float = 0.0
    usage: dict[str, int] | None = None
    chunk_delay: float = 0.0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Reply:
        unknown = set(spec) - {"text", "tool_calls", "delay", "usage", "chunk_delay"}
        if unknown:
            raise ValueError(f"unknown reply keys: {sorted(unknown)}")
        return cls(spec.get("text"), list(spec.get("tool_calls") or []),
                   float(spec.get("delay", 0.0)), spec.get("usage"),
                   float(spec.get("chunk_delay", 0.0)))


@dataclass
class Fault:
    kind: str
    times: int
    status: int | None = None
    retry_after: str | None = None
    delay: float | None = None
    message: str | None = None
    text: str | None = None


def tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def prompt_chars(body: dict[str, Any]) -> int:
    total = 0
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        total += len(content if isinstance(content, str) else json.dumps(content or ""))
    return total


def tool_call(spec: dict[str, Any], index: int) -> dict[str, Any]:
    args = spec.get("arguments", {})
    return {
        "id": spec.get("id") or f"call_mock_{index}",
        "type": "function",
        "function": {"name": spec["name"],
                     "arguments": args if isinstance(args, str) else json.dumps(args)},
    }


def split_text(text: str) -> list[str]:
    """Pieces of up to a few characters whose concatenation is ``text``: like a real
    tokenizer, words and keys are cut mid-way."""
    return re.findall(r"\S{1,4}\s*|\s+", text)


def split_args(args: str, parts: int = 3) -> list[str]:
    """JSON argument text cut into a few pieces, as real servers stream it."""
    if len(args) < parts:
        return [args] if args else []
    step = math.ceil(len(args) / parts)
    return [args[i: i + step] for i in range(0, len(args), step)]
