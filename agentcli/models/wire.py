"""The OpenAI chat-completions wire format: reading replies and SSE streams defensively.

Anything a server sends that is not what the format promises becomes a :class:`Failure`
(retryable or not); the model class turns a final one into the user-facing error.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx

from agentcli.models.base import StopStream, cut_at_stop
from agentcli.models.http_pool import finish_body
from agentcli.records import record
from agentcli.schema import ChatChunk, ChatResult, ToolCall, Usage

_NOT_JSON = object()
MAX_EVENT_CHARS = 16 * 1024 * 1024  # one SSE event's data lines together


def _parsed(data: str | bytes) -> Any:
    """``data`` as JSON, or :data:`_NOT_JSON`."""
    try:
        return json.loads(data)
    except ValueError:
        return _NOT_JSON


@record(frozen=False)
class Failure(Exception):
    """One failed attempt: what to tell the user and whether trying again may help."""

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    output_error: bool = False


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def server_message(body: str) -> str:
    """The server's own error text: JSON ``error.message`` or the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str) and err:
            return err
        if data.get("message"):
            return str(data["message"])
    text = " ".join(body.split())
    return text[:200] if text else "(empty body)"


def bad_output(provider: str, what: str) -> Failure:
    """A 200 reply that breaks the format (never retried as is)."""
    return Failure(f"{provider} answered 200 with {what}", status=200, output_error=True)


def parse_response(provider: str, model: str, resp: httpx.Response,
                   stop: Sequence[str] | None) -> ChatResult:
    """A whole (non-streamed) chat-completions reply, read defensively.

    The body's bytes are parsed as they are (JSON is UTF-8: decoding them to text first is
    work for nothing); the text, as the response's charset decodes it, is read only when
    they are not JSON as they are, and for error messages.
    """
    data = _parsed(resp.content)
    if data is _NOT_JSON and (data := _parsed(resp.text)) is _NOT_JSON:
        raise bad_output(provider, f"a body that is not JSON: {resp.text[:200]!r}")
    if not isinstance(data, dict):
        raise bad_output(provider, f"a JSON {type(data).__name__} instead of an object")
    choices = data.get("choices")
    if not choices or not isinstance(choices, list):
        if data.get("error"):
            raise Failure(f"{provider} returned an error: {server_message(resp.text)}",
                          status=resp.status_code)
        raise bad_output(provider, "no choices (empty 'choices' list)")
    choice = choices[0] if isinstance(choices[0], dict) else {}
    content, raw_calls = _parts(provider, choice.get("message") or {}, "'message'")
    text, cut = cut_at_stop(content, stop)
    calls = tuple(ToolCall(id=str(raw.get("id") or f"call_{i}"),
                           name=str(raw["function"].get("name") or ""),
                           arguments=raw["function"]["arguments"])
                  for i, raw in enumerate(raw_calls))
    finish = "stop" if cut else choice.get("finish_reason")
    return ChatResult(text, calls, finish, usage_of(data.get("usage")),
                      str(data.get("model") or model), str(data.get("id") or ""))


def _parts(provider: str, message: object, what: str) -> tuple[str, list[dict[str, Any]]]:
    """The text and the tool calls (each with a ``function`` object, its ``arguments`` as
    JSON text) of a reply's ``message`` or a stream's ``delta``."""
    if not isinstance(message, dict):
        raise bad_output(provider, f"a {what} that is a {type(message).__name__}, "
                                   "not an object")
    content = content_text(message.get("content"))
    if content is None:
        raise bad_output(provider, f"a {what} 'content' that is not text")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
            isinstance(c, dict) and isinstance(c.get("function") or {}, dict) for c in calls):
        raise bad_output(provider, f"{what} 'tool_calls' that are not a list of objects")
    for call in calls:
        fn = call["function"] = dict(call.get("function") or {})
        args = fn.get("arguments")
        if args is None:
            fn["arguments"] = ""
        elif not isinstance(args, str):  # some servers (Ollama) send an object, not JSON text
            fn["arguments"] = json.dumps(args)
    return content, calls


