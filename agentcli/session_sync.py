"""Saving a chat turn to a session that other chats may be writing at the same time.

Optimistic concurrency: a chat remembers the memory version it loaded; the store writes the
turn only if the session is still at that version. When another chat wrote first, its state
is re-read, this chat's turn is added on top of it (so the other writer's turns come first
and are kept), and the write is tried again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli.errors import SessionConflictError
from agentcli.memory import Memory, restore
from agentcli.outcome import recorded_answer, run_record
from agentcli.schema import RunResult

if TYPE_CHECKING:
    from agentcli.store import Store

_ATTEMPTS = 8


def commit_turn(
    store: Store,
    session: str,
    memory: Memory,
    question: str,
    result: RunResult,
    *,
    version: int,
    model: str | None = None,
    agent: str | None = None,
    options: Mapping[str, object] | None = None,
    meta: Mapping[str, object] | None = None,
    on_memory_error: Callable[[Exception], None] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Add the turn to ``memory`` and commit it; return the session's new memory version and
    the memory state it stored (what ``memory`` now holds).

    ``memory`` ends up holding every writer's turns. A memory that cannot record the turn
    (e.g. a summary model failing) is reported to ``on_memory_error``; the turn is saved.
    """
    for _ in range(_ATTEMPTS):
        try:
            memory.add_turn(question, recorded_answer(result))  # never the placeholder
        except Exception as err:
            if on_memory_error is None:
                raise
            on_memory_error(err)
        state = memory.to_state()
        try:
            record = run_record(question, result, model=model, agent=agent, session=session,
                                meta=meta, options=options)
            store.add_turn(record, memory_state=state, expected_version=version)
            return version + 1, state
        except SessionConflictError:
            info = store.session(session)
            if info is None:
                raise
            memory.clear()  # the stored state replaces ours; our turn is added again on top
            restore(memory, info.memory_state)
            version = info.memory_version
    raise SessionConflictError(
        f"session {session!r} kept changing while this chat saved its turn; the answer is "
        "in the run log (agent logs) but not in the session: try again or use another session"
    )

