"""One-line, terminal-safe messages from server errors and stderr logs."""

from __future__ import annotations

from pathlib import Path

from agentcli.textsafe import safe_text


def clean(text: str, limit: int = 600) -> str:
    """Neutralize control characters (:func:`~agentcli.textsafe.safe_text`: escape sequences,
    CR tricks, direction overrides) and bound the length."""
    text = safe_text(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def root_cause(err: BaseException) -> BaseException:
    """The first leaf of nested exception groups (anyio wraps transport failures in them)."""
    while isinstance(getattr(err, "exceptions", None), tuple) and err.exceptions:  # type: ignore[attr-defined]
        err = err.exceptions[0]  # type: ignore[attr-defined]
    return err


def describe_error(err: BaseException) -> str:
    """``Type: message`` of the root cause, on one line."""
    cause = root_cause(err)
    text = " ".join(str(cause).split())
    if isinstance(cause, OSError) and cause.strerror:
        target = cause.filename if cause.filename is not None else ""
        text = f"{cause.strerror}{': ' + str(target) if target else ''}"
    if type(cause).__name__ in ("MCPError", "McpError") and text:  # the server's own words
        return text
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


def tail(path: Path, offset: int = 0, lines: int = 3) -> str:
    """The last non-empty lines written to ``path`` after ``offset``, joined with `` | ``
    (from its last 4,000 bytes: a log is never read whole)."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(offset, fh.seek(0, 2) - 4000))
            data = fh.read(4000)
    except OSError:
        return ""
    kept = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return clean(" | ".join(kept[-lines:]), 300)
