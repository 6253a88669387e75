"""Neutralize control characters in text from files and servers before it reaches a terminal."""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls (ESC starts terminal sequences).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with each control character shown as a visible ``\\xNN`` escape."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
