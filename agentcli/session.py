"""A conversation kept across runs: one chat session, or one ``agent run --thread``.

Both are the same thing in the same store: a name, a memory of earlier turns and the memory
version last read. A front end (the REPL, ``agent run --thread``) opens a :class:`Conversation`,
asks it for the executor's inputs, runs the executor itself (how it renders and cancels is its
business), and hands the result back to :meth:`Conversation.commit`, which saves the turn, its
run log and the new memory in one transaction, merging turns another writer saved meanwhile.

Saving is optimistic: a conversation remembers the memory version it loaded, and the store writes
the turn only if the session is still at that version. When another writer came first, its state
is re-read, this turn is added on top of it (so the other writer's turns come first and are
kept), and the write is tried again.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from agentcli.agents import agent_class
from agentcli.config import MEMORY_KINDS
from agentcli.errors import ConfigError, SessionConflictError
from agentcli.memory import Memory, SummaryMemory, make_memory, restore
from agentcli.outcome import recorded_answer, run_record
from agentcli.records import record
from agentcli.schema import RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from agentcli.config import Settings
    from agentcli.models.base import BaseChatModel
    from agentcli.store import Store

_ATTEMPTS = 8  # writes tried while other writers keep saving first

def new_memory(settings: Settings, llm: BaseChatModel | None = None,
               saved: Mapping[str, Any] | None = None) -> Memory:
    """An empty memory of the configured kind and size. ``auto`` keeps the latest turns within
    ``memory_max_tokens`` (tokens memory), so a turn costs the same at turn 2 and at turn 200
    (the session's transcript keeps every turn); ``none`` keeps a buffer: turns are saved
    even when the model is shown none of them. A resumed conversation's ``saved`` state keeps
    the kind it was started with, unless ``--memory`` is given now (as agent and tools do)."""
    kind = {"auto": "tokens", "none": "buffer"}.get(settings.memory, settings.memory)
    if saved and settings.sources.get("memory") != "flag" and settings.memory != "none" \
            and saved.get("kind") in MEMORY_KINDS:
        kind = str(saved["kind"])
    return make_memory(kind, k=settings.memory_k, max_tokens=settings.memory_max_tokens, llm=llm)


def reads_memory(settings: Settings, agent: str) -> bool:
    """Whether agent type ``agent`` is shown the earlier turns under these settings."""
    return bool(agent_class(agent).uses_memory) and settings.memory != "none"


@record(frozen=False)
class Conversation:
    """An open conversation: its store, name, memory and whether the agent reads it."""

    store: Store
    name: str
    memory: Memory
    earlier_turns: int
    uses_memory: bool = True
    version: int = 0  # the stored memory version last read or written
    # The memory's state as this conversation last stored it, while the memory still holds
    # exactly that (None: not known); see state().
    _stored: dict[str, Any] | None = field(default=None, init=False, repr=False,
                                           compare=False)

    def state(self) -> dict[str, Any]:
        """The memory's state now (a JSON-ready snapshot, not to be changed); the one last
        stored when nothing changed the memory since, so a turn need not snapshot it again."""
        if self._stored is None:
            self._stored = self.memory.to_state()
        return self._stored

    def inputs(self, question: str) -> dict[str, object]:
        """The executor inputs: the question and, for agents that read it, the history."""
        inputs: dict[str, object] = {"input": question}
        if self.uses_memory:
            inputs["chat_history"] = self.memory.messages()
        return inputs

    def config(self, **more: object) -> dict[str, object]:
        """The run config of a turn (``more`` added): the memory's middleware (a summary memory
        asks for its summary within the run)."""
        return {**more, "middleware": self.memory.middleware()}

    def attach_model(self, llm: BaseChatModel) -> None:
        """Summary memory writes its summaries with the conversation's current model."""
        if isinstance(self.memory, SummaryMemory):
            self.memory.llm = llm

    def commit(
        self,
        question: str,
        result: RunResult,
        *,
        model: str | None,
        agent: str | None,
        options: Mapping[str, object] | None = None,
        meta: Mapping[str, object] | None = None,
        on_memory_error: Callable[[Exception], None] | None = None,
    ) -> bool:
        """Save the finished turn; True when saved. An interrupted turn is only logged.

        The memory ends up holding every writer's turns (see the module's note). A memory that
        cannot record the turn (e.g. a summary model failing) is reported to
        ``on_memory_error``; the turn is saved.
        """
        record = run_record(question, result, model=model, agent=agent, session=self.name,
                            options=options, meta=meta)
        if result.stop_reason == "interrupted":
            self.store.log_run(record)
            return False

        self._stored = None  # the memory changes now (even if the write then fails)
        for _ in range(_ATTEMPTS):
            try:
                self.memory.add_turn(question, recorded_answer(result))  # never the placeholder
            except Exception as err:
                if on_memory_error is None:
                    raise
                on_memory_error(err)
            state = self.memory.to_state()
            try:
                self.store.add_turn(record, memory_state=state, expected_version=self.version)
            except SessionConflictError:
                info = self.store.session(self.name)
                if info is None:
                    raise
                self.memory.clear()  # the stored state replaces ours; our turn goes on top
                restore(self.memory, info.memory_state)
                self.version = info.memory_version
            else:
                self.version, self._stored = self.version + 1, state
                return True
        raise SessionConflictError(
            f"session {self.name!r} kept changing while this chat saved its turn; the answer "
            "is in the run log (agent logs) but not in the session: try again or use another "
            "session"
        )

    def clear(self) -> None:
        """Forget the memory (the transcript stays), whoever wrote it."""
        self._stored = None
        self.memory.clear()
        self.version = self.store.save_memory(self.name, self.state())

    def undo_last(self, before: dict[str, Any]) -> None:
        """Drop this conversation's last turn and restore the memory from before it.

        Refused (:class:`~agentcli.errors.SessionConflictError`, nothing changed) when another
        writer has saved since: the last turn would be theirs.
        """
        self.version = self.store.drop_last_turn(self.name, before,
                                                 expected_version=self.version)
        self._stored = None
        self.memory.clear()
        restore(self.memory, before)


