"""Text from a model, tool, server or file made safe to draw on a terminal.

A model can write ``rm -f victim.txt #\\x1b[2K\\x1b[1G echo hello``: drawn raw, the escape
sequence erases the line and the user sees only ``echo hello``. :func:`safe_text` replaces
every C0/C1 control character (except newline and tab), DEL, and the Unicode direction
overrides with a visible escape such as ``\\x1b``, so what is shown is what will run.
"""

from __future__ import annotations

# Bidirectional overrides/isolates reorder what is drawn ("Trojan source"); zero-width marks hide.
_INVISIBLE = (0x200B, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF)


def _visible(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_TABLE: dict[int, str] = {
    code: _visible(code)
    for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_INVISIBLE)
    if code not in (0x09, 0x0A)
}


def safe_text(text: str) -> str:
    """``text`` with every control character and escape sequence shown as a visible escape."""
    return text.translate(_TABLE)


def safe_line(text: str) -> str:
    """:func:`safe_text` for one-line contexts: newlines and tabs are shown escaped too."""
    return safe_text(text).replace("\n", "\\n").replace("\t", "\\t")


_JSON_TABLE: dict[int, str] = {code: f"\\u{code:04x}" for code in _TABLE if code >= 0x7F}


def safe_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with the characters a terminal obeys written as
    ``\\uXXXX`` escapes: the same data for a parser, nothing for a terminal to act on."""
    return text.translate(_JSON_TABLE)


def display(text: str) -> str:
    """Outside text ready to draw: secrets redacted, controls shown (the trace, answers)."""
    from agentcli.redact import redact

    return safe_text(redact(text))
