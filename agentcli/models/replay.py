"""Record/replay: save each request/response pair to a cassette, answer from it later."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError, ReplayMissError
from agentcli.files import write_atomic
from agentcli.models.base import BaseChatModel, TokenSink, WrapperModel, cut_at_stop
from agentcli.redact import redact_data
from agentcli.schema import ChatRequest, ChatResult, ToolCall, Usage

CASSETTE_VERSION = 1


def request_record(request: ChatRequest) -> dict[str, Any]:
    """The part of a request that decides the answer (model parameters excluded)."""
    return {"messages": [m.to_openai() for m in request.messages],
            "stop": list(request.stop) or None, "tools": list(request.tools) or None}


def request_key(record: Mapping[str, object]) -> str:
    """A stable hash of a request record (the cassette's, the response cache's)."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                           default=repr)
    return hashlib.sha256(canonical.encode()).hexdigest()


def result_record(result: ChatResult) -> dict[str, Any]:
    """A JSON-ready response record."""
    return {
        "text": result.text,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                       for c in result.tool_calls],
        "finish_reason": result.finish_reason,
        "usage": {"prompt_tokens": result.usage.prompt_tokens,
                  "completion_tokens": result.usage.completion_tokens},
    }


def result_of(record: dict[str, Any], model: str) -> ChatResult:
    """The result a response record (:func:`result_record`) holds."""
    usage = record.get("usage") or {}
    return ChatResult(
        text=record.get("text", ""),
        tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"])
                         for c in record.get("tool_calls", [])),
        finish_reason=record.get("finish_reason"),
        usage=Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
        model=model,
    )


def load_cassette(path: Path) -> dict[str, Any]:
    """Read and check a cassette file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"replay cassette {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"replay cassette {path} is a directory; give the cassette file "
                          "written by --record") from None
    except OSError as err:
        raise ConfigError(f"cannot read replay cassette {path}: {err.strerror}") from None
    except (ValueError, RecursionError) as err:
        raise ConfigError(f"replay cassette {path} is not valid JSON: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise ConfigError(f"replay cassette {path} has no 'interactions' list")
    for number, item in enumerate(data["interactions"], 1):
        if not (isinstance(item, dict) and isinstance(item.get("request"), dict)
                and isinstance(item.get("response"), dict)
                and isinstance(item["response"].get("text", ""), str)
                and isinstance(item["response"].get("tool_calls", []), list)):
            raise ConfigError(f"replay cassette {path}: interaction {number} is not a "
                              "{'request': {...}, 'response': {...}} pair; record it again")
    return data


def check_writable(path: Path) -> None:
    """Fail early, with a clear message, when a cassette cannot be written at ``path``."""
    if path.is_dir():
        raise ConfigError(f"--record {path} is a directory; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create the folder for --record {path}: "
                          f"{err.strerror or err}") from None


class ReplayChatModel(BaseChatModel):
    """Answers each request from a cassette; an unrecorded request is a clear error."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        data = load_cassette(self.path)
        self.name = f"replay:{data.get('model', self.path.name)}"
        self._answers: dict[str, list[dict[str, Any]]] = {}
        for item in data["interactions"]:
            key = request_key(redact_data(item["request"]))
            self._answers.setdefault(key, []).append(item["response"])
        self._lock = threading.Lock()
        self.calls = 0

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """The recorded answer to this exact request."""
        # Cassettes hold redacted requests (see RecordingChatModel): compare like with like.
        key = request_key(redact_data(request_record(request)))
        with self._lock:
            self.calls += 1
            queue = self._answers.get(key)
            if not queue:
                raise ReplayMissError(
                    f"replay cassette {self.path} has no recorded answer for request "
                    f"#{self.calls} (the prompt differs from the recording); record it again "
                    "with --record",
                    provider="replay",
                )
            record = queue.pop(0) if len(queue) > 1 else queue[0]
        result = result_of(record, self.name)
        text, _ = cut_at_stop(result.text, request.stop)
        if on_token is not None and text:
            on_token(text)
        return result if text == result.text else ChatResult(
            text, result.tool_calls, result.finish_reason, result.usage, result.model
        )


class RecordingChatModel(WrapperModel):
    """Wraps a model and appends each request/response pair to a cassette, written atomically."""

    def __init__(self, inner: BaseChatModel, path: str | Path) -> None:
        super().__init__(inner)
        self.path = Path(path)
        check_writable(self.path)
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {
            "version": CASSETTE_VERSION, "model": inner.name, "interactions": []
        }

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """Call the wrapped model and record the pair."""
        result = await self.inner.arequest(request, on_token)
        with self._lock:
            # A cassette is a file people share: secrets are redacted before it is written.
            self._data["interactions"].append(
                {"request": redact_data(request_record(request)),
                 "response": redact_data(result_record(result))}
            )
            try:
                write_atomic(self.path,
                             json.dumps(self._data, indent=2, ensure_ascii=False) + "\n")
            except OSError as err:
                raise ConfigError(f"cannot write the cassette {self.path}: "
                                  f"{err.strerror or err}") from None
        return result
