"""One request as one run of a served agent: inputs, the trace as it happens, the answer.

Framework-free: :func:`run_turn` is an async generator yielding trace lines (the JSONL trace
of ``--trace``, redacted) while the run goes, then one :class:`Turn`. A named session reuses
:class:`agentcli.session.Conversation` (the memory ``agent chat --session`` keeps); without one
the client's earlier messages are the history.
"""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli.redact import redact
from agentcli.schema import RunResult
from agentcli.serve.wire import ChatCall

if TYPE_CHECKING:
    from agentcli.serve.agents import ServedAgent
    from agentcli.session import Conversation
    from agentcli.store import Store

log = logging.getLogger("agentcli.serve")


@dataclass(frozen=True)
class Turn:
    """A finished run as the endpoint answers it."""

    result: RunResult
    content: str  # the answer, or the sentence saying which limit stopped the run
    finish: str  # OpenAI finish_reason: "stop", or "length" when a limit stopped the run


def turn_of(result: RunResult, env: Mapping[str, str]) -> Turn:
    """The assistant message for a result (secrets redacted, like ``agent run --json``)."""
    from agentcli.outcome import real_answer, stop_line

    answer = real_answer(result)
    if answer is not None:
        return Turn(result, redact(answer, env), "stop")
    return Turn(result, stop_line(result) or "The run was interrupted.", "length")


async def run_turn(
    served: ServedAgent, call: ChatCall, store: Store, env: Mapping[str, str],
    *, log_runs: bool,
) -> AsyncIterator[str | Turn]:
    """Run the call; yield each trace line as it is written, then the :class:`Turn`."""
    from agentcli.callbacks.trace import TraceHandler

    conversation = _open(served, call, store)
    buffer = io.StringIO()
    tracer = TraceHandler(buffer, env=env)
    result: RunResult | None = None
    try:
        named = {"metadata": {"session_id": call.session}} if call.session else None
        async for event in served.executor.astream(_inputs(served, call, conversation),
                                                   named, callbacks=[tracer]):
            for line in _drain(buffer):
                yield line
            if event.kind == "end":
                result = event.result
        tracer.close()
        for line in _drain(buffer):
            yield line
    finally:
        tracer.close()
    assert result is not None  # every run ends with an End event
    _save(served, call, result, conversation, store, log_runs)
    yield turn_of(result, env)


def _open(served: ServedAgent, call: ChatCall, store: Store) -> Conversation | None:
    if call.session is None:
        return None
    from agentcli.session import open_conversation

    return open_conversation(store, call.session, served.settings, agent=served.agent_type,
                             llm=served.llm)


def _inputs(served: ServedAgent, call: ChatCall,
            conversation: Conversation | None) -> dict[str, Any]:
    if conversation is not None:  # the session's memory, not the client's copy of it
        return conversation.inputs(call.question)
    inputs: dict[str, Any] = {"input": call.question}
    if served.uses_memory:
        inputs["chat_history"] = list(call.history)
    return inputs


def _drain(buffer: io.StringIO) -> list[str]:
    text = buffer.getvalue()
    if not text:
        return []
    buffer.seek(0)
    buffer.truncate(0)
    return text.splitlines()


def _save(served: ServedAgent, call: ChatCall, result: RunResult,
          conversation: Conversation | None, store: Store, log_runs: bool) -> None:
    """Commit the session's turn, or log the run; a failure is logged, the answer still goes."""
    meta = {"served_as": served.name}
    try:
        if conversation is not None:
            conversation.commit(call.question, result, model=served.llm.name,
                                agent=served.agent_type, meta=meta)
        elif log_runs:
            store.log_run(call.question, result, model=served.llm.name,
                          agent=served.agent_type, meta=meta)
    except Exception as exc:
        where = f"session {call.session!r}" if conversation is not None else "the run log"
        log.warning("could not save this turn to %s: %s", where, redact(str(exc)))
