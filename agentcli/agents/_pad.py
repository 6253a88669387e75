"""The scratchpad, rendered incrementally: a run's step N appends one step's text, not N.

An executor calls :func:`agentcli.agents.base.scratchpad` once per step with the steps so
far, a list that only grows. Rendering it whole each time costs O(steps) per step (O(n²) per
run); here the text rendered for a prefix of the list is kept, keyed by the first step's
identity, and only the new steps are rendered and appended. The cached prefix is compared
with the list it is asked about (identity first, then equality, in C), so a trimmed, edited or
unrelated list is simply rendered again: the result is always what a full render gives.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from agentcli.schema import AgentStep

_LEADING_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.I)
_MAX_RUNS = 256  # runs remembered at once (a batch keeps up to its concurrency alive)

_Key = tuple[int, bool]
_cache: OrderedDict[_Key, tuple[list[AgentStep], str]] = OrderedDict()
_lock = threading.Lock()


def render_steps(steps: Sequence[AgentStep], *, first_index: int = 0,
                 starts_after_thought: bool = False) -> str:
    """Steps as prior work: each log, its observation, then ``Thought:`` (no cache)."""
    parts = []
    for i, step in enumerate(steps, first_index):
        log = step.action.log.strip()
        if i > 0 or starts_after_thought:
            if log[:7].lower() == "thought":  # cheap test first: this runs for every step
                log = _LEADING_THOUGHT.sub("", log)
            log = " " + log
        parts.append(f"{log}\nObservation: {step.observation}\nThought:")
    return "".join(parts)


def scratchpad_text(steps: Sequence[AgentStep], starts_after_thought: bool) -> str:
    """The full scratchpad for ``steps``, reusing the text rendered for its longest known prefix."""
    if not steps:
        return ""
    key = (id(steps[0]), starts_after_thought)
    with _lock:
        entry = _cache.get(key)
    done, text = 0, ""
    if entry is not None:
        known, known_text = entry
        n = len(known)
        if n <= len(steps):
            prefix = steps[:n]
            if (prefix if isinstance(prefix, list) else list(prefix)) == known:
                done, text = n, known_text
    if done < len(steps):
        text += render_steps(steps[done:], first_index=done,
                             starts_after_thought=starts_after_thought)
    with _lock:
        # The entry holds the steps (so the first step's id cannot be reused while cached).
        _cache[key] = (list(steps), text)
        _cache.move_to_end(key)
        if len(_cache) > _MAX_RUNS:
            _cache.popitem(last=False)
    return text
