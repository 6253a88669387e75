"""The one redaction choke point: secrets never reach a log, a file or the terminal.

Everything agentcli stores or prints that may hold outside text (the run log, sessions,
``--record`` cassettes, the response cache, the trace, batch output, error lines and
``--debug`` tracebacks) goes through :func:`redact`. It removes

* the actual values of secrets it knows: every environment variable whose name says it is a
  secret (:func:`is_secret_name`: ``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ...), values read
  from ``.env`` files (:func:`remember_env`), and values registered by the code that uses
  them (:func:`remember`, e.g. HTTP header values);
* strings shaped like keys (``sk-...``, ``Bearer ...``, GitHub / Slack / AWS / Hugging Face
  token formats), whoever wrote them.

The model itself may see file contents the user allowed; only what is kept or shown is redacted.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "***"
# Names of variables whose values are secrets (also scrubbed from tool subprocesses).
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_API_|AUTH", re.I)
# Values shorter than this are too likely to be ordinary words ("1", "true") to blank out.
_MIN_SECRET = 6
_SHAPES = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{6,}"
    r"|(?i:\bbearer)\s+[A-Za-z0-9_\-.=:/+~]{6,}"
    r"|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,})"
)

_lock = threading.Lock()
# Secrets learnt by any part of the process (a key from the keyring, a header value, a .env
# value, serve's token): process-wide on purpose, as over-redaction is the safe failure: a
# secret one executor knows is hidden from every output, whichever executor prints it.
_remembered: frozenset[str] = frozenset()  # replaced, never changed: see secret_values
# The secrets of the environment last read: (a copy of os.environ's raw mapping, or of the
# dict passed as ``env``, the remembered values then, the secrets). Reading os.environ
# decodes every name (7-14 us, at each answer drawn and each write; serve reads its dict at
# every streamed token); an unchanged environment costs one dict comparison (0.3 us).
# ``os.environ._data`` is a CPython detail: this module is the only place agentcli
# reads one, kept for the row ``bench/redact_env.py`` measures; without ``_data`` (another
# Python) every call takes the public path.
_from_environ: tuple[dict[object, object], frozenset[str], list[str]] | None = None


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for variable names that hold secrets (``*_API_KEY``, ``*_TOKEN``, passwords, ...)."""
    return bool(_SECRET_NAME.search(name))


def _usable(value: str) -> bool:
    value = value.strip()
    return len(value) >= _MIN_SECRET and not value.startswith(("/", "~", "./"))


def remember(values: Iterable[str | None]) -> None:
    """Register secret values (an API key, a header value) so they are always redacted."""
    global _remembered
    with _lock:
        _remembered = _remembered.union(v.strip() for v in values if v and _usable(v))


def remember_env(env: Mapping[str, str | None]) -> None:
    """Register the secret-named values of ``env`` (e.g. a ``.env`` file's contents)."""
    remember(v for k, v in env.items() if is_secret_name(k))


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Every known secret value (remembered, plus the secret-named ones of ``env``), longest
    first so a key containing another is removed whole."""
    global _from_environ
    remembered, known = _remembered, _from_environ
    # The last answer is kept with a copy of what it was read from: os.environ's raw bytes
    # mapping, or a dict handed in (serve's environment, read at every streamed token).
    raw = getattr(os.environ, "_data", None) if env is None else env
    if not isinstance(raw, dict):
        raw = None
    if raw is not None and known is not None and known[1] is remembered and known[0] == raw:
        return list(known[2])
    source = os.environ if env is None else env
    # Names first: only secret-named values are read (os.environ decodes each one it reads).
    values = {v.strip() for v in (source[k] for k in source if is_secret_name(k)) if _usable(v)}
    found = sorted(values | remembered, key=len, reverse=True)
    if raw is not None:
        _from_environ = (dict(raw), remembered, list(found))
    return found


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with known secret values and key-shaped strings replaced by ``***``."""
    return _redact(text, secret_values(env))


def _redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _SHAPES.sub(lambda m: "Bearer ***" if m[0][:1] in "Bb" else REDACTED, text)


# The last word of streamed text if no space has ended it yet ("Bearer <token>" is one word).
_OPEN_WORD = re.compile(r"(?:(?i:\bbearer)\s+)?\S+\Z|(?i:\bbearer)\s+\Z")
_LONGEST_WORD = 512  # a longer unbroken run is let through as it streams