SERVED_PREFIX = "served:"  # agent serve's conversations (`X-Agent-Session: NAME`) are named
# served:NAME: a namespace of their own, which no CLI conversation may enter


def check_cli_name(name: str) -> None:
    """Refuse a CLI conversation name in the served namespace (a served client could read
    it) with a ConfigError saying why."""
    if name.lower().startswith(SERVED_PREFIX):
        raise ConfigError(f"session names starting with {SERVED_PREFIX!r} belong to "
                          f"`agent serve`'s clients: pick a name without it")


def record_run(
    question: str,
    result: RunResult,
    to: Conversation | Store,
    *,
    model: str | None,
    agent: str | None,
    options: Mapping[str, object] | None = None,
    meta: Mapping[str, object] | None = None,
    on_memory_error: Callable[[Exception], None] | None = None,
) -> bool:
    """Keep a finished run, the one way ``agent run``, ``agent chat`` and ``agent serve`` do:
    a turn of its conversation (with the new memory), else a row of the run log. The record is
    :func:`~agentcli.outcome.run_record`'s, cost included. True when a turn was saved."""
    if isinstance(to, Conversation):
        return to.commit(question, result, model=model, agent=agent, options=options,
                         meta=meta, on_memory_error=on_memory_error)
    to.log_run(run_record(question, result, model=model, agent=agent, options=options,
                          meta=meta))
    return False


def open_conversation(
    store: Store, name: str, settings: Settings, *, agent: str,
    llm: BaseChatModel | None = None, served: bool = False,
) -> Conversation:
    """Open conversation ``name`` (created if new) with its saved memory; ``served``: the
    served client's conversation ``name``, in the served namespace, which a CLI ``name``
    may not enter (:func:`check_cli_name`)."""
    if served:
        name = SERVED_PREFIX + name
    else:
        check_cli_name(name)
    info = store.ensure_session(name, model=settings.model, agent=agent)
    memory = restore(new_memory(settings, llm, info.memory_state), info.memory_state)
    return Conversation(store, name, memory, info.turns,
                        uses_memory=reads_memory(settings, agent), version=info.memory_version)

