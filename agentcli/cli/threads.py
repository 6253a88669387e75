"""``agent run --thread NAME`` / ``--continue``: a run that is one turn of a saved conversation.

Threads are chat sessions: the same SQLite tables, memory kinds and commit (turn, run log and
memory state in one transaction), so ``agent chat --session NAME`` resumes a thread and
``agent run --thread NAME`` continues a chat session. ``--continue`` picks the conversation of
the last logged run; a plain run becomes the thread ``run-ID`` when it is first continued.
"""

from __future__ import annotations

from dataclasses import replace

from agentcli.config import CHAT_AGENT, Settings
from agentcli.errors import ConfigError
from agentcli.session import Conversation, new_memory, open_conversation
from agentcli.store import Store, open_store


def _thread_name(store: Store, settings: Settings, name: str | None) -> str:
    if name is not None:
        if not name.strip():
            raise ConfigError("--thread needs a name, e.g. --thread budget")
        return name.strip()
    last = store.run()
    if last is None:
        raise ConfigError("--continue: no earlier run is logged; ask a first question "
                          "without --continue (or name a conversation with --thread NAME)")
    if last["session"] and store.session(str(last["session"])) is not None:
        return str(last["session"])  # (a deleted session's run starts a thread of its own)
    thread = f"run-{last['id']}"
    memory = new_memory(settings)
    memory.add_turn(last["question"], last["answer"])
    store.adopt_run(thread, int(last["id"]), memory.to_state(), agent=CHAT_AGENT)
    return thread


def open_thread(
    settings: Settings, env: dict[str, str], *, name: str | None, continue_last: bool
) -> tuple[Settings, Conversation]:
    """Resolve and open the thread; the agent type defaults to chat's, which reads memory."""
    if name is not None and continue_last:
        raise ConfigError("--continue and --thread both pick a conversation; pass one "
                          "(--thread NAME already continues NAME)")
    if "agent" not in settings.sources:
        settings = replace(settings, agent=CHAT_AGENT)
    store = open_store(settings.db_path, env)
    try:
        return settings, open_conversation(store, _thread_name(store, settings, name), settings,
                                           agent=settings.agent or CHAT_AGENT)
    except BaseException:
        store.close()
        raise
