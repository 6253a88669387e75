"""Work built for a run's growing list of steps, kept so that step N adds one step's work.

An agent rebuilds its prompt from every step so far at each step; doing that whole costs
O(steps) per step (O(n²) per run). A :class:`PrefixCache` keeps what was built for a list,
keyed by the first step's identity (and a variant), and builds only the steps added since.
The cached prefix is compared with the list it is asked about (identity first, then
equality, in C), so a trimmed, edited or unrelated list is simply built again: the result is
always what a full build gives. Used for the scratchpad (:func:`scratchpad`, below) and for
the work as chat turns (``base.work_as_turns``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

from agentcli.schema import AgentStep

T = TypeVar("T")
MAX_RUNS = 256  # runs remembered at once (a batch keeps up to its concurrency alive)


class PrefixCache(Generic[T]):
    """Results for step lists that only grow, built incrementally (thread-safe)."""

    def __init__(self, join: Callable[[T, T], T]) -> None:
        self._join = join
        self._runs: OrderedDict[tuple[int, Hashable], tuple[list[AgentStep], T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, steps: Sequence[AgentStep], variant: Hashable,
            build: Callable[[Sequence[AgentStep], int], T]) -> T:
        """``build(steps, 0)``, reusing the result for the longest known prefix: only
        ``build(new_steps, first_index)`` is called, and joined to it. The result is shared:
        read it, do not change it."""
        key = (id(steps[0]), variant)
        with self._lock:
            entry = self._runs.get(key)
        done = 0
        if entry is not None:
            known, value = entry
            n = len(known)
            prefix = steps[:n]
            if n <= len(steps) and (prefix if isinstance(prefix, list) else list(prefix)) == known:
                done = n
        if done == 0:
            value = build(steps, 0)
        elif done < len(steps):
            value = self._join(value, build(steps[done:], done))
        with self._lock:
            # The entry holds the steps (so the first step's id cannot be reused while cached).
            self._runs[key] = (list(steps), value)
            self._runs.move_to_end(key)
            if len(self._runs) > MAX_RUNS:
                self._runs.popitem(last=False)
        return value


_LEADING_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.I)


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


_SCRATCHPADS: PrefixCache[str] = PrefixCache(str.__add__)


def scratchpad(steps: Sequence[AgentStep], *, starts_after_thought: bool = False) -> str:
    """Replay the steps as prior work: each log, its observation, then ``Thought:``.

    A log that follows a ``Thought:`` already written (every step after the first, and the
    first when the prompt ends with one) loses its own leading ``Thought:`` so it never doubles.
    Incremental: each call renders only the steps added since the last one.
    """
    if not steps:
        return ""
    return _SCRATCHPADS.get(steps, starts_after_thought, lambda rest, first: render_steps(
        rest, first_index=first, starts_after_thought=starts_after_thought))
