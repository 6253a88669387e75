"""``agent run --thread NAME`` / ``--continue``: a run that is one turn of a saved conversation.

Threads are chat sessions: the same SQLite tables, memory kinds and commit (turn, run log and
memory state in one transaction), so ``agent chat --session NAME`` resumes a thread and
``agent run --thread NAME`` continues a chat session. ``--continue`` picks the conversation of
the last logged run; a plain run becomes the thread ``run-ID`` when it is first continued.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.memory import Memory, make_memory, restore
from agentcli.models.base import BaseChatModel
from agentcli.schema import RunResult
from agentcli.store import Store, open_store


def _chat_agent() -> str:
    from agentcli.config import CHAT_AGENT

    return CHAT_AGENT


def _memory(settings: Settings) -> Memory:
    kind = "buffer" if settings.memory in ("auto", "none") else settings.memory
    return make_memory(kind, k=settings.memory_k, max_tokens=settings.memory_max_tokens)


def _thread_name(store: Store, settings: Settings, name: str | None) -> str:
    if name is not None:
        if not name.strip():
            raise ConfigError("--thread needs a name, e.g. --thread budget")
        return name.strip()
    last = store.last_run()
    if last is None:
        raise ConfigError("--continue: no earlier run is logged; ask a first question "
                          "without --continue (or name a conversation with --thread NAME)")
    if last["session"] and store.session(str(last["session"])) is not None:
        return str(last["session"])  # (a deleted session's run starts a thread of its own)
    thread = f"run-{last['id']}"
    memory = _memory(settings)
    memory.add_turn(last["question"], last["answer"])
    store.adopt_run(thread, int(last["id"]), memory.to_state(), agent=_chat_agent())
    return thread


@dataclass
class Thread:
    """An open conversation: its store, name, memory and whether the agent reads it."""

    store: Store
    name: str
    memory: Memory
    earlier_turns: int
    uses_memory: bool = True
    version: int = 0  # the memory version read; a concurrent writer's turns are merged

    def inputs(self, question: str) -> dict[str, Any]:
        """The executor inputs: the question and, for agents that read it, the history."""
        inputs: dict[str, Any] = {"input": question}
        if self.uses_memory:
            inputs["chat_history"] = self.memory.messages()
        return inputs

    def attach_model(self, llm: BaseChatModel) -> None:
        """Summary memory writes with the run's model."""
        if hasattr(self.memory, "llm"):
            self.memory.llm = llm

    def commit(self, question: str, result: RunResult, *, model: str, agent: str | None,
               meta: dict[str, Any]) -> None:
        """Save the finished turn (an interrupted one is only logged)."""
        if result.stop_reason == "interrupted":
            self.store.log_run(question, result, model=model, agent=agent, session=self.name,
                               meta=meta)
            return
        from agentcli.session_sync import commit_turn

        self.version = commit_turn(self.store, self.name, self.memory, question, result,
                                   version=self.version, model=model, agent=agent, meta=meta)

    def close(self) -> None:
        """Close the store."""
        self.store.close()


def open_thread(
    settings: Settings, env: dict[str, str], *, name: str | None, continue_last: bool
) -> tuple[Settings, Thread]:
    """Resolve and open the thread; the agent type defaults to chat's, which reads memory."""
    if name is not None and continue_last:
        raise ConfigError("--continue and --thread both pick a conversation; pass one "
                          "(--thread NAME already continues NAME)")
    from agentcli.agents import agent_class

    if "agent" not in settings.sources:
        settings = replace(settings, agent=_chat_agent())
    store = open_store(settings.db_path, env)
    try:
        thread_name = _thread_name(store, settings, name)
        info = store.ensure_session(thread_name, model=settings.model, agent=settings.agent)
        memory = restore(_memory(settings), info.memory_state)
    except BaseException:
        store.close()
        raise
    uses = bool(agent_class(settings.agent or _chat_agent()).uses_memory)
    return settings, Thread(store, thread_name, memory, info.turns,
                            uses_memory=uses and settings.memory != "none",
                            version=info.memory_version)
