"""One request as one run of a served agent: inputs, the trace as it happens, the answer.

Framework-free: :func:`run_turn` is an async generator yielding the answer's pieces as the
model writes them (:class:`Delta`, see :mod:`agentcli.serve.answer`), trace lines (the JSONL
trace of ``--trace``, redacted) when asked for, then one :class:`Turn`; a streamed call's
first model request going out is :data:`UNDERWAY` (the moment its response can start
without holding the request up). A session named by the
``X-Agent-Session`` header reuses :class:`agentcli.session.Conversation` (the memory
``agent chat --session`` keeps, under a namespace of its own); without one the client's
messages are the conversation.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentcli._sync import in_thread
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.timings import TimingsHandler
from agentcli.callbacks.trace import TraceHandler
from agentcli.events import ModelEnd, ModelStart, ModelToken, Observation
from agentcli.models.http_pool import request_sent
from agentcli.models.options import effective_options
from agentcli.outcome import real_answer, stop_line
from agentcli.records import record
from agentcli.redact import redact
from agentcli.schema import RunResult
from agentcli.serve.answer import AnswerStream
from agentcli.serve.wire import ChatCall
from agentcli.session import SERVED_PREFIX, open_conversation, record_run

if TYPE_CHECKING:
    from agentcli.events import RunEvent
    from agentcli.serve.agents import ServedAgent
    from agentcli.session import Conversation
    from agentcli.store import Store
    from agentcli.structured import ResponseFormat

log = logging.getLogger("agentcli.serve")


@record
class Turn:
    """A finished run as the endpoint answers it."""

    result: RunResult
    content: str  # the answer, or the sentence saying which limit stopped the run
    finish: str  # OpenAI finish_reason: "stop", or "length" when a limit stopped the run


def turn_of(result: RunResult, env: Mapping[str, str], *, structured: bool = False) -> Turn:
    """The assistant message for a result (secrets redacted, like ``agent run --json``). A
    structured answer is sent with ``stop`` only when it passed the run's schema check (its
    value is in ``structured_response``): a client's ``.parse`` never meets invalid content."""
    answer = real_answer(result)
    if structured and "structured_response" not in result.state:
        answer = None
    if answer is not None:
        return Turn(result, redact(answer, env), "stop")
    return Turn(result, stop_line(result) or "The run was interrupted.", "length")


@record
class Delta:
    """A piece of the answer, to stream the moment it arrives."""

    text: str


@record
class Underway:
    """A streamed call's first model request is out: its response may start now."""


UNDERWAY = Underway()


