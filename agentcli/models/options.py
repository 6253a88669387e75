"""Model options (``-o KEY VALUE`` and ``model_options:``): validated, then sent in every request.

The rule: the well-known sampling keys are checked (range and type); any other field of the
request body must be written ``extra.NAME`` (``-o extra.enable_thinking false``) and is passed
through as given. A bare unknown key is an error, so a typo never silently does nothing.
Fields agentcli sets itself (``model``, ``messages``, ``tools``, ...) cannot be overridden.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping

EXTRA = "extra."
_RESERVED = frozenset({"model", "messages", "stream", "stream_options", "tools", "stop"})


class OptionError(ValueError):
    """A model option that is unknown or out of range (the message is complete)."""


def _number(lo: float, hi: float) -> Callable[[object], float]:
    def check(value: object) -> float:
        if isinstance(value, bool):
            raise ValueError
        number = float(str(value))
        if not lo <= number <= hi:
            raise ValueError
        return number

    return check


def _integer(minimum: int | None) -> Callable[[object], int]:
    def check(value: object) -> int:
        if isinstance(value, bool | float):
            raise ValueError
        number = int(str(value).strip())
        if minimum is not None and number < minimum:
            raise ValueError
        return number

    return check


# name -> (check, what is allowed)
KNOWN: dict[str, tuple[Callable[[object], object], str]] = {
    "temperature": (_number(0.0, 2.0), "a number from 0 to 2"),
    "top_p": (_number(0.0, 1.0), "a number from 0 to 1"),
    "max_tokens": (_integer(1), "a positive integer (tokens per reply)"),
    "seed": (_integer(None), "an integer"),
    "frequency_penalty": (_number(-2.0, 2.0), "a number from -2 to 2"),
    "presence_penalty": (_number(-2.0, 2.0), "a number from -2 to 2"),
}


def _unknown(key: str) -> OptionError:
    close = difflib.get_close_matches(key, list(KNOWN), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return OptionError(
        f"unknown model option {key!r}{hint}; known: {', '.join(KNOWN)}; "
        f"send any other request field as extra.{key}"
    )


def _text_value(text: str) -> object:
    """A value typed on the command line: JSON when it parses (true, 3, {...}), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def check_option(key: str, value: object) -> tuple[str, object]:
    """Validate one option; returns its canonical key (``extra.NAME`` kept) and value."""
    key = str(key).strip()
    if key.startswith(EXTRA):
        name = key.removeprefix(EXTRA)
        if not name:
            raise OptionError("extra. needs a field name, e.g. extra.enable_thinking")
        if name in _RESERVED:
            raise OptionError(f"{key}: {name!r} is set by agentcli and cannot be overridden")
        if name not in KNOWN:
            return key, value
        key = name  # a known option behind extra. is checked like the option itself
    if key not in KNOWN:
        raise _unknown(key)
    check, allowed = KNOWN[key]
    try:
        return key, check(value)
    except (TypeError, ValueError):
        raise OptionError(f"model option {key!r} must be {allowed}, got {value!r}") from None


def check_options(raw: object) -> dict[str, object]:
    """Validate a mapping of options; a nested ``extra: {NAME: value}`` is flattened."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise OptionError("model_options must be a mapping of option: value")
    out: dict[str, object] = {}
    for key, value in raw.items():
        if key == "extra" and isinstance(value, Mapping):
            out.update(check_option(EXTRA + str(name), inner) for name, inner in value.items())
        else:
            out.update([check_option(str(key), value)])
    return out


def parse_pairs(pairs: list[tuple[str, str]] | None) -> dict[str, object] | None:
    """``-o KEY VALUE`` pairs as a raw mapping (validated later with the other settings).

    An ``extra.NAME`` value is read as JSON when it parses (``true``, ``3``, ``{...}``).
    """
    if not pairs:
        return None
    return {key: _text_value(value) if key.startswith(EXTRA) else value
            for key, value in pairs}


def effective_options(temperature: float, options: Mapping[str, object]) -> dict[str, object]:
    """Every option a request carries: the ``temperature`` setting, then the model options
    (the fields merged into a request body: ``extra.`` prefixes removed)."""
    return {"temperature": temperature,
            **{key.removeprefix(EXTRA): value for key, value in options.items()}}
