"""The chat-model protocol shared by every provider, and stop-sequence handling."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any

from agentcli._sync import in_thread, iterate, run_sync
from agentcli.events import (
    ModelEnd,
    ModelError,
    model_start,
    restore_tool_scope,
    take_tool_scope,
)
from agentcli.schema import ChatChunk, ChatRequest, ChatResult, Message, ToolCall, Usage

TokenSink = Callable[[str], None]


def cut_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """Cut ``text`` at the first stop string; say whether one was found."""
    if not stop:
        return text, False
    cut = min((i for s in stop if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


class StopStream:
    """Applies stop sequences to a token stream, holding back text that may begin a stop string."""

    def __init__(self, stop: Sequence[str] | None) -> None:
        self.stop = [s for s in (stop or ()) if s]
        self._hold = max((len(s) for s in self.stop), default=1) - 1
        self.text = ""
        self._emitted = 0
        self.stopped = False

    def feed(self, token: str) -> str:
        """Add a token; return the text that is now safe to emit ('' once stopped)."""
        if self.stopped:
            return ""
        self.text += token
        cut, found = cut_at_stop(self.text, self.stop)
        if found:
            self.stopped = True
            self.text = cut
            out = cut[self._emitted:]
            self._emitted = len(cut)
            return out
        safe = len(self.text) - self._hold if self.stop else len(self.text)
        if safe <= self._emitted:
            return ""
        out = self.text[self._emitted:safe]
        self._emitted = safe
        return out

    def flush(self) -> str:
        """Emit whatever was held back at the end of the stream."""
        out = self.text[self._emitted:]
        self._emitted = len(self.text)
        return out


class BaseChatModel:
    """A chat model: messages in, text / tool calls / usage out; sync, async and streaming.

    A request made while a tool runs is observed by :class:`ObservedModel`, the wrapper an
    LLM-backed tool (such as ``llm-math``) is given.
    """

    name: str = "model"
    supports_tools: bool = True
    base_url: str = ""  # where requests go ("" for an in-process model): ModelStart.server
    observed: bool = True  # False: a stand-in no run reports as a model call (no events, usage)

    def own_options(self, params: Iterable[str] = ()) -> dict[str, Any]:
        """What this model adds to a request whose own options are ``params`` (temperature,
        max_tokens...): ``ModelStart.options``, what a trace records as sent."""
        return {}

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """The one model call: a :class:`ChatRequest` in, a :class:`ChatResult` out; streamed
        text goes to ``on_token``. Providers implement this; retries, fallback, the cache and
        recording wrap it. A model written the older way (overriding ``generate`` or
        ``agenerate``, as LangChain-style code does) is served through its own method."""
        messages = list(request.messages)
        kw: dict[str, Any] = {"stop": list(request.stop) or None, "on_token": on_token,
                              "tools": list(request.tools) or None, **request.params()}
        if _overrides(self, "agenerate"):
            return await self.agenerate(messages, **kw)
        if not _overrides(self, "generate"):
            raise NotImplementedError(f"{type(self).__name__} implements no model call; "
                                      "override arequest (or generate)")
        return await in_thread(lambda: self.generate(messages, **kw))

    def generate(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_token: TokenSink | None = None,
        **params: Any,
    ) -> ChatResult:
        """:meth:`arequest` for sync callers, with ``generate``-style arguments (through the
        one bridge, :func:`agentcli._sync.run_sync`)."""
        return run_sync(self.agenerate(messages, stop=stop, tools=tools, on_token=on_token,
                                       **params), instead="model.agenerate(...)")

    async def agenerate(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_token: TokenSink | None = None,
        **params: Any,
    ) -> ChatResult:
        """:meth:`arequest` with ``generate``-style arguments."""
        return await self.arequest(ChatRequest.of(messages, stop, tools, **params), on_token)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        **params: Any,
    ) -> Iterator[ChatChunk]:
        """Stream deltas (through the sync bridge over :meth:`astream`)."""
        return iterate(self.astream(messages, stop=stop, tools=tools, **params),
                       instead="model.astream(...)")

    async def astream(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        **params: Any,
    ) -> AsyncIterator[ChatChunk]:
        """Stream the reply's text as :meth:`arequest` hands it to its token sink, then its
        tool calls and a last chunk with the finish reason and usage (a model that streams
        nothing gives its whole text there)."""
        loop = asyncio.get_running_loop()
        tokens: asyncio.Queue[str | None] = asyncio.Queue()

        def put(token: str) -> None:  # tokens may come from a model's thread
            loop.call_soon_threadsafe(tokens.put_nowait, token)

        call = asyncio.ensure_future(self.arequest(ChatRequest.of(messages, stop, tools,
                                                                  **params), put))
        call.add_done_callback(lambda _: tokens.put_nowait(None))
        streamed = False
        try:
            while (token := await tokens.get()) is not None:
                streamed = True
                yield ChatChunk(text=token)
            result = await call  # its error, if it failed
        finally:
            call.cancel()
        for i, c in enumerate(result.tool_calls):
            yield ChatChunk(tool_call_index=i, tool_call_id=c.id, tool_call_name=c.name,
                            tool_call_arguments=c.arguments)
        yield ChatChunk(text="" if streamed else result.text, finish_reason=result.finish_reason,
                        usage=result.usage, response_id=result.response_id)

    def close(self) -> None:
        """Release pooled connections (no-op by default)."""


class WrapperModel(BaseChatModel):
    """A model around another (recording, caching, fallback): its name, tool support,
    endpoint and request options are the inner model's, and closing it closes that one."""

    def __init__(self, inner: BaseChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.supports_tools = inner.supports_tools
        self.base_url = inner.base_url

    def own_options(self, params: Iterable[str] = ()) -> dict[str, Any]:
        """The inner model's options."""
        return self.inner.own_options(params)

    def close(self) -> None:
        """Close the inner model."""
        self.inner.close()


class ObservedModel(WrapperModel):
    """A model whose requests made during a tool call are the run's: ``ModelStart``/``ModelEnd``
    events with the tool call as parent, their usage and cost counted towards the run's totals
    and budgets. What :func:`agentcli.tools.registry.build_spec` hands an LLM-backed tool;
    every other attribute is the wrapped model's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """The wrapped model's request, reported as the run's when a tool call is in progress
        (start, end or error events, usage and cost)."""
        scope = take_tool_scope()  # nested wrappers (cache, fallback...) are the same request
        if scope is None:
            return await self.inner.arequest(request, on_token)
        name = self.inner.name
        scope.emit(model_start(request, self.inner, scope.parent))
        started = time.perf_counter()
        try:
            result = await self.inner.arequest(request, on_token)
            cost = scope.account(result, name)
            scope.emit(ModelEnd(result, name, time.perf_counter() - started, cost,
                                parent=scope.parent))
            return result
        except BaseException as err:
            scope.emit(ModelError(err, name, parent=scope.parent))
            raise
        finally:
            restore_tool_scope(scope)


def observed(model: BaseChatModel | None) -> BaseChatModel | None:
    """``model`` wrapped in :class:`ObservedModel` (once; an object that is no
    :class:`BaseChatModel` is left as it is)."""
    if not isinstance(model, BaseChatModel) or isinstance(model, ObservedModel):
        return model
    return ObservedModel(model)


def _overrides(model: BaseChatModel, method: str) -> bool:
    return getattr(type(model), method) is not getattr(BaseChatModel, method)


def assemble_chunks(chunks: Sequence[ChatChunk] | Iterator[ChatChunk]) -> ChatResult:
    """Join streamed chunks into one result; tool-call fragments are grouped per call.

    A fragment joins the call that already carries its id, else the call at its ``index``,
    else (no index, no id) the latest call. Providers that resend the name or id in every
    chunk (DashScope) do not glue names together: a repeated name or id is only recorded,
    never appended. A new id at an index already taken by another id starts a new call, so
    parallel calls that a server numbers all ``0`` stay separate. Calls keep arrival order.
    """
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    slot_of_index: dict[int, int] = {}
    slot_of_id: dict[str, int] = {}
    finish: str | None = None
    usage = Usage()
    response_id = ""
    for chunk in chunks:
        text.append(chunk.text)
        response_id = response_id or chunk.response_id
        if chunk.finish_reason:
            finish = chunk.finish_reason
        if chunk.usage is not None:
            usage = chunk.usage
        index, call_id = chunk.tool_call_index, chunk.tool_call_id or None
        if index is None and call_id is None and not (
            chunk.tool_call_name or chunk.tool_call_arguments
        ):
            continue
        slot = _find_slot(calls, slot_of_index, slot_of_id, chunk)
        if slot is None:
            slot = len(calls)
            calls.append({"id": None, "name": None, "args": []})
        call = calls[slot]
        if index is not None:
            slot_of_index[index] = slot
        if call_id and not call["id"]:
            call["id"] = call_id
            slot_of_id[call_id] = slot
        if chunk.tool_call_name and not call["name"]:
            call["name"] = chunk.tool_call_name
        if chunk.tool_call_arguments:
            call["args"].append(chunk.tool_call_arguments)
    tool_calls = tuple(
        ToolCall(id=c["id"] or f"call_{i}", name=c["name"] or "", arguments="".join(c["args"]))
        for i, c in enumerate(calls)
    )
    return ChatResult("".join(text), tool_calls, finish, usage, response_id=response_id)


def _find_slot(
    calls: list[dict[str, Any]],
    slot_of_index: dict[int, int],
    slot_of_id: dict[str, int],
    chunk: ChatChunk,
) -> int | None:
    """The existing call a tool-call fragment belongs to, or None when it starts a new one."""
    index, call_id = chunk.tool_call_index, chunk.tool_call_id or None
    if call_id and call_id in slot_of_id:
        return slot_of_id[call_id]
    if index is not None:
        slot = slot_of_index.get(index)
        if slot is not None and call_id and calls[slot]["id"] not in (None, call_id):
            return None  # same index, another id: a parallel call numbered like the first
        return slot
    if call_id or not calls:
        return None
    last = calls[-1]
    if chunk.tool_call_name and last["name"] and chunk.tool_call_name != last["name"]:
        return None  # no index, no id, another name: the next call
    return len(calls) - 1
