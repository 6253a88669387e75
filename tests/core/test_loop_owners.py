"""One owner of event loops (issue 32): the portal (``_sync.py``) for every sync caller, the
chat's turns included, and ``asyncio.run`` at the top of ``serve`` and ``batch``. A module
that starts a loop of its own fails here."""

from __future__ import annotations

import re
from pathlib import Path

import agentcli

OWNS_A_LOOP = re.compile(r"new_event_loop\(|asyncio\.run\(|run_forever|asyncio\.Runner\(|"
                         r"run_until_complete\(")
ALLOWED = {"_sync.py", "serve/server.py", "cli/batch_cmd.py"}


def test_only_the_portal_and_the_top_of_serve_and_batch_own_an_event_loop() -> None:
    root = Path(agentcli.__file__).parent
    owners = {path.relative_to(root).as_posix() for path in root.rglob("*.py")
              if OWNS_A_LOOP.search(path.read_text(encoding="utf-8"))}
    assert owners == ALLOWED


def test_a_chat_turn_runs_on_the_portal_loop() -> None:
    import asyncio
    import threading

    from agentcli._sync import run_sync
    from agentcli.cli import repl

    seen: list[tuple[asyncio.AbstractEventLoop, str]] = []

    async def turn() -> None:
        seen.append((asyncio.get_running_loop(), threading.current_thread().name))

    assert repl.run_sync is run_sync  # the chat's one way to run a turn
    run_sync(turn())
    run_sync(turn())
    assert seen[0] == seen[1] and seen[0][1] == "agentcli-portal"  # one loop, the portal's