async def run_turn(
    served: ServedAgent, call: ChatCall, store: Store, env: Mapping[str, str],
    *, log_runs: bool, answer: ResponseFormat | None = None,
) -> AsyncIterator[str | Delta | Underway | Turn]:
    """Run the call (its answer matching ``answer``, the request's ``response_format``: an
    input of the run on the agent's one executor); yield the answer's pieces the moment the
    model writes them (when ``call.stream``), each trace line (when ``call.want_trace``), then
    the :class:`Turn`. A streamed call also yields :data:`UNDERWAY` once, when its first
    model request has been written (not at all when the run's model sends none over HTTP).
    Closing or cancelling this generator cancels the run (logged as interrupted)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | Delta | Underway | None] = asyncio.Queue()
    here = threading.get_ident()
    underway = False

    def put(item: str | Delta | Underway | None) -> None:
        if threading.get_ident() == here:  # an async model's token: no wake-up to send
            queue.put_nowait(item)
        else:  # a sync model's thread
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def request_out() -> None:
        nonlocal underway
        if not underway:
            underway = True
            put(UNDERWAY)

    conversation = None if call.session is None else open_conversation(
        store, call.session, served.settings, agent=served.agent_type, llm=served.llm,
        served=True)  # `X-Agent-Session: work` never reads `agent chat --session work`
    timings = TimingsHandler()
    executor = served.executor
    inputs = _inputs(served, call, conversation)
    pieces = AnswerStream(native=executor.agent.native_tools, env=env,
                          given=executor.answer_given(str(inputs.get("input") or "")))
    tracer = TraceHandler(_Lines(put), env=env) if call.want_trace else None
    # A structured answer is sent whole, as the run validated it: no tokens of drafts.
    feed = call.stream and answer is None
    handlers: list[BaseCallbackHandler] = [timings, *([_Feed(pieces, put)] if feed else []),
                           *([tracer] if tracer else [])]

    async def drive() -> RunResult:
        result: RunResult | None = None
        try:
            # a session's memory rides with the run (a summary is its request, awaited here)
            named = conversation.config(metadata={"session_id": call.session}) \
                if conversation is not None else None
            async for event in executor.astream(inputs, named, callbacks=handlers,
                                                response_format=answer):
                if event.kind == "end":
                    result = event.result
        finally:
            if tracer is not None:
                tracer.close()
            put(None)
        assert result is not None  # every run ends with an End event
        # saved here, so a run cancelled because its client left is logged as interrupted;
        # off the server's loop: SQLite blocks (the summary memory's call was the run's)
        if conversation is not None or log_runs:  # nothing to save: no thread to wake
            summary = timings.summary()
            await in_thread(lambda: _save(served, call, result, conversation, store, summary))
        return result

    context = contextvars.copy_context()  # the run's: told when its model request is out
    if call.stream:
        context.run(request_sent.set, request_out)
    task = loop.create_task(drive(), context=context)
    try:
        while (item := await queue.get()) is not None:
            yield item
        result = await task
    finally:
        task.cancel()  # the client left (or the run is over: then this does nothing)
    turn = turn_of(result, env, structured=answer is not None)
    rest = pieces.rest(turn.content) if call.stream else ""
    if rest:
        yield Delta(rest)
    yield turn


class _Feed(BaseCallbackHandler):
    """Passes the answer's text on from the agent's own model calls, token by token."""

    def __init__(self, answer: AnswerStream, put: Callable[[Delta], None]) -> None:
        self.answer = answer
        self.put = put

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Feed tokens; a reply's start and end bound its answer."""
        piece = ""
        if isinstance(event, ModelToken):
            piece = self.answer.token(event.text)
        elif isinstance(event, ModelStart) and event.parent is None:
            self.answer.start()
        elif isinstance(event, ModelEnd) and event.parent is None:
            piece = self.answer.end()
        elif isinstance(event, Observation) and event.status != "ok" and self.answer.given:
            given = self.answer.given  # a tool's error text is never an answer either
            self.answer.given = replace(given, tool_texts=(*given.tool_texts,
                                                           event.step.observation))
        if piece:
            self.put(Delta(piece))


def _inputs(served: ServedAgent, call: ChatCall,
            conversation: Conversation | None) -> dict[str, Any]:
    if conversation is not None:  # the session's memory, not the client's copy of it
        return conversation.inputs(call.question)
    inputs: dict[str, Any] = {"input": call.question}
    if served.uses_memory:
        inputs["chat_history"] = list(call.history)
    return inputs


class _Lines(io.StringIO):
    """The trace's file: each line written to it goes to the client as it comes."""

    def __init__(self, put: Callable[[str], None]) -> None:
        super().__init__()
        self.put = put

    def write(self, text: str) -> int:
        """Pass on one line (the trace writes a whole line at a time)."""
        self.put(text.rstrip("\n"))
        return len(text)


def _save(served: ServedAgent, call: ChatCall, result: RunResult,
          conversation: Conversation | None, store: Store,
          timings: dict[str, object]) -> None:
    """Commit the session's turn, or log the run (each step's status and duration from
    ``timings``, as ``agent run`` logs them); a failure is logged, the answer still goes.
    Called only when there is something to save (a session, or the run log on)."""
    try:
        settings = served.settings
        record_run(call.question, result, conversation or store, model=served.llm.name,
                   agent=served.agent_type,
                   options=effective_options(settings.temperature, settings.model_options),
                   meta={"served_as": served.name, "timings": timings})
    except Exception as exc:
        where = (f"session {SERVED_PREFIX}{call.session}" if conversation is not None
                 else "the run log")
        log.warning("could not save this turn to %s: %s", where, redact(str(exc)))
