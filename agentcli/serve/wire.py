"""The OpenAI chat-completions wire format of ``agent serve``: requests in, bodies and chunks out.

Pure data: no web framework here. :func:`parse_chat` turns a request body into a
:class:`ChatCall` or raises :class:`WireError` (a 4xx with an OpenAI-style error body);
:func:`completion`, :func:`chunk` and :func:`error_body` build what goes back.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping

from agentcli.records import record
from agentcli.schema import Message, Usage, assistant, system, user

SESSION_HEADER = "x-agent-session"  # names a saved conversation; nothing else does
TRACE_HEADER = "x-agent-trace"  # "1": add the run's trace to the answer (streamed or not)
TRACE_FIELD = "agent_trace"  # the request flag and the response field holding the trace
_MAX_SESSION = 128
# A response_format schema's JSON text, at most: checking a schema costs ~3 ms of CPU per
# property (jsonschema's 2020-12 meta-check), so a 3 MB one would hold a worker for a minute.
MAX_SCHEMA_CHARS = 64 * 1024
_HISTORY_ROLES = {"system": system, "developer": system, "user": user, "assistant": assistant}


class WireError(Exception):
    """A request the endpoint refuses: HTTP status, message, OpenAI error type and code."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.code = code
        self.param = param

    def body(self) -> dict[str, object]:
        """The OpenAI-style error body."""
        return error_body(str(self), type=self.type, code=self.code, param=self.param)


@record
class ChatCall:
    """One chat-completions request, as the agent will run it."""

    model: str | None
    question: str  # the last user message
    history: tuple[Message, ...]  # the messages before it (used when no session is named)
    stream: bool = False
    include_usage: bool = False
    want_trace: bool = False
    session: str | None = None
    schema: dict[str, object] | None = None  # response_format: the JSON Schema of the answer


def read_json(raw: bytes) -> object:
    """The request body as JSON; a body that is not JSON, or nested too deep to read, is a
    400 like any other bad body."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise WireError(400, "the request body is not valid JSON (or is nested too deep)",
                        code="invalid_json") from None


def parse_chat(body: object, headers: Mapping[str, str]) -> ChatCall:
    """Check a request body; the last message must be the user's question."""
    if not isinstance(body, dict):
        raise WireError(400, "the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise WireError(400, "`messages` must be a non-empty list of {role, content} objects",
                        param="messages")
    if body.get("tools") or body.get("functions"):
        raise WireError(400, "this endpoint runs the agent's own tools; remove `tools` / "
                        "`functions` from the request", param="tools")
    if body.get("n") not in (None, 1):
        raise WireError(400, "only n=1 is supported", param="n")
    turns = [_message(m, i) for i, m in enumerate(messages)]
    role, question = turns[-1]
    if role != "user":
        raise WireError(400, f"the last message must be the user's question, not {role!r}",
                        param="messages")
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise WireError(400, "`model` must be a string", param="model")
    options = body.get("stream_options") or {}
    trace_flag = body.get(TRACE_FIELD, headers.get(TRACE_HEADER, "") in ("1", "true", "yes"))
    return ChatCall(
        model=model or None,
        question=question,
        history=tuple(_HISTORY_ROLES[r](text) for r, text in turns[:-1]),
        stream=bool(body.get("stream")),
        include_usage=isinstance(options, dict) and bool(options.get("include_usage")),
        want_trace=bool(trace_flag),
        session=_session(headers.get(SESSION_HEADER)),
        schema=_schema(body.get("response_format")),
    )


def _message(raw: object, index: int) -> tuple[str, str]:
    where = f"messages[{index}]"
    if not isinstance(raw, dict):
        raise WireError(400, f"{where} must be an object with `role` and `content`",
                        param=where)
    role = raw.get("role")
    if role not in _HISTORY_ROLES:
        allowed = ", ".join(_HISTORY_ROLES)
        raise WireError(400, f"{where}: role {role!r} is not supported (allowed: {allowed})",
                        param=where)
    content = raw.get("content")
    if content is None or isinstance(content, str):
        return role, content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "text"
                    and isinstance(part.get("text"), str)):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise WireError(400, f"{where}: only text content parts are supported, "
                                f"not {kind!r}", param=where)
            texts.append(part["text"])
        return role, "\n".join(texts)
    raise WireError(400, f"{where}: `content` must be a string or a list of text parts",
                    param=where)


def _schema(value: object) -> dict[str, object] | None:
    """The JSON Schema a ``response_format`` asks the answer to match (None: plain text)."""
    kind = value.get("type") if isinstance(value, dict) else value
    if value is None or kind == "text":
        return None
    if kind == "json_object":
        return {"type": "object"}
    spec = value.get("json_schema") if isinstance(value, dict) and kind == "json_schema" else None
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise WireError(400, "`response_format` must be {type: text}, {type: json_object} or "
                        "{type: json_schema, json_schema: {name, schema}}",
                        param="response_format")
    try:
        size = len(json.dumps(schema))
    except RecursionError:
        size = MAX_SCHEMA_CHARS + 1  # nested too deeply to check in any time
    if size > MAX_SCHEMA_CHARS:
        raise WireError(400, f"the `response_format` schema is over {MAX_SCHEMA_CHARS // 1024} "
                        "KB of JSON (or nested too deeply); send a smaller schema",
                        param="response_format")
    return schema


def _session(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > _MAX_SESSION or not value.isprintable():
        raise WireError(400, f"a session name (the {SESSION_HEADER} header) must be printable "
                        f"text of at most {_MAX_SESSION} characters", code="invalid_session")
    return value


# ---------------------------------------------------------------------- responses
def new_id() -> str:
    """A completion id, as OpenAI shapes them."""
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def usage_body(usage: Usage) -> dict[str, int]:
    """The ``usage`` object of a response."""
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}


def completion(cid: str, model: str, content: str, finish: str, usage: Usage,
               extra: Mapping[str, object] | None = None) -> dict[str, object]:
    """A non-streamed ``chat.completion`` holding the agent's answer."""
    return {**_head(cid, "chat.completion", model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish, "logprobs": None}],
            "usage": usage_body(usage), **(extra or {})}


def chunk(cid: str, model: str, delta: Mapping[str, object], finish: str | None = None,
          *, usage: Usage | None = None) -> dict[str, object]:
    """One ``chat.completion.chunk``; a usage chunk has no choices."""
    base = _head(cid, "chat.completion.chunk", model)
    if usage is not None:
        return {**base, "choices": [], "usage": usage_body(usage)}
    return {**base, "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish,
                                 "logprobs": None}]}


def _head(cid: str, kind: str, model: str) -> dict[str, object]:
    return {"id": cid, "object": kind, "created": int(time.time()), "model": model}


def error_body(message: str, *, type: str, code: str | None = None,
               param: str | None = None) -> dict[str, object]:
    """An OpenAI-style error object."""
    return {"error": {"message": message, "type": type, "code": code, "param": param}}


def sse_data(value: Mapping[str, object] | str) -> str:
    """One server-sent event carrying JSON (or the literal ``[DONE]``)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"data: {text}\n\n"


def sse_comment(line: str) -> str:
    """An SSE comment (clients ignore it): the trace travels this way in a stream."""
    return "".join(f": {part}\n" for part in line.splitlines() or [""]) + "\n"