def open_word(text: str) -> int:
    """How many trailing characters of streamed ``text`` to hold back before redacting it:
    a key cut across tokens is redacted only once it has arrived whole."""
    word = _OPEN_WORD.search(text[-_LONGEST_WORD:])
    return len(word[0]) if word else 0


# How each key shape of _SHAPES begins (lowercased): a word that may still become one is held.
_SHAPE_STARTS = ("sk-", "bearer", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
                 "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "hf_", "akia", "aiza")


def open_secret(text: str, env: Mapping[str, str] | None = None) -> int:
    """Like :func:`open_word`, but 0 when the open word cannot turn into a secret whatever
    follows (no key shape and no known secret value begins in it), so streamed text is held
    back only when it has to be."""
    held = open_word(text)
    word = text[len(text) - held:]
    lowered = word.lower()
    for i in range(len(word)):
        tail = lowered[i:]
        at_boundary = i == 0 or not (word[i - 1].isalnum() or word[i - 1] == "_")
        if at_boundary and any(s.startswith(tail) or tail.startswith(s)
                               for s in _SHAPE_STARTS):
            return held
    if any(secret.startswith(word[i:]) for secret in secret_values(env)
           for i in range(len(word))):
        return held
    return 0


def redact_data(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """:func:`redact` applied to every string inside JSON-like data (dicts, lists, tuples)."""
    return Scrubber().refresh(env).data(value)


class Scrubber:
    """:func:`redact` and :func:`redact_data` for the values of one write, with the known
    secrets read once (:meth:`refresh`) and each short string's result kept: a chat session's
    memory state holds the same turns at every write, so a turn's cost does not grow with the
    session. Kept results are dropped whenever the set of secrets changes."""

    _MAX_KEPT = 8192  # strings remembered
    _MAX_LEN = 4096  # longer strings (a large observation) are redacted every time

    def __init__(self) -> None:
        self._secrets: list[str] | None = None
        self._kept: dict[str, str] = {}
        self._json: dict[tuple[object, ...], str] = {}
        self._prefix: tuple[list[list[object]], str] = ([], "")  # items seen, their JSON

    def refresh(self, env: Mapping[str, str] | None = None) -> Scrubber:
        """Read the secrets now (environment and remembered values); returns ``self``."""
        secrets = secret_values(env)
        if secrets != self._secrets:
            self._secrets, self._kept, self._json = secrets, {}, {}
            self._prefix = ([], "")
        return self

    def json_items(self, items: list[Any]) -> str:
        """``", ".join(json.dumps(self.data(i)) for i in items)``; when the items are lists
        of strings (a memory state's turns), the part for the items already seen last time
        (an equal prefix) is reused, so one more turn costs one more encoding."""
        known, joined = self._prefix
        n = len(known)
        if n > len(items) or items[:n] != known:
            known, joined, n = [], "", 0
        new = items[n:]
        if not all(isinstance(i, list | tuple) and all(type(x) is str for x in i) for i in new):
            self._prefix = ([], "")
            return ", ".join([self.json_of(i) if isinstance(i, list | tuple)
                              else json.dumps(self.data(i)) for i in items])
        if new:  # the known items grow in place: nothing seen is copied or encoded again
            added = [self.json_of(i) for i in new]
            known += [list(i) for i in new]
            joined = ", ".join([joined, *added] if joined else added)
            self._prefix = (known, joined)
        return joined

    def json_of(self, items: list[object] | tuple[object, ...]) -> str:
        """``json.dumps(self.data(items))``, encoded once for a list of strings (a chat
        turn)."""
        if not all(type(x) is str for x in items):  # 1 == 1.0 == True: not a key
            return json.dumps(self.data(items))
        key = tuple(items)
        out = self._json.get(key)
        if out is None:
            if len(self._json) >= self._MAX_KEPT:
                self._json = {}
            out = self._json[key] = json.dumps(self.data(items))
        return out

    def text(self, text: str) -> str:
        """:func:`redact` with the secrets of the last :meth:`refresh`."""
        if self._secrets is None:
            self.refresh()
        if len(text) > self._MAX_LEN:
            return _redact(text, self._secrets or [])
        out = self._kept.get(text)
        if out is None:
            if len(self._kept) >= self._MAX_KEPT:
                self._kept = {}
            out = self._kept[text] = _redact(text, self._secrets or [])
        return out

    def data(self, value: Any) -> Any:
        """:func:`redact_data` with the secrets of the last :meth:`refresh`."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, int | float):  # most leaves: no ABC check
            return value
        if isinstance(value, dict | Mapping):  # a dict is told apart without the ABC's check
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value