class SSEState:
    """Turns SSE lines into chunks for one attempt, applying stop strings to the text."""

    def __init__(self, provider: str, base_url: str, stop: Sequence[str] | None) -> None:
        self.provider = provider
        self.base_url = base_url
        self.stopper = StopStream(stop)
        self.finished = False  # [DONE] seen, or a stop string cut the text
        self.finish_reason: str | None = None
        self.saw_choice = False
        self.response_id = ""
        self.emitted = False  # a chunk reached the consumer: the request is not resent
        self._data: list[str] = []  # the data lines of an event still open
        self._held = 0  # their characters

    def feed(self, line: str) -> list[ChatChunk]:
        """Chunks carried by one SSE line. An event's ``data:`` lines are joined with newlines
        and the event ends at a blank line (the SSE spec: a JSON value may span lines); a
        lone ``data:`` line that is a whole JSON value (or ``[DONE]``) counts at once, for
        servers that send no blank line between events. Comments and fields are skipped."""
        if line.startswith("data:"):
            value = line[5:].removeprefix(" ")
            if not self._data:
                event = _parsed(value)
                if event is not _NOT_JSON or value.strip() == "[DONE]":
                    return self._event(value, event)
            self._data.append(value)
            self._held += len(value)
            if self._held > MAX_EVENT_CHARS:
                raise bad_output(self.provider,
                                 f"a stream event of more than {MAX_EVENT_CHARS:,} characters")
            return []
        if line.strip() or not self._data:
            return []
        data, self._data, self._held = "\n".join(self._data), [], 0
        return self._event(data, _parsed(data))

    def _event(self, data: str, event: Any) -> list[ChatChunk]:
        """The chunks of one whole event (``data`` its text, ``event`` its JSON)."""
        data = data.strip()
        if data == "[DONE]":
            self.finished = True
            return []
        if event is _NOT_JSON:
            raise bad_output(self.provider, f"a stream event that is not JSON: {data[:200]!r}")
        if not isinstance(event, dict):
            return []
        if event.get("error"):
            raise Failure(f"{self.provider} sent an error in the stream: "
                           f"{server_message(data)}")
        out: list[ChatChunk] = []
        if not self.response_id and isinstance(event.get("id"), str):
            self.response_id = event["id"]  # sent on the finish chunk: no chunk of its own
        choices = event.get("choices") or []
        if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
            raise bad_output(self.provider, "a stream event whose 'choices' are not objects")
        for choice in choices:
            self.saw_choice = True
            out.extend(self._choice_chunks(choice))
        if event.get("usage"):
            out.append(ChatChunk(usage=usage_of(event["usage"])))
        return out

    def _choice_chunks(self, choice: dict[str, Any]) -> Iterator[ChatChunk]:
        content, raw_calls = _parts(self.provider, choice.get("delta") or {}, "stream 'delta'")
        if content and not self.stopper.stopped:
            safe = self.stopper.feed(content)
            if safe:
                yield ChatChunk(text=safe)
            if self.stopper.stopped:
                # Stop reading: the server ignored ``stop`` and what follows is not wanted.
                self.finished = True
                self.finish_reason = "stop"
                yield ChatChunk(finish_reason="stop", response_id=self.response_id)
                return
        for raw in raw_calls:
            fn = raw["function"]
            yield ChatChunk(
                tool_call_index=raw.get("index"),
                tool_call_id=raw.get("id") or None,
                tool_call_name=fn.get("name") or None,
                tool_call_arguments=fn["arguments"],
            )
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
            yield ChatChunk(finish_reason=choice["finish_reason"],
                            response_id=self.response_id)

    def end(self) -> list[ChatChunk]:
        """Held-back text at the end, or a failure when the stream stopped short."""
        last = self.feed("") if self._data else []  # an event with no blank line after it
        emitted = self.emitted or bool(last)
        if not self.finished and self.finish_reason is None:
            where = "in the middle of the stream" if emitted else "before any content"
            raise Failure(
                f"{self.provider} at {self.base_url} ended the stream {where}",
                retryable=True,
            )
        if not self.saw_choice:
            raise bad_output(self.provider, "a stream that holds no choices")
        rest = self.stopper.flush()
        return [*last, ChatChunk(text=rest)] if rest else last


def content_text(content: Any) -> str | None:
    """Message content as text: a string, or a list of ``{"type": "text", "text"}`` parts
    (some servers); None when it is anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(str(p.get("text") or "") for p in content)
    return None


def _count(value: Any) -> int:
    """A token count; servers sometimes send numbers as strings, or junk we ignore."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def usage_of(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(_count(raw.get("prompt_tokens")), _count(raw.get("completion_tokens")))


async def read_sse(resp: httpx.Response, events: SSEState,
                   on_token: Callable[[str], None]) -> list[ChatChunk]:
    """Read an SSE response, passing each chunk's text to ``on_token`` as it comes; all the
    chunks. After a token, whoever it woke (``agent serve``'s stream writing it to its
    client) runs before the next read, which is ~0.2 ms of httpx and httpcore before this
    call waits."""
    chunks: list[ChatChunk] = []
    lines = resp.aiter_lines()  # closed with the response
    async for line in lines:
        told = False
        for chunk in events.feed(line):
            events.emitted = True
            chunks.append(chunk)
            if chunk.text:
                on_token(chunk.text)
                told = True
        if told:
            await asyncio.sleep(0)
        if events.finished:
            if not events.stopper.stopped:  # [DONE]: keep the connection
                await finish_body(lines)
            break
    for chunk in events.end():
        chunks.append(chunk)
        if chunk.text:
            on_token(chunk.text)
    return chunks
