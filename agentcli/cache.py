"""An optional SQLite response cache, as a chat-model wrapper.

The key is the SHA-256 of the model name, the request (messages, stop, tools) and the
parameters, so any change to the prompt misses. A hit is reported as
``on_text(kind="cache_hit")`` and carries zero usage (it cost nothing).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.events import notify
from agentcli.models.base import BaseChatModel, TokenSink, WrapperModel
from agentcli.models.replay import request_key, request_record, result_of, result_record
from agentcli.paths import cache_dir
from agentcli.redact import redact_data
from agentcli.schema import ChatRequest, ChatResult, Usage


def default_cache_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/agentcli/responses.sqlite`` (``~/.cache`` by default)."""
    return cache_dir(env) / "responses.sqlite"


def cache_key(model: str, request: ChatRequest, params: Mapping[str, object]) -> str:
    """The SHA-256 hex digest identifying one request."""
    return request_key({"model": model, **request_record(request), "params": params})


def _open(path: Path) -> sqlite3.Connection:
    """The cache database, created if missing; a directory or a corrupt file is a ConfigError."""
    db: sqlite3.Connection | None = None
    try:
        if path.is_dir():
            raise ConfigError(f"the response cache {path} is a directory; point AGENT_CACHE_PATH "
                              "(cache_path) at a file, or pass --no-cache")
        from agentcli.sqlite_wal import create_private

        create_private(path)  # prompts and answers: the owner's only
        db = sqlite3.connect(str(path), check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                   "result TEXT, created REAL)")
        db.commit()
        return db
    except (OSError, sqlite3.Error) as err:
        if db is not None:
            db.close()
        raise ConfigError(f"cannot use the response cache {path}: {err}; delete the file or "
                          "pass --no-cache") from None


class CachedChatModel(WrapperModel):
    """Answers repeated requests from SQLite; misses go to ``inner`` and are stored."""

    def __init__(self, inner: BaseChatModel, path: str | Path, *,
                 params: Mapping[str, object] | None = None) -> None:
        super().__init__(inner)
        self.params = dict(params or {})  # e.g. temperature: part of the key
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = _open(self.path)

    def _hit(self, key: str, on_token: TokenSink | None) -> ChatResult | None:
        """The stored reply for ``key`` (its text replayed to ``on_token``), or None."""
        with self._lock:
            row = self._db.execute("SELECT result FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        notify("cache_hit", "response served from cache", key=key[:16])
        if on_token is not None and data["text"]:
            on_token(data["text"])
        return replace(result_of(data, data.get("model", "")), usage=Usage())  # cost nothing

    def _put(self, key: str, result: ChatResult) -> None:
        # What is kept on disk is redacted; the caller still gets the reply as the model sent it.
        record = {**result_record(result), "model": result.model}
        blob = json.dumps(redact_data(record), ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, model, result, created) "
                             "VALUES (?, ?, ?, ?)", (key, self.name, blob, time.time()))
            self._db.commit()

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """A cached reply, or the inner model's (then stored)."""
        key = cache_key(self.name, request, {**self.params, **request.params()})
        hit = self._hit(key, on_token)
        if hit is not None:
            return hit
        result = await self.inner.arequest(request, on_token)
        self._put(key, result)
        return result

    def close(self) -> None:
        """Close the database and the inner model."""
        with self._lock:
            self._db.close()
        self.inner.close()
