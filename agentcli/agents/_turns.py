"""A run's steps as chat turns, built incrementally (as :mod:`agentcli.agents._pad` does for
the scratchpad): step N of a run adds its two turns, it does not walk the N-1 before it.

The turns built for a list of steps are kept, keyed by the first step's identity, and reused
when the next list starts with the same steps (compared in C, identity first); a trimmed,
edited or unrelated list is simply built again, so the result is always a full build's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from agentcli.schema import AgentStep, Message

_MAX_RUNS = 256  # runs remembered at once (a batch keeps up to its concurrency alive)
_cache: OrderedDict[int, tuple[list[AgentStep], list[Message]]] = OrderedDict()
_lock = threading.Lock()


def steps_as_turns(steps: Sequence[AgentStep],
                   turns_of: Callable[[AgentStep], tuple[Message, Message]]) -> list[Message]:
    """Every step's two turns in order (``turns_of`` makes one step's); the list is kept for
    the next call: read it, do not change it."""
    if not steps:
        return []
    key = id(steps[0])
    with _lock:
        entry = _cache.get(key)
    done, turns = 0, []
    if entry is not None:
        known, known_turns = entry
        n = len(known)
        if n <= len(steps) and list(steps[:n]) == known:
            done, turns = n, known_turns
    turns = list(turns)
    for step in steps[done:]:
        turns += turns_of(step)
    with _lock:
        # The entry holds the steps (so the first step's id cannot be reused while cached).
        _cache[key] = (list(steps), turns)
        _cache.move_to_end(key)
        if len(_cache) > _MAX_RUNS:
            _cache.popitem(last=False)
    return turns
