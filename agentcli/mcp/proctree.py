"""The processes a stdio MCP server started, found by walking ``/proc`` from its pid.

A server runs in a session of its own, so one signal to its process group reaches everything
it started, unless a child left that group (``setsid()``, as a daemon does): such a child is
found here as a descendant and signalled by pid. A process is known by its pid *and* its start
time, so a pid the system reused meanwhile for someone else's process is never signalled.
Without ``/proc`` (macOS, Windows) nothing is found and the process group is all there is.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

_PROC = Path("/proc")
Known = tuple[int, str]  # (pid, start time in clock ticks since boot, as /proc says it)


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, start time, state) of ``pid``, or None when it is gone or unreadable."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[-1].split()  # the name (field 2) may hold spaces and ")"
    try:
        return int(fields[1]), fields[19], fields[0]
    except (IndexError, ValueError):
        return None


def _children(pid: int) -> list[int]:
    """``pid``'s children: from ``/proc/PID/task/*/children`` (cheap: only our tree is read),
    else by reading every process's parent."""
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN
            return [p for p in _all_pids() if (s := _stat(p)) is not None and s[0] == pid]
        except (OSError, ValueError):
            continue
    return found


def _all_pids() -> list[int]:
    with contextlib.suppress(OSError):
        return [int(d.name) for d in _PROC.iterdir() if d.name.isdigit()]
    return []


def descendants(root: int) -> set[Known]:
    """Every live process below ``root`` (not ``root`` itself), each with its start time."""
    out: set[Known] = set()
    todo = _children(root)
    while todo:
        pid = todo.pop()
        stat = _stat(pid)
        if stat is None or (pid, stat[1]) in out:
            continue
        out.add((pid, stat[1]))
        todo += _children(pid)
    return out


def alive(known: Known) -> bool:
    """Whether this very process still runs (a zombie has ended; a reused pid is another)."""
    stat = _stat(known[0])
    return stat is not None and stat[1] == known[1] and stat[2] != "Z"


def signal_all(known: set[Known], sig: signal.Signals) -> None:
    """Send ``sig`` to each of these processes that still runs."""
    for item in known:
        if alive(item):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(item[0], sig)
